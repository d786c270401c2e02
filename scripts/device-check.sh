#!/usr/bin/env bash
# Gemma 4 31B, with and without its DFlash drafter, at its real shape on a lent GPU machine that has no network,
# from the repository root and the folder scripts/device-prepare.sh made (.device-carry/):
#   1. the machine (nvidia-smi: GPU, memory, compute capability, memory clock; the bandwidth per GPU name);
#   2. the carry folder checked against its manifest; the pruned llama.cpp source unpacked where the engine code
#      and the synthetic writer look for the llama-cpp-python sdist; the carried wheels installed offline
#      (pip --no-index --no-deps --target), when they are for this Python;
#   3. llama-server built from that source with our engine patches for the GPU found (CUDA, its compute
#      capability, -j$(nproc), GGML_CUDA_FA_ALL_QUANTS off: flash-attention kernels for the profiles' KV cache
#      types only) under a time box, then registered with `agent engine add`;
#   4. the synthetic Gemma 4 31B target and upstream-format DFlash drafter (`agent models synth`);
#   5. `agent serve --synthetic` for gemma4-31b and gemma4-31b-dflash-upstream at 32k context (through
#      scripts/device_report.py: the same run with a longer request, so the engine's timings give prefill and
#      decode speed): plan vs allocated memory per term, the process's VRAM, tok/s against the bandwidth limit,
#      log tails, in $OUT/device-check.json; everything printed goes to $OUT/device-check.log.
# Every step prints a timestamped line; a step that fails leaves its log tail in the JSON and the rest goes on
# where it can. The work folder (.device-work/, git-ignored) outlives a call on a machine that stays warm, so a
# second call resumes a build that ran out of time. Exit status: 0 when every step passed.
#
#   scripts/device-check.sh                         on the GPU machine (run tool: carry .device-carry)
#   scripts/device-check.sh --backend cpu --small   a rehearsal on a CPU (6 layers; builds the CPU engine)
#
# Options: --backend cuda|cpu (default cuda), --small (the target cut to 6 layers, the drafter paired with it),
# --out DIR (default $OUT, else device-check-out), --carry DIR (default .device-carry), --work DIR (default
# .device-work), --ctx-size N (default 32768), --llama-server PATH (register this binary instead of building),
# --deadline S (seconds for the whole script: default 560 for cuda, 7200 for cpu), --build-timeout S (default 420
# for cuda), --jobs N (default nproc), --prompt-tokens N, --gen-tokens N. Environment: PYTHON (default: the
# checkout's .venv/bin/python if there is one, else python3).
set -uo pipefail

BACKEND=cuda ARCH="" SMALL=0 CTX=32768 LLAMA_SERVER="" JOBS="" DEADLINE="" BUILD_TIMEOUT="" PROMPT_TOKENS=""
GEN_TOKENS="" CARRY=.device-carry WORK=.device-work OUTDIR=${OUT:-device-check-out}
while (($#)); do
    case $1 in
        --backend) BACKEND=$2; shift 2 ;;
        --small) SMALL=1; shift ;;
        --out) OUTDIR=$2; shift 2 ;;
        --carry) CARRY=$2; shift 2 ;;
        --work) WORK=$2; shift 2 ;;
        --ctx-size) CTX=$2; shift 2 ;;
        --llama-server) LLAMA_SERVER=$(realpath "$2"); shift 2 ;;
        --deadline) DEADLINE=$2; shift 2 ;;
        --build-timeout) BUILD_TIMEOUT=$2; shift 2 ;;
        --jobs) JOBS=$2; shift 2 ;;
        --prompt-tokens) PROMPT_TOKENS=$2; shift 2 ;;
        --gen-tokens) GEN_TOKENS=$2; shift 2 ;;
        -h | --help) sed -n '2,28p' "$0"; exit 0 ;;
        *) echo "device-check: unknown argument $1 (see --help)" >&2; exit 2 ;;
    esac
done
[[ $BACKEND == cuda || $BACKEND == cpu ]] || { echo "device-check: --backend cuda or cpu" >&2; exit 2; }
if [[ $BACKEND == cuda ]]; then
    DEADLINE=${DEADLINE:-560} BUILD_TIMEOUT=${BUILD_TIMEOUT:-420} PROMPT_TOKENS=${PROMPT_TOKENS:-4096}
    GEN_TOKENS=${GEN_TOKENS:-256}
