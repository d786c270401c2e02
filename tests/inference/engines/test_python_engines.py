"""vLLM and SGLang profiles: their commands use only flags the engines' parsers define (lists read from the
vllm 0.33.0 and sglang 0.5.23 wheels), the built-in ones are the facts' commands, a missing engine is a message
with the install and container commands, and an installed one runs as a managed process (a stand-in executable
here: neither engine runs without a GPU) with its API key and the Hugging Face token kept off the command line."""

from __future__ import annotations

import json
import os
import sys
import textwrap
import time
from pathlib import Path

import httpx
import pytest

from inference.engines import python_engines as pe
from inference.profiles import BUILTIN_PROFILES, ProfileError, load_profiles
from inference.server import ServerError, redacted

VLLM = BUILTIN_PROFILES["gemma4-31b-dflash-vllm"]
SGLANG = BUILTIN_PROFILES["gemma4-31b-dflash-sglang"]


def flags(argv: list[str]) -> set[str]:
    return {a for a in argv if a.startswith("--")}


def test_the_flag_lists_are_the_engines_parsers():
    vllm, sglang = pe.documented_flags("vllm"), pe.documented_flags("sglang")
    assert len(vllm) > 300 and len(sglang) > 500
    # the flags the facts' commands use, and ones a reader would look for
    assert {"--speculative-config", "--tensor-parallel-size", "--max-model-len", "--gpu-memory-utilization"} <= vllm
    assert {"--host", "--port", "--api-key"} <= vllm
    assert {"--speculative-algorithm", "--speculative-draft-model-path", "--speculative-num-draft-tokens"} <= sglang
    assert {"--tp-size", "--tensor-parallel-size", "--context-length", "--mem-fraction-static"} <= sglang
    assert {"--enable-metrics", "--model-path", "--host", "--port"} <= sglang
    assert "--tp" not in sglang  # the facts' `--tp` is only argparse's abbreviation of --tp-size


def test_builtin_profiles_render_the_facts_commands_with_documented_flags_only():
    vllm = pe.render(VLLM, "127.0.0.1", 8000)
    assert vllm[:3] == ["vllm", "serve", "google/gemma-4-31B-it"]
    config = json.loads(vllm[vllm.index("--speculative-config") + 1])
    assert config == {
        "method": "dflash",
        "model": "z-lab/gemma-4-31B-it-DFlash",
        "num_speculative_tokens": 15,
        "attention_backend": "flash_attn",  # z-lab's Gemma 4 recipe: the drafter on flash_attn, the target on triton
    }
    assert vllm[vllm.index("--tensor-parallel-size") + 1] == "1" and vllm[vllm.index("--max-model-len") + 1] == "32768"
    assert flags(vllm) <= pe.documented_flags("vllm")

    sglang = pe.render(SGLANG, "127.0.0.1", 30000)
    assert sglang[:5] == ["python", "-m", "sglang.launch_server", "--model-path", "google/gemma-4-31B-it"]
    pairs = dict(zip(sglang, sglang[1:]))
    assert pairs["--speculative-algorithm"] == "DFLASH"
    assert pairs["--speculative-draft-model-path"] == "z-lab/gemma-4-31B-it-DFlash"
    assert pairs["--speculative-num-draft-tokens"] == "16"  # the block: 15 drafted + the last accepted token
    assert pairs["--tp-size"] == "1" and pairs["--context-length"] == "32768" and "--enable-metrics" in sglang
    assert flags(sglang) <= pe.documented_flags("sglang")


def test_a_user_profile_sets_tensor_parallel_and_a_flag_the_engine_lacks_is_refused(tmp_path):
    config = tmp_path / "config.toml"
    config.write_text(
        textwrap.dedent("""
        [profiles.big]
        extends = "gemma4-31b-dflash-sglang"
        tensor_parallel = 4
        gpu_memory_utilization = 0.8
        ctx_size = 131072

        [profiles.typo]
        extends = "gemma4-31b-dflash-vllm"
        extra_args = ["--tensor-paralel-size", "2"]
        """)
    )
    profiles = load_profiles(config)
    pairs = dict(zip(argv := pe.render(profiles["big"], "127.0.0.1", 1), argv[1:]))
    assert (
        pairs["--tp-size"] == "4" and pairs["--mem-fraction-static"] == "0.8" and pairs["--context-length"] == "131072"
    )
    with pytest.raises(ProfileError, match=r"--tensor-paralel-size, which vLLM 0.33.0 does not define"):
        pe.render(profiles["typo"], "127.0.0.1", 1)


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ('engine = "vllm"\ncache_type_k = "q8_0"', "cache_type_k: llama-server settings, which engine vllm"),
        ('engine = "vllm"\nrpc_workers = ["10.0.0.2:50052"]', "rpc_workers: llama-server settings"),
        ("tensor_parallel = 2", "tensor_parallel: settings of engine vllm or sglang, not llama-server"),
        ('engine = "sglang"\nspeculative = "ngram-simple"', "speculative none or dflash"),
    ],
)
def test_settings_the_engine_does_not_take_are_errors(tmp_path, fields, message):
    config = tmp_path / "config.toml"
    config.write_text(f'[profiles.x]\ntarget = "google/gemma-4-31B-it"\n{fields}\n')
    with pytest.raises(ProfileError, match=message):
        load_profiles(config)


