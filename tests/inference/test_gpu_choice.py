"""Which GPUs a server sees: the profile's `devices`, else the freest one (tensor_parallel of them for vLLM and
SGLang), through CUDA_VISIBLE_DEVICES; never every GPU by default, and a CUDA_VISIBLE_DEVICES the user set wins."""

from __future__ import annotations

from pathlib import Path

import pytest

from inference import hardware
from inference.engines.capabilities import known_engine
from inference.hardware import Gpu, chosen_gpus
from inference.profiles import BUILTIN_PROFILES, ProfileError, load_profiles
from inference.render import render
from inference.server import with_gpus

GIB = 1024**3
GPUS = [
    Gpu(name="RTX 4090", memory_total=24 * GIB, memory_free=2 * GIB, compute_cap="8.9"),
    Gpu(name="RTX 4090", memory_total=24 * GIB, memory_free=23 * GIB, compute_cap="8.9"),
    Gpu(name="RTX 3090", memory_total=24 * GIB, memory_free=20 * GIB, compute_cap="8.6"),
]


@pytest.fixture
def three_gpus(monkeypatch):
    monkeypatch.setattr(hardware, "nvidia_gpus", lambda: GPUS)


def test_by_default_one_gpu_the_freest(three_gpus):
    assert chosen_gpus([], 1, GPUS) == [1] and chosen_gpus([], 2, GPUS) == [1, 2]
    env = with_gpus(BUILTIN_PROFILES["gemma4-31b-mtp"], {})
    assert env["CUDA_VISIBLE_DEVICES"] == "1"
    vllm = BUILTIN_PROFILES["gemma4-31b-dflash-vllm"].model_copy(update={"tensor_parallel": 2})
    assert with_gpus(vllm, {})["CUDA_VISIBLE_DEVICES"] == "1,2"
    assert "CUDA_VISIBLE_DEVICES" not in with_gpus(BUILTIN_PROFILES["qwen-cpu"], {})  # a CPU profile: untouched


def test_a_profile_pins_its_gpus_and_the_users_setting_wins(three_gpus, tmp_path):
    config = tmp_path / "config.toml"
    config.write_text(
        '[profiles.two]\nextends = "gemma4-31b-mtp"\ndevices = [0, 2]\nsplit_mode = "layer"\nmain_gpu = 1\n'
    )
    two = load_profiles(config)["two"]
    assert with_gpus(two, {})["CUDA_VISIBLE_DEVICES"] == "0,2"
    assert with_gpus(two, {"CUDA_VISIBLE_DEVICES": "3"})["CUDA_VISIBLE_DEVICES"] == "3"
    args = render(two, known_engine("upstream").capabilities(), {m: Path(m) for m in two.models()}, "127.0.0.1", 1)
    assert args[args.index("--split-mode") + 1] == "layer" and args[args.index("--main-gpu") + 1] == "1"


def test_the_plan_counts_the_pinned_gpus_memory(three_gpus, tmp_path):
    from inference.plans.terms import device_memory

    assert device_memory("gpu", None, [0, 2]) == (22 * GIB, "free memory of GPU(s) 0, 2")
    assert device_memory("gpu")[0] == 23 * GIB
    assert device_memory("gpu", None, [5])[0] is None


def test_split_mode_is_a_llama_server_setting(tmp_path):
    config = tmp_path / "config.toml"
    config.write_text('[profiles.v]\nextends = "gemma4-31b-dflash-vllm"\nsplit_mode = "layer"\n')
    with pytest.raises(ProfileError, match="split_mode: llama-server settings"):
        load_profiles(config)
