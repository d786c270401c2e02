"""The Python half of scripts/device-check.sh: the machine's facts, one profile's synthetic run with its speed, a
record per step, and the JSON they make together.

  python scripts/device_report.py machine OUT.json
  python scripts/device_report.py verify CARRY                  sizes and sha256 of CARRY/MANIFEST.json's files
  python scripts/device_report.py step RECORDS.jsonl NAME RC SECONDS LOG
  python scripts/device_report.py profile NAME --engine KEY --json OUT.json [--ctx-size N] [--layers N]
                                  [--prompt-tokens N] [--gen-tokens N]
  python scripts/device_report.py merge WORK OUT.json

`profile` is `agent serve --profile NAME --synthetic` (the same function: `run_synthetic`) with a longer request,
so that the engine's own timing lines give prefill and decode speed at the file's shape; its exit status is the
command's (0 when every term of the plan is within 10% or 0.25 GB of what the engine allocated). Only `profile`
imports the project; the rest is the standard library, so a step's record survives a broken environment.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

# Peak memory bandwidth of common NVIDIA GPUs in GB/s (NVIDIA's data sheets), matched on nvidia-smi's name in
# this order (the first fragment found wins). A GPU not listed gets it from its memory clock and bus width.
BANDWIDTH_GBS = [
    ("H200", 4800),
    ("H100 NVL", 3900),
    ("H100 PCIe", 2000),
    ("H100", 3350),  # SXM5, HBM3 ("NVIDIA H100 80GB HBM3")
    ("GH200", 4000),
    ("B200", 8000),
    ("A100-SXM4-80GB", 2039),
    ("A100 80GB PCIe", 1935),
    ("A100", 1555),
    ("L40S", 864),
    ("L40", 864),
    ("L4", 300),
    ("A10", 600),
    ("RTX 6000 Ada", 960),
    ("RTX 5090", 1792),
    ("RTX 4090", 1008),
    ("RTX 4080", 717),
    ("RTX 3090 Ti", 1008),
    ("RTX 3090", 936),
]
LOG_TAIL_LINES = 40
PROMPT_EVAL = re.compile(r"prompt eval time =\s*([\d.]+) ms /\s*(\d+) tokens.*?([\d.]+) tokens per second")
EVAL = re.compile(r"(?<!prompt)\s+eval time =\s*([\d.]+) ms /\s*(\d+) tokens.*?([\d.]+) tokens per second")
ACCEPTANCE = re.compile(r"draft acceptance = ([\d.]+) \(\s*(\d+) accepted /\s*(\d+) generated\)")


def tail(text: str, lines: int = LOG_TAIL_LINES) -> str:
    return "\n".join(text.splitlines()[-lines:])


# ---------------------------------------------------------------- machine


def bandwidth(name: str, memory_clock_mhz: float | None, bus_width_bits: int | None) -> tuple[float | None, str]:
    """Peak memory bandwidth in bytes/s and where the figure comes from."""
    for fragment, gbs in BANDWIDTH_GBS:
        if fragment.lower() in name.lower():
            return gbs * 1e9, f"data sheet ({fragment}: {gbs} GB/s)"
    if memory_clock_mhz and bus_width_bits:  # double data rate: two transfers per clock
        return 2 * memory_clock_mhz * 1e6 * bus_width_bits / 8, "memory clock x bus width"
    return None, "unknown (not in the table; no bus width)"


def _bus_width_bits() -> int | None:
    """The GPU's memory bus width (cudaDevAttrGlobalMemoryBusWidth = 37) through CuPy, where it is installed."""
    try:
        import cupy  # type: ignore[import-not-found]

        return int(cupy.cuda.runtime.deviceGetAttribute(37, 0))
    except (ImportError, AttributeError, OSError, RuntimeError):  # no CuPy, GPU or driver (CUDARuntimeError)
        return None


def machine(out: Path) -> None:
    facts: dict[str, Any] = {
        "python": sys.version.split()[0],
        "cpus": _cpu_count(),
        "uname": " ".join(_run(["uname", "-srm"]).split()),
        "gpu": None,
    }
    if shutil.which("nvidia-smi"):
        query = "name,memory.total,compute_cap,driver_version,clocks.max.memory"
        line = _run(["nvidia-smi", f"--query-gpu={query}", "--format=csv,noheader,nounits"]).splitlines()
        if line:
            name, total, cap, driver, clock = (p.strip() for p in line[0].split(","))
            clock_mhz = float(clock) if clock.replace(".", "").isdigit() else None
            bus = _bus_width_bits()
            bw, source = bandwidth(name, clock_mhz, bus)
            facts["gpu"] = {
                "name": name,
                "memory_total_bytes": int(total) * 1024**2,
                "compute_cap": cap,
                "driver": driver,
                "memory_clock_max_mhz": clock_mhz,
                "bus_width_bits": bus,
                "bandwidth_bytes_per_s": bw,
                "bandwidth_source": source,
            }
    out.write_text(json.dumps(facts, indent=2) + "\n")
    print(json.dumps(facts, indent=2))


