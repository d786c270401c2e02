"""Memory estimates from real GGUF metadata, and the refusal of a profile that cannot fit."""

from __future__ import annotations

import pytest

from inference.hardware import Hardware, estimate_bytes, kv_bytes_per_token
from inference.profiles import BUILTIN_PROFILES, ProfileError
from inference.server import check_fits

pytestmark = pytest.mark.model


def test_kv_cache_size_from_the_real_model(qwen_path):
    # Qwen2.5-Coder-1.5B: 28 layers x 2 KV heads x 128 head size x (2 + 2 bytes) at f16
    assert kv_bytes_per_token(qwen_path, None, None) == 28 * 2 * 128 * 4
    assert kv_bytes_per_token(qwen_path, "q8_0", "q8_0") == pytest.approx(28 * 2 * 128 * 2 * 34 / 32)


def test_estimate_counts_weights_and_context(qwen_path):
    size = qwen_path.stat().st_size
    small, _ = estimate_bytes([(qwen_path, size)], 1024, None, None)
    large, basis = estimate_bytes([(qwen_path, size)], 32768, None, None)
    assert small > size and large - small == pytest.approx(28 * 2 * 128 * 4 * (32768 - 1024))
    assert "KV cache" in basis


def test_a_profile_that_cannot_fit_is_refused_before_launch(qwen_path):
    huge = BUILTIN_PROFILES["qwen-cpu"].model_copy(update={"ctx_size": 50_000_000})
    with pytest.raises(ProfileError, match=r"needs about .* GB .* available RAM"):
        check_fits(huge, {"qwen2.5-coder-1.5b": qwen_path})
    check_fits(BUILTIN_PROFILES["qwen-cpu"], {"qwen2.5-coder-1.5b": qwen_path})


def test_gpu_profile_without_a_gpu_is_refused(qwen_path):
    if Hardware.detect().gpus:
        pytest.skip("this machine has a GPU; the refusal is for machines without one")
    with pytest.raises(ProfileError, match="needs a GPU"):
        check_fits(BUILTIN_PROFILES["gemma4-31b"], {})
