"""`agent skills list|show`: the skills the agent can activate (bundled, user, project)."""

from __future__ import annotations

from pathlib import Path

import typer

from agent.commands.common import fail

app = typer.Typer(help="List and show the skills the agent can activate.", no_args_is_help=True)

ProjectOpt = typer.Option(
    Path("."), "--project", "-p", help="Project whose .agents/skills and .claude/skills are included."
)


@app.command("list")
def skills_list(project: Path = ProjectOpt) -> None:
    """Show every skill found (bundled, user, project; later ones override), then malformed SKILL.md files."""
    from rich.console import Console
    from rich.table import Table

    from agent.ui.plain import plain, visible
    from skills.loader import discover_skills

    catalog = discover_skills(project.resolve())
    table = Table("name", "source", "description", "path")
    for skill in catalog.skills:
        table.add_row(*(plain(v) for v in (skill.name, skill.source, skill.description, str(skill.path))))  # repo text
    Console().print(table)
    for problem in catalog.problems:
        label = "skipped" if problem.skipped else "warning"
        typer.echo(visible(f"{label}: {problem.path}: {problem.reason}"))


@app.command("show")
def skills_show(
    name: str = typer.Argument(..., help="Skill name, as in `agent skills list`."), project: Path = ProjectOpt
) -> None:
    """Print a skill's instructions and the files that come with it."""
    from agent.ui.plain import visible
    from skills.loader import discover_skills

    catalog = discover_skills(project.resolve())
    skill = catalog.get(name)
    if skill is None:
        fail(f"unknown skill {name!r}; available: {', '.join(catalog.names()) or 'none'}")
    typer.echo(visible(f"{skill.name} ({skill.source}) {skill.path}\n{skill.description}\n\n{skill.body}"))
    if skill.files:
        typer.echo(visible("\nFiles:\n" + "\n".join(f"  {skill.directory / f}" for f in skill.files)))
