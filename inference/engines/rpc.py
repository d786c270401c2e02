"""llama.cpp RPC workers: `rpc-server` processes that lend their devices to one llama-server (`--rpc`), so a model
too big for one machine is spread over several. On a real cluster each worker runs on its own machine (started
by hand, listed in a profile's `rpc_workers`); `agent serve` starts local ones (`rpc_local_workers`) to try the
path on one machine. The RPC protocol has no authentication: workers bind 127.0.0.1 unless told otherwise, and a
worker reachable from a network must sit behind one the user trusts (llama.cpp's own warning)."""

from __future__ import annotations

import subprocess
import time
from pathlib import Path

from inference.errors import DflashError
from inference.net import free_port, listening
from inference.paths import state_dir


class RpcWorkerError(DflashError, RuntimeError):
    """A worker failed to start; the message names the cause and its log."""


class LocalRpcWorkers:
    """`count` rpc-server processes on 127.0.0.1, each on a free port; `endpoints` is what `--rpc` takes."""

    def __init__(self, binary: Path, count: int, *, threads: int | None = None, log_dir: Path | None = None):
        self.binary, self.count, self.threads = binary, count, threads
        self.log_dir = log_dir or state_dir() / "logs"
        self.processes: list[subprocess.Popen] = []
        self.endpoints: list[str] = []

    def start(self, timeout: float = 60.0) -> list[str]:
        self.log_dir.mkdir(parents=True, exist_ok=True)
        try:
            for _ in range(self.count):
                self._start_one(timeout)
        except BaseException:
            self.stop()
            raise
        return self.endpoints

    def _start_one(self, timeout: float) -> None:
        port = free_port()
        argv = [str(self.binary), "--host", "127.0.0.1", "--port", str(port)]
        argv += ["--threads", str(self.threads)] if self.threads else []
        log_path = self.log_dir / f"rpc-server-{port}.log"
        with log_path.open("w") as log:
            log.write("$ " + " ".join(argv) + "\n")
            log.flush()
            process = subprocess.Popen(
                argv, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, start_new_session=True
            )
        self.processes.append(process)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if process.poll() is not None:
                tail = log_path.read_text(errors="replace")[-1500:]
                raise RpcWorkerError(f"rpc-server exited with code {process.returncode}; log: {log_path}\n{tail}")
            if listening(port):
                self.endpoints.append(f"127.0.0.1:{port}")
                return
            time.sleep(0.1)
        raise RpcWorkerError(f"rpc-server did not listen on port {port} within {timeout:.0f}s; log: {log_path}")

    def stop(self, grace: float = 5.0) -> None:
        for process in self.processes:
            if process.poll() is None:
                process.terminate()
        for process in self.processes:
            try:
                process.wait(grace)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        self.processes, self.endpoints = [], []

    def __enter__(self) -> LocalRpcWorkers:
        self.start()
        return self

    def __exit__(self, *exc) -> None:
        self.stop()