def test_a_missing_engine_gives_the_install_and_container_commands(monkeypatch, tmp_path):
    monkeypatch.setenv("PATH", str(tmp_path))  # no vllm, no python3 that imports sglang
    monkeypatch.setenv("HF_TOKEN", "hf_secret_value")
    for profile, image in ((VLLM, "vllm/vllm-openai:v0.33.0"), (SGLANG, "lmsysorg/sglang:")):
        assert pe.launcher(profile.engine) is None
        with pytest.raises(ProfileError) as caught:
            pe.local_argv(profile, "127.0.0.1", 8000)
        message = str(caught.value)
        assert f'pip install "{profile.engine}==' in message and "docker run --gpus all" in message
        assert image in message and "-p 127.0.0.1:" in message and "-e HF_TOKEN " in message
        assert "z-lab/gemma-4-31B-it-DFlash is gated" in message and "a Hugging Face token is set here" in message
        assert "hf_secret_value" not in message + pe.describe(profile) + pe.container_command(profile)


FAKE_ENGINE = """
import http.server, json, os, sys
args = sys.argv[1:]
host, port = args[args.index("--host") + 1], int(args[args.index("--port") + 1])
with open(os.environ["FAKE_ENGINE_RECORD"], "w") as f:
    json.dump({"argv": sys.argv, "vllm_api_key": os.environ.get("VLLM_API_KEY")}, f)
if os.environ.get("FAKE_ENGINE_FAIL"):
    print("huggingface_hub.errors.GatedRepoError: 401 Client Error. Cannot access gated repo", flush=True)
    sys.exit(1)

class Handler(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        self.send_response(200 if self.path == "/health" else 404)
        self.end_headers()

http.server.HTTPServer((host, port), Handler).serve_forever()
"""


@pytest.fixture
def fake_vllm(tmp_path, monkeypatch):
    """A `vllm` on PATH that serves /health: the lifecycle is what is under test, not the engine."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    exe = bin_dir / "vllm"
    exe.write_text(f"#!{sys.executable}\n{FAKE_ENGINE}")
    exe.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("FAKE_ENGINE_RECORD", str(tmp_path / "record.json"))
    return tmp_path / "record.json"


def test_an_installed_engine_starts_answers_and_stops_with_the_key_in_its_environment(fake_vllm, tmp_path):
    server = pe.EngineServer(VLLM, api_key="s3cret", log_dir=tmp_path)
    server.start()
    try:
        assert httpx.get(f"http://127.0.0.1:{server.port}/health").status_code == 200
        record = json.loads(fake_vllm.read_text())
        assert Path(record["argv"][0]).name == "vllm" and record["argv"][1:3] == ["serve", "google/gemma-4-31B-it"]
        assert record["vllm_api_key"] == "s3cret" and "s3cret" not in record["argv"]
        assert server.log_path.name.startswith("vllm-gemma4-31b-dflash-vllm-")
    finally:
        stopping = time.monotonic()
        server.stop()
    # it exits on SIGTERM at once; the stop must not wait out the 10 s grace on the reaped-late child
    assert not server.alive() and time.monotonic() - stopping < 5
    with pytest.raises(httpx.HTTPError):
        httpx.get(f"http://127.0.0.1:{server.port}/health", timeout=1)


def test_an_engine_that_exits_while_starting_is_reported_with_the_cause(fake_vllm, tmp_path, monkeypatch):
    monkeypatch.setenv("FAKE_ENGINE_FAIL", "1")
    with pytest.raises(ServerError, match=r"vllm exited with code 1 while starting: the model is gated"):
        pe.EngineServer(VLLM, log_dir=tmp_path).start()


def test_an_sglang_key_on_the_command_line_never_reaches_the_log():
    assert redacted(["python", "-m", "sglang.launch_server", "--api-key", "s3cret", "--port", "1"]) == [
        "python",
        "-m",
        "sglang.launch_server",
        "--api-key",
        "***",
        "--port",
        "1",
    ]
