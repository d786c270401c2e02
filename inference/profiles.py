"""Named, typed launch recipes, rendered to argv for one engine or refused with a reason.

A profile names its engine: llama-server (rendered here) or vLLM / SGLang (rendered by
`inference.engines.python_engines`). The two Gemma profiles are the seed guide's commands (host aside: we bind
127.0.0.1). CPU profiles use the Qwen2.5-Coder 1.5B target with its 0.5B draft. A profile never renders a flag
its engine lacks: the speculative flags follow the engine's dialect (BeeLlama `dflash` + cross-ctx, or upstream
`draft-*`).
"""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from inference.errors import DflashError

EngineName = Literal["llama-server", "vllm", "sglang"]
Speculative = Literal["none", "draft", "dflash", "mtp", "ngram-mod", "ngram-simple", "ngram-map-k", "ngram-cache"]


class ProfileError(DflashError, ValueError):
    """The profile cannot run on this engine or machine; the message says why and what to do."""


class Profile(BaseModel):
    model_config = ConfigDict(extra="forbid")  # a misspelt key in a user profile is an error, not ignored

    name: str
    description: str = ""
    engine: EngineName = "llama-server"
    # llama-server: the engines (inference.engines.capabilities.KNOWN_ENGINES) it is written for; it renders for each of them,
    # and a plan with no engine built renders for the first
    engines: list[str] = Field(default_factory=list)
    target: str  # llama-server: catalog model id; vllm/sglang: Hugging Face checkpoint (or local folder)
    draft: str | None = None  # the same kind of name as `target`
    speculative: Speculative = "none"
    device: Literal["gpu", "cpu"] = "cpu"
    ctx_size: int = 8192
    parallel: int = 1
    kv_unified: bool = False
    gpu_layers: str | None = None
    draft_gpu_layers: str | None = None
    batch: int | None = None
    ubatch: int | None = None
    cache_type_k: str | None = None
    cache_type_v: str | None = None
    flash_attn: Literal["on", "off", "auto"] | None = None
    cache_ram: int | None = None  # MiB of prompt cache in host RAM (`--cache-ram`; unset: the engine's 8192, 0: off)
    ctx_checkpoints: int | None = None  # sliding-window checkpoints per slot in host RAM (unset: the engine's 32)
    no_mmap: bool = False
    mlock: bool = False
    no_host: bool = False
    reasoning: Literal["on", "off", "auto"] | None = None
    dflash_cross_ctx: int | None = None  # BeeLlama v0.2-v0.3 only
    draft_max: int | None = None
    draft_min: int | None = None
    draft_p_min: float | None = None
    draft_ctx: int | None = None  # `-cd`: the draft's own context (BeeLlama's DFlash default is 256)
    spec_dm_adaptive: bool | None = None  # False: BeeLlama's adaptive draft-max controller off (deterministic drafts)
    ngram_size_n: int | None = None  # n-gram speculation: tokens that must match before drafting ...
    ngram_size_m: int | None = None  # ... and how many tokens to draft from the match
    ngram_adapt_min: int | None = None  # ngram-simple: drafts start this long and adapt (our engine patch)
    threads: int | None = None
    # llama.cpp RPC: `rpc-server` workers that hold part of the model (`--rpc`); layers go to them with -ngl
    rpc_workers: list[str] = Field(default_factory=list)  # host:port of workers started on other machines
    rpc_local_workers: int = 0  # workers `agent serve` starts on this machine (to try the path on one machine)
    rpc_worker_threads: int | None = None
    temperature: float | None = None
    top_k: int | None = None
    top_p: float | None = None
    min_p: float | None = None
    # vLLM / SGLang (ctx_size is their max model length, draft_max the tokens drafted per step)
    # GPUs (nvidia-smi indices) the server may use, through CUDA_VISIBLE_DEVICES; empty: one GPU, the freest
    # (vLLM/SGLang: tensor_parallel of them). llama-server spreads layers over several with split_mode (`-sm`:
    # none, layer, row or tensor) and keeps small tensors on main_gpu (`-mg`, counted among `devices`)
    devices: list[int] = Field(default_factory=list)
    split_mode: Literal["none", "layer", "row", "tensor"] | None = None
    main_gpu: int | None = None
    tensor_parallel: int = Field(default=1, ge=1)  # GPUs one model is split over
    gpu_memory_utilization: float | None = Field(default=None, gt=0, le=1)  # the engine's share of each GPU
    # what an agent needs from them: tool calls parsed (without a parser vLLM answers 400 to a request with
    # `tools`), reasoning split from the answer; attention backends as z-lab's Gemma 4 recipe sets them
    tool_call_parser: str | None = None
    reasoning_parser: str | None = None
    attention_backend: str | None = None
    draft_attention_backend: str | None = None
    quantization: str | None = None  # e.g. fp8: the target quantized when loaded (H100 has FP8 units)
    kv_cache_dtype: str | None = None  # e.g. fp8
    trust_remote_code: bool = False
    extra_args: list[str] = Field(default_factory=list)

    def models(self) -> list[str]:
        return [self.target] + ([self.draft] if self.draft else [])

    @model_validator(mode="after")
    def _fits_its_engine(self) -> Profile:
        """A setting the profile's engine does not take is an error, not silently dropped."""
        if self.engine == "llama-server":
            fields = type(self).model_fields
            python_only = [f for f in PYTHON_ENGINE_ONLY if getattr(self, f) != fields[f].get_default()]
            if python_only:
                raise ValueError(f"{', '.join(python_only)}: settings of engine vllm or sglang, not llama-server")
            return self
        fields = type(self).model_fields
        ignored = [f for f in LLAMA_SERVER_ONLY if getattr(self, f) != fields[f].get_default(call_default_factory=True)]
        if ignored:
            raise ValueError(
                f"{', '.join(ignored)}: llama-server settings, which engine {self.engine} does not take "
                "(pass its own flags in extra_args)"
            )
        if self.speculative not in ("none", "dflash"):
            raise ValueError(f"engine {self.engine} profiles speak speculative none or dflash, not {self.speculative}")
        if self.speculative == "dflash" and not (self.draft and self.draft_max):
            raise ValueError("speculative dflash needs draft (the drafter's checkpoint) and draft_max")
        return self


