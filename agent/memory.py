"""Project memory: the repository's AGENTS.md (or CLAUDE.md when there is none) goes into the system prompt,
and `agent init` drafts a first AGENTS.md from what is in the repository."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

from pydantic import BaseModel

MEMORY_FILES = ("AGENTS.md", "CLAUDE.md")
MAX_MEMORY_CHARS = 8000

LANGUAGES = {".py": "Python", ".js": "JavaScript", ".ts": "TypeScript", ".tsx": "TypeScript", ".go": "Go",
             ".rs": "Rust", ".java": "Java", ".kt": "Kotlin", ".c": "C", ".h": "C", ".cpp": "C++", ".cc": "C++",
             ".hpp": "C++", ".rb": "Ruby", ".php": "PHP", ".cs": "C#", ".swift": "Swift", ".sh": "Shell",
             ".md": "Markdown", ".html": "HTML", ".css": "CSS", ".sql": "SQL", ".toml": "TOML", ".yaml": "YAML",
             ".yml": "YAML", ".json": "JSON"}

CONVENTION_FILES = {
    "pyproject.toml": "Python packaging and tool settings are in pyproject.toml.",
    "setup.py": "Python packaging uses setup.py.",
    "requirements.txt": "Python dependencies are listed in requirements.txt.",
    "package.json": "Node project: scripts and dependencies are in package.json.",
    "Makefile": "A Makefile defines common tasks (see its targets).",
    "Cargo.toml": "Rust crate: build and test with cargo.",
    "go.mod": "Go module: build and test with go.",
    ".editorconfig": "Follow the formatting in .editorconfig.",
    ".pre-commit-config.yaml": "pre-commit hooks are configured in .pre-commit-config.yaml.",
    "tox.ini": "tox environments are defined in tox.ini.",
    "setup.cfg": "Tool settings are also in setup.cfg.",
}


class ProjectMemory(BaseModel):
    path: Path
    text: str
    truncated: bool


def read_project_memory(workspace: Path, limit: int = MAX_MEMORY_CHARS) -> ProjectMemory | None:
    """The first of AGENTS.md, CLAUDE.md at the workspace root that has content, cut to `limit` characters."""
    for name in MEMORY_FILES:
        path = Path(workspace) / name
        if not path.is_file():
            continue
        text = path.read_text(encoding="utf-8", errors="replace").strip()
        if text:
            return ProjectMemory(path=path, text=text[:limit], truncated=len(text) > limit)
    return None


def memory_section(workspace: Path, limit: int = MAX_MEMORY_CHARS) -> str | None:
    """The system-prompt section with the project's instructions, or None when there are none."""
    memory = read_project_memory(workspace, limit)
    if memory is None:
        return None
    note = ""
    if memory.truncated:
        note = f"\n[... {memory.path.name} was cut at {limit} characters; read the rest with read_file]"
    return f"Project instructions from {memory.path.name}:\n{memory.text}{note}"


def draft_agents_md(workspace: Path) -> str:
    """A first AGENTS.md: layout, languages, test command and conventions, as found in `workspace`."""
    # imported here: agent.workflows imports the runtime, which imports this module
    from agent.workflows import detect_test_command
    from tools.workspace import iter_files

    workspace = Path(workspace).resolve()
    files = list(iter_files(workspace, workspace))
    parts = [p.relative_to(workspace).parts for p in files]
    top = sorted({rel[0] + ("/" if len(rel) > 1 else "") for rel in parts})
    languages = Counter(LANGUAGES[p.suffix] for p in files if p.suffix in LANGUAGES)
    test_command = detect_test_command(workspace) or _other_test_command(workspace)
    conventions = [text for name, text in CONVENTION_FILES.items() if (workspace / name).is_file()]
    lines = [f"# {workspace.name}", "", "Instructions for coding agents working in this repository.", "", "## Layout"]
    lines += [f"- `{entry}`" for entry in top[:40]] or ["- (empty)"]
    if len(top) > 40:
        lines.append(f"- ... and {len(top) - 40} more")
    if languages:
        counts = [f"{lang} ({n} file{'s' if n > 1 else ''})" for lang, n in languages.most_common(6)]
        lines += ["", "## Languages", ", ".join(counts)]
    lines += ["", "## Tests"]
    lines.append(f"Run the tests with `{test_command}` and make them pass before finishing." if test_command
                 else "No test command was detected. Add tests and write here how to run them.")
    if conventions:
        lines += ["", "## Conventions"] + [f"- {c}" for c in conventions]
    lines += ["", "## Rules", "- Keep changes small and focused on the task.",
              "- Follow the style of the code around your change."]
    return "\n".join(lines) + "\n"


def _other_test_command(workspace: Path) -> str | None:
    """Test commands for projects without Python test files: npm, cargo, go, make."""
    package = workspace / "package.json"
    if package.is_file():
        try:
            if "test" in json.loads(package.read_text(encoding="utf-8")).get("scripts", {}):
                return "npm test"
        except (ValueError, AttributeError):
            pass
    if (workspace / "Cargo.toml").is_file():
        return "cargo test"
    if (workspace / "go.mod").is_file():
        return "go test ./..."
    makefile = workspace / "Makefile"
    if makefile.is_file() and any(line.startswith("test:") for line in makefile.read_text(errors="replace").splitlines()):
        return "make test"
    return None


def write_agents_md(workspace: Path, force: bool = False) -> Path:
    """Write the drafted AGENTS.md; refuse (FileExistsError) to replace an existing one unless `force`."""
    path = Path(workspace) / "AGENTS.md"
    if path.exists() and not force:
        raise FileExistsError(f"{path} already exists; pass --force to replace it")
    path.write_text(draft_agents_md(workspace), encoding="utf-8")
    return path
