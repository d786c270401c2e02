"""Build llama-server (BeeLlama.cpp by default) from source, cached by (source commit, build options).

Sources: a git URL at a ref (BeeLlama.cpp pinned, upstream llama.cpp, any other), a local source tree, or the
upstream tree vendored in the llama-cpp-python sdist on PyPI (works where GitHub is unreachable). Every kind
ends as a local tree that goes through the same configure-and-build path.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import platform
import re
import shutil
import subprocess
import sys
import tarfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Literal

from pydantic import BaseModel
from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

from inference.engines.capabilities import SDIST_VERSION_PIN, Capabilities, parse_help
from inference.engines.cuda_libs import ensure_cublas, find_cuda_libs
from inference.engines.engine_patches import applicable_patches, digest, patched_copy
from inference.errors import DflashError
from inference.hardware import find_nvcc, nvcc_version, nvidia_gpus
from inference.paths import cache_dir

BEELLAMA_URL = "https://github.com/Anbeeld/beellama.cpp"
# The pin and why (docs/beellama-versions.md): v0.2.0 is the first release with Gemma 4 DFlash, the one the seed's
# commands and the drafter's model card were run on, and the one whose real `--help` ships here (dialects/), so a
# plan can render its exact argv before anything is built. v0.3.x does not fix its 4090 failure (BeeLlama #47, #91);
# v0.4.x does (#98) with upstream `draft-dflash`, another dialect and a converted drafter.
BEELLAMA_TAG = "v0.2.0"
# BeeLlama tags known to work, and for what (docs/beellama-versions.md has each one's issue links)
BEELLAMA_KNOWN_GOOD = {
    "v0.2.0": "fork DFlash (`--spec-type dflash`); the seed's numbers; #27 on some 4090 setups",
    "v0.4.4": "upstream `draft-dflash` (converted drafter), MTP; fixes the 4090 `/////` of #91 (#98); less context on 24 GB (#98)",
}


# the oldest CUDA that can target each compute capability (NVIDIA's release notes)
MIN_CUDA_FOR_ARCH = {
    "100": (12, 8),
    "101": (12, 8),
    "120": (12, 8),
    "90": (11, 8),
    "89": (11, 8),
    "87": (11, 4),
    "86": (11, 1),
    "80": (11, 0),
    "75": (10, 0),
    "70": (9, 0),
}
LAST_CUDA_BEFORE_13 = (12, 9)  # CUDA 13 dropped the architectures before Turing (sm_75)
RAM_PER_JOB = {"cuda": 4 * 1024**3, "cpu": 1 * 1024**3, "metal": 1 * 1024**3}  # nvcc with FA_ALL_QUANTS: ~3-4 GB/job
UPSTREAM_URL = "https://github.com/ggml-org/llama.cpp"
SDIST_VERSION = SDIST_VERSION_PIN
RPC_SERVER_NAMES = ("ggml-rpc-server", "rpc-server")
SKIPPED_DIRS = {".git", "build", "models", "__pycache__", "node_modules"}


class EngineBuildError(DflashError, RuntimeError):
    """The engine could not be built; the message names the cause and the fix (and the log)."""


class EngineSource(BaseModel):
    kind: Literal["git", "local", "pypi-sdist"]
    location: str  # URL, folder, or llama-cpp-python version
    ref: str | None = None

    @classmethod
    def parse(cls, spec: str, ref: str | None = None) -> EngineSource:
        """`beellama`, `upstream`, `pypi-sdist[==VERSION]`, a git URL, or a local folder."""
        if spec == "beellama":
            return cls(kind="git", location=BEELLAMA_URL, ref=ref or BEELLAMA_TAG)
        if spec == "upstream":
            return cls(kind="git", location=UPSTREAM_URL, ref=ref or "master")
        if spec.startswith("pypi-sdist"):
            return cls(kind="pypi-sdist", location=spec.partition("==")[2] or SDIST_VERSION)
        if re.match(r"^(https?|git|ssh|file)://|^git@", spec):
            return cls(kind="git", location=spec, ref=ref)
        path = Path(spec).expanduser().resolve()
        if not (path / "CMakeLists.txt").is_file():
            raise EngineBuildError(f"{spec} is not a llama.cpp source tree (no CMakeLists.txt there)")
        return cls(kind="local", location=str(path))

    def describe(self) -> str:
        return f"{self.kind}:{self.location}" + (f"@{self.ref}" if self.ref else "")


class BuildOptions(BaseModel):
    backend: Literal["cpu", "cuda", "metal"] = "cpu"
    cuda_arch: str | None = None  # e.g. "89" (RTX 4090), "86" (3090), "90" (H100/H200)
    nvcc: str | None = None  # the CUDA compiler found (on PATH or in /usr/local/cuda*/bin)
    cublas: str | None = None  # cuBLAS unpacked from PyPI, where the toolkit has none (cuda_libs.py)
    vmm: bool = True  # False where no libcuda can be linked (no driver or stubs): ggml's VMM pool off
    rpc: bool = False  # also the RPC backend and `rpc-server`, to spread one model over machines (`--rpc`)

    def describe(self) -> str:
        """`cpu`, `cuda sm_89`, `cuda sm_89 no-VMM+rpc`: what `doctor` and `engine list` show."""
        arch = f" sm_{self.cuda_arch}" if self.backend == "cuda" and self.cuda_arch else ""
        return self.backend + arch + ("" if self.vmm else " no-VMM") + ("+rpc" if self.rpc else "")

    @property
    def device(self) -> Literal["gpu", "cpu"]:
        return "cpu" if self.backend == "cpu" else "gpu"

    def cmake_args(self) -> list[str]:
        # static: one self-contained binary that still runs after the build folder is gone
        args = [
            "-DCMAKE_BUILD_TYPE=Release",
            "-DBUILD_SHARED_LIBS=OFF",
            "-DLLAMA_BUILD_TESTS=OFF",
            "-DLLAMA_BUILD_EXAMPLES=OFF",
            "-DLLAMA_BUILD_WEBUI=OFF",
            "-DGGML_NATIVE=ON",
        ]
        if self.backend == "cuda":
            args += ["-DGGML_CUDA=ON", "-DGGML_CUDA_FA=ON", "-DGGML_CUDA_FA_ALL_QUANTS=ON"]
            if self.cuda_arch:
                args.append(f"-DCMAKE_CUDA_ARCHITECTURES={self.cuda_arch}")
            if self.nvcc:
                args.append(f"-DCMAKE_CUDA_COMPILER={self.nvcc}")
            if self.cublas:  # FindCUDAToolkit takes preset library paths; its headers come by the compiler flags
                lib = Path(self.cublas, "lib")
                args += [
                    f"-DCUDA_cublas_LIBRARY={lib / 'libcublas.so'}",
                    f"-DCUDA_cublasLt_LIBRARY={lib / 'libcublasLt.so'}",
                    f"-DCMAKE_CUDA_FLAGS=-isystem {Path(self.cublas, 'include')}",
                ]
            if not self.vmm:
                args.append("-DGGML_CUDA_NO_VMM=ON")
        elif self.backend == "metal":
            args.append("-DGGML_METAL=ON")
        if self.rpc:
            args.append("-DGGML_RPC=ON")
        return args


class Engine(BaseModel):
    key: str
    source: str
    commit: str
    options: BuildOptions
    binary: Path
    version: str
    capabilities: Capabilities
    build_seconds: float
    patches: list[str] = []  # our engine patches (inference/patches) built into it

    @property
    def rpc_server(self) -> Path | None:
        """The RPC worker built beside llama-server (`agent engine build --rpc`), if any."""
        return next((w for w in map(self.binary.parent.joinpath, RPC_SERVER_NAMES) if w.is_file()), None)


def probe(binary: Path) -> tuple[str, Capabilities]:
    help_run = subprocess.run([str(binary), "--help"], capture_output=True, text=True, timeout=60)
    if help_run.returncode != 0:
        raise EngineBuildError(f"{binary} --help failed ({help_run.returncode}): {help_run.stderr[-500:]}")
    version_run = subprocess.run([str(binary), "--version"], capture_output=True, text=True, timeout=60)
    return version_line(version_run.stderr + version_run.stdout), parse_help(help_run.stdout + help_run.stderr)


def version_line(text: str) -> str:
    """`version: 0.5.0-dev (...)`, not a line before it that also says "version" (a CUDA build on a machine without
    a driver prints `ggml_cuda_init: failed ... driver version is insufficient` first)."""
    lines = [ln.strip() for ln in text.splitlines()]
    return next(
        (ln for ln in lines if ln.startswith("version:")), next((ln for ln in lines if "version" in ln), "unknown")
    )


def detect_build_options(backend: str | None = None, cuda_arch: str | None = None) -> BuildOptions:
    """CUDA when an NVIDIA GPU is present (arch from nvidia-smi), Metal on Apple silicon, else CPU. A GPU with no
    CUDA toolkit, or a toolkit too old for the GPU, stops the build with the fix: never a silent CPU build."""
    gpus = nvidia_gpus() if backend in (None, "cuda") else []
    if backend is None:
        if gpus:
            backend = "cuda"
        elif sys.platform == "darwin" and platform.machine() == "arm64":
            backend = "metal"
        else:
            backend = "cpu"
    if backend != "cuda":
        return BuildOptions(backend=backend)
    nvcc = find_nvcc()
    gpu = f"an NVIDIA GPU ({gpus[0].name}) is present but " if gpus else ""
    if nvcc is None:
        raise EngineBuildError(
            f"{gpu}no CUDA toolkit was found (nvcc is not on PATH, $CUDA_HOME or /usr/local/cuda*/bin); install it "
            "(https://developer.nvidia.com/cuda-downloads, or `apt-get install nvidia-cuda-toolkit`), or add its bin "
            "folder to PATH (`export PATH=/usr/local/cuda/bin:$PATH`); `--backend cpu` builds for the CPU on purpose"
        )
    cuda_arch = cuda_arch or (gpus[0].compute_cap.replace(".", "") if gpus else None)
    if cuda_arch is None:  # CMake's default would compile every kernel for a dozen architectures: hours more
        raise EngineBuildError(
            "no NVIDIA GPU here to read the CUDA architecture from: name the target GPU's with --cuda-arch "
            "(89: RTX 40xx, 86: RTX 30xx, 90: H100/H200, 120: RTX 50xx)"
        )
    release = nvcc_version(nvcc)
    check_toolkit(nvcc, release, cuda_arch)
    libs = find_cuda_libs(nvcc, release)
    return BuildOptions(backend="cuda", cuda_arch=cuda_arch, nvcc=str(nvcc), cublas=libs.cublas, vmm=libs.vmm)


def check_toolkit(nvcc: Path, version: tuple[int, int] | None, cuda_arch: str | None) -> None:
    """Refuse a toolkit too old to target the GPU (e.g. sm_89, RTX 40xx, needs CUDA 11.8)."""
    needed = MIN_CUDA_FOR_ARCH.get(cuda_arch or "")
    if version and needed and version < needed:
        raise EngineBuildError(
            f"CUDA {version[0]}.{version[1]} ({nvcc}) cannot target sm_{cuda_arch}: it needs CUDA >= "
            f"{needed[0]}.{needed[1]}; install a newer toolkit and put its bin folder first on PATH"
        )
    if version and cuda_arch and cuda_arch.isdigit() and int(cuda_arch) < 75 and version > LAST_CUDA_BEFORE_13:
        raise EngineBuildError(
            f"CUDA {version[0]}.{version[1]} ({nvcc}) dropped sm_{cuda_arch}: install CUDA 12.x for this GPU and put "
            "its bin folder first on PATH (or set CUDA_HOME)"
        )


def default_jobs(backend: str, cores: int | None = None, ram_available: int | None = None) -> int:
    """All cores, but no more jobs than free RAM allows: CUDA with GGML_CUDA_FA_ALL_QUANTS needs gigabytes per job
    (BeeLlama issue #80: cc1plus killed out of memory with `-j`)."""
    import psutil

    cores = cores or os.cpu_count() or 2
    ram = ram_available if ram_available is not None else psutil.virtual_memory().available
    return max(1, min(cores, ram // RAM_PER_JOB[backend]))


# ---------------------------------------------------------------- sources


def engines_dir() -> Path:
    return cache_dir() / "engines"


def resolve_source(source: EngineSource) -> tuple[Path, str]:
    """A local source tree for `source`, and the identity of its contents (commit or content hash)."""
    if source.kind == "local":
        tree = Path(source.location)
        return tree, _tree_identity(tree)
    if source.kind == "pypi-sdist":
        tree = sdist_tree(source.location)
        return tree, _tree_identity(tree)
    return _git_checkout(source)


def _git_checkout(source: EngineSource) -> tuple[Path, str]:
    import git

    folder = engines_dir() / "src" / hashlib.sha256(source.location.encode()).hexdigest()[:12]
    try:
        if (folder / ".git").is_dir():
            repo = git.Repo(folder)
            repo.remotes.origin.fetch(tags=True)
        else:
            repo = git.Repo.clone_from(source.location, folder)
        if source.ref:  # a branch means its newest fetched commit; a tag or commit means itself
            remote_branches = {r.remote_head for r in repo.remotes.origin.refs}
            repo.git.checkout(f"origin/{source.ref}" if source.ref in remote_branches else source.ref, force=True)
    except git.GitCommandError as exc:
        raise EngineBuildError(
            f"could not get {source.describe()}: {exc.stderr.strip() or exc}; check the URL, the ref and the "
            "network, or build from a local tree (`agent engine build --source PATH`)"
        ) from exc
    return folder, repo.head.commit.hexsha


def _tree_identity(tree: Path) -> str:
    """The git commit (plus a hash of uncommitted changes), or a hash of every source file."""
    if (tree / ".git").exists():
        import git

        repo = git.Repo(tree)
        dirty = repo.git.diff("HEAD")
        return repo.head.commit.hexsha + (f"-dirty-{hashlib.sha256(dirty.encode()).hexdigest()[:8]}" if dirty else "")
    digest = hashlib.sha256()
    for root, dirs, files in os.walk(tree):
        dirs[:] = sorted(d for d in dirs if d not in SKIPPED_DIRS)
        for name in sorted(files):
            path = Path(root, name)
            digest.update(str(path.relative_to(tree)).encode() + b"\0" + path.read_bytes())
    return "tree-" + digest.hexdigest()[:16]


def sdist_tree(version: str) -> Path:
    """Upstream llama.cpp as vendored in the llama-cpp-python sdist (fetched with pip, from PyPI)."""
    folder = engines_dir() / "src" / f"llama-cpp-python-{version}"
    tree = folder / f"llama_cpp_python-{version}" / "vendor" / "llama.cpp"
    if (tree / "CMakeLists.txt").is_file():
        return tree
    folder.mkdir(parents=True, exist_ok=True)
    # `--no-binary llama-cpp-python`, not `:all:`: that would make pip build the sdist's build requirements from
    # source too (over 20 minutes on a fresh 2-core machine, against 13 s this way).
    run = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "download",
            "--quiet",
            "--no-deps",
            "--no-binary",
            "llama-cpp-python",
            f"llama-cpp-python=={version}",
            "-d",
            str(folder),
        ],
        capture_output=True,
        text=True,
    )
    archives = list(folder.glob("llama_cpp_python-*.tar.gz"))
    if run.returncode != 0 or not archives:
        raise EngineBuildError(f"pip could not download the llama-cpp-python {version} sdist: {run.stderr[-800:]}")
    with tarfile.open(archives[0]) as archive:
        archive.extractall(folder, filter="data")
    archives[0].unlink()
    return tree


# ---------------------------------------------------------------- build


def build_engine(
    source: EngineSource,
    options: BuildOptions | None = None,
    *,
    jobs: int | None = None,
    force: bool = False,
    show_progress: bool = True,
) -> Engine:
    """Build llama-server for `source` with `options`, or return the cached build with the same key."""
    options = options or detect_build_options()
    tree, commit = resolve_source(source)
    patches = applicable_patches(tree)
    identity = "|".join([commit, " ".join(options.cmake_args()), *(f"{p.name}:{digest(p)}" for p in patches)])
    key = hashlib.sha256(identity.encode()).hexdigest()[:16]
    out = engines_dir() / key
    manifest = out / "engine.json"
    if manifest.is_file() and not force:
        return Engine.model_validate_json(manifest.read_text())
    with _build_lock(key):  # two builders of one key share the source copy and build folder: one waits
        if manifest.is_file() and not force:
            return Engine.model_validate_json(manifest.read_text())
        return _build(source, options, tree, commit, patches, key, jobs, show_progress)


@contextmanager
def _build_lock(key: str) -> Iterator[None]:
    engines_dir().mkdir(parents=True, exist_ok=True)
    with (engines_dir() / f".build-{key}.lock").open("w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        yield


def _build(
    source: EngineSource,
    options: BuildOptions,
    tree: Path,
    commit: str,
    patches: list[Path],
    key: str,
    jobs: int | None,
    show_progress: bool,
) -> Engine:
    out = engines_dir() / key
    manifest = out / "engine.json"
    _require_toolchain(options)
    if options.cublas:
        ensure_cublas(Path(options.cublas))
    build_dir = engines_dir() / f"build-{key}"
    build_dir.mkdir(parents=True, exist_ok=True)
    log = build_dir / "build.log"
    started = time.monotonic()
    tree = patched_copy(tree, patches, engines_dir() / f"src-{key}") if patches else tree
    with log.open("w") as log_file, _progress(show_progress) as progress:
        task = progress.add_task(f"configure {source.describe()} ({options.backend})", total=None)
        _run(["cmake", "-S", str(tree), "-B", str(build_dir), *options.cmake_args()], log_file, log, "configure")
        targets = ["llama-server"] + ([rpc_target(tree)] if options.rpc else [])
        progress.update(task, description=f"build {' and '.join(targets)} ({options.backend})")
        jobs = jobs or default_jobs(options.backend)
        command = ["cmake", "--build", str(build_dir), "--target", *targets, "-j", str(jobs)]
        _run(command, log_file, log, "compile", lambda done, total: progress.update(task, completed=done, total=total))
    binary_dir = next(
        (p.parent for p in build_dir.rglob("llama-server") if p.is_file() and os.access(p, os.X_OK)), None
    )
    if binary_dir is None:
        raise EngineBuildError(f"the build finished but produced no llama-server binary; see {log}")
    if out.exists():
        shutil.rmtree(out)
    shutil.copytree(binary_dir, out / "bin", symlinks=True)
    version, capabilities = probe(out / "bin" / "llama-server")
    engine = Engine(
        key=key,
        source=source.describe(),
        commit=commit,
        options=options,
        binary=out / "bin" / "llama-server",
        version=version,
        capabilities=capabilities,
        build_seconds=round(time.monotonic() - started, 1),
        patches=[p.stem for p in patches],
    )
    manifest.write_text(engine.model_dump_json(indent=2))
    shutil.rmtree(build_dir, ignore_errors=True)
    if patches:
        shutil.rmtree(tree, ignore_errors=True)
    return engine


def rpc_target(tree: Path) -> str:
    """The RPC worker's build target: `ggml-rpc-server` in newer llama.cpp trees, `rpc-server` in older ones
    (BeeLlama v0.2.0 among them); read from the tree rather than assumed."""
    for folder in ("tools/rpc", "examples/rpc"):
        lists = tree / folder / "CMakeLists.txt"
        if lists.is_file() and (found := re.search(r"set\(TARGET\s+([\w-]+)\)", lists.read_text())):
            return found.group(1)
    raise EngineBuildError(f"{tree} has no RPC server (tools/rpc or examples/rpc); build it without --rpc")


def list_engines() -> list[Engine]:
    return [Engine.model_validate_json(p.read_text()) for p in sorted(engines_dir().glob("*/engine.json"))]


def _require_toolchain(options: BuildOptions) -> None:
    missing = [tool for tool in ("cmake", "git") if not shutil.which(tool)]
    if not any(shutil.which(c) for c in ("c++", "g++", "clang++")):
        missing.append("a C++ compiler (g++ or clang++)")
    if options.backend == "cuda" and not (options.nvcc and os.access(options.nvcc, os.X_OK)) and not find_nvcc():
        missing.append("nvcc (the CUDA toolkit)")
    if missing:
        raise EngineBuildError(
            f"cannot build llama-server: missing {', '.join(missing)}; on Debian/Ubuntu: "
            "`apt-get install cmake build-essential git` (and the CUDA toolkit for GPU builds)"
        )


PROGRESS_LINE = re.compile(r"^\[\s*(\d+)/(\d+)\]|^\[\s*(\d+)%\]")


def _run(command: list[str], log_file, log: Path, stage: str, on_progress=None) -> None:
    log_file.write(f"$ {' '.join(command)}\n")
    log_file.flush()
    proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, errors="replace")
    assert proc.stdout is not None  # stdout=PIPE
    for line in proc.stdout:
        log_file.write(line)
        if on_progress and (m := PROGRESS_LINE.match(line)):
            done, total = (int(m.group(1)), int(m.group(2))) if m.group(1) else (int(m.group(3)), 100)
            on_progress(done, total)
    if proc.wait() != 0:
        log_file.flush()
        tail = "\n".join(log.read_text(errors="replace").splitlines()[-25:])
        raise EngineBuildError(f"{stage} failed (exit {proc.returncode}); full log: {log}\n{tail}")


def _progress(enabled: bool) -> Progress:
    return Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        TextColumn("{task.completed}/{task.total}"),
        TimeElapsedColumn(),
        disable=not enabled,
    )
