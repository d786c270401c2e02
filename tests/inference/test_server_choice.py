"""Engine choice by device and dialect, from engine records as `agent engine build` writes them: a GPU profile
never lands on a CPU or upstream build, and the refusal names the build command; a v0.4-dialect engine refuses
Bee's old drafter format with the conversion command."""

from __future__ import annotations

import pytest

from inference.engines.capabilities import Capabilities, default_capabilities, parse_help
from inference.engines.engine import BuildOptions, Engine
from inference.profiles import BUILTIN_PROFILES, ProfileError
from inference.server import check_drafter, choose_engine, planned_engine, without_broken_amx

UPSTREAM_HELP = "--spec-type none,draft-simple,draft-dflash,ngram-mod\n-m FNAME\n--spec-draft-model FNAME\n"


def record(cache, key: str, backend: str, caps: Capabilities, age: int) -> Engine:
    """An engine record (engine.json) with a real binary file, `age` seconds old (the newest wins among fits)."""
    import os
    import time

    folder = cache / "engines" / key
    (folder / "bin").mkdir(parents=True)
    binary = folder / "bin" / "llama-server"
    binary.write_text("#!/bin/sh\n")
    os.utime(binary, (time.time() - age, time.time() - age))
    engine = Engine(
        key=key,
        source=f"test:{key}",
        commit="0" * 40,
        options=BuildOptions(backend=backend),
        binary=binary,
        version="version: test",
        capabilities=caps,
        build_seconds=1,
    )
    (folder / "engine.json").write_text(engine.model_dump_json())
    return engine


@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("DFLASH_AGENT_CACHE", str(tmp_path))
    return tmp_path


def test_a_gpu_profile_skips_cpu_builds_even_when_their_dialect_renders_it(cache):
    record(cache, "bee-cpu", "cpu", default_capabilities(), age=0)  # newest, BeeLlama dialect, but CPU
    with pytest.raises(ProfileError) as refused:
        choose_engine(BUILTIN_PROFILES["gemma4-31b-dflash"])
    message = str(refused.value)
    assert "agent engine build --source beellama --backend cuda" in message and "built for cpu" in message
    with pytest.raises(ProfileError, match="needs a GPU build"):
        choose_engine(BUILTIN_PROFILES["gemma4-31b-dflash"], key="bee-cpu")  # named, still refused
    record(cache, "bee-cuda", "cuda", default_capabilities(), age=100)
    assert choose_engine(BUILTIN_PROFILES["gemma4-31b-dflash"]).key == "bee-cuda"
    assert choose_engine(BUILTIN_PROFILES["qwen-cpu"]).key == "bee-cpu"  # CPU profiles run on any build


def test_a_gpu_upstream_build_is_chosen_only_where_its_dialect_renders(cache):
    record(cache, "up-cuda", "cuda", parse_help(UPSTREAM_HELP), age=0)
    record(cache, "bee-cuda", "cuda", default_capabilities(), age=100)
    assert choose_engine(BUILTIN_PROFILES["gemma4-31b-dflash"]).key == "bee-cuda"  # upstream lacks cross-ctx etc.
    with pytest.raises(ProfileError, match="no engine with key 'nope'"):
        choose_engine(BUILTIN_PROFILES["gemma4-31b"], key="nope")


def test_with_no_engine_the_plan_renders_for_the_default_build(cache):
    caps, binary, described = planned_engine(BUILTIN_PROFILES["gemma4-31b-dflash"])
    assert caps.dflash_dialect == "beellama" and binary == "llama-server" and "BeeLlama v0.2.0" in described


def test_an_upstream_dialect_engine_refuses_bees_old_drafter_with_the_command(cache):
    with pytest.raises(ProfileError, match="convert-dflash-draft-to-upstream.py"):
        check_drafter(BUILTIN_PROFILES["gemma4-31b-dflash"], parse_help(UPSTREAM_HELP))
    check_drafter(BUILTIN_PROFILES["gemma4-31b-dflash"], default_capabilities())  # Bee v0.2 loads it as is


def test_an_engine_without_the_amx_fix_runs_without_repacking_on_an_amx_cpu(cache, monkeypatch):
    """Unpatched, ggml's AMX kernels kill llama-server on its first matrix product (exit -11 on a Sapphire Rapids
    VM): such a build gets `--no-repack` there; a patched one, or any build on a CPU without AMX, runs as is."""
    import inference.server

    caps = parse_help(UPSTREAM_HELP + "--repack, -nr, --no-repack\n")
    unpatched = record(cache, "old", "cpu", caps, age=10)
    patched = unpatched.model_copy(update={"patches": ["amx-tile-config", "ngram-simple-adaptive"]})
    monkeypatch.setattr(inference.server, "cpu_has_amx", lambda: True)
    assert without_broken_amx(unpatched) == ["--no-repack"]
    assert without_broken_amx(patched) == []
    monkeypatch.setattr(inference.server, "cpu_has_amx", lambda: False)
    assert without_broken_amx(unpatched) == []


def test_a_drafter_of_the_wrong_format_is_refused_before_any_download(cache, monkeypatch):
    """The server's own start path: the catalog's facts say the format, so nothing is fetched first."""
    from inference.engines.capabilities import known_engine
    from inference.server import ManagedServer

    monkeypatch.setenv("HF_ENDPOINT", "http://127.0.0.1:9")  # a download attempt would fail with another error
    v04 = record(cache, "v04", "cuda", known_engine("beellama-v0.4").capabilities(), age=1)
    with pytest.raises(ProfileError, match=r"dflash-draft.*convert-dflash-draft-to-upstream\.py"):
        ManagedServer(v04, BUILTIN_PROFILES["gemma4-31b-dflash"], check_memory=False).argv()
    mtp_with_dflash = BUILTIN_PROFILES["gemma4-31b-mtp"].model_copy(update={"draft": "gemma4-31b-dflash"})
    with pytest.raises(ProfileError, match=r"is a DFlash drafter .*gemma4-assistant"):
        ManagedServer(v04, mtp_with_dflash, check_memory=False).argv()
    assert not (cache / "models").exists() or not any((cache / "models").iterdir())


def test_a_profile_that_already_skips_repacking_gets_the_flag_once(cache, monkeypatch, tmp_path):
    """`agent serve --synthetic` adds `--no-repack` itself on a CPU; with an engine registered by path (its
    patches unknown) the AMX guard adds it too: one flag on the command line, not two."""
    import inference.server
    from inference.server import ManagedServer

    caps = default_capabilities()
    caps = caps.model_copy(update={"flags": [*caps.flags, "--no-repack"]})
    unpatched = record(cache, "old", "cpu", caps, age=10)
    monkeypatch.setattr(inference.server, "cpu_has_amx", lambda: True)
    profile = BUILTIN_PROFILES["qwen-cpu"]
    model = tmp_path / "model.gguf"
    model.write_bytes(b"")
    paths = dict.fromkeys(profile.models(), model)
    plain = ManagedServer(unpatched, profile, model_paths=paths, check_memory=False).argv()
    skipping = profile.model_copy(update={"extra_args": [*profile.extra_args, "--no-repack"]})
    twice = ManagedServer(unpatched, skipping, model_paths=paths, check_memory=False).argv()
    assert plain.count("--no-repack") == 1 and twice.count("--no-repack") == 1