def _cpu_count() -> int:
    import os

    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)


def _run(argv: list[str]) -> str:
    try:
        return subprocess.run(argv, capture_output=True, text=True, timeout=30).stdout
    except (OSError, subprocess.SubprocessError):
        return ""


# ---------------------------------------------------------------- carry folder


def verify(carry: Path) -> int:
    """0 when every file MANIFEST.json lists is there with its size and sha256; else 1, naming each bad one."""
    manifest = json.loads((carry / "MANIFEST.json").read_text())
    bad = []
    for entry in manifest["files"]:
        path = carry / entry["path"]
        if not path.is_file():
            bad.append(f"{entry['path']}: missing")
        elif path.stat().st_size != entry["bytes"] or hashlib.sha256(path.read_bytes()).hexdigest() != entry["sha256"]:
            bad.append(f"{entry['path']}: size or sha256 differs from the manifest")
    for line in bad:
        print(line)
    print(f"{len(manifest['files']) - len(bad)} of {len(manifest['files'])} files as the manifest says ({carry})")
    return 1 if bad else 0


# ---------------------------------------------------------------- steps


def step(records: Path, name: str, rc: int, seconds: float, log: Path) -> None:
    text = log.read_text(errors="replace") if log.is_file() else ""
    record = {"name": name, "ok": rc == 0, "rc": rc, "timed_out": rc in (124, 137), "seconds": seconds}
    if rc != 0:
        record["log_tail"] = tail(text)
    with records.open("a") as fh:
        fh.write(json.dumps(record) + "\n")


# ---------------------------------------------------------------- one profile


