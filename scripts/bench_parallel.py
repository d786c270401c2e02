"""Many agents on one server: the same refactor over REPOS generated repositories at N = 1, 2, 4 repos at once,
each N on one llama-server with N slots (`agent refactor --parallel N`). Prints and writes (OUT/parallel.md,
parallel.json, parallel.png) tasks per hour, verified tasks, total generated tokens per second and wall time.

    .venv/bin/python scripts/bench_parallel.py [--profile qwen-cpu-ngram] [--slots 1,2,4] [--repos 4] [--out DIR]

The repositories are small Python shops whose tests pass, in three layouts (the function to rename is used from
one, two or three other modules); the check is the tests plus no use of the old name left.
"""

from __future__ import annotations

import argparse
import json
import shutil
import tempfile
import time
from pathlib import Path

import git

from agent.settings.config import load_config
from agent.workflows.refactor import RefactorReport, refactor

INSTRUCTION = "Rename the function calc_total to compute_total everywhere (definition, imports and calls)."
VERIFY = "python -m pytest -q && ! grep -rn calc_total --include='*.py' ."
PRICING = "def calc_total(prices, tax=0.0):\n    return round(sum(prices) * (1 + tax), 2)\n"
USERS = {
    "shop/cart.py": (
        "from shop.pricing import calc_total\n\n\nclass Cart:\n    def __init__(self, tax=0.0):\n"
        "        self.items = []\n        self.tax = tax\n\n    def add(self, price):\n"
        "        self.items.append(price)\n\n    def total(self):\n        return calc_total(self.items, self.tax)\n"
    ),
    "shop/invoice.py": (
        "from shop import pricing\n\n\ndef invoice_line(name, prices):\n"
        '    return f"{name}: {pricing.calc_total(prices):.2f}"\n'
    ),
    "shop/report.py": (
        "from shop.pricing import calc_total as total_of\n\n\ndef daily(orders):\n"
        "    return {day: total_of(prices) for day, prices in orders.items()}\n"
    ),
}
TESTS = {
    "shop/cart.py": "from shop.cart import Cart\n\n\ndef test_cart():\n    c = Cart(tax=0.1)\n    c.add(10)\n"
    "    c.add(20)\n    assert c.total() == 33\n",
    "shop/invoice.py": "from shop.invoice import invoice_line\n\n\ndef test_line():\n"
    '    assert invoice_line("a", [1, 2]) == "a: 3.00"\n',
    "shop/report.py": "from shop.report import daily\n\n\ndef test_daily():\n"
    '    assert daily({"mon": [1, 2]}) == {"mon": 3}\n',
}


def make_shop(path: Path, users: int) -> Path:
    """A repository whose `calc_total` is used from `users` modules, each with its test; all tests pass."""
    files = {".gitignore": "__pycache__/\n.pytest_cache/\n", "shop/__init__.py": "", "shop/pricing.py": PRICING}
    files["tests/test_pricing.py"] = (
        "from shop.pricing import calc_total\n\n\ndef test_total():\n    assert calc_total([1, 2]) == 3\n"
    )
    for module in list(USERS)[:users]:
        files[module] = USERS[module]
        files[f"tests/test_{Path(module).stem}.py"] = TESTS[module]
    for name, text in files.items():
        (path / name).parent.mkdir(parents=True, exist_ok=True)
        (path / name).write_text(text)
    repo = git.Repo.init(path, initial_branch="main")
    repo.git.add(A=True)
    repo.index.commit("shop", author=git.Actor("b", "b@b"), committer=git.Actor("b", "b@b"))
    return path


def measure(profile: str, slots: int, repos: int, root: Path, max_steps: int) -> dict:
    paths = [make_shop(root / f"n{slots}" / f"shop_{i}", users=1 + i % 3) for i in range(repos)]
    config = load_config(None, {"profile": profile, "max_steps": max_steps})
    started = time.monotonic()
    report: RefactorReport = refactor(INSTRUCTION, paths, config, verify=VERIFY, parallel=slots)
    wall = time.monotonic() - started  # includes starting the server (a few seconds), as a user waits for it
    generated = sum(r.completion_tokens for r in report.repos)
    passed = report.counts()["passed"]
    return {
        "slots": slots,
        "repos": repos,
        "passed": passed,
        "wall_s": round(wall, 1),
        "tasks_per_hour": round(repos / wall * 3600, 1),
        "verified_per_hour": round(passed / wall * 3600, 1),
        "generated_tokens": generated,
        "generated_tok_s": round(generated / wall, 2),
        "prompt_tokens": sum(r.prompt_tokens for r in report.repos),
        "per_repo": [(Path(r.repo).name, r.status, r.steps, round(r.seconds, 1)) for r in report.repos],
    }


def table(rows: list[dict], command: str) -> str:
    base = rows[0]
    lines = [
        f"`{command}`",
        "",
        "| repos at once (slots) | verified | wall | tasks/hour | verified/hour | generated tok/s (all slots) | vs 1 slot |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        lines.append(
            f"| {r['slots']} | {r['passed']}/{r['repos']} | {r['wall_s']:.0f}s | {r['tasks_per_hour']} | "
            f"{r['verified_per_hour']} | {r['generated_tok_s']} | {base['wall_s'] / r['wall_s']:.2f}x |"
        )
    return "\n".join(lines) + "\n"


def chart(rows: list[dict], path: Path) -> None:
    from inference.extras import pyplot

    plt = pyplot()

    fig, ax = plt.subplots(figsize=(6, 3.5))
    slots = [str(r["slots"]) for r in rows]
    ax.bar(slots, [r["tasks_per_hour"] for r in rows], color="#5B9BD5", label="tasks/hour")
    ax.bar(slots, [r["verified_per_hour"] for r in rows], color="#2E7D32", width=0.5, label="verified/hour")
    ax.set_xlabel("repos at once (server slots)")
    ax.set_ylabel("per hour")
    ax.legend(loc="upper left")
    ax2 = ax.twinx()
    ax2.plot(slots, [r["generated_tok_s"] for r in rows], "o-", color="#C62828", label="generated tok/s")
    ax2.set_ylabel("generated tok/s (all slots)")
    ax2.set_ylim(bottom=0)
    ax2.legend(loc="upper right")
    fig.tight_layout()
    fig.savefig(path, dpi=120)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--profile", default="qwen-cpu-ngram")
    parser.add_argument("--slots", default="1,2,4")
    parser.add_argument("--repos", type=int, default=4)
    parser.add_argument("--max-steps", type=int, default=12)
    parser.add_argument("--out", type=Path, default=Path("bench-parallel"))
    args = parser.parse_args()
    command = "python scripts/bench_parallel.py " + " ".join(
        f"--{k.replace('_', '-')} {v}" for k, v in vars(args).items()
    )
    rows = []
    with tempfile.TemporaryDirectory(prefix="bench-parallel-") as tmp:
        for slots in [int(s) for s in args.slots.split(",")]:
            print(f"== {args.repos} repos, {slots} at once ({args.profile})", flush=True)
            rows.append(measure(args.profile, slots, args.repos, Path(tmp), args.max_steps))
            print(json.dumps(rows[-1]), flush=True)
            shutil.rmtree(Path(tmp) / f"n{slots}", ignore_errors=True)
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "parallel.json").write_text(json.dumps(rows, indent=2) + "\n")
    (args.out / "parallel.md").write_text(table(rows, command))
    chart(rows, args.out / "parallel.png")
    print(table(rows, command))


if __name__ == "__main__":
    main()
