"""The sandbox tries to be escaped, with real bubblewrap and real processes.

Every attempt to write outside the workspace, rewrite .git, read a hidden secret, reach the network, outgrow
the process limit or the output cap, outlive the command, or see a secret variable is counted; the last test
prints "sandbox escape suite: N attempts, 0 escapes" and fails if any attempt got through. A fake $HOME below
tmp_path (with fake keys) stands in for the user's. Tests that need bubblewrap are skipped, with the reason,
where it is missing (`./dev.sh` installs it on Debian when it can).
"""

from __future__ import annotations

import os
import shlex
import shutil
import socket
import subprocess
import sys
import threading
import time
import uuid
from pathlib import Path

import pytest

from tools import hidden, sandbox
from tools.base import ToolContext, ToolPolicy
from tools.sandbox import SandboxPolicy, bwrap_argv, probe_bwrap, process_limiter, sandbox_status, wrap_command
from tools.shell import BashTool, run_command

BWRAP = probe_bwrap()
needs_bwrap = pytest.mark.skipif(
    not BWRAP.ok, reason=f"no usable bubblewrap here: {BWRAP.problem} (apt-get install bubblewrap)"
)

ATTEMPTS: list[tuple[str, bool]] = []  # (what was tried, whether it got through)
SECRET = "SECRET-MATERIAL-4f1c"  # in every fake secret file


def attempt(name: str, escaped: bool, detail: str = "") -> None:
    escaped = bool(escaped)
    ATTEMPTS.append((name, escaped))
    assert not escaped, f"escape: {name}\n{detail}"


@pytest.fixture
def box(tmp_path, monkeypatch):
    """A fake $HOME full of secrets, a git workspace inside tmp_path, and `run(command, **policy)`."""
    home = tmp_path / "home"
    for rel, text in [
        (".ssh/id_rsa", SECRET),
        (".aws/credentials", SECRET),
        (".netrc", SECRET),
        (".git-credentials", SECRET),
        (".cache/huggingface/token", SECRET),
        (".config/dflash-agent/config.toml", f'api_key = "{SECRET}"'),
        (".config/gh/hosts.yml", SECRET),
        (".gitconfig", "[user]\n\tname = visible-control\n"),
    ]:
        (home / rel).parent.mkdir(parents=True, exist_ok=True)
        (home / rel).write_text(text)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("XDG_CONFIG_HOME", raising=False)
    workspace = tmp_path / "ws"
    workspace.mkdir()
    subprocess.run(["git", "init", "-q", str(workspace)], check=True)

    class Box:
        pass

    b = Box()
    b.home, b.ws, b.tmp = home, workspace, tmp_path

    def run(command: str, timeout: float = 20, max_output: int = 4000, **policy):
        return run_command(command, workspace, timeout, max_output, SandboxPolicy(**policy))

    b.run = run
    return b


# --- writes outside the workspace ---------------------------------------------------------------------


@needs_bwrap
def test_writes_outside_the_workspace_do_not_reach_the_host(box):
    tag = uuid.uuid4().hex[:8]
    targets = {
        "write /etc": Path(f"/etc/dflash-escape-{tag}"),
        "write $HOME": box.home / f"escape-{tag}",
        "write host /tmp": Path(f"/tmp/dflash-escape-{tag}"),
        "write next to the workspace": box.ws.parent / f"escape-{tag}",
        "write /var/tmp": Path(f"/var/tmp/dflash-escape-{tag}"),
        "write host /dev/shm": Path(f"/dev/shm/dflash-escape-{tag}"),
        "write the agent's own source tree": Path(__file__).parent / f"escape-{tag}",
    }
    try:
        for name, target in targets.items():
            outcome = box.run(f"echo pwned > {target}; echo done")
            attempt(name, target.exists(), outcome.output)
        # control: inside, /tmp is a private writable tmpfs, and the workspace is writable
        outcome = box.run(f"echo private > /tmp/t-{tag} && cat /tmp/t-{tag} && echo ok > in-workspace")
        assert "private" in outcome.output and (box.ws / "in-workspace").read_text() == "ok\n"
        assert outcome.sandboxed
    finally:
        for target in targets.values():
            target.unlink(missing_ok=True)


