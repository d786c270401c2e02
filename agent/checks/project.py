"""The project, known once: its language, how to test it and how to set up its environment. `agent init`,
the `finish` gate, `run`'s final test run and `refactor`'s default verification all ask here, so a Rust or
Node repository is tested with its own command everywhere, and AGENTS.md's test command wins over detection.

The project's own environment (a Python `.venv` with pytest, `npm install` for a Node project's
dependencies) is made under the run's sandbox; only the install step gets the network, and only when the
local package indexes, wheel folders and caches cannot serve it."""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
from collections import Counter
from pathlib import Path
from typing import Literal

from pydantic import BaseModel

from agent.core.memory import read_project_memory
from inference.paths import platform_cache_dir
from tools.sandbox import SandboxPolicy
from tools.shell import run_command
from tools.workspace import iter_files

Language = Literal["python", "node", "rust", "go", "java"]

LANGUAGES = {
    ".py": "Python",
    ".js": "JavaScript",
    ".ts": "TypeScript",
    ".tsx": "TypeScript",
    ".go": "Go",
    ".rs": "Rust",
    ".java": "Java",
    ".kt": "Kotlin",
    ".c": "C",
    ".h": "C",
    ".cpp": "C++",
    ".cc": "C++",
    ".hpp": "C++",
    ".rb": "Ruby",
    ".php": "PHP",
    ".cs": "C#",
    ".swift": "Swift",
    ".sh": "Shell",
    ".md": "Markdown",
    ".html": "HTML",
    ".css": "CSS",
    ".sql": "SQL",
    ".toml": "TOML",
    ".yaml": "YAML",
    ".yml": "YAML",
    ".json": "JSON",
}

# A manifest names the language before any file count does; first match wins.
MANIFESTS: tuple[tuple[str, Language], ...] = (
    ("Cargo.toml", "rust"),
    ("package.json", "node"),
    ("go.mod", "go"),
    ("pom.xml", "java"),
    ("build.gradle", "java"),
    ("build.gradle.kts", "java"),
    ("pyproject.toml", "python"),
    ("setup.py", "python"),
    ("setup.cfg", "python"),
    ("requirements.txt", "python"),
)
SOURCE_LANGUAGE: dict[str, Language] = {
    ".py": "python",
    ".js": "node",
    ".mjs": "node",
    ".cjs": "node",
    ".ts": "node",
    ".rs": "rust",
    ".go": "go",
    ".java": "java",
    ".kt": "java",
}

CONVENTION_FILES = {
    "pyproject.toml": "Python packaging and tool settings are in pyproject.toml.",
    "setup.py": "Python packaging uses setup.py.",
    "requirements.txt": "Python dependencies are listed in requirements.txt.",
    "package.json": "Node project: scripts and dependencies are in package.json.",
    "Makefile": "A Makefile defines common tasks (see its targets).",
    "Cargo.toml": "Rust crate: build and test with cargo.",
    "go.mod": "Go module: build and test with go.",
    "pom.xml": "Maven project: build and test with mvn.",
    ".editorconfig": "Follow the formatting in .editorconfig.",
    ".pre-commit-config.yaml": "pre-commit hooks are configured in .pre-commit-config.yaml.",
    "tox.ini": "tox environments are defined in tox.ini.",
    "setup.cfg": "Tool settings are also in setup.cfg.",
}

NPM_PLACEHOLDER = "no test specified"  # `npm init`'s test script, which always fails
NODE_TEST_FILE = re.compile(r"(test|test-.*|.*[._-]test)\.[cm]?js$")  # what `node --test` runs by default
NODE_SUFFIXES = (".js", ".mjs", ".cjs")
PYTHON_ENV_DIRS = (".venv", "venv")
WHEELHOUSE = platform_cache_dir() / "wheels"  # `pip download pytest -d` here to work offline
# Settings the install step (and only it) sees: where the index is, its certificates, proxies.
INSTALL_ENV = [
    "PIP_CONFIG_FILE",
    "PIP_FIND_LINKS",
    "PIP_INDEX_URL",
    "PIP_EXTRA_INDEX_URL",
    "PIP_TRUSTED_HOST",
    "PIP_CERT",
    "PIP_DEFAULT_TIMEOUT",
    "UV_INDEX_URL",
    "UV_EXTRA_INDEX_URL",
    "npm_config_registry",
    "NODE_EXTRA_CA_CERTS",
    "http_proxy",
    "https_proxy",
    "no_proxy",
    "HTTP_PROXY",
    "HTTPS_PROXY",
    "NO_PROXY",
]


