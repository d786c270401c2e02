"""`agent engine add`: a llama-server someone already built, or a container image that runs one, registered
beside our builds so profiles choose it the same way (a 20-minute build is not the only way in)."""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
from pathlib import Path

from inference.engines.engine import BuildOptions, Engine, EngineBuildError, engines_dir, probe


def add_engine(spec: str, backend: str | None = None) -> Engine:
    """Register a llama-server someone already built (a path) or a container image that runs one (BeeLlama
    publishes `ghcr.io/anbeeld/beellama.cpp:server-cuda-*`): its `--help` read like a build's, recorded with
    the builds, so profiles choose it the same way. The binary stays where it is; an image runs through a small
    launcher script (`docker run`, host network, the model cache mounted read-only)."""
    path = Path(spec).expanduser()
    if path.is_dir():
        path = path / "llama-server"
    if path.is_file():
        if not os.access(path, os.X_OK):
            raise EngineBuildError(f"{path} is not executable; point at the llama-server binary itself")
        binary, source = path.resolve(), f"local:{path.resolve()}"
        identity = hashlib.sha256(binary.read_bytes()).hexdigest()
    elif re.fullmatch(r"[\w.-]+(:\d+)?(/[\w.-]+)+(:[\w.-]+|@sha256:[0-9a-f]{64})", spec):
        binary, source, identity = _image_launcher(spec, backend), f"image:{spec}", spec
    else:
        raise EngineBuildError(
            f"{spec} is neither a llama-server binary (a file, or a folder holding one) nor a container image "
            "(REGISTRY/NAME:TAG, e.g. ghcr.io/anbeeld/beellama.cpp:server-cuda-v0.4.4)"
        )
    try:
        version, capabilities = probe(binary)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise EngineBuildError(f"{spec}: `--help` could not be run ({exc}); is it a llama-server?") from None
    if "--spec-draft-model" not in capabilities.flags and "-md" not in capabilities.flags:
        raise EngineBuildError(f"{spec}: its --help lists no --spec-draft-model/-md; not a llama-server")
    key = "added-" + hashlib.sha256(identity.encode()).hexdigest()[:10]
    engine = Engine(
        key=key,
        source=source,
        commit=identity[:40],
        options=BuildOptions.model_validate({"backend": backend or _backend_of(spec, binary)}),
        binary=binary,
        version=version,
        capabilities=capabilities,
        build_seconds=0,
    )
    folder = engines_dir() / key
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "engine.json").write_text(engine.model_dump_json(indent=2))
    return engine


def _backend_of(spec: str, binary: Path) -> str:
    """cuda for a CUDA image; cuda or metal when llama-server lists such a device (`--list-devices`); else cpu."""
    if binary.name == "llama-server" and spec.startswith(("ghcr.io/", "docker.io/")) and "cuda" in spec:
        return "cuda"
    try:
        out = subprocess.run([str(binary), "--list-devices"], capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired):
        return "cpu"
    text = out.stdout + out.stderr
    return "cuda" if re.search(r"\bCUDA\d", text) else "metal" if "Metal" in text or "MTL0" in text else "cpu"


def _image_launcher(image: str, backend: str | None) -> Path:
    """A script that runs llama-server from `image` with this machine's view: host network (so --host/--port
    mean what they say), GPUs for a cuda image, the model cache mounted read-only at the same path."""
    if not shutil.which("docker"):
        raise EngineBuildError(f"registering {image} needs docker on PATH (https://docs.docker.com/engine/install/)")
    from inference.paths import cache_dir as _cache

    key = "added-" + hashlib.sha256(image.encode()).hexdigest()[:10]
    script = engines_dir() / key / "bin" / "llama-server"
    script.parent.mkdir(parents=True, exist_ok=True)
    gpus = "" if backend == "cpu" else "--gpus all "
    models = _cache() / "models"
    script.write_text(
        "#!/bin/sh\n# llama-server from a container image, registered by `agent engine add`\n"
        f'exec docker run --rm --init --network host {gpus}-v "{models}:{models}:ro" {image} "$@"\n'
    )
    script.chmod(0o755)
    return script