@needs_bwrap
def test_symlinks_in_the_workspace_do_not_lead_out(box):
    tag = uuid.uuid4().hex[:8]
    outside = box.tmp / f"outside-{tag}"
    home_target = box.home / f"linked-{tag}"
    outcome = box.run(
        f"ln -s {outside} out && echo x > out; ln -s {home_target} h && echo x > h; "
        f"ln -s /etc e && echo x > e/escape-{tag}; echo done"
    )
    attempt("write through a symlink to a sibling folder", outside.exists(), outcome.output)
    attempt("write through a symlink into $HOME", home_target.exists(), outcome.output)
    attempt("write through a symlink to /etc", Path(f"/etc/escape-{tag}").exists(), outcome.output)
    Path(f"/etc/escape-{tag}").unlink(missing_ok=True)


@needs_bwrap
def test_git_internals_stay_read_only(box):
    config = box.ws / ".git" / "config"
    before = config.read_text()
    outcome = box.run(
        "printf '[core]\\n\\thooksPath = /tmp\\n' >> .git/config; "
        "echo 'curl evil' > .git/hooks/pre-commit; git config user.name intruder; echo done"
    )
    attempt("rewrite .git/config", config.read_text() != before, outcome.output)
    attempt("plant a git hook", (box.ws / ".git/hooks/pre-commit").exists(), outcome.output)
    assert "Read-only file system" in outcome.output
    # control: git can still read the repository, and the working tree is writable
    outcome = box.run("git status --short && echo ok > tracked.txt && echo written")
    assert "written" in outcome.output


@needs_bwrap
def test_root_inside_the_sandbox_has_no_capabilities(box):
    tag = uuid.uuid4().hex[:8]
    target = Path(f"/etc/dflash-remount-{tag}")
    outcome = box.run(f"mount -o remount,rw / ; touch {target}; grep CapEff /proc/self/status")
    try:
        attempt("remount / read-write and write /etc", target.exists(), outcome.output)
        attempt("keep capabilities", "CapEff:\t0000000000000000" not in outcome.output, outcome.output)
    finally:
        target.unlink(missing_ok=True)
    sysctl = Path("/proc/sys/fs/lease-break-time")
    if sysctl.exists():
        before = sysctl.read_text()
        outcome = box.run(f"echo {int(before) + 1} > {sysctl}; echo done")
        changed = sysctl.read_text() != before
        if changed:
            sysctl.write_text(before)
        attempt("change a kernel tunable in /proc/sys", changed, outcome.output)


@needs_bwrap
def test_host_processes_are_out_of_reach(box):
    victim = subprocess.Popen(["sleep", "30"])
    try:
        outcome = box.run(f"kill -9 {victim.pid}; ls /proc | grep -c '^[0-9]'")
        time.sleep(0.2)
        attempt("kill a host process", victim.poll() is not None, outcome.output)
    finally:
        victim.kill()
        victim.wait()


# --- secrets ------------------------------------------------------------------------------------------


@needs_bwrap
def test_secret_files_in_home_are_hidden(box):
    for rel in [
        ".ssh/id_rsa",
        ".aws/credentials",
        ".netrc",
        ".git-credentials",
        ".cache/huggingface/token",
        ".config/dflash-agent/config.toml",
        ".config/gh/hosts.yml",
    ]:
        outcome = box.run(f"cat $HOME/{rel}; ls -la $HOME/{Path(rel).parent}")
        attempt(f"read ~/{rel}", SECRET in outcome.output, outcome.output)
    outcome = box.run(f"grep -r {SECRET} $HOME; echo searched")
    attempt("find a secret anywhere under $HOME", SECRET in outcome.output, outcome.output)
    # control: the rest of $HOME stays readable
    assert "visible-control" in box.run("cat $HOME/.gitconfig").output


def test_secret_variables_are_not_in_commands_environment(box, monkeypatch):
    values = {
        "HF_TOKEN": "hf_escape_value_1",
        "OPENAI_API_KEY": "sk-escape-value-2",
        "FOO_TOKEN": "foo-escape-value-3",
        "AWS_SECRET_ACCESS_KEY": "aws-escape-value-4",
        "DB_PASSWORD": "db-escape-value-5",
    }
    for name, value in values.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setenv("MY_SETTING", "allowed-value")
    for policy in [{}, {"mode": "full-access"}, {"allow_env": ["MY_*", "FOO_*"]}]:
        outcome = box.run("env; cat /proc/self/environ | tr '\\0' '\\n'", **policy)
        for name, value in values.items():
            attempt(
                f"see ${name} ({policy or 'default'})",
                value in outcome.output or f"{name}=" in outcome.output,
                outcome.output,
            )
        assert ("allowed-value" in outcome.output) == ("allow_env" in policy)


# --- network ------------------------------------------------------------------------------------------


@pytest.fixture
def listener():
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(8)
    accepted: list[int] = []

    def serve():
        while True:
            try:
                conn, _ = server.accept()
            except OSError:
                return
            accepted.append(1)
            conn.close()

    threading.Thread(target=serve, daemon=True).start()
    yield server.getsockname()[1], accepted
    server.close()


