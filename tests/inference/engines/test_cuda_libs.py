"""The CUDA libraries a build needs beyond nvcc: cuBLAS from PyPI where the toolkit has none, VMM off without libcuda."""

from __future__ import annotations

import zipfile
from pathlib import Path

import pytest

from inference.engines import cuda_libs
from inference.engines.cuda_libs import CudaLibsError, ensure_cublas, find_cuda_libs, toolkit_root
from inference.engines.engine import BuildOptions, EngineBuildError, detect_build_options
from tests.inference.engines.test_engine import fake_toolkit


def test_a_full_toolkit_needs_nothing_more(tmp_path, monkeypatch):
    nvcc = fake_toolkit(tmp_path / "cuda", release="13.0")
    (tmp_path / "cuda" / "include").mkdir()
    (tmp_path / "cuda" / "include" / "cublas_v2.h").write_text("")
    (tmp_path / "cuda" / "lib64" / "stubs").mkdir(parents=True)
    (tmp_path / "cuda" / "lib64" / "libcublas.so").write_text("")
    (tmp_path / "cuda" / "lib64" / "stubs" / "libcuda.so").write_text("")
    monkeypatch.setattr(cuda_libs, "SYSTEM_LIBS", ())
    assert find_cuda_libs(nvcc, (13, 0)) == cuda_libs.CudaLibs(cublas=None, vmm=True)


def test_a_distributions_cublas_counts_and_an_unknown_release_gets_none_guessed(tmp_path, monkeypatch):
    """Debian's nvidia-cuda-toolkit puts cuBLAS in /usr; an nvcc whose release is unreadable gets no wheel picked."""
    nvcc = fake_toolkit(tmp_path / "cuda", release="13.0")
    (tmp_path / "usr" / "include").mkdir(parents=True)
    (tmp_path / "usr" / "include" / "cublas_v2.h").write_text("")
    (tmp_path / "usr" / "lib").mkdir()
    (tmp_path / "usr" / "lib" / "libcublas.so").write_text("")
    monkeypatch.setattr(cuda_libs, "SYSTEM_INCLUDES", (tmp_path / "usr" / "include",))
    monkeypatch.setattr(cuda_libs, "SYSTEM_LIBS", (tmp_path / "usr" / "lib",))
    assert find_cuda_libs(nvcc, (13, 0)).cublas is None
    monkeypatch.setattr(cuda_libs, "SYSTEM_LIBS", ())
    assert find_cuda_libs(nvcc, (13, 0)).cublas is not None
    assert find_cuda_libs(nvcc, None).cublas is None


def test_a_toolkit_from_wheels_gets_cublas_from_pypi_and_no_vmm(tmp_path, monkeypatch):
    """nvcc and the runtime only, no driver: cuBLAS of the same release goes to the cache, VMM (libcuda) is off."""
    monkeypatch.setenv("DFLASH_AGENT_CACHE", str(tmp_path / "cache"))
    monkeypatch.setattr(cuda_libs, "SYSTEM_LIBS", ())
    monkeypatch.setattr(cuda_libs, "SYSTEM_INCLUDES", ())
    libs = find_cuda_libs(fake_toolkit(tmp_path / "cuda", release="13.0"), (13, 0))
    assert libs == cuda_libs.CudaLibs(cublas=str(tmp_path / "cache" / "cuda" / "nvidia-cublas-13.0"), vmm=False)
    args = BuildOptions(backend="cuda", cuda_arch="89", cublas=libs.cublas, vmm=libs.vmm).cmake_args()
    assert f"-DCUDA_cublas_LIBRARY={libs.cublas}/lib/libcublas.so" in args
    assert f"-DCUDA_cublasLt_LIBRARY={libs.cublas}/lib/libcublasLt.so" in args
    assert f"-DCMAKE_CUDA_FLAGS=-isystem {libs.cublas}/include" in args
    assert "-DGGML_CUDA_NO_VMM=ON" in args
    assert not any("cublas" in a or "VMM" in a for a in BuildOptions(backend="cuda", cuda_arch="89").cmake_args())


def test_the_toolkit_root_is_the_one_nvcc_uses_behind_a_wrapper():
    """This machine's nvcc on PATH is a script that execs the toolkit's (a wrapper hides where the toolkit is)."""
    wrapper = Path("/usr/local/bin/nvcc")
    if not wrapper.is_file() or wrapper.stat().st_size > 4096:
        pytest.skip("no nvcc wrapper script in /usr/local/bin on this machine")
    root = toolkit_root(wrapper)
    assert (root / "bin" / "nvcc").is_file() and root != Path("/usr/local")