# --- what the project is -------------------------------------------------------------------------------


def language(workspace: Path) -> Language | None:
    """The project's main language: its manifest's, else the one most of its source files are in."""
    for name, lang in MANIFESTS:
        if (workspace / name).is_file():
            return lang
    counts = Counter(SOURCE_LANGUAGE[p.suffix] for p in iter_files(workspace, workspace) if p.suffix in SOURCE_LANGUAGE)
    return counts.most_common(1)[0][0] if counts else None


def test_command(workspace: Path) -> str | None:
    """How to run the project's tests: the command AGENTS.md (or CLAUDE.md) names, else the detected one."""
    return instructed_test_command(workspace) or detect_test_command(workspace)


def instructed_test_command(workspace: Path) -> str | None:
    """The command in the project instructions' tests section: the first code block, or the first `code`
    on a line that says to run something (so "Tests live in `tests/`" is not taken for a command)."""
    memory = read_project_memory(workspace)
    if memory is None:
        return None
    for section in re.split(r"^#+[ \t]*", memory.text, flags=re.MULTILINE)[1:]:
        heading, _, body = section.partition("\n")
        if "test" not in heading.lower():
            continue
        if block := re.search(r"^```[^\n]*\n\s*(?:\$\s*)?([^\n]+)", body, flags=re.MULTILINE):
            return block.group(1).strip()
        for line in body.splitlines():
            if re.search(r"\brun", line, flags=re.IGNORECASE) and (span := re.search(r"`([^`\n]+)`", line)):
                return span.group(1).strip()
    return None


def detect_test_command(workspace: Path) -> str | None:
    """The test command the project's files imply: its manifest's (npm, cargo, go, Maven, Gradle), pytest
    when there are Python test files, `node --test` for Node test files, else a Makefile's `test` target."""
    workspace = Path(workspace)
    script = _npm_test_script(workspace)
    if script and NPM_PLACEHOLDER not in script:
        return "npm test"
    if (workspace / "Cargo.toml").is_file():
        return "cargo test"
    if (workspace / "go.mod").is_file():
        return "go test ./..."
    if (workspace / "pom.xml").is_file():
        return "mvn -q test"
    if (workspace / "build.gradle").is_file() or (workspace / "build.gradle.kts").is_file():
        return "./gradlew test" if (workspace / "gradlew").is_file() else "gradle test"
    files = list(iter_files(workspace, workspace))
    if any(p.suffix == ".py" and (p.name.startswith("test_") or p.stem.endswith("_test")) for p in files):
        return python_test_command(workspace)
    if any(
        p.suffix in NODE_SUFFIXES and (NODE_TEST_FILE.match(p.name) or "test" in p.relative_to(workspace).parts[:-1])
        for p in files
    ):
        return "node --test"
    makefile = workspace / "Makefile"
    if makefile.is_file() and re.search(r"^test:", makefile.read_text(errors="replace"), flags=re.MULTILINE):
        return "make test"
    return None


def _npm_test_script(workspace: Path) -> str:
    try:
        scripts = json.loads((workspace / "package.json").read_text(encoding="utf-8")).get("scripts") or {}
        return str(scripts.get("test", ""))
    except (ValueError, AttributeError, OSError):
        return ""


def python_test_command(workspace: Path) -> str:
    """pytest with the project's Python: the `.venv`'s (first on the commands' PATH), else `python`, else
    `python3` where there is no `python` command (stock Debian)."""
    if python_env(workspace) or shutil.which("python"):
        return "python -m pytest -q"
    return "python3 -m pytest -q"


