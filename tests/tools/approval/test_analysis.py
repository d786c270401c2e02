"""The approval analysis fails closed: what it cannot see is refused in `auto`, asked in `ask`; ordinary agent
commands still pass. Commands are only evaluated here, never run."""

from __future__ import annotations

import importlib.util
import shlex
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tools.approval import ApprovalPolicy, ApprovalRequest, Approver, analyse_command
from tools.approval import analysis as analysis_module
from tools.shell import BashTool


def _corpus():
    """corpus.py beside this file (tests are not a package; the parser comparison script reads it too)."""
    spec = importlib.util.spec_from_file_location("approval_corpus", Path(__file__).with_name("corpus.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


corpus = _corpus()
ADVERSARIAL, ORDINARY, make_workspace = corpus.ADVERSARIAL, corpus.ORDINARY, corpus.make_workspace


@pytest.fixture(scope="module")
def workspace(tmp_path_factory):
    return make_workspace(tmp_path_factory.mktemp("approval"))


def review(workspace, command, mode, ask=None):
    approver = Approver(
        ApprovalPolicy(mode=mode, allow=["tool:bash", "rm", "git", "find", "sh", "bash", "python"]), ask=ask
    )
    return approver.review(BashTool(), {"command": command}, workspace)


@pytest.mark.parametrize("command", ADVERSARIAL)
def test_what_the_analysis_cannot_see_is_refused_in_auto_and_asked_in_ask(command, workspace):
    assert analyse_command(command, workspace).dangers, f"fails open: {command!r}"
    for mode in ("auto", "never-ask"):
        decision = review(workspace, command, mode)
        assert not decision.allowed and decision.reason.startswith("refused by the approval policy"), (mode, command)
    asked: list[ApprovalRequest] = []
    decision = review(workspace, command, "ask", ask=lambda request: asked.append(request) or False)
    assert not decision.allowed and len(asked) == 1 and (asked[0].destructive or asked[0].unchecked)
    assert asked[0].preview == command


@pytest.mark.parametrize("command", ORDINARY)
def test_ordinary_agent_commands_still_run_in_auto(command, workspace):
    assert analyse_command(command, workspace).dangers == [], command
    assert review(workspace, command, "auto").allowed


def test_an_unchecked_refusal_tells_the_model_what_to_do(workspace):
    reason = review(workspace, "a=rm; $a -rf ~", "auto").reason
    assert "the command name comes from an expansion (`$a`)" in reason and "Write the command out literally" in reason
    reason = review(workspace, "rm --recu -f ~", "auto").reason
    assert "`~` is your home folder" in reason and "never run without a person's approval" in reason


def test_destructive_reasons_win_over_unchecked_ones(workspace):
    verdict = ApprovalPolicy().evaluate(BashTool(), {"command": "eval $X; git push --force"}, workspace)
    assert verdict.why == "destructive" and "rewrites remote history" in verdict.reason


def test_brace_expansion_is_read_like_bash(workspace):
    assert "`*` is the whole workspace" in analyse_command("rm -rf {*,.x}", workspace).dangers[0].reason
    assert analyse_command("rm -rf {build,dist}", workspace).dangers == []
    assert analyse_command("echo {a,b}{c,d}{e,f}", workspace).dangers == []
    exploding = "rm -rf " + "{a,b}" * 12  # 4096 words: not read, so not known
    assert analyse_command(exploding, workspace).dangers[0].kind == "unchecked"


def test_a_cd_that_may_fail_leaves_the_folder_unknown(workspace):
    assert analyse_command("cd build; rm -rf *", workspace).dangers == []  # build exists
    assert analyse_command("mkdir -p new && cd new && rm -rf *", workspace).dangers == []  # && guards the cd
    for command in ["cd new; rm -rf *", "cd new || true; rm -rf *", "(cd build); rm -rf *", "cd build & rm -rf *"]:
        assert analyse_command(command, workspace).dangers, command


# ---------------------------------------------------------------- bounds


def timed(command, workspace, runs: int = 1):
    """The analysis and its fastest time over `runs` (the best of several sees past a busy machine's pauses)."""
    best = float("inf")
    for _ in range(runs):
        started = time.monotonic()
        analysis = analyse_command(command, workspace)
        best = min(best, time.monotonic() - started)
    return analysis, best


@pytest.mark.slow
@pytest.mark.parametrize("cds", ["cd build && cd .. && ", "cd build; ", "cd nowhere && ", "cd build && "])
def test_ten_thousand_cds_are_checked_in_linear_time(cds, workspace):
    """Each `cd` used to re-resolve the whole path so far (quadratic); now only the new part is resolved."""
    per = cds.count("cd ")
    small, small_time = timed(cds * (1_000 // per) + "ls", workspace, runs=3)
    large, large_time = timed(cds * (10_000 // per) + "ls", workspace, runs=3)
    assert small.dangers == [] and large.dangers == [], "ran out of its time budget"  # finished, within budget
    assert small.commands[-1] == large.commands[-1] == ["ls"]
    assert large_time < 25 * max(small_time, 0.01), (small_time, large_time)  # quadratic would be ~100x


# 20,000 heredoc markers: tree-sitter-bash's parse of these is quadratic (23 s here before the parse itself
# was bounded by the deadline), under the 200,000-character limit.
HEREDOCS = "cat " + " ".join(f"<<{i:x}" for i in range(20_000)) + "\n"


@pytest.mark.slow
@pytest.mark.parametrize(
    "command",
    [
        "$(" * 3_000 + "ls" + ")" * 3_000,
        "( " * 5_000 + "ls" + " )" * 5_000,
        "bash -c " + "'bash -c \"" * 50 + "ls" + "\"'" * 50,
        "eval " * 2_000 + "ls",
        "a; " * 60_000,
        "x" * 250_000,
        "echo \udcff",
        HEREDOCS,
        "bash -c " + shlex.quote(HEREDOCS),
    ],
)
def test_pathological_commands_are_asked_about_quickly_never_crash(command, workspace):
    started = time.monotonic()
    analysis = analyse_command(command, workspace)
    assert time.monotonic() - started < analysis_module.TIME_BUDGET_S + 1.0
    assert analysis.dangers and analysis.dangers[0].kind == "unchecked", command[:40]
    assert not review(workspace, command, "auto").allowed


def test_a_parse_that_runs_long_is_cut_at_the_time_budget(workspace, monkeypatch):
    """The bound holds inside tree-sitter's parse too, not only between the statements the walk reads."""
    monkeypatch.setattr(analysis_module, "TIME_BUDGET_S", 0.5)
    started = time.monotonic()
    analysis = analyse_command(HEREDOCS, workspace)
    assert time.monotonic() - started < 0.5 + 2.0
    assert [d.reason for d in analysis.dangers] == ["takes longer than 0.5s to check"]


def test_the_check_stops_at_its_time_budget(workspace, monkeypatch):
    monkeypatch.setattr(analysis_module, "TIME_BUDGET_S", 0.0)
    analysis = analyse_command("ls; " * 200, workspace)
    assert [d.reason for d in analysis.dangers] == ["takes longer than 0s to check"]


WRAPS = [
    "env {}",
    "command {}",
    "sudo {}",
    "nohup {}",
    "timeout 5 {}",
    "nice -n 5 {}",
    "true && {}",
    "false || {}",
    "({})",
    "{{ {}; }}",
    "if true; then {}; fi",
    "for i in 1; do {}; done",
    "echo x | {}",
    "{} 2>&1 | tail -5",
    "bash -c {quoted}",
    "sh -c {quoted}",
    "eval {quoted}",
    "f() {{ {}; }}; f",
    "x=$({})",
    'echo "$({})"',
]


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    command=st.sampled_from([c for c in ADVERSARIAL if "\n" not in c and c not in corpus.UNPARSEABLE]),
    wraps=st.lists(st.sampled_from(WRAPS), min_size=1, max_size=3),
)
def test_wrapping_an_adversarial_command_never_hides_it(command, wraps, workspace):
    """Wrappers, lists, subshells, compound commands, functions, nested shells and substitutions around a
    command the analysis refuses never make it pass."""
    for wrap in wraps:
        command = wrap.replace("{quoted}", shlex.quote(command)) if "{quoted}" in wrap else wrap.format(command)
    assert analyse_command(command, workspace).dangers, command
