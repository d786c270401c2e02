"""Engine builds for real: upstream llama.cpp from the llama-cpp-python sdist, through the same local-tree
path a user's own checkout takes; capabilities read from the binary; clear errors for broken builds."""

from __future__ import annotations

import os
import subprocess
import time

import pytest

from inference.engine import (
    BEELLAMA_TAG,
    BuildOptions,
    Capabilities,
    Engine,
    EngineBuildError,
    EngineSource,
    build_engine,
    detect_build_options,
    parse_help,
)

BEELLAMA_HELP_SAMPLE = """\
-md,   --spec-draft-model FNAME          draft model for speculative decoding (default: unused)
--spec-type [none|ngram-cache|ngram-simple|ngram-map-k|ngram-map-k4v|ngram-mod|suffix|copyspec|recycle|dflash]
                                        type of speculative decoding to use when no draft model is provided
--spec-dflash-cross-ctx N               number of target hidden states the drafter sees (default: 512)
-ctk,  --cache-type-k TYPE              KV cache data type for K
                                        allowed values: f32, f16, bf16, q8_0, q4_0, q4_1, iq4_nl, q5_0, q5_1, turbo3
"""


def test_capabilities_of_the_built_engine(engine):
    caps = engine.capabilities
    assert engine.binary.is_file() and os.access(engine.binary, os.X_OK)
    assert {"draft-simple", "draft-dflash", "ngram-mod", "ngram-simple"} <= set(caps.spec_types)
    assert caps.dflash_dialect == "upstream"
    assert caps.has("--spec-draft-model") and caps.has("--host") and not caps.has("--spec-dflash-cross-ctx")
    assert {"q8_0", "q4_1", "q5_0"} <= set(caps.cache_types)
    assert "version" in engine.version


def test_our_patches_are_built_in_and_the_cached_source_stays_pristine(engine):
    from inference.engine import applicable_patches, resolve_source

    assert engine.patches == ["ngram-simple-adaptive"]
    assert engine.capabilities.has("--spec-ngram-simple-adapt-min")
    tree, _ = resolve_source(EngineSource.parse("pypi-sdist"))
    assert "adapt_min" not in (tree / "common" / "common.h").read_text()  # patched in a copy only
    assert [p.stem for p in applicable_patches(tree)] == ["ngram-simple-adaptive"]


def test_a_patch_that_does_not_apply_is_left_out(tmp_path):
    """A source that has moved on (here: no such file at all) builds without our patch instead of failing."""
    from inference.engine import applicable_patches

    (tmp_path / "common").mkdir()
    (tmp_path / "common" / "common.h").write_text("// another llama.cpp\n")
    assert applicable_patches(tmp_path) == []


def test_a_second_build_is_served_from_the_cache(engine):
    started = time.monotonic()
    again = build_engine(EngineSource.parse("pypi-sdist"), BuildOptions(backend="cpu"), show_progress=False)
    assert again.key == engine.key and again.binary == engine.binary
    assert time.monotonic() - started < 60  # hashing the tree, no compile


def test_the_built_server_runs(engine):
    run = subprocess.run([str(engine.binary), "--version"], capture_output=True, text=True, timeout=30)
    assert run.returncode == 0 and "version" in run.stderr + run.stdout


def test_beellama_help_is_read_as_the_beellama_dialect():
    caps = parse_help(BEELLAMA_HELP_SAMPLE)
    assert caps.dflash_dialect == "beellama"
    assert "dflash" in caps.spec_types and "turbo3" in caps.cache_types


def test_sources_parse():
    bee = EngineSource.parse("beellama")
    assert (bee.kind, bee.ref) == ("git", BEELLAMA_TAG) and "beellama.cpp" in bee.location
    assert EngineSource.parse("upstream", "b9000").ref == "b9000"
    assert EngineSource.parse("pypi-sdist==0.3.30").location == "0.3.30"
    assert EngineSource.parse("https://example.org/fork.git", "v1").kind == "git"


def test_a_folder_that_is_not_a_source_tree_is_refused(tmp_path):
    with pytest.raises(EngineBuildError, match="not a llama.cpp source tree"):
        EngineSource.parse(str(tmp_path))


def test_build_options_render_the_guide_flags():
    cuda = BuildOptions(backend="cuda", cuda_arch="89").cmake_args()
    for flag in ["-DGGML_CUDA=ON", "-DGGML_NATIVE=ON", "-DGGML_CUDA_FA=ON", "-DGGML_CUDA_FA_ALL_QUANTS=ON",
                 "-DCMAKE_CUDA_ARCHITECTURES=89", "-DCMAKE_BUILD_TYPE=Release"]:
        assert flag in cuda
    assert "-DGGML_METAL=ON" in BuildOptions(backend="metal").cmake_args()
    assert not any("CUDA" in a for a in BuildOptions().cmake_args())


def test_cuda_without_nvcc_is_a_clear_error(monkeypatch, tmp_path):
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(EngineBuildError, match="nvcc is not on PATH"):
        detect_build_options("cuda")