def test_cublas_is_unpacked_from_the_wheel_pip_finds(tmp_path, monkeypatch):
    """pip really runs, against a local index holding a wheel laid out as NVIDIA's (nvidia/cu13/{include,lib})."""
    wheels = tmp_path / "wheels"
    wheels.mkdir()
    for name, version, folder in (("nvidia_cublas", "13.0.2.14", "cu13"), ("nvidia_cublas_cu12", "12.4.5.8", "cublas")):
        with zipfile.ZipFile(wheels / f"{name}-{version}-py3-none-any.whl", "w") as wheel:
            major = version.split(".")[0]
            wheel.writestr(f"nvidia/{folder}/include/cublas_v2.h", "/* header */")
            wheel.writestr(f"nvidia/{folder}/lib/libcublas.so.{major}", "ELF")
            wheel.writestr(f"nvidia/{folder}/lib/libcublasLt.so.{major}", "ELF")
            info = f"{name}-{version}.dist-info"
            wheel.writestr(f"{info}/METADATA", f"Name: {name.replace('_', '-')}\nVersion: {version}\n")
            wheel.writestr(f"{info}/WHEEL", "Wheel-Version: 1.0\nTag: py3-none-any\n")
            wheel.writestr(f"{info}/RECORD", "")
    monkeypatch.setenv("PIP_NO_INDEX", "1")
    monkeypatch.setenv("PIP_FIND_LINKS", str(wheels))
    folder = ensure_cublas(tmp_path / "cuda" / "nvidia-cublas-13.0")
    assert (folder / "include" / "cublas_v2.h").read_text() == "/* header */"
    assert (folder / "lib" / "libcublas.so").resolve() == folder / "lib" / "libcublas.so.13"
    assert (folder / "lib" / "libcublasLt.so").is_symlink()
    assert not folder.with_name(folder.name + ".partial").exists()
    assert ensure_cublas(folder) == folder  # once: a second call finds it without pip
    older = ensure_cublas(tmp_path / "cuda" / "nvidia-cublas-12.4")  # CUDA 12: nvidia-cublas-cu12, nvidia/cublas/
    assert (older / "lib" / "libcublas.so").resolve() == older / "lib" / "libcublas.so.12"
    with pytest.raises(CudaLibsError, match=r"no cuBLAS and pip could not fetch nvidia-cublas-cu12==12\.8\.\*"):
        ensure_cublas(tmp_path / "cuda" / "nvidia-cublas-12.8")


def test_a_cuda_build_without_a_gpu_needs_an_explicit_arch(tmp_path, monkeypatch):
    fake_toolkit(tmp_path / "cuda", release="13.0")
    monkeypatch.setenv("PATH", str(tmp_path / "cuda" / "bin"))  # no nvidia-smi: no GPU
    monkeypatch.setenv("DFLASH_AGENT_CACHE", str(tmp_path / "cache"))
    with pytest.raises(EngineBuildError, match=r"no NVIDIA GPU here .* --cuda-arch \(89: RTX 40xx"):
        detect_build_options("cuda")
    assert detect_build_options("cuda", cuda_arch="89").cuda_arch == "89"


def test_a_build_says_its_architecture_and_a_missing_vmm_pool():
    assert BuildOptions().describe() == "cpu"
    assert BuildOptions(backend="cuda", cuda_arch="89").describe() == "cuda sm_89"
    assert BuildOptions(backend="cuda", cuda_arch="89", vmm=False, rpc=True).describe() == "cuda sm_89 no-VMM+rpc"


def test_the_version_is_not_a_cuda_error_that_mentions_a_version():
    """What this machine's CUDA build of BeeLlama v0.2.0 prints for `--version` without a driver."""
    from inference.engines.engine import version_line

    printed = (
        "ggml_cuda_init: failed to initialize CUDA: CUDA driver version is insufficient for CUDA runtime version\n"
        "version: 0 (unknown)\nbuilt with GNU 12.2.0 for Linux x86_64\n"
    )
    assert version_line(printed) == "version: 0 (unknown)"
    assert version_line("llama-server version 1\n") == "llama-server version 1"
    assert version_line("") == "unknown"
