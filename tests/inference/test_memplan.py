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
from inference.plans.llama_server import build_plan, largest_contexts
from inference.plans.terms import kv_cache_bytes, model_facts, parse_size
from inference.profiles import BUILTIN_PROFILES, ProfileError, get_profile, load_profiles, with_overrides
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
    """A sliding-window checkpoint at the DFlash profile's f16 KV is 1.26 GB (8 per slot as the profile sets, the
    engine's 32 when unset), the baseline's default prompt cache is 8 GiB, and --mlock pins what llama.cpp keeps on
    the CPU: with every layer on the GPU, the target's Q6_K token embeddings alone; else the files."""
    dflash_profile = get_profile("gemma4-31b-dflash")
    one = 50 * 16 * 256 * 4 * 1536  # sliding layers x KV heads x head size x (K + V at 2 B) x (window + ubatch)
    dflash = host_bytes(dflash_profile)
    assert dflash["context checkpoints"] == 8 * one and one == 1_258_291_200
    assert "prompt cache" not in dflash  # the guide's command sets --cache-ram 0
    assert dflash["weights pinned (--mlock)"] == 5376 * 262144 // 256 * 210  # token_embd Q6_K: 1.16 GB
    assert host_bytes(dflash_profile.model_copy(update={"ctx_checkpoints": None}))["context checkpoints"] == 32 * one
    assert "context checkpoints" not in host_bytes(dflash_profile.model_copy(update={"ctx_checkpoints": 0}))
    partial = host_bytes(dflash_profile.model_copy(update={"gpu_layers": "40"}))["weights pinned (--mlock)"]
    assert partial == model_facts("gemma4-31b").weights + model_facts("gemma4-31b-dflash").weights
    baseline = host_bytes(get_profile("gemma4-31b"))
    assert baseline["prompt cache"] == 8192 * 1024**2 and "weights pinned (--mlock)" not in baseline
    assert baseline["context checkpoints"] == 8 * one * (22 / 32 + 20 / 32) / 4  # q5_0/q4_1: 0.41 GB each


def host_bytes(profile) -> dict[str, int]:
    return {t.label: t.bytes for t in plan_profile(profile, gpu_memory=24 * GIB).host_terms}


def fake_ram(monkeypatch, size: int) -> None:
    """This machine's available RAM, as the plan reads it."""
    import inference.hardware

    monkeypatch.setattr(inference.hardware, "ram_available", lambda memory=None: size)


def test_a_host_side_that_does_not_fit_ram_is_a_misfit_naming_the_flag_to_lower(monkeypatch):
    fake_ram(monkeypatch, 64 * GIB)
    dflash = get_profile("gemma4-31b-dflash")
    fits = plan_profile(dflash, gpu_memory=24 * GIB)
    assert fits.fits and fits.host_total == 8 * 1_258_291_200 + 1_156_055_040
    assert "host RAM at most 11.22 GB of 68.72 GB (available RAM)" in fits.verdict()
    fake_ram(monkeypatch, 8 * GIB)
    short = plan_profile(dflash, gpu_memory=24 * GIB)
    assert short.fits_device and not short.fits and "\n" not in short.verdict()
    assert short.verdict().startswith(
        "does not fit host RAM: the host terms need up to 11.22 GB, this machine has 8.59 GB"
    )
    assert "lower --ctx-checkpoints (`ctx_checkpoints` in a profile) or drop --mlock" in short.verdict()
    assert "does not fit host RAM" in short.render()
    # the baseline's largest host term is its prompt cache
    fake_ram(monkeypatch, 10 * GIB)
    baseline = plan_profile(get_profile("gemma4-31b"), gpu_memory=24 * GIB)
    assert not baseline.fits and "short by 1.16 GB; lower --cache-ram" in baseline.verdict()
    # a CPU profile: its buffers fit, but not with the engine's 8 GiB prompt cache beside them; the profile's
    # own 2 GiB cache fits an 8 GB laptop
    fake_ram(monkeypatch, 4 * GIB)
    cpu = plan_profile(BUILTIN_PROFILES["qwen-cpu"].model_copy(update={"cache_ram": None}))
    assert cpu.fits_device and not cpu.fits
    assert "the host terms and the CPU's need up to 10.55 GB" in cpu.verdict() and "--cache-ram" in cpu.verdict()
    assert plan_profile(BUILTIN_PROFILES["qwen-cpu"].model_copy(update={"cache_ram": 1024})).fits
    fake_ram(monkeypatch, 6 * GIB)
    assert plan_profile(BUILTIN_PROFILES["qwen-cpu"]).fits


