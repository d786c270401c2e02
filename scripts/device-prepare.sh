#!/usr/bin/env bash
# Assemble what scripts/device-check.sh needs on a GPU machine that has no network into one git-ignored folder
# (default .device-carry/), under the 64 MiB such a machine receives beside the working tree:
#   llama.cpp-src.tar.xz  the llama.cpp tree of the llama-cpp-python sdist (the one `agent engine build --source
#                         pypi-sdist` builds), pruned to what a CUDA or CPU llama-server build and the synthetic-file
#                         writer read (Gemma 4's vocabulary file kept; docs, tests, examples, other backends dropped)
#   wheels/               the Python packages `agent serve --synthetic` imports that the GPU machine's image lacks
#                         (or may hold at other versions), for its Python, at this venv's versions
#   MANIFEST.json         every file's size and sha256, and what it was made from
# It prints the total and fails when it is over the limit. Run from the repository root:
#
#   scripts/device-prepare.sh [--out DIR] [--python-version 3.12] [--limit-mib 64]
#   scripts/device-prepare.sh --list-kept TREE   print the files of TREE (a llama.cpp tree) that the archive keeps
#
# Environment: PYTHON (default .venv/bin/python: its package versions are the ones downloaded; it also finds the
# sdist through inference/engines/engine.py, fetching it with pip when it is not cached).
set -euo pipefail

# What the pruned archive drops, relative to the llama.cpp root. Anything else is kept: CMake configures every
# tool folder under tools/ (tools/CMakeLists.txt), so those stay whole except their tests and media.
PRUNE_DIRS=(
    .git .github .devops .gemini .pi docs tests examples pocs benches media conversion gguf-py ci requirements skills
    ggml/src/ggml-blas ggml/src/ggml-cann ggml/src/ggml-et ggml/src/ggml-hexagon ggml/src/ggml-hip
    ggml/src/ggml-metal ggml/src/ggml-musa ggml/src/ggml-opencl ggml/src/ggml-openvino ggml/src/ggml-sycl
    ggml/src/ggml-virtgpu ggml/src/ggml-vulkan ggml/src/ggml-webgpu ggml/src/ggml-zdnn ggml/src/ggml-zendnn
    tools/ui/src tools/ui/static tools/ui/tests tools/ui/scripts tools/server/tests tools/server/bench tools/mtmd/tests
)
PRUNE_FILES=(tools/ui/package-lock.json tools/mtmd/test-3.mp4)
KEEP_VOCAB=ggml-vocab-gemma-4.gguf  # models/: only the tokenizer the Gemma 4 synthetic files take (inference/shapes/synth.py)
# The packages the serve path imports that the GPU image lacks (pydantic and its parts, gguf, platformdirs), and the
# command-line stack pinned with them (typer/click/rich), so the versions there are the ones tested here.
WHEELS=(pydantic pydantic_core annotated-types typing-inspection typing-extensions gguf platformdirs
    typer click rich markdown-it-py mdurl pygments shellingham annotated-doc)

# The files of a llama.cpp tree that the archive keeps, relative to it, sorted (also what --list-kept prints).
kept_files() {
    local root=$1 expr=() d f
    for d in "${PRUNE_DIRS[@]}"; do expr+=(-path "./$d" -o); done
    for f in "${PRUNE_FILES[@]}"; do expr+=(-path "./$f" -o); done
    expr+=(\( -path './models/*' ! -name "$KEEP_VOCAB" \))
    (cd "$root" && find . \( "${expr[@]}" \) -prune -o \( -type f -o -type l \) ! -name '*.py' -print) \
        | sed 's|^\./||' | LC_ALL=C sort
}

OUT=.device-carry
PYVER=3.12
LIMIT_MIB=64
while (($#)); do
    case $1 in
        --out) OUT=$2; shift 2 ;;
        --python-version) PYVER=$2; shift 2 ;;
        --limit-mib) LIMIT_MIB=$2; shift 2 ;;
        --list-kept) kept_files "$2"; exit 0 ;;
        -h | --help) sed -n '2,16p' "$0"; exit 0 ;;
        *) echo "device-prepare: unknown argument $1 (see --help)" >&2; exit 2 ;;
    esac
