"""Our patches to llama.cpp (inference/patches/*.patch): which apply to a source tree, and a patched copy of
it to build. Each is optional: a source that has moved on builds without it."""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
from pathlib import Path

from inference.errors import DflashError


class PatchError(DflashError):
    """A patch that passed its check failed to apply, or this install has none."""


PATCHES_DIR = Path(__file__).parents[1] / "patches"
AMX_PATCH = "amx-tile-config"  # without it, ggml's AMX kernels crash (inference/server.without_broken_amx)


def applicable_patches(tree: Path) -> list[Path]:
    """Our engine patches that apply cleanly to this tree. Each is optional: a source that has moved on builds
    without it, and the flags it adds are then missing from the engine's capabilities."""
    if not shutil.which("git"):  # the toolchain check names what to install
        return []
    return [patch for patch in packaged_patches() if _git_apply(tree, patch, "--check").returncode == 0]


def packaged_patches() -> list[Path]:
    """The patches this package ships. None at all means a broken install (package data left out), which would
    build an engine without our flags and fixes and say nothing: refuse instead."""
    patches = sorted(PATCHES_DIR.glob("*.patch"))
    if not patches:
        raise PatchError(
            f"this install of dflash-agent has no engine patches in {PATCHES_DIR}; reinstall it from a wheel or "
            "source that includes inference/patches"
        )
    return patches


def patched_copy(tree: Path, patches: list[Path], target: Path) -> Path:
    """A copy of the source tree with the patches applied; the cached source itself stays pristine."""
    shutil.rmtree(target, ignore_errors=True)
    shutil.copytree(tree, target, ignore=shutil.ignore_patterns(".git"), symlinks=True)
    for patch in patches:
        run = _git_apply(target, patch)
        if run.returncode != 0:
            raise PatchError(f"patch {patch.name} passed its check but failed to apply: {run.stderr[-500:]}")
    return target


def _git_apply(tree: Path, patch: Path, *flags: str) -> subprocess.CompletedProcess:
    """`git apply` relative to `tree` (its own repository, or none: never one it happens to sit in)."""
    env = dict(os.environ, GIT_CEILING_DIRECTORIES=str(tree.resolve().parent))
    return subprocess.run(["git", "apply", *flags, str(patch)], cwd=tree, env=env, capture_output=True, text=True)


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()[:12]