else
    DEADLINE=${DEADLINE:-7200} BUILD_TIMEOUT=${BUILD_TIMEOUT:-5400} PROMPT_TOKENS=${PROMPT_TOKENS:-256}
    GEN_TOKENS=${GEN_TOKENS:-32}
fi
LAYERS=()
((SMALL)) && LAYERS=(--layers 6)  # one global layer in six, as at full size (inference/shapes/headers.py)
PROFILES=(gemma4-31b gemma4-31b-dflash-upstream)
MODELS=(gemma4-31b gemma4-31b-dflash-upstream)

REPO=$(pwd)
# this checkout's venv where there is one (a rehearsal); else the machine's python3 plus the carried wheels
[[ -z ${PYTHON:-} && -x .venv/bin/python ]] && PYTHON=$REPO/.venv/bin/python
PYTHON=${PYTHON:-python3}
mkdir -p "$OUTDIR" "$WORK/report" "$WORK/logs" || exit 2
OUTDIR=$(cd "$OUTDIR" && pwd) WORK=$(cd "$WORK" && pwd)
[[ -d $CARRY ]] && CARRY=$(cd "$CARRY" && pwd)
rm -f "$WORK"/report/*.json "$WORK/report/steps.jsonl" "$WORK/engine-key" "$WORK/llama-server-path"
exec > >(tee "$OUTDIR/device-check.log") 2>&1
TEE=$!
# the agent's own folders inside the work folder: its cache (engines, synthetic files, server logs), no user config
export DFLASH_AGENT_CACHE=$WORK/cache XDG_CONFIG_HOME=$WORK/config XDG_STATE_HOME=$WORK/state
export PYTHONPATH=$WORK/site:$REPO${PYTHONPATH:+:$PYTHONPATH} PYTHONUNBUFFERED=1
export REPO PYTHON CARRY WORK BACKEND JOBS
START=$SECONDS STATUS=0

say() { printf '[%s] %s\n' "$(date -u +%H:%M:%S)" "$*"; }
left() { echo $((DEADLINE - (SECONDS - START))); }
agent() { "$PYTHON" -m agent.cli "$@"; }
report() { "$PYTHON" "$REPO/scripts/device_report.py" "$@"; }

# step NAME SECONDS COMMAND...: run a command or one of the functions below under a time box (its own, cut to
# what the deadline leaves), log it, record it; returns the command's status (124: out of time)
step() {
    local name=$1 box=$2 rc t0=$SECONDS
    shift 2
    local remaining=$(($(left) - 15))
    ((box > remaining)) && box=$remaining
    if ((box < 5)); then
        say "$name: skipped, the deadline (${DEADLINE}s) is spent"
        echo "skipped: no time left before the ${DEADLINE}s deadline" >"$WORK/logs/$name.log"
        report step "$WORK/report/steps.jsonl" "$name" 124 0 "$WORK/logs/$name.log"
        STATUS=1
        return 124
    fi
    say "$name (time box ${box}s)"
    # timeout signals its whole process group (cmake, ninja, nvcc; device_report.py stops its server on TERM)
    timeout --kill-after=10 "$box" bash -c '"$@"' "$name" "$@" 2>&1 | tee "$WORK/logs/$name.log"
    rc=${PIPESTATUS[0]}
    say "$name: exit $rc after $((SECONDS - t0))s"
    report step "$WORK/report/steps.jsonl" "$name" "$rc" "$((SECONDS - t0))" "$WORK/logs/$name.log"
    ((rc == 0)) || STATUS=1
    return "$rc"
}

# ---------------------------------------------------------------- the steps' functions

unpack() {  # the pruned source, where sdist_tree() looks for llama-cpp-python VERSION's tree
    local version dest
    version=$("$PYTHON" -c 'import json, sys; print(json.load(open(sys.argv[1]))["sdist"].split("==")[1])' \
        "$CARRY/MANIFEST.json") || return 1
    dest=$DFLASH_AGENT_CACHE/engines/src/llama-cpp-python-$version
    if [[ -f $dest/.unpacked ]]; then
        echo "already unpacked in $dest"
    else
        rm -rf "$dest" && mkdir -p "$dest" || return 1
        tar -C "$dest" -xJf "$CARRY/llama.cpp-src.tar.xz" || "$PYTHON" -c 'import sys, tarfile  # no xz program
tarfile.open(sys.argv[1]).extractall(sys.argv[2], filter="data")' "$CARRY/llama.cpp-src.tar.xz" "$dest" || return 1
        touch "$dest/.unpacked"
    fi
    echo "$dest/llama_cpp_python-$version/vendor/llama.cpp" | tee "$WORK/source-tree"
}

install_wheels() {  # the carried wheels when they are for this Python; else what this Python has must do
    local want have
    want=$("$PYTHON" -c 'import json, sys; print(json.load(open(sys.argv[1]))["python"])' "$CARRY/MANIFEST.json")
    have=$("$PYTHON" -c 'import sys; print("%d.%d" % sys.version_info[:2])')
    if [[ $want == "$have" ]]; then
        rm -rf "$WORK/site"
        "$PYTHON" -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target "$WORK/site" \
            "$CARRY"/wheels/*.whl || return 1
    else
        echo "the wheels are for Python $want, this is $have: using the packages it has"
    fi
    "$PYTHON" - <<'EOF'
import importlib
import importlib.metadata as md

names = {"pydantic": "pydantic", "gguf": "gguf", "platformdirs": "platformdirs", "typer": "typer", "rich": "rich",
         "httpx": "httpx", "psutil": "psutil", "numpy": "numpy", "yaml": "PyYAML", "prometheus_client": "prometheus_client"}
missing = []
for module, dist in names.items():
    try:
        importlib.import_module(module)
        print(f"{dist} {md.version(dist)}")
    except ImportError as exc:
        missing.append(f"{module} ({exc})")
if missing:
    raise SystemExit("missing: " + ", ".join(missing))
importlib.import_module("agent.cli")
EOF
}

build() {  # llama-server from the unpacked tree, patched as `agent engine build` patches it
    local tree build_dir quants args
    tree=$(cat "$WORK/source-tree") || return 1
    build_dir=$WORK/build-$BACKEND${ARCH:+-sm$ARCH}
    if [[ ! -f $WORK/src-patched/.patched ]]; then
        "$PYTHON" - "$tree" "$WORK/src-patched" <<'EOF' || return 1
import sys
from pathlib import Path

from inference.engines.engine_patches import applicable_patches, patched_copy

tree, target = Path(sys.argv[1]), Path(sys.argv[2])
patches = applicable_patches(tree)
patched_copy(tree, patches, target)
(target / ".patched").write_text("".join(p.name + "\n" for p in patches))
print("patches applied:", ", ".join(p.name for p in patches) or "none")
EOF
    fi
    args=(-DCMAKE_BUILD_TYPE=Release -DBUILD_SHARED_LIBS=OFF -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF
        -DLLAMA_BUILD_UI=OFF -DLLAMA_USE_PREBUILT_UI=OFF -DGGML_NATIVE=ON)
    if [[ $BACKEND == cuda ]]; then
        [[ -n $ARCH ]] || { echo "no compute capability from nvidia-smi: no GPU to build for"; return 1; }
        command -v nvcc >/dev/null || export PATH=/usr/local/cuda/bin:$PATH
        # upstream's default K-V pairs plus each profile's own cache types (q5_0-q4_1 for the baseline)
        quants=$("$PYTHON" - gemma4-31b gemma4-31b-dflash-upstream <<'EOF'
import sys

from inference.profiles import get_profile

pairs = ["q4_0-q4_0", "q8_0-q8_0", "f16-f16", "bf16-bf16"]
for name in sys.argv[1:]:
    p = get_profile(name)
    pairs.append(f"{p.cache_type_k or 'f16'}-{p.cache_type_v or 'f16'}")
print(",".join(dict.fromkeys(pairs)))
EOF
) || return 1
        args+=(-DGGML_CUDA=ON -DGGML_CUDA_FA=ON -DGGML_CUDA_FA_ALL_QUANTS=OFF "-DGGML_CUDA_FA_QUANTS=$quants"
            -DGGML_CUDA_NCCL=OFF "-DCMAKE_CUDA_ARCHITECTURES=$ARCH")
    fi
    command -v ninja >/dev/null && args+=(-G Ninja)
    # configured by an earlier call (the work folder outlives a call on a warm machine): the build resumes
    [[ -f $build_dir/build.ninja || -f $build_dir/Makefile ]] && args=()
    cmake -S "$WORK/src-patched" -B "$build_dir" "${args[@]}" || return 1
    cmake --build "$build_dir" --target llama-server -j "${JOBS:-$(nproc)}" || return 1
    ls -l "$build_dir/bin/llama-server" && echo "$build_dir/bin/llama-server" >"$WORK/llama-server-path"
}

register() {  # `agent engine add`: its --help read like a build's; the key goes to the profile runs
    local binary=$1 out key
    out=$(agent engine add "$binary" --backend "$BACKEND") || { echo "$out"; return 1; }
    echo "$out"
    key=$(sed -n 's/^added \([^:]*\):.*/\1/p' <<<"$out")
    [[ -n $key ]] || return 1
    echo "$key" >"$WORK/engine-key"
    "$PYTHON" - "$WORK/report/engine.json" "$key" "$binary" "$BACKEND" "$ARCH" <<'EOF'
