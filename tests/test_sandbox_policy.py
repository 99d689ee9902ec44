"""The kernel sandbox's policy in a forked child (engine/kernel_sandbox.py ``enter``), without the engine: what a
worker keeps (threads, subprocesses, a C compiler, AF_UNIX sockets), what it loses (namespaces, capabilities,
new privileges, mode changes that take read or search away), the engine's refusal on a kernel without a layer,
and a store from before the sandbox column. Split from test_sandbox_kernel.py, whose engine runs with attacking
candidates run alone under xdist (its ``timing`` mark); nothing here lists shared folders, so these run shared.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from multikernelbench.engine.kernel_sandbox import SandboxPolicy, enter, support
from multikernelbench.engine.runner import CodeExecutionNotAllowed
from multikernelbench.records import Status
from multikernelbench.util import seccomp

pytestmark = pytest.mark.skipif(not support().complete, reason="this kernel lacks Landlock or seccomp")


def _in_sandbox(fn) -> int:
    """Run ``fn`` in a forked child under a worker's policy; its return value (an int) is the exit code."""
    import tempfile

    wd = tempfile.mkdtemp(prefix="mkb-sbx-unit-")
    policy = SandboxPolicy.for_worker({"TMPDIR": wd}, wd)
    pid = os.fork()
    if pid == 0:
        code = 99
        try:
            os.environ["TMPDIR"] = wd  # (the forked child's own copy) as a worker's: the compiler's temporaries
            enter(policy)
            code = int(fn(wd))
        finally:
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    return os.waitstatus_to_exitcode(status)


@pytest.mark.slow
def test_sandboxed_child_keeps_what_workers_need():
    """Threads (clone), subprocesses, a C compiler run and AF_UNIX sockets still work; its own folder is
    writable; clone with a namespace flag and unshare are refused."""

    def probe(wd: str) -> int:
        import socket
        import subprocess
        import threading

        t = threading.Thread(target=lambda: None)
        t.start()
        t.join()
        socket.socketpair()
        Path(wd, "hello.c").write_text("int main(void){return 0;}\n")
        if subprocess.run(["cc", "-o", f"{wd}/hello", f"{wd}/hello.c"]).returncode != 0:
            return 3
        if subprocess.run([f"{wd}/hello"]).returncode != 0:
            return 4
        if seccomp.LIBC.unshare(0x40000000) == 0:  # CLONE_NEWNET
            return 5
        return 0

    assert _in_sandbox(probe) == 0


def test_mode_changes_that_take_read_or_search_away_do_nothing():
    """chmod/fchmod/fchmodat to a mode without read and search for all: "done", the mode kept (a uid-0 worker
    owns the harness's root-owned files, and Landlock has no right for chmod); a mode that keeps both (``ld``'s
    0755 on its output) is made, so a compiled program still runs."""

    def probe(wd: str) -> int:
        path = Path(wd, "f")
        path.write_text("x")
        os.chmod(path, 0o644)
        os.chmod(path, 0)  # chmod/fchmodat: no error, no effect
        if path.stat().st_mode & 0o777 != 0o644:
            return 10
        fd = os.open(path, os.O_RDONLY)
        os.fchmod(fd, 0o600)
        os.close(fd)
        if path.stat().st_mode & 0o777 != 0o644:
            return 11
        os.chmod(Path(wd), 0o755)  # (mkdtemp made it 0700) read and search for all: made
        os.chmod(Path(wd), 0o700)  # the search bit for others taken away: not made
        if Path(wd).stat().st_mode & 0o777 != 0o755:
            return 12
        os.chmod(path, 0o755)  # keeps read and search for all: made
        return 0 if path.stat().st_mode & 0o777 == 0o755 else 13

    assert _in_sandbox(probe) == 0


def test_no_capabilities_and_no_new_privs():
    def probe(_wd: str) -> int:
        status = Path("/proc/self/status").read_text()
        fields = dict(line.split(":", 1) for line in status.splitlines() if ":" in line)
        if int(fields["CapEff"].strip(), 16) or int(fields["CapPrm"].strip(), 16) or int(fields["CapBnd"].strip(), 16):
            return 6
        return 0 if fields["NoNewPrivs"].strip() == "1" else 7

    assert _in_sandbox(probe) == 0


def test_weak_sandbox_refused_without_opt_in(monkeypatch, build_root):
    """A kernel without a layer: the engine refuses to start unless allow_weak_sandbox is set."""
    from multikernelbench.engine import kernel_sandbox
    from multikernelbench.engine.config import EngineConfig
    from multikernelbench.engine.runner import check_opt_in

    monkeypatch.setattr(kernel_sandbox, "support", lambda: kernel_sandbox.SandboxSupport(0, True))
    cfg = EngineConfig(build_root=build_root, allow_code_execution=True)
    with pytest.raises(CodeExecutionNotAllowed, match="allow-weak-sandbox"):
        check_opt_in(cfg)
    cfg.allow_weak_sandbox = True
    check_opt_in(cfg)
    assert kernel_sandbox.SandboxSupport(0, True).label() == "weak:seccomp"


def test_old_store_without_sandbox_column_reads(tmp_path):
    import sqlite3

    from multikernelbench.records import EvalResult
    from multikernelbench.store import ResultStore

    db = tmp_path / "old.sqlite"
    con = sqlite3.connect(db)
    con.executescript("""CREATE TABLE results (task_id TEXT NOT NULL, task_hash TEXT NOT NULL, backend TEXT NOT NULL,
        hardware TEXT NOT NULL, code_hash TEXT NOT NULL, status TEXT NOT NULL, record TEXT NOT NULL,
        created REAL NOT NULL, PRIMARY KEY (task_id, task_hash, backend, hardware, code_hash));""")
    old = EvalResult(task_id="a.b", task_hash="h", backend="cpu", candidate="c", code_hash="x", status=Status.CORRECT)
    row = old.to_dict()
    row.pop("sandbox")
    import json

    con.execute("INSERT INTO results VALUES (?,?,?,?,?,?,?,?)", ("a.b", "h", "cpu", "hw", "x", "correct",
                                                                 json.dumps(row), 0.0))
    con.commit()
    con.close()
    with ResultStore(db) as store:
        (got,) = list(store.results())
        assert got.sandbox == ""
        new = EvalResult(task_id="a.c", task_hash="h", backend="cpu", candidate="c", code_hash="y",
                         status=Status.CORRECT, sandbox="landlock7+seccomp")
        store.put(new)
        assert store.get("a.c", "h", "cpu", "", "y").sandbox == "landlock7+seccomp"
