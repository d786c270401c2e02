"""The CUDA libraries a build links beyond nvcc and the runtime: cuBLAS and the driver's libcuda.

A toolkit assembled from NVIDIA's PyPI wheels (as in many containers and CI images) has nvcc and the runtime but no
cuBLAS, and a machine without the NVIDIA driver has no libcuda. ggml-cuda links both (its CMakeLists.txt:
`CUDA::cublas`, and `CUDA::cuda_driver` unless `GGML_CUDA_NO_VMM`). cuBLAS then comes from PyPI's `nvidia-cublas` of
the toolkit's release, unpacked into the cache; without libcuda the build turns off ggml's VMM memory pool, the one
part that calls the driver directly (the runtime still loads the driver when the binary runs on a GPU).
"""

from __future__ import annotations

import glob
import re
import shutil
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

from pydantic import BaseModel

from inference.errors import DflashError
from inference.paths import cache_dir

# where a distribution's packages or a driver install put cuBLAS and libcuda.so (FindCUDAToolkit looks there too)
SYSTEM_INCLUDES = (Path("/usr/include"),)
SYSTEM_LIBS = (
    Path("/usr/lib/x86_64-linux-gnu"),
    Path("/usr/lib/aarch64-linux-gnu"),
    Path("/usr/lib64"),
    Path("/usr/lib/wsl/lib"),
)


class CudaLibsError(DflashError):
    pass


class CudaLibs(BaseModel):
    cublas: str | None = None  # a folder with include/ and lib/ from nvidia-cublas, where the toolkit has none
    vmm: bool = True  # False where no libcuda can be linked (no driver, no stubs): GGML_CUDA_NO_VMM


def find_cuda_libs(nvcc: Path, release: tuple[int, int] | None) -> CudaLibs:
    """What this toolkit lacks, decided without downloading anything (`ensure_cublas` fetches at build time)."""
    root = toolkit_root(nvcc)
    # an nvcc whose release is unknown gets no cuBLAS guessed for it: CMake's own error names what is missing
    cublas = None if has_cublas(root) or release is None else str(cublas_folder(release))
    return CudaLibs(cublas=cublas, vmm=has_driver_lib(root))


def toolkit_root(nvcc: Path) -> Path:
    """The toolkit folder nvcc itself uses (its `TOP`), which a wrapper script on PATH does not reveal."""
    with tempfile.TemporaryDirectory() as scratch:
        try:
            out = subprocess.run(
                [str(nvcc), "--dryrun", "-c", "probe.cu"], cwd=scratch, capture_output=True, text=True, timeout=30
            )
            top = re.search(r"^#\$ TOP=(.+)$", out.stderr + out.stdout, re.MULTILINE)
        except (OSError, subprocess.TimeoutExpired):
            top = None
    return Path(top.group(1).strip()).resolve() if top else nvcc.resolve().parent.parent


def _lib_dirs(root: Path) -> list[Path]:
    return [root / "lib64", root / "lib", *map(Path, glob.glob(str(root / "targets" / "*" / "lib")))]


def has_cublas(root: Path) -> bool:
    """In the toolkit, or where a distribution's packages put it (Debian's nvidia-cuda-toolkit: /usr/include)."""
    headers = [root / "include", *map(Path, glob.glob(str(root / "targets" / "*" / "include"))), *SYSTEM_INCLUDES]
    return any((d / "cublas_v2.h").is_file() for d in headers) and any(
        (d / "libcublas.so").exists() for d in _lib_dirs(root) + list(SYSTEM_LIBS)
    )


def has_driver_lib(root: Path) -> bool:
    """The driver's libcuda.so, or the toolkit's link stub of it."""
    return any((d / "stubs" / "libcuda.so").exists() for d in _lib_dirs(root)) or any(
        (d / "libcuda.so").exists() for d in SYSTEM_LIBS
    )


def cublas_folder(release: tuple[int, int]) -> Path:
    return cache_dir() / "cuda" / f"nvidia-cublas-{release[0]}.{release[1]}"


def ensure_cublas(folder: Path) -> Path:
    """cuBLAS of the toolkit's release (the folder's name says which) from PyPI, unpacked once into `folder`."""
    if (folder / "lib" / "libcublas.so").exists():
        return folder
    release = folder.name.removeprefix("nvidia-cublas-")
    major = int(release.split(".")[0])
    # NVIDIA's names and layouts: nvidia-cublas (nvidia/cu13/...) from CUDA 13, nvidia-cublas-cu12 (nvidia/cublas/...)
    package, prefix = (
        ("nvidia-cublas", f"nvidia/cu{major}/") if major >= 13 else (f"nvidia-cublas-cu{major}", "nvidia/cublas/")
    )
    with tempfile.TemporaryDirectory() as scratch:
        run = subprocess.run(
            [sys.executable, "-m", "pip", "download", "--quiet", "--no-deps", "--only-binary", ":all:"]
            + [f"{package}=={release}.*", "-d", scratch],
            capture_output=True,
            text=True,
        )
        wheels = list(Path(scratch).glob("nvidia_cublas*.whl"))
        if run.returncode != 0 or not wheels:
            raise CudaLibsError(
                f"the CUDA toolkit has no cuBLAS and pip could not fetch {package}=={release}.* "
                f"({run.stderr.strip()[-300:] or 'no wheel for this platform'}); install the toolkit's cuBLAS "
                f"(e.g. `apt-get install libcublas-dev-{release.replace('.', '-')}`) or check pip's index"
            )
        partial = folder.with_name(folder.name + ".partial")
        shutil.rmtree(partial, ignore_errors=True)
        _unpack(wheels[0], prefix, partial)
    for versioned in (partial / "lib").glob("lib*.so.*"):  # the link names CMake's find_library looks for
        unversioned = versioned.with_name(versioned.name.split(".so.")[0] + ".so")
        if not unversioned.exists():
            unversioned.symlink_to(versioned.name)
    partial.rename(folder)
    return folder


def _unpack(wheel: Path, prefix: str, into: Path) -> None:
    with zipfile.ZipFile(wheel) as archive:
        for member in archive.infolist():
            if member.filename.startswith(prefix) and not member.is_dir():
                target = into / member.filename.removeprefix(prefix)
                target.parent.mkdir(parents=True, exist_ok=True)
                with archive.open(member) as source, target.open("wb") as sink:
                    shutil.copyfileobj(source, sink)
                target.chmod(0o755 if ".so" in target.name else 0o644)