@needs_bwrap
def test_no_network_unless_the_policy_allows_it(box, listener):
    port, accepted = listener
    probe = (
        f"{sys.executable} -c \"import socket; socket.create_connection(('127.0.0.1', {port}), timeout=3); "
        f"print('CONNECTED')\""
    )
    outcome = box.run(probe)
    attempt("connect to a host port on 127.0.0.1", "CONNECTED" in outcome.output or bool(accepted), outcome.output)
    outcome = box.run("cat /proc/net/dev")
    interfaces = [line.split(":")[0].strip() for line in outcome.output.splitlines() if ":" in line]
    attempt("see a network interface besides lo", any(i != "lo" for i in interfaces), outcome.output)
    # control: the same connection works when the policy allows the network
    allowed = box.run(probe, network=True)
    assert "CONNECTED" in allowed.output and accepted


# --- limits -------------------------------------------------------------------------------------------


FORK_LOOP = """
import os, time
count = 0
for _ in range(2000):
    try:
        pid = os.fork()
    except OSError:
        break
    if pid == 0:
        time.sleep(5)
        os._exit(0)
    count += 1
print("FORKS", count, flush=True)
"""


@pytest.mark.skipif(process_limiter().kind == "none", reason=f"no process limit here: {process_limiter().description}")
def test_fork_bomb_is_bounded_by_the_process_limit(box):
    script = box.ws / "forks.py"
    script.write_text(FORK_LOOP)
    started = time.monotonic()
    outcome = box.run(f"{sys.executable} forks.py", timeout=30, max_processes=64)
    took = time.monotonic() - started
    forks = int(outcome.output.split("FORKS")[1].split()[0])
    attempt(f"fork past max_processes=64 ({process_limiter().kind}): {forks} forks", forks > 64, outcome.output)
    assert not outcome.timed_out and took < 30
    if sandbox.probe_bwrap().ok:  # the PID namespace ends every child with the command
        assert took < 5, "children sleeping 5 s outlived the command"
    assert not list(Path("/sys/fs/cgroup/pids").glob(f"dflash-agent-{os.getpid()}-*")), "cgroup left behind"


def test_output_flood_is_bounded(box):
    started = time.monotonic()
    outcome = box.run("yes 0123456789 | head -c 50000000; echo END", max_output=2000)
    attempt("flood 50 MB of output", len(outcome.output) > 2500, outcome.output[:300])
    assert outcome.output.rstrip().endswith("END") and time.monotonic() - started < 20
    outcome = box.run("yes flood", timeout=1, max_output=2000)
    attempt("endless output", len(outcome.output) > 2500 or not outcome.timed_out, outcome.output[:300])


@pytest.mark.parametrize("mode", ["workspace-write", "full-access"])
def test_background_processes_do_not_outlive_the_command(box, mode):
    late, detached = box.ws / "late", box.ws / "detached"
    outcome = box.run(
        f"(sleep 1.5; touch {late}) & setsid nohup sh -c 'sleep 1.5; touch {detached}' >/dev/null 2>&1 & echo started",
        mode=mode,
    )
    assert "started" in outcome.output and outcome.seconds < 1.5
    time.sleep(2.2)
    attempt(f"background child outlives the command ({mode})", late.exists(), outcome.output)
    if mode != "full-access" or process_limiter().kind.startswith("cgroup"):
        # setsid leaves the process group; the PID namespace (bwrap) or the command's cgroup still ends it
        attempt(f"setsid daemon outlives the command ({mode})", detached.exists(), outcome.output)


@needs_bwrap
def test_timeout_kills_the_whole_sandboxed_tree(box):
    marker = box.ws / "survivor"
    started = time.monotonic()
    outcome = box.run(f"(sleep 2; touch {marker}) & setsid sh -c 'sleep 2; touch {marker}' & sleep 30", timeout=1)
    assert outcome.timed_out and time.monotonic() - started < 5
    time.sleep(2.5)
    attempt("outlive the timeout", marker.exists(), outcome.output)


# --- nested repositories ------------------------------------------------------------------------------


