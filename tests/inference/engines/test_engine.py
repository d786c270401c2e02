"""Engine builds for real: upstream llama.cpp from the llama-cpp-python sdist, through the same local-tree
path a user's own checkout takes; capabilities read from the binary; clear errors for broken builds."""

from __future__ import annotations

import os
import subprocess
import time

import pytest

from inference.engines.engine import (
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
    from inference.engines.engine import resolve_source
    from inference.engines.engine_patches import applicable_patches

    assert engine.patches == ["amx-tile-config", "ngram-simple-adaptive"]
    assert engine.capabilities.has("--spec-ngram-simple-adapt-min")
    tree, _ = resolve_source(EngineSource.parse("pypi-sdist"))
    assert "adapt_min" not in (tree / "common" / "common.h").read_text()  # patched in a copy only
    assert [p.stem for p in applicable_patches(tree)] == ["amx-tile-config", "ngram-simple-adaptive"]


def test_a_patch_that_does_not_apply_is_left_out(tmp_path):
    """A source that has moved on (here: no such file at all) builds without our patch instead of failing."""
    from inference.engines.engine_patches import applicable_patches

    (tmp_path / "common").mkdir()
    (tmp_path / "common" / "common.h").write_text("// another llama.cpp\n")
    assert applicable_patches(tmp_path) == []


# BeeLlama v0.2.0's CPU scale op, as its tree has it (donQx/beellama.cpp at 285933ed, ggml/src/ggml-cpu/ops.cpp,
# lines 4429-4452): F32 only, while its Gemma 4 graph scales the embeddings in BF16
BEELLAMA_SCALE_OP = """\
                s, b);
        }
    }
}

void ggml_compute_forward_scale(
        const ggml_compute_params * params,
        ggml_tensor * dst) {

    const ggml_tensor * src0 = dst->src[0];

    switch (src0->type) {
        case GGML_TYPE_F32:
            {
                ggml_compute_forward_scale_f32(params, dst);
            } break;
        default:
            {
                GGML_ABORT("fatal error");
            }
    }
}

// ggml_compute_forward_set
"""


def test_the_bf16_scale_fix_applies_to_a_tree_without_it_and_only_there(tmp_path):
    """Without it BeeLlama v0.2.0 aborts in its warm-up on any Gemma 4 file on a CPU. A tree that has the BF16
    case (upstream's, or this one once patched) does not take it again (the sdist's: see the test above)."""
    from inference.engines.engine_patches import applicable_patches, patched_copy

    (tmp_path / "bee" / "ggml" / "src" / "ggml-cpu").mkdir(parents=True)
    (tmp_path / "bee" / "ggml" / "src" / "ggml-cpu" / "ops.cpp").write_text(BEELLAMA_SCALE_OP)
    patches = applicable_patches(tmp_path / "bee")
    assert [p.stem for p in patches] == ["cpu-scale-bf16"]
    fixed = patched_copy(tmp_path / "bee", patches, tmp_path / "fixed")
    assert (
        "ggml_compute_forward_scale_bf16(params, dst)" in (fixed / "ggml" / "src" / "ggml-cpu" / "ops.cpp").read_text()
    )
    assert applicable_patches(fixed) == []


def test_a_second_build_is_served_from_the_cache(engine):
    started = time.monotonic()
    again = build_engine(EngineSource.parse("pypi-sdist"), engine.options, show_progress=False)
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
    for flag in [
        "-DGGML_CUDA=ON",
        "-DGGML_NATIVE=ON",
        "-DGGML_CUDA_FA=ON",
        "-DGGML_CUDA_FA_ALL_QUANTS=ON",
        "-DCMAKE_CUDA_ARCHITECTURES=89",
        "-DCMAKE_BUILD_TYPE=Release",
    ]:
        assert flag in cuda
    assert "-DGGML_METAL=ON" in BuildOptions(backend="metal").cmake_args()
    assert not any("CUDA" in a for a in BuildOptions().cmake_args())


def test_cuda_without_nvcc_is_a_clear_error(monkeypatch, tmp_path):
    from inference import hardware as hardware_module

    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.delenv("CUDA_HOME", raising=False)
    monkeypatch.setattr(hardware_module, "CUDA_GLOBS", ())  # this machine has a real toolkit in /usr/local/cuda
    with pytest.raises(EngineBuildError, match="nvcc is not on PATH"):
        detect_build_options("cuda")


@pytest.mark.slow  # runs cmake and the C++ compiler
def test_compile_failure_shows_the_log_tail(tmp_path, monkeypatch):
    monkeypatch.setenv("DFLASH_AGENT_CACHE", str(tmp_path / "cache"))
    tree = tmp_path / "broken"
    tree.mkdir()
    (tree / "CMakeLists.txt").write_text(
        "cmake_minimum_required(VERSION 3.14)\nproject(broken CXX)\nadd_executable(llama-server main.cpp)\n"
    )
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


FAKE_SERVER = r"""
#include <cstdio>
#include <cstring>
int main(int argc, char **argv) {
    if (argc > 1 && std::strcmp(argv[1], "--version") == 0) { std::fprintf(stderr, "version: 7 (abc1234)\n"); return 0; }
    std::printf("-m,    --model FNAME   model path\n--spec-type [none|ngram-mod|dflash]\n"
                "--spec-dflash-cross-ctx N  cross ctx\n--host HOST\n--port PORT\n");
    return 0;
}
"""


@pytest.mark.slow  # runs cmake and the C++ compiler
def test_git_source_at_a_ref_is_cloned_built_and_cached_by_commit(tmp_path, monkeypatch):
    """Any git URL + ref goes through clone, checkout and the same build path (a tiny stand-in project)."""
    import git

    monkeypatch.setenv("DFLASH_AGENT_CACHE", str(tmp_path / "cache"))
    origin = tmp_path / "origin"
    origin.mkdir()
    (origin / "CMakeLists.txt").write_text(
        "cmake_minimum_required(VERSION 3.14)\nproject(fake CXX)\nadd_executable(llama-server main.cpp)\n"
    )
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

    from inference.engines import engine as engine_module

    monkeypatch.setenv("DFLASH_AGENT_CACHE", str(tmp_path / "cache"))
    tree = tmp_path / "src"
    tree.mkdir()
    (tree / "CMakeLists.txt").write_text("project(x)\n")
    running, overlaps, builds = [0], [], []

    def slow_build(source, options, tree, commit, patches, key, jobs, show_progress):
        running[0] += 1
        overlaps.append(running[0])
        time.sleep(0.5)
        engine = Engine(
            key=key,
            source=source.describe(),
            commit=commit,
            options=options,
            binary=tree / "llama-server",
            version="test",
            capabilities=Capabilities(),
            build_seconds=0.5,
        )
        (engine_module.engines_dir() / key).mkdir(parents=True)
        (engine_module.engines_dir() / key / "engine.json").write_text(engine.model_dump_json())
        builds.append(key)
        running[0] -= 1
        return engine

    monkeypatch.setattr(engine_module, "_build", slow_build)
    source, options = EngineSource.parse(str(tree)), BuildOptions(backend="cpu")
    results: list[Engine] = []
    threads = [
        threading.Thread(target=lambda: results.append(build_engine(source, options, show_progress=False)))
        for _ in range(2)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(builds) == 1 and overlaps == [1]
    assert [r.key for r in results] == [builds[0]] * 2


NVCC_VERSION = """nvcc: NVIDIA (R) Cuda compiler driver
Copyright (c) 2005-2024 NVIDIA Corporation
Built on Thu_Mar_28_02:18:24_PDT_2024
Cuda compilation tools, release {release}, V{release}.131
Build cuda_{release}.r{release}/compiler.34097967_0
"""


def fake_toolkit(folder, release: str = "12.4"):
    """A CUDA toolkit folder as NVIDIA installs it: bin/nvcc, here a script printing a real `nvcc --version`."""
    nvcc = folder / "bin" / "nvcc"
    nvcc.parent.mkdir(parents=True)
    text = NVCC_VERSION.format(release=release)
    nvcc.write_text(f"#!/bin/sh\nprintf '%s' '{text}'\n")  # a shell builtin: works with an empty PATH
    nvcc.chmod(0o755)
    return nvcc


def fake_nvidia_smi(folder, name: str = "NVIDIA GeForce RTX 4090", cap: str = "8.9"):
    """nvidia-smi answering the query `Hardware.detect` and `detect_build_options` make: one 24 GB card."""
    folder.mkdir(parents=True, exist_ok=True)
    smi = folder / "nvidia-smi"
    smi.write_text(f"#!/bin/sh\necho '{name}, 24564, 23800, {cap}'\n")
    smi.chmod(0o755)


def test_nvcc_is_found_in_a_toolkit_folder_off_path(tmp_path, monkeypatch):
    from inference import hardware as hardware_module
    from inference.hardware import find_nvcc, nvcc_version

    nvcc = fake_toolkit(tmp_path / "cuda-12.4")
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    monkeypatch.delenv("CUDA_HOME", raising=False)
    monkeypatch.delenv("CUDA_PATH", raising=False)
    monkeypatch.setattr(hardware_module, "CUDA_GLOBS", (str(tmp_path / "cuda-*" / "bin"),))
    assert find_nvcc() == nvcc and nvcc_version(nvcc) == (12, 4)
    monkeypatch.setattr(hardware_module, "CUDA_GLOBS", ())
    assert find_nvcc() is None
    monkeypatch.setenv("CUDA_HOME", str(tmp_path / "cuda-12.4"))
    assert find_nvcc() == nvcc


def test_a_real_toolkit_off_path_is_found(monkeypatch, tmp_path):
    """NVIDIA's installer puts nvcc in /usr/local/cuda/bin, off PATH (as on this project's machine)."""
    from pathlib import Path

    from inference.hardware import find_nvcc, nvcc_version

    if not Path("/usr/local/cuda/bin/nvcc").exists():
        pytest.skip("no CUDA toolkit installed in /usr/local/cuda on this machine")
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.delenv("CUDA_HOME", raising=False)
    found = find_nvcc()
    assert found is not None and found.parent.parent.name.startswith("cuda") and nvcc_version(found) >= (11, 0)


def test_a_gpu_without_toolkit_stops_instead_of_building_for_cpu(tmp_path, monkeypatch):
    from inference import hardware as hardware_module

    fake_nvidia_smi(tmp_path / "bin")
    monkeypatch.setenv("PATH", str(tmp_path / "bin"))
    monkeypatch.delenv("CUDA_HOME", raising=False)
    monkeypatch.delenv("CUDA_PATH", raising=False)
    monkeypatch.setattr(hardware_module, "CUDA_GLOBS", (str(tmp_path / "cuda*" / "bin"),))
    with pytest.raises(EngineBuildError, match=r"RTX 4090.*no CUDA toolkit.*/usr/local/cuda/bin.*--backend cpu"):
        detect_build_options()
    assert detect_build_options("cpu").backend == "cpu"  # on purpose
    nvcc = fake_toolkit(tmp_path / "cuda")
    options = detect_build_options()
    assert (options.backend, options.cuda_arch, options.nvcc) == ("cuda", "89", str(nvcc))
    assert f"-DCMAKE_CUDA_COMPILER={nvcc}" in options.cmake_args()


def test_a_toolkit_too_old_for_the_gpu_is_refused(tmp_path, monkeypatch):
    fake_nvidia_smi(tmp_path / "bin")
    fake_toolkit(tmp_path / "cuda", release="11.7")
    monkeypatch.setenv("PATH", f"{tmp_path / 'cuda' / 'bin'}:{tmp_path / 'bin'}")
    with pytest.raises(EngineBuildError, match=r"CUDA 11.7 .* cannot target sm_89: it needs CUDA >= 11.8"):
        detect_build_options()
    assert detect_build_options("cuda", cuda_arch="86").cuda_arch == "86"  # 11.7 can build for a 3090
    fake_toolkit(tmp_path / "cuda13", release="13.0")
    monkeypatch.setenv("PATH", f"{tmp_path / 'cuda13' / 'bin'}:{tmp_path / 'bin'}")
    with pytest.raises(EngineBuildError, match=r"CUDA 13.0 .* dropped sm_61"):
        detect_build_options("cuda", cuda_arch="61")  # a GTX 1080: CUDA 13 no longer targets it


def test_default_jobs_follow_free_ram_as_well_as_cores():
    from inference.engines.engine import default_jobs

    assert default_jobs("cuda", cores=32, ram_available=16 * 1024**3) == 4
    assert default_jobs("cpu", cores=2, ram_available=64 * 1024**3) == 2
    assert default_jobs("cuda", cores=8, ram_available=1024**3) == 1


SEED_DFLASH = (
    "-m gemma-4-31B-it-Q4_K_S.gguf --spec-draft-model gemma4-31b-it-dflash-Q5_K_M.gguf --spec-type dflash "
    "--spec-dflash-cross-ctx 1024 --host 0.0.0.0 --port 8910 -np 1 --kv-unified -ngl all --spec-draft-ngl all "
    "-b 2048 -ub 512 --ctx-size 32768 --flash-attn on --cache-ram 0 --ctx-checkpoints 8 --jinja --no-mmap --mlock "
    "--no-host --metrics --log-timestamps --log-prefix --reasoning off --temp 0.7 --top-k 64 --top-p 0.95 --min-p 0.0"
)


def test_the_real_beellama_v020_help_renders_the_seed_command_token_for_token():
    """SEED-NOTES.md section 4, from the real `--help` of a v0.2.0 build (the default pin), with the profile's
    limit on host-RAM checkpoints (`--ctx-checkpoints 8`, inference/profiles.py says why)."""
    from pathlib import Path

    from inference.engines.capabilities import default_capabilities
    from inference.profiles import BUILTIN_PROFILES
    from inference.render import render

    caps = default_capabilities()
    assert caps.dflash_dialect == "beellama" and BEELLAMA_TAG == "v0.2.0"
    assert {"dflash", "ngram-mod", "copyspec"} <= set(caps.spec_types) and "draft-simple" not in caps.spec_types
    assert {"q5_0", "q4_1", "turbo3"} <= set(caps.cache_types)
    paths = {
        "gemma4-31b": Path("gemma-4-31B-it-Q4_K_S.gguf"),
        "gemma4-31b-dflash": Path("gemma4-31b-it-dflash-Q5_K_M.gguf"),
    }
    assert render(BUILTIN_PROFILES["gemma4-31b-dflash"], caps, paths, "0.0.0.0", 8910) == SEED_DFLASH.split()
    safe = render(BUILTIN_PROFILES["gemma4-31b-dflash-safe"], caps, paths, "0.0.0.0", 8910)
    assert safe[-5:] == ["--spec-draft-n-max", "16", "-cd", "1024", "--no-spec-dm-adaptive"]  # the #27 workaround
