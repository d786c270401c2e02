"""Find skills (folders with a SKILL.md) and read them leniently, following the agentskills.io format.

A skill is YAML front matter (`name`, `description`) plus a Markdown body, and optionally other files in its
folder. Discovery never raises for a bad skill: a malformed SKILL.md is reported in `SkillCatalog.problems`
and skipped, so one broken file in a user's folder cannot stop a run.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Literal

import yaml
from pydantic import BaseModel

from inference.errors import DflashError
from inference.paths import config_dir

Source = Literal["bundled", "user", "project"]

BUNDLED_DIR = Path(__file__).parent / "bundled"
SKILL_FILE = "SKILL.md"
NAME_RE = re.compile(r"^[a-z0-9-]{1,64}$")
MAX_DESCRIPTION = 1024
MAX_LISTED_FILES = 50
_FRONT_MATTER = re.compile(r"\A\ufeff?---[ \t]*\r?\n(.*?)\r?\n---[ \t]*(?:\r?\n|\Z)(.*)\Z", re.DOTALL)


class Skill(BaseModel):
    name: str
    description: str
    path: Path  # the SKILL.md file
    source: Source
    body: str
    files: list[str] = []  # other files in the skill folder, relative to it (posix)

    @property
    def directory(self) -> Path:
        return self.path.parent


class SkillProblem(BaseModel):
    path: Path
    reason: str
    skipped: bool = True  # False: a warning, the skill was still loaded


class SkillCatalog(BaseModel):
    skills: list[Skill] = []  # sorted by name, one per name (the last source found wins)
    problems: list[SkillProblem] = []

    def get(self, name: str) -> Skill | None:
        return next((s for s in self.skills if s.name == name), None)

    def names(self) -> list[str]:
        return [s.name for s in self.skills]


class SkillError(DflashError, ValueError):
    """A SKILL.md that cannot be used; the message says why."""


def default_user_dirs() -> list[Path]:
    """User skill folders, lowest precedence first: ours, then the cross-client and Claude conventions."""
    home = Path.home()
    return [config_dir() / "skills", home / ".agents" / "skills", home / ".claude" / "skills"]


def project_dirs(project: Path) -> list[Path]:
    """Project skill folders, lowest precedence first."""
    return [project / ".agents" / "skills", project / ".claude" / "skills"]


def discover_skills(
    project: Path | None = None, user_dirs: list[Path] | None = None, bundled_dir: Path | None = BUNDLED_DIR
) -> SkillCatalog:
    """All skills: bundled, then user dirs (default: `default_user_dirs()`), then the project's; a later
    source replaces an earlier skill with the same name, so a project can override what we ship."""
    roots: list[tuple[Path, Source]] = []
    if bundled_dir is not None:
        roots.append((bundled_dir, "bundled"))
    roots += [(d, "user") for d in (default_user_dirs() if user_dirs is None else user_dirs)]
    if project is not None:
        roots += [(d, "project") for d in project_dirs(Path(project))]
    found: dict[str, Skill] = {}
    problems: list[SkillProblem] = []
    for root, source in roots:
        for skill_md in _skill_files(root):
            try:
                skill = load_skill(skill_md, source, problems)
            except SkillError as exc:
                problems.append(SkillProblem(path=skill_md, reason=str(exc)))
                continue
            found[skill.name] = skill
    return SkillCatalog(skills=sorted(found.values(), key=lambda s: s.name), problems=problems)


def _skill_files(root: Path) -> list[Path]:
    """`<root>/<name>/SKILL.md` for each skill folder (one level deep, as every client does)."""
    if not root.is_dir():
        return []
    return sorted(p / SKILL_FILE for p in root.iterdir() if p.is_dir() and (p / SKILL_FILE).is_file())


def load_skill(path: Path, source: Source = "project", warnings: list[SkillProblem] | None = None) -> Skill:
    """Read one SKILL.md; raise SkillError when it cannot be used. Recoverable oddities (name differs from
    its folder) are appended to `warnings`."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeError) as exc:
        raise SkillError(f"cannot read: {exc}") from None
    meta, body = parse_front_matter(text)
    name, description = meta.get("name"), meta.get("description")
    if not isinstance(name, str) or not name.strip():
        raise SkillError("front matter has no `name`")
    name = name.strip()
    if not NAME_RE.match(name):
        raise SkillError(f"name {name!r} must be 1-64 characters of a-z, 0-9 and '-'")
    if not isinstance(description, str) or not description.strip():
        raise SkillError("front matter has no `description`")
    description = " ".join(description.split())
    if len(description) > MAX_DESCRIPTION:
        raise SkillError(f"description is {len(description)} characters; the limit is {MAX_DESCRIPTION}")
    if name != path.parent.name and warnings is not None:
        warnings.append(SkillProblem(path=path, reason=f"name {name!r} differs from its folder name", skipped=False))
    return Skill(
        name=name,
        description=description,
        path=path.resolve(),
        source=source,
        body=body.strip(),
        files=_bundled_files(path.parent),
    )


def parse_front_matter(text: str) -> tuple[dict, str]:
    """Split `---` YAML front matter from the body. Lenient as the agentskills guide asks: when YAML fails,
    retry with unquoted values that contain ':' quoted (a common hand-written mistake)."""
    match = _FRONT_MATTER.match(text)
    if not match:
        raise SkillError("no YAML front matter (the file must start with a '---' line and close it with another)")
    raw, body = match.groups()
    try:
        meta = yaml.safe_load(raw)
    except yaml.YAMLError:
        try:
            meta = yaml.safe_load(_quote_colon_values(raw))
        except yaml.YAMLError as exc:
            raise SkillError(f"front matter is not valid YAML: {str(exc).splitlines()[0]}") from None
    if not isinstance(meta, dict):
        raise SkillError("front matter is not a YAML mapping of `key: value` lines")
    return meta, body


def _quote_colon_values(raw: str) -> str:
    lines = []
    for line in raw.splitlines():
        key, sep, value = line.partition(":")
        value = value.strip()
        if sep and re.fullmatch(r"[A-Za-z][\w-]*", key) and ":" in value and value[:1] not in "\"'|>":
            line = f"{key}: " + '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'
        lines.append(line)
    return "\n".join(lines)


def _bundled_files(folder: Path) -> list[str]:
    files = []
    for path in sorted(folder.rglob("*")):
        rel = path.relative_to(folder)
        if (
            path.is_file()
            and rel.as_posix() != SKILL_FILE
            and not any(p.startswith(".") or p == "__pycache__" for p in rel.parts)
        ):
            files.append(rel.as_posix())
    return files[:MAX_LISTED_FILES]


CATALOG_INTRO = "Skills (load one with activate_skill when the task needs it):"


def catalog_prompt(catalog: SkillCatalog, intro: str = CATALOG_INTRO) -> str | None:
    """The skill catalog for a prompt: names and descriptions only (a body stays out until the model activates
    its skill). None when there are no skills, so nothing is shown."""
    if not catalog.skills:
        return None
    return intro + "\n" + "\n".join(f"- {s.name}: {s.description}" for s in catalog.skills)
