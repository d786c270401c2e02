"""A memory plan for one profile: each term llama-server will allocate (weights, KV cache per layer, DFlash
ring, compute buffers, runtime), their total, and whether it fits the device, before anything is downloaded.

KV cache follows llama.cpp (`llama_kv_cache_iswa`): full-attention layers hold the whole context; sliding-window
layers hold window x sequences + ubatch cells (padded to 256), never more than the context. Facts come from the
GGUF header when the file is cached, else from the catalog, so a plan never needs a download.

vLLM and SGLang profiles (Hugging Face checkpoints, `inference.checkpoints`) are planned per GPU: weights split
over `tensor_parallel` GPUs, the KV cache of one full-context request (the engines refuse to start without it
and fill the rest of their share with more), the drafter, against the engine's share of each GPU.
"""

from __future__ import annotations

import math
import re
from pathlib import Path
from typing import Literal

from pydantic import BaseModel

from inference.checkpoints import Checkpoint, get_checkpoint
from inference.shapes.shape import ModelShape

# bytes per element of each KV cache type (block formats include their scales)
CACHE_TYPE_BYTES = {
    "f32": 4.0,
    "f16": 2.0,
    "bf16": 2.0,
    "q8_0": 34 / 32,
    "q5_1": 24 / 32,
    "q5_0": 22 / 32,
    "q4_1": 20 / 32,
    "q4_0": 18 / 32,
    "iq4_nl": 18 / 32,
}
KV_PAD = 256  # llama.cpp pads KV cache sizes to this many cells
DEFAULT_UBATCH = 512
DFLASH_CROSS_CTX_DEFAULT = 512  # BeeLlama's --spec-dflash-cross-ctx default
RUNTIME = {"gpu": 512 * 1024**2, "cpu": 256 * 1024**2}  # CUDA context + cuBLAS workspace; CPU threadpool etc.
# vLLM and SGLang, per GPU
VLLM_UTILIZATION = 0.92  # vLLM's default --gpu-memory-utilization (vllm/config/cache.py)
SGLANG_RESERVE = 10 * 1024**3  # SGLang's automatic mem_fraction_static keeps >= 10 GiB free on GPUs over 60 GiB
ACTIVATIONS = 3 * 1024**3  # activations of a prefill chunk, CUDA graphs, NCCL buffers (an allowance)
ENGINE_RUNTIME = 1024**3  # CUDA context and the engine's own buffers
KV_BYTES = 2  # BF16 KV cache (the engines' default: the model's dtype)
UNITS = {
    "": 1024**3,
    "b": 1,
    "k": 1000,
    "kb": 1000,
    "kib": 1024,
    "m": 1000**2,
    "mb": 1000**2,
    "mib": 1024**2,
    "g": 1024**3,
    "gb": 1000**3,
    "gib": 1024**3,
    "t": 1024**4,
    "tb": 1000**4,
    "tib": 1024**4,
}


class PlanTerm(BaseModel):
    label: str
    bytes: int
    detail: str


class ModelFacts(BaseModel):
    """What the plan knows about one model, and where it learned it."""

    id: str
    shape: ModelShape
    weights: int
    source: str  # "file PATH" or "catalog"


