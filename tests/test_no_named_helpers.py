"""No trusted helper listens where a worker could ask it (issue #41: "the forked front ends grant nothing").

Why a source check: the one helper that did (``backends/fe_fork``, nvcc's front ends forked from a parse of the
prelude) listened on a pathname unix socket under a folder every compile worker may read; Landlock does not
cover ``connect()`` on such a socket, so any worker could get a child that wrote where the request said. It was
removed (benchmarks/throughput/README.md, ninth session). The harness's own channels are ``socketpair``s (no name)
and ``mkb serve``'s TCP (which seccomp keeps workers from). A helper that listens on a named socket again must
come with the refusal tests the issue lists (a write into a folder the requester cannot write, a read it cannot
read, limits it does not have, a child left behind); until then this test fails on it.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
PACKAGES = ("multikernelbench", "backends", "metrics", "dataset_builder")
#: Servers the harness runs, each reachable only by TCP (workers have no TCP): the evaluation service.
TCP_SERVERS = {"multikernelbench/serve"}


def _listeners(tree: ast.AST) -> list[int]:
    """Lines that bind or listen on a socket, or start an asyncio/socketserver unix server."""
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            name = node.func.attr
            if name in ("listen", "start_unix_server", "create_unix_server", "UnixStreamServer",
                        "ThreadingUnixStreamServer", "UnixDatagramServer"):
                out.append(node.lineno)
            elif name == "bind" and not (isinstance(node.func.value, ast.Name) and node.func.value.id == "sig"):
                out.append(node.lineno)
    return out


_C_LISTEN = re.compile(r"\b(bind|listen)\s*\(")
_C_SUFFIXES = (".c", ".cc", ".cpp", ".cu", ".h")


def _c_listeners(text: str) -> list[int]:
    """Lines of C/C++ source (a helper compiled by the harness, as fe_fork.c was) that bind or listen."""
    return [i for i, line in enumerate(text.splitlines(), 1) if _C_LISTEN.search(line)]


def test_no_module_listens_on_a_socket_a_worker_could_reach():
    found = {}
    for pkg in PACKAGES:
        for path in (REPO / pkg).rglob("*.py"):
            rel = path.relative_to(REPO).as_posix()
            if any(rel.startswith(s + "/") for s in TCP_SERVERS):
                continue
            lines = _listeners(ast.parse(path.read_text(), filename=rel))
            if lines:
                found[rel] = lines
        for path in (REPO / pkg).rglob("*"):
            if path.suffix in _C_SUFFIXES and path.is_file() and _c_listeners(path.read_text(errors="replace")):
                found[path.relative_to(REPO).as_posix()] = _c_listeners(path.read_text(errors="replace"))
    assert not found, f"a helper listens on a socket (issue #41: it must grant nothing; see this file): {found}"
    assert not list((REPO / "backends").rglob("fe_fork*")), "the forked front ends are back"


def test_the_check_sees_a_unix_server():
    """The check itself can fail: a small unix-socket server, as the fork server had, is found."""
    src = ("import socket\ns = socket.socket(socket.AF_UNIX)\ns.bind('/tmp/x.sock')\ns.listen(4)\n"
           "import asyncio\nasyncio.start_unix_server(None, path='/tmp/y.sock')\n")
    assert _listeners(ast.parse(src)) == [3, 4, 6]
    # fe_fork.c's listener, as it was (removed in a4d5c39):
    c = "    if (ls < 0 || bind(ls, (struct sockaddr *)&b, sizeof b) < 0 ||\n        listen(ls, 128) < 0)\n"
    assert _c_listeners(c) == [1, 2]
