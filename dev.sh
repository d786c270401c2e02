#!/usr/bin/env bash
# One entry point that does all set-up, then runs what you asked for:
#   ./dev.sh agent <args...>   set up, then run the `agent` CLI (e.g. `agent new-project ...`)
#   ./dev.sh test [pytest args] set up, then run the whole test suite: what needs no model or engine on every
#                               core, then the model and engine tests one at a time (`-m "not slow"`: the fast
#                               tier, no model and no compiler, about a minute)
#   ./dev.sh lint               set up, then ruff check, ruff format --check and mypy (what CI runs first)
# Set-up is idempotent and cached: a virtual environment in .venv, llama-cpp-python compiled once (pip's
# wheel cache), models fetched once into the user cache (~/.cache/dflash-agent), verified by sha256.
set -euo pipefail
cd "$(dirname "$0")"

PYTHON="${PYTHON:-python3}"
VENV=.venv

setup() {
  setup_venv
  ensure_bubblewrap
  echo "==> fetching the default model (cached after the first time)" >&2
  "$VENV/bin/agent" models pull qwen2.5-coder-1.5b >&2
}

# The virtual environment with dflash-agent installed (editable) and its test and lint tools.
setup_venv() {
  if [ ! -x "$VENV/bin/python" ]; then
    "$PYTHON" -c 'import sys; assert sys.version_info >= (3, 11), "Python >= 3.11 is required"'
    "$PYTHON" -m venv "$VENV"
  fi
  # Skip pip when pyproject.toml has not changed since the last successful install.
  local stamp="$VENV/.installed-$(sha256sum pyproject.toml | cut -c1-16)"
  if [ ! -f "$stamp" ]; then
    echo "==> installing dflash-agent and its dependencies (llama-cpp-python compiles once: a few minutes)" >&2
    "$VENV/bin/python" -m pip install --quiet -e '.[test,dev]' >&2
    rm -f "$VENV"/.installed-* && touch "$stamp"
  fi
}

# The command sandbox (bubblewrap): installed when missing and we can (root with apt-get); never fatal.
ensure_bubblewrap() {
  command -v bwrap >/dev/null 2>&1 && return 0
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "==> installing bubblewrap (the sandbox for the agent's commands)" >&2
    { DEBIAN_FRONTEND=noninteractive apt-get install -y -qq bubblewrap || { apt-get update -qq \
        && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq bubblewrap; }; } >/dev/null 2>&1 || true
  fi
  command -v bwrap >/dev/null 2>&1 || echo "warning: bubblewrap is not installed, so the agent's commands run" \
    "unsandboxed; install it with \`sudo apt-get install bubblewrap\` or \`sudo dnf install bubblewrap\`" >&2
}

# True when the pytest arguments only set options (-q, -ra, --durations=N): no test paths, -k or -m chosen.
whole_suite() {
  for arg in "$@"; do
    case "$arg" in
      -m|-m*|-k|-k*|--pyargs) return 1 ;;
      -*) ;;
      *) return 1 ;;
    esac
  done
}

case "${1:-}" in
  agent)
    shift
    setup
    exec "$VENV/bin/agent" "$@"
    ;;
  test)
    shift
    case " $* " in
      *"not slow"*)  # the fast tier needs no model (none is fetched) and runs on every core
        setup_venv; ensure_bubblewrap
        exec "$VENV/bin/python" -m pytest -n auto --dist loadfile "$@" ;;
      *) setup ;;
    esac
    if whole_suite "$@"; then
      # What runs no model and no engine shares the cores (a test file per worker); then the model and engine
      # tests run one at a time (`serial`, tests/conftest.py): beside other work they slow to a crawl.
      status=0
      "$VENV/bin/python" -m pytest -m "not serial" -n auto --dist loadfile "$@" || status=$?
      "$VENV/bin/python" -m pytest -m serial "$@" || status=$?
      exit "$status"
    fi
    exec "$VENV/bin/python" -m pytest "$@"
    ;;
  lint)
    shift
    setup_venv
    "$VENV/bin/ruff" check .
    "$VENV/bin/ruff" format --check .
    exec "$VENV/bin/mypy"
    ;;
  *)
    echo "usage: ./dev.sh agent <agent args...> | ./dev.sh test [pytest args...] | ./dev.sh lint" >&2
    exit 64
    ;;
esac
