"""An inference server as a managed child (llama-server here; vLLM and SGLang in `inference.engines.python_engines`):
127.0.0.1 and a free port by default, ready when `/health` says so, its log kept, an early exit reported with
the cause read from the log, a clean stop."""

from __future__ import annotations

import ipaddress
import os
import socket
import subprocess
import time
from pathlib import Path
from typing import Literal

import httpx

from inference.background import ServerState, started_at, state_file, stop_process_group
from inference.engines.engine import Capabilities, Engine
from inference.engines.engine_patches import AMX_PATCH
from inference.engines.rpc import LocalRpcWorkers
from inference.errors import DflashError
from inference.fetch import fetch_model
from inference.hardware import chosen_gpus, cpu_has_amx
from inference.memplan import engine_logits, plan_profile
from inference.models import get_model
from inference.net import free_port
from inference.paths import state_dir
from inference.plans.terms import MemoryPlan, model_facts
from inference.profiles import Profile, ProfileError
from inference.render import render

GATED = "the model is gated: accept its terms on huggingface.co, then `hf auth login` or export HF_TOKEN"
KNOWN_FAILURES = [
    # vLLM and SGLang (Python engines; Hugging Face downloads)
    ("GatedRepoError", GATED),
    ("Cannot access gated repo", GATED),
    (
        "cache is needed, which is larger than the available KV cache",
        "the KV cache cannot hold one full-context request: lower ctx_size, raise gpu_memory_utilization or "
        "tensor_parallel",
    ),
    (
        "No available memory for the cache blocks",
        "no GPU memory is left for the KV cache: raise gpu_memory_utilization or tensor_parallel",
    ),
    (
        "CUDA out of memory",
        "the GPU ran out of memory: lower ctx_size or gpu_memory_utilization, or raise tensor_parallel",
    ),
    (
        "require the V2 model runner",
        "this DFlash drafter mixes sliding and full attention: start again with VLLM_USE_V2_MODEL_RUNNER=1 in the "
        "environment",
    ),
    # llama-server
    ("cudaMalloc failed: out of memory", "the GPU ran out of memory: lower --ctx-size or pick a smaller model"),
    ("failed to allocate", "not enough memory for the model or its buffers: lower the context size"),
    ("failed to load draft model", "the draft model could not be loaded (wrong file or architecture)"),
    ("failed to load model", "the model file could not be loaded (corrupt, truncated, or not a GGUF)"),
    ("error loading model", "the model file could not be loaded (corrupt, truncated, or not a GGUF)"),
    ("couldn't bind HTTP server socket", "the port is already in use"),
    ("invalid argument", "the engine rejected a flag: rebuild the engine or choose another profile"),
    ("requires Flash Attention", "a quantized V cache needs --flash-attn on"),
    ("failed to create shared DFlash drafter context", "DFlash needs a DFlash draft model"),
]


class ServerError(DflashError, RuntimeError):
    """The server failed to start or died; the message names the cause and where its log is."""


def is_loopback(host: str) -> bool:
    try:
        return ipaddress.ip_address(socket.gethostbyname(host)).is_loopback
    except (OSError, ValueError):
        return False


def diagnose(log_text: str) -> str:
    for needle, meaning in KNOWN_FAILURES:
        if needle in log_text:
            return meaning
    return "see the log tail below"


