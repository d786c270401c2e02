"""Inline interpreter code (`python -c`, `perl -e`, code on stdin): allowed only when it plainly cannot run
commands or delete files. Python is read with `ast`; for the others a word list is the best this layer can do,
so their inline code is asked about whenever it names anything that could."""

from __future__ import annotations

import ast
import re

# modules that run commands, delete or move files, or reach everything else (importlib, ctypes, builtins)
PYTHON_MODULES = {
    "os",
    "posix",
    "nt",
    "subprocess",
    "_posixsubprocess",
    "shutil",
    "pty",
    "ctypes",
    "cffi",
    "importlib",
    "runpy",
    "multiprocessing",
    "concurrent",
    "pathlib",
    "builtins",
    "code",
    "codeop",
    "pdb",
    "signal",
    "socket",
    "webbrowser",
    "tempfile",
    "fileinput",
    "pydoc",
    "asyncio",
    "zipfile",
    "tarfile",
    "distutils",
    "setuptools",
    "pip",
    "site",
    "threading",
    "_thread",
}
PYTHON_NAMES = {
    "exec",
    "eval",
    "compile",
    "__import__",
    "open",
    "getattr",
    "setattr",
    "delattr",
    "globals",
    "locals",
    "vars",
    "breakpoint",
    "help",
    "input",
    "memoryview",
    "object",
    "type",
    "modules",
}
OTHER_CODE = re.compile(
    r"`|%x|\b(system|exec\w*|spawn\w*|popen\w*|qx|unlink\w*|rmtree|rm_r\w*|rm_rf|rmdir\w*|rm\w*Sync|rm|remove\w*|"
    r"FileUtils|child_process|process|eval|Function|import|require|open\w*|IO|Kernel|send|fork|syscall|"
    r"shell_exec|passthru|proc_open|fs|Deno|Bun|File|Dir|os|io|load|do|glob|rename\w*|write\w*|chmod|chown|kill)\b"
)
MAX_CODE_CHARS = 20_000


def inline_code_problem(program: str, code: str) -> str | None:
    """Why inline `code` for `program` needs a person, or None when it plainly cannot run or delete anything."""
    if len(code) > MAX_CODE_CHARS:
        return f"runs {len(code)} characters of inline {program} code, too long to check here"
    if re.fullmatch(r"python(\d+(\.\d+)?)?|pypy3?", program):
        return _python_problem(code)
    match = OTHER_CODE.search(code)
    if match:
        return f"runs inline {program} code that uses `{match.group(0)}`, which can run commands or change files: not checked here"
    return None


def _python_problem(code: str) -> str | None:
    try:
        tree = ast.parse(code)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return "runs inline Python code that does not parse here, so it cannot be checked"
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            names = [node.module or "."] if node.level == 0 else []
        elif isinstance(node, ast.Name):
            names = [node.id] if node.id in PYTHON_NAMES or node.id.startswith("__") else []
        elif isinstance(node, ast.Attribute):
            names = [node.attr] if node.attr in PYTHON_NAMES or node.attr.startswith("_") else []
        else:
            continue
        for name in names:
            if name.split(".")[0] in PYTHON_MODULES or name in PYTHON_NAMES or name.startswith("_"):
                return f"runs inline Python code that uses `{name}`, which can run commands or change files: not checked here"
    return None
