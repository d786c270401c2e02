"""`activate_skill`: the second tier of progressive disclosure. The system prompt lists skills by name and
description only; this tool hands the model a skill's full instructions, and its other files, on demand."""

from __future__ import annotations

from pydantic import BaseModel, Field

from skills.loader import SkillCatalog
from tools.base import Tool, ToolContext, ToolError, ToolResult

MAX_FILE_CHARS = 20_000
# Said after the body, where a small model looks last: it tends to copy a skill's examples verbatim.
FOLLOW = "Now follow these steps for YOUR task. Use the names and behaviour your task asks for, not the example's."


class ActivateParams(BaseModel):
    name: str = Field(description="Name of the skill, exactly as listed under Skills.")
    file: str | None = Field(default=None, description="A file listed by an earlier activate_skill, to read it instead")


class ActivateSkillTool(Tool):
    name = "activate_skill"
    description = "Load the full instructions of a skill listed under Skills, and the list of its files."
    Params = ActivateParams

    def __init__(self, catalog: SkillCatalog):
        self.catalog = catalog

    def run(self, params: ActivateParams, ctx: ToolContext) -> ToolResult:
        skill = self.catalog.get(params.name.strip())
        if skill is None:
            available = ", ".join(self.catalog.names()) or "none"
            name = params.name.strip()
            hint = (f" {name!r} looks like a tool, not a skill (skill names use hyphens): call it directly as "
                    f"<{name}>...</{name}>." if "_" in name else "")
            raise ToolError(f"unknown skill {name!r}; available skills: {available}.{hint}")
        if params.file and params.file.strip():
            return ToolResult(output=self._read_file(skill.name, skill.files, skill.directory, params.file.strip()))
        parts = [f'<skill name="{skill.name}">', skill.body, "</skill>", FOLLOW]
        if skill.files:
            parts.append(f"Files of this skill (folder {skill.directory}); read one with activate_skill, "
                         f"name {skill.name} and file set to its path:")
            parts += [f"- {f}" for f in skill.files]
        return ToolResult(output="\n".join(parts))

    @staticmethod
    def _read_file(name: str, files: list[str], directory, wanted: str) -> str:
        rel = wanted.removeprefix("./")
        if rel not in files:
            listed = ", ".join(files) or "none"
            raise ToolError(f"skill {name!r} has no file {wanted!r}; its files: {listed}")
        text = (directory / rel).read_text(encoding="utf-8", errors="replace")
        cut = f"\n[... cut at {MAX_FILE_CHARS} characters]" if len(text) > MAX_FILE_CHARS else ""
        return f'<skill_file skill="{name}" path="{rel}">\n{text[:MAX_FILE_CHARS]}{cut}\n</skill_file>'
