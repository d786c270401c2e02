"""Where dflash-agent keeps its files, and its version: the one place that computes them.

- config: your settings, MCP servers, project approvals (`~/.config/dflash-agent`, hidden from sandboxed commands)
- data: approvals of project MCP servers (`~/.local/share/dflash-agent`)
- state: run transcripts, llama-server state and logs (`~/.local/state/dflash-agent`)
- cache: models and engine builds (`DFLASH_AGENT_CACHE`, else `~/.cache/dflash-agent`); MCP server logs and the
  offline wheelhouse stay in the platform cache folder whatever `DFLASH_AGENT_CACHE` says.
"""

from __future__ import annotations

import os
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

import platformdirs

APP = "dflash-agent"


def app_version() -> str:
    """The installed package's version (pyproject.toml is where it is written)."""
    try:
        return version(APP)
    except PackageNotFoundError:  # running from a source tree that was never installed
        return "0+unknown"


def config_dir() -> Path:
    return Path(platformdirs.user_config_dir(APP))


def data_dir() -> Path:
    return Path(platformdirs.user_data_dir(APP))


def state_dir() -> Path:
    return Path(platformdirs.user_state_dir(APP))


def platform_cache_dir() -> Path:
    return Path(platformdirs.user_cache_dir(APP))


def cache_dir() -> Path:
    """Where large artefacts go (models, engine builds): `DFLASH_AGENT_CACHE` if set, else the platform cache."""
    override = os.environ.get("DFLASH_AGENT_CACHE")
    return Path(override).expanduser() if override else platform_cache_dir()