def test_the_largest_context_table_is_about_the_card_not_the_host(monkeypatch):
    fake_ram(monkeypatch, 1 * GIB)
    table = largest_contexts(get_profile("gemma4-31b-mtp"), gpu_memory=24 * GIB, cache_types=["q8_0"])
    assert "q8_0/q8_0  123,392 tokens" in table


@pytest.mark.parametrize(
    "name", [n for n, p in BUILTIN_PROFILES.items() if p.engine == "llama-server" and p.device == "gpu"]
)
def test_every_gpu_gemma_profile_host_side_fits_a_desktop_with_its_own_settings(monkeypatch, name):
    """64 GB of RAM with room to spare; under 16 GB, so half a 32 GB desktop is left to the system and the agent."""
    fake_ram(monkeypatch, 64 * GIB)
    plan = plan_profile(BUILTIN_PROFILES[name], gpu_memory=80 * GIB)
    assert plan.fits_host and plan.host_total < 16e9, plan.render()
    assert {"context checkpoints"} <= {t.label for t in plan.host_terms}


def test_a_user_profile_and_the_cli_values_change_the_host_side(tmp_path, monkeypatch):
    fake_ram(monkeypatch, 64 * GIB)
    user = tmp_path / "profiles.toml"
    user.write_text('[profiles.long]\nextends = "gemma4-31b-dflash"\nctx_checkpoints = 32\ncache_ram = 8192\n')
    long = load_profiles(user)["long"]
    terms = host_bytes(long)
    assert terms["context checkpoints"] == 32 * 1_258_291_200 and terms["prompt cache"] == 8192 * 1024**2
    fake_ram(monkeypatch, 32 * GIB)
    assert not plan_profile(long, gpu_memory=24 * GIB).fits  # 40.3 + 8.6 + 1.2 GB
    fewer = with_overrides(long, ctx_checkpoints=4, cache_ram=0)
    assert plan_profile(fewer, gpu_memory=24 * GIB).fits
    with pytest.raises(ProfileError, match="cache_ram: llama-server settings"):
        with_overrides(BUILTIN_PROFILES["gemma4-31b-dflash-vllm"], cache_ram=0)


def test_beellama_dflash_targets_hold_a_backup_sequence_per_slot():
    """BeeLlama v0.2's server doubles a speculative target's sequences (measured on its CPU build: 2,560
    sliding-window cells at window 1,024 and ubatch 512); upstream llama.cpp does not."""
    profile = get_profile("gemma4-31b-dflash")
    kv = {
        logits: next(t for t in plan_profile(profile, gpu_memory=24 * GIB, logits=logits).terms if "KV" in t.label)
        for logits in ("ubatch", "outputs")
    }
    assert "x 2560 cells" in kv["ubatch"].detail and "x 1536 cells" in kv["outputs"].detail
    assert plan_profile(profile, gpu_memory=24 * GIB, logits="ubatch").fits, "the seed ran it on a 24 GiB card"


def test_on_a_cpu_no_mmap_reads_tied_embeddings_twice():
    """Read into memory, the output layer of a model with tied embeddings is a copy of its own (measured: 5.63 GB
    against a 4.49 GB file at 12 layers); mapped, or on a GPU, the plan is the file."""
    gpu = get_profile("gemma4-31b-dflash")
    cpu = gpu.model_copy(update={"device": "cpu"})
    mapped = cpu.model_copy(update={"no_mmap": False, "mlock": False})

    def weights(profile):
        return next(t for t in plan_profile(profile, gpu_memory=24 * GIB).terms if t.label == "target weights")

    copy = weights(cpu).bytes - weights(mapped).bytes
    assert 1.1e9 < copy < 1.2e9 and "tied output copy" in weights(cpu).detail
    assert weights(gpu).bytes == weights(mapped).bytes
