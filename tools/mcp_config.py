"""MCP server entries from the de-facto JSON files (`mcpServers`, or VS Code's `servers`), normalized.

Values may use `${VAR}`, `${VAR:-default}` and `${env:VAR}`: that is the only way a secret from our own
environment reaches a server. Servers from a project file run code the project chose, so each needs the
user's approval once; the approval is tied to the exact command (or URL), so a changed entry asks again.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shlex
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field, ValidationError

from inference.errors import DflashError
from tools.preview import visible

PROJECT_FILES = (".mcp.json", ".vscode/mcp.json")
_SERVER_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,39}")
_VAR = re.compile(r"\$\{(?:env:)?([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}")


class MCPConfigError(DflashError, ValueError):
    pass


class MCPServerConfig(BaseModel):
    """One server, as launched or reached: stdio (`command`) or HTTP (`url`)."""

    name: str
    transport: Literal["stdio", "http", "sse"]
    command: str | None = None
    args: list[str] = []
    env: dict[str, str] = {}
    cwd: str | None = None
    url: str | None = None
    headers: dict[str, str] = {}
    startup_timeout: float = Field(20.0, gt=0)
    tool_timeout: float = Field(120.0, gt=0)
    disabled: bool = False
    origin: str = ""  # the file it came from
    scope: Literal["user", "project"] = "user"
    root: str | None = None  # the project folder, for a project's entry

    # The entry as the file wrote it (`${VAR}` not expanded): what is shown and approved, so a changed
    # variable name (`${HOME}` -> `${OPENAI_API_KEY}`) is a changed server, and no expanded secret is printed.
    written: dict[str, Any] = {}

    def written_form(self) -> dict[str, Any]:
        """command, args, env, cwd, url and headers as the file wrote them (as parsed, for an entry made in code)."""
        raw = self.written

        def text(key: str, parsed: str | None) -> str | None:
            return str(raw[key]) if raw.get(key) is not None else (None if raw else parsed)

        def mapping(key: str, parsed: dict[str, str]) -> dict[str, str]:
            value = raw.get(key) if raw else parsed
            return {str(k): str(v) for k, v in value.items()} if isinstance(value, dict) else {}

        args = raw.get("args") if raw else self.args
        return {
            "command": text("command", self.command) if self.transport == "stdio" else None,
            "args": [str(a) for a in args] if isinstance(args, list) else [],
            "env": mapping("env", self.env),
            "cwd": text("cwd", self.cwd),
            "url": text("url", self.url) if self.transport != "stdio" else None,
            "headers": mapping("headers", self.headers),
        }

    def launch_line(self) -> str:
        """What will run (or be reached), exactly as written, every value whole: `env` and `headers` with their
        values as the file writes them (`${TOKEN}`, never its value). Hidden characters (escape sequences, bidi
        overrides) are shown as visible escapes; the line is plain text, never markup."""
        form = self.written_form()
        if self.transport == "stdio":
            line = shlex.join([form["command"] or "", *form["args"]])
            if form["env"]:
                line += "  (env: " + ", ".join(f"{k}={v}" for k, v in sorted(form["env"].items())) + ")"
        else:
            line = f"{self.transport} {form['url']}"
            if form["headers"]:
                line += "  (headers: " + ", ".join(f"{k}: {v}" for k, v in sorted(form["headers"].items())) + ")"
        if form["cwd"]:
            line += f"  (cwd: {form['cwd']})"
        return visible(line)

    def fingerprint(self) -> str:
        """The entry as written (names and values of `env` and `headers` included), and for a project server
        the content of every workspace file it names: the model can edit the project, so a rewritten `srv.py`
        is a different server and is asked about again."""
        form = self.written_form()
        spec: list[Any] = [
            self.transport,
            form["command"],
            form["args"],
            sorted(form["env"].items()),
            form["cwd"],
            self.cwd,
            form["url"],
            sorted(form["headers"].items()),
        ]
        if self.scope == "project" and self.root and self.transport == "stdio":
            spec.append(
                named_files_digest(
                    [self.command or "", *self.args], Path(self.root) / (self.cwd or "."), Path(self.root)
                )
            )
        return hashlib.sha256(json.dumps(spec).encode()).hexdigest()[:16]


MAX_HASHED_BYTES = 64 * 1024 * 1024  # a launch line naming a huge folder: the rest counts as "too big"
MAX_HASHED_FILES = 5000


def named_files_digest(argv: list[str], cwd: Path, root: Path) -> str:
    """A digest of the workspace files (and folders) `argv` names: each argument, the value of `--opt=value`,
    and the module of `-m module`, resolved from `cwd`; only paths inside `root` count. A named folder
    counts with every file below it (`.git` left out); a missing one counts as missing, so creating it
    later changes the digest. The workspace itself (`server-filesystem .`) is data, not hashed: every edit
    would ask again; the sandbox covers it."""
    root = root.resolve()
    digest, budget = hashlib.sha256(), [MAX_HASHED_BYTES]
    candidates: list[str] = []
    for i, arg in enumerate(argv):
        candidates.append(arg)
        if "=" in arg:
            candidates.append(arg.split("=", 1)[1])
        if i > 0 and argv[i - 1] == "-m":
            module = arg.replace(".", "/")
            candidates += [module + ".py", module]
    for name in candidates:
        if not name or "\0" in name:
            continue
        try:
            path = (cwd / Path(name).expanduser()).resolve()
        except (OSError, RuntimeError, ValueError):
            continue
        digest.update(f"\0{name}\0{path}\0".encode())  # where it points (a re-pointed symlink counts)
        if root in path.parents:  # the workspace itself, named as the server's data (`.`), is not code
            _hash_path(path, root, digest, budget)
    return digest.hexdigest()


def _hash_path(path: Path, root: Path, digest: Any, budget: list[int]) -> None:
    if path.is_dir():
        for count, child in enumerate(sorted(path.rglob("*"))):
            if count >= MAX_HASHED_FILES:
                digest.update(b"too many files")
                return
            if ".git" not in child.relative_to(path).parts and child.is_file():
                digest.update(str(child.relative_to(root)).encode())
                _hash_file(child, digest, budget)
    elif path.is_file():
        _hash_file(path, digest, budget)
    else:
        digest.update(b"missing")


def _hash_file(path: Path, digest: Any, budget: list[int]) -> None:
    if budget[0] <= 0:
        digest.update(b"too big")
        return
    try:
        with path.open("rb") as handle:
            while budget[0] > 0 and (chunk := handle.read(1 << 20)):
                budget[0] -= len(chunk)
                digest.update(chunk)
    except OSError as exc:
        digest.update(f"unreadable {exc.errno}".encode())


def expand(value: str, environ: Mapping[str, str] | None = None) -> str:
    """`${VAR}` / `${VAR:-default}` / `${env:VAR}` from the environment; an unset variable without a
    default is an error naming it (a server started with an empty token fails in confusing ways)."""
    env: Mapping[str, str] = os.environ if environ is None else environ

    def substitute(match: re.Match[str]) -> str:
        name: str = match.group(1)
        default: str | None = match.group(2)
        if name in env:
            return env[name]
        if default is not None:
            return default
        raise MCPConfigError(f"${{{name}}} is not set; export {name}=... or give a default: ${{{name}:-value}}")

    if "${input:" in value:
        raise MCPConfigError(f"VS Code ${{input:...}} prompts are not supported ({value!r}); use ${{ENV_VAR}} instead")
    return _VAR.sub(substitute, value)


def parse_entry(
    name: str, raw: dict[str, Any], origin: str = "", scope: str = "user", environ: dict[str, str] | None = None
) -> MCPServerConfig:
    if not _SERVER_NAME.fullmatch(name):
        raise MCPConfigError(
            f"server name {name!r} in {origin or 'config'} is not usable: its tools are named "
            "NAME__tool, so use a name that starts with a letter or digit, then letters, digits, "
            "'-', '_' or '.' (at most 40)"
        )
    if not isinstance(raw, dict):
        raise MCPConfigError(f"server {name!r} in {origin or 'config'}: expected an object, got {type(raw).__name__}")
    kind = str(raw.get("type", "")).lower()
    if raw.get("command"):
        transport = "stdio"
    elif raw.get("url"):
        transport = "sse" if kind == "sse" else "http"
    else:
        raise MCPConfigError(f"server {name!r} in {origin or 'config'}: needs `command` (stdio) or `url` (HTTP)")
    try:
        entry = MCPServerConfig(
            name=name,
            transport=transport,
            command=expand(str(raw["command"]), environ) if transport == "stdio" else None,
            args=[expand(str(a), environ) for a in raw.get("args", [])],
            env={str(k): expand(str(v), environ) for k, v in (raw.get("env") or {}).items()},
            cwd=expand(str(raw["cwd"]), environ) if raw.get("cwd") else None,
            url=expand(str(raw["url"]), environ) if transport != "stdio" else None,
            headers={str(k): expand(str(v), environ) for k, v in (raw.get("headers") or {}).items()},
            startup_timeout=float(raw["startup_timeout"] if "startup_timeout" in raw else raw.get("timeout", 20.0)),
            tool_timeout=float(raw.get("tool_timeout", 120.0)),
            disabled=bool(raw.get("disabled", False)) or raw.get("enabled") is False,
            origin=origin,
            scope=scope,
            written=raw,
        )
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(map(str, e['loc']))}: {e['msg']} (got {e.get('input')!r})" for e in exc.errors()
        )
        raise MCPConfigError(f"server {name!r} in {origin or 'config'}: {problems}") from None
    except (TypeError, ValueError) as exc:  # MCPConfigError included
        raise MCPConfigError(f"server {name!r} in {origin or 'config'}: {exc}") from None
    return entry


def read_file(path: Path) -> dict[str, dict[str, Any]]:
    """The raw server entries of one file (`mcpServers` or `servers`); a missing file has none."""
    if not path.is_file():
        return {}
    data = _read_json(path)
    servers = data.get("mcpServers", data.get("servers", {}))
    if not isinstance(servers, dict):
        raise MCPConfigError(f'{path}: expected {{"mcpServers": {{name: {{...}}}}}}; fix the file or move it away')
    return servers


def _read_json(path: Path) -> dict[str, Any]:
    """A config file's object; a file that is not one is a one-line error naming the file and the fix."""
    try:
        data = json.loads(path.read_text())
    except json.JSONDecodeError as exc:
        raise MCPConfigError(f"{path} is not valid JSON ({exc}); fix it or move it away") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise MCPConfigError(f"{path} cannot be read ({exc}); fix its permissions or move it away") from None
    if not isinstance(data, dict):
        raise MCPConfigError(f'{path}: expected {{"mcpServers": {{name: {{...}}}}}}; fix the file or move it away')
    return data


