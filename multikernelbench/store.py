"""SQLite results store.

Results are keyed by what determines them — (task id, task hash, backend, hardware, code hash, policy) — so the same
kernel submitted twice (by two models, or by a rerun) is evaluated once, and an interrupted run resumes by
skipping keys already present. A separate ``labels`` table says which model/strategy/sample produced which
code, so reports can group by model without duplicating results.
"""

from __future__ import annotations

import json
import sqlite3
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from multikernelbench.records import EvalResult

SCHEMA = """
CREATE TABLE IF NOT EXISTS results (
    task_id TEXT NOT NULL, task_hash TEXT NOT NULL, backend TEXT NOT NULL, hardware TEXT NOT NULL,
    code_hash TEXT NOT NULL, status TEXT NOT NULL, record TEXT NOT NULL, created REAL NOT NULL,
    sandbox TEXT NOT NULL DEFAULT '', policy TEXT NOT NULL DEFAULT 'mkb',
    PRIMARY KEY (task_id, task_hash, backend, hardware, code_hash, policy)
);
CREATE TABLE IF NOT EXISTS labels (
    model TEXT NOT NULL, strategy TEXT NOT NULL, sample_index INTEGER NOT NULL,
    task_id TEXT NOT NULL, backend TEXT NOT NULL, code_hash TEXT NOT NULL, candidate TEXT NOT NULL,
    category TEXT NOT NULL DEFAULT '',
    PRIMARY KEY (model, strategy, task_id, backend, sample_index)
);
"""


@dataclass(frozen=True)
class Label:
    """Where a candidate came from: which model, prompting strategy and sample index."""

    model: str = "shipped"
    strategy: str = "none"
    sample_index: int = 0
    category: str = ""


@dataclass
class StoredResult:
    label: Label
    result: EvalResult


#: How long opening a store may wait for another connection's lock (SQLite's busy timeout, and the retries of
#: :meth:`ResultStore._prepare`).
OPEN_TIMEOUT_S = 30.0


class ResultStore:
    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        # One connection per store; each write commits at once so a killed run loses nothing finished.
        self._conn = sqlite3.connect(str(self.path), timeout=OPEN_TIMEOUT_S)
        self._prepare()

    def _prepare(self) -> None:
        """WAL, the schema and its migrations, retried while another connection holds the lock. The busy
        timeout does not cover it: stores opened at once on a new file (``mkb serve``'s lanes start together)
        switch it to WAL and create the tables, and SQLite answers one of two such connections "database is
        locked" at once, not after waiting (its way out of a deadlock); a serve lane died of it under load."""
        deadline = time.monotonic() + OPEN_TIMEOUT_S
        pause = 0.01
        while True:
            try:
                self._conn.execute("PRAGMA journal_mode=WAL")
                self._migrate_policy_key()
                self._conn.executescript(SCHEMA)
                self._add_missing_columns()
                self._conn.commit()
                return
            except sqlite3.OperationalError as exc:
                if "locked" not in str(exc) or time.monotonic() > deadline:
                    raise
                self._conn.rollback()
                time.sleep(pause)
                pause = min(2 * pause, 0.5)

    def _migrate_policy_key(self) -> None:
        """A store made before policies (anticheat/policy.py) had no ``policy`` in its key: its rows move, in one
        transaction, to a table keyed with it, as ``mkb`` (the only policy there was). Interrupted, nothing
        changed; done, the old table is gone."""
        have = {row[1] for row in self._conn.execute("PRAGMA table_info(results)")}
        if not have or "policy" in have:
            return
        sandbox = "sandbox" if "sandbox" in have else "''"
        with self._conn:
            self._conn.execute("ALTER TABLE results RENAME TO results_before_policy")
            self._conn.execute(SCHEMA.split(";")[0])  # execute, not executescript: that would commit first
            self._conn.execute(
                "INSERT INTO results (task_id, task_hash, backend, hardware, code_hash, status, record, created, "
                f"sandbox, policy) SELECT task_id, task_hash, backend, hardware, code_hash, status, record, created, "
                f"{sandbox}, 'mkb' FROM results_before_policy")
            self._conn.execute("DROP TABLE results_before_policy")

    def _add_missing_columns(self) -> None:
        """Stores made before a column existed get it with its default ('' sandbox: made before the kernel
        sandbox; the JSON record of such a row has no ``sandbox`` key either and reads back as '')."""
        have = {row[1] for row in self._conn.execute("PRAGMA table_info(results)")}
        if "sandbox" not in have:
            self._conn.execute("ALTER TABLE results ADD COLUMN sandbox TEXT NOT NULL DEFAULT ''")

    def close(self) -> None:
        self._conn.close()

    def __enter__(self) -> ResultStore:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def get(self, task_id: str, task_hash: str, backend: str, hardware: str, code_hash: str,
            policy: str = "mkb") -> EvalResult | None:
        row = self._conn.execute(
            "SELECT record FROM results WHERE task_id=? AND task_hash=? AND backend=? AND hardware=? AND code_hash=? "
            "AND policy=?", (task_id, task_hash, backend, hardware, code_hash, policy)).fetchone()
        return EvalResult.from_dict(json.loads(row[0])) if row else None

    def put(self, result: EvalResult, label: Label | None = None) -> None:
        with self._conn:
            self._conn.execute(
                "INSERT OR REPLACE INTO results (task_id, task_hash, backend, hardware, code_hash, status, record, "
                "created, sandbox, policy) VALUES (?,?,?,?,?,?,?,?,?,?)",
                (result.task_id, result.task_hash, result.backend, result.hardware, result.code_hash,
                 result.status.value, result.to_json(), time.time(), result.sandbox, result.policy))
            if label is not None:
                self._put_label(result, label)

    def put_label(self, result: EvalResult, label: Label) -> None:
        with self._conn:
            self._put_label(result, label)

    def _put_label(self, result: EvalResult, label: Label) -> None:
        self._conn.execute(
            "INSERT OR REPLACE INTO labels VALUES (?,?,?,?,?,?,?,?)",
            (label.model, label.strategy, label.sample_index, result.task_id, result.backend,
             result.code_hash, result.candidate, label.category))

    def results(self) -> Iterator[EvalResult]:
        for (record,) in self._conn.execute("SELECT record FROM results ORDER BY task_id, code_hash"):
            yield EvalResult.from_dict(json.loads(record))

    def labelled(self) -> Iterator[StoredResult]:
        """Every labelled result (one per model/strategy/task/backend/sample), joined with its record."""
        query = (
            "SELECT l.model, l.strategy, l.sample_index, l.category, l.candidate, r.record FROM labels l "
            "JOIN results r ON r.task_id = l.task_id AND r.backend = l.backend AND r.code_hash = l.code_hash "
            "ORDER BY l.model, l.backend, l.strategy, l.task_id, l.sample_index")
        seen: set[tuple] = set()
        for model, strategy, idx, category, candidate, record in self._conn.execute(query):
            result = EvalResult.from_dict(json.loads(record))
            # Samples with the same code share one record (keyed by code hash); each keeps its own name.
            result.candidate = candidate or result.candidate
            key = (model, strategy, result.task_id, result.backend, idx, result.policy)
            if key in seen:  # the same code evaluated on two hardware kinds: keep the first
                continue
            seen.add(key)
            yield StoredResult(Label(model, strategy, int(idx), category), result)
