"""vLLM and SGLang: a profile rendered to the engine's command (every flag checked against the flags the
engine's argument parser defines, kept in `dialects/`), whether the engine is installed here and how to install
it, and the engine as a managed process (`inference.server.ManagedProcess`).

Both engines download the Hugging Face checkpoints themselves: a gated repository needs the user's token, which
they read from `HF_TOKEN` or from `hf auth login`'s file; it is never put on a command line or in a log.
"""

from __future__ import annotations

import importlib.util
import json
import os
import shlex
import shutil
import subprocess
import sys
from functools import cache
from pathlib import Path

from inference.checkpoints import get_checkpoint
from inference.profiles import Profile, ProfileError
from inference.server import ManagedProcess

DIALECTS = Path(__file__).parents[1] / "dialects"
# the versions whose parser sources the flag lists were read from (scripts/engine_flags.py)
CHECKED = {"vllm": "0.33.0", "sglang": "0.5.23"}
FLAG_FILES = {
    "vllm": DIALECTS / "vllm-0.33.0-serve-flags.txt",
    "sglang": DIALECTS / "sglang-0.5.23-launch-server-flags.txt",
}
NAMES = {"vllm": "vLLM", "sglang": "SGLang"}
DEFAULT_PORT = {"vllm": 8000, "sglang": 30000}  # each engine's default port (containers, printed commands)
# pinned, never `latest`: the tag of the version the flags were checked against. SGLang tags each release
# `vX.Y.Z` (e.g. lmsysorg/sglang:v0.5.13, imdingtalk/image-mirror#1804); its images are CUDA 13 builds since the last
# CUDA 12 tag, v0.5.19-cu129 (sgl-project/sglang docs/get-started/install.mdx)
IMAGES = {"vllm": "vllm/vllm-openai:v0.33.0", "sglang": "lmsysorg/sglang:v0.5.23"}


@cache
def documented_flags(engine: str) -> frozenset[str]:
    lines = FLAG_FILES[engine].read_text().splitlines()
    return frozenset(line for line in lines if line.startswith("-"))


def render(profile: Profile, host: str, port: int) -> list[str]:
    """The engine's command for `profile` (`vllm serve ...` or `python -m sglang.launch_server ...`); refuses
    a flag the engine's parser does not define and a speculative method it cannot render."""
    if profile.engine == "vllm":
        argv = _vllm(profile, host, port)
    elif profile.engine == "sglang":
        argv = _sglang(profile, host, port)
    else:
        raise ProfileError(f"profile {profile.name!r} runs on {profile.engine}, which is not a Python engine")
    known = documented_flags(profile.engine)
    unknown = sorted({a.split("=")[0] for a in argv if a.startswith("--") and a.split("=")[0] not in known})
    if unknown:
        raise ProfileError(
            f"profile {profile.name!r} passes {', '.join(unknown)}, which {NAMES[profile.engine]} "
            f"{CHECKED[profile.engine]} does not define (see {FLAG_FILES[profile.engine].name}); fix extra_args"
        )
    return argv


def _vllm(profile: Profile, host: str, port: int) -> list[str]:
    argv = ["vllm", "serve", profile.target, "--host", host, "--port", str(port)]
    argv += ["--tensor-parallel-size", str(profile.tensor_parallel), "--max-model-len", str(profile.ctx_size)]
    if profile.gpu_memory_utilization is not None:
        argv += ["--gpu-memory-utilization", str(profile.gpu_memory_utilization)]
    if profile.speculative == "dflash":
        config: dict[str, object] = {
            "method": "dflash",
            "model": profile.draft,
            "num_speculative_tokens": profile.draft_max,
        }
        if profile.draft_attention_backend:
            config["attention_backend"] = profile.draft_attention_backend
        argv += ["--speculative-config", json.dumps(config)]
    if profile.tool_call_parser:  # vLLM parses tool calls only with both
        argv += ["--tool-call-parser", profile.tool_call_parser, "--enable-auto-tool-choice"]
    argv += _common(profile)
    return argv + profile.extra_args


def _common(profile: Profile) -> list[str]:
    """Flags both engines spell the same way."""
    argv = []
    for flag, value in (
        ("--reasoning-parser", profile.reasoning_parser),
        ("--attention-backend", profile.attention_backend),
        ("--quantization", profile.quantization),
        ("--kv-cache-dtype", profile.kv_cache_dtype),
    ):
        argv += [flag, value] if value else []
    return argv + (["--trust-remote-code"] if profile.trust_remote_code else [])


def _sglang(profile: Profile, host: str, port: int) -> list[str]:
    argv = ["python", "-m", "sglang.launch_server", "--model-path", profile.target]
    if profile.speculative == "dflash":
        # SGLang counts the verify window (the block: the last accepted token + the drafted ones)
        assert profile.draft_max is not None, "the profile validator requires draft_max with dflash"
        argv += ["--speculative-algorithm", "DFLASH", "--speculative-draft-model-path", str(profile.draft)]
        argv += ["--speculative-num-draft-tokens", str(profile.draft_max + 1)]
        if profile.draft_attention_backend:
            argv += ["--speculative-draft-attention-backend", profile.draft_attention_backend]
    argv += ["--tp-size", str(profile.tensor_parallel), "--host", host, "--port", str(port)]
    argv += ["--context-length", str(profile.ctx_size)]
    if profile.gpu_memory_utilization is not None:
        argv += ["--mem-fraction-static", str(profile.gpu_memory_utilization)]
    if profile.tool_call_parser:
        argv += ["--tool-call-parser", profile.tool_call_parser]
    argv += _common(profile)
    return (
        argv + ["--enable-metrics"] + profile.extra_args
    )  # /metrics is off by default on SGLang  # /metrics is off by default on SGLang


