"""Synthetic GGUF files: the real model's header (architecture, every metadata key with arrays, a tokenizer that
loads, every tensor's name, type and shape) over zero weights written sparsely (a seek: megabytes on disk). An
engine allocates for such a file what it allocates for the real one and decodes a dense model at the same
speed; only what the weights say (draft acceptance, the text) differs.

Header facts come from the catalog (`inference.shapes.headers`); tokenizer arrays from the vocabulary files llama.cpp
ships for its tokenizer tests (models/ggml-vocab-*.gguf in the llama-cpp-python sdist that
`agent engine build --source pypi-sdist` uses), so nothing is downloaded once that sdist is here.
"""

from __future__ import annotations

import struct
from importlib import resources
from pathlib import Path
from typing import Any

from inference.errors import DflashError
from inference.models import ModelSpec, get_model
from inference.paths import cache_dir
from inference.shapes.headers import Header


class SynthError(DflashError, RuntimeError):
    """A synthetic file cannot be written; the message says why and what to do."""


def synthetic_dir() -> Path:
    return cache_dir() / "synthetic"


def default_path(spec: ModelSpec, layers: int | None = None) -> Path:
    stem = spec.filename.removesuffix(".gguf")
    return synthetic_dir() / (f"{stem}.synthetic" + (f".{layers}L" if layers else "") + ".gguf")


def header_of(spec: ModelSpec, layers: int | None = None) -> Header:
    """The catalog's header for `spec`; `layers` cuts a target to its first N layers (a drafter: pairs it with such
    a target)."""
    if spec.header is None:
        raise SynthError(f"the catalog has no header facts for {spec.id!r}, so no synthetic file can be written")
    if not layers:
        return spec.header()
    return spec.header(layers=layers) if spec.role == "target" else spec.header(target_layers=layers)


def write_synthetic(model_id: str, out: Path | None = None, layers: int | None = None) -> Path:
    """Write the synthetic GGUF of a catalog model; returns its path."""
    import numpy as np
    from gguf import GGML_QUANT_SIZES, GGMLQuantizationType, GGUFWriter

    spec = get_model(model_id)
    header = header_of(spec, layers)
    out = out or default_path(spec, layers)
    out.parent.mkdir(parents=True, exist_ok=True)
    vocab = read_vocab(header.vocab) if header.vocab else {}
    tmp = out.with_name(out.name + ".part")
    writer = GGUFWriter(tmp, header.arch)
    writer.kv_data[0].clear()  # general.architecture goes where the header puts it
    for key, kind, value in header.metadata:
        _add(writer, key, kind, _resolve(key, value, vocab, header))
    total = 0
    for t in header.tensors:
        qtype = GGMLQuantizationType[t.type]
        block, size = GGML_QUANT_SIZES[qtype]
        elements = 1
        for n in t.shape:
            elements *= n
        if elements % block:
            raise SynthError(f"{t.name}: {t.shape} is not a whole number of {t.type} blocks of {block}")
        nbytes = elements // block * size
        writer.add_tensor_info(t.name, list(reversed(t.shape)), np.dtype(np.float32), nbytes, raw_dtype=qtype)
        total += GGUFWriter.ggml_pad(nbytes, writer.data_alignment)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_ti_data_to_file()
    assert writer.fout is not None, "write_header_to_file opened it"
    fout = writer.fout[0]
    start = GGUFWriter.ggml_pad(fout.tell(), writer.data_alignment)
    fout.truncate(start + total)  # zeros, as a hole: nothing is written past the header
    writer.close()
    tmp.replace(out)
    return out


def _resolve(key: str, value: Any, vocab: dict[str, tuple[int, int, Any]], header: Header) -> Any:
    if value == "<vocab>":
        if key not in vocab:
            raise SynthError(f"llama.cpp's ggml-vocab-{header.vocab}.gguf has no {key}")
        items = list(vocab[key][2])
        if key in ("tokenizer.ggml.tokens", "tokenizer.ggml.token_type"):
            for token, (text, kind) in header.vocab_overrides.items():
                items[token] = text if key == "tokenizer.ggml.tokens" else kind
        return items
    if isinstance(value, str) and value.startswith("<template:"):
        name = value.removeprefix("<template:").removesuffix(">")
        return resources.files("inference").joinpath("templates", name).read_text()
    return value


