"""A model's memory-relevant shape (per-layer KV heads and head sizes, sliding window, vocabulary), read from
the GGUF header alone with array-valued keys kept (llama-cpp-python's metadata drops them, and Gemma 4 stores its
KV heads per layer). The catalog carries the same facts for files not yet downloaded.
"""

from __future__ import annotations

import struct
from pathlib import Path
from typing import Any

from pydantic import BaseModel, model_validator

from inference.errors import DflashError


class ShapeError(DflashError, ValueError):
    """The GGUF header lacks what a memory plan needs; the message names the file and the key."""


class ModelShape(BaseModel):
    arch: str
    layers: int
    embedding: int
    vocab: int
    kv_heads: list[int]  # per layer (0 on layers without their own KV cache)
    key_length: list[int]  # per layer
    value_length: list[int]  # per layer
    sliding_window: int = 0
    swa_layers: list[bool] = []  # per layer: True where attention is limited to the sliding window
    feed_forward: int = 0  # the widest layer's FFN size (0: not known)
    dflash_block_size: int = 0  # DFlash drafters: tokens drafted per block; they keep no KV cache of their own
    dflash_target_layers: int = 0  # ... and read this many of the target's hidden layers
    context_length: int = 0  # the trained context (`<arch>.context_length`); 0: not known

    @model_validator(mode="after")
    def _per_layer_lists(self) -> ModelShape:
        self.swa_layers = self.swa_layers or [False] * self.layers
        for name in ("kv_heads", "key_length", "value_length", "swa_layers"):
            if len(getattr(self, name)) != self.layers:
                raise ValueError(f"{name} has {len(getattr(self, name))} entries for {self.layers} layers")
        return self

    @property
    def is_dflash_drafter(self) -> bool:
        return self.dflash_block_size > 0

    @classmethod
    def from_gguf(cls, path: Path) -> ModelShape:
        """The shape from the header only: the key-value section at the start of the file, never the tensors."""
        return shape_from_metadata(read_metadata(path), str(path))


def read_metadata(path: Path) -> dict[str, object]:
    """The GGUF key-value section, arrays kept (string arrays, i.e. token lists, as their length only).

    Types and magic come from the `gguf` package; the walk is ours because `gguf.GGUFReader` parses every token
    string of the vocabulary into numpy parts (36 s for Qwen's 300k tokenizer entries here, against 1 s).
    """
    from gguf import GGUF_MAGIC

    try:
        with path.open("rb") as fh:
            magic, version = struct.unpack("<II", fh.read(8))
            if magic != GGUF_MAGIC or not 1 < version < 0xFFFF:
                raise ShapeError(f"{path} is not a readable GGUF file (bad magic or version)")
            _tensors, count = struct.unpack("<QQ", fh.read(16))
            meta = {}
            for _ in range(count):
                key = _string(fh)
                meta[key] = _value(fh, struct.unpack("<I", fh.read(4))[0])
            return meta
    except ShapeError:
        raise
    except (OSError, struct.error, ValueError, UnicodeDecodeError) as exc:
        raise ShapeError(f"{path} is not a readable GGUF file: {exc}") from None


def _scalar_formats() -> dict[int, str]:
    from gguf import GGUFValueType as T

    return {
        T.UINT8: "B",
        T.INT8: "b",
        T.UINT16: "H",
        T.INT16: "h",
        T.UINT32: "I",
        T.INT32: "i",
        T.FLOAT32: "f",
        T.BOOL: "?",
        T.UINT64: "Q",
        T.INT64: "q",
        T.FLOAT64: "d",
    }


def _string(fh) -> str:
    (length,) = struct.unpack("<Q", fh.read(8))
    return fh.read(length).decode("utf-8", errors="replace")


