"""What this machine has (GPU, VRAM, cores, RAM) and whether a profile's models fit in it, before launch."""

from __future__ import annotations

import os
from contextlib import contextmanager
import shutil
import subprocess
from pathlib import Path

import psutil
from pydantic import BaseModel

# bytes per element of each KV cache type (block formats include their scales)
CACHE_TYPE_BYTES = {"f32": 4.0, "f16": 2.0, "bf16": 2.0, "q8_0": 34 / 32, "q5_1": 24 / 32, "q5_0": 22 / 32,
                    "q4_1": 20 / 32, "q4_0": 18 / 32, "iq4_nl": 18 / 32}
OVERHEAD = 512 * 1024**2  # compute buffers and the like


class Gpu(BaseModel):
    name: str
    memory_total: int
    memory_free: int
    compute_cap: str


class Hardware(BaseModel):
    cores: int
    ram_total: int
    ram_available: int
    gpus: list[Gpu]
    nvcc: str | None

    @classmethod
    def detect(cls) -> "Hardware":
        memory = psutil.virtual_memory()
        return cls(cores=os.cpu_count() or 1, ram_total=memory.total, ram_available=memory.available,
                   gpus=_nvidia_gpus(), nvcc=_nvcc_version())


def _nvidia_gpus() -> list[Gpu]:
    if not shutil.which("nvidia-smi"):
        return []
    try:
        out = subprocess.run(
            ["nvidia-smi", "--query-gpu=name,memory.total,memory.free,compute_cap", "--format=csv,noheader,nounits"],
            capture_output=True, text=True, timeout=20).stdout
    except (OSError, subprocess.TimeoutExpired):
        return []
    gpus = []
    for line in out.strip().splitlines():
        name, total, free, cap = [part.strip() for part in line.split(",")]
        gpus.append(Gpu(name=name, memory_total=int(total) * 1024**2, memory_free=int(free) * 1024**2, compute_cap=cap))
    return gpus


def _nvcc_version() -> str | None:
    if not shutil.which("nvcc"):
        return None
    out = subprocess.run(["nvcc", "--version"], capture_output=True, text=True).stdout
    return next((ln.strip() for ln in out.splitlines() if "release" in ln), "unknown")


def kv_bytes_per_token(model_path: Path, cache_type_k: str | None, cache_type_v: str | None) -> float | None:
    """From the GGUF metadata: layers x KV heads x head size x (K bytes + V bytes). None if unreadable."""
    try:
        from llama_cpp import Llama

        with _stderr_silenced():  # llama.cpp logs context warnings straight to fd 2
            meta = Llama(model_path=str(model_path), vocab_only=True, verbose=False).metadata
        arch = meta["general.architecture"]
        layers = int(meta[f"{arch}.block_count"])
        heads = int(meta[f"{arch}.attention.head_count"])
        kv_heads = int(meta.get(f"{arch}.attention.head_count_kv", heads))
        head_size = int(meta.get(f"{arch}.attention.key_length", int(meta[f"{arch}.embedding_length"]) // heads))
    except (KeyError, ValueError, RuntimeError, OSError):
        return None
    per_element = CACHE_TYPE_BYTES.get(cache_type_k or "f16", 2.0) + CACHE_TYPE_BYTES.get(cache_type_v or "f16", 2.0)
    return layers * kv_heads * head_size * per_element


@contextmanager
def _stderr_silenced():
    saved = os.dup(2)
    with open(os.devnull, "w") as null:
        os.dup2(null.fileno(), 2)
        try:
            yield
        finally:
            os.dup2(saved, 2)
            os.close(saved)


def estimate_bytes(model_files: list[tuple[Path | None, int]], ctx_size: int, cache_type_k: str | None,
                   cache_type_v: str | None) -> tuple[int, str]:
    """Upper-bound memory for weights + the target's KV cache; `model_files` are (path or None, size)."""
    weights = sum(size for _, size in model_files)
    target_path = model_files[0][0]
    per_token = kv_bytes_per_token(target_path, cache_type_k, cache_type_v) if target_path else None
    if per_token is None:
        return weights + OVERHEAD, "weights only (KV cache size unknown until the model is downloaded)"
    return int(weights + per_token * ctx_size + OVERHEAD), f"weights + KV cache for {ctx_size} tokens"
