"""What this machine has: GPUs (nvidia-smi), their memory, the CUDA toolkit, cores and RAM."""

from __future__ import annotations

import os
import shutil
import subprocess

import psutil
from pydantic import BaseModel


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
                   gpus=nvidia_gpus(), nvcc=_nvcc_version())


def nvidia_gpus() -> list[Gpu]:
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
    """`CUDA 12.4 (/usr/local/cuda/bin/nvcc)`, found where `agent engine build` would find it."""
    from inference.engine import find_nvcc, nvcc_version

    if (nvcc := find_nvcc()) is None:
        return None
    version = nvcc_version(nvcc)
    return f"CUDA {version[0]}.{version[1]} ({nvcc})" if version else f"unknown version ({nvcc})"
