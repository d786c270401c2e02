"""A llama-server profile rendered to argv for one engine: each flag in the engine's dialect (BeeLlama `dflash` +
cross-ctx, or upstream `draft-*`), and a refusal naming the flags the engine lacks, never a flag it would reject.
vLLM / SGLang profiles render in `inference.engines.python_engines`."""

from __future__ import annotations

from pathlib import Path

from inference.engines.capabilities import Capabilities
from inference.profiles import Profile, ProfileError


def render(
    profile: Profile,
    caps: Capabilities,
    model_paths: dict[str, Path],
    host: str,
    port: int,
    rpc_endpoints: list[str] | None = None,
) -> list[str]:
    """llama-server arguments (without the binary) in the guide's order; refuses flags the engine lacks.
    `rpc_endpoints` are the RPC workers actually started (default: the profile's, local ones at their usual ports)."""
    if profile.engine != "llama-server":
        raise ProfileError(
            f"profile {profile.name!r} runs on {profile.engine}, not llama-server; "
            f"`agent serve --profile {profile.name} --plan` shows its command"
        )
    args = ["-m", str(model_paths[profile.target])]
    if profile.draft:
        args += ["--spec-draft-model", str(model_paths[profile.draft])]
    args += _speculative_args(profile, caps)
    args += ["--host", host, "--port", str(port), "-np", str(profile.parallel)]
    args += ["--kv-unified"] if profile.kv_unified else []
    args += _opt("-ngl", profile.gpu_layers) + _opt("--spec-draft-ngl", profile.draft_gpu_layers)
    args += _opt("--split-mode", profile.split_mode) + _opt("--main-gpu", profile.main_gpu)
    args += _opt("-b", profile.batch) + _opt("-ub", profile.ubatch) + ["--ctx-size", str(profile.ctx_size)]
    args += _opt("--cache-type-k", profile.cache_type_k) + _opt("--cache-type-v", profile.cache_type_v)
    args += _opt("--flash-attn", profile.flash_attn) + _opt("--cache-ram", profile.cache_ram)
    args += _checkpoint_args(profile, caps) + ["--jinja"]
    args += _load_args(profile, caps) + (["--no-host"] if profile.no_host else [])
    args += ["--metrics", "--log-timestamps", "--log-prefix"] + _opt("--reasoning", profile.reasoning)
    args += _opt("--temp", profile.temperature) + _opt("--top-k", profile.top_k)
    args += _opt("--top-p", profile.top_p) + _opt("--min-p", profile.min_p)
    args += _opt("--spec-draft-n-max", profile.draft_max) + _opt("--spec-draft-n-min", profile.draft_min)
    args += _opt("--spec-draft-p-min", profile.draft_p_min) + _opt("-cd", profile.draft_ctx)
    args += _adaptive_args(profile, caps) + _opt("-t", profile.threads)
    args += _rpc_args(profile, rpc_endpoints) + profile.extra_args
    missing = [a for a in args if a.startswith("-") and not _is_number(a) and not caps.has(a)]
    for cache_type in filter(None, (profile.cache_type_k, profile.cache_type_v)):
        if caps.cache_types and cache_type not in caps.cache_types:
            missing.append(f"cache type {cache_type}")
    if missing:
        how = "`agent engine build --rpc ...`" if "--rpc" in missing else "`agent engine build --source ...`"
        raise ProfileError(
            f"profile {profile.name!r} needs {', '.join(sorted(set(missing)))}, which this engine does not offer; "
            f"build an engine that has them ({how}) or pick another profile"
        )
    return args


RPC_DEFAULT_PORT = 50052  # rpc-server's own default


def _rpc_args(profile: Profile, endpoints: list[str] | None) -> list[str]:
    if endpoints is None:
        local = [f"127.0.0.1:{RPC_DEFAULT_PORT + i}" for i in range(profile.rpc_local_workers)]
        endpoints = profile.rpc_workers + local
    return ["--rpc", ",".join(endpoints)] if endpoints else []


