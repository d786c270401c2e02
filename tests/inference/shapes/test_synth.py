"""Synthetic GGUF files: the real header over sparse zero weights."""

from __future__ import annotations

from inference.models import CATALOG
from inference.plans.terms import model_facts
from inference.shapes.shape import ModelShape
from inference.shapes.synth import read_header, write_synthetic


def test_the_synthetic_qwen_header_is_the_real_ones(qwen_path, tmp_path):
    """Every key with its type and value (token, type and merge arrays included), every tensor's name, type and
    shape in file order, and the file's size: the published Qwen2.5-Coder-1.5B Q4_K_M file's."""
    synthetic = write_synthetic("qwen2.5-coder-1.5b", tmp_path / "q.gguf")
    real_kv, real_tensors = read_header(qwen_path)
    kv, tensors = read_header(synthetic)
    assert list(kv) == list(real_kv)
    for key in real_kv:
        assert kv[key] == real_kv[key], key
    assert tensors == real_tensors
    assert synthetic.stat().st_size == qwen_path.stat().st_size
    assert synthetic.stat().st_blocks * 512 < 16 * 1024**2  # a hole, not 1.1 GB of zeros


def test_the_gemma_target_carries_the_catalogs_shape(tmp_path):
    path = write_synthetic("gemma4-31b", tmp_path / "m.gguf")
    kv, tensors = read_header(path)
    assert kv["general.architecture"][2] == "gemma4"
    assert len(tensors) == 833  # as the published 31B GGUFs
    assert ModelShape.from_gguf(path) == CATALOG["gemma4-31b"].shape
    assert 17e9 < path.stat().st_size < 18e9  # the Q4_K_S file's size (about 17.5 GB) ...
    assert path.stat().st_blocks * 512 < 32 * 1024**2  # ... as a hole


def test_drafter_metadata_uses_each_formats_real_keys(tmp_path):
    bee = write_synthetic("gemma4-31b-dflash", tmp_path / "bee.gguf")
    upstream = write_synthetic("gemma4-31b-dflash-upstream", tmp_path / "up.gguf")
    bee_kv, _ = read_header(bee)
    up_kv, _ = read_header(upstream)
    assert bee_kv["dflash-draft.dflash.block_size"][2] == 16  # BeeLlama src/llama-arch.cpp
    assert bee_kv["dflash-draft.dflash.target_layer_ids"][2] == [1, 12, 23, 35, 46, 57]
    assert up_kv["dflash.block_size"][2] == 16  # upstream src/models/dflash.cpp
    assert up_kv["tokenizer.ggml.mask_token_id"][2] == 4  # common/speculative.cpp drafts from it
    assert up_kv["dflash.target_layers"][2] == [2, 13, 24, 36, 47, 58]  # conversion/qwen.py: ids + 1
    for path in (bee, upstream):  # read from the file, not saved by defaults
        shape = model_facts("gemma4-31b-dflash", path).shape
        assert shape.dflash_block_size == 16 and shape.dflash_target_layers == 6


def test_fewer_layers_keep_the_per_layer_pattern(tmp_path):
    target = ModelShape.from_gguf(write_synthetic("gemma4-31b", tmp_path / "t.gguf", layers=12))
    assert target.layers == 12 and target.kv_heads == [16, 16, 16, 16, 16, 4] * 2
    kv, tensors = read_header(write_synthetic("gemma4-31b-dflash-upstream", tmp_path / "d.gguf", layers=12))
    assert max(kv["dflash.target_layers"][2]) < 12
    fc = next(t for t in tensors if t[0] == "fc.weight")
    assert fc[2] == [len(kv["dflash.target_layers"][2]) * 5376, 5376]
