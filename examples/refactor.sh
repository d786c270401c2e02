#!/usr/bin/env bash
# The same refactor from the command line, over the repositories listed in a file (one path per line).
#
#   examples/refactor.sh repos.txt
#
# --verify: the check that must pass before a repo's change is committed on its agent branch (default: the
# repo's own test command). With --profile (or --endpoint), --parallel N runs N repos at once on one
# llama-server with N slots; the embedded model runs them one at a time.
set -euo pipefail
repos_file=${1:?usage: examples/refactor.sh REPOS_FILE}
"${AGENT:-agent}" refactor "Rename the function calc_total to compute_total everywhere" \
    --repos-file "$repos_file" \
    --verify "python -m pytest -q && ! grep -rn calc_total --include='*.py' ." \
    --max-steps 12 \
    --report refactor-report
# then, per repo: `git log agent/...` shows the checkpoints, `agent undo --branch agent/...` takes one back