class MemoryPlan(BaseModel):
    profile: str
    device: Literal["gpu", "cpu"]
    terms: list[PlanTerm]
    available: int | None  # None: unknown (no GPU here and no --gpu-memory)
    available_from: str
    advice: str = ""  # what to do when it does not fit (default: llama-server's knobs)
    host_terms: list[PlanTerm] = []  # host RAM beyond the device's terms: prompt cache, checkpoints, pinned weights

    @property
    def total(self) -> int:
        return sum(t.bytes for t in self.terms)

    @property
    def fits(self) -> bool:
        return self.available is not None and self.total <= self.available

    def verdict(self) -> str:
        """One line: fits (with the slack) or not, and why."""
        if self.available is None:
            return f"unknown: {self.available_from}; pass --gpu-memory SIZE (e.g. 24GiB) to plan for a card"
        if self.fits:
            return f"fits: {gb(self.total)} of {gb(self.available)} ({self.available_from}), {gb(self.available - self.total)} to spare"
        short = self.total - self.available
        largest = max(self.terms, key=lambda t: t.bytes)
        if self.advice:
            why = self.advice
        elif largest.bytes > self.available:
            why = f"the {largest.label} alone ({gb(largest.bytes)}) exceed it: use a smaller quantization or a bigger device"
        else:
            why = (
                "lower ctx_size, use a quantized KV cache (cache_type_k/v), or a smaller model; largest terms: "
                + ", ".join(f"{t.label} {gb(t.bytes)}" for t in sorted(self.terms, key=lambda t: -t.bytes)[:2])
            )
        return (
            f"does not fit: needs {gb(self.total)}, {self.device} has {gb(self.available)} ({self.available_from}), "
            f"short by {gb(short)}; {why}"
        )

    def render(self) -> str:
        width = max(len(t.label) for t in self.terms + self.host_terms)
        lines = [f"memory plan for {self.profile} ({self.device}):"]
        lines += [f"  {t.label:<{width}}  {gb(t.bytes):>9}  {t.detail}" for t in self.terms]
        lines.append(f"  {'total':<{width}}  {gb(self.total):>9}")
        lines.append(self.verdict())
        if self.host_terms:
            lines.append("host RAM at most, beyond the above (prompt cache and checkpoints fill up over a session):")
            lines += [f"  {t.label:<{width}}  {gb(t.bytes):>9}  {t.detail}" for t in self.host_terms]
        return "\n".join(lines)


def gb(n: float) -> str:
    return f"{n / 1e9:.2f} GB"


def parse_size(text: str) -> int:
    """`24GiB`, `24GB`, `24G` (= GiB, like nvidia-smi's MiB), `24576MiB`, or a plain number of GiB."""
    match = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([a-zA-Z]*)\s*", text)
    if not match or match.group(2).lower() not in UNITS:
        raise ValueError(f"cannot read memory size {text!r}; write it like 24GiB, 24GB or 16384MiB")
    return int(float(match.group(1)) * UNITS[match.group(2).lower()])


