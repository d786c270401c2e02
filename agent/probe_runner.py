"""Runs in the sandbox, in the workspace, as `python -c <this file's text> MODULE PROBES_JSON` (agent/probes.py):
calls each probe (a function name and its arguments as Python literals) on the module as it is now and prints
one line, `PROBES ` and a JSON list: per probe, a short hash of what it returned, or null where it raised, ran
past its second or printed nothing but stopped the process. Self-contained on purpose: it imports only the
standard library, so it runs under the project's own Python."""

import ast
import contextlib
import copy
import hashlib
import importlib
import io
import json
import math
import signal
import sys

SECONDS_PER_CALL = 1.0


def canonical(value):
    """The value with floats rounded (two right answers may differ in the last digits) and sets ordered."""
    if isinstance(value, float):
        return value if not math.isfinite(value) else round(value, 6) + 0.0
    if isinstance(value, list | tuple):
        return type(value)(canonical(v) for v in value)
    if isinstance(value, dict):
        return {repr(canonical(k)): canonical(v) for k, v in value.items()}
    if isinstance(value, set | frozenset):
        return sorted(repr(canonical(v)) for v in value)
    return value


def outcome(function, arguments):
    """The hash of what the call returns, or None where it raises or runs past SECONDS_PER_CALL."""
    signal.setitimer(signal.ITIMER_REAL, SECONDS_PER_CALL)
    try:
        with contextlib.redirect_stdout(io.StringIO()):
            value = function(*copy.deepcopy(arguments))
        text = repr(canonical(value))[:100_000]
    except BaseException:  # noqa: BLE001  (the answer's own error, exit or endless loop: no value here)
        return None
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
    return hashlib.sha1(text.encode()).hexdigest()[:12]


def main():
    def too_long(*_):
        raise TimeoutError

    signal.signal(signal.SIGALRM, too_long)
    sys.path.insert(0, ".")
    module = importlib.import_module(sys.argv[1])
    results = []
    for name, arguments in json.loads(sys.argv[2]):
        function = getattr(module, name, None)
        results.append(outcome(function, ast.literal_eval(arguments)) if callable(function) else None)
    print("PROBES " + json.dumps(results), flush=True)


if __name__ == "__main__":
    main()