def python_stamps(workspace: Path) -> dict[Path, tuple[int, int]]:
    """Each Python file's (mtime, size): what `doctest_command` compares against to find the files a run wrote."""
    return {
        p: (st.st_mtime_ns, st.st_size)
        for p in iter_files(workspace, workspace)
        if p.suffix == ".py"
        for st in [p.stat()]
    }


def doctest_command(workspace: Path, limit: int = 20, since: dict[Path, tuple[int, int]] | None = None) -> str | None:
    """For a Python project without tests: its docstring examples (`>>>`) as the check, when it has some.
    `since`: only the files written after these stamps were taken. Examples in a file the run never touched say
    nothing about the run (they may have failed before it: a stub the task did not name)."""
    written = [p for p in iter_files(workspace, workspace) if p.suffix == ".py"]
    if since is not None:
        written = [p for p in written if since.get(p) != (p.stat().st_mtime_ns, p.stat().st_size)]
    files = [p for p in written if _has_examples(p)][:limit]
    if not files:
        return None
    python = python_test_command(workspace).split()[0]
    names = " ".join(shlex.quote(p.relative_to(workspace).as_posix()) for p in files)
    return f"{python} -m doctest -o NORMALIZE_WHITESPACE -o ELLIPSIS {names}"


def _has_examples(path: Path) -> bool:
    try:
        return (
            path.stat().st_size < 200_000 and re.search(r"^\s*>>> ", path.read_text(errors="replace"), re.M) is not None
        )
    except OSError:
        return False


# --- its environment -----------------------------------------------------------------------------------


def python_env(workspace: Path) -> Path | None:
    """The project's virtual environment (`.venv` or `venv` with a Python in it), if it has one."""
    for name in PYTHON_ENV_DIRS:
        if (Path(workspace) / name / "bin" / "python").exists():
            return Path(workspace) / name
    return None


def command_policy(base: SandboxPolicy, workspace: Path) -> SandboxPolicy:
    """`base` with the project's environment for its commands: the `.venv`'s bin first on PATH, so
    `python -m pytest` is the project's Python and pytest on any machine."""
    # No bytecode caches: a file rewritten within the same second at the same size (`x + x` -> `x * x`) would
    # otherwise run as its stale .pyc, and the tests would judge the old code.
    base = base.model_copy(update={"env": {**base.env, "PYTHONDONTWRITEBYTECODE": "1"}})
    env = python_env(workspace)
    if env is None:
        return base
    path = f"{env.resolve()}/bin{os.pathsep}{os.environ.get('PATH', os.defpath)}"
    return base.model_copy(update={"env": {**base.env, "PATH": path, "VIRTUAL_ENV": str(env.resolve())}})


class SetupStep(BaseModel):
    command: str
    ok: bool
    network: bool  # this step was allowed the network
    output_tail: str = ""


class SetupReport(BaseModel):
    """What was done to give the project its environment; `installed` is what the run's summary shows."""

    language: str | None
    installed: list[str] = []
    steps: list[SetupStep] = []
    problem: str | None = None  # why the environment is incomplete, in one line

    def describe(self) -> str:
        if self.problem:
            return f"incomplete: {self.problem}"
        return ", ".join(self.installed) or "nothing to install"


def setup_environment(
    workspace: Path, lang: str | None, policy: SandboxPolicy, *, timeout: float = 300, offline: bool = False
) -> SetupReport:
    """Give the project what its tests need: a Python project a `.venv` with pytest (uv when installed, else
    `python3 -m venv`), a Node project with dependencies `npm install`. Every step runs under `policy`
    (the run's sandbox); an install step gets the network only when it cannot be served locally and
    `offline` is off."""
    report = SetupReport(language=lang)
    workspace = Path(workspace)
    if lang == "python":
        _python_env(workspace, policy, timeout, offline, report)
    elif lang == "node" and _npm_dependencies(workspace) and not (workspace / "node_modules").is_dir():
        (Path.home() / ".npm").mkdir(exist_ok=True)  # npm's cache: writable for the install step only
        _install(
            workspace,
            policy,
            timeout,
            offline,
            report,
            "node_modules (npm install)",
            local="npm install --offline --ignore-scripts --no-audit --no-fund",
            remote="npm install --ignore-scripts --no-audit --no-fund",
            writable=[str(Path.home() / ".npm")],
        )
    return report


