"""One `Config`, layered: user file, then project file, then environment, then command-line flags.

Every layer is checked: an unknown name is an error that suggests the closest valid one, a bad value is one
line naming where it came from. The project file is the repository's, not the user's: it never chooses where
prompts and keys go (`MACHINE_ONLY`), and settings that widen what the agent may do (`widens`) take effect
only once the user approved exactly those values for that project (see agent/settings/trust.py, `agent trust`).
"""

from __future__ import annotations

import difflib
import os
import sys
import tomllib
from collections.abc import Callable
from pathlib import Path
from typing import Any, Literal, NamedTuple

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from agent.core.errors import UserError
from inference.models import DEFAULT_MODEL
from inference.paths import config_dir
from inference.profiles import Profile, load_profiles
from tools.sandbox import SandboxPolicy

ENV_PREFIX = "DFLASH_AGENT_"
# DFLASH_AGENT_* variables that are not settings (read elsewhere): not reported as unknown.
OTHER_ENV = {"CACHE", "PYPI_URL", "MCP_TOKEN", "SERVER_KEY"}
USER_ONLY_TABLES = {"profiles"}  # [profiles.NAME] in the user file (inference/profiles.py)
# Where the model's prompts (the code) and the user's key go, and what serves the model: the user's choice,
# never a repository's.
MACHINE_ONLY = ("endpoint", "api_key", "profile", "engine", "model_sources", "ctx_size", "cache_type")


class ConfigError(UserError, ValueError):
    pass


# Settings tuned for one benchmark, applied by its suite (`agent eval humaneval`) or chosen with `preset = NAME`
# (`--preset NAME`): each value sits beneath every layer, so a setting given anywhere still wins over it. The
# defaults serve any task; a preset is what measured best on its benchmark and nowhere else.
PRESETS: dict[str, dict[str, Any]] = {
    # HumanEval: one stub file per task, checked by its docstring's examples. Measured there (docs/eval.md): the
    # model answering whole solves as many problems as the loop at a quarter of the wall time, more answers
    # sampled hotter solve more, and the loop after a dozen failed answers rarely wins; its problems write
    # examples in prose (`f(2) => 4`) more often than with `>>>`.
    "humaneval": {"one_shots": 12, "steps_after_one_shots": 1, "prose_examples": True},
}


class Config(BaseModel):
    model_config = ConfigDict(extra="forbid")

    model: str = DEFAULT_MODEL  # catalog id used by the embedded backend
    endpoint: str | None = None  # an OpenAI-compatible base URL; replaces the embedded backend
    profile: str | None = None  # start llama-server with this profile for the run (see `agent serve`)
    engine: str | None = None  # engine build key for profiles; default: the newest build that fits
    ctx_size: int | None = Field(None, gt=0)  # the profile's server context, instead of the profile's own
    cache_type: str | None = None  # the profile's server KV cache type (K and V), instead of the profile's own
    api_key: str | None = None  # for the endpoint; never passed to tools
    protocol: Literal["text", "native"] = "text"
    n_ctx: int = Field(16384, gt=0)
    max_steps: int = Field(25, ge=1)
    attempts: int = Field(
        3, ge=1
    )  # fresh attempts sharing max_steps, when one ends unverified (strategies/attempts.py)
    preset: Literal["humaneval"] | None = None  # a benchmark's settings beneath these (PRESETS)
    # whole-file answers asked before the loop, where the task names one stub file with examples
    # (agent/strategies/one_shot.py): one answer costs one reply, and the loop then has all its steps
    one_shots: int = Field(1, ge=0)
    steps_after_one_shots: int | None = Field(None, ge=1)  # the loop's steps after failed answers (None: max_steps)
    prose_examples: bool = False  # examples written in prose count as the stubs' check (prose_examples.py)
    one_shot_notes: bool = False  # each one-shot answer after a failed one is told what the last one failed
    max_tokens: int = Field(2048, ge=1)
    temperature: float = Field(0.2, ge=0)
    seed: int | None = 42
    command_timeout: float = Field(120.0, gt=0)
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

    def sandbox_policy(self) -> SandboxPolicy:
        """Where commands and project MCP servers may reach (one policy for everything that runs project code)."""
        return SandboxPolicy(mode=self.sandbox, network=self.network, allow_env=self.tool_env)


_SANDBOX_ORDER = ["read-only", "workspace-write", "full-access"]
_APPROVAL_ORDER = ["never-ask", "ask", "auto"]  # from "only allow rules" to "anything not destructive"