# what only vLLM and SGLang take
PYTHON_ENGINE_ONLY = [
    "tensor_parallel",
    "gpu_memory_utilization",
    "tool_call_parser",
    "reasoning_parser",
    "attention_backend",
    "draft_attention_backend",
    "quantization",
    "kv_cache_dtype",
    "trust_remote_code",
]

# what only llama-server takes; vLLM and SGLang batch any number of requests, and sampling comes with each request
LLAMA_SERVER_ONLY = [
    "engines",
    "split_mode",
    "main_gpu",
    "parallel",
    "kv_unified",
    "gpu_layers",
    "draft_gpu_layers",
    "batch",
    "ubatch",
    "cache_type_k",
    "cache_type_v",
    "flash_attn",
    "cache_ram",
    "ctx_checkpoints",
    "no_mmap",
    "mlock",
    "no_host",
    "reasoning",
    "dflash_cross_ctx",
    "draft_min",
    "draft_p_min",
    "draft_ctx",
    "spec_dm_adaptive",
    "ngram_size_n",
    "ngram_size_m",
    "ngram_adapt_min",
    "threads",
    "rpc_workers",
    "rpc_local_workers",
    "rpc_worker_threads",
    "temperature",
    "top_k",
    "top_p",
    "min_p",
]


GUIDE_SAMPLING = dict(temperature=0.7, top_k=64, top_p=0.95, min_p=0.0, reasoning="off")
GUIDE_GPU = dict(device="gpu", parallel=1, gpu_layers="all", batch=2048, ubatch=512, ctx_size=32768, flash_attn="on")
# Host RAM beside the weights (inference/plans/llama_server.py `host_terms`; `agent serve --plan` prints it, and a
# plan whose host side does not fit the available RAM is refused). A sliding-window checkpoint copies a slot's
# sliding-layer KV cache: Gemma 4 31B's 50 sliding layers x 16 KV heads x 256 x 1536 cells (window 1024 + ubatch
# 512) are 1.26 GB at f16, 0.41 GB at q5_0/q4_1, whatever the context. The engines' 32 per slot would take 40.3 GB
# (f16) or 13.2 GB; 8 keep the last turns of an agent session (a checkpoint near the end of each prompt, one per
# 8192 tokens of a long prefill) in 10.1 GB or 3.3 GB. With the prompt cache each GPU profile's host side stays
# under 16 GB, half a 32 GB desktop: q5_0/q4_1 3.3 + the default 8 GiB cache 8.59 = 11.9 GB; the DFlash command
# (f16, cache off) 10.1 + the 1.16 GB of token embeddings --mlock pins (llama.cpp keeps them on the CPU with every
# layer on the GPU) = 11.2 GB; f16 with a 4 GiB cache 10.1 + 4.29 = 14.4 GB. Qwen2.5 has no sliding-window
# layers (no checkpoints); the CPU Qwen profiles' prompt cache is below (CPU_QWEN). A user profile or `agent serve --cache-ram N --ctx-checkpoints N` changes them.
CTX_CHECKPOINTS_GPU = 8
CACHE_RAM_F16 = 4096  # MiB: the prompt cache of the f16 profiles that keep one
GUIDE_DFLASH = dict(  # the seed guide's DFlash command, beyond the GPU settings it shares with the baseline
    target="gemma4-31b",
    draft="gemma4-31b-dflash",
    speculative="dflash",
    dflash_cross_ctx=1024,
    kv_unified=True,
    draft_gpu_layers="all",
    cache_ram=0,
    no_mmap=True,
    mlock=True,
    no_host=True,
)
# z-lab's Gemma 4 recipe (the model card of z-lab/gemma-4-31B-it-DFlash): vLLM `--attention-backend triton_attn`
# with the drafter on `flash_attn`, `--max-num-batched-tokens 32768`; SGLang `--attention-backend triton` with the
# drafter on `fa4`; both `--trust-remote-code`. Gemma 4's tool-call and reasoning parsers are `gemma4` (SGLang's
# python/sglang/srt/function_call/gemma4_detector.py, vLLM's
# vllm/tool_parsers/gemma4_tool_parser.py); without a tool parser vLLM refuses every request that has `tools`.
PYTHON_ENGINE_DFLASH = dict(
    device="gpu",
    target="google/gemma-4-31B-it",
    draft="z-lab/gemma-4-31B-it-DFlash",
    speculative="dflash",
    draft_max=15,
    ctx_size=32768,
    tensor_parallel=1,
    tool_call_parser="gemma4",
    reasoning_parser="gemma4",
    trust_remote_code=True,
)
VLLM_RECIPE = dict(attention_backend="triton_attn", draft_attention_backend="flash_attn")
SGLANG_RECIPE = dict(attention_backend="triton", draft_attention_backend="fa4")
# The engine's 8 GiB prompt cache would make a 1.5B model ask 10.6 GB of host RAM and refuse an 8 GB laptop; at
# Qwen2.5-Coder-1.5B's 28 KiB of KV per token, 2 GiB still holds ~75k tokens of prompts (nine full 8k contexts),
# and one agent session reuses its own slot's cache without it. Host side: 2.0 GB + 2.1 GB.
CPU_QWEN = dict(
    device="cpu", target="qwen2.5-coder-1.5b", ctx_size=8192, parallel=1, batch=512, ubatch=512, cache_ram=2048
)

