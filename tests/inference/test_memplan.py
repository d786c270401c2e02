"""Memory plans from GGUF headers (arrays kept): a Gemma-4-31B-shaped header (written here with
gguf.GGUFWriter) plans both Gemma profiles under 24 GiB, the catalog's facts give the same plan before any
download, and the real Qwen file's KV figure is the one llama.cpp allocates."""

from __future__ import annotations

import re

import gguf
import numpy as np
import pytest

from inference.memplan import plan_profile
from inference.models import GEMMA4_31B, GEMMA4_31B_DFLASH
from inference.plans.llama_server import build_plan
from inference.plans.terms import kv_cache_bytes, model_facts, parse_size
from inference.profiles import BUILTIN_PROFILES, ProfileError
from inference.shapes.shape import ModelShape, ShapeError

GIB = 1024**3
SWA = [True, True, True, True, True, False] * 10  # 5 sliding-window : 1 global, 60 blocks


def write_gemma4_header(path, *, kv_array: bool = True) -> None:
    """Gemma 4 31B's metadata as convert_hf_to_gguf.py writes it: head_count_kv one value per layer."""
    writer = gguf.GGUFWriter(str(path), "gemma4")
    writer.add_block_count(60)
    writer.add_embedding_length(5376)
    writer.add_head_count(32)
    writer.add_context_length(262144)
    if kv_array:
        writer.add_array("gemma4.attention.head_count_kv", [16 if swa else 4 for swa in SWA])
    else:
        writer.add_uint32("gemma4.attention.head_count_kv", 16)
    writer.add_uint32("gemma4.feed_forward_length", 21504)
    writer.add_uint32("gemma4.attention.key_length", 512)
    writer.add_uint32("gemma4.attention.value_length", 512)
    writer.add_uint32("gemma4.attention.key_length_swa", 256)
    writer.add_uint32("gemma4.attention.value_length_swa", 256)
    writer.add_uint32("gemma4.attention.sliding_window", 1024)
    writer.add_array("gemma4.attention.sliding_window_pattern", SWA)
    writer.add_uint32("gemma4.vocab_size", 262144)
    writer.add_tensor("token_embd.weight", np.zeros((4, 8), dtype=np.float32))  # tiny: only the header matters
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()


def write_drafter_header(path) -> None:
    """BeeLlama's `dflash-draft` header (its keys: src/llama-arch.cpp), the catalog's gemma4-31b-dflash file."""
    writer = gguf.GGUFWriter(str(path), "dflash-draft")
    writer.add_block_count(5)
    writer.add_embedding_length(5376)
    writer.add_head_count(32)
    writer.add_uint32("dflash-draft.dflash.block_size", 16)
    writer.add_array("dflash-draft.dflash.target_layer_ids", [1, 12, 23, 35, 46, 57])
    writer.add_uint32("dflash-draft.vocab_size", 262144)
    writer.add_tensor("dflash_fc.weight", np.zeros((4, 8), dtype=np.float32))
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()


@pytest.fixture
def gemma_files(tmp_path):
    target, draft = tmp_path / "gemma.gguf", tmp_path / "draft.gguf"
    write_gemma4_header(target)
    write_drafter_header(draft)
    return {"gemma4-31b": target, "gemma4-31b-dflash": draft}


def test_the_header_keeps_per_layer_kv_heads_and_swa_head_sizes(gemma_files):
    shape = ModelShape.from_gguf(gemma_files["gemma4-31b"])
    assert shape.kv_heads == [16, 16, 16, 16, 16, 4] * 10  # llama-cpp-python's metadata drops this array
    assert shape.key_length == [256] * 5 + [512] + [256] * 5 + [512] + shape.key_length[12:]
    assert shape.swa_layers == SWA and shape.sliding_window == 1024 and shape.vocab == 262144
    assert shape == GEMMA4_31B.shape  # the catalog's facts are what the file says
    drafter = ModelShape.from_gguf(gemma_files["gemma4-31b-dflash"])
    assert drafter.is_dflash_drafter and drafter.dflash_target_layers == 6


def test_kv_cache_sizes_sliding_layers_by_the_window():
    shape = GEMMA4_31B.shape
    f16, _ = kv_cache_bytes(shape, 32768, ubatch=512, seqs=1, unified=False, cache_type_k=None, cache_type_v=None)
    # 50 sliding layers x 16 x 256 x 4 B x (1024 + 512) cells + 10 global layers x 4 x 512 x 4 B x 32768 cells
    assert f16 == 50 * 16 * 256 * 4 * 1536 + 10 * 4 * 512 * 4 * 32768  # about 3.9 GB, not the 148 GB of old
    quant, detail = kv_cache_bytes(
        shape, 32768, ubatch=512, seqs=1, unified=False, cache_type_k="q5_0", cache_type_v="q4_1"
    )
    assert quant == pytest.approx(f16 * (22 / 32 + 20 / 32) / 4, rel=1e-9)
    assert "50 sliding-window layers x 16 KV heads x 256 x 1536 cells" in detail


