"""Skill discovery: sources and their order, the bundled skills, the prompt catalog, malformed files."""

from __future__ import annotations

from pathlib import Path

import pytest

from skills.loader import (
    BUNDLED_DIR,
    SkillError,
    catalog_prompt,
    default_user_dirs,
    discover_skills,
    load_skill,
    parse_front_matter,
)

BUNDLED = {
    "python-pytest-project",
    "typer-cli",
    "rename-refactor",
    "verify-before-finish",
    "node-test-project",
    "rust-cargo-project",
}


def make_skill(
    root: Path,
    name: str,
    description: str = "Does a thing. Use when testing.",
    body: str = "Step 1.",
    folder: str | None = None,
    front: str | None = None,
) -> Path:
    path = root / (folder or name) / "SKILL.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(front if front is not None else f"---\nname: {name}\ndescription: {description}\n---\n{body}\n")
    return path


@pytest.fixture(autouse=True)
def isolated_home(tmp_path, monkeypatch):
    """Default user dirs point into tmp, never at the real home of whoever runs the tests."""
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "home" / ".config"))


def test_bundled_skills_are_valid_and_shipped_in_the_package():
    catalog = discover_skills(user_dirs=[])
    assert catalog.problems == []
    assert set(catalog.names()) == BUNDLED
    for skill in catalog.skills:
        assert skill.source == "bundled" and skill.path.parent.parent == BUNDLED_DIR.resolve()
        assert skill.path.parent.name == skill.name and skill.body.startswith("# ")
        assert 50 < len(skill.description) <= 1024 and "Use when" in skill.description
        assert len(skill.body.splitlines()) < 80, "bundled skills are for small models: keep them short"
    assert catalog.get("python-pytest-project").files == ["example_tests.py"]


def test_default_user_dirs_follow_home_and_config_dir(tmp_path):
    home = tmp_path / "home"
    assert default_user_dirs() == [
        home / ".config" / "dflash-agent" / "skills",
        home / ".agents" / "skills",
        home / ".claude" / "skills",
    ]


def test_discovery_order_later_sources_override_earlier_ones(tmp_path):
    home, project = tmp_path / "home", tmp_path / "project"
    make_skill(home / ".config" / "dflash-agent" / "skills", "typer-cli", "User's own typer notes. Use when X.")
    make_skill(home / ".agents" / "skills", "mine", "From ~/.agents. Use when Y.")
    make_skill(home / ".claude" / "skills", "mine", "From ~/.claude. Use when Y.")
    make_skill(home / ".claude" / "skills", "shared", "User version. Use when Z.")
    make_skill(project / ".agents" / "skills", "shared", "Project .agents version. Use when Z.")
    make_skill(project / ".claude" / "skills", "shared", "Project .claude version. Use when Z.", body="Project body.")
    make_skill(project / ".agents" / "skills", "local-only")
    catalog = discover_skills(project)
    by_name = {s.name: s for s in catalog.skills}
    assert set(by_name) == BUNDLED | {"mine", "shared", "local-only"}
    assert by_name["typer-cli"].source == "user" and by_name["typer-cli"].description.startswith("User's own")
    assert by_name["mine"].description == "From ~/.claude. Use when Y."
    assert by_name["shared"].source == "project" and by_name["shared"].body == "Project body."
    assert by_name["python-pytest-project"].source == "bundled" and by_name["local-only"].source == "project"
    assert catalog.names() == sorted(catalog.names())


def test_without_project_only_bundled_and_user_skills(tmp_path):
    make_skill(tmp_path / "extra", "extra-skill")
    catalog = discover_skills(None, user_dirs=[tmp_path / "extra", tmp_path / "missing"])
    assert set(catalog.names()) == BUNDLED | {"extra-skill"}
    assert discover_skills(None, user_dirs=[], bundled_dir=None).skills == []


def test_malformed_skills_are_reported_and_skipped(tmp_path):
    root = tmp_path / "project" / ".agents" / "skills"
    good = make_skill(root, "good-one")
    make_skill(root, "no-front", front="# Just markdown\n")
    make_skill(root, "bad-yaml", front="---\nname: bad-yaml\ndescription: [unclosed\n---\nbody\n")
    make_skill(root, "no-desc", front="---\nname: no-desc\n---\nbody\n")
    make_skill(root, "no-name", front="---\ndescription: Has no name.\n---\nbody\n")
    make_skill(root, "Bad_Name", front="---\nname: Bad_Name\ndescription: Upper case.\n---\nbody\n")
    make_skill(root, "long-desc", "x" * 1025)
    make_skill(root, "list-front", front="---\n- a\n- b\n---\nbody\n")
    (root / "not-a-skill").mkdir()  # a folder without SKILL.md is simply not a skill
    catalog = discover_skills(tmp_path / "project", user_dirs=[])
    assert set(catalog.names()) == BUNDLED | {"good-one"}
    reasons = {p.path.parent.name: p.reason for p in catalog.problems}
    assert all(p.skipped for p in catalog.problems)
    assert set(reasons) == {"no-front", "bad-yaml", "no-desc", "no-name", "Bad_Name", "long-desc", "list-front"}
    assert "no YAML front matter" in reasons["no-front"]
    assert "not valid YAML" in reasons["bad-yaml"]
    assert "no `description`" in reasons["no-desc"] and "no `name`" in reasons["no-name"]
    assert "a-z, 0-9" in reasons["Bad_Name"] and "limit is 1024" in reasons["long-desc"]
    assert "mapping" in reasons["list-front"]
    assert catalog.get("good-one").path == good.resolve()


def test_lenient_parsing_unquoted_colon_and_folder_mismatch(tmp_path):
    root = tmp_path / "skills"
    make_skill(
        root,
        "colon",
        front="---\nname: colon\ndescription: Run tests: use pytest. Use when: testing.\n"
        "license: MIT\nmetadata:\n  author: me\n---\nBody\n",
    )
    make_skill(root, "renamed", folder="other-folder")
    catalog = discover_skills(None, user_dirs=[root], bundled_dir=None)
    assert catalog.get("colon").description == "Run tests: use pytest. Use when: testing."
    assert catalog.get("renamed") is not None
    [warning] = catalog.problems
    assert not warning.skipped and "differs from its folder" in warning.reason


def test_front_matter_split_and_files_listed(tmp_path):
    meta, body = parse_front_matter("---\nname: a\ndescription: b\n---\n\n# Title\ntext\n")
    assert meta == {"name": "a", "description": "b"} and body.strip() == "# Title\ntext"
    with pytest.raises(SkillError):
        parse_front_matter("---\nname: a\n")  # never closed
    path = make_skill(tmp_path, "with-files")
    (path.parent / "scripts").mkdir()
    (path.parent / "scripts" / "run.sh").write_text("echo hi\n")
    (path.parent / "template.py").write_text("x = 1\n")
    (path.parent / ".hidden").write_text("")
    skill = load_skill(path, "user")
    assert skill.files == ["scripts/run.sh", "template.py"] and skill.body == "Step 1."


def test_catalog_prompt_lists_names_and_descriptions_only(tmp_path):
    make_skill(tmp_path, "secret-body", "Short description. Use when asked.", body="THE-BODY-TEXT")
    catalog = discover_skills(None, user_dirs=[tmp_path], bundled_dir=None)
    section = catalog_prompt(catalog)
    assert "- secret-body: Short description. Use when asked." in section and "activate_skill" in section
    assert "THE-BODY-TEXT" not in section
    assert catalog_prompt(discover_skills(None, user_dirs=[], bundled_dir=None)) is None
