"""The pieces every memory plan is made of: a term (what is allocated, how many bytes, why), a model's facts (from
its GGUF header when cached, else the catalog: never a download), KV cache and compute sizes as llama.cpp
allocates them, and how much memory the device has."""

from __future__ import annotations

import math
import re
from pathlib import Path
from typing import Literal

from pydantic import BaseModel

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
    lower: str = ""  # how a user lowers this term (host terms: the flag and the profile field)


class ModelFacts(BaseModel):
    """What the plan knows about one model, and where it learned it."""

    id: str
    shape: ModelShape
    weights: int
    source: str  # "file PATH" or "catalog"
    # bytes of the tensors llama.cpp keeps on the CPU even with every layer on the GPU (the input layer: token
    # embeddings), from the catalog's header facts; None where the catalog has no tensor list
    input_weights: int | None = None
    tied_output: bool = False  # no output.weight: the token embeddings serve as the output layer too


class MemoryPlan(BaseModel):
    profile: str
    device: Literal["gpu", "cpu"]
    terms: list[PlanTerm]
    available: int | None  # None: unknown (no GPU here and no --gpu-memory)
    available_from: str
    advice: str = ""  # what to do when it does not fit (default: llama-server's knobs)
    host_terms: list[PlanTerm] = []  # host RAM beyond the device's terms: prompt cache, checkpoints, pinned weights
    host_available: int | None = None  # RAM the host side is checked against; None: not checked
    host_available_from: str = ""

    @property
    def total(self) -> int:
        return sum(t.bytes for t in self.terms)

    @property
    def host_total(self) -> int:
        """Host RAM at most: the host terms, and the device's terms too when the device is the CPU."""
        return sum(t.bytes for t in self.host_terms) + (self.total if self.device == "cpu" else 0)

    @property
    def fits_device(self) -> bool:
        return self.available is not None and self.total <= self.available

    @property
    def fits_host(self) -> bool:
        return self.host_available is None or self.host_total <= self.host_available

    @property
    def fits(self) -> bool:
        return self.fits_device and self.fits_host

    def verdict(self) -> str:
        """One line: fits (with the slack) or not, and why."""
        if self.available is None:
            return f"unknown: {self.available_from}; pass --gpu-memory SIZE (e.g. 24GiB) to plan for a card"
        if self.fits_device and not self.fits_host:
            return self.host_verdict()
        if self.fits:
            host = (
                f"; host RAM at most {gb(self.host_total)} of {gb(self.host_available)} ({self.host_available_from})"
                if self.host_available is not None and self.host_terms
                else ""
            )
            return (
                f"fits: {gb(self.total)} of {gb(self.available)} ({self.available_from}), "
                f"{gb(self.available - self.total)} to spare{host}"
            )
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

    def host_verdict(self) -> str:
        """Why the host side does not fit, and the flags that lower its largest terms."""
        available = self.host_available or 0
        what = "the host terms and the CPU's" if self.device == "cpu" else "the host terms"
        fixes = [t.lower for t in sorted(self.host_terms, key=lambda t: -t.bytes) if t.lower and t.bytes][:2]
        fix = " or ".join(fixes) if fixes else "lower ctx_size or use a smaller model"
        return (
            f"does not fit host RAM: {what} need up to {gb(self.host_total)}, this machine has {gb(available)} "
            f"({self.host_available_from}), short by {gb(self.host_total - available)}; {fix}"
        )

    def render(self) -> str:
        width = max(len(t.label) for t in self.terms + self.host_terms)
        lines = [f"memory plan for {self.profile} ({self.device}):"]
        lines += [f"  {t.label:<{width}}  {gb(t.bytes):>9}  {t.detail}" for t in self.terms]
        lines.append(f"  {'total':<{width}}  {gb(self.total):>9}")
        if self.host_terms:
            lines.append("host RAM at most, beyond the above (prompt cache and checkpoints fill up over a session):")
            lines += [f"  {t.label:<{width}}  {gb(t.bytes):>9}  {t.detail}" for t in self.host_terms]
        lines.append(self.verdict())
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


def model_facts(model_id: str, path: Path | None = None) -> ModelFacts:
    """From the file's GGUF header when it is here (given or cached), else from the catalog: never a download."""
    from inference.fetch import cached_model
    from inference.models import get_model
    from inference.profiles import ProfileError
    from inference.shapes.shape import ShapeError

    spec = get_model(model_id)
    path = path or cached_model(spec)
    input_weights, tied_output = embedding_facts(spec)
    try:
        if path is not None and path.is_file():
            return ModelFacts(
                id=model_id,
                shape=ModelShape.from_gguf(path),
                weights=path.stat().st_size,
                source=f"header of {path}",
                input_weights=input_weights,
                tied_output=tied_output,
            )
    except ShapeError as exc:
        raise ProfileError(str(exc)) from None
    if spec.shape is None:
        raise ProfileError(
            f"the catalog has no layer facts for {model_id!r}; download it first "
            f"(`agent models pull {model_id}`) so its GGUF header can be read"
        )
    size = next((s.size for s in spec.sources if getattr(s, "size", None)), None) or spec.approx_size
    return ModelFacts(
        id=model_id,
        shape=spec.shape,
        weights=size,
        source="catalog facts; not downloaded",
        input_weights=input_weights,
        tied_output=tied_output,
    )


def embedding_facts(spec) -> tuple[int | None, bool]:
    """From the catalog's header facts (read once): the bytes of the token embeddings
    (`token_embd.weight` at its type; 0 for a drafter that has none), which llama.cpp keeps on the CPU whatever
    -ngl says (src/llama-model.cpp, `dev_input` is the CPU), None with no tensor list; and whether there is no
    `output.weight` (tied: the token embeddings are the output layer too)."""
    from gguf import GGML_QUANT_SIZES, GGMLQuantizationType

    if spec.header is None:
        return None, False
    tensors = spec.header().tensors
    total = 0
    for tensor in tensors:
        if tensor.name == "token_embd.weight":
            block, size = GGML_QUANT_SIZES[GGMLQuantizationType[tensor.type]]
            total += math.prod(tensor.shape) // block * size
    return total, all(t.name != "output.weight" for t in tensors)


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


def host_memory() -> tuple[int, str]:
    """RAM the host side of a plan is checked against: what this machine has available now."""
    from inference.hardware import ram_available

    return ram_available(), "available RAM"


CONTEXT_CAP = 262144  # where the search stops when the model's trained context is not known
