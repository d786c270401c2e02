"""Every GGUF header fact of the catalog's models: metadata keys (with arrays) and each tensor's name, type and
shape, so that `inference.shapes.synth` can write a file whose header is the real one's without downloading it.

Sources, beside each builder below: the loaders in the llama.cpp tree of the llama-cpp-python 0.3.36 sdist
(`src/models/gemma4.cpp`, `src/models/dflash.cpp`, `src/llama-arch.cpp`, `src/llama-quant.cpp`,
`conversion/gemma.py`), BeeLlama.cpp's `dflash-draft` loader (Anbeeld/beellama.cpp `src/llama-model.cpp`,
`src/llama-arch.cpp`), the published GGUF headers and model cards. Tokenizers are not carried here: they come from
the vocabulary files llama.cpp ships for its tokenizer tests (`models/ggml-vocab-*.gguf`), plus the few tokens and
keys a published file has beyond them.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel

ValueKind = Literal["u32", "i32", "f32", "bool", "str", "arr_i32", "arr_bool", "arr_u32"]


class Tensor(BaseModel):
    name: str
    type: str  # gguf.GGMLQuantizationType name: F32, Q4_K, ...
    shape: list[int]  # ggml order (ne0 first), as llama.cpp's create_tensor names it


class Header(BaseModel):
    """One GGUF header: metadata in file order (key, kind, value) and tensors in file order."""

    arch: str
    metadata: list[tuple[str, ValueKind, Any]]
    vocab: str | None = None  # llama.cpp's models/ggml-vocab-NAME.gguf: the tokenizer arrays
    vocab_overrides: dict[int, tuple[str, int]] = {}  # token id -> (text, token type) where the file differs
    tensors: list[Tensor]

    def value(self, key: str) -> Any:
        return next(v for k, _, v in self.metadata if k == key)


# ---------------------------------------------------------------- llama-quant.cpp's type choices


def use_more_bits(i: int, n: int) -> bool:
    """llama-quant.cpp: the layers Q4_K_M/Q5_K_M give more bits (first and last eighth, every third between)."""
    return i < n // 8 or i >= 7 * n // 8 or (i - n // 8) % 3 == 2


def file_order(layers: int) -> list[int]:
    """Layer indices in the order converters write them when the checkpoint's names sort as text (0, 1, 10, 11,
    ..., 19, 2, 20, ...): Qwen's own GGUFs. llama-quant counts attn_v/ffn_down in this order, not by index."""
    return sorted(range(layers), key=str)


# ---------------------------------------------------------------- Qwen2.5-Coder (arch qwen2)

# The published GGUF header of Qwen/Qwen2.5-Coder-1.5B-Instruct-GGUF q4_k_m (read from the cached file) and
# Qwen2.5-Coder's tokenizer_config.json: the special tokens Qwen2.5 added over Qwen2's vocabulary (which
# llama.cpp's models/ggml-vocab-qwen2.gguf holds as [PAD] placeholders). Type 3 = CONTROL, 4 = USER_DEFINED, 5 = UNUSED.
QWEN25_ADDED_TOKENS: dict[int, tuple[str, int]] = {
    151646: ("<|object_ref_start|>", 3),
    151647: ("<|object_ref_end|>", 3),
    151648: ("<|box_start|>", 3),
    151649: ("<|box_end|>", 3),
    151650: ("<|quad_start|>", 3),
    151651: ("<|quad_end|>", 3),
    151652: ("<|vision_start|>", 3),
    151653: ("<|vision_end|>", 3),
    151654: ("<|vision_pad|>", 3),
    151655: ("<|image_pad|>", 3),
    151656: ("<|video_pad|>", 3),
    151657: ("<tool_call>", 4),
    151658: ("</tool_call>", 4),
    151659: ("<|fim_prefix|>", 3),
    151660: ("<|fim_middle|>", 3),
    151661: ("<|fim_suffix|>", 3),
    151662: ("<|fim_pad|>", 3),
    151663: ("<|repo_name|>", 3),
    151664: ("<|file_sep|>", 3),
} | {i: (f"[PAD{i}]", 5) for i in range(151665, 151936)}  # the padding rows of the embedding: UNUSED


