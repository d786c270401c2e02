"""Use dflash-agent from Python: run one task on a repository and print the JSON result.

.venv/bin/python examples/run_task.py /path/to/repo "Add a --verbose flag to cli.py"
"""

import sys
from pathlib import Path

from agent.settings.config import load_config
from agent.workflows.runs import run_task

repo, task = Path(sys.argv[1]), sys.argv[2]
result = run_task(repo, task, load_config(repo))
print(result.model_dump_json(indent=2))
