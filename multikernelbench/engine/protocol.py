"""Framing between the trusted parent and a worker (a JSON header plus an optional tensor payload), and
between the parent and the zygote (length-prefixed JSON, file descriptors by SCM_RIGHTS).

Nothing from a worker is ever unpickled as arbitrary Python: headers are JSON and tensors come through
``torch.load(weights_only=True)``, which refuses anything but plain tensors and containers. A candidate
that controls its worker therefore cannot run code in the parent through the channel.
"""

from __future__ import annotations

import io
import json
import socket
import struct
from multiprocessing.connection import Connection
from typing import Any

import torch

MAX_MESSAGE_BYTES = 3 << 30


def encode(header: dict[str, Any], tensors: Any = None) -> bytes:
    head = json.dumps(header).encode()
    payload = b""
    if tensors is not None:
        buf = io.BytesIO()
        torch.save(tensors, buf)
        payload = buf.getvalue()
    return struct.pack("<Q", len(head)) + head + payload


def decode(blob: bytes) -> tuple[dict[str, Any], Any]:
    (n,) = struct.unpack("<Q", blob[:8])
    header = json.loads(blob[8:8 + n].decode())
    payload = blob[8 + n:]
    tensors = torch.load(io.BytesIO(payload), weights_only=True, map_location="cpu") if payload else None
    return header, tensors


def send(conn: Connection, header: dict[str, Any], tensors: Any = None) -> None:
    conn.send_bytes(encode(header, tensors))


def recv(conn: Connection) -> tuple[dict[str, Any], Any]:
    return decode(conn.recv_bytes(MAX_MESSAGE_BYTES))


# ---- zygote control channel (see engine/zygote_main.py) ------------------------------------------------

def recv_control(sock: socket.socket, nfds: int = 0) -> tuple[dict, list[int]]:
    """One zygote control message (8-byte length + JSON), with up to ``nfds`` file descriptors."""
    head, fds, _, _ = socket.recv_fds(sock, 8, nfds) if nfds else (sock.recv(8), [], 0, None)
    if len(head) < 8:
        raise EOFError
    (n,) = struct.unpack("<Q", head)
    body = b""
    while len(body) < n:
        chunk = sock.recv(n - len(body))
        if not chunk:
            raise EOFError
        body += chunk
    return json.loads(body), list(fds)


def send_control(sock: socket.socket, msg: dict) -> None:
    body = json.dumps(msg).encode()
    sock.sendall(struct.pack("<Q", len(body)) + body)