@needs_bwrap
def test_nested_git_folders_stay_read_only(box):
    """Issue 12: `git -C sub config core.fsmonitor CMD` in a nested repo ran CMD at the agent's next git status."""
    for nested in ["sub", "node_modules/dep", "a/b/c/deep"]:
        subprocess.run(["git", "init", "-q", str(box.ws / nested)], check=True)
    (box.ws / "wt").mkdir()  # a gitfile pointing at a git dir elsewhere in the workspace
    subprocess.run(["git", "init", "-q", "--bare", str(box.ws / "store")], check=True)
    (box.ws / "wt" / ".git").write_text("gitdir: ../store\n")
    subprocess.run(["git", "init", "-q", "--bare", str(box.ws / "store2")], check=True)
    (box.ws / "linked").mkdir()  # a `.git` link to a git dir elsewhere in the workspace
    (box.ws / "linked" / ".git").symlink_to("../store2")
    (box.ws / "dangling").mkdir()  # a dangling `.git` link must not break every command
    (box.ws / "dangling" / ".git").symlink_to("../nowhere")
    configs = {
        p: p.read_text()
        for p in [box.ws / n / ".git/config" for n in ["sub", "node_modules/dep", "a/b/c/deep"]]
        + [box.ws / "store/config", box.ws / "store2/config"]
    }
    outcome = box.run(
        "git -C sub config core.fsmonitor 'touch /tmp/pwned'; "
        "git -C node_modules/dep config core.fsmonitor x; git -C a/b/c/deep config core.hooksPath /tmp; "
        "printf '[core]\\n\\tfsmonitor = x\\n' >> store/config; echo x > sub/.git/hooks/post-checkout; "
        "git -C linked config core.fsmonitor x; "
        "rm -rf a/b/c/deep/.git; mv sub/.git sub/moved; echo done"
    )
    for config, before in configs.items():
        attempt(f"rewrite nested {config.relative_to(box.ws)}", config.read_text() != before, outcome.output)
    attempt("plant a hook in a nested repo", (box.ws / "sub/.git/hooks/post-checkout").exists(), outcome.output)
    attempt(
        "remove or move a nested .git",
        not (box.ws / "a/b/c/deep/.git").is_dir() or not (box.ws / "sub/.git").is_dir(),
        outcome.output,
    )
    # control: the nested working trees themselves stay writable
    assert "ok" in box.run("echo ok > sub/file && cat sub/file").output


@needs_bwrap
def test_past_the_walk_budget_the_rest_of_the_workspace_is_read_only(box, monkeypatch):
    """Fail closed: folders the .git walk did not reach cannot be written, so no nested repo is missed."""
    subprocess.run(["git", "init", "-q", str(box.ws / "x/y/z/repo")], check=True)
    monkeypatch.setattr(sandbox, "GIT_WALK_BUDGET", 3)
    config = box.ws / "x/y/z/repo/.git/config"
    before = config.read_text()
    outcome = box.run("git -C x/y/z/repo config core.fsmonitor x; echo top > top.txt; echo done")
    attempt("rewrite a nested repo past the walk budget", config.read_text() != before, outcome.output)
    assert (box.ws / "top.txt").read_text() == "top\n"


@needs_bwrap
def test_a_link_planted_by_bash_does_not_redirect_write_file(box):
    """Issue 12's route: sandboxed bash plants `.a.py.dflash-tmp -> TARGET`, then write_file a.py (which runs
    outside the sandbox) wrote TARGET: a file outside, .git/config or an executable hook."""
    from tools.files import WriteFileTool

    outside = box.tmp / f"outside-{uuid.uuid4().hex[:8]}"
    outside.write_text("untouched\n")
    hook = box.ws / ".git/hooks/post-commit"
    config_before = (box.ws / ".git/config").read_text()
    ctx = ToolContext(box.ws)
    for name, target in [("a.py", outside), ("b.py", box.ws / ".git/config"), ("c.py", hook)]:
        outcome = box.run(f"ln -s {target} .{name}.dflash-tmp && echo planted")
        assert "planted" in outcome.output
        result = WriteFileTool().invoke({"path": name, "content": "print('hi')\n"}, ctx)
        assert not result.is_error, result.output
    attempt("write_file through a planted link to a file outside", outside.read_text() != "untouched\n")
    attempt("write_file through a planted link to .git/config", (box.ws / ".git/config").read_text() != config_before)
    attempt("write_file through a planted link to a git hook", hook.exists())


