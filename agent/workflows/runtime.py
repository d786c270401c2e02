"""Where configuration meets the layers: the backend, the tools and the agent for one run."""

from __future__ import annotations

import atexit
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

from agent.checks.project import command_policy
from agent.core.errors import UserError
from agent.core.loop import Agent, AgentEvents
from agent.core.memory import memory_section
from agent.core.session import Transcript
from agent.core.toolcalls import PROTOCOLS
from agent.settings.config import Config, user_profiles
from agent.ui.approval_prompt import TerminalApproval
from inference.backends.backend import ChatBackend, Sampling
from inference.backends.embedded import EmbeddedBackend
from inference.backends.endpoint import EndpointBackend
from inference.engines.python_engines import managed
from inference.fetch import fetch_model
from inference.models import ModelSpec, get_model
from inference.profiles import Profile, get_profile, with_overrides
from skills.loader import SkillCatalog, discover_skills
from skills.tool import ActivateSkillTool
from tools.approval import ApprovalPolicy, Approver
from tools.base import Tool, ToolContext, ToolPolicy
from tools.files import file_tools
from tools.shell import BashTool

_embedded_cache: dict[tuple[str, int], EmbeddedBackend] = {}


@atexit.register
def _close_embedded() -> None:
    while _embedded_cache:
        _embedded_cache.popitem()[1].close()


@contextmanager
def backend_session(config: Config) -> Iterator[ChatBackend]:
    """The backend for one run (see `backends`)."""
    with backends(config) as (make, _, _):
        yield make()


@contextmanager
def backends(config: Config, parallel: int = 1) -> Iterator[tuple[Callable[[], ChatBackend], int, str]]:
    """(backend factory, runs at once, description) for the config's backend (see `served`); the embedded model
    is fetched on first use and loaded once per process."""
    with served(config, parallel) as (chosen, runs, label):
        if chosen.endpoint:
            endpoint, api_key = chosen.endpoint, chosen.api_key
            yield (lambda: EndpointBackend(endpoint, api_key=api_key)), runs, label
        else:
            backend = embedded_backend(chosen)
            yield (lambda: backend), runs, label


@contextmanager
def served(
    config: Config, parallel: int = 1, note: Callable[[str], None] | None = None
) -> Iterator[tuple[Config, int, str]]:
    """Which backend runs the model, the one place that says it: (the config runs use, runs at once, description).
    A given endpoint, `parallel` runs sharing it; a llama-server started from a profile with `parallel` slots
    (stopped after), given to the runs as their endpoint; or the embedded model, one in-process model, so one run
    at a time. `note` hears of a server before it starts."""
    if config.endpoint:
        yield config, parallel, f"endpoint {config.endpoint}, {parallel} at once"
    elif config.profile:
        profile = slotted(configured_profile(config), parallel)
        if note:
            note(f"starting the {profile.engine} server (profile {profile.name}, {parallel} slot(s))")
        with managed(profile, config.engine) as server:
            started = config.model_copy(update={"endpoint": server.url, "api_key": None})
            yield started, parallel, f"profile {profile.name}, {parallel} slot(s)"
    else:
        yield config, 1, f"embedded {config.model} (one in-process model)"


def configured_profile(config: Config) -> Profile:
    """The profile the run starts, with the run's `--ctx-size` / `--cache-type` in place of its own."""
    assert config.profile is not None, "called for a run that names a profile"
    return with_overrides(get_profile(config.profile, user_profiles()), config.ctx_size, config.cache_type)


def slotted(profile: Profile, parallel: int) -> Profile:
    """The profile with `parallel` server slots; llama-server splits its context over the slots (unless the
    KV cache is unified), so the context grows with them to keep each slot's size. vLLM and SGLang batch any
    number of requests: their profiles stay as they are."""
    if parallel <= profile.parallel or profile.engine != "llama-server":
        return profile
    ctx = profile.ctx_size if profile.kv_unified else profile.ctx_size // profile.parallel * parallel
    return profile.model_copy(update={"parallel": parallel, "ctx_size": ctx})