def test_compile_failure_shows_the_log_tail(tmp_path, monkeypatch):
    monkeypatch.setenv("DFLASH_AGENT_CACHE", str(tmp_path / "cache"))
    tree = tmp_path / "broken"
    tree.mkdir()
    (tree / "CMakeLists.txt").write_text(
        "cmake_minimum_required(VERSION 3.14)\nproject(broken CXX)\nadd_executable(llama-server main.cpp)\n")
    (tree / "main.cpp").write_text("int main() { this is not C++; }\n")
    with pytest.raises(EngineBuildError) as error:
        build_engine(EngineSource.parse(str(tree)), BuildOptions(), show_progress=False)
    message = str(error.value)
    assert "compile failed" in message and "build.log" in message and "main.cpp" in message


def test_missing_toolchain_names_the_packages(tmp_path, monkeypatch):
    monkeypatch.setenv("DFLASH_AGENT_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("PATH", str(tmp_path))
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "CMakeLists.txt").write_text("project(x)\n")
    with pytest.raises(EngineBuildError, match="apt-get install cmake build-essential"):
        build_engine(EngineSource.parse(str(tmp_path / "src")), BuildOptions(), show_progress=False)


FAKE_SERVER = r'''
#include <cstdio>
#include <cstring>
int main(int argc, char **argv) {
    if (argc > 1 && std::strcmp(argv[1], "--version") == 0) { std::fprintf(stderr, "version: 7 (abc1234)\n"); return 0; }
    std::printf("-m,    --model FNAME   model path\n--spec-type [none|ngram-mod|dflash]\n"
                "--spec-dflash-cross-ctx N  cross ctx\n--host HOST\n--port PORT\n");
    return 0;
}
'''


def test_git_source_at_a_ref_is_cloned_built_and_cached_by_commit(tmp_path, monkeypatch):
    """Any git URL + ref goes through clone, checkout and the same build path (a tiny stand-in project)."""
    import git

    monkeypatch.setenv("DFLASH_AGENT_CACHE", str(tmp_path / "cache"))
    origin = tmp_path / "origin"
    origin.mkdir()
    (origin / "CMakeLists.txt").write_text("cmake_minimum_required(VERSION 3.14)\nproject(fake CXX)\n"
                                           "add_executable(llama-server main.cpp)\n")
    (origin / "main.cpp").write_text(FAKE_SERVER)
    repo = git.Repo.init(origin)
    repo.index.add(["CMakeLists.txt", "main.cpp"])
    actor = git.Actor("t", "t@t")
    first = repo.index.commit("v1", author=actor, committer=actor)
    repo.create_tag("v1")
    (origin / "main.cpp").write_text(FAKE_SERVER.replace("version: 7", "version: 8"))
    repo.index.add(["main.cpp"])
    repo.index.commit("v2", author=actor, committer=actor)

    source = EngineSource.parse(f"file://{origin}", "v1")
    built = build_engine(source, BuildOptions(), show_progress=False)
    assert built.commit == first.hexsha and built.version == "version: 7 (abc1234)"
    assert built.capabilities.dflash_dialect == "beellama"
    assert build_engine(source, BuildOptions(), show_progress=False).key == built.key  # cached
    branch = EngineSource.parse(f"file://{origin}", repo.active_branch.name)
    newer = build_engine(branch, BuildOptions(), show_progress=False)
    assert newer.key != built.key and newer.version == "version: 8 (abc1234)"


def test_builders_of_one_key_take_turns(tmp_path, monkeypatch):
    """Two builds of the same key at once (two test runs, two terminals) shared one source copy and build folder
    and broke each other ('No rule to make target ...'); the second now waits and takes the first one's result."""
    import threading

    from inference import engine as engine_module

    monkeypatch.setenv("DFLASH_AGENT_CACHE", str(tmp_path / "cache"))
    tree = tmp_path / "src"
    tree.mkdir()
    (tree / "CMakeLists.txt").write_text("project(x)\n")
    running, overlaps, builds = [0], [], []

    def slow_build(source, options, tree, commit, patches, key, jobs, show_progress):
        running[0] += 1
        overlaps.append(running[0])
        time.sleep(0.5)
        engine = Engine(key=key, source=source.describe(), commit=commit, options=options, binary=tree / "llama-server",
                        version="test", capabilities=Capabilities(), build_seconds=0.5)
        (engine_module.engines_dir() / key).mkdir(parents=True)
        (engine_module.engines_dir() / key / "engine.json").write_text(engine.model_dump_json())
        builds.append(key)
        running[0] -= 1
        return engine

    monkeypatch.setattr(engine_module, "_build", slow_build)
    source, options = EngineSource.parse(str(tree)), BuildOptions(backend="cpu")
    results: list[Engine] = []
    threads = [threading.Thread(target=lambda: results.append(build_engine(source, options, show_progress=False)))
               for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(builds) == 1 and overlaps == [1]
    assert [r.key for r in results] == [builds[0]] * 2