def test_a_wide_unwalked_frontier_is_covered_by_few_binds(tmp_path, monkeypatch):
    """Past the budget the folders left are read-only; when they are many, their parents are (bwrap's argv
    stays bounded), and nothing unwalked is left writable."""
    ws = tmp_path / "ws"
    for a in range(6):
        for b in range(6):
            (ws / f"p{a}" / f"q{b}" / "r").mkdir(parents=True)
    monkeypatch.setattr(sandbox, "MAX_UNWALKED_BINDS", 4)
    covered = sandbox.git_folders(ws, budget=10)
    assert 0 < len(covered) <= 4
    everything = [p for p in ws.rglob("*") if p.is_dir()]
    walked_at_most = 10
    uncovered = [p for p in everything if not any(c == p or c in p.parents for c in covered)]
    assert len(uncovered) <= walked_at_most  # only folders the walk did see stay writable
    monkeypatch.setattr(sandbox, "MAX_UNWALKED_BINDS", 1)
    assert sandbox.git_folders(ws, budget=10) == [ws]


# --- host sockets -------------------------------------------------------------------------------------


@pytest.fixture
def host_sockets(tmp_path, monkeypatch):
    """Unix socket servers where host services keep theirs: /run (as root), $XDG_RUNTIME_DIR and the
    ssh-agent socket (both outside /tmp, which is private anyway); yields their paths."""
    tag = uuid.uuid4().hex[:8]
    places = {"xdg": Path(f"/var/tmp/dflash-xdg-{tag}"), "ssh": Path(f"/var/tmp/dflash-ssh-{tag}")}
    paths = {"xdg": places["xdg"] / "bus", "ssh": places["ssh"] / "agent.sock"}
    if os.access("/run", os.W_OK):
        places["run"] = Path(f"/run/dflash-{tag}")
        paths["run"] = places["run"] / "docker.sock"
    servers = []
    for place in places.values():
        place.mkdir()
    for path in paths.values():
        server = socket.socket(socket.AF_UNIX)
        server.bind(str(path))
        server.listen(4)
        servers.append(server)
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(places["xdg"]))
    monkeypatch.setenv("SSH_AUTH_SOCK", str(paths["ssh"]))
    yield paths
    for server in servers:
        server.close()
    for place in places.values():
        subprocess.run(["rm", "-rf", str(place)], check=False)


@needs_bwrap
@pytest.mark.parametrize("network", [False, True])
def test_host_unix_sockets_are_out_of_reach(box, host_sockets, network):
    for name, path in host_sockets.items():
        probe = (
            f"{sys.executable} -c \"import socket; s = socket.socket(socket.AF_UNIX); s.connect('{path}'); "
            f"print('CONNECTED')\""
        )
        outcome = box.run(probe, network=network)
        attempt(
            f"connect to the host's {name} socket (network={network})", "CONNECTED" in outcome.output, outcome.output
        )
        control = socket.socket(socket.AF_UNIX)
        control.connect(str(path))  # the server is there: from the host it answers
        control.close()


@needs_bwrap
def test_an_ssh_agent_socket_inside_the_workspace_is_hidden_too(box, monkeypatch):
    path = box.ws / "agent.sock"
    server = socket.socket(socket.AF_UNIX)
    server.bind(str(path))
    server.listen(1)
    monkeypatch.setenv("SSH_AUTH_SOCK", str(path))
    try:
        outcome = box.run(
            f'{sys.executable} -c "import socket; s = socket.socket(socket.AF_UNIX); '
            f"s.connect('{path}'); print('CONNECTED')\""
        )
        attempt("connect to an ssh-agent socket inside the workspace", "CONNECTED" in outcome.output, outcome.output)
    finally:
        server.close()


@needs_bwrap
def test_dns_configuration_under_run_stays_visible_with_network(box, tmp_path, monkeypatch):
    """/etc/resolv.conf is often a link into /run (systemd-resolved); hiding /run must not break DNS."""
    if not os.access("/run", os.W_OK):
        pytest.skip("needs a writable /run (root) to stand in for systemd-resolved")
    tag = uuid.uuid4().hex[:8]
    resolved = Path(f"/run/dflash-resolve-{tag}/stub-resolv.conf")
    resolved.parent.mkdir()
    resolved.write_text("nameserver 127.0.0.53\n")
    link = tmp_path / "resolv.conf"
    link.symlink_to(resolved)
    monkeypatch.setattr(sandbox, "RESOLV_CONF", link)
    try:
        assert "127.0.0.53" in box.run(f"cat {resolved}", network=True).output
        assert "127.0.0.53" not in box.run(f"cat {resolved}").output  # without network, /run stays empty
    finally:
        subprocess.run(["rm", "-rf", str(resolved.parent)], check=False)


# --- memory, file size and /tmp limits ----------------------------------------------------------------