BUILTIN_PROFILES: dict[str, Profile] = {
    p.name: p
    for p in [
        Profile(
            name="gemma4-31b",
            description="The guide's baseline: Gemma 4 31B Q4_K_S on one GPU.",
            engines=["beellama-v0.2", "beellama-v0.4", "upstream"],
            target="gemma4-31b",
            cache_type_k="q5_0",
            cache_type_v="q4_1",
            **GUIDE_GPU,
            ctx_checkpoints=CTX_CHECKPOINTS_GPU,
            **GUIDE_SAMPLING,
        ),
        Profile(
            name="gemma4-31b-dflash",
            description="The guide's DFlash command: Gemma 4 31B + its DFlash draft.",
            engines=["beellama-v0.2"],
            **GUIDE_DFLASH,
            **GUIDE_GPU,
            ctx_checkpoints=CTX_CHECKPOINTS_GPU,
            **GUIDE_SAMPLING,
        ),
        # BeeLlama v0.2.0 with exactly this pair on an RTX 4090 can fail after the first request with "dflash:
        # invalid reduced-logits token -1" (Anbeeld/beellama.cpp#27; v0.3.x shows it too, #47, #91; v0.4 fixed it, #98);
        # the reporter's workaround:
        Profile(
            name="gemma4-31b-dflash-safe",
            description="The DFlash command with the BeeLlama #27 workaround "
            "(adaptive draft-max off, draft max 16, draft context 1024).",
            engines=["beellama-v0.2"],
            **GUIDE_DFLASH,
            spec_dm_adaptive=False,
            draft_max=16,
            draft_ctx=1024,
            **GUIDE_GPU,
            ctx_checkpoints=CTX_CHECKPOINTS_GPU,
            **GUIDE_SAMPLING,
        ),
        # Multi-token prediction with Google's assistant drafter on stock llama.cpp (`--spec-type draft-mtp`,
        # llama.cpp #23398): speculation with no fork. Draft max 4 as the MTP drafters' model cards run it (e.g.
        # unsloth/gemma-4-12B-it-qat-GGUF MTP/README.md); the drafter reads the target's KV cache, so the plan adds
        # its weights and compute only.
        Profile(
            name="gemma4-31b-mtp",
            description="Gemma 4 31B + its MTP assistant drafter on stock llama.cpp (`--spec-type draft-mtp`).",
            engines=["upstream", "beellama-v0.4"],
            target="gemma4-31b",
            draft="gemma4-31b-mtp",
            speculative="mtp",
            draft_max=4,
            draft_gpu_layers="all",
            cache_type_k="q5_0",
            cache_type_v="q4_1",
            **GUIDE_GPU,
            ctx_checkpoints=CTX_CHECKPOINTS_GPU,
            **GUIDE_SAMPLING,
        ),
        # An 80 GB card (H100 class): the same MTP pair at 128k context with an f16 KV cache (about 13 GB of it).
        Profile(
            name="gemma4-31b-h100",
            description="Gemma 4 31B + MTP drafter at 128k context, f16 KV cache (H100-class, 80 GB).",
            engines=["upstream", "beellama-v0.4"],
            target="gemma4-31b",
            draft="gemma4-31b-mtp",
            speculative="mtp",
            draft_max=4,
            draft_gpu_layers="all",
            **(GUIDE_GPU | {"ctx_size": 131072}),
            ctx_checkpoints=CTX_CHECKPOINTS_GPU,
            cache_ram=CACHE_RAM_F16,
            **GUIDE_SAMPLING,
        ),
        # Upstream llama.cpp's DFlash (PR #22105; BeeLlama >= v0.4 runs the same): `--spec-type draft-dflash` with
        # an upstream-format (`dflash`) drafter; the drafter's context follows the target's (no cross ring), so
        # its KV cache grows with ctx_size. 15 drafted tokens per block, as upstream's docs run it.
        Profile(
            name="gemma4-31b-dflash-upstream",
            description="Gemma 4 31B + its DFlash draft (upstream format) on upstream llama.cpp (draft-dflash).",
            engines=["upstream", "beellama-v0.4"],
            target="gemma4-31b",
            draft="gemma4-31b-dflash-upstream",
            speculative="dflash",
            draft_max=15,
            draft_gpu_layers="all",
            **GUIDE_GPU,
            ctx_checkpoints=CTX_CHECKPOINTS_GPU,
            cache_ram=CACHE_RAM_F16,
            **GUIDE_SAMPLING,
        ),
        # The same pair at full precision on vLLM and SGLang (docs/scale-out.md): BF16 target (~62 GB) and z-lab's
        # gated DFlash drafter, 15 drafted tokens per step (SGLang's block of 16). H100/H200 class; a user
        # profile can `extends` one and set tensor_parallel (GPUs), ctx_size or gpu_memory_utilization.
        Profile(
            name="gemma4-31b-dflash-vllm",
            description="Gemma 4 31B BF16 + z-lab DFlash drafter on vLLM (H100/H200 class GPUs).",
            engine="vllm",
            **PYTHON_ENGINE_DFLASH,
            **VLLM_RECIPE,
            extra_args=["--max-num-batched-tokens", "32768"],
        ),
        Profile(
            name="gemma4-31b-dflash-sglang",
            description="Gemma 4 31B BF16 + z-lab DFlash drafter on SGLang (H100/H200 class GPUs).",
            engine="sglang",
            **PYTHON_ENGINE_DFLASH,
            **SGLANG_RECIPE,
        ),
        # One H100: the target quantized to FP8 when loaded, an FP8 KV cache, and Red Hat's ungated DFlash drafter
        # (no Hugging Face login); 8 drafted tokens, as the NVIDIA developer forum's recipe for this pair runs it
        # ("DFlash Gemma4-31B-it on Spark is here": --quantization fp8, num_speculative_tokens 8).
        Profile(
            name="gemma4-31b-dflash-vllm-fp8",
            description="Gemma 4 31B FP8 + Red Hat's ungated DFlash drafter on vLLM, FP8 KV cache (one H100).",
            engine="vllm",
            **(PYTHON_ENGINE_DFLASH | {"draft": "RedHatAI/gemma-4-31B-it-speculator.dflash", "draft_max": 8}),
            **VLLM_RECIPE,
            quantization="fp8",
            kv_cache_dtype="fp8",
            extra_args=["--max-num-batched-tokens", "32768"],
        ),
        Profile(name="qwen-cpu", description="CPU baseline: Qwen2.5-Coder-1.5B, no speculation.", **CPU_QWEN),
        # Draft-model speculation: lossless and ~90% accepted, but slower than the baseline on a 2-core CPU
        # (0.6x, even at draft max 4); kept for GPUs, where decode is bandwidth-bound and the balance flips.
        Profile(
            name="qwen-cpu-draft",
            description="CPU, draft-model speculation with Qwen2.5-Coder-0.5B (for GPUs; slower on small CPUs).",
            draft="qwen2.5-coder-0.5b",
            speculative="draft",
            draft_max=8,
            draft_min=0,
            **CPU_QWEN,
        ),
        # One model over llama.cpp RPC workers (here two local ones, to try the path on one machine; list real
        # machines' `rpc-server`s in a user profile's `rpc_workers`). All layers go to the workers.
        Profile(
            name="qwen-cpu-rpc",
            description="CPU, the model's layers spread over two local RPC workers (rpc-server).",
            gpu_layers="99",
            rpc_local_workers=2,
            rpc_worker_threads=1,
            **CPU_QWEN,
        ),
        # The default CPU profile, tuned with `agent bench` on 2 cores (docs/benchmarks.md): ngram-simple with a
        # 16-token match and adaptive drafts (our engine patch): each reply's drafts start at 8 tokens, double
        # after a fully accepted one up to 48, halve after a rejected one. About 2.1x when a reply re-emits a
        # file, 0.99-1.05x elsewhere. A fixed 32-token draft reached 2.1x but lost on short agent replies
        # (0.96-0.97x: a wrong 32-token draft copied from the prompt's examples costs ~10 steps to verify); the
        # stock 12/48 lost more (0.77x); the 0.5B draft model lost everywhere (0.3-0.67x: on 2 cores a verify
        # batch is not cheap enough for its ~85% acceptance).
        Profile(
            name="qwen-cpu-ngram",
            description="CPU default: adaptive n-gram speculation (about 2x when a reply re-emits text).",
            speculative="ngram-simple",
            ngram_size_n=16,
            ngram_size_m=48,
            ngram_adapt_min=8,
            **CPU_QWEN,
        ),
    ]
}