class _AnyEnvironment(dict[str, str]):
    def __contains__(self, key: object) -> bool:
        return True

    def __getitem__(self, key: str) -> str:
        return ""


class LoadedServers(BaseModel):
    servers: list[MCPServerConfig] = []
    problems: list[str] = []  # entries that could not be read: reported, skipped


def load_servers(user_file: Path, project: Path | None = None, environ: dict[str, str] | None = None) -> LoadedServers:
    """User entries, then project entries (a project entry replaces a user entry of the same name)."""
    sources = [(user_file, "user")] + [(project / name, "project") for name in PROJECT_FILES if project]
    found: dict[str, MCPServerConfig] = {}
    loaded = LoadedServers()
    for path, scope in sources:
        try:
            entries = read_file(path)
        except MCPConfigError as exc:
            loaded.problems.append(str(exc))
            continue
        for name, raw in entries.items():
            try:
                entry = parse_entry(name, raw, str(path), scope, environ)
                if scope == "project" and project is not None:
                    entry.root = str(project.resolve())
                    entry.cwd = str(project / (entry.cwd or "."))  # relative paths mean the project's
                found[name] = entry
            except MCPConfigError as exc:
                loaded.problems.append(str(exc))
    loaded.servers = list(found.values())
    return loaded


def write_entry(path: Path, name: str, raw: dict[str, Any] | None) -> None:
    """Add, replace (`raw`) or remove (`None`) one entry, keeping the rest of the file as it was."""
    data = _read_json(path) if path.is_file() else {}
    key = "servers" if "servers" in data and "mcpServers" not in data else "mcpServers"
    servers = data.setdefault(key, {})
    if not isinstance(servers, dict):
        raise MCPConfigError(f"{path}: `{key}` is not an object; fix the file or move it away")
    if raw is None:
        if name not in servers:
            raise MCPConfigError(f"no server named {name!r} in {path}")
        del servers[name]
    else:
        parse_entry(name, raw, str(path), environ=_AnyEnvironment())  # shape only: variables may be set later
        servers[name] = raw
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=2) + "\n")


class Approvals:
    """Which project servers the user allowed to start, by (project, name) -> fingerprint."""

    def __init__(self, path: Path):
        self.path = path

    def _load(self) -> dict[str, str]:
        try:
            return json.loads(self.path.read_text()) if self.path.is_file() else {}
        except json.JSONDecodeError:
            return {}

    @staticmethod
    def _key(server: MCPServerConfig) -> str:
        return f"{server.origin}::{server.name}"

    def approved(self, server: MCPServerConfig) -> bool:
        return server.scope == "user" or self._load().get(self._key(server)) == server.fingerprint()

    def approve(self, server: MCPServerConfig) -> None:
        data = self._load()
        data[self._key(server)] = server.fingerprint()
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.path.write_text(json.dumps(data, indent=2) + "\n")


def sanitize_name(name: str, limit: int = 64) -> str:
    """Tool names as function calling accepts them: `[A-Za-z0-9_-]`, at most `limit` characters."""
    clean = re.sub(r"[^A-Za-z0-9_-]", "_", name).strip("_") or "tool"
    if len(clean) > limit:
        digest = hashlib.sha256(name.encode()).hexdigest()[:6]
        clean = clean[: limit - 7] + "_" + digest
    return clean