@pytest.mark.parametrize("name", ["gemma4-31b", "gemma4-31b-dflash", "gemma4-31b-dflash-safe"])
def test_both_gemma_profiles_fit_24_gib_from_the_file_and_from_the_catalog(gemma_files, name):
    profile = BUILTIN_PROFILES[name]
    from_file = plan_profile(profile, paths=gemma_files, gpu_memory=24 * GIB)
    # the synthetic files have no real weights: count the catalog's weights, the header's shape
    facts = {
        m: model_facts(m, gemma_files[m]).model_copy(update={"weights": model_facts(m).weights})
        for m in profile.models()
    }
    plan = build_plan(
        profile, facts["gemma4-31b"], facts.get("gemma4-31b-dflash"), available=24 * GIB, available_from="--gpu-memory"
    )
    catalog = plan_profile(profile, gpu_memory=24 * GIB)
    assert plan.fits and catalog.fits and plan.total == catalog.total
    assert from_file.total < catalog.total  # tiny files: the header's shape, the file's own size
    assert plan.total > 19e9  # weights 17.5 GB + KV + buffers: a real figure, not a token one
    assert "fits:" in plan.verdict()


def test_16_gib_does_not_fit_and_says_what():
    plan = plan_profile(BUILTIN_PROFILES["gemma4-31b-dflash"], gpu_memory=16 * GIB)
    assert not plan.fits
    assert "does not fit" in plan.verdict() and "target weights alone (17.50 GB) exceed it" in plan.verdict()


def test_a_missing_key_is_named(tmp_path):
    path = tmp_path / "broken.gguf"
    writer = gguf.GGUFWriter(str(path), "gemma4")
    writer.add_embedding_length(5376)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    with pytest.raises(ShapeError, match="gemma4.block_count"):
        ModelShape.from_gguf(path)
    (tmp_path / "junk.gguf").write_bytes(b"not a gguf")
    with pytest.raises(ShapeError, match="not a readable GGUF"):
        ModelShape.from_gguf(tmp_path / "junk.gguf")


def test_sizes_parse():
    assert parse_size("24GiB") == 24 * GIB and parse_size("24GB") == 24 * 10**9 and parse_size("16384MiB") == 16 * GIB
    assert parse_size("24") == 24 * GIB
    with pytest.raises(ValueError, match="24GiB"):
        parse_size("lots")


def test_drafter_facts_in_the_catalog():
    assert GEMMA4_31B_DFLASH.shape.is_dflash_drafter and GEMMA4_31B_DFLASH.shape.kv_heads == []


@pytest.mark.model
def test_the_real_qwen_header_is_the_catalogs_shape(qwen_path):
    from inference.models import QWEN_1_5B

    assert ModelShape.from_gguf(qwen_path) == QWEN_1_5B.shape
    facts = model_facts("qwen2.5-coder-1.5b", qwen_path)
    assert facts.weights == qwen_path.stat().st_size and "header of" in facts.source


@pytest.mark.model
def test_the_real_qwen_plan_matches_what_llama_cpp_allocates(qwen_path, capfd):
    """llama.cpp logs the KV buffer it allocates; the plan must give the same figure for the same file and
    context (llama-cpp-python 0.3.36 vendors the llama.cpp the pypi-sdist engine is built from)."""
    from llama_cpp import Llama

    profile = BUILTIN_PROFILES["qwen-cpu"]
    plan = plan_profile(profile, paths={"qwen2.5-coder-1.5b": qwen_path})
    kv = next(t for t in plan.terms if t.label == "target KV cache")
    assert kv.bytes == 28 * 2 * 128 * 4 * 8192  # from the header: 28 layers x 2 KV heads x 128, f16, 8192 cells
    Llama(
        model_path=str(qwen_path), n_ctx=profile.ctx_size, n_batch=profile.batch, n_ubatch=profile.ubatch, verbose=True
    ).close()
    log = capfd.readouterr().err
    logged = sum(float(m) for m in re.findall(r"KV buffer size\s*=\s*([\d.]+) MiB", log))
    assert logged * 1024**2 == kv.bytes, log[-2000:]
    # compute buffers are an estimate: never below what llama.cpp reserves (305.75 MiB here), not far above
    compute = next(t for t in plan.terms if t.label == "target compute").bytes
    reserved = float(re.search(r"compute buffer size\s*=\s*([\d.]+) MiB", log).group(1)) * 1024**2
    assert reserved <= compute <= 1.25 * reserved