def k_fallback(qtype: str, columns: int) -> str:
    """llama-quant.cpp: a k-quant needs rows of whole 256-blocks; narrower rows fall back (Q4_K -> Q5_0, ...)."""
    if columns % 256 == 0:
        return qtype
    return {"Q4_K": "Q5_0", "Q5_K": "Q5_1", "Q6_K": "Q8_0"}.get(qtype, qtype)


def qwen2_header(
    *, size_label: str, layers: int, embd: int, ff: int, heads: int, kv_heads: int, tied: bool = False
) -> Header:
    """Qwen2.5-Coder Instruct Q4_K_M as Qwen publishes it (llama.cpp `src/models/qwen2.cpp` loads: q/k/v with
    biases; `tied`: no output.weight, the token embedding serves). Types: Q4_K_M's rule (`src/llama-quant.cpp`:
    attn_v and ffn_down Q6_K where use_more_bits, counted in file order; the output, or a tied token embedding,
    Q6_K (Q8_0 when its rows are not whole 256-blocks); the rest Q4_K, with the k-quant fallback for such rows;
    norms and biases F32). The 1.5B's header equals the published file's (tests/inference/shapes/test_synth.py)."""
    head = embd // heads
    kv = kv_heads * head
    more = {layer for k, layer in enumerate(file_order(layers)) if use_more_bits(k, layers)}
    q4 = k_fallback("Q4_K", embd)
    out = "Q6_K" if embd % 256 == 0 else "Q8_0"
    tensors = [] if tied else [Tensor(name="output.weight", type=out, shape=[embd, 151936])]
    tensors.append(Tensor(name="token_embd.weight", type=out if tied else q4, shape=[embd, 151936]))
    for i in file_order(layers):
        wide = k_fallback("Q6_K" if i in more else "Q4_K", embd)
        down = k_fallback("Q6_K" if i in more else "Q4_K", ff)
        b = f"blk.{i}."
        tensors += [
            Tensor(name=b + "attn_norm.weight", type="F32", shape=[embd]),
            Tensor(name=b + "ffn_down.weight", type=down, shape=[ff, embd]),
            Tensor(name=b + "ffn_gate.weight", type=q4, shape=[embd, ff]),
            Tensor(name=b + "ffn_up.weight", type=q4, shape=[embd, ff]),
            Tensor(name=b + "ffn_norm.weight", type="F32", shape=[embd]),
            Tensor(name=b + "attn_k.bias", type="F32", shape=[kv]),
            Tensor(name=b + "attn_k.weight", type=q4, shape=[embd, kv]),
            Tensor(name=b + "attn_output.weight", type=q4, shape=[embd, embd]),
            Tensor(name=b + "attn_q.bias", type="F32", shape=[embd]),
            Tensor(name=b + "attn_q.weight", type=q4, shape=[embd, embd]),
            Tensor(name=b + "attn_v.bias", type="F32", shape=[kv]),
            Tensor(name=b + "attn_v.weight", type=wide, shape=[embd, kv]),
        ]
    tensors.append(Tensor(name="output_norm.weight", type="F32", shape=[embd]))
    metadata: list[tuple[str, ValueKind, Any]] = [
        ("general.architecture", "str", "qwen2"),
        ("general.type", "str", "model"),
        ("general.name", "str", f"Qwen2.5 Coder {size_label} Instruct GGUF"),
        ("general.finetune", "str", "Instruct-GGUF"),
        ("general.basename", "str", "Qwen2.5-Coder"),
        ("general.size_label", "str", size_label),
        ("qwen2.block_count", "u32", layers),
        ("qwen2.context_length", "u32", 32768),
        ("qwen2.embedding_length", "u32", embd),
        ("qwen2.feed_forward_length", "u32", ff),
        ("qwen2.attention.head_count", "u32", heads),
        ("qwen2.attention.head_count_kv", "u32", kv_heads),
        ("qwen2.rope.freq_base", "f32", 1000000.0),
        ("qwen2.attention.layer_norm_rms_epsilon", "f32", 1e-06),
        ("general.file_type", "u32", 15),  # LLAMA_FTYPE_MOSTLY_Q4_K_M
        ("tokenizer.ggml.model", "str", "gpt2"),
        ("tokenizer.ggml.pre", "str", "qwen2"),
        ("tokenizer.ggml.tokens", "str", "<vocab>"),
        ("tokenizer.ggml.token_type", "str", "<vocab>"),
        ("tokenizer.ggml.merges", "str", "<vocab>"),
        ("tokenizer.ggml.eos_token_id", "u32", 151645),
        ("tokenizer.ggml.padding_token_id", "u32", 151643),
        ("tokenizer.ggml.bos_token_id", "u32", 151643),
        ("tokenizer.ggml.add_bos_token", "bool", False),
        ("tokenizer.chat_template", "str", "<template:qwen2.5-coder.jinja>"),
        ("general.quantization_version", "u32", 2),
    ]
    return Header(arch="qwen2", metadata=metadata, vocab="qwen2", vocab_overrides=QWEN25_ADDED_TOKENS, tensors=tensors)


