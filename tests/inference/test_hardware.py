"""Hardware detection: GPUs through nvidia-smi (a fake one here, answering the real query format), and the
refusal of a GPU profile on a machine without a GPU."""

from __future__ import annotations

import pytest

import inference.hardware
from inference.hardware import Hardware, cpu_has_amx
from inference.profiles import BUILTIN_PROFILES, ProfileError
from inference.server import check_fits


def test_gpus_are_read_from_nvidia_smi(tmp_path, monkeypatch):
    smi = tmp_path / "nvidia-smi"
    smi.write_text("#!/bin/sh\necho 'NVIDIA GeForce RTX 4090, 24564, 23800, 8.9'\n")
    smi.chmod(0o755)
    monkeypatch.setenv("PATH", f"{tmp_path}:/usr/bin:/bin")
    (gpu,) = Hardware.detect().gpus
    assert (gpu.name, gpu.memory_total, gpu.compute_cap) == ("NVIDIA GeForce RTX 4090", 24564 * 1024**2, "8.9")


def test_a_profile_that_cannot_fit_is_refused_before_launch(tmp_path, monkeypatch):
    monkeypatch.setenv("DFLASH_AGENT_CACHE", str(tmp_path))  # catalog facts: nothing downloaded
    monkeypatch.setattr(inference.hardware, "ram_available", lambda memory=None: 16 * 1024**3)
    huge = BUILTIN_PROFILES["qwen-cpu"].model_copy(update={"ctx_size": 50_000_000})
    with pytest.raises(ProfileError, match=r"does not fit: needs .* GB, cpu has .* \(available RAM\)"):
        check_fits(huge, {})
    check_fits(BUILTIN_PROFILES["qwen-cpu"], {})


def test_a_profile_whose_host_side_does_not_fit_ram_is_refused_before_launch(tmp_path, monkeypatch):
    """The same refusal as a device misfit: qwen-cpu's buffers fit 4 GiB, the engine's default 8 GiB prompt cache
    beside them not."""
    monkeypatch.setenv("DFLASH_AGENT_CACHE", str(tmp_path))
    monkeypatch.setattr(inference.hardware, "ram_available", lambda memory=None: 4 * 1024**3)
    with pytest.raises(ProfileError, match=r"'qwen-cpu': does not fit host RAM: .* lower --cache-ram"):
        check_fits(BUILTIN_PROFILES["qwen-cpu"].model_copy(update={"cache_ram": None}), {})
    check_fits(BUILTIN_PROFILES["qwen-cpu"].model_copy(update={"cache_ram": 512}), {})


def test_gpu_profile_without_a_gpu_is_refused(tmp_path, monkeypatch):
    monkeypatch.setenv("DFLASH_AGENT_CACHE", str(tmp_path))
    if Hardware.detect().gpus:
        pytest.skip("this machine has a GPU; the refusal is for machines without one")
    with pytest.raises(ProfileError, match="needs a GPU"):
        check_fits(BUILTIN_PROFILES["gemma4-31b"], {})


def test_amx_is_read_from_the_cpu_flags(tmp_path):
    """/proc/cpuinfo's `flags` line as a Sapphire Rapids VM prints it, and as an older Xeon does."""
    sapphire = (
        "processor\t: 0\nmodel name\t: Intel(R) Xeon(R) Processor\nflags\t\t: fpu avx512f amx_bf16 amx_tile amx_int8\n"
    )
    older = "processor\t: 0\nflags\t\t: fpu avx2 avx512f avx512_vnni\n"
    (tmp_path / "sapphire").write_text(sapphire)
    (tmp_path / "older").write_text(older)
    assert cpu_has_amx(tmp_path / "sapphire")
    assert not cpu_has_amx(tmp_path / "older")
    assert not cpu_has_amx(tmp_path / "missing")  # not Linux: nothing to avoid