done

PYTHON=${PYTHON:-.venv/bin/python}
[[ -x $PYTHON ]] || { echo "device-prepare: no Python at $PYTHON (run ./dev.sh lint once, or set PYTHON)" >&2; exit 2; }
say() { printf '[%s] %s\n' "$(date -u +%H:%M:%S)" "$*"; }

rm -rf "$OUT" && mkdir -p "$OUT/wheels"

say "llama.cpp source: the llama-cpp-python sdist's tree (inference/engines/engine.py sdist_tree)"
found=$("$PYTHON" -c 'from inference.engines.engine import SDIST_VERSION, sdist_tree
print(SDIST_VERSION, sdist_tree(SDIST_VERSION))') || { echo "device-prepare: the sdist could not be found or fetched" >&2; exit 1; }
read -r VERSION TREE <<<"$found"
# members are llama_cpp_python-VERSION/vendor/llama.cpp/...: unpacked into DFLASH_AGENT_CACHE/engines/src/
# llama-cpp-python-VERSION/ they are where sdist_tree looks, so the synthetic writer finds its vocabulary offline
BASE=$(cd "$TREE/../../.." && pwd)
PREFIX=${TREE#"$BASE"/}
LIST=$(mktemp)
trap 'rm -f "$LIST"' EXIT
kept_files "$TREE" | sed "s|^|$PREFIX/|" >"$LIST"
say "archiving $(wc -l <"$LIST") files of $TREE ($(cd "$TREE" && du -sh . | cut -f1) unpruned)"
nice -n 19 tar -C "$BASE" --no-recursion -T "$LIST" -cf - | nice -n 19 xz -6 -T1 >"$OUT/llama.cpp-src.tar.xz"

say "wheels for CPython $PYVER, manylinux x86-64, at this venv's versions"
pins=()
for name in "${WHEELS[@]}"; do
    version=$("$PYTHON" -c 'import sys
from importlib.metadata import version
print(version(sys.argv[1]))' "$name" 2>/dev/null) || { echo "device-prepare: $name is not installed in $PYTHON" >&2; exit 1; }
    pins+=("$name==$version")
done
nice -n 19 "$PYTHON" -m pip download --quiet --no-deps --only-binary=:all: --python-version "$PYVER" \
    --implementation cp --platform manylinux_2_28_x86_64 --platform manylinux_2_17_x86_64 \
    --platform manylinux2014_x86_64 -d "$OUT/wheels" "${pins[@]}"

say "manifest"
"$PYTHON" - "$OUT" "$VERSION" "$PYVER" "${pins[@]}" <<'EOF'
import hashlib, json, sys, time
from pathlib import Path

out, sdist, pyver, pins = Path(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4:]
files = [
    {"path": str(p.relative_to(out)), "bytes": p.stat().st_size, "sha256": hashlib.sha256(p.read_bytes()).hexdigest()}
    for p in sorted(out.rglob("*"))
    if p.is_file() and p.name != "MANIFEST.json"
]
manifest = {
    "made": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
    "sdist": f"llama-cpp-python=={sdist}",
    "python": pyver,
    "wheels": pins,
    "total_bytes": sum(f["bytes"] for f in files),
    "files": files,
}
(out / "MANIFEST.json").write_text(json.dumps(manifest, indent=2) + "\n")
EOF

total=$(du -sb "$OUT" | cut -f1)
awk -v o="$OUT" -v t="$total" -v l="$LIMIT_MIB" 'BEGIN { printf "%s: %d bytes (%.1f MiB) in all, limit %d MiB\n", o, t, t / 1048576, l }'
du -b "$OUT"/llama.cpp-src.tar.xz "$OUT"/wheels | sed 's/^/  /'
if ((total > LIMIT_MIB * 1024 * 1024)); then
    echo "device-prepare: $OUT is over $LIMIT_MIB MiB; a device call carries at most that" >&2
    exit 1
fi