class ManagedProcess:
    """One OpenAI-compatible server process: start, wait for `/health`, report an early exit with the log's
    cause, stop. Subclasses give its command (`argv`) and environment (`env`). Use as a context manager, or
    `start()` / `stop()`."""

    label = "server"  # names the process in logs and errors
    ready_timeout = 600.0  # seconds to wait for `/health`

    def __init__(
        self,
        profile: Profile,
        *,
        host: str = "127.0.0.1",
        port: int | None = None,
        api_key: str | None = None,
        log_dir: Path | None = None,
    ):
        if not is_loopback(host) and not api_key:
            raise ProfileError(
                f"refusing to listen on {host} without an API key: anyone on the network could use "
                "the model; pass --api-key (or keep the default 127.0.0.1)"
            )
        self.profile, self.host, self.api_key = profile, host, api_key
        self.port = port or free_port()
        log_dir = log_dir or state_dir() / "logs"
        log_dir.mkdir(parents=True, exist_ok=True)
        self.log_path = log_dir / f"{self.label}-{profile.name}-{self.port}.log"
        self.process: subprocess.Popen | None = None

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}/v1"

    def argv(self) -> list[str]:
        raise NotImplementedError

    def prepare(self) -> list[str]:
        """The command, once what it needs is ready (models fetched, helper processes started)."""
        return self.argv()

    def env(self) -> dict[str, str]:
        return with_gpus(self.profile, dict(os.environ))

    def worker_pids(self) -> list[int]:
        """Helper processes stopped with the server (a background server's state records them)."""
        return []

    def start(self, timeout: float | None = None, detach: bool = False) -> ManagedProcess:
        try:
            argv = self.prepare()
        except BaseException:
            self.stop()
            raise
        with self.log_path.open("w") as log:
            log.write("$ " + " ".join(redacted(argv)) + "\n")
            log.flush()
            self.process = subprocess.Popen(
                argv,
                stdout=log,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                env=self.env(),
                start_new_session=True,
            )
        try:
            self._wait_ready(timeout or self.ready_timeout)
        except BaseException:
            self.stop()
            raise
        if detach:
            state_file().parent.mkdir(parents=True, exist_ok=True)
            state_file().write_text(
                ServerState(
                    pid=self.process.pid,
                    url=self.url,
                    profile=self.profile.name,
                    log=str(self.log_path),
                    workers=self.worker_pids(),
                    started={
                        pid: start for pid in [self.process.pid, *self.worker_pids()] if (start := started_at(pid))
                    },
                ).model_dump_json()
            )
        return self

    def _wait_ready(self, timeout: float) -> None:
        """The port answers 503 (or nothing) while the model loads; 200 means ready; an exit means failure."""
        deadline = time.monotonic() + timeout
        headers = {"Authorization": f"Bearer {self.api_key}"} if self.api_key else {}
        assert self.process is not None, "start() launches the process first"
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise self._failure(f"{self.label} exited with code {self.process.returncode} while starting")
            try:
                if httpx.get(f"http://{self.host}:{self.port}/health", timeout=2, headers=headers).status_code == 200:
                    return
            except httpx.HTTPError:
                pass
            time.sleep(0.25)
        raise self._failure(f"{self.label} was not ready after {timeout:.0f}s")

    def _failure(self, what: str) -> ServerError:
        text = self.log_path.read_text(errors="replace") if self.log_path.exists() else ""
        tail = "\n".join(text.splitlines()[-20:])
        return ServerError(f"{what}: {diagnose(text)}.\nlog: {self.log_path}\n{tail}")

    def alive(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def stop(self, grace: float = 10.0) -> None:
        if self.process is None or self.process.poll() is not None:
            return
        stop_process_group(self.process.pid, grace, self.process)
        self.process.wait()

    def __enter__(self) -> ManagedProcess:
        return self if self.alive() else self.start()

    def __exit__(self, *exc) -> None:
        self.stop()


class ManagedServer(ManagedProcess):
    """One llama-server process from a profile and an engine build."""

    label = "llama-server"

    def __init__(
        self,
        engine: Engine,
        profile: Profile,
        *,
        host: str = "127.0.0.1",
        port: int | None = None,
        api_key: str | None = None,
        log_dir: Path | None = None,
        check_memory: bool = True,
        model_paths: dict[str, Path] | None = None,
    ):
        super().__init__(profile, host=host, port=port, api_key=api_key, log_dir=log_dir)
        self.engine = engine
        self.check_memory = check_memory
        self.model_paths = model_paths or {}  # local GGUF files instead of catalog fetches
        self.workers: LocalRpcWorkers | None = None

    def argv(self, rpc_endpoints: list[str] | None = None) -> list[str]:
        """The command line, once the models are here and the plan fits (`agent serve --plan` shows it without
        either)."""
        caps = self.engine.capabilities
        # refuse a profile the engine cannot run before downloading gigabytes for it
        render(self.profile, caps, {m: Path(m) for m in self.profile.models()}, self.host, self.port)
        check_drafter(self.profile, caps, self.model_paths)  # from the catalog's facts: before any download
        paths = {m: self.model_paths.get(m) or fetch_model(get_model(m)) for m in self.profile.models()}
        check_drafter(self.profile, caps, paths)  # and from the files' own headers
        if self.check_memory:
            check_fits(self.profile, paths, engine_logits(caps))
        argv = [str(self.engine.binary), *render(self.profile, caps, paths, self.host, self.port, rpc_endpoints)]
        return argv + [flag for flag in without_broken_amx(self.engine) if flag not in argv]

    def prepare(self) -> list[str]:
        """Local RPC workers first (when the profile has them), then the command that connects to them."""
        return self.argv(self._start_workers())

    def env(self) -> dict[str, str]:
        env = with_gpus(self.profile, dict(os.environ))
        if self.api_key:  # through the environment, not argv, so `ps` does not show it
            env["LLAMA_API_KEY"] = self.api_key
        return env

    def worker_pids(self) -> list[int]:
        return [w.pid for w in self.workers.processes] if self.workers else []

    def _start_workers(self) -> list[str] | None:
        """The profile's local RPC workers, started before llama-server connects to them; None when it has none."""
        if not self.profile.rpc_local_workers:
            return None
        binary = self.engine.rpc_server
        if binary is None:
            raise ProfileError(
                f"profile {self.profile.name!r} starts local RPC workers, but engine {self.engine.key} has no "
                "rpc-server; build one with `agent engine build --rpc` (same --source and --backend)"
            )
        self.workers = LocalRpcWorkers(
            binary,
            self.profile.rpc_local_workers,
            threads=self.profile.rpc_worker_threads,
            log_dir=self.log_path.parent,
        )
        return self.profile.rpc_workers + self.workers.start()

    def stop(self, grace: float = 10.0) -> None:
        super().stop(grace)
        if self.workers:
            self.workers.stop()


def with_gpus(profile: Profile, env: dict[str, str]) -> dict[str, str]:
    """A GPU profile's server sees the profile's `devices`, else the freest GPU(s) (tensor_parallel of them),
    through CUDA_VISIBLE_DEVICES: not a silent spread over every GPU. A CUDA_VISIBLE_DEVICES the user set wins."""
    if profile.device != "gpu" or "CUDA_VISIBLE_DEVICES" in env:
        return env
    chosen = chosen_gpus(profile.devices, profile.tensor_parallel)
    return env | ({"CUDA_VISIBLE_DEVICES": ",".join(map(str, chosen))} if chosen else {})


def without_broken_amx(engine: Engine) -> list[str]:
    """`--no-repack` where this CPU has AMX and the engine was built without our fix for ggml's AMX kernels
    (inference/patches/amx-tile-config.patch): unpatched, llama-server dies on its first matrix product there."""
    unfixed = AMX_PATCH not in engine.patches and "--no-repack" in engine.capabilities.flags
    return ["--no-repack"] if unfixed and cpu_has_amx() else []


def redacted(argv: list[str]) -> list[str]:
    """The command with the value of `--api-key` hidden (for logs)."""
    return [("***" if before == "--api-key" else a) for before, a in zip(["", *argv], argv)]


def choose_engine(profile: Profile, key: str | None = None) -> Engine:
    """The engine named by `key`, else the newest cached build for the profile's device whose dialect renders it."""
    from inference.engines.engine import list_engines

    engines = list_engines()
    if key:
        match = [e for e in engines if e.key == key]
        if not match:
            raise ProfileError(f"no engine with key {key!r}; see `agent engine list`")
        engines = match
    reasons = []
    placeholders = {m: Path(m) for m in profile.models()}
    for engine in sorted(engines, key=lambda e: e.binary.stat().st_mtime if e.binary.exists() else 0, reverse=True):
        if profile.device == "gpu" and engine.options.device != "gpu":
            reasons.append(
                f"  - {engine.key} ({engine.source}): built for {engine.options.backend}; "
                f"profile {profile.name!r} needs a GPU build"
            )
            continue
        try:
            render(profile, engine.capabilities, placeholders, "127.0.0.1", 1)
            return engine
        except ProfileError as exc:
            reasons.append(f"  - {engine.key} ({engine.source}): {exc}")
    raise ProfileError(
        f"no built engine can run profile {profile.name!r}; build one with {build_hint(profile)}"
        + ("\n" + "\n".join(reasons) if reasons else "")
    )


def build_hint(profile: Profile) -> str:
    rpc = " --rpc" if uses_rpc(profile) else ""
    if profile.device == "gpu":
        return (
            f"`agent engine build --source beellama --backend cuda{rpc}` (BeeLlama.cpp with CUDA: DFlash on the GPU; "
            "needs the CUDA toolkit)"
        )
    return f"`agent engine build --source pypi-sdist --backend cpu{rpc}` (upstream llama.cpp from PyPI, for the CPU)"


def uses_rpc(profile: Profile) -> bool:
    """The profile spreads its model over llama.cpp RPC workers (remote or local): it needs an `--rpc` build."""
    return bool(profile.rpc_workers or profile.rpc_local_workers)


def planned_engine(profile: Profile, key: str | None = None) -> tuple[Capabilities, str, str]:
    """(capabilities, binary, description) of the engine a profile would run on: the chosen build, or when none
    is built (and no key named), what `agent engine build` builds by default, read from its real `--help`; for a
    profile with RPC workers, that build with the RPC backend (llama.cpp lists `--rpc` only when it is built in)."""
    from inference.engines.capabilities import default_capabilities, known_engine
    from inference.engines.engine import BEELLAMA_TAG

    try:
        engine = choose_engine(profile, key)
        return engine.capabilities, str(engine.binary), f"engine {engine.key} ({engine.source}, {engine.version})"
    except ProfileError:
        if key:
            raise
    if profile.engines:  # the first engine the profile is written for, from its shipped flag table
        known = known_engine(profile.engines[0])
        return (
            known.capabilities(),
            "llama-server",
            f"no engine built for it yet; rendered for {known.label}, which `{known.build}` builds",
        )
    caps, build = default_capabilities(), "`agent engine build`"
    if uses_rpc(profile):
        caps, build = caps.model_copy(update={"flags": [*caps.flags, "--rpc"]}), "`agent engine build --rpc`"
    return (
        caps,
        "llama-server",
        f"no engine built for it yet; rendered for BeeLlama {BEELLAMA_TAG}, which {build} builds",
    )


def check_drafter(profile: Profile, caps: Capabilities, paths: dict[str, Path] | None = None) -> None:
    """The drafter's format must be the one the engine and the profile's method load: BeeLlama >= v0.4 and
    upstream take only upstream-format (`dflash`) DFlash drafters (Bee's older `dflash-draft` files must be
    converted first); MTP takes a Gemma 4 assistant, not a DFlash drafter. Refuses with what to do rather than
    fail inside llama-server; `paths` empty reads the catalog's facts, so this runs before any download."""
    if not profile.draft or profile.speculative not in ("dflash", "mtp"):
        return
    facts = model_facts(profile.draft, (paths or {}).get(profile.draft))
    if profile.speculative == "mtp" and (facts.shape.is_dflash_drafter or "dflash" in facts.shape.arch):
        raise ProfileError(
            f"profile {profile.name!r}: the drafter {profile.draft!r} is a DFlash drafter ({facts.shape.arch}); "
            "`--spec-type draft-mtp` needs Gemma 4's assistant drafter (architecture gemma4-assistant, e.g. "
            "`gemma4-31b-mtp`)"
        )
    if profile.speculative != "dflash" or caps.dflash_dialect != "upstream":
        return
    if facts.shape.arch == "dflash-draft":
        raise ProfileError(
            f"profile {profile.name!r}: the drafter {profile.draft!r} is a BeeLlama `dflash-draft` GGUF, which this "
            "engine (`--spec-type draft-dflash`) cannot load; convert it with BeeLlama's "
            "`python3 scripts/convert-dflash-draft-to-upstream.py IN.gguf OUT.gguf` (BeeLlama >= v0.4 source tree), "
            "or use the pinned BeeLlama (`agent engine build --source beellama`), which loads it as is"
        )


def check_fits(profile: Profile, paths: dict[str, Path], logits: Literal["ubatch", "outputs"] = "ubatch") -> MemoryPlan:
    """Refuse, before launch, a profile whose plan does not fit the GPU (gpu profiles) or the RAM, or whose host side
    (prompt cache, checkpoints, weights kept in RAM) does not fit the available RAM; `logits`: the engine's family
    (inference.memplan.engine_logits)."""
    plan = plan_profile(profile, paths=paths, logits=logits)
    if plan.available is None:
        raise ProfileError(f"profile {profile.name!r} needs a GPU and none was found (nvidia-smi)")
    if not plan.fits:
        raise ProfileError(f"profile {profile.name!r}: {plan.verdict()}")
    return plan


def fit_together(profiles: list[Profile]) -> bool:
    """Whether all these profiles' servers can be up at once (on the device the first one uses); no download."""
    plans = [plan_profile(p) for p in profiles]
    return plans[0].available is not None and sum(p.total for p in plans) <= plans[0].available