def _value(fh, kind: int) -> object:
    from gguf import GGUFValueType

    formats = _scalar_formats()
    if kind in formats:
        code = formats[kind]
        return struct.unpack("<" + code, fh.read(struct.calcsize(code)))[0]
    if kind == GGUFValueType.STRING:
        return _string(fh)
    if kind != GGUFValueType.ARRAY:
        raise ValueError(f"unknown GGUF value type {kind}")
    item, length = struct.unpack("<IQ", fh.read(12))
    if item in formats:
        code = formats[item]
        return list(struct.unpack(f"<{length}{code}", fh.read(length * struct.calcsize(code))))
    if item == GGUFValueType.STRING:  # token lists: skip the text, keep the count
        for _ in range(length):
            fh.seek(struct.unpack("<Q", fh.read(8))[0], 1)
        return length
    return [_value(fh, item) for _ in range(length)]


def shape_from_metadata(meta: dict[str, Any], where: str) -> ModelShape:
    """Per-layer values from scalars or arrays, with llama.cpp's defaults where a key is absent."""
    try:
        arch = str(meta["general.architecture"])
    except KeyError:
        raise ShapeError(f"{where}: no general.architecture key; not a model GGUF") from None

    def get(key: str, default: Any = None) -> Any:
        found = meta.get(f"{arch}.{key}", default)
        if found is None:
            raise ShapeError(f"{where}: the header has no {arch}.{key}, which the memory plan needs")
        return found

    layers = int(get("block_count"))
    embedding = int(get("embedding_length"))

    def per_layer(value: Any) -> list[int]:
        return [int(v) for v in value] if isinstance(value, list) else [int(value)] * layers

    heads = per_layer(get("attention.head_count"))
    kv_heads = per_layer(get("attention.head_count_kv", heads))
    key_length = per_layer(get("attention.key_length", [embedding // max(h, 1) for h in heads]))
    value_length = per_layer(get("attention.value_length", key_length))
    window = int(meta.get(f"{arch}.attention.sliding_window", 0) or 0)
    swa = _swa_layers(meta.get(f"{arch}.attention.sliding_window_pattern"), layers, window)
    key_swa = meta.get(f"{arch}.attention.key_length_swa")
    value_swa: Any = meta.get(f"{arch}.attention.value_length_swa", key_swa)
    if key_swa is not None:  # sliding-window layers have their own head sizes (Gemma 4: 256 vs 512)
        key_length = [int(key_swa) if s else k for k, s in zip(key_length, swa)]
        value_length = [int(value_swa) if s else v for v, s in zip(value_length, swa)]
    vocab = meta.get(f"{arch}.vocab_size") or meta.get("tokenizer.ggml.tokens") or 0
    # DFlash drafters: BeeLlama's `dflash-draft` keys (`<arch>.dflash.block_size`, `<arch>.dflash.target_layer_ids`,
    # its src/llama-arch.cpp), upstream's `dflash` ones (`dflash.block_size`, `dflash.target_layers`, src/models/dflash.cpp)
    block_size = meta.get(f"{arch}.dflash.block_size", meta.get(f"{arch}.block_size", 0))
    target_layers = meta.get(f"{arch}.dflash.target_layer_ids", meta.get(f"{arch}.target_layers", 0))
    return ModelShape(
        arch=arch,
        layers=layers,
        embedding=embedding,
        vocab=int(vocab),
        kv_heads=kv_heads,
        key_length=key_length,
        value_length=value_length,
        sliding_window=window,
        swa_layers=swa,
        feed_forward=max(per_layer(meta.get(f"{arch}.feed_forward_length", 0))),
        dflash_block_size=int(block_size or 0),
        dflash_target_layers=len(target_layers) if isinstance(target_layers, list) else int(target_layers),
        context_length=int(meta.get(f"{arch}.context_length", 0) or 0),
    )


def _swa_layers(pattern: object, layers: int, window: int) -> list[bool]:
    """`sliding_window_pattern` as one bool per layer, or as a period N (every N-th layer is global)."""
    if not window:
        return [False] * layers
    if isinstance(pattern, list):
        return [bool(p) for p in pattern]
    if isinstance(pattern, int) and pattern > 1:
        return [(i + 1) % pattern != 0 for i in range(layers)]
    return [True] * layers  # a window and no pattern: every layer slides (e.g. Mistral-style SWA)