@needs_bwrap
def test_memory_past_the_cap_fails_with_a_clear_message(box):
    outcome = box.run(
        f"{sys.executable} -c \"b = bytearray(600 * 1024 * 1024); print('ALLOCATED')\"", max_memory_mb=256
    )
    attempt("allocate 600 MiB under a 256 MiB cap", "ALLOCATED" in outcome.output, outcome.output)
    assert outcome.exit_code != 0 and "ran out of memory" in outcome.output and "max_memory_mb" in outcome.output
    assert (
        "ALLOCATED"
        in box.run(
            f"{sys.executable} -c \"b = bytearray(100 * 1024 * 1024); print('ALLOCATED')\"", max_memory_mb=256
        ).output
    )


@needs_bwrap
@pytest.mark.skipif(sandbox.memory_group().parent is None, reason="no writable cgroup v1 memory controller here")
def test_memory_of_the_whole_command_is_capped_by_its_cgroup(box):
    """Each process stays under the per-process cap; together they pass it, and the cgroup stops them."""
    hog = f"{sys.executable} -c \"import time; b = b'x' * (120 << 20); time.sleep(3); print('HELD')\""
    outcome = box.run(f"for i in 1 2 3 4; do {hog} & done; wait; exit 1", max_memory_mb=256, timeout=30)
    held = outcome.output.splitlines().count("HELD")
    attempt(f"hold 480 MiB in 4 processes under a 256 MiB cap ({held} held)", held == 4, outcome.output)
    assert "memory limit" in outcome.output and "max_memory_mb" in outcome.output


@needs_bwrap
def test_a_file_past_the_size_cap_fails_and_says_why(box):
    outcome = box.run("head -c 5M /dev/zero > big.bin", max_file_mb=1)
    size = (box.ws / "big.bin").stat().st_size
    attempt("write a 5 MiB file under a 1 MiB cap", size > 1024 * 1024, outcome.output)
    assert outcome.exit_code != 0 and "file size limit" in outcome.output and "max_file_mb" in outcome.output
    py = box.run(f"{sys.executable} -c \"open('big2.bin', 'wb').write(bytes(5 << 20))\"", max_file_mb=1)
    assert py.exit_code != 0 and "file size limit" in py.output


@needs_bwrap
def test_private_tmp_has_a_size_cap(box):
    if not probe_bwrap().sized_tmp:
        pytest.skip("this bubblewrap has no --size")
    outcome = box.run("head -c 8M /dev/zero > /tmp/fill; echo rc=$?; du -m /tmp/fill", tmp_size_mb=2, max_file_mb=0)
    attempt("fill the private /tmp past its 2 MiB cap", "rc=0" in outcome.output, outcome.output)
    assert "No space left" in outcome.output


@pytest.mark.slow
@needs_bwrap
@pytest.mark.parametrize("runner", ["pytest", "node", "java", "cargo"])
def test_toolchains_work_under_the_default_limits(box, runner):
    """The default memory cap is RLIMIT_DATA, which leaves the address space that node, java and cargo
    reserve up front alone; HOME is read-only and TMPDIR the private /tmp, and their tests still run."""
    ws = box.ws
    if runner == "pytest":
        (ws / "test_ok.py").write_text("def test_ok(tmp_path):\n    (tmp_path / 'f').write_text('x')\n")
        command = f"{sys.executable} -m pytest -q"
    elif runner == "node":
        if not shutil.which("node"):
            pytest.skip("node is not installed")
        (ws / "ok.test.js").write_text(
            "const test = require('node:test');\nconst assert = require('node:assert');\n"
            "test('adds', () => assert.strictEqual(1 + 1, 2));\n"
        )
        command = "node --test"
    elif runner == "java":
        if not shutil.which("java"):
            pytest.skip("java is not installed")
        command = "java -Xmx512m -version && echo passed"
    else:
        if not shutil.which("cargo") or "RUSTUP_HOME" not in os.environ:  # set by tests/conftest.py
            pytest.skip("cargo (rustup) is not installed")
        (ws / "src").mkdir()
        (ws / "Cargo.toml").write_text('[package]\nname = "ok"\nversion = "0.1.0"\nedition = "2021"\n')
        (ws / "src/lib.rs").write_text("#[test]\nfn adds() { assert_eq!(1 + 1, 2); }\n")
        command = "cargo test --offline -q"
    outcome = box.run(command, timeout=240)
    assert outcome.exit_code == 0 and "pass" in outcome.output.lower(), outcome.output


# --- policy plumbing and the no-sandbox path ----------------------------------------------------------


