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
    host_available: int | None = None,
    host_available_from: str = "",
) -> MemoryPlan:
    """Every allocation of `profile` (an inference.profiles.Profile) for these models, against `available`, and
    its host-RAM side against `host_available` (None: not checked). `logits`: whether the engine reserves logits
    for a whole ubatch (BeeLlama v0.2's llama.cpp) or for the sequences' outputs only (upstream llama.cpp of the
    PyPI sdist)."""
    ubatch = profile.ubatch or DEFAULT_UBATCH
    dflash = profile.speculative == "dflash"
    # BeeLlama v0.2's server (the "ubatch" engine, its DFlash) gives a speculative target twice the slots'
    # sequences, one to back each slot up (tools/server/server-context.cpp, load_model): sliding-window layers
    # hold twice the window (measured: 2,560 cells at window 1,024 and ubatch 512)
    backups = 2 if logits == "ubatch" and dflash else 1
    kv, kv_detail = kv_cache_bytes(
        target.shape,
        profile.ctx_size,
        ubatch=ubatch,
        seqs=profile.parallel * backups,
        unified=profile.kv_unified,
        cache_type_k=profile.cache_type_k,
        cache_type_v=profile.cache_type_v,
    )
    weights, weights_detail = target.weights, f"{target.id} ({target.source})"
    if profile.device == "cpu" and profile.no_mmap and target.tied_output and target.input_weights:
        # read into memory, the output layer's copy of tied embeddings is a tensor of its own (mapped, it is the
        # same pages); on a GPU that copy is the one on the device, and the input layer's is the host's
        weights += target.input_weights
        weights_detail += f" + {gb(target.input_weights)} tied output copy (--no-mmap on a CPU)"
    terms = [
        PlanTerm(label="target weights", bytes=weights, detail=weights_detail),
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
        host_terms=host_terms(profile, target, draft, ubatch, kv),
        host_available=host_available,
        host_available_from=host_available_from,
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


def host_terms(profile, target: ModelFacts, draft: ModelFacts | None, ubatch: int, target_kv: int) -> list[PlanTerm]:
    """Host RAM llama-server can take beyond its buffers, at most: the prompt cache (`--cache-ram`, 8 GiB unless
    set; tools/server/server-task.cpp evicts to stay under it), sliding-window context checkpoints
    (`--ctx-checkpoints`, 32 per slot unless set; each a copy of one slot's sliding-window KV cache: 1.26 GB at
    f16 for Gemma 4 31B), and on a GPU the weights that --no-mmap / --mlock keep in RAM: the tensors llama.cpp
    holds in host buffers (src/llama-model.cpp locks only those), with every layer on the GPU the token
    embeddings alone. A CPU profile's weights are among its device terms already. `target_kv`: the target's KV
    cache as the plan sized it (an unlimited prompt cache holds as much)."""
    terms = []
    cache_mib = CACHE_RAM_DEFAULT_MIB if profile.cache_ram is None else profile.cache_ram
    cache_lower = "lower --cache-ram (`cache_ram` in a profile; 0 turns the prompt cache off)"
    if cache_mib > 0:
        terms.append(
            PlanTerm(
                label="prompt cache",
                bytes=cache_mib * 1024**2,
                detail=f"--cache-ram {cache_mib} MiB",
                lower=cache_lower,
            )
        )
    elif cache_mib < 0:  # no size limit: the cache keeps prompt states of up to ctx-size tokens in all
        terms.append(
            PlanTerm(
                label="prompt cache",
                bytes=target_kv,
                detail=f"--cache-ram {cache_mib}: no size limit, ctx-size tokens of prompt states (at least)",
                lower=cache_lower,
            )
        )
    per_slot = CTX_CHECKPOINTS_DEFAULT if profile.ctx_checkpoints is None else profile.ctx_checkpoints
    if any(target.shape.swa_layers) and per_slot > 0:
        swa_only = target.shape.model_copy(
            update={"kv_heads": [h if s else 0 for h, s in zip(target.shape.kv_heads, target.shape.swa_layers)]}
        )
        # one checkpoint holds one slot's sequence: its sliding-window cells (window + ubatch) in every such layer
        slot_ctx = profile.ctx_size if profile.kv_unified else -(-profile.ctx_size // profile.parallel)
        one, _ = kv_cache_bytes(
            swa_only,
            slot_ctx,
            ubatch=ubatch,
            seqs=1,
            unified=False,
            cache_type_k=profile.cache_type_k,
            cache_type_v=profile.cache_type_v,
        )
        flag = "--ctx-checkpoints" if profile.ctx_checkpoints is not None else "the engine's default"
        terms.append(
            PlanTerm(
                label="context checkpoints",
                bytes=per_slot * profile.parallel * one,
                detail=f"{per_slot} per slot ({flag}) x {profile.parallel} slot(s) x {gb(one)} "
                "(a slot's sliding-window KV cache)",
                lower="lower --ctx-checkpoints (`ctx_checkpoints` in a profile)",
            )
        )
    if profile.device == "gpu" and (profile.mlock or profile.no_mmap):
        terms.append(_weights_in_ram(profile, target, draft))
    return terms


def _weights_in_ram(profile, target: ModelFacts, draft: ModelFacts | None) -> PlanTerm:
    """The weights --no-mmap (anonymous memory) or --mlock (pinned) keep in host RAM on a GPU profile: the token
    embeddings when every layer of each model is on the GPU, else (some layers on the CPU) the whole files."""
    flags = " ".join(f for f, on in (("--no-mmap", profile.no_mmap), ("--mlock", profile.mlock)) if on)
    label = "weights pinned (--mlock)" if profile.mlock else "weights in RAM (--no-mmap)"
    lower = "drop --mlock and --no-mmap (`mlock`, `no_mmap` = false in a profile)"
    placed = [(target, profile.gpu_layers)] + ([(draft, profile.draft_gpu_layers)] if draft else [])
    if all(_every_layer(layers, m.shape.layers) and m.input_weights is not None for m, layers in placed):
        pinned = sum(m.input_weights or 0 for m, _ in placed)
        return PlanTerm(
            label=label,
            bytes=pinned,
            detail=f"{flags}: the token embeddings, which llama.cpp keeps on the CPU with every layer on the GPU",
            lower=lower,
        )
    return PlanTerm(
        label=label,
        bytes=sum(m.weights for m, _ in placed),
        detail=f"{flags}: the files (not every layer is on the GPU)",
        lower=lower,
    )


def _every_layer(gpu_layers: str | None, layers: int) -> bool:
    """Whether -ngl puts every layer on the GPU: `all`, or a count at least the model's layers."""
    if gpu_layers is None:
        return False
    return gpu_layers == "all" or (gpu_layers.isdigit() and int(gpu_layers) >= layers)