# ---------------------------------------------------------------- installed or not


def launcher(engine: str) -> list[str] | None:
    """How to start the engine here: `vllm` on PATH (or the vLLM module of this Python), a Python that can
    import sglang; None when it is not installed."""
    if engine == "vllm":
        if exe := shutil.which("vllm"):
            return [exe]
        if importlib.util.find_spec("vllm") is not None:
            return [sys.executable, "-m", "vllm.entrypoints.cli.main"]
        return None
    if importlib.util.find_spec("sglang") is not None:
        return [sys.executable]
    for name in ("python3", "python"):
        exe = shutil.which(name)
        if exe and _can_import(exe, "sglang"):
            return [exe]
    return None


def _can_import(python: str, module: str) -> bool:
    probe = f"import importlib.util, sys; sys.exit(importlib.util.find_spec({module!r}) is None)"
    try:
        return subprocess.run([python, "-c", probe], capture_output=True, timeout=30).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        return False


def local_argv(profile: Profile, host: str, port: int) -> list[str]:
    """The command with this machine's launcher in place of `vllm` / `python`; ProfileError when the engine is
    not installed (the message has the install and container commands)."""
    argv = render(profile, host, port)
    found = launcher(profile.engine)
    if found is None:
        raise ProfileError(not_installed(profile))
    return found + argv[1:]


def not_installed(profile: Profile) -> str:
    name = NAMES[profile.engine]
    what = "no `vllm` on PATH" if profile.engine == "vllm" else "no Python here can `import sglang`"
    return (
        f"{name} is not installed ({what}). Install it and run this again:\n"
        f"  {install_command(profile.engine)}\n"
        f"or run it in a container and point the agent at it (`--endpoint http://127.0.0.1:"
        f"{DEFAULT_PORT[profile.engine]}/v1`):\n  {container_command(profile)}"
        + "".join(f"\n{note}" for note in gated_notes(profile))
    )


def install_command(engine: str) -> str:
    return f'pip install "{engine}=={CHECKED[engine]}"  (Linux + NVIDIA GPU; brings its own torch and CUDA libraries)'


def container_command(profile: Profile) -> str:
    """`docker run` for the engine's official image: published on 127.0.0.1 only, the Hugging Face cache shared,
    the token passed by name (`-e HF_TOKEN`), never by value."""
    port = DEFAULT_PORT[profile.engine]
    inner = render(profile, "0.0.0.0", port)  # inside the container; the host side stays on loopback
    # the vLLM image's entrypoint is `vllm serve`; SGLang's image runs the command it is given
    args = inner[2:] if profile.engine == "vllm" else ["python3", *inner[1:]]
    return (
        f"docker run --gpus all --ipc=host -p 127.0.0.1:{port}:{port} "
        "-v ~/.cache/huggingface:/root/.cache/huggingface -e HF_TOKEN "
        f"{IMAGES[profile.engine]} {shlex.join(args)}"
    )


def gated_notes(profile: Profile) -> list[str]:
    """One line per gated checkpoint: what to accept and how to log in; whether a token is found here."""
    from huggingface_hub import get_token

    gated = [c for c in map(get_checkpoint, profile.models()) if c and c.gated]
    if not gated:
        return []
    found = "a Hugging Face token is set here" if get_token() else "no Hugging Face token is set here yet"
    return [
        f"note: {c.repo} is gated: accept its terms at {c.url}, then `hf auth login` or export HF_TOKEN "
        f"({found}; the engine reads it from the environment, never from the command line)"
        for c in gated
    ]


# ---------------------------------------------------------------- the managed process


class EngineServer(ManagedProcess):
    """vLLM or SGLang from a profile, started with this machine's launcher; the API key travels in the
    environment where the engine reads one there (vLLM: VLLM_API_KEY), else as --api-key."""

    ready_timeout = 1800.0  # downloading and loading 60+ GB and capturing CUDA graphs takes a while

    def __init__(self, profile: Profile, **kwargs):
        self.label = profile.engine
        super().__init__(profile, **kwargs)

    def argv(self) -> list[str]:
        argv = local_argv(self.profile, self.host, self.port)
        if self.api_key and self.profile.engine == "sglang":
            argv += ["--api-key", self.api_key]  # SGLang reads no key from the environment
        return argv

    def env(self) -> dict[str, str]:
        from inference.server import with_gpus

        env = with_gpus(self.profile, dict(os.environ))
        if self.api_key and self.profile.engine == "vllm":
            env["VLLM_API_KEY"] = self.api_key
        return env


def managed(profile: Profile, engine_key: str | None = None, **kwargs) -> ManagedProcess:
    """The managed process for any profile: vLLM/SGLang here, llama-server on the engine build that fits."""
    from inference.server import ManagedServer, choose_engine

    if profile.engine == "llama-server":
        return ManagedServer(choose_engine(profile, engine_key), profile, **kwargs)
    return EngineServer(profile, **kwargs)


def describe(profile: Profile, host: str = "127.0.0.1", port: int | None = None) -> str:
    """The command as a user would type it, with what it is for (plan and --print-args output)."""
    argv = render(profile, host, port or DEFAULT_PORT[profile.engine])
    installed = launcher(profile.engine) is not None
    state = "installed here" if installed else f"not installed here: {install_command(profile.engine)}"
    return f"{NAMES[profile.engine]} (flags checked against {CHECKED[profile.engine]}; {state}):\n{shlex.join(argv)}"