def load_profiles(user_file: Path | None = None) -> dict[str, Profile]:
    """Built-in profiles, plus `[profiles.NAME]` tables from a TOML file (user profiles win on name clash).
    A malformed file or profile is a one-line ProfileError naming the profile and the field."""
    profiles = dict(BUILTIN_PROFILES)
    if not (user_file and user_file.is_file()):
        return profiles
    try:
        data = tomllib.loads(user_file.read_text()).get("profiles", {})
    except tomllib.TOMLDecodeError as exc:
        raise ProfileError(f"{user_file} is not valid TOML: {exc}") from None
    if not isinstance(data, dict):
        raise ProfileError(f"{user_file}: `profiles` must be a table of [profiles.NAME] tables")
    for name, fields in data.items():
        if not isinstance(fields, dict):
            raise ProfileError(f"profile {name!r} in {user_file} must be a table ([profiles.{name}]), not a value")
        fields = dict(fields)
        base_name = fields.pop("extends", None)
        if base_name is not None and base_name not in profiles:
            raise ProfileError(
                f"profile {name!r} in {user_file}: extends unknown profile {base_name!r}; known: {', '.join(profiles)}"
            )
        try:
            base = profiles[base_name].model_dump() if base_name else {}
            profiles[name] = Profile.model_validate(base | fields | {"name": name})
        except ValidationError as exc:
            problem = exc.errors()[0]
            field = ".".join(str(part) for part in problem["loc"])
            what = "unknown field" if problem["type"] == "extra_forbidden" else problem["msg"].lower()
            where = f"field {field!r}: " if field else ""
            raise ProfileError(
                f"profile {name!r} in {user_file}: {where}{what.removeprefix('value error, ')}"
            ) from None
    return profiles


