"""``mkb serve``'s app on loopback for the service tests: one uvicorn server in a thread, started and stopped
the way every such test needs (one copy instead of one per test file)."""

from __future__ import annotations

import contextlib
import socket
import threading
import time
from collections.abc import Iterator
from typing import Any


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextlib.contextmanager
def served(app: Any, limits: Any = None, start_timeout_s: float = 30.0) -> Iterator[int]:
    """Serve ``app`` (serve/app.py's ``create_app``) through the service's own uvicorn configuration with
    ``limits`` (a ConnectionLimits; the defaults when None) and the app's gate; yields the port once the server has started and
    stops it on exit."""
    import uvicorn

    from multikernelbench.serve.limits import ConnectionLimits, uvicorn_config

    port = free_port()
    gate = getattr(getattr(app, "state", None), "gate", None)  # refusals before the app, as mkb serve makes them
    srv = uvicorn.Server(uvicorn_config(app, "127.0.0.1", port, limits or ConnectionLimits(), gate=gate))
    thread = threading.Thread(target=srv.run, daemon=True)
    thread.start()
    end = time.monotonic() + start_timeout_s
    while not srv.started and time.monotonic() < end:
        time.sleep(0.05)
    assert srv.started, f"the service did not start within {start_timeout_s:.0f} s"
    try:
        yield port
    finally:
        srv.should_exit = True
        thread.join(10)


def two_client_service(folder: Any, build_root: Any, tasks: dict, tokens: dict[str, str], **service: Any) -> Any:
    """An EvalService on ``tasks`` (CPU, no timing, no zygote: the service tests check the HTTP side) whose token
    file in ``folder`` names ``tokens`` (name -> token); ``service``: more ServiceConfig fields."""
    from multikernelbench.engine.config import EngineConfig
    from multikernelbench.serve.auth import TokenBook
    from multikernelbench.serve.jobs import EvalService, ServiceConfig

    (folder / "tokens").write_text("".join(f"{name} {token}\n" for name, token in tokens.items()))
    engine = EngineConfig(build_root=build_root, allow_code_execution=True, seed=5, skip_timing=True, zygote=False)
    return EvalService(ServiceConfig(engine=engine, db=folder / "service.sqlite", tokens=TokenBook(folder / "tokens"),
                                     **service), tasks)