def test_bwrap_arguments_follow_the_policy(tmp_path):
    home, ws = tmp_path / "home", tmp_path / "ws"
    (home / ".ssh").mkdir(parents=True)
    (home / ".netrc").write_text("x")
    (ws / ".git").mkdir(parents=True)
    args = bwrap_argv("/usr/bin/bwrap", ["bash", "-c", "true"], ws, SandboxPolicy(), home)
    joined = " ".join(args)
    assert args[:5] == ["/usr/bin/bwrap", "--ro-bind", "/", "/", "--dev"] and args[-3:] == ["bash", "-c", "true"]
    assert f"--bind {ws} {ws}" in joined and f"--ro-bind-try {ws / '.git'} {ws / '.git'}" in joined
    assert f"--tmpfs {home / '.ssh'} --remount-ro {home / '.ssh'}" in joined
    assert f"--ro-bind /dev/null {home / '.netrc'}" in joined and ".aws" not in joined
    for flag in ["--unshare-net", "--unshare-pid", "--die-with-parent", "--new-session", "--cap-drop", f"--chdir {ws}"]:
        assert flag in joined
    assert "--unshare-net" not in bwrap_argv("bwrap", ["true"], ws, SandboxPolicy(network=True), home)
    read_only = " ".join(bwrap_argv("bwrap", ["true"], ws, SandboxPolicy(mode="read-only"), home))
    assert f"--ro-bind {ws} {ws}" in read_only and f"--bind {ws} {ws}" not in read_only
    inside_hidden = home / ".ssh" / "project"  # a workspace inside a hidden folder is never hidden
    inside_hidden.mkdir()
    assert f"--tmpfs {home / '.ssh'} " not in " ".join(
        bwrap_argv("bwrap", ["true"], inside_hidden, SandboxPolicy(), home)
    )
    unlimited = SandboxPolicy(mode="full-access", max_processes=0, max_memory_mb=0, max_file_mb=0)
    full = wrap_command(["bash", "-c", "true"], ws, unlimited)
    assert full.argv == ["bash", "-c", "true"] and not full.sandboxed
    capped = SandboxPolicy(mode="full-access", max_processes=0, max_memory_mb=64, max_file_mb=2)
    limited = wrap_command(["true"], ws, capped)
    assert limited.argv[-4:] == ["sandbox-limits", str(64 * 1024), str(2 * 1024), "true"]  # ulimit -d KiB -f blocks
    limited.cleanup()
    assert wrap_command(["true"], ws, None).argv == ["true"]


