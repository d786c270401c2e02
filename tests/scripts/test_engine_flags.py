"""scripts/engine_flags.py reads flags from argument-parser sources the way vLLM and SGLang register them:
explicit `add_argument` strings, vLLM's FrontendArgs fields, SGLang's `A[type, help]` / `A[type, Arg(...)]`
fields with their aliases, `cli_name` and `no_cli`. Wheels built here from small sources of those shapes."""

from __future__ import annotations

import importlib.util
import textwrap
import zipfile
from pathlib import Path

SCRIPT = Path(__file__).parents[2] / "scripts" / "engine_flags.py"
spec = importlib.util.spec_from_file_location("engine_flags", SCRIPT)
assert spec and spec.loader
engine_flags = importlib.util.module_from_spec(spec)
spec.loader.exec_module(engine_flags)


def wheel(path: Path, files: dict[str, str]) -> str:
    with zipfile.ZipFile(path, "w") as zf:
        for name, text in files.items():
            zf.writestr(name, textwrap.dedent(text))
    return str(path)


def test_vllm_flags_from_add_argument_and_frontend_fields(tmp_path):
    arg_utils = """
        def add_cli_args(parser, group):
            group.add_argument("--tensor-parallel-size", "-tp", type=int)
            group.add_argument("--speculative-config", "-sc")
    """
    cli_args = """
        class BaseFrontendArgs:
            lora_modules: list | None = None
        class FrontendArgs(BaseFrontendArgs):
            host: str | None = None
            port: int = 8000
        class Unrelated:
            not_a_flag: int = 1
        def make_arg_parser(parser):
            parser.add_argument("--headless", action="store_true")
    """
    command, flags = engine_flags.engine_flags(
        wheel(
            tmp_path / "vllm.whl",
            {"vllm/engine/arg_utils.py": arg_utils, "vllm/entrypoints/common/cli_args.py": cli_args},
        )
    )
    assert command == "vllm serve"
    assert flags == sorted(
        [
            "--tensor-parallel-size",
            "-tp",
            "--speculative-config",
            "-sc",
            "--headless",
            "--lora-modules",
            "--host",
            "--port",
        ]
    )


def test_sglang_flags_from_annotated_fields(tmp_path):
    fields = """
        class SpecArgs:
            _NS_PATH = "spec"
            speculative_algorithm: A[Optional[str], "Speculative algorithm."] = None
            speculative_draft_model_path: A[Optional[str], Arg(help="Draft.", aliases=["--speculative-draft-model"])] = None
            boundary: A[str, Arg(no_cli=True, resolvable=True)] = "rs"
            tp_size: A[int, Arg(help="TP.", cli_name="--tp-size", aliases=["--tensor-parallel-size"])] = 1
            plain: int = 0
    """
    server_args = """
        def add_cli_args(parser):
            parser.add_argument("--config", type=str)
    """
    command, flags = engine_flags.engine_flags(
        wheel(
            tmp_path / "sglang.whl",
            {"sglang/srt/server_args.py": server_args, "sglang/srt/arg_groups/fields/spec.py": fields},
        )
    )
    assert command == "python -m sglang.launch_server"
    assert flags == sorted(
        [
            "--config",
            "--speculative-algorithm",
            "--speculative-draft-model-path",
            "--speculative-draft-model",
            "--tp-size",
            "--tensor-parallel-size",
        ]
    )