import json
import sys
from pathlib import Path

path, key, binary, backend, arch = sys.argv[1:]
facts = {"key": key, "binary": binary, "bytes": Path(binary).stat().st_size, "backend": backend, "cuda_arch": arch or None}
Path(path).write_text(json.dumps(facts, indent=2) + "\n")
EOF
}

export -f say agent report unpack install_wheels build register

# ---------------------------------------------------------------- the run

say "device-check: backend $BACKEND, $( ((SMALL)) && echo "6 layers" || echo "all layers"), context $CTX, deadline ${DEADLINE}s"
"$PYTHON" -c 'import json, sys; values = [int(v) if v.isdigit() else v or None for v in sys.argv[3::2]]
open(sys.argv[1], "w").write(json.dumps(dict(zip(sys.argv[2::2], values)), indent=2) + "\n")' "$WORK/report/args.json" \
    backend "$BACKEND" small "$SMALL" ctx_size "$CTX" deadline_s "$DEADLINE" build_timeout_s "$BUILD_TIMEOUT" \
    prompt_tokens "$PROMPT_TOKENS" gen_tokens "$GEN_TOKENS" llama_server "$LLAMA_SERVER" carry "$CARRY"

# 1. the machine
step machine 60 report machine "$WORK/report/machine.json"
if [[ $BACKEND == cuda ]]; then
    ARCH=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null | head -1 | tr -d ' .')
    [[ -n $ARCH ]] || say "no GPU answers nvidia-smi: the CUDA build has no architecture to target"