def test_without_bubblewrap_commands_run_and_warn_once(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(sandbox, "BWRAP", "/nonexistent/bwrap")
    monkeypatch.setattr(sandbox, "_warned", False)
    first = run_command("echo ran-1", tmp_path, 10, 2000, SandboxPolicy())
    second = run_command("echo ran-2", tmp_path, 10, 2000, SandboxPolicy())
    assert "ran-1" in first.output and "ran-2" in second.output and not first.sandboxed
    stderr = capsys.readouterr().err
    assert stderr.count("WITHOUT a sandbox") == 1 and first.warning and second.warning is None
    for words in ["not installed", "apt-get install bubblewrap", "dnf install bubblewrap", "macOS", "full-access"]:
        assert words in first.warning
    status = sandbox.sandbox_status()
    assert not status.available and "apt-get install bubblewrap" in status.summary()


def test_status_names_what_is_in_force():
    status = sandbox_status()
    line = status.summary()
    assert "process limit:" in line and process_limiter().description in line
    assert "memory: 8192 MiB per process (RLIMIT_DATA)" in line and "file size (RLIMIT_FSIZE): 2048 MiB" in line
    assert ("private /tmp: 1024 MiB" in line) == (BWRAP.ok and BWRAP.sized_tmp)
    if BWRAP.ok:
        assert status.available and status.bwrap and "bubblewrap" in line
    print(f"\n{line}")


@needs_bwrap
def test_bash_tool_runs_sandboxed_by_default(tmp_path):
    ctx = ToolContext(tmp_path, ToolPolicy(command_timeout=10))
    result = BashTool().invoke({"command": "touch /etc/x-dflash 2>&1; touch here && echo made"}, ctx)
    assert "Read-only file system" in result.output and "made" in result.output
    assert not Path("/etc/x-dflash").exists()


def test_zz_escape_report(capsys):
    """Runs last (file order): the one-line count of the attempts above."""
    if not ATTEMPTS:
        pytest.skip("no escape attempts ran (bubblewrap missing, or deselected)")
    escapes = [name for name, escaped in ATTEMPTS if escaped]
    with capsys.disabled():
        print(
            f"\nsandbox escape suite: {len(ATTEMPTS)} attempts, {len(escapes)} escapes "
            f"(process limit: {process_limiter().kind})"
        )
    assert not escapes, escapes


# --- what else holds secrets, and the agent's own folders -------------------------------------------------


@pytest.fixture
def own_home(box, monkeypatch):
    """The fake $HOME with shell start-up files, histories, another agent's folder and the agent's own data,
    state and cache folders; XDG overrides removed so that platformdirs finds them there."""
    for name in ("XDG_DATA_HOME", "XDG_STATE_HOME", "XDG_CACHE_HOME", "DFLASH_AGENT_CACHE"):
        monkeypatch.delenv(name, raising=False)
    for rel in (
        ".bashrc",
        ".bash_history",
        ".profile",
        ".claude/.credentials.json",
        ".claude.json",
        ".local/share/dflash-agent/mcp-approvals.json",
        ".local/state/dflash-agent/sessions/run.jsonl",
    ):
        (box.home / rel).parent.mkdir(parents=True, exist_ok=True)
        (box.home / rel).write_text(f"export OPENAI_API_KEY={SECRET}\n")
    (box.home / ".cache/dflash-agent/models").mkdir(parents=True)
    (box.home / ".cache/dflash-agent/models/m.gguf").write_text("weights")
    return box


@needs_bwrap
def test_shell_start_up_files_histories_and_other_agents_folders_are_hidden(own_home):
    outcome = own_home.run(
        "cat $HOME/.bashrc $HOME/.bash_history $HOME/.profile $HOME/.claude/.credentials.json $HOME/.claude.json "
        "$HOME/.local/share/dflash-agent/mcp-approvals.json $HOME/.local/state/dflash-agent/sessions/run.jsonl; "
        f"grep -r {SECRET} $HOME; echo searched"
    )
    attempt("read shell start-up files, histories, ~/.claude, the agent's data and state", SECRET in outcome.output)
    assert "searched" in outcome.output
    assert "weights" in own_home.run("cat $HOME/.cache/dflash-agent/models/m.gguf").output  # caches stay readable


@needs_bwrap
def test_unix_sockets_under_home_are_out_of_reach(own_home):
    path = own_home.home / ".editor.sock"  # short: a socket's path has at most 107 bytes (pytest-xdist's are long)
    server = socket.socket(socket.AF_UNIX)
    server.bind(str(path))
    server.listen(1)
    try:
        script = (
            "import socket\ns = socket.socket(socket.AF_UNIX)\n"
            f"try:\n    s.connect({str(path)!r}); print('CONNECTED')\nexcept OSError as e:\n    print('refused', e)\n"
        )
        outcome = own_home.run(f"{sys.executable} -c {shlex.quote(script)}", network=True)
        attempt("connect to a unix socket under $HOME", "CONNECTED" in outcome.output, outcome.output)
        assert "refused" in outcome.output and "too long" not in outcome.output
    finally:
        server.close()


@needs_bwrap
def test_a_workspace_at_home_keeps_the_agents_folders_out_of_reach(own_home):
    """With the workspace at $HOME (writable), the agent's config, data and state stay hidden and its
    caches read-only: a command cannot change the next run's settings or approvals."""
    outcome = run_command(
        "echo 'sandbox = \"full-access\"' > .config/dflash-agent/config.toml; "
        "echo x > .local/share/dflash-agent/mcp-approvals.json; "
        "echo x > .cache/dflash-agent/models/m.gguf; "
        "echo ok > plain.txt; cat .bashrc; echo done",
        own_home.home,
        20,
        4000,
        SandboxPolicy(),
    )
    assert "done" in outcome.output and (own_home.home / "plain.txt").read_text() == "ok\n"  # control
    attempt(
        "rewrite the agent's config from a workspace at $HOME",
        "full-access" in (own_home.home / ".config/dflash-agent/config.toml").read_text(),
    )
    attempt(
        "rewrite MCP approvals from a workspace at $HOME",
        (own_home.home / ".local/share/dflash-agent/mcp-approvals.json").read_text() == "x\n",
    )
    attempt(
        "overwrite a cached model from a workspace at $HOME",
        (own_home.home / ".cache/dflash-agent/models/m.gguf").read_text() != "weights",
    )
    attempt("read ~/.bashrc from a workspace at $HOME", SECRET in outcome.output, outcome.output)


def test_the_sandbox_knows_the_agents_folders_where_inference_paths_puts_them(monkeypatch, tmp_path):
    from inference import paths

    monkeypatch.setenv("DFLASH_AGENT_CACHE", str(tmp_path / "models"))
    folders, caches = hidden.agent_folders()
    assert folders == [paths.config_dir(), paths.data_dir(), paths.state_dir()]
    assert caches == [paths.platform_cache_dir(), paths.cache_dir()]
