#!/usr/bin/env bash
# The GPU path, checked end to end on a machine with an NVIDIA GPU (run from the repository root):
#   1. what the machine has (`nvidia-smi`, `agent doctor`);
#   2. build BeeLlama.cpp at its pin with CUDA (`agent engine build`: fails loudly without a usable toolkit);
#   3. the memory plan of each Gemma profile on this card (`agent serve --plan`);
#   4. start each Gemma profile whose model files are cached (the -safe one too), check /health and /slots;
#   5. the seed benchmark at temperature 0, baseline vs DFlash vs DFlash-safe (`agent bench`), when the files
#      are cached, then verdicts that a broken draft path cannot pass (inference/spec_check.py): the DFlash
#      text agrees with the baseline's greedy text (the first difference is reported), is not degenerate
#      (`/////`), drafted with acceptance above FLOOR, and its server log has no draft error line.
# The exit status is 1 when a verdict fails.
# Everything it prints is also written under $OUT (default gpu-check-out/).
#
#   scripts/gpu-check.sh             the whole check (the engine build alone can take 10-20 minutes)
#   scripts/gpu-check.sh --dry-run   no GPU needed: doctor and plans for a 24 GiB card; GPU steps are printed only
#
# Environment: AGENT (default .venv/bin/agent), PYTHON (the one beside it), OUT, JOBS (compile jobs),
# CUDA_ARCH (e.g. 89), PULL=1 (download the Gemma files first: about 18.6 GB), BENCH_TOKENS (default 1200),
# FLOOR (lowest draft acceptance, default 0.3).
set -uo pipefail

AGENT=${AGENT:-.venv/bin/agent}
PYTHON=${PYTHON:-$(dirname "$(command -v "$AGENT")")/python}  # the interpreter beside the agent script
OUT=${OUT:-gpu-check-out}
DRY=0
[[ ${1:-} == --dry-run ]] && DRY=1
PROFILES=(gemma4-31b gemma4-31b-dflash gemma4-31b-dflash-safe)
STATUS=0
mkdir -p "$OUT"
exec > >(tee -a "$OUT/gpu-check.log") 2>&1

step() { printf '\n== %s (%s)\n' "$*" "$(date -u +%H:%M:%S)"; }
gpu() {  # a step that needs the GPU: printed in a dry run, run otherwise
    if ((DRY)); then printf '(dry run, not run) %s\n' "$*"; else "$@"; fi
}
cached() {  # are all these catalog models in the cache (verified)?
    "$PYTHON" - "$@" <<'EOF'
import sys
from inference.fetch import cached_model
from inference.models import get_model
sys.exit(0 if all(cached_model(get_model(m)) for m in sys.argv[1:]) else 1)
EOF
}

step "machine"
if command -v nvidia-smi >/dev/null; then
    nvidia-smi --query-gpu=name,memory.total,memory.free,compute_cap,driver_version --format=csv
else
    echo "no nvidia-smi: no NVIDIA GPU here"
    ((DRY)) || { echo "this check needs an NVIDIA GPU; use --dry-run elsewhere"; exit 2; }
fi
"$AGENT" doctor

step "engine build: BeeLlama.cpp at its pinned tag, CUDA"
build=("$AGENT" engine build --source beellama)
[[ -n ${JOBS:-} ]] && build+=(--jobs "$JOBS")
[[ -n ${CUDA_ARCH:-} ]] && build+=(--cuda-arch "$CUDA_ARCH")
gpu "${build[@]}" || { echo "engine build failed (the message above names the cause)"; exit 1; }
gpu "$AGENT" engine list

if [[ ${PULL:-0} == 1 ]]; then
    step "models"
    gpu "$AGENT" models pull gemma4-31b
    gpu "$AGENT" models pull gemma4-31b-dflash
fi

step "memory plans"
for profile in "${PROFILES[@]}"; do
    if ((DRY)); then
        "$AGENT" serve --profile "$profile" --plan --gpu-memory 24GiB
    else
        "$AGENT" serve --profile "$profile" --plan
    fi
    echo "-> exit $?"
done

step "start each Gemma profile whose files are cached"
for profile in "${PROFILES[@]}"; do
    models=(gemma4-31b)
    [[ $profile == *dflash* ]] && models+=(gemma4-31b-dflash)
    if ! cached "${models[@]}"; then
        echo "$profile: skipped, not cached: ${models[*]} (PULL=1 downloads them)"
        continue
    fi
    if ((DRY)); then
        echo "(dry run, not run) $AGENT serve --profile $profile --background; curl /health /slots; serve --stop"
        continue
    fi
    url=$("$AGENT" serve --profile "$profile" --background) || { echo "$profile: did not start"; continue; }
    echo "$profile: up at $url"
    curl -fsS "${url%/v1}/health"; echo
    curl -fsS "${url%/v1}/slots" | "$PYTHON" -c \
        'import json,sys; print("slot 0 speculative:", json.load(sys.stdin)[0].get("speculative"))'
    "$AGENT" serve --stop
done

step "bench: the seed's prompts at temperature 0, baseline vs DFlash, then the verdicts"
if cached gemma4-31b gemma4-31b-dflash; then
    logs=$("$PYTHON" -c 'from inference.paths import state_dir; print(state_dir() / "logs")')
    if gpu "$AGENT" bench --profiles "$(IFS=,; echo "${PROFILES[*]}")" --workloads seed --one-at-a-time \
        --temperature 0 --max-tokens "${BENCH_TOKENS:-1200}" --out "$OUT/bench" && ((!DRY)); then
        verdict=("$PYTHON" -m inference.spec_check "$OUT/bench/bench.json" --floor "${FLOOR:-0.3}")
        for profile in "${PROFILES[@]}"; do
            log=$(ls -t "$logs"/server-"$profile"-*.log 2>/dev/null | head -1)
            [[ -n $log ]] && verdict+=(--log "$profile=$log")
        done
        "${verdict[@]}" || STATUS=1
    elif ((!DRY)); then
        echo "bench failed"; STATUS=1
    fi
else
    echo "skipped: the Gemma files are not cached (PULL=1 downloads them)"
fi
step "done (exit $STATUS); log: $OUT/gpu-check.log"
exit $STATUS
