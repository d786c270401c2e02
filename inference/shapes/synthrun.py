"""`agent serve --profile P --synthetic`: the profile's real engine on synthetic files of its models (the real
header over sparse zero weights), one short request, then what the engine allocated (its log's model, KV and
compute buffers per device; on a GPU also the process's memory from nvidia-smi) beside the memory plan, term by
term. A term agrees when the two are within 10% or 0.25 GB of each other.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import httpx
from pydantic import BaseModel

from inference.backends import metrics
from inference.memplan import engine_logits, plan_profile
from inference.plans.terms import MemoryPlan, gb
from inference.profiles import Profile
from inference.shapes.synth import synthetic_dir, write_synthetic

TOLERANCE_REL, TOLERANCE_ABS = 0.10, 0.25e9
MIB = 1024**2
# llama.cpp's allocation lines (src/llama-model.cpp, llama-kv-cache.cpp, llama-context.cpp): "<fn>: <buffer> <kind>
# buffer size = <n> MiB"; the drafter's follow the "loading draft model" line.
BUFFER = re.compile(r"(\S+)\s+(model|KV|compute|output|RS) buffer size =\s*([\d.]+) MiB")
DRAFT_START = re.compile(r"loading draft model|speculative_init|load_model: loading draft", re.IGNORECASE)
# the end of llama.cpp's memory fitting (`-fit`), which builds a trial context first: BeeLlama v0.2.0 logs that
# context's buffers at info level (a 0 MiB model and KV, a full compute buffer), so they are dropped here
FIT_DONE = re.compile(r"fitting params to (?:free|device) memory took")
# a request has started: a compute buffer reported after this with a size already reported for that model is a
# graph reserved again (BeeLlama's drafter on its first draft: 142.5 MiB twice), not a buffer of its own;
# upstream's drafter reserves a new, smaller one then, which counts
SERVING = re.compile(r"launch_slot_")
TERM_OF = {
    ("target", "model"): "target weights",
    ("target", "KV"): "target KV cache",
    ("target", "RS"): "target KV cache",
    ("target", "compute"): "target compute",
    ("target", "output"): "target compute",
    ("draft", "model"): "draft weights",
    ("draft", "KV"): "draft KV cache",
    ("draft", "RS"): "draft KV cache",
    ("draft", "compute"): "draft compute",
    ("draft", "output"): "draft compute",
}


class Allocation(BaseModel):
    model: str  # "target" or "draft"
    kind: str  # model, KV, compute, output, RS
    buffer: str  # CPU, CUDA0, CPU_Mapped, ...
    bytes: int


class TermCheck(BaseModel):
    label: str
    planned: int
    measured: int | None  # None: the engine's log says nothing about this term
    detail: str = ""

    @property
    def agrees(self) -> bool:
        if self.measured is None:
            return True
        diff = abs(self.planned - self.measured)
        return diff <= TOLERANCE_ABS or diff <= TOLERANCE_REL * max(self.measured, 1)


class SyntheticReport(BaseModel):
    profile: str
    command: str
    terms: list[TermCheck]
    drafted: int | None = None  # /metrics: tokens drafted (speculative profiles)
    accepted: int | None = None
    gpu_process_bytes: int | None = None
    host_rss: dict[str, int] = {}  # /proc/PID/status after the request: RssAnon (allocated), RssFile (mapped), VmHWM
    host_planned: int | None = None  # the plan's host RAM at most: host terms (+ the device's on a CPU)
    log: str

    @property
    def host_within_plan(self) -> bool:
        """The process's peak RSS is under the plan's host side (an upper bound: caches fill over a session)."""
        peak = self.host_rss.get("VmHWM")
        return peak is None or self.host_planned is None or peak <= self.host_planned + TOLERANCE_ABS

    @property
    def ok(self) -> bool:
        return all(t.agrees for t in self.terms) and self.host_within_plan

    def render(self) -> str:
        width = max(len(t.label) for t in self.terms)
        lines = [f"{self.profile}: plan vs measured (engine log)", f"  {'term':<{width}}  {'plan':>9}  {'measured':>9}"]
        for t in self.terms:
            measured = gb(t.measured) if t.measured is not None else "-"
            mark = "ok" if t.measured is None or t.agrees else "OFF"
            lines.append(f"  {t.label:<{width}}  {gb(t.planned):>9}  {measured:>9}  {mark if t.measured else ''}")
        if self.host_rss:
            lines.append(
                "  host RAM of the process: "
                + ", ".join(f"{k} {gb(v)}" for k, v in self.host_rss.items())
                + " (RssFile: the weights' mapped pages it touched)"
            )
        if self.host_planned is not None and "VmHWM" in self.host_rss:
            lines.append(
                f"  {'host RAM, peak':<{width}}  {gb(self.host_planned):>9}  {gb(self.host_rss['VmHWM']):>9}  "
                + ("ok" if self.host_within_plan else "OVER")
                + " (plan: the host side at most; measured: the peak RSS, VmHWM)"
            )
        if self.gpu_process_bytes is not None:
            lines.append(f"  GPU memory of the process (nvidia-smi): {gb(self.gpu_process_bytes)}")
        if self.drafted is not None:
            lines.append(f"  drafted tokens: {self.drafted}, accepted: {self.accepted}")
        verdict = "every term within 10% or 0.25 GB" if self.ok else "some terms are off by more than 10% and 0.25 GB"
        if not self.host_within_plan:
            verdict = "the peak RSS is over the plan's host side" + (
                "" if all(t.agrees for t in self.terms) else "; " + verdict
            )
        lines.append(f"{verdict}; log: {self.log}")
        return "\n".join(lines)


def parse_allocations(log_text: str) -> list[Allocation]:
    """Every buffer the engine reported, the target's before the drafter's, less those of memory fitting's
    trial context (upstream logs them at debug level, below the trace level we ask for; BeeLlama at info) and
    compute buffers reserved again, at the same size, once requests run."""
    found: list[Allocation] = []
    model, serving = "target", False
    for line in log_text.splitlines():
        if DRAFT_START.search(line):
            model = "draft"
        if FIT_DONE.search(line):
            found = [a for a in found if a.model != model]
        serving = serving or bool(SERVING.search(line))
        match = BUFFER.search(line)
        if match:
            buffer, kind, mib = match.groups()
            allocation = Allocation(model=model, kind=kind, buffer=buffer, bytes=int(float(mib) * MIB))
            if not (serving and kind == "compute" and allocation in found):
                found.append(allocation)
    return found


def compare(plan: MemoryPlan, allocations: list[Allocation]) -> list[TermCheck]:
    measured: dict[str, int] = {}
    parts: dict[str, list[str]] = {}
    for a in allocations:
        label = TERM_OF.get((a.model, a.kind))
        if label is None:
            continue
        measured[label] = measured.get(label, 0) + a.bytes
        parts.setdefault(label, []).append(f"{a.buffer} {a.kind} {gb(a.bytes)}")
    checks = [
        TermCheck(
            label=t.label, planned=t.bytes, measured=measured.get(t.label), detail=", ".join(parts.get(t.label, []))
        )
        for t in plan.terms
    ]
    planned = {t.label for t in plan.terms}
    checks += [
        TermCheck(label=label, planned=0, measured=n, detail=", ".join(parts[label]))
        for label, n in measured.items()
        if label not in planned
    ]
    return checks


def synthetic_paths(profile: Profile, layers: int | None) -> dict[str, Path]:
    """Synthetic files of the profile's models (a drafter paired with the target's layer count)."""
    return {m: write_synthetic(m, layers=layers) for m in profile.models()}


def run_synthetic(
    profile: Profile,
    *,
    engine_key: str | None = None,
    layers: int | None = None,
    prompt: str = "Write a Python function that adds two numbers.",
    max_tokens: int = 16,
) -> SyntheticReport:
    """Start the profile's engine on synthetic files, send one request, stop it, and compare its allocations
    with the plan. The plan is made for the same files (so a cut to fewer layers is planned alike)."""
    from inference.hardware import nvidia_gpus
    from inference.server import ManagedServer, choose_engine

    if profile.device == "gpu" and not nvidia_gpus():
        profile = profile.model_copy(update={"device": "cpu"})  # the same recipe, run on this machine's CPU
    engine = choose_engine(profile, engine_key)
    if profile.device == "cpu" and engine.capabilities.has("--no-repack"):
        # weights stay in the mapped file, as they stay in device buffers on a GPU; repacked, a CPU holds a
        # second copy of them (AMX / CPU_REPACK buffers) that no GPU plan has
        profile = profile.model_copy(update={"extra_args": [*profile.extra_args, "--no-repack"]})
    if engine.capabilities.has("-lv"):  # upstream logs its buffer sizes at verbosity 4 (trace)
        profile = profile.model_copy(update={"extra_args": [*profile.extra_args, "-lv", "4"]})
    paths = synthetic_paths(profile, layers)
    plan = plan_profile(profile, paths=paths, logits=engine_logits(engine.capabilities))
    server = ManagedServer(engine, profile, model_paths=paths, log_dir=synthetic_dir() / "logs")
    with server:
        headers = {"Authorization": f"Bearer {server.api_key}"} if server.api_key else {}
        try:
            httpx.post(
                f"{server.url}/chat/completions",
                json={"messages": [{"role": "user", "content": prompt}], "max_tokens": max_tokens, "temperature": 0},
                headers=headers,
                timeout=1800,
            ).raise_for_status()
        except httpx.HTTPError as exc:
            raise server._failure(f"the request failed ({exc})") from None
        figures = metrics.parse(httpx.get(f"http://{server.host}:{server.port}/metrics", timeout=30).text)
        gpu = _gpu_process_bytes(server.process.pid if server.process else 0)
        rss = _host_rss(server.process.pid if server.process else 0)
    log_text = server.log_path.read_text(errors="replace")
    drafted = figures.drafted_tokens if figures else None
    accepted = figures.accepted_tokens if figures else None
    return SyntheticReport(
        profile=profile.name,
        command=log_text.splitlines()[0].removeprefix("$ ") if log_text else "",
        terms=compare(plan, parse_allocations(log_text)),
        drafted=int(drafted) if drafted is not None else None,
        accepted=int(accepted) if accepted is not None else None,
        gpu_process_bytes=gpu,
        host_rss=rss,
        host_planned=plan.host_total,
        log=str(server.log_path),
    )


def _gpu_process_bytes(pid: int) -> int | None:
    """The process's GPU memory (nvidia-smi), None without a GPU."""
    try:
        out = subprocess.run(
            ["nvidia-smi", "--query-compute-apps=pid,used_memory", "--format=csv,noheader,nounits"],
            capture_output=True,
            text=True,
            timeout=20,
        ).stdout
    except (OSError, subprocess.SubprocessError):
        return None
    used = [int(m) for p, m in (line.split(",") for line in out.strip().splitlines() if "," in line) if int(p) == pid]
    return sum(used) * MIB if used else None


def _host_rss(pid: int) -> dict[str, int]:
    """VmRSS, RssAnon, RssFile and VmHWM (the peak RSS) of a process (Linux), in bytes; empty where /proc has none."""
    try:
        text = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return {}
    found = re.findall(r"^(VmHWM|VmRSS|RssAnon|RssFile):\s+(\d+) kB", text, re.MULTILINE)
    return {name: int(kb) * 1024 for name, kb in found}