def kv_cache_bytes(
    shape: ModelShape,
    ctx: int,
    *,
    ubatch: int,
    seqs: int,
    unified: bool,
    cache_type_k: str | None,
    cache_type_v: str | None,
) -> tuple[int, str]:
    """Bytes of KV cache, with the cell counts per kind of layer that llama.cpp allocates."""
    k_bytes, v_bytes = (CACHE_TYPE_BYTES.get(t or "f16", 2.0) for t in (cache_type_k, cache_type_v))
    streams = 1 if unified else seqs
    full_cells = _pad(math.ceil(ctx / streams)) * streams
    swa_cells = min(full_cells // streams, _pad(shape.sliding_window * (seqs if unified else 1) + ubatch)) * streams
    total = 0.0
    groups: dict[tuple[bool, int, int, int], int] = {}
    for heads, k_len, v_len, swa in zip(shape.kv_heads, shape.key_length, shape.value_length, shape.swa_layers):
        cells = swa_cells if swa else full_cells
        total += cells * heads * (k_len * k_bytes + v_len * v_bytes)
        groups[(swa, heads, k_len, cells)] = groups.get((swa, heads, k_len, cells), 0) + 1
    parts = [
        f"{n} {'sliding-window' if swa else 'full'} layers x {heads} KV heads x {k_len} x {cells} cells"
        for (swa, heads, k_len, cells), n in sorted(groups.items(), key=lambda g: g[0][0], reverse=True)
    ]
    types = f"{cache_type_k or 'f16'}/{cache_type_v or 'f16'}"
    window = (
        f"; window {shape.sliding_window} x {seqs if unified else 1} seq + ubatch {ubatch}"
        if any(shape.swa_layers)
        else ""
    )
    return int(total), f"{types}: " + "; ".join(parts) + window


def compute_bytes(shape: ModelShape, tokens: int) -> int:
    """The graph's worst case at `tokens` per batch: logits for every token plus activations (about 8 x embedding)."""
    return tokens * 4 * (shape.vocab + 8 * shape.embedding)


def compute_bytes_outputs(shape: ModelShape, tokens: int, outputs: int) -> int:
    """Upstream llama.cpp (the PyPI sdist's) reserves logits for the sequences' outputs only: activations of a
    `tokens` batch (the FFN's gate and up, about 8 x embedding besides) plus `outputs` rows of logits. Against its
    log on Gemma 4 31B's shape at ubatch 512: 177 MB planned, 189 MB allocated."""
    return tokens * 4 * (2 * shape.feed_forward + 8 * shape.embedding) + outputs * shape.vocab * 4


def _pad(cells: int) -> int:
    return math.ceil(cells / KV_PAD) * KV_PAD


def build_plan(
    profile,
    target: ModelFacts,
    draft: ModelFacts | None,
    *,
    available: int | None,
    available_from: str,
    logits: Literal["ubatch", "outputs"] = "ubatch",
) -> MemoryPlan:
    """Every allocation of `profile` (an inference.profiles.Profile) for these models, against `available`.
    `logits`: whether the engine reserves logits for a whole ubatch (BeeLlama v0.2's llama.cpp) or for the
    sequences' outputs only (upstream llama.cpp of the PyPI sdist)."""
    ubatch = profile.ubatch or DEFAULT_UBATCH
    dflash = profile.speculative == "dflash"
    kv, kv_detail = kv_cache_bytes(
        target.shape,
        profile.ctx_size,
        ubatch=ubatch,
        seqs=profile.parallel,
        unified=profile.kv_unified,
        cache_type_k=profile.cache_type_k,
        cache_type_v=profile.cache_type_v,
    )
    terms = [
        PlanTerm(label="target weights", bytes=target.weights, detail=f"{target.id} ({target.source})"),
        PlanTerm(label="target KV cache", bytes=kv, detail=kv_detail),
        PlanTerm(
            label="target compute",
            bytes=compute_bytes(target.shape, ubatch),
            detail=f"ubatch {ubatch} x (vocab {target.shape.vocab} + 8 x {target.shape.embedding}) x 4 B",
        ),
    ]
    if logits == "outputs" and target.shape.feed_forward:
        terms[-1] = PlanTerm(
            label="target compute",
            bytes=compute_bytes_outputs(target.shape, ubatch, profile.parallel),
            detail=f"ubatch {ubatch} x (2 x FFN {target.shape.feed_forward} + 8 x {target.shape.embedding}) x 4 B"
            f" + {profile.parallel} x vocab {target.shape.vocab} x 4 B of logits",
        )
    if draft:
        terms.append(PlanTerm(label="draft weights", bytes=draft.weights, detail=f"{draft.id} ({draft.source})"))
        if profile.speculative == "mtp":
            terms += mtp_terms(profile, draft, ubatch)
        elif draft.shape.arch == "dflash":  # upstream's format and engine (BeeLlama >= v0.4 alike)
            terms += upstream_dflash_terms(profile, draft, ubatch)
        elif dflash or draft.shape.is_dflash_drafter:
            cross = profile.dflash_cross_ctx or DFLASH_CROSS_CTX_DEFAULT
            layers = draft.shape.dflash_target_layers or 6
            terms.append(
                PlanTerm(
                    label="DFlash cross ring",
                    bytes=cross * layers * target.shape.embedding * 4,
                    detail=f"{cross} tokens x {layers} target layers x {target.shape.embedding} x 4 B "
                    "(the drafter keeps no KV cache)",
                )
            )
            block = draft.shape.dflash_block_size or 16
            terms.append(
                PlanTerm(
                    label="draft compute",
                    bytes=compute_bytes(draft.shape, block),
                    detail=f"block {block} x (vocab {draft.shape.vocab} + 8 x {draft.shape.embedding}) x 4 B",
                )
            )
        else:
            draft_ctx = profile.draft_ctx or profile.ctx_size
            dkv, dkv_detail = kv_cache_bytes(
                draft.shape,
                draft_ctx,
                ubatch=ubatch,
                seqs=profile.parallel,
                unified=profile.kv_unified,
                cache_type_k=None,
                cache_type_v=None,
            )
            terms += [
                PlanTerm(label="draft KV cache", bytes=dkv, detail=dkv_detail),
                PlanTerm(
                    label="draft compute",
                    bytes=compute_bytes(draft.shape, ubatch),
                    detail=f"ubatch {ubatch} x (vocab {draft.shape.vocab} + 8 x {draft.shape.embedding}) x 4 B",
                ),
            ]
    terms.append(
        PlanTerm(
            label="runtime",
            bytes=RUNTIME[profile.device],
            detail="CUDA context and workspaces" if profile.device == "gpu" else "threads and host buffers",
        )
    )
    return MemoryPlan(
        profile=profile.name,
        device=profile.device,
        terms=terms,
        available=available,
        available_from=available_from,
        host_terms=host_terms(profile, target, draft, ubatch),
    )


def mtp_terms(profile, draft: ModelFacts, ubatch: int) -> list[PlanTerm]:
    """MTP (`--spec-type draft-mtp`, llama.cpp #23398): Gemma 4's assistant drafter keeps no KV cache of its own;
    its layers read the target's last sliding and last full layer (src/llama-model.cpp `share` for
    LLM_ARCH_GEMMA4_ASSISTANT). Its context reserves a compute buffer like the target's, at ubatch tokens."""
    return [
        PlanTerm(
            label="draft KV cache",
            bytes=0,
            detail=f"none: the {draft.shape.arch} drafter reads the target's KV cache (MTP)",
        ),
        PlanTerm(
            label="draft compute",
            bytes=compute_bytes(draft.shape, ubatch),
            detail=f"ubatch {ubatch} x (vocab {draft.shape.vocab} + 8 x {draft.shape.embedding}) x 4 B",
        ),
    ]


def upstream_dflash_terms(profile, draft: ModelFacts, ubatch: int) -> list[PlanTerm]:
    """Upstream llama.cpp's DFlash (`--spec-type draft-dflash`): the drafter's context holds as many tokens per
    sequence as the target's (common/speculative.cpp: `cparams.n_ctx = llama_n_ctx(ctx_tgt)`), its KV cache in
    the draft cache types (f16 by default), no cross ring; its graph decodes one block (anchor + draft_max masks)
    on the target's embeddings and lm head (shared through ctx_other)."""
    dkv, dkv_detail = kv_cache_bytes(
        draft.shape,
        profile.ctx_size,
        ubatch=ubatch,
        seqs=profile.parallel,
        unified=profile.kv_unified,
        cache_type_k=None,
        cache_type_v=None,
    )
    block = (profile.draft_max or draft.shape.dflash_block_size - 1) + 1
    return [
        PlanTerm(label="draft KV cache", bytes=dkv, detail=f"the target's context; {dkv_detail}"),
        PlanTerm(
            label="draft compute",
            bytes=3 * compute_bytes(draft.shape, ubatch),
            detail=f"3 graphs x ubatch {ubatch} x (vocab {draft.shape.vocab} + 8 x {draft.shape.embedding}) x 4 B "
            f"(blocks of {block}; an allowance fitted to the sdist engine's log: three compute buffers, "
            "1.97 GB on Gemma 4 31B's drafter at ubatch 512)",
        ),
    ]


# KV cache types a GPU user reaches for, as (K, V); the largest context that fits is shown for each the engine has
PLAN_CACHE_TYPES = [("f16", "f16"), ("q8_0", "q8_0"), ("q5_0", "q4_1"), ("q4_0", "q4_0")]
CONTEXT_CAP = 262144  # where the search stops when the model's trained context is not known


def largest_contexts(
    profile,
    *,
    gpu_memory: int | None = None,
    cache_types: list[str] | None = None,
    logits: Literal["ubatch", "outputs"] = "ubatch",
) -> str:
    """For each KV cache type the engine offers, the largest context (a multiple of 256 tokens, up to
    CONTEXT_CAP) whose plan still fits this device (or `gpu_memory`); one line each."""
    target = model_facts(profile.target)
    draft = model_facts(profile.draft) if profile.draft else None
    available, where = device_memory(profile.device, gpu_memory, profile.devices)
    if available is None:
        return f"largest context: unknown ({where}); pass --gpu-memory SIZE"
    lines = [f"largest context that fits {gb(available)} ({where}), by KV cache type:"]
    for k, v in PLAN_CACHE_TYPES:
        if cache_types and not (k in cache_types and v in cache_types):
            continue
        typed = profile.model_copy(update={"cache_type_k": k, "cache_type_v": v})

        def fits(cells: int, typed=typed) -> bool:
            sized = typed.model_copy(update={"ctx_size": cells * KV_PAD})
            return build_plan(sized, target, draft, available=available, available_from=where, logits=logits).fits

        limit = target.shape.context_length or CONTEXT_CAP
        low, high = 0, limit // KV_PAD  # fits(low) holds (0: none), fits(high + 1) does not
        if fits(high):
            low = high
        while low < high:
            middle = (low + high + 1) // 2
            low, high = (middle, high) if fits(middle) else (low, middle - 1)
        tokens = low * KV_PAD
        at_limit = " (the model's trained context)" if tokens == target.shape.context_length else ""
        shown = f"{tokens:,} tokens{at_limit}" if tokens else "none"
        lines.append(f"  {k + '/' + v:<10} {shown}")
    return "\n".join(lines)


def largest_python_contexts(profile, gpu_memory: int | None = None) -> str:
    """vLLM / SGLang: for a BF16 and an FP8 KV cache, the largest context (a multiple of 256 tokens) one request
    of which still fits each GPU's share."""
    limit = _checkpoint(profile, profile.target).shape.context_length or CONTEXT_CAP
    lines = []
    for dtype, label in ((None, "bf16"), ("fp8", "fp8")):
        typed = profile.model_copy(update={"kv_cache_dtype": dtype})

        def fits(cells: int, typed=typed) -> bool:
            return plan_python_engine(typed.model_copy(update={"ctx_size": cells * KV_PAD}), gpu_memory).fits

        low, high = 0, limit // KV_PAD
        if fits(high):
            low = high
        while low < high:
            middle = (low + high + 1) // 2
            low, high = (middle, high) if fits(middle) else (low, middle - 1)
        tokens = low * KV_PAD
        at_limit = " (the model's trained context)" if tokens == limit else ""
        lines.append(f"  {label:<10} {tokens:,} tokens{at_limit}" if tokens else f"  {label:<10} none")
    return "largest context one request may have, by KV cache type:\n" + "\n".join(lines)


CTX_CHECKPOINTS_DEFAULT = 32  # llama.cpp and BeeLlama v0.2 (common/common.h n_ctx_checkpoints): per slot
CACHE_RAM_DEFAULT_MIB = 8192  # llama-server's --cache-ram default (common/common.h cache_ram_mib)


def host_terms(profile, target: ModelFacts, draft: ModelFacts | None, ubatch: int) -> list[PlanTerm]:
    """Host RAM llama-server can take beyond its buffers: the prompt cache (`--cache-ram`, 8 GiB unless set),
    sliding-window context checkpoints (up to 32 per slot, each a copy of the sliding-window layers' KV cache:
    about 1.26 GB at f16 for Gemma 4 31B), and with `--mlock` the weights pinned in RAM."""
    terms = []
    cache_mib = CACHE_RAM_DEFAULT_MIB if profile.cache_ram is None else profile.cache_ram
    if cache_mib > 0:
        terms.append(PlanTerm(label="prompt cache", bytes=cache_mib * 1024**2, detail=f"--cache-ram {cache_mib} MiB"))
    if any(target.shape.swa_layers):
        swa_only = target.shape.model_copy(
            update={"kv_heads": [h if s else 0 for h, s in zip(target.shape.kv_heads, target.shape.swa_layers)]}
        )
        one, _ = kv_cache_bytes(
            swa_only,
            profile.ctx_size,
            ubatch=ubatch,
            seqs=profile.parallel,
            unified=profile.kv_unified,
            cache_type_k=profile.cache_type_k,
            cache_type_v=profile.cache_type_v,
        )
        n = CTX_CHECKPOINTS_DEFAULT * profile.parallel
        terms.append(
            PlanTerm(
                label="context checkpoints",
                bytes=n * one,
                detail=f"{CTX_CHECKPOINTS_DEFAULT} per slot x {profile.parallel} slot(s) x {gb(one)} "
                "(the sliding-window layers' KV cache)",
            )
        )
    if profile.mlock:
        pinned = target.weights + (draft.weights if draft else 0)
        terms.append(PlanTerm(label="weights pinned (--mlock)", bytes=pinned, detail="target and draft files"))
    return terms


# ---------------------------------------------------------------- facts and devices


def model_facts(model_id: str, path: Path | None = None) -> ModelFacts:
    """From the file's GGUF header when it is here (given or cached), else from the catalog: never a download."""
    from inference.fetch import cached_model
    from inference.models import get_model
    from inference.profiles import ProfileError
    from inference.shapes.shape import ShapeError

    spec = get_model(model_id)
    path = path or cached_model(spec)
    try:
        if path is not None and path.is_file():
            return ModelFacts(
                id=model_id, shape=ModelShape.from_gguf(path), weights=path.stat().st_size, source=f"header of {path}"
            )
    except ShapeError as exc:
        raise ProfileError(str(exc)) from None
    if spec.shape is None:
        raise ProfileError(
            f"the catalog has no layer facts for {model_id!r}; download it first "
            f"(`agent models pull {model_id}`) so its GGUF header can be read"
        )
    size = next((s.size for s in spec.sources if getattr(s, "size", None)), None) or spec.approx_size
    return ModelFacts(id=model_id, shape=spec.shape, weights=size, source="catalog facts; not downloaded")


def device_memory(
    device: str, gpu_memory: int | None = None, devices: list[int] | None = None
) -> tuple[int | None, str]:
    """Memory the profile's device offers: `--gpu-memory` when given, else the free memory of the profile's
    `devices` together (llama-server spreads the layers over them), else of the freest GPU, else available RAM."""
    from inference.hardware import Hardware

    if device == "gpu" and gpu_memory is not None:
        return gpu_memory, "--gpu-memory"
    hardware = Hardware.detect()
    if device == "cpu":
        return hardware.ram_available, "available RAM"
    if not hardware.gpus:
        return None, "no NVIDIA GPU found (nvidia-smi)"
    if devices:
        missing = [i for i in devices if i >= len(hardware.gpus)]
        if missing:
            return None, f"GPU(s) {missing} named in devices are not here ({len(hardware.gpus)} found)"
        chosen = [hardware.gpus[i] for i in devices]
        return sum(g.memory_free for g in chosen), "free memory of GPU(s) " + ", ".join(map(str, devices))
    index = max(range(len(hardware.gpus)), key=lambda i: hardware.gpus[i].memory_free)
    return hardware.gpus[index].memory_free, f"free memory of GPU {index}, the freest ({hardware.gpus[index].name})"


def plan_profile(
    profile,
    *,
    paths: dict[str, Path] | None = None,
    gpu_memory: int | None = None,
    logits: Literal["ubatch", "outputs"] = "ubatch",
) -> MemoryPlan:
    """The plan of `profile` on this machine (or on a card of `gpu_memory` bytes); `logits` as in build_plan."""
    if profile.engine != "llama-server":  # vLLM / SGLang: Hugging Face checkpoints, per GPU
        return plan_python_engine(profile, gpu_memory)
    paths = paths or {}
    target = model_facts(profile.target, paths.get(profile.target))
    draft = model_facts(profile.draft, paths.get(profile.draft)) if profile.draft else None
    available, where = device_memory(profile.device, gpu_memory, profile.devices)
    return build_plan(profile, target, draft, available=available, available_from=where, logits=logits)


# ---------------------------------------------------------------- vLLM and SGLang


def kv_bytes_per_gpu(shape: ModelShape, ctx: int, tp: int, kv_dtype: str | None = None) -> tuple[int, str]:
    """KV cache of one full-context request on one GPU: sliding-window layers hold the window, the others the
    whole context; each GPU holds its share of the KV heads (at least one)."""
    per_value = 1 if (kv_dtype or "").startswith("fp8") else KV_BYTES
    total = 0
    groups: dict[tuple[bool, int, int, int], int] = {}
    for heads, k_len, v_len, swa in zip(shape.kv_heads, shape.key_length, shape.value_length, shape.swa_layers):
        cells = min(ctx, shape.sliding_window) if swa else ctx
        share = math.ceil(heads / tp)
        total += cells * share * (k_len + v_len) * per_value
        groups[(swa, share, k_len, cells)] = groups.get((swa, share, k_len, cells), 0) + 1
    parts = [
        f"{n} {'sliding-window' if swa else 'full'} layers x {share} KV heads x {k_len} x {cells} tokens"
        for (swa, share, k_len, cells), n in sorted(groups.items(), key=lambda g: g[0][0], reverse=True)
    ]
    return total, ("FP8: " if per_value == 1 else "BF16: ") + "; ".join(parts)


def plan_python_engine(profile, gpu_memory: int | None = None) -> MemoryPlan:
    """Per GPU: weights / tensor_parallel, the KV cache one full-context request needs (the engine refuses to
    start without it; it fills the rest of its share with more), the drafter, and the engine's share of the
    GPU (vLLM --gpu-memory-utilization, SGLang --mem-fraction-static) as what is available."""
    tp = profile.tensor_parallel
    target = _checkpoint(profile, profile.target)
    # `--quantization fp8` stores the BF16 checkpoint's weights in one byte each on load
    weights, how = (
        (target.weights // 2, "FP8 on load, half of ") if profile.quantization == "fp8" else (target.weights, "")
    )
    terms = [
        PlanTerm(
            label="target weights",
            bytes=weights // tp,
            detail=f"{target.repo}: {how}{gb(target.weights)} / {tp} GPU(s)",
        ),
    ]
    kv, kv_detail = kv_bytes_per_gpu(target.shape, profile.ctx_size, tp, profile.kv_cache_dtype)
    terms.append(
        PlanTerm(label="target KV cache", bytes=kv, detail=f"one {profile.ctx_size}-token request; {kv_detail}")
    )
    if profile.draft:
        draft = _checkpoint(profile, profile.draft)
        terms.append(
            PlanTerm(
                label="draft weights",
                bytes=draft.weights // tp,
                detail=f"{draft.repo}: {gb(draft.weights)} / {tp} GPU(s)",
            )
        )
        dkv, dkv_detail = kv_bytes_per_gpu(draft.shape, profile.ctx_size, tp, profile.kv_cache_dtype)
        terms.append(PlanTerm(label="draft KV cache", bytes=dkv, detail=f"one slot per target token; {dkv_detail}"))
    if profile.engine == "vllm":  # inside vLLM's share; SGLang keeps them outside mem_fraction_static
        terms.append(
            PlanTerm(label="activations", bytes=ACTIVATIONS, detail="prefill chunk, CUDA graphs, NCCL (an allowance)")
        )
        terms.append(PlanTerm(label="runtime", bytes=ENGINE_RUNTIME, detail="CUDA context and engine buffers"))
    available, where, advice = _share(profile, gpu_memory)
    memory = MemoryPlan(
        profile=profile.name, device="gpu", terms=terms, available=available, available_from=where, advice=advice
    )
    return memory


def _checkpoint(profile, repo: str) -> Checkpoint:
    from inference.profiles import ProfileError

    found = get_checkpoint(repo)
    if found is None:
        raise ProfileError(
            f"profile {profile.name!r}: no size or layer facts for {repo!r}, so no memory plan; "
            "the command itself (`--print-args`) does not need them"
        )
    return found


def _share(profile, gpu_memory: int | None) -> tuple[int | None, str, str]:
    """(bytes the engine may use on each GPU, where that comes from, what to do when it does not fit)."""
    from inference.hardware import chosen_gpus, nvidia_gpus

    tp = profile.tensor_parallel
    advice = (
        f"raise tensor_parallel (now {tp}), lower ctx_size, or use GPUs with more memory"
        if tp < 8
        else "lower ctx_size or use GPUs with more memory"
    )
    if gpu_memory is not None:
        size, source = gpu_memory, f"--gpu-memory, {tp} such GPU(s)"
    else:
        here = nvidia_gpus()
        gpus = [here[i] for i in chosen_gpus(profile.devices, tp, here) if i < len(here)]
        if len(gpus) < tp:
            found = f"{len(gpus)} NVIDIA GPU(s) found" if gpus else "no NVIDIA GPU found (nvidia-smi)"
            return None, f"tensor_parallel {tp} needs {tp} GPUs, {found}", advice
        size = min(g.memory_total for g in gpus[:tp])
        source = f"{gpus[0].name} x {tp}"
    if profile.engine == "vllm":
        share = profile.gpu_memory_utilization or VLLM_UTILIZATION
        what = "gpu_memory_utilization" + ("" if profile.gpu_memory_utilization else ", vLLM's default")
        return int(size * share), f"{share:.0%} ({what}) of {gb(size)} per GPU; {source}", advice
    if profile.gpu_memory_utilization is not None:
        share = profile.gpu_memory_utilization
        return int(size * share), f"{share:.0%} (mem_fraction_static) of {gb(size)} per GPU; {source}", advice
    return (
        size - SGLANG_RESERVE,
        f"{gb(size)} per GPU less the {gb(SGLANG_RESERVE)} SGLang keeps for activations and CUDA graphs; {source}",
        advice,
    )
