"""Hugging Face checkpoints that vLLM and SGLang load (safetensors, not GGUF): what a memory plan needs to know
before anything is downloaded, and whether the repository is gated.

The engines download these themselves (through `huggingface_hub`, which reads `HF_TOKEN` or the token saved by
`hf auth login`); we never fetch them and never pass a token on a command line.
"""

from __future__ import annotations

from pydantic import BaseModel

from inference.models import GEMMA4_31B
from inference.shapes.shape import ModelShape


class Checkpoint(BaseModel):
    repo: str
    description: str
    weights: int  # bytes of the weights as stored (BF16 here), approximate
    shape: ModelShape  # the text model's layers (Gemma 4: per-layer KV heads and head sizes)
    gated: bool = False  # the repository asks each user to accept its terms and to log in

    @property
    def url(self) -> str:
        return f"https://huggingface.co/{self.repo}"


assert GEMMA4_31B.shape is not None, "the catalog knows Gemma 4's layers"
GEMMA4_31B_BF16 = Checkpoint(
    repo="google/gemma-4-31B-it",
    description="Gemma 4 31B instruct, BF16 (about 62 GB: H100/H200 class, or several GPUs)",
    weights=62_000_000_000,
    shape=GEMMA4_31B.shape,  # the same network as the GGUF: 60 layers, 5 sliding : 1 global
)

# z-lab's DFlash drafter for it: 5 layers, hidden 5376, 8 KV heads x 128, block 16, reading target layers
# [1, 12, 23, 35, 46, 57]; its embeddings and LM head are the target's. BF16 about 3.1 GB (a Q8_0 GGUF of it is
# 1.63 GB, "53% of BF16", per the Lucebox/gemma-4-31B-it-DFlash-GGUF model card). The engines give it one KV
# slot per target token (SGLang's --speculative-draft-kv-cache-dtype help), so its cache grows with the context;
# some of its layers slide (a 2048 window; vLLM 0.33.0 qwen3_dflash.py names this checkpoint as "mixed layer
# types"), so counting every layer at full context is an upper bound.
GEMMA4_31B_DFLASH_BF16 = Checkpoint(
    repo="z-lab/gemma-4-31B-it-DFlash",
    description="DFlash drafter for Gemma 4 31B, BF16 (about 3.1 GB); gated on Hugging Face",
    weights=3_100_000_000,
    shape=ModelShape(
        arch="dflash",
        layers=5,
        embedding=5376,
        vocab=262144,
        kv_heads=[8] * 5,
        key_length=[128] * 5,
        value_length=[128] * 5,
        dflash_block_size=16,
        dflash_target_layers=6,
    ),
    gated=True,
)

CHECKPOINTS: dict[str, Checkpoint] = {c.repo: c for c in (GEMMA4_31B_BF16, GEMMA4_31B_DFLASH_BF16)}


def get_checkpoint(repo: str) -> Checkpoint | None:
    """The known facts of a checkpoint, or None (a local folder or a repository we have no facts for)."""
    return CHECKPOINTS.get(repo)
