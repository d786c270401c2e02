"""Where dflash-agent keeps large artefacts (models, engine builds): outside any repository."""

from __future__ import annotations

import os
from pathlib import Path

import platformdirs


def cache_dir() -> Path:
    """`DFLASH_AGENT_CACHE` if set, else the platform's user cache dir (e.g. ~/.cache/dflash-agent)."""
    override = os.environ.get("DFLASH_AGENT_CACHE")
    return Path(override).expanduser() if override else Path(platformdirs.user_cache_dir("dflash-agent"))
