"""The package as a user installs it: a wheel built from this tree, installed into a fresh virtual environment,
must carry everything the code reads from beside itself (skills, dialects, bench data, engine patches)."""

from __future__ import annotations

import shutil
import subprocess
import sys
import sysconfig
import venv
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("dist")
    source = tmp_path_factory.mktemp("source") / "tree"  # a copy: setuptools' build/ must not linger in the checkout
    ignored = shutil.ignore_patterns(".git", ".venv", "build", "dist", "*.egg-info", "__pycache__", ".*_cache")
    shutil.copytree(ROOT, source, ignore=ignored)
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--quiet",
            "--no-deps",
            "--no-build-isolation",
            "-w",
            str(out),
            str(source),
        ],
        check=True,
        capture_output=True,
        cwd=out,
    )
    (found,) = out.glob("dflash_agent-*.whl")
    return found


@pytest.fixture(scope="module")
def installed(wheel, tmp_path_factory) -> Path:
    """A fresh environment with the wheel and nothing of this checkout: its dependencies come from this
    environment's site-packages (offline), the package itself only from the wheel."""
    env = tmp_path_factory.mktemp("venv")
    venv.EnvBuilder(with_pip=False).create(env)
    site = next((env / "lib").glob("python3*/site-packages"))
    (site / "deps.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")  # a path entry: its .pth files stay unread
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "--python",
            str(env / "bin" / "python"),
            "install",
            "--quiet",
            "--no-deps",
            "--no-index",
            str(wheel),
        ],
        check=True,
        capture_output=True,
    )
    return env


def test_the_wheel_lists_the_package_data(wheel):
    names = zipfile.ZipFile(wheel).namelist()
    for expected in (
        "inference/patches/ngram-simple-adaptive.patch",
        "inference/patches/amx-tile-config.patch",
        "inference/patches/cpu-scale-bf16.patch",
        "inference/dialects/beellama-v0.2.0-help.txt",
        "inference/bench_data/inventory.py",
    ):
        assert expected in names
    assert any(n.startswith("skills/bundled/") and n.endswith("SKILL.md") for n in names)


def run(env: Path, *args: str, cwd: Path) -> subprocess.CompletedProcess:
    done = subprocess.run([str(env / "bin" / args[0]), *args[1:]], capture_output=True, text=True, cwd=cwd, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    return done


def test_the_installed_wheel_works_away_from_the_checkout(installed, tmp_path):
    assert "dflash-agent 0.1.0" in run(installed, "agent", "--version", cwd=tmp_path).stdout
    assert "sandbox" in run(installed, "agent", "doctor", cwd=tmp_path).stdout
    assert "node-test-project" in run(installed, "agent", "skills", "list", cwd=tmp_path).stdout
    where = run(
        installed,
        "python",
        "-c",
        "import inference.engines.engine_patches as e; print(e.__file__); print(*[p.name for p in e.packaged_patches()])",
        cwd=tmp_path,
    ).stdout.split("\n")
    assert not where[0].startswith(str(ROOT)), where  # the installed copy, not this checkout
    shipped = sorted(p.name for p in (ROOT / "inference" / "patches").glob("*.patch"))
    assert where[1].split() == shipped and "amx-tile-config.patch" in shipped


def test_an_install_without_its_patches_refuses_to_build(monkeypatch, tmp_path):
    from inference.engines import engine_patches

    monkeypatch.setattr(engine_patches, "PATCHES_DIR", tmp_path)
    with pytest.raises(engine_patches.PatchError, match="no engine patches"):
        engine_patches.packaged_patches()
