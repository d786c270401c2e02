"""The house stays readable: no module over 500 lines, no folder of more than 20 modules (a folder of one
module per command aside), so a newcomer finds a behaviour by folder, then by file."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("agent", "tools", "inference", "skills")
COMMAND_FOLDERS = {ROOT / "agent" / "commands"}


def modules() -> list[Path]:
    return [p for package in PACKAGES for p in (ROOT / package).rglob("*.py") if "bundled" not in p.parts]


def test_no_module_is_over_500_lines():
    long = {str(p.relative_to(ROOT)): n for p in modules() if (n := len(p.read_text().splitlines())) > 500}
    assert long == {}


def test_no_folder_holds_more_than_20_modules():
    folders = {p.parent for p in modules()} - COMMAND_FOLDERS
    crowded = {str(f.relative_to(ROOT)): n for f in folders if (n := len(list(f.glob("*.py")))) > 20}
    assert crowded == {}