# ---------------------------------------------------------------- Gemma 4 31B (arch gemma4)

GEMMA4_31B_LAYERS = 60
GEMMA4_31B_EMBD = 5376  # model cards (mlboydaisuke/Gemma-4-31B-CoreAI: hidden 5376, 32 heads, vocab 262144)
GEMMA4_31B_FF = 21504  # 4 x hidden, as gemma-4-12B's 15360 = 4 x 3840; gives the card's 30.7B parameters
GEMMA4_VOCAB = 262144


def gemma4_swa(layers: int) -> list[bool]:
    """5 sliding-window layers : 1 global (`layer_types` of the config; every 6th layer global)."""
    return [(i + 1) % 6 != 0 for i in range(layers)]


def gemma4_31b_header(layers: int = GEMMA4_31B_LAYERS) -> Header:
    """Gemma 4 31B instruct Q4_K_S. Keys: `conversion/gemma.py` Gemma4Model (per-layer head_count_kv array,
    sliding_window_pattern bool array, key/value_length 512 global and *_swa 256, rope dims 512/256,
    embedding_length_per_layer_input 0, shared_kv_layers 0) with the values of the 31B config (60 layers, hidden
    5376, 32 heads, 16 KV heads x 256 on sliding layers, 4 x 512 on global ones, window 1024, softcap 30, rope
    1e6 / 1e4; tokenizer keys as llama.cpp's ggml-vocab-gemma-4.gguf). Tensors: `src/models/gemma4.cpp`; global
    layers have no attn_v (attention_k_eq_v: V is K), one rope_freqs tensor (proportional RoPE on global layers),
    a layer_output_scale per layer; no output.weight (tied embeddings). The published Q4_K_S of this model has
    833 tensors (230 attention, 181 FFN + embedding, 422 F32: CompressedGemma/gemma-4-31B-it-compressed's
    table), as here. Types: Q4_K_S's rule (`src/llama-quant.cpp`: attn_v Q5_K on the first 4, ffn_down Q5_K on
    the first eighth of layers, the tied token_embd as the output tensor: Q6_K, the rest Q4_K)."""
    embd, ff, swa = GEMMA4_31B_EMBD, GEMMA4_31B_FF, gemma4_swa(layers)
    heads = 32
    kv_heads = [16 if s else 4 for s in swa]
    tensors = [
        Tensor(name="token_embd.weight", type="Q6_K", shape=[embd, GEMMA4_VOCAB]),
        Tensor(name="rope_freqs.weight", type="F32", shape=[256]),
        Tensor(name="output_norm.weight", type="F32", shape=[embd]),
    ]
    wv = 0
    for i in range(layers):
        head = 256 if swa[i] else 512
        kv = kv_heads[i] * head
        b = f"blk.{i}."
        tensors += [
            Tensor(name=b + "attn_norm.weight", type="F32", shape=[embd]),
            Tensor(name=b + "attn_q.weight", type="Q4_K", shape=[embd, heads * head]),
            Tensor(name=b + "attn_k.weight", type="Q4_K", shape=[embd, kv]),
        ]
        if swa[i]:
            tensors.append(Tensor(name=b + "attn_v.weight", type="Q5_K" if wv < 4 else "Q4_K", shape=[embd, kv]))
            wv += 1
        tensors += [
            Tensor(name=b + "attn_output.weight", type="Q4_K", shape=[heads * head, embd]),
            Tensor(name=b + "attn_q_norm.weight", type="F32", shape=[head]),
            Tensor(name=b + "attn_k_norm.weight", type="F32", shape=[head]),
            Tensor(name=b + "post_attention_norm.weight", type="F32", shape=[embd]),
            Tensor(name=b + "layer_output_scale.weight", type="F32", shape=[1]),
            Tensor(name=b + "ffn_norm.weight", type="F32", shape=[embd]),
            Tensor(name=b + "ffn_gate.weight", type="Q4_K", shape=[embd, ff]),
            Tensor(name=b + "ffn_up.weight", type="Q4_K", shape=[embd, ff]),
            Tensor(name=b + "ffn_down.weight", type="Q5_K" if i < layers // 8 else "Q4_K", shape=[ff, embd]),
            Tensor(name=b + "post_ffw_norm.weight", type="F32", shape=[embd]),
        ]
    metadata: list[tuple[str, ValueKind, Any]] = [
        ("general.architecture", "str", "gemma4"),
        ("general.type", "str", "model"),
        ("general.name", "str", "Gemma-4-31B-It"),
        ("general.size_label", "str", "31B"),
        ("gemma4.block_count", "u32", layers),
        ("gemma4.context_length", "u32", 262144),
        ("gemma4.embedding_length", "u32", embd),
        ("gemma4.feed_forward_length", "u32", ff),
        ("gemma4.attention.head_count", "u32", heads),
        ("gemma4.attention.head_count_kv", "arr_i32", kv_heads),
        ("gemma4.rope.freq_base", "f32", 1000000.0),
        ("gemma4.rope.freq_base_swa", "f32", 10000.0),
        ("gemma4.attention.layer_norm_rms_epsilon", "f32", 1e-06),
        ("gemma4.attention.key_length", "u32", 512),
        ("gemma4.attention.value_length", "u32", 512),
        ("general.file_type", "u32", 14),  # LLAMA_FTYPE_MOSTLY_Q4_K_S
        ("gemma4.final_logit_softcapping", "f32", 30.0),
        ("gemma4.attention.sliding_window", "u32", 1024),
        ("gemma4.attention.shared_kv_layers", "u32", 0),
        ("gemma4.embedding_length_per_layer_input", "u32", 0),
        ("gemma4.attention.sliding_window_pattern", "arr_bool", swa),
        ("gemma4.attention.key_length_swa", "u32", 256),
        ("gemma4.attention.value_length_swa", "u32", 256),
        ("gemma4.rope.dimension_count", "u32", 512),
        ("gemma4.rope.dimension_count_swa", "u32", 256),
        ("general.quantization_version", "u32", 2),
        ("tokenizer.ggml.model", "str", "gemma4"),
        ("tokenizer.ggml.tokens", "str", "<vocab>"),
        ("tokenizer.ggml.scores", "str", "<vocab>"),
        ("tokenizer.ggml.token_type", "str", "<vocab>"),
        ("tokenizer.ggml.merges", "str", "<vocab>"),
        ("tokenizer.ggml.bos_token_id", "u32", 2),
        ("tokenizer.ggml.eos_token_id", "u32", 106),  # <turn|>: the instruct model's end of turn
        ("tokenizer.ggml.unknown_token_id", "u32", 3),
        ("tokenizer.ggml.padding_token_id", "u32", 0),
        ("tokenizer.ggml.add_bos_token", "bool", True),
        ("tokenizer.ggml.add_space_prefix", "bool", False),
    ]
    return Header(arch="gemma4", metadata=metadata, vocab="gemma-4", tensors=tensors)


# ---------------------------------------------------------------- Gemma 4 31B DFlash drafters

# z-lab/gemma-4-31B-it-DFlash (as described by Lucebox/gemma-4-31B-it-DFlash-GGUF's card): 5 layers, hidden 5376,
# 64 heads / 8 KV heads of 128, FFN 10752, vocabulary 262144 shared with the target (no embedding or lm head of its
# own), blocks of 16 tokens, hidden states of target layers [1, 12, 23, 35, 46, 57] (of 60), mask token 4.
DRAFT_LAYERS = 5
DRAFT_HEADS, DRAFT_KV_HEADS, DRAFT_HEAD = 64, 8, 128
DRAFT_FF = 10752
DRAFT_BLOCK = 16
DRAFT_TARGET_LAYERS = [1, 12, 23, 35, 46, 57]


def draft_target_layers(target_layers: int) -> list[int]:
    """The drafter's target layer ids for a target cut to `target_layers` (scaled alike; the real 60 unchanged)."""
    if target_layers >= GEMMA4_31B_LAYERS:
        return list(DRAFT_TARGET_LAYERS)
    return sorted({min(target_layers - 2, round(i * target_layers / GEMMA4_31B_LAYERS)) for i in DRAFT_TARGET_LAYERS})


def _draft_layer_tensors(prefix_norms: list[str], quant: str, wide: str, i: int) -> list[Tensor]:
    embd, q, kv = GEMMA4_31B_EMBD, DRAFT_HEADS * DRAFT_HEAD, DRAFT_KV_HEADS * DRAFT_HEAD
    b = f"blk.{i}."
    more = use_more_bits(i, DRAFT_LAYERS)
    return [Tensor(name=b + n + ".weight", type="F32", shape=[embd]) for n in prefix_norms] + [
        Tensor(name=b + "attn_q.weight", type=quant, shape=[embd, q]),
        Tensor(name=b + "attn_k.weight", type=quant, shape=[embd, kv]),
        Tensor(name=b + "attn_v.weight", type=wide if more else quant, shape=[embd, kv]),
        Tensor(name=b + "attn_output.weight", type=quant, shape=[q, embd]),
        Tensor(name=b + "attn_q_norm.weight", type="F32", shape=[DRAFT_HEAD]),
        Tensor(name=b + "attn_k_norm.weight", type="F32", shape=[DRAFT_HEAD]),
        Tensor(name=b + "ffn_gate.weight", type=quant, shape=[embd, DRAFT_FF]),
        Tensor(name=b + "ffn_up.weight", type=quant, shape=[embd, DRAFT_FF]),
        Tensor(name=b + "ffn_down.weight", type=wide if more else quant, shape=[DRAFT_FF, embd]),
    ]


def _draft_keys(arch: str, prefix: str, target_layers: int) -> list[tuple[str, ValueKind, Any]]:
    return [
        ("general.architecture", "str", arch),
        ("general.type", "str", "model"),
        ("general.name", "str", "Gemma 4 31B It DFlash"),
        (f"{arch}.block_count", "u32", DRAFT_LAYERS),
        (f"{arch}.context_length", "u32", 262144),
        (f"{arch}.embedding_length", "u32", GEMMA4_31B_EMBD),
        (f"{arch}.feed_forward_length", "u32", DRAFT_FF),
        (f"{arch}.attention.head_count", "u32", DRAFT_HEADS),
        (f"{arch}.attention.head_count_kv", "u32", DRAFT_KV_HEADS),
        (f"{arch}.attention.key_length", "u32", DRAFT_HEAD),
        (f"{arch}.attention.value_length", "u32", DRAFT_HEAD),
        (f"{arch}.rope.freq_base", "f32", 1000000.0),
        (f"{arch}.attention.layer_norm_rms_epsilon", "f32", 1e-06),
        (f"{prefix}block_size", "u32", DRAFT_BLOCK),
    ]


def _tokenizer_keys(mask: bool = False) -> list[tuple[str, ValueKind, Any]]:
    """The target's tokenizer keys; upstream's drafter adds its mask token (`tokenizer.ggml.mask_token_id`,
    read by common/speculative.cpp: the token drafted positions start from)."""
    keys: list[tuple[str, ValueKind, Any]] = [
        ("tokenizer.ggml.model", "str", "gemma4"),
        ("tokenizer.ggml.tokens", "str", "<vocab>"),
        ("tokenizer.ggml.scores", "str", "<vocab>"),
        ("tokenizer.ggml.token_type", "str", "<vocab>"),
        ("tokenizer.ggml.merges", "str", "<vocab>"),
        ("tokenizer.ggml.bos_token_id", "u32", 2),
        ("tokenizer.ggml.eos_token_id", "u32", 106),
        ("tokenizer.ggml.unknown_token_id", "u32", 3),
        ("tokenizer.ggml.padding_token_id", "u32", 0),
        ("tokenizer.ggml.add_bos_token", "bool", True),
        ("tokenizer.ggml.add_space_prefix", "bool", False),
    ]
    return keys + ([("tokenizer.ggml.mask_token_id", "u32", 4)] if mask else [])


def dflash_draft_header(target_layers: int = GEMMA4_31B_LAYERS) -> Header:
    """BeeLlama v0.2's `dflash-draft` (Anbeeld/gemma-4-31B-it-DFlash-GGUF, Q5_K_M, about 1.05 GB). Keys and tensors:
    BeeLlama `src/llama-arch.cpp` (`%s.dflash.block_size`, `%s.dflash.mask_token_id`, `%s.dflash.target_layer_ids`,
    `%s.dflash.n_target_features`) and `src/llama-model.cpp` LLM_ARCH_DFLASH_DRAFT (dflash_fc {n_target_features,
    n_embd}, dflash_hidden_norm, per layer attn_norm + attn_post_norm, q/k/v/o, q/k norms, gate/up/down; the token
    embedding and output are the target's, not in the file). Types: Q5_K_M's rule (attn_v/ffn_down Q6_K where
    use_more_bits, else Q5_K)."""
    arch, ids = "dflash-draft", draft_target_layers(target_layers)
    metadata = (
        _draft_keys(arch, f"{arch}.dflash.", target_layers)
        + [
            (f"{arch}.dflash.mask_token_id", "u32", 4),
            (f"{arch}.dflash.target_layer_ids", "arr_u32", ids),
            (f"{arch}.dflash.n_target_features", "u32", len(ids) * GEMMA4_31B_EMBD),
            ("general.file_type", "u32", 17),  # LLAMA_FTYPE_MOSTLY_Q5_K_M
            ("general.quantization_version", "u32", 2),
        ]
        + _tokenizer_keys()
    )
    tensors = [
        Tensor(name="output_norm.weight", type="F32", shape=[GEMMA4_31B_EMBD]),
        Tensor(name="dflash_fc.weight", type="Q5_K", shape=[len(ids) * GEMMA4_31B_EMBD, GEMMA4_31B_EMBD]),
        Tensor(name="dflash_hidden_norm.weight", type="F32", shape=[GEMMA4_31B_EMBD]),
    ]
    for i in range(DRAFT_LAYERS):
        tensors += _draft_layer_tensors(["attn_norm", "post_attention_norm"], "Q5_K", "Q6_K", i)
    return Header(arch=arch, metadata=metadata, vocab="gemma-4", tensors=tensors)


def dflash_upstream_header(target_layers: int = GEMMA4_31B_LAYERS) -> Header:
    """The same drafter in upstream llama.cpp's format (arch `dflash`, PR #22105; what BeeLlama >= v0.4's
    `scripts/convert-dflash-draft-to-upstream.py` writes). Keys: `src/models/dflash.cpp` (`dflash.block_size`,
    `dflash.target_layers` array, required; hidden activation gelu_pytorch_tanh and softcap 30 as Gemma's).
    `conversion/qwen.py` DFlashModel writes the target layer ids one higher than the checkpoint's (hidden states
    after the layer) and the mask token id from its dflash_config.
    `conversion/qwen.py` DFlashModel writes the checkpoint's target layer ids + 1 and its mask token id.
    Tensors: fc {n_target_layers x n_embd, n_embd}, enc.output_norm (after fc), output_norm, per layer attn_norm,
    q/k/v/o, q/k norms, ffn_norm, gate/up/down; no token_embd/output: full-vocabulary drafters use the target's."""
    arch, ids = "dflash", [i + 1 for i in draft_target_layers(target_layers)]
    metadata = (
        _draft_keys(arch, f"{arch}.", target_layers)
        + [
            (f"{arch}.target_layers", "arr_i32", ids),
            (f"{arch}.hidden_activation", "str", "gelu_pytorch_tanh"),
            (f"{arch}.final_logit_softcapping", "f32", 30.0),
            ("general.file_type", "u32", 17),
            ("general.quantization_version", "u32", 2),
        ]
        + _tokenizer_keys(mask=True)
    )
    tensors = [
        Tensor(name="fc.weight", type="Q5_K", shape=[len(ids) * GEMMA4_31B_EMBD, GEMMA4_31B_EMBD]),
        Tensor(name="enc.output_norm.weight", type="F32", shape=[GEMMA4_31B_EMBD]),
        Tensor(name="output_norm.weight", type="F32", shape=[GEMMA4_31B_EMBD]),
    ]
    for i in range(DRAFT_LAYERS):
        tensors += _draft_layer_tensors(["attn_norm", "ffn_norm"], "Q5_K", "Q6_K", i)
    return Header(arch=arch, metadata=metadata, vocab="gemma-4", tensors=tensors)