# ---------------------------------------------------------------- vLLM and SGLang: per GPU


def test_python_engine_plans_split_weights_and_kv_heads_over_tensor_parallel_gpus():
    vllm = BUILTIN_PROFILES["gemma4-31b-dflash-vllm"]
    one = {t.label: t.bytes for t in plan_profile(vllm, gpu_memory=80 * GIB).terms}
    two = {
        t.label: t.bytes
        for t in plan_profile(vllm.model_copy(update={"tensor_parallel": 2}), gpu_memory=80 * GIB).terms
    }
    assert one["target weights"] == 62_000_000_000 and two["target weights"] == 31_000_000_000
    # BF16, one 32768-token request: 50 sliding layers x 16 heads x (256 + 256) x 1024 window, 10 global layers
    # x 4 heads x (512 + 512) x 32768; split over 2 GPUs the heads halve
    assert one["target KV cache"] == 2 * (50 * 16 * 512 * 1024 + 10 * 4 * 1024 * 32768)
    assert two["target KV cache"] == one["target KV cache"] // 2
    assert one["draft KV cache"] == 2 * 5 * 8 * 256 * 32768  # the drafter: one slot per target token
    eight = plan_profile(vllm.model_copy(update={"tensor_parallel": 8}), gpu_memory=80 * GIB)
    global_kv = 2 * 10 * 1 * 1024 * 32768  # 4 global KV heads over 8 GPUs: each still holds one
    assert {t.label: t.bytes for t in eight.terms}["target KV cache"] == 2 * 50 * 2 * 512 * 1024 + global_kv


def test_python_engine_plans_fit_an_h100_but_not_a_48_gib_card_and_say_what_to_do():
    vllm, sglang = BUILTIN_PROFILES["gemma4-31b-dflash-vllm"], BUILTIN_PROFILES["gemma4-31b-dflash-sglang"]
    h100 = plan_profile(vllm, gpu_memory=80 * GIB)
    assert h100.fits and h100.available == int(80 * GIB * 0.92)  # vLLM's default utilization
    assert "92% (gpu_memory_utilization, vLLM's default)" in h100.verdict()
    small = plan_profile(vllm, gpu_memory=48 * GIB)
    assert not small.fits and "raise tensor_parallel (now 1)" in small.verdict()
    assert plan_profile(vllm.model_copy(update={"tensor_parallel": 2}), gpu_memory=48 * GIB).fits
    # SGLang keeps activations and CUDA graphs outside its static share: no such terms, 10 GiB held back
    sg = plan_profile(sglang, gpu_memory=80 * GIB)
    assert sg.fits and sg.available == 70 * GIB and "activations" not in {t.label for t in sg.terms}
    set_share = plan_profile(sglang.model_copy(update={"gpu_memory_utilization": 0.8}), gpu_memory=80 * GIB)
    assert set_share.available == int(80 * GIB * 0.8) and "mem_fraction_static" in set_share.verdict()


def test_python_engine_plan_without_gpus_or_facts_says_why(monkeypatch):
    import inference.hardware

    monkeypatch.setattr(inference.hardware, "nvidia_gpus", list)
    vllm = BUILTIN_PROFILES["gemma4-31b-dflash-vllm"].model_copy(update={"tensor_parallel": 2})
    unknown = plan_profile(vllm)
    assert unknown.available is None and "tensor_parallel 2 needs 2 GPUs, no NVIDIA GPU found" in unknown.verdict()
    with pytest.raises(ProfileError, match="no size or layer facts for 'me/my-model'"):
        plan_profile(vllm.model_copy(update={"target": "me/my-model"}), gpu_memory=80 * GIB)


def test_host_ram_side_counts_checkpoints_prompt_cache_and_pinned_weights():
    """32 sliding-window checkpoints per slot at the DFlash profile's f16 KV are about 1.26 GB each (40 GB), the
    baseline's default prompt cache is 8 GiB, and --mlock pins both files."""
    from inference.profiles import get_profile

    dflash = {
        t.label: t.bytes for t in plan_profile(get_profile("gemma4-31b-dflash"), gpu_memory=24 * 1024**3).host_terms
    }
    assert dflash["context checkpoints"] == 32 * 50 * 16 * 256 * 4 * 1536  # 1.26 GB each
    assert "prompt cache" not in dflash  # the guide's command sets --cache-ram 0
    assert dflash["weights pinned (--mlock)"] > 18e9
    baseline = {t.label: t.bytes for t in plan_profile(get_profile("gemma4-31b"), gpu_memory=24 * 1024**3).host_terms}
    assert baseline["prompt cache"] == 8192 * 1024**2 and "weights pinned (--mlock)" not in baseline
