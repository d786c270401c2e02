"""vLLM and SGLang plans (Hugging Face checkpoints, `inference.checkpoints`), per GPU: weights split over
`tensor_parallel` GPUs, the KV cache of one full-context request (the engines refuse to start without it and fill
the rest of their share with more), the drafter, against the engine's share of each GPU."""

from __future__ import annotations

import math

from inference.checkpoints import Checkpoint, get_checkpoint
from inference.plans.terms import (
    CONTEXT_CAP,
    KV_PAD,
    MemoryPlan,
    PlanTerm,
    gb,
)
from inference.shapes.shape import ModelShape


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


# vLLM and SGLang, per GPU
VLLM_UTILIZATION = 0.92  # vLLM's default --gpu-memory-utilization (vllm/config/cache.py)


SGLANG_RESERVE = 10 * 1024**3  # SGLang's automatic mem_fraction_static keeps >= 10 GiB free on GPUs over 60 GiB


ACTIVATIONS = 3 * 1024**3  # activations of a prefill chunk, CUDA graphs, NCCL buffers (an allowance)


ENGINE_RUNTIME = 1024**3  # CUDA context and the engine's own buffers


KV_BYTES = 2  # BF16 KV cache (the engines' default: the model's dtype)