fi
export ARCH

# 2. the carry folder
step carry-verify 120 report verify "$CARRY"
step source-unpack 120 unpack
step python-packages 180 install_wheels

# 3. the engine
if [[ -n $LLAMA_SERVER ]]; then
    step engine-add 120 register "$LLAMA_SERVER"
elif step engine-build "$BUILD_TIMEOUT" build; then
    step engine-add 120 register "$(cat "$WORK/llama-server-path")"
fi
ENGINE_KEY=$(cat "$WORK/engine-key" 2>/dev/null)

# 4. synthetic files (the profile runs write them again, the same way; this step shows their sizes)
for model in "${MODELS[@]}"; do
    step "synth-$model" 120 agent models synth "$model" "${LAYERS[@]}"
done

# 5. the profiles
if [[ -n $ENGINE_KEY ]]; then
    for profile in "${PROFILES[@]}"; do
        step "serve-$profile" 300 report profile "$profile" --engine "$ENGINE_KEY" --ctx-size "$CTX" "${LAYERS[@]}" \
            --machine "$WORK/report/machine.json" --json "$WORK/report/profile-$profile.json" \
            --prompt-tokens "$PROMPT_TOKENS" --gen-tokens "$GEN_TOKENS"
    done
else
    say "no engine: the profile runs are skipped"
    STATUS=1
fi

say "report: $OUTDIR/device-check.json ($((SECONDS - START))s in all)"
report merge "$WORK" "$OUTDIR/device-check.json"
exec >&- 2>&-
wait "$TEE"  # the log is whole before the caller collects $OUT
exit $STATUS