def prompt_of(tokens: int) -> str:
    """A code prompt of about `tokens` tokens (with the chat template, a line of this shape is about 21 Gemma
    tokens: 18 lines made a 409-token prompt); the engine's log gives the exact count."""
    lines = [f"def add_{i}(x: int) -> int:\n    return x + {i}\n" for i in range(max(1, tokens // 21))]
    return "Continue this module in the same style.\n\n" + "".join(lines)


def timings(log_text: str) -> dict[str, Any]:
    """The engine's own figures for the last request: prefill and decode tokens and speed, draft acceptance."""
    found: dict[str, Any] = {}
    if prompt := PROMPT_EVAL.findall(log_text):
        ms, n, rate = prompt[-1]
        found |= {"prompt_tokens": int(n), "prompt_ms": float(ms), "prefill_tok_s": float(rate)}
    if gen := EVAL.findall(log_text):
        ms, n, rate = gen[-1]
        found |= {"gen_tokens": int(n), "gen_ms": float(ms), "decode_tok_s": float(rate)}
    if acc := ACCEPTANCE.findall(log_text):
        ratio, accepted, drafted = acc[-1]
        found |= {"draft_acceptance": float(ratio), "draft_accepted": int(accepted), "draft_generated": int(drafted)}
    return found


def decode_limit(terms: list[dict[str, Any]], bandwidth_bytes_per_s: float | None) -> dict[str, Any]:
    """Decode is bandwidth-bound: each target pass reads every weight once, so one token per pass cannot come
    faster than bandwidth / weight bytes (the drafter's weights too when it runs each step)."""
    weights = sum(t["measured"] or t["planned"] for t in terms if t["label"] in ("target weights", "draft weights"))
    if not bandwidth_bytes_per_s or not weights:
        return {"weights_bytes_per_pass": weights or None, "decode_limit_tok_s": None}
    return {"weights_bytes_per_pass": weights, "decode_limit_tok_s": round(bandwidth_bytes_per_s / weights, 1)}


def profile(args: argparse.Namespace) -> int:
    from agent.settings.config import user_profiles
    from inference.profiles import get_profile, with_overrides
    from inference.shapes.synth import synthetic_dir
    from inference.shapes.synthrun import run_synthetic

    def out_of_time(*_: object) -> None:
        """A time box's TERM: show where the server got to, then unwind (the server is stopped on the way out,
        not left holding the GPU)."""
        logs = sorted(
            (synthetic_dir() / "logs").glob(f"llama-server-{args.name}-*.log"), key=lambda p: p.stat().st_mtime
        )
        if logs:
            print(f"out of time; {logs[-1]} ends:\n{tail(logs[-1].read_text(errors='replace'))}", flush=True)
        sys.exit(124)

    signal.signal(signal.SIGTERM, out_of_time)
    chosen = with_overrides(get_profile(args.name, user_profiles()), args.ctx_size, None)
    started = time.monotonic()
    report = run_synthetic(
        chosen,
        engine_key=args.engine,
        layers=args.layers,
        prompt=prompt_of(args.prompt_tokens),
        max_tokens=args.gen_tokens,
    )
    print(f"$ {report.command}\n{report.render()}", flush=True)
    log_text = Path(report.log).read_text(errors="replace")
    terms = [
        {"label": t.label, "planned": t.planned, "measured": t.measured, "agrees": t.agrees, "detail": t.detail}
        for t in report.terms
    ]
    machine_facts = json.loads(args.machine.read_text()) if args.machine and args.machine.is_file() else {}
    gpu = machine_facts.get("gpu") or {}
    speed = timings(log_text)
    limit = decode_limit(terms, gpu.get("bandwidth_bytes_per_s"))
    if limit["decode_limit_tok_s"] and "decode_tok_s" in speed:
        limit["decode_fraction_of_limit"] = round(speed["decode_tok_s"] / limit["decode_limit_tok_s"], 3)
    result = {
        "profile": report.profile,
        "ok": report.ok,
        "exit": 0 if report.ok else 1,
        "ctx_size": chosen.ctx_size,
        "layers": args.layers or "all",
        "seconds": round(time.monotonic() - started, 1),
        "command": report.command,
        "terms": terms,
        "planned_total_bytes": sum(t["planned"] for t in terms),
        "measured_total_bytes": sum(t["measured"] or 0 for t in terms),
        "gpu_process_bytes": report.gpu_process_bytes,
        "host_rss": report.host_rss,
        "drafted": report.drafted,
        "accepted": report.accepted,
        "speed": speed,
        "bandwidth": {"bytes_per_s": gpu.get("bandwidth_bytes_per_s"), "source": gpu.get("bandwidth_source")} | limit,
        "table": report.render(),
        "log": report.log,
        "log_tail": tail(log_text),
    }
    args.json.write_text(json.dumps(result, indent=2) + "\n")
    return result["exit"]


# ---------------------------------------------------------------- all together


def merge(work: Path, out: Path) -> None:
    report: dict[str, Any] = {"finished": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
    for name in ("args", "machine", "engine"):
        path = work / "report" / f"{name}.json"
        report[name] = json.loads(path.read_text()) if path.is_file() else None
    records = work / "report" / "steps.jsonl"
    report["steps"] = [json.loads(line) for line in records.read_text().splitlines()] if records.is_file() else []
    report["profiles"] = {
        p.stem.removeprefix("profile-"): json.loads(p.read_text())
        for p in sorted((work / "report").glob("profile-*.json"))
    }
    report["ok"] = bool(report["steps"]) and all(s["ok"] for s in report["steps"])
    out.write_text(json.dumps(report, indent=2) + "\n")
    for s in report["steps"]:
        print(f"  {s['name']:<34} {'ok' if s['ok'] else 'FAILED rc=' + str(s['rc']):<12} {s['seconds']:>7.1f} s")
    for name, p in report["profiles"].items():
        speed = p.get("speed", {})
        print(
            f"  {name}: plan {'agrees' if p['ok'] else 'is OFF'}; prefill {speed.get('prefill_tok_s')} tok/s, "
            f"decode {speed.get('decode_tok_s')} tok/s (limit {p['bandwidth'].get('decode_limit_tok_s')}), "
            f"GPU process {p.get('gpu_process_bytes')} bytes"
        )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("machine").add_argument("out", type=Path)
    sub.add_parser("verify").add_argument("carry", type=Path)
    s = sub.add_parser("step")
    s.add_argument("records", type=Path)
    s.add_argument("name")
    s.add_argument("rc", type=int)
    s.add_argument("seconds", type=float)
    s.add_argument("log", type=Path)
    p = sub.add_parser("profile")
    p.add_argument("name")
    p.add_argument("--engine", required=True)
    p.add_argument("--json", type=Path, required=True)
    p.add_argument("--machine", type=Path)
    p.add_argument("--ctx-size", type=int)
    p.add_argument("--layers", type=int)
    p.add_argument("--prompt-tokens", type=int, default=2048)
    p.add_argument("--gen-tokens", type=int, default=128)
    m = sub.add_parser("merge")
    m.add_argument("work", type=Path)
    m.add_argument("out", type=Path)
    args = parser.parse_args(argv)
    if args.command == "machine":
        machine(args.out)
    elif args.command == "verify":
        return verify(args.carry)
    elif args.command == "step":
        step(args.records, args.name, args.rc, args.seconds, args.log)
    elif args.command == "profile":
        return profile(args)
    else:
        merge(args.work, args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
