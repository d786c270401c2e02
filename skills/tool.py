"""`activate_skill`: the second tier of progressive disclosure. The tool's description is the catalog (names
and descriptions only); calling it hands the model one skill's full instructions and the paths of its files."""

from __future__ import annotations

from pydantic import BaseModel, Field

from skills.loader import SkillCatalog, catalog_prompt
from tools.base import Tool, ToolContext, ToolError, ToolResult

INTRO = "Load the full instructions of one of these skills, and the list of its files:"
# Said after the body, where a small model looks last: it tends to copy a skill's examples verbatim.
FOLLOW = "Now follow these steps for YOUR task. Use the names and behaviour your task asks for, not the example's."


class ActivateParams(BaseModel):
    # One parameter only: given an optional second one, the 1.5B model filled it with made-up values.
    name: str = Field(description="Name of the skill, exactly as listed above.")


class ActivateSkillTool(Tool):
    name = "activate_skill"
    description = "Load the full instructions of a skill, and the list of its files."
    Params = ActivateParams
    read_only = True

    def __init__(self, catalog: SkillCatalog):
        self.catalog = catalog
        # The catalog lives in this description, inside the tool list, rather than as a section after it: with
        # the 1.5B model, text appended at the end of the system prompt (right above the task) measurably
        # changed its first reply (whole-file rewrites that dropped code), while this placement did not.
        self.description = catalog_prompt(catalog, INTRO) or self.description

    def run(self, params: ActivateParams, ctx: ToolContext) -> ToolResult:
        skill = self.catalog.get(params.name.strip())
        if skill is None:
            available = ", ".join(self.catalog.names()) or "none"
            raise ToolError(f"unknown skill {params.name!r}; available skills: {available}")
        parts = [f'<skill name="{skill.name}">', skill.body, "</skill>"]
        if skill.files:  # outside the workspace, so read_file refuses them; bash can read them
            parts.append("Files of this skill (read one with bash: cat PATH):")
            parts += [f"- {skill.directory / f}" for f in skill.files]
        parts.append(FOLLOW)
        return ToolResult(output="\n".join(parts))