def check_backend(config: Config) -> None:
    """Fail before a run changes anything (a branch, a new folder) when the model or profile it names does not
    exist."""
    if (config.ctx_size or config.cache_type) and not config.profile:
        raise UserError("--ctx-size and --cache-type set the server a profile starts; add --profile NAME")
    if config.endpoint:
        return
    if config.profile:
        configured_profile(config)
    else:
        catalog_model(config.model)


def catalog_model(model_id: str) -> ModelSpec:
    try:
        return get_model(model_id)
    except KeyError as exc:
        raise UserError(
            f"{exc.args[0]} (`agent models list` shows them; or use --endpoint URL / --profile NAME)"
        ) from None


def embedded_backend(config: Config) -> EmbeddedBackend:
    key = (config.model, config.n_ctx)
    if key not in _embedded_cache:
        path = fetch_model(catalog_model(config.model), source_order=config.model_sources, offline=config.offline)
        _embedded_cache[key] = EmbeddedBackend(path, n_ctx=config.n_ctx)
    return _embedded_cache[key]


def default_tools() -> list[Tool]:
    return [BashTool(), *file_tools()]


def build_agent(
    config: Config,
    backend: ChatBackend,
    workspace: Path,
    *,
    transcript: Transcript | None = None,
    events: AgentEvents | None = None,
    verify: Callable[[], str | None] | None = None,
    extra_tools: Sequence[Tool] = (),
    first_look: Callable[[Path, list[str], str], dict[str, str]] | None = None,
    watch: Callable[[], Callable[[str], bool]] | None = None,
) -> Agent:
    """`extra_tools`: tools that live as long as the run, e.g. MCP servers' (see agent.settings.mcp_setup.mcp_session);
    `first_look` and `watch`: what strategies equip the loop with (see agent/strategies/base.py `Equipment`)."""
    protocol = PROTOCOLS["text" if isinstance(backend, EmbeddedBackend) else config.protocol]()
    catalog = discover_skills(workspace)
    for problem in catalog.problems:
        if events is not None:
            events.on_note(f"skill {problem.path}: {problem.reason}{' (skipped)' if problem.skipped else ''}")
    tools, sections = workspace_extras(workspace, catalog)
    return Agent(
        backend,
        [*default_tools(), *tools, *extra_tools],
        ToolContext(
            workspace,
            ToolPolicy(
                command_timeout=config.command_timeout, sandbox=command_policy(config.sandbox_policy(), workspace)
            ),
            approver=approver(config, events),
        ),
        protocol=protocol,
        sampling=Sampling(temperature=config.temperature, max_tokens=config.max_tokens, seed=config.seed),
        max_steps=config.max_steps,
        transcript=transcript,
        events=events,
        verify=verify,
        prompt_sections=sections,
        first_look=first_look,
        watch=watch,
    )


def approver(config: Config, events: AgentEvents | None = None) -> Approver:
    """The approval policy from the config; in `ask` mode the question goes to the terminal, and in `auto`
    mode too for a command outside a sandbox that is not known read-only (without a terminal: refused)."""
    policy = ApprovalPolicy(mode=config.approval, allow=config.allow, deny=config.deny)
    return Approver(policy, ask=TerminalApproval(events=events) if config.approval in ("ask", "auto") else None)


def workspace_extras(workspace: Path, catalog: SkillCatalog) -> tuple[list[Tool], list[str]]:
    """What this workspace adds to the agent, computed once per run so the system prompt stays one stable
    prefix: the activate_skill tool when skills exist (its description is the catalog: names and
    descriptions only) and a section with the project's AGENTS.md (or CLAUDE.md)."""
    tools: list[Tool] = [ActivateSkillTool(catalog)] if catalog.skills else []
    memory = memory_section(workspace)
    return tools, [memory] if memory else []
