"""Results stores opened at once on a new file (``mkb serve`` starts its lanes together, each with its own store):
every one opens. SQLite answers one of two connections that switch a new file to WAL and create its tables at
once "database is locked" without waiting (its way out of a deadlock); a serve lane died of it in a CI-like run
and its client's quick job waited a minute for the other lane. Without the retry (store.ResultStore._prepare)
this failed 18 of 800 opens here."""

from __future__ import annotations

import sys
import threading

from multikernelbench.store import ResultStore


def test_stores_opened_at_once_on_a_new_file_all_open(tmp_path):
    failures: list[str] = []
    before = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)  # thread switches as a loaded host makes them
    try:
        for i in range(150):
            path = tmp_path / f"r{i}.sqlite"
            start = threading.Barrier(4)

            def open_one(path=path, start=start) -> None:
                start.wait()
                try:
                    ResultStore(path).close()
                except Exception as exc:  # any failure to open is the finding
                    failures.append(repr(exc))

            threads = [threading.Thread(target=open_one) for _ in range(4)]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
    finally:
        sys.setswitchinterval(before)
    assert not failures, f"{len(failures)} of 600 opens failed: {sorted(set(failures))}"
    with ResultStore(tmp_path / "r0.sqlite") as store:  # and the file is a store
        assert store.get("x", "y", "cpu", "z", "h") is None
