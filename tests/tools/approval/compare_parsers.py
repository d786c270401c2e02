"""Compare the approval analysis before and after tree-sitter-bash, on the corpora in corpus.py.

    .venv/bin/python tests/tools/approval/compare_parsers.py [REV]

REV (default 59fb73e, the last commit with the hand-written lexer) is read with `git show REV:tools/approval.py`
and loaded as a module, so the old analysis need not stay in the tree. For each analysis it prints how many
adversarial commands it lets through in `auto` (fails open), how many ordinary commands it stops (fails
closed), and the time per command; then the parse alone: the old splitter + word lexer vs a tree-sitter parse.
Numbers are written up in docs/approval.md.
"""

from __future__ import annotations

import importlib.util
import subprocess
import sys
import tempfile
import time
import types
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT))

from tools.approval import analyse_command  # noqa: E402 - after the sys.path line
from tools.approval.bash_syntax import parse  # noqa: E402


def load(path: Path, name: str) -> types.ModuleType:
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


def old_analysis(rev: str) -> types.ModuleType:
    source = subprocess.run(
        ["git", "show", f"{rev}:tools/approval.py"], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout
    path = Path(tempfile.mkdtemp()) / "old_approval.py"
    path.write_text(source)
    return load(path, "old_approval")


def timed(function, commands: list[str], repeat: int = 5) -> float:
    """Best of `repeat` runs over all commands, in microseconds per command."""
    best = float("inf")
    for _ in range(repeat):
        started = time.perf_counter()
        for command in commands:
            function(command)
        best = min(best, time.perf_counter() - started)
    return best / len(commands) * 1e6


def main(rev: str = "59fb73e") -> None:
    corpus = load(Path(__file__).with_name("corpus.py"), "approval_corpus")
    workspace = corpus.make_workspace(Path(tempfile.mkdtemp()))
    old = old_analysis(rev)
    analyses = {
        "hand-written lexer (" + rev + ")": lambda c: old.analyse_command(c, workspace),
        "tree-sitter-bash (this tree)": lambda c: analyse_command(c, workspace),
    }
    print(f"adversarial: {len(corpus.ADVERSARIAL)} commands, ordinary: {len(corpus.ORDINARY)} commands\n")
    print("| analysis | adversarial let through (fails open) | ordinary stopped (fails closed) | µs per command |")
    print("|---|---|---|---|")
    for name, analyse in analyses.items():
        open_ = [c for c in corpus.ADVERSARIAL if not analyse(c).dangers]
        closed = [c for c in corpus.ORDINARY if analyse(c).dangers]
        speed = timed(analyse, corpus.ADVERSARIAL + corpus.ORDINARY)
        print(
            f"| {name} | {len(open_)} / {len(corpus.ADVERSARIAL)} | {len(closed)} / {len(corpus.ORDINARY)} | {speed:.0f} |"
        )
        for command in open_ + closed:
            print(f"    {'open  ' if command in open_ else 'closed'} {command!r}", file=sys.stderr)
    commands = corpus.ADVERSARIAL + corpus.ORDINARY
    lexer = timed(lambda c: [old._words_and_redirects(s.text) for s in old.split_command(c)], commands)
    tree = timed(lambda c: parse(c.encode("utf-8", "surrogatepass")), commands)
    print(f"\nparse only, µs per command: hand-written splitter + lexer {lexer:.0f}, tree-sitter-bash {tree:.0f}")
    print("\n`cd build && ` repeated N times (each cd goes one folder deeper), seconds:")
    for count in (1_000, 2_000, 10_000):
        chain = ["cd build && " * count + "ls"]
        before = (
            f"{timed(lambda c: old.analyse_command(c, workspace), chain, 1) / 1e6:.2f}"
            if count <= 2_000
            else "(not run)"
        )
        print(
            f"  N={count}: hand-written {before}, tree-sitter {timed(lambda c: analyse_command(c, workspace), chain, 1) / 1e6:.2f}"
        )


if __name__ == "__main__":
    main(*sys.argv[1:2])
