"""What this machine has: GPUs (nvidia-smi), their memory, the CUDA toolkit, cores and RAM."""

from __future__ import annotations

import glob
import os
import re
import shutil
import subprocess
from pathlib import Path

import psutil
from pydantic import BaseModel

CUDA_GLOBS = ("/usr/local/cuda/bin", "/usr/local/cuda-*/bin", "/opt/cuda/bin")  # where NVIDIA's installers put nvcc


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
    def detect(cls) -> Hardware:
        memory = psutil.virtual_memory()
        return cls(
            cores=os.cpu_count() or 1,
            ram_total=memory.total,
            ram_available=ram_available(memory),
            gpus=nvidia_gpus(),
            nvcc=_nvcc_version(),
        )


def ram_available(memory=None) -> int:
    """RAM available to a new process (free plus what the kernel can reclaim, psutil's `available`)."""
    return (memory or psutil.virtual_memory()).available


def cpu_has_amx(cpuinfo: Path = Path("/proc/cpuinfo")) -> bool:
    """Whether the CPU has Intel AMX (Sapphire Rapids and newer Xeons). ggml's AMX kernels, as GCC 12 compiles
    them, load an invalid tile config there and crash on the first matrix product
    (inference/patches/amx-tile-config.patch says why): a build without our patch must not use them."""
    try:
        text = cpuinfo.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return False
    flags = next((line.split(":", 1)[1].split() for line in text.splitlines() if line.startswith("flags")), [])
    return "amx_tile" in flags


def nvidia_gpus() -> list[Gpu]:
    if not shutil.which("nvidia-smi"):
        return []
    try:
        out = subprocess.run(
            ["nvidia-smi", "--query-gpu=name,memory.total,memory.free,compute_cap", "--format=csv,noheader,nounits"],
            capture_output=True,
            text=True,
            timeout=20,
        ).stdout
    except (OSError, subprocess.TimeoutExpired):
        return []
    gpus = []
    for line in out.strip().splitlines():
        name, total, free, cap = [part.strip() for part in line.split(",")]
        gpus.append(Gpu(name=name, memory_total=int(total) * 1024**2, memory_free=int(free) * 1024**2, compute_cap=cap))
    return gpus


def chosen_gpus(devices: list[int], count: int, gpus: list[Gpu] | None = None) -> list[int]:
    """The GPUs (nvidia-smi indices) a server gets: the profile's `devices`, else the `count` with the most free
    memory; never every GPU by default. Empty when there is no NVIDIA GPU."""
    if devices:
        return list(devices)
    gpus = nvidia_gpus() if gpus is None else gpus
    ranked = sorted(range(len(gpus)), key=lambda i: gpus[i].memory_free, reverse=True)
    return sorted(ranked[:count])


def _nvcc_version() -> str | None:
    """`CUDA 12.4 (/usr/local/cuda/bin/nvcc)`, found where `agent engine build` would find it."""
    if (nvcc := find_nvcc()) is None:
        return None
    version = nvcc_version(nvcc)
    return f"CUDA {version[0]}.{version[1]} ({nvcc})" if version else f"unknown version ({nvcc})"


def find_nvcc() -> Path | None:
    """nvcc on PATH, under $CUDA_HOME / $CUDA_PATH, or where NVIDIA's installers put it (not on PATH by default)."""
    if found := shutil.which("nvcc"):
        return Path(found)
    homes = [os.environ[v] + "/bin" for v in ("CUDA_HOME", "CUDA_PATH") if os.environ.get(v)]
    for folder in homes + sorted((f for g in CUDA_GLOBS for f in glob.glob(g)), key=_version_key, reverse=True):
        if os.access(Path(folder, "nvcc"), os.X_OK):
            return Path(folder, "nvcc")
    return None


def _version_key(folder: str) -> tuple[int, ...]:
    return tuple(int(n) for n in re.findall(r"\d+", folder)) or (0,)


def nvcc_version(nvcc: Path) -> tuple[int, int] | None:
    """(major, minor) from `nvcc --version` ("Cuda compilation tools, release 12.4, V12.4.131")."""
    try:
        out = subprocess.run([str(nvcc), "--version"], capture_output=True, text=True, timeout=30).stdout
    except (OSError, subprocess.TimeoutExpired):
        return None
    found = re.search(r"release (\d+)\.(\d+)", out)
    return (int(found.group(1)), int(found.group(2))) if found else None