def _python_env(workspace: Path, policy: SandboxPolicy, timeout: float, offline: bool, report: SetupReport) -> None:
    env = python_env(workspace)
    if env and any(env.glob("lib/python3*/site-packages/pytest")):
        return
    uv = shutil.which("uv")
    if uv:  # uv keeps its own cache (what it installs offline from): writable for the set-up steps
        cache = Path(os.environ.get("UV_CACHE_DIR") or Path.home() / ".cache" / "uv")
        cache.mkdir(parents=True, exist_ok=True)
        policy = policy.model_copy(update={"extra_writable": [*policy.extra_writable, str(cache)]})
    if env is None:
        python3 = shutil.which("python3")
        if not uv and not python3:
            report.problem = "no python3 on PATH to make the project's .venv; install Python 3"
            return
        create = "uv venv -q .venv" if uv else "python3 -m venv .venv"
        if not _step(workspace, create, policy, timeout, report):
            hint = "" if uv else " (on Debian: `apt-get install python3-venv`)"
            report.problem = (
                f"`{create}` failed{hint}: {(report.steps[-1].output_tail.splitlines() or ['no output'])[-1]}"
            )
            return
        report.installed.append(f".venv ({create})")
        env = workspace / ".venv"
    python = f"{env.name}/bin/python"
    links = f" --find-links {WHEELHOUSE}" if WHEELHOUSE.is_dir() else ""
    pip = f"uv pip install -q --python {python}" if uv else f"{python} -m pip install -q --disable-pip-version-check"
    # without the network: what pip's configured local indexes and wheel folders (or uv's cache) hold
    local = f"{pip} --offline{links} pytest" if uv else f"{pip} --retries 0 --timeout 5{links} pytest"
    _install(
        workspace, policy, timeout, offline, report, f"pytest into {env.name}", local=local, remote=f"{pip} pytest"
    )


def _install(
    workspace: Path,
    policy: SandboxPolicy,
    timeout: float,
    offline: bool,
    report: SetupReport,
    what: str,
    *,
    local: str,
    remote: str,
    writable: list[str] | None = None,
) -> None:
    """Install from the local caches first; then, unless offline, with the network for this one command."""
    installer = policy.model_copy(
        update={
            "allow_env": [*policy.allow_env, *INSTALL_ENV],
            "extra_writable": [*policy.extra_writable, *(writable or [])],
        }
    )
    if _step(workspace, local, installer, timeout, report):
        report.installed.append(f"{what}, from local files")
        return
    if offline:
        report.problem = f"could not install {what} offline (no local copy); run once with the network"
        return
    if _step(workspace, remote, installer.model_copy(update={"network": True}), timeout, report):
        report.installed.append(f"{what}, from the network")
    else:
        report.problem = f"`{remote}` failed: {(report.steps[-1].output_tail.splitlines() or ['no output'])[-1]}"


def _step(workspace: Path, command: str, policy: SandboxPolicy, timeout: float, report: SetupReport) -> bool:
    outcome = run_command(command, workspace, timeout, 4000, policy)
    tail = "\n".join(outcome.output.strip().splitlines()[-5:])
    report.steps.append(SetupStep(command=command, ok=outcome.exit_code == 0, network=policy.network, output_tail=tail))
    return outcome.exit_code == 0


def _npm_dependencies(workspace: Path) -> bool:
    try:
        manifest = json.loads((workspace / "package.json").read_text(encoding="utf-8"))
    except (ValueError, OSError):
        return False
    return isinstance(manifest, dict) and any(manifest.get(k) for k in ("dependencies", "devDependencies"))


# --- a new project -------------------------------------------------------------------------------------


class Recipe(BaseModel):
    """How a new project in one language is laid out and tested: what the new-project task tells the model."""

    language: Language
    layout: str
    test_command: str
    no_tests: str  # the `finish` gate's answer while there are no tests


