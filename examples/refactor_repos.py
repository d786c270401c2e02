"""Use dflash-agent from Python: one refactor over several repositories, then a report.

    .venv/bin/python examples/refactor_repos.py "Rename calc_total to compute_total everywhere" ~/src/shop-a ~/src/shop-b

Each repo gets its own branch; the change is committed there only when the verification passes (here the
repo's own tests, detected per repo). Add `endpoint="http://127.0.0.1:8080/v1"` to the overrides and
`parallel=4` to run four repos at once against a llama-server started with `--parallel 4`.
"""

import sys
from pathlib import Path

from agent.settings.config import load_config
from agent.workflows.refactor import refactor, write_report

instruction, repos = sys.argv[1], [Path(p) for p in sys.argv[2:]]
config = load_config(None, {"max_steps": 12})
report = refactor(instruction, repos, config, verify=None, parallel=1)
json_path, md_path = write_report(report, Path("refactor-report"))
for outcome in report.repos:
    print(f"{outcome.status:9} {outcome.repo}  {outcome.reason}  ({outcome.steps} steps, {outcome.seconds:.0f}s)")
print(f"report: {md_path} and {json_path}")
