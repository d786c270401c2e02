"""A memory plan for one profile, before anything is downloaded or started: llama-server's terms
(inference/plans/llama_server.py) or vLLM's and SGLang's per GPU (inference/plans/vllm_sglang.py), built from
the pieces in inference/plans/terms.py."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from inference.plans.llama_server import build_plan
from inference.plans.terms import MemoryPlan, device_memory, host_memory, model_facts
from inference.plans.vllm_sglang import plan_python_engine


def engine_logits(capabilities) -> Literal["ubatch", "outputs"]:
    """The plan's engine family from its `--help`: upstream llama.cpp (the upstream DFlash dialect) reserves
    logits for each sequence's output; older trees (BeeLlama v0.2) for a whole ubatch, and back each slot up."""
    return "outputs" if capabilities.dflash_dialect == "upstream" else "ubatch"


def plan_profile(
    profile,
    *,
    paths: dict[str, Path] | None = None,
    gpu_memory: int | None = None,
    logits: Literal["ubatch", "outputs"] = "ubatch",
) -> MemoryPlan:
    """The plan of `profile` on this machine (or on a card of `gpu_memory` bytes), its host side against this
    machine's available RAM; `logits` as in build_plan."""
    if profile.engine != "llama-server":  # vLLM / SGLang: Hugging Face checkpoints, per GPU
        return plan_python_engine(profile, gpu_memory)
    paths = paths or {}
    target = model_facts(profile.target, paths.get(profile.target))
    draft = model_facts(profile.draft, paths.get(profile.draft)) if profile.draft else None
    available, where = device_memory(profile.device, gpu_memory, profile.devices)
    ram, ram_from = host_memory()
    return build_plan(
        profile,
        target,
        draft,
        available=available,
        available_from=where,
        logits=logits,
        host_available=ram,
        host_available_from=ram_from,
    )
