"""`agent skills list|show` and `agent init`: what the agent learns about a project (skills, AGENTS.md)."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer
from rich.console import Console
from rich.table import Table

from agent.cli import _fail, app
from agent.plain import plain, visible
from agent.project import write_agents_md
from skills.loader import discover_skills

skills_app = typer.Typer(help="List and show the skills the agent can activate.", no_args_is_help=True)
app.add_typer(skills_app, name="skills")

ProjectOpt = typer.Option(Path("."), "--project", "-p", help="Project whose .agents/skills and .claude/skills are included.")


@skills_app.command("list")
def skills_list(project: Path = ProjectOpt) -> None:
    """Show every skill found (bundled, user, project; later ones override), then malformed SKILL.md files."""
    catalog = discover_skills(project.resolve())
    table = Table("name", "source", "description", "path")
    for skill in catalog.skills:
        table.add_row(*(plain(v) for v in (skill.name, skill.source, skill.description, str(skill.path))))  # repo text
    Console().print(table)
    for problem in catalog.problems:
        label = "skipped" if problem.skipped else "warning"
        typer.echo(visible(f"{label}: {problem.path}: {problem.reason}"))


@skills_app.command("show")
def skills_show(name: str = typer.Argument(..., help="Skill name, as in `agent skills list`."),
                project: Path = ProjectOpt) -> None:
    """Print a skill's instructions and the files that come with it."""
    catalog = discover_skills(project.resolve())
    skill = catalog.get(name)
    if skill is None:
        _fail(f"unknown skill {name!r}; available: {', '.join(catalog.names()) or 'none'}")
    typer.echo(visible(f"{skill.name} ({skill.source}) {skill.path}\n{skill.description}\n\n{skill.body}"))
    if skill.files:
        typer.echo(visible("\nFiles:\n" + "\n".join(f"  {skill.directory / f}" for f in skill.files)))


@app.command("init")
def init_cmd(directory: Optional[Path] = typer.Argument(None, help="Repository root (default: the current folder)."),
             force: bool = typer.Option(False, "--force", help="Replace an existing AGENTS.md.")) -> None:
    """Write a first AGENTS.md (layout, languages, test command, conventions) for the agent to follow."""
    target = (directory or Path(".")).resolve()
    if not target.is_dir():
        _fail(f"{target} is not a folder")
    try:
        path = write_agents_md(target, force=force)
    except FileExistsError as exc:
        _fail(str(exc))
    typer.echo(f"wrote {path}; edit it to add what the agent should know")
