"""Shared fixtures. The real model is fetched into the user cache by set-up (`./dev.sh test`); if it is
missing here, the fixture fetches it, and fails (never skips) when that is impossible."""

from __future__ import annotations

import os
import pwd
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

from inference.backends.backend import CUT, Completion, Message, Sampling, Timings


def pytest_configure(config: pytest.Config) -> None:
    """Tests commit with plain git too: where git has no identity (a fresh HOME), they get one of their own,
    as a global config file (the agent's own commits set theirs and are not affected). Rust's toolchain too."""
    found = subprocess.run(["git", "config", "user.email"], capture_output=True, text=True, check=False)
    if not found.stdout.strip():
        path = Path(tempfile.mkdtemp(prefix="dflash-tests-git-")) / "gitconfig"
        path.write_text("[user]\n\tname = dflash-agent tests\n\temail = tests@dflash-agent.invalid\n")
        os.environ["GIT_CONFIG_GLOBAL"] = str(path)
    use_the_accounts_rust_toolchain()


def use_the_accounts_rust_toolchain() -> None:
    """rustup keeps its toolchains under $HOME: with HOME pointed at an empty folder (how set-up is checked, and
    the sandbox's own fake HOME), `cargo` is there and cannot run. Name the account's toolchain explicitly."""
    if "RUSTUP_HOME" in os.environ or not shutil.which("cargo"):
        return
    account_home = Path(pwd.getpwuid(os.getuid()).pw_dir)
    if (account_home / ".rustup").is_dir():
        os.environ["RUSTUP_HOME"] = str(account_home / ".rustup")
        os.environ.setdefault("CARGO_HOME", str(account_home / ".cargo"))


# Fixtures that fetch the real model or compile llama-server: a test using one (directly or through another
# fixture) is `slow`, as is every `model` test.
SLOW_FIXTURES = {"qwen_path", "embedded", "engine"}


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Mark the tests the fast tier (`-m "not slow"`) leaves out, and those that must run alone (`serial`: a model
    or an engine, which slows to a crawl beside other work on a small machine), so a new one needs no marker."""
    for item in items:
        if item.get_closest_marker("model") or SLOW_FIXTURES & set(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.slow)
            item.add_marker(pytest.mark.serial)


@pytest.fixture(scope="session")
def qwen_path() -> Path:
    from inference.fetch import fetch_model
    from inference.models import QWEN_1_5B

    return fetch_model(QWEN_1_5B, show_progress=False)


@pytest.fixture(scope="session")
def embedded(qwen_path):
    from inference.backends.embedded import EmbeddedBackend

    backend = EmbeddedBackend(qwen_path, n_ctx=8192)
    yield backend
    backend.close()


@pytest.fixture(scope="session")
def engine():
    """llama-server built from the upstream tree in the llama-cpp-python sdist: compiled once per machine
    (about 8 minutes on 2 cores), then served from the engine cache. With the RPC backend and its worker, so one
    build serves every test, the RPC ones included (without `--rpc` the server behaves the same)."""
    from inference.engines.engine import BuildOptions, EngineSource, build_engine

    return build_engine(EngineSource.parse("pypi-sdist"), BuildOptions(backend="cpu", rpc=True), show_progress=False)


class ScriptedBackend:
    """Replays fixed replies; records what it was sent. For loop logic only, never as proof of a feature."""

    name = "scripted"

    def __init__(self, replies: list[str]):
        self.replies = list(replies)
        self.calls: list[dict] = []

    def complete(
        self, messages: list[Message], tools=None, sampling: Sampling | None = None, on_text=None, on_prompt=None
    ) -> Completion:
        self.calls.append({"messages": [m.model_copy() for m in messages], "tools": tools, "sampling": sampling})
        if on_prompt:  # the prompt's size first, as the embedded backend tells it (the same as its timings)
            on_prompt(10 * len(messages), 0)
        text = self.replies.pop(0) if self.replies else "I am done."
        sent, reason = "", None
        for start in range(0, len(text), 16):  # streamed in pieces, like an engine; `on_text` may cut it
            sent += text[start : start + 16]
            if on_text and on_text(text[start : start + 16]):
                text, reason = sent, CUT
                break
        return Completion(
            text=text,
            finish_reason=reason,
            timings=Timings(prompt_tokens=10 * len(messages), completion_tokens=5, predicted_ms=100),
        )


@pytest.fixture
def scripted():
    return ScriptedBackend


@pytest.fixture(scope="session")
def report_fuzz_counts(request):
    """Write a fuzz suite's case and escape counts to the terminal report, past output capture."""
    reporter = request.config.pluginmanager.get_plugin("terminalreporter")
    capture = request.config.pluginmanager.get_plugin("capturemanager")

    def write(title: str, cases: dict[str, int], escapes: dict[str, int]) -> None:
        per_kind = ", ".join(f"{kind} {n}" for kind, n in sorted(cases.items()))
        if reporter and capture:
            with capture.global_and_fixture_disabled():
                reporter.write_line(
                    f"\n{title}: {sum(cases.values())} cases tried ({per_kind}), escapes: {sum(escapes.values())}"
                )

    return write