RECIPES: dict[str, Recipe] = {
    "python": Recipe(
        language="python",
        test_command="python -m pytest -q",
        layout=(
            "Put tests in files named test_*.py that import the code they test. Work out "
            "each expected value by hand before you write it in a test."
        ),
        no_tests="there are no tests yet; write test_*.py files and run them",
    ),
    "node": Recipe(
        language="node",
        test_command="node --test",
        layout=(
            'Write a package.json with "scripts": {"test": "node --test"} and no dependencies.\n'
            "End each module with its exports, e.g. `module.exports = { add };` in math.js.\n"
            "Put tests in files named <module>.test.js that start like this:\n"
            'const test = require("node:test");\nconst assert = require("node:assert");\n'
            'const { add } = require("./math");'
        ),
        no_tests="there are no tests yet; write *.test.js files (node:test) and run them",
    ),
    "rust": Recipe(
        language="rust",
        test_command="cargo test",
        layout=(
            'Make a library crate: Cargo.toml ([package] with name, version = "0.1.0", '
            'edition = "2021"; no dependencies) and src/lib.rs with `pub fn`s, standard library '
            "only.\nPut the unit tests at the bottom of src/lib.rs:\n#[cfg(test)]\nmod tests {\n"
            "    use super::*;\n\n    #[test]\n    fn it_works() {\n        assert_eq!(...);\n    }\n}"
        ),
        no_tests="there are no tests yet; add a Cargo.toml and #[test] functions, then run cargo test",
    ),
}


def guess_language(request: str) -> Language:
    """The language a new project's request asks for; Python unless it names another."""
    text = request.lower()
    if re.search(r"\b(rust|cargo|crate)\b", text):
        return "rust"
    if re.search(r"\b(node\.?js|javascript|npm|node (module|package|project|script))\b|node --test|\.[cm]?js\b", text):
        return "node"
    return "python"


# --- AGENTS.md -----------------------------------------------------------------------------------------


def draft_agents_md(workspace: Path) -> str:
    """A first AGENTS.md: layout, languages, test command and conventions, as found in `workspace`."""
    workspace = Path(workspace).resolve()
    files = list(iter_files(workspace, workspace))
    parts = [p.relative_to(workspace).parts for p in files]
    top = sorted({rel[0] + ("/" if len(rel) > 1 else "") for rel in parts})
    languages = Counter(LANGUAGES[p.suffix] for p in files if p.suffix in LANGUAGES)
    command = detect_test_command(workspace)
    conventions = [text for name, text in CONVENTION_FILES.items() if (workspace / name).is_file()]
    lines = [f"# {workspace.name}", "", "Instructions for coding agents working in this repository.", "", "## Layout"]
    lines += [f"- `{entry}`" for entry in top[:40]] or ["- (empty)"]
    if len(top) > 40:
        lines.append(f"- ... and {len(top) - 40} more")
    if languages:
        counts = [f"{lang} ({n} file{'s' if n > 1 else ''})" for lang, n in languages.most_common(6)]
        lines += ["", "## Languages", ", ".join(counts)]
    lines += ["", "## Tests"]
    lines.append(
        f"Run the tests with `{command}` and make them pass before finishing."
        if command
        else "No test command was detected. Add tests and write here how to run them."
    )
    if conventions:
        lines += ["", "## Conventions"] + [f"- {c}" for c in conventions]
    lines += [
        "",
        "## Rules",
        "- Keep changes small and focused on the task.",
        "- Follow the style of the code around your change.",
    ]
    return "\n".join(lines) + "\n"


def write_agents_md(workspace: Path, force: bool = False) -> Path:
    """Write the drafted AGENTS.md; refuse (FileExistsError) to replace an existing one unless `force`."""
    path = Path(workspace) / "AGENTS.md"
    if path.exists() and not force:
        raise FileExistsError(f"{path} already exists; pass --force to replace it")
    path.write_text(draft_agents_md(workspace), encoding="utf-8")
    return path