# For each setting a project may widen: does `new` allow more than `old`? Settings not listed (max_steps,
# n_ctx, sampling, model, checkpoints...) change no permission and apply from a project file as they are.
WIDENS: dict[str, Callable[[Any, Any], bool]] = {
    "sandbox": lambda old, new: _SANDBOX_ORDER.index(new) > _SANDBOX_ORDER.index(old),
    "network": lambda old, new: new and not old,
    "tool_env": lambda old, new: bool(set(new) - set(old)),
    "approval": lambda old, new: _APPROVAL_ORDER.index(new) > _APPROVAL_ORDER.index(old),
    "allow": lambda old, new: bool(set(new) - set(old)),
    "deny": lambda old, new: bool(set(old) - set(new)),  # dropping one of the user's rules
    "command_timeout": lambda old, new: new > old,
    "mcp": lambda old, new: new and not old,
    "offline": lambda old, new: old and not new,
    "branch": lambda old, new: new != old,  # which branch the agent commits to
    "current_branch": lambda old, new: new and not old,
    "dirty": lambda old, new: new != old and new == "stash",
}


class Change(BaseModel):
    """One project setting that widens the user's: shown as `name: user value -> project value`."""

    name: str
    user: Any
    project: Any

    def describe(self) -> str:
        """Both values whole (what is approved is what is shown; hidden characters come out as escapes)."""
        return f"{self.name}: {self.user!r} -> {self.project!r}"


class ProjectReview(BaseModel):
    """What a project's `.agent/config.toml` asks for, before anything is applied."""

    file: Path
    project: Path
    values: dict[str, Any] = {}  # every setting it sets (typed), machine-only ones left out
    changes: list[Change] = []  # those that widen the user's settings: need approval
    refused: list[str] = []  # machine-only settings it tried to set: never read

    def widening(self) -> dict[str, Any]:
        return {c.name: c.project for c in self.changes}


# Asked on a terminal (or anywhere): may these changes apply? True yes, False no, None nobody could answer.
AskTrust = Callable[[ProjectReview], "bool | None"]


def user_config_path() -> Path:
    return config_dir() / "config.toml"


def user_profiles() -> dict[str, Profile]:
    """Every launch profile: the built-in ones and the `[profiles.NAME]` tables of your config file (a project's
    file never defines profiles). The one way the rest of the program reads them."""
    return load_profiles(user_config_path())


def project_config_path(project: Path) -> Path:
    return project / ".agent" / "config.toml"


def _warn(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


def load_config(
    project: Path | None = None,
    overrides: dict[str, Any] | None = None,
    *,
    ask: AskTrust | None = None,
    warn: Callable[[str], None] = _warn,
) -> Config:
    """The settings for one run in `project`. A project's widening settings apply when approved before (the
    trust store), or when `ask` says yes (then they are remembered); otherwise they are left out with a
    warning that names `agent trust`."""
    from agent.settings.trust import trust_store

    user = _layers_without_project(overrides)
    if project is None:
        return _validate(user)
    review = _review(project, user)
    if review is None:
        return _validate(user)
    for name in review.refused:
        warn(
            printable(
                f"warning: {review.file} sets `{name}`, which is read only from your user config "
                f"({user_config_path()}), the environment or flags: ignored"
            )
        )
    values = dict(review.values)
    if review.changes and not trust_store().approved(review.project, review.widening()):
        if ask is not None and ask(review):
            trust_store().approve(review.project, review.widening())
        else:
            for change in review.changes:
                values.pop(change.name)
            names = ", ".join(c.name for c in review.changes)
            warn(
                printable(
                    f"warning: {review.file} widens {names}: ignored until you approve it with "
                    f"`agent trust {review.project}`"
                )
            )
    layers = [user[0], _Layer(str(review.file), values), *user[1:]]
    return _validate(layers)


def review_project(project: Path, overrides: dict[str, Any] | None = None) -> ProjectReview | None:
    """The project file's settings, split into refused (machine-only), widening and harmless; None when the
    project has no file. A setting that the environment or a flag also sets is moot and never asked about."""
    return _review(project, _layers_without_project(overrides))


def _review(project: Path, user_layers: list[_Layer]) -> ProjectReview | None:
    path = project_config_path(project)
    raw = _read_toml(path, allowed=USER_ONLY_TABLES)
    if raw is None:
        return None
    base = _validate(user_layers)
    refused = [name for name in (*MACHINE_ONLY, *USER_ONLY_TABLES) if name in raw]
    wanted = {k: v for k, v in raw.items() if k not in refused}
    typed = _validate([user_layers[0], _Layer(str(path), wanted)])
    later = {name for layer in user_layers[1:] for name in layer.values}
    values = {name: getattr(typed, name) for name in wanted}
    changes = [
        Change(name=name, user=getattr(base, name), project=value)
        for name, value in values.items()
        if name in WIDENS and name not in later and WIDENS[name](getattr(base, name), value)
    ]
    return ProjectReview(
        file=path, project=project.expanduser().resolve(), values=values, changes=changes, refused=refused
    )


class _Layer(NamedTuple):
    source: str  # a file, "environment" or "command line": named in errors
    values: dict[str, Any]


def _layers_without_project(overrides: dict[str, Any] | None) -> list[_Layer]:
    """User file, environment, flags: everything the user chose."""
    user_file = user_config_path()
    user = _read_toml(user_file, allowed=USER_ONLY_TABLES) or {}
    flags = {k: v for k, v in (overrides or {}).items() if v is not None}
    _check_names(flags, "command line")
    return [
        _Layer(str(user_file), {k: v for k, v in user.items() if k not in USER_ONLY_TABLES}),
        _Layer("environment", _from_environment()),
        _Layer("command line", flags),
    ]


def _read_toml(path: Path, allowed: set[str]) -> dict[str, Any] | None:
    if not path.is_file():
        return None
    try:
        data = tomllib.loads(path.read_text())
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path} is not valid TOML ({exc}); fix that line or move the file away") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path} cannot be read ({exc}); fix its permissions or move it away") from None
    _check_names({k: v for k, v in data.items() if k not in allowed}, str(path))
    return data


