"""The service's own SQLite file (next to the results store): accepted jobs, idempotency keys, the cache.

Accepted work is durable: a job is written (and synced) here before its id is sent, so a restart -- a crash,
``kill -9``, a deploy -- finds every unfinished job and queues it again under the same id. A finished job
keeps its result, not its source. An idempotency key names one request of one client: sending it again
returns the jobs it made the first time instead of making new ones. The cache table holds results under the
service's exact key (serve/cachekey.py) with the strength they were evaluated at.

One connection shared by the request threads and the lanes' threads, under a lock: writes are small and the
file is the service's alone.
"""

from __future__ import annotations

import json
import sqlite3
import threading
from dataclasses import dataclass
from pathlib import Path

SCHEMA = """
CREATE TABLE IF NOT EXISTS jobs (
    id TEXT PRIMARY KEY, client TEXT NOT NULL, state TEXT NOT NULL, task_id TEXT NOT NULL,
    code_hash TEXT NOT NULL, fresh INTEGER NOT NULL, budget REAL, source TEXT, result TEXT,
    message TEXT NOT NULL DEFAULT '', cached INTEGER NOT NULL DEFAULT 0, submitted_at REAL NOT NULL,
    finished_at REAL);
CREATE INDEX IF NOT EXISTS jobs_unfinished ON jobs(state) WHERE source IS NOT NULL;
CREATE TABLE IF NOT EXISTS idem (client TEXT NOT NULL, key TEXT NOT NULL, ids TEXT NOT NULL, created REAL NOT NULL,
    PRIMARY KEY (client, key));
CREATE TABLE IF NOT EXISTS cache (key TEXT NOT NULL, fresh INTEGER NOT NULL, budget REAL NOT NULL,
    result TEXT NOT NULL, created REAL NOT NULL);
CREATE INDEX IF NOT EXISTS cache_key ON cache(key);
"""


@dataclass
class JobRow:
    id: str
    client: str
    state: str
    task_id: str
    code_hash: str
    fresh: int
    budget: float | None
    source: str | None
    result: str | None
    message: str
    cached: bool
    submitted_at: float
    finished_at: float | None


def _row(r: tuple) -> JobRow:
    return JobRow(id=r[0], client=r[1], state=r[2], task_id=r[3], code_hash=r[4], fresh=r[5], budget=r[6],
                  source=r[7], result=r[8], message=r[9], cached=bool(r[10]), submitted_at=r[11], finished_at=r[12])


class JobStore:
    def __init__(self, path: Path, keep_finished: int = 200_000) -> None:
        self.path = Path(path)
        self.keep_finished = keep_finished
        self._lock = threading.Lock()
        self._conn = sqlite3.connect(self.path, check_same_thread=False, isolation_level=None)
        self._conn.execute("PRAGMA journal_mode=WAL")
        self._conn.execute("PRAGMA synchronous=FULL")  # accepted means on disk
        self._conn.executescript(SCHEMA)
        self._finished_since_prune = 0

    def close(self) -> None:
        with self._lock:
            self._conn.close()

    def add(self, rows: list[JobRow], client: str, idem_key: str | None, now: float) -> None:
        """All of a request's jobs (and its idempotency key) in one transaction."""
        with self._lock:
            c = self._conn
            c.execute("BEGIN IMMEDIATE")
            try:
                c.executemany("INSERT INTO jobs VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)",
                              [(r.id, r.client, r.state, r.task_id, r.code_hash, r.fresh, r.budget, r.source,
                                r.result, r.message, int(r.cached), r.submitted_at, r.finished_at) for r in rows])
                if idem_key is not None:
                    c.execute("INSERT INTO idem VALUES (?,?,?,?)", (client, idem_key, json.dumps([r.id for r in rows]),
                                                                   now))
                c.execute("COMMIT")
            except BaseException:
                c.execute("ROLLBACK")
                raise

    def idempotent(self, client: str, key: str) -> list[str] | None:
        with self._lock:
            row = self._conn.execute("SELECT ids FROM idem WHERE client=? AND key=?", (client, key)).fetchone()
        return json.loads(row[0]) if row else None

    def finish(self, ids: list[str], state: str, result: str | None, message: str, now: float) -> None:
        """Finished jobs keep the result and drop the source."""
        with self._lock:
            self._conn.executemany("UPDATE jobs SET state=?, result=?, message=?, finished_at=?, source=NULL "
                                   "WHERE id=?", [(state, result, message, now, i) for i in ids])
            self._finished_since_prune += len(ids)
            if self._finished_since_prune >= 1000:
                self._finished_since_prune = 0
                self._prune()

    def _prune(self) -> None:
        self._conn.execute("DELETE FROM jobs WHERE source IS NULL AND id IN (SELECT id FROM jobs WHERE source IS NULL "
                           "ORDER BY finished_at DESC LIMIT -1 OFFSET ?)", (self.keep_finished,))
        for table in ("idem", "cache"):
            self._conn.execute(f"DELETE FROM {table} WHERE rowid IN (SELECT rowid FROM {table} ORDER BY created DESC "
                               "LIMIT -1 OFFSET ?)", (self.keep_finished,))

    def get(self, job_id: str) -> JobRow | None:
        with self._lock:
            row = self._conn.execute("SELECT * FROM jobs WHERE id=?", (job_id,)).fetchone()
        return _row(row) if row else None

    def unfinished(self) -> list[JobRow]:
        """Jobs accepted but not finished (a restart queues them again), oldest first."""
        with self._lock:
            rows = self._conn.execute("SELECT * FROM jobs WHERE source IS NOT NULL ORDER BY submitted_at").fetchall()
        return [_row(r) for r in rows]

    def cache_get(self, key: str, fresh: int, budget: float) -> str | None:
        """The strongest-enough cached result for ``key`` (serve/cachekey.Strength.covers), newest first."""
        with self._lock:
            row = self._conn.execute("SELECT result FROM cache WHERE key=? AND fresh>=? AND budget>=? "
                                     "ORDER BY created DESC LIMIT 1", (key, fresh, budget)).fetchone()
        return row[0] if row else None

    def cache_put(self, key: str, fresh: int, budget: float, result: str, now: float) -> None:
        with self._lock:
            self._conn.execute("INSERT INTO cache VALUES (?,?,?,?,?)", (key, fresh, budget, result, now))
