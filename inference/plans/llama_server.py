"""llama-server's plan: each term it will allocate (weights, KV cache per layer, DFlash ring or drafter KV,
compute buffers, runtime) for each speculative dialect (BeeLlama v0.2 DFlash, upstream draft-dflash, MTP),
the host-RAM side (prompt cache, context checkpoints, pinned weights), and the largest context that fits.

KV cache follows llama.cpp (`llama_kv_cache_iswa`): full-attention layers hold the whole context; sliding-window
layers hold window x sequences + ubatch cells (padded to 256), never more than the context."""

from __future__ import annotations

from typing import Literal

from inference.plans.terms import (
    CONTEXT_CAP,
    DEFAULT_UBATCH,
    DFLASH_CROSS_CTX_DEFAULT,
    KV_PAD,
    RUNTIME,
    MemoryPlan,
    ModelFacts,
    PlanTerm,
    compute_bytes,
    compute_bytes_outputs,
    device_memory,
    gb,
    kv_cache_bytes,
    model_facts,
)


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
