"""`agent serve --synthetic`: plan vs what the engine allocated."""

from __future__ import annotations

from inference.plans.terms import MemoryPlan, PlanTerm
from inference.profiles import get_profile
from inference.shapes.synthrun import compare, parse_allocations, run_synthetic

MIB = 1024**2


def test_the_trial_context_of_memory_fitting_is_not_counted():
    """BeeLlama v0.2.0 logs the trial context `-fit` builds at info level (lines of a real CPU log, timestamps
    cut): its compute buffer counted twice read 1.24 GB against a plan of 0.62 GB."""
    log = "\n".join(
        [
            "I common_init_result: fitting params to device memory, for bugs during this step try to reproduce them",
            "I load_tensors:          CPU model buffer size =     0.00 MiB",
            "I llama_context:        CPU  output buffer size =     1.00 MiB",
            "I llama_kv_cache:        CPU KV buffer size =     0.00 MiB",
            "I sched_reserve:        CPU compute buffer size =   590.29 MiB",
            "I common_params_fit_impl: projected to use 6209 MiB of host memory vs. 24105 MiB of total host memory",
            "I common_fit_params: successfully fit params to free device memory",
            "I common_fit_params: fitting params to free memory took 0.85 seconds",
            "I load_tensors:   CPU_Mapped model buffer size =  4269.94 MiB",
            "I llama_kv_cache:        CPU KV buffer size =   168.00 MiB",
            "I sched_reserve:        CPU compute buffer size =   590.29 MiB",
        ]
    )
    found = parse_allocations(log)
    assert [(a.kind, round(a.bytes / MIB)) for a in found] == [("model", 4270), ("KV", 168), ("compute", 590)]


def test_log_buffers_map_to_plan_terms_and_the_tolerance_decides():
    log = "\n".join(
        [
            "load_tensors:   CPU_Mapped model buffer size =  4000.00 MiB",
            "llama_kv_cache:        CPU KV buffer size =   100.00 MiB",
            "llama_kv_cache:        CPU KV buffer size =    50.00 MiB",
            "llama_context:        CPU  output buffer size =     1.00 MiB",
            "sched_reserve:        CPU compute buffer size =   600.00 MiB",
            "common_speculative_init_result: loading draft model '/x/d.gguf'",
            "load_tensors:   CPU_Mapped model buffer size =  1000.00 MiB",
            "llama_kv_cache:        CPU KV buffer size =    80.00 MiB",
            "sched_reserve:        CPU compute buffer size =   900.00 MiB",
        ]
    )
    found = parse_allocations(log)
    assert sum(a.bytes for a in found if a.model == "target" and a.kind == "KV") == 150 * MIB
    plan = MemoryPlan(
        profile="p",
        device="cpu",
        available=None,
        available_from="",
        terms=[
            PlanTerm(label="target weights", bytes=4000 * MIB, detail=""),
            PlanTerm(label="target KV cache", bytes=150 * MIB, detail=""),
            PlanTerm(label="target compute", bytes=601 * MIB, detail=""),
            PlanTerm(label="draft weights", bytes=1000 * MIB, detail=""),
            PlanTerm(label="draft KV cache", bytes=80 * MIB, detail=""),
            PlanTerm(label="draft compute", bytes=300 * MIB, detail=""),  # 600 MiB short: off
            PlanTerm(label="runtime", bytes=256 * MIB, detail=""),  # not in the log: not judged
        ],
    )
    checks = {c.label: c for c in compare(plan, found)}
    assert checks["target compute"].measured == 601 * MIB and checks["target compute"].agrees
    assert not checks["draft compute"].agrees
    assert checks["runtime"].measured is None and checks["runtime"].agrees


def test_dflash_upstream_drafts_on_a_synthetic_gemma(engine):
    """The upstream engine from the PyPI sdist runs Gemma 4 31B's per-layer shape (cut to 6 layers) with an
    upstream-format DFlash drafter: it drafts, and every term of the plan matches what it allocated."""
    profile = get_profile("gemma4-31b-dflash-upstream").model_copy(update={"ctx_size": 2048})
    report = run_synthetic(profile, engine_key=engine.key, layers=6, max_tokens=8)
    assert report.drafted is not None and report.drafted > 0, report.render()
    assert report.ok, report.render()


def test_the_peak_rss_is_judged_against_the_plans_host_side():
    """The host side is an upper bound (caches fill over a session): a peak RSS under it passes, one over fails."""
    from inference.shapes.synthrun import SyntheticReport, TermCheck

    term = TermCheck(label="target KV cache", planned=150 * MIB, measured=150 * MIB)
    under = SyntheticReport(
        profile="p", command="", terms=[term], host_rss={"VmHWM": 2000 * MIB}, host_planned=9000 * MIB, log="x"
    )
    assert under.ok and "host RAM, peak" in under.render() and "ok (plan: the host side at most" in under.render()
    over = under.model_copy(update={"host_rss": {"VmHWM": 9500 * MIB}})
    assert not over.ok and "OVER" in over.render() and "the peak RSS is over the plan's host side" in over.render()


def test_a_compute_graph_reserved_again_during_a_request_counts_once_and_a_new_one_counts():
    """BeeLlama's drafter reserves its graph again on the first draft (the same size); upstream's reserves a
    buffer of its own then (a new size)."""

    def drafter(*during: float) -> list[int]:
        lines = [
            "srv load_model: loading draft model '/x/d.gguf'",
            "0.01.587.622 I sched_reserve:        CPU compute buffer size =   142.50 MiB",  # as the engine prints
        ]
        lines += ["slot launch_slot_: id  0 | task 0 | processing task"]
        lines += [f"0.02.101.004 I sched_reserve:        CPU compute buffer size =   {mib:.2f} MiB" for mib in during]
        return [round(a.bytes / MIB, 1) for a in parse_allocations("\n".join(lines)) if a.kind == "compute"]

    assert drafter(142.5) == [142.5]
    assert drafter(245.0) == [142.5, 245.0]
