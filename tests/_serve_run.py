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