def _check_names(values: dict[str, Any], source: str, prefix: str = "") -> None:
    """Unknown names are errors (a misspelled `aproval` would otherwise be ignored silently)."""
    known = list(Config.model_fields)
    for name in values:
        if name not in Config.model_fields:
            close = difflib.get_close_matches(name.lower(), known, n=1, cutoff=0.6)
            hint = (
                f"; did you mean {prefix}{close[0].upper() if prefix else close[0]}?"
                if close
                else f"; known settings: {', '.join(known)}"
            )
            shown = f"{prefix}{name.upper()}" if prefix else name
            raise ConfigError(f"{source}: unknown setting {shown}{hint}")


def _validate(layers: list[_Layer]) -> Config:
    merged: dict[str, Any] = {}
    where: dict[str, str] = {}
    for layer in layers:
        merged.update(layer.values)
        where.update(dict.fromkeys(layer.values, layer.source))
    preset = PRESETS.get(str(merged.get("preset")), {})  # an unknown name is the validation's error below
    merged = {**preset, **merged}
    try:
        return Config.model_validate(merged)
    except ValidationError as exc:
        raise ConfigError("\n".join(_explain(error, where) for error in exc.errors())) from None


def _explain(error: Any, where: dict[str, str]) -> str:
    """One line per bad value: where it came from, which setting, what is wrong, what it was."""
    name = str(error["loc"][0]) if error["loc"] else "config"
    source = where.get(name, "configuration")
    if source == "environment":
        source = f"environment ({ENV_PREFIX}{name.upper()})"
    elif source == "command line":
        source = f"command line (--{name.replace('_', '-')})"
    message = error["msg"].removeprefix("Value error, ")
    return f"{source}: {name}: {message} (got {_show(error.get('input'))})"


def printable(text: str) -> str:
    """For the terminal: control characters (a path or value could carry escape sequences) written as escapes."""
    return "".join(c if c.isprintable() or c == "\n" else repr(c)[1:-1] for c in text)


def _show(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def _from_environment() -> dict[str, Any]:
    values: dict[str, Any] = {}
    unknown: dict[str, Any] = {}
    for key, raw in os.environ.items():
        if not key.startswith(ENV_PREFIX) or key[len(ENV_PREFIX) :] in OTHER_ENV:
            continue
        name = key[len(ENV_PREFIX) :].lower()
        field = Config.model_fields.get(name)
        if field is None:
            unknown[name] = raw
            continue
        values[name] = [s.strip() for s in raw.split(",") if s.strip()] if field.annotation == list[str] else raw
    _check_names(unknown, "environment", prefix=ENV_PREFIX)
    return values