def with_overrides(
    profile: Profile,
    ctx_size: int | None = None,
    cache_type: str | None = None,
    *,
    cache_ram: int | None = None,
    ctx_checkpoints: int | None = None,
) -> Profile:
    """The profile with another context size and KV cache type (K and V on llama-server; vLLM/SGLang's
    `--kv-cache-dtype`), prompt cache (MiB) or checkpoints per slot, checked like a profile written that way."""
    update: dict[str, object] = {} if ctx_size is None else {"ctx_size": ctx_size}
    update |= {k: v for k, v in (("cache_ram", cache_ram), ("ctx_checkpoints", ctx_checkpoints)) if v is not None}
    if cache_type is not None:
        if profile.engine == "llama-server":
            update |= {"cache_type_k": cache_type, "cache_type_v": cache_type}
        else:
            update["kv_cache_dtype"] = cache_type
    if not update:
        return profile
    try:
        return Profile.model_validate(profile.model_dump() | update)
    except ValidationError as exc:
        raise ProfileError(
            f"profile {profile.name!r}: {exc.errors()[0]['msg'].removeprefix('Value error, ')}"
        ) from None


def get_profile(name: str, profiles: dict[str, Profile] | None = None) -> Profile:
    profiles = profiles or BUILTIN_PROFILES
    if name not in profiles:
        raise ProfileError(f"unknown profile {name!r}; known profiles: {', '.join(profiles)}")
    return profiles[name]
