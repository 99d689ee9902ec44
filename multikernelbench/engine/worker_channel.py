"""A worker's end of its socket to the trusted parent, and how a failed request is classified.

Split from worker_main (the request loop and its handlers) so that each stays small; imported by the worker at
start-up, before any candidate code, and watched like worker_main for patches (worker_main's ``_arm``).
"""

from __future__ import annotations

import errno
from multiprocessing.connection import Connection
from typing import Any

from multikernelbench.engine import protocol
from multikernelbench.engine.messages import (
    DEVICE_ALLOCATION_FAILED,
    DeviceTurn,
    ErrorKind,
    FreshAsk,
    FreshGrant,
    Message,
)


class RequestFailed(Exception):
    """A request the worker itself declares failed, with its kind (not an exception of the candidate)."""

    def __init__(self, kind: ErrorKind, error: str) -> None:
        super().__init__(error)
        self.kind = kind


def classify(exc: BaseException) -> ErrorKind:
    """The error kind of an exception raised while serving a request, by type (never by message text),
    except for a device allocation failure, which older torch (and every CUDA library's) raises as a plain
    RuntimeError."""
    import torch

    from multikernelbench.engine.fresh import BadTimedOutput

    if isinstance(exc, RequestFailed):
        return exc.kind
    if isinstance(exc, SystemExit):
        return ErrorKind.EXIT
    if isinstance(exc, BadTimedOutput):
        return ErrorKind.BAD_OUTPUT_TYPE
    if isinstance(exc, (MemoryError, getattr(torch, "OutOfMemoryError", MemoryError))):
        return ErrorKind.OUT_OF_MEMORY
    if isinstance(exc, OSError) and exc.errno == errno.EFBIG:
        return ErrorKind.FILE_TOO_LARGE
    text = str(exc)
    if isinstance(exc, RuntimeError) and (any(m in text for m in DEVICE_ALLOCATION_FAILED) or "std::bad_alloc" in text):
        return ErrorKind.OUT_OF_MEMORY
    return ErrorKind.EXCEPTION


class Channel:
    """The worker's end of the socket: replies, and the ask/answer exchanges inside a request."""

    def __init__(self, conn: Connection) -> None:
        self.conn = conn

    def send(self, msg: Message, payload: Any = None) -> None:
        protocol.send(self.conn, msg.to_header(), payload)

    def ask(self, msg: FreshAsk | DeviceTurn, expect: type = FreshGrant, payload: Any = None) -> Any:
        self.send(msg, payload)
        header, _ = protocol.recv(self.conn)
        answer = Message.from_header(header)
        if not isinstance(answer, expect):
            raise RequestFailed(ErrorKind.PROTOCOL, f"expected {expect.__name__}, got {type(answer).__name__}")
        return answer