def _add(writer, key: str, kind: str, value: Any) -> None:
    from gguf import GGUFValueType as T

    if isinstance(value, list) and kind == "str":  # tokenizer arrays: their element type from the vocab file
        first = value[0] if value else ""
        item = T.STRING if isinstance(first, str) else T.FLOAT32 if isinstance(first, float) else T.INT32
        writer.add_key_value(key, value, T.ARRAY, item)
        return
    kinds: dict[str, tuple[T, T | None]] = {
        "u32": (T.UINT32, None),
        "i32": (T.INT32, None),
        "f32": (T.FLOAT32, None),
        "bool": (T.BOOL, None),
        "str": (T.STRING, None),
        "arr_i32": (T.ARRAY, T.INT32),
        "arr_u32": (T.ARRAY, T.UINT32),
        "arr_bool": (T.ARRAY, T.BOOL),
    }
    vtype, sub = kinds[kind]
    writer.add_key_value(key, value, vtype, sub)


# ---------------------------------------------------------------- llama.cpp's vocabulary files


def vocab_file(name: str) -> Path:
    """models/ggml-vocab-NAME.gguf of the llama-cpp-python sdist's llama.cpp (pip's cache; fetched once)."""
    from inference.engines.engine import SDIST_VERSION, EngineBuildError, sdist_tree

    try:
        path = sdist_tree(SDIST_VERSION) / "models" / f"ggml-vocab-{name}.gguf"
    except EngineBuildError as exc:
        raise SynthError(f"the tokenizer comes from llama.cpp's ggml-vocab-{name}.gguf in the sdist: {exc}") from None
    if not path.is_file():
        raise SynthError(f"{path} is missing: llama-cpp-python {SDIST_VERSION}'s llama.cpp has no such vocabulary")
    return path


def read_vocab(name: str) -> dict[str, tuple[int, int, Any]]:
    """The tokenizer.* keys of a vocabulary file: key -> (value type, item type, value), strings kept."""
    return {k: v for k, v in read_kv(vocab_file(name)).items() if k.startswith("tokenizer.")}


def read_kv(path: Path) -> dict[str, tuple[int, int, Any]]:
    """Every key of a GGUF header with its value type, array item type (0 for scalars) and value, strings kept."""
    return read_header(path)[0]


def read_header(path: Path) -> tuple[dict[str, tuple[int, int, Any]], list[tuple[str, str, list[int]]]]:
    """(key -> (value type, item type or 0, value), [(tensor name, type, shape in ggml order)] in file order),
    from the header alone. A plain walk: 1-2 s for a 262k-token vocabulary, where gguf.GGUFReader takes 20 s."""
    from gguf import GGMLQuantizationType
    from gguf import GGUFValueType as T

    formats = {
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
    data = _header_bytes(path)
    tensor_count, count = struct.unpack_from("<QQ", data, 8)
    pos = 24

    def string() -> str:
        nonlocal pos
        (n,) = struct.unpack_from("<Q", data, pos)
        pos += 8 + n
        return data[pos - n : pos].decode("utf-8", errors="surrogateescape")

    def scalar(kind: int) -> Any:
        nonlocal pos
        if kind == T.STRING:
            return string()
        code = formats[T(kind)]
        (value,) = struct.unpack_from("<" + code, data, pos)
        pos += struct.calcsize(code)
        return value

    kv: dict[str, tuple[int, int, Any]] = {}
    for _ in range(count):
        key = string()
        (kind,) = struct.unpack_from("<I", data, pos)
        pos += 4
        if kind != T.ARRAY:
            kv[key] = (kind, 0, scalar(kind))
            continue
        item, n = struct.unpack_from("<IQ", data, pos)
        pos += 12
        if item in formats:
            code = formats[T(item)]
            values = list(struct.unpack_from(f"<{n}{code}", data, pos))
            pos += n * struct.calcsize(code)
        else:
            values = [scalar(item) for _ in range(n)]
        kv[key] = (kind, item, values)
    tensors = []
    for _ in range(tensor_count):
        name = string()
        (dims,) = struct.unpack_from("<I", data, pos)
        shape = list(struct.unpack_from(f"<{dims}Q", data, pos + 4))
        qtype, _offset = struct.unpack_from("<IQ", data, pos + 4 + 8 * dims)
        pos += 4 + 8 * dims + 12
        tensors.append((name, GGMLQuantizationType(qtype).name, shape))
    return kv, tensors


def _header_bytes(path: Path) -> bytes:
    """Enough of a big file to hold its key-value section (tokenizers are at most tens of megabytes)."""
    with path.open("rb") as fh:
        return fh.read(64 * 1024**2)