def _speculative_args(profile: Profile, caps: Capabilities) -> list[str]:
    kind = profile.speculative
    if kind == "none":
        return []
    if kind == "dflash":
        if caps.dflash_dialect == "beellama":
            return ["--spec-type", "dflash"] + _opt("--spec-dflash-cross-ctx", profile.dflash_cross_ctx)
        if caps.dflash_dialect == "upstream":
            return ["--spec-type", "draft-dflash"]  # upstream has no cross-ctx knob
        raise ProfileError(
            f"profile {profile.name!r} needs DFlash, which this engine does not speak; "
            "build BeeLlama.cpp (`agent engine build --source beellama`)"
        )
    if kind == "mtp":
        if "draft-mtp" in caps.spec_types:
            return ["--spec-type", "draft-mtp"]
        raise ProfileError(
            f"profile {profile.name!r} needs multi-token prediction (`--spec-type draft-mtp`, llama.cpp #23398), "
            "which this engine lacks; use upstream llama.cpp (`agent engine build --source pypi-sdist`) or "
            "BeeLlama >= v0.4 (`agent engine build --source beellama --ref v0.4.4`)"
        )
    if kind == "draft":
        if "draft-simple" in caps.spec_types:
            return ["--spec-type", "draft-simple"]
        raise ProfileError(
            f"profile {profile.name!r} needs classic draft-model speculation (`--spec-type "
            "draft-simple`), which this engine lacks (BeeLlama <= v0.3 takes every draft as DFlash); "
            "use an upstream engine (`agent engine build --source upstream` or `--source pypi-sdist`)"
        )
    if kind not in caps.spec_types:
        raise ProfileError(
            f"profile {profile.name!r} needs `--spec-type {kind}`; this engine offers: "
            f"{', '.join(caps.spec_types) or 'none'}"
        )
    args = ["--spec-type", kind]
    if kind in ("ngram-simple", "ngram-map-k", "ngram-map-k4v"):
        args += _opt(f"--spec-{kind}-size-n", profile.ngram_size_n) + _opt(
            f"--spec-{kind}-size-m", profile.ngram_size_m
        )
    if kind == "ngram-simple":
        args += _opt("--spec-ngram-simple-adapt-min", profile.ngram_adapt_min)
    return args


def _adaptive_args(profile: Profile, caps: Capabilities) -> list[str]:
    """BeeLlama v0.2-v0.3 `--no-spec-dm-adaptive`; v0.4 `--spec-dm-controller off`; upstream has no controller."""
    if profile.spec_dm_adaptive is not False:
        return []
    if caps.has("--spec-dm-controller") and not caps.has("--no-spec-dm-adaptive"):
        return ["--spec-dm-controller", "off"]
    return ["--no-spec-dm-adaptive"] if caps.has("--no-spec-dm-adaptive") else []


def _checkpoint_args(profile: Profile, caps: Capabilities) -> list[str]:
    """`--ctx-checkpoints N` (its older name `--swa-checkpoints` where the engine has only that one). The checkpoints
    came with the flag (llama.cpp#15293): an engine that has neither keeps none to limit."""
    if profile.ctx_checkpoints is None:
        return []
    flag = next((f for f in ("--ctx-checkpoints", "--swa-checkpoints") if caps.has(f)), None)
    return [flag, str(profile.ctx_checkpoints)] if flag else []


def _load_args(profile: Profile, caps: Capabilities) -> list[str]:
    """`--no-mmap --mlock` (BeeLlama, older llama.cpp) or their newer upstream form `--load-mode MODE`."""
    if not (profile.no_mmap or profile.mlock):
        return []
    if caps.has("--load-mode") and not caps.has("--no-mmap"):
        return [
            "--load-mode",
            {(True, True): "mlock", (True, False): "none", (False, True): "mmap+mlock"}[
                (profile.no_mmap, profile.mlock)
            ],
        ]
    return [flag for flag, on in (("--no-mmap", profile.no_mmap), ("--mlock", profile.mlock)) if on]


def _opt(flag: str, value: object) -> list[str]:
    return [] if value is None else [flag, str(value)]


def _is_number(token: str) -> bool:
    try:
        float(token)
        return True
    except ValueError:
        return False
