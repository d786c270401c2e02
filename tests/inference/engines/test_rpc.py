"""llama.cpp RPC: the build adds the worker, a profile renders `--rpc`, and a real model served through two local
`rpc-server` workers answers token for token what the plain server answers."""

from __future__ import annotations

from pathlib import Path

import httpx
import psutil
import pytest

from inference.engines.capabilities import default_capabilities
from inference.engines.engine import BuildOptions, EngineBuildError, rpc_target
from inference.engines.rpc import LocalRpcWorkers
from inference.profiles import BUILTIN_PROFILES, ProfileError
from inference.render import render
from inference.server import ManagedServer, build_hint

PATHS = {"qwen2.5-coder-1.5b": Path("/m/qwen.gguf")}
WITHOUT_RPC = default_capabilities().model_copy(
    update={"flags": [f for f in default_capabilities().flags if f != "--rpc"]}
)
WITH_RPC = WITHOUT_RPC.model_copy(update={"flags": [*WITHOUT_RPC.flags, "--rpc"]})


def test_the_rpc_build_is_its_own_cache_key_and_target():
    assert "-DGGML_RPC=ON" in BuildOptions(rpc=True).cmake_args()
    assert "-DGGML_RPC=ON" not in BuildOptions().cmake_args()


@pytest.mark.parametrize(("folder", "name"), [("tools/rpc", "ggml-rpc-server"), ("examples/rpc", "rpc-server")])
def test_the_worker_target_is_read_from_the_tree(tmp_path, folder, name):
    (tmp_path / folder).mkdir(parents=True)
    (tmp_path / folder / "CMakeLists.txt").write_text(
        f"set(TARGET {name})\nadd_executable(${{TARGET}} rpc-server.cpp)\n"
    )
    assert rpc_target(tmp_path) == name


def test_a_tree_without_a_worker_is_refused_with_the_fix(tmp_path):
    with pytest.raises(EngineBuildError, match="without --rpc"):
        rpc_target(tmp_path)


def test_profiles_render_their_workers():
    local = BUILTIN_PROFILES["qwen-cpu-rpc"]
    args = render(local, WITH_RPC, PATHS, "127.0.0.1", 8080, ["127.0.0.1:4001", "127.0.0.1:4002"])
    assert args[args.index("--rpc") + 1] == "127.0.0.1:4001,127.0.0.1:4002" and "-ngl" in args
    remote = local.model_copy(update={"rpc_local_workers": 0, "rpc_workers": ["10.0.0.2:50052", "10.0.0.3:50052"]})
    args = render(remote, WITH_RPC, PATHS, "127.0.0.1", 8080)
    assert args[args.index("--rpc") + 1] == "10.0.0.2:50052,10.0.0.3:50052"
    assert "--rpc" not in render(BUILTIN_PROFILES["qwen-cpu"], WITH_RPC, PATHS, "127.0.0.1", 8080)


def test_an_engine_without_rpc_is_refused_with_the_build_command():
    with pytest.raises(ProfileError, match="--rpc.*agent engine build --rpc"):
        render(BUILTIN_PROFILES["qwen-cpu-rpc"], WITHOUT_RPC, PATHS, "127.0.0.1", 8080)


def test_serve_lists_and_plans_the_rpc_profile_before_any_engine_is_built(tmp_path, monkeypatch):
    """llama.cpp lists `--rpc` only in a build with the RPC backend: with no engine built yet, the plan renders
    for the one `agent engine build --rpc` makes, not for the default build (which would refuse the profile)."""
    from typer.testing import CliRunner

    from agent.cli import app

    monkeypatch.setenv("DFLASH_AGENT_CACHE", str(tmp_path / "cache"))  # no engine built, no model cached
    monkeypatch.setenv("HF_ENDPOINT", "http://127.0.0.1:9")  # a download attempt would fail loudly
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    runner = CliRunner()
    listed = runner.invoke(app, ["serve", "--list"], env={"COLUMNS": "250"})
    assert "qwen-cpu-rpc               llama-server" in listed.stdout
    plan = runner.invoke(app, ["serve", "--profile", "qwen-cpu-rpc", "--plan"])
    assert plan.exit_code == 0, plan.output
    assert "which `agent engine build --rpc` builds" in plan.stdout
    assert "-ngl 99" in plan.stdout and "--rpc 127.0.0.1:50052,127.0.0.1:50053" in plan.stdout
    assert "memory plan for qwen-cpu-rpc" in plan.stdout
    assert not (tmp_path / "cache" / "models").exists() or not any((tmp_path / "cache" / "models").iterdir())
    assert "--rpc" in build_hint(BUILTIN_PROFILES["qwen-cpu-rpc"]) and "--rpc" not in build_hint(
        BUILTIN_PROFILES["qwen-cpu"]
    )


@pytest.mark.model
def test_workers_listen_on_loopback_and_stop(engine, tmp_path):
    assert engine.rpc_server, "the test engine is built with --rpc"
    with LocalRpcWorkers(engine.rpc_server, 2, threads=1, log_dir=tmp_path) as workers:
        assert len(workers.endpoints) == 2 and all(e.startswith("127.0.0.1:") for e in workers.endpoints)
        processes = list(workers.processes)
    assert all(p.poll() is not None for p in processes)


@pytest.mark.model
def test_a_model_over_two_rpc_workers_answers_as_the_plain_server(engine, qwen_path, tmp_path):
    """Greedy decoding through two local workers gives the plain server's tokens, compared with the plain server's
    weight repacking off: a CPU backend repacks weights into its own layout and kernels (faster, other rounding),
    while workers keep them as loaded; with repacking the two part at the first near-tie (seen: logprobs 0.008
    apart at token 5). Each worker holds its share of the weights; both speeds and the workers' memory are printed."""
    request = {"prompt": "def fibonacci(n):\n", "n_predict": 32, "temperature": 0, "seed": 1, "cache_prompt": False}
    same_arithmetic = BUILTIN_PROFILES["qwen-cpu"].model_copy(update={"extra_args": ["--no-repack"]})
    answers, held = {}, []
    for profile in (same_arithmetic, BUILTIN_PROFILES["qwen-cpu-rpc"]):
        with ManagedServer(engine, profile, log_dir=tmp_path) as server:
            reply = httpx.post(server.url.removesuffix("/v1") + "/completion", json=request, timeout=300).json()
            answers[profile.name] = reply["content"], reply["timings"]["predicted_per_second"]
            if server.workers:
                assert len(server.workers.endpoints) == 2
                held += [psutil.Process(p.pid).memory_info().rss for p in server.workers.processes]
                assert all(rss > 200 * 2**20 for rss in held), f"each worker holds part of the ~1 GB model: {held}"
        assert not (server.workers and server.workers.processes), "workers stop with the server"
    (plain, plain_speed), (spread, spread_speed) = answers.values()
    resident = " and ".join(f"{rss / 2**20:.0f}" for rss in held)
    print(
        f"\nplain (no repack) {plain_speed:.1f} tok/s, over 2 RPC workers {spread_speed:.1f} tok/s ({resident} MB resident)"
    )
    assert spread == plain and len(plain) > 20
