"""A small client of ``mkb serve`` (sync :class:`Client` and async :class:`AsyncClient`), with retries.

    from multikernelbench.client import Client
    with Client("http://127.0.0.1:8088", token="...") as c:
        result = c.evaluate("activation.relu", source)          # submit, then long-poll until done
        print(result["status"], result["speedup"])

A request that fails to connect, times out, or gets 429/502/503/504 is retried with exponential backoff
(``retries`` times); any other 4xx raises :class:`ServiceError` with the service's one-line reason at once.
Every submit sends an ``Idempotency-Key`` (one per call, the same on each retry), so a POST retried after a
lost reply or a service restart returns the jobs the first one made. The service keeps accepted jobs across
a restart; ``evaluate`` submits again only if the service no longer knows a job (404).
"""

from __future__ import annotations

import asyncio
import secrets
import time
from typing import Any

import httpx

RETRY_STATUSES = {429, 502, 503, 504}
FINISHED = {"done", "failed"}


class ServiceError(RuntimeError):
    def __init__(self, status: int, reason: str) -> None:
        super().__init__(f"{status}: {reason}")
        self.status, self.reason = status, reason


def _items(task_id: str | None, source: str | None, items: list[dict] | None, **options) -> dict:
    if items is None:
        items = [{"task_id": task_id, "source": source}]
    opts = {k: v for k, v in options.items() if v is not None}
    return {"items": [{**item, **opts} for item in items]}


def _reason(resp: httpx.Response) -> str:
    try:
        return resp.json().get("error", resp.text)
    except ValueError:
        return resp.text[:200]


class _Base:
    def __init__(self, url: str, token: str | None = None, *, client_name: str | None = None,
                 timeout: float = 90.0, retries: int = 8, backoff_s: float = 0.5) -> None:
        self.url = url.rstrip("/")
        self.headers = {}
        if token:
            self.headers["Authorization"] = f"Bearer {token}"
        self.client_name = client_name  # informational only: the service knows its clients by their tokens
        self.timeout, self.retries, self.backoff_s = timeout, retries, backoff_s

    def _check(self, resp: httpx.Response) -> Any:
        if resp.status_code >= 400:
            raise ServiceError(resp.status_code, _reason(resp))
        return resp.json()

    def _delay(self, attempt: int) -> float:
        return min(30.0, self.backoff_s * 2 ** attempt)


class Client(_Base):
    """Blocking client (one httpx connection pool)."""

    def __init__(self, url: str, token: str | None = None, **kw) -> None:
        super().__init__(url, token, **kw)
        self.http = httpx.Client(base_url=self.url, headers=self.headers, timeout=self.timeout)

    def close(self) -> None:
        self.http.close()

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def _request(self, method: str, path: str, **kw) -> Any:
        for attempt in range(self.retries + 1):
            try:
                resp = self.http.request(method, path, **kw)
            except (httpx.TransportError, httpx.TimeoutException):
                if attempt == self.retries:
                    raise
            else:
                if resp.status_code not in RETRY_STATUSES or attempt == self.retries:
                    return self._check(resp)
            time.sleep(self._delay(attempt))
        raise AssertionError("unreachable")

    def submit(self, task_id: str | None = None, source: str | None = None, *, items: list[dict] | None = None,
               fresh_shapes: int | None = None, timing_budget_s: float | None = None) -> list[str]:
        body = _items(task_id, source, items, fresh_shapes=fresh_shapes, timing_budget_s=timing_budget_s)
        key = {"Idempotency-Key": secrets.token_hex(16)}
        return self._request("POST", "/jobs", json=body, headers=key)["jobs"]

    def job(self, job_id: str, wait: float = 0.0) -> dict:
        return self._request("GET", f"/jobs/{job_id}", params={"wait": wait} if wait else None)

    def wait(self, job_ids: list[str], timeout: float = 3600.0, poll_s: float = 30.0) -> list[dict]:
        """Every job once finished (long-polls of ``poll_s``), in the order given."""
        end = time.monotonic() + timeout
        out: dict[str, dict] = {}
        for job_id in job_ids:
            while True:
                job = self.job(job_id, wait=max(0.0, min(poll_s, end - time.monotonic())))
                if job["state"] in FINISHED or time.monotonic() >= end:
                    out[job_id] = job
                    break
        return [out[j] for j in job_ids]

    def evaluate(self, task_id: str, source: str, **options) -> dict:
        """Submit one source and return its result record (a dict of EvalResult's fields)."""
        for attempt in range(3):
            try:
                job = self.wait(self.submit(task_id, source, **options))[0]
                break
            except ServiceError as exc:  # a job the service no longer knows: submit again
                if exc.status != 404 or attempt == 2 or "unknown job" not in exc.reason:
                    raise
        if job["state"] != "done":
            raise ServiceError(500, job.get("message") or f"job {job['id']} is {job['state']}")
        return job["result"]

    def health(self) -> dict:
        return self._request("GET", "/health")


class AsyncClient(_Base):
    """The same calls for asyncio code (one httpx.AsyncClient)."""

    def __init__(self, url: str, token: str | None = None, **kw) -> None:
        super().__init__(url, token, **kw)
        self.http = httpx.AsyncClient(base_url=self.url, headers=self.headers, timeout=self.timeout)

    async def aclose(self) -> None:
        await self.http.aclose()

    async def __aenter__(self) -> AsyncClient:
        return self

    async def __aexit__(self, *exc) -> None:
        await self.aclose()

    async def _request(self, method: str, path: str, **kw) -> Any:
        for attempt in range(self.retries + 1):
            try:
                resp = await self.http.request(method, path, **kw)
            except (httpx.TransportError, httpx.TimeoutException):
                if attempt == self.retries:
                    raise
            else:
                if resp.status_code not in RETRY_STATUSES or attempt == self.retries:
                    return self._check(resp)
            await asyncio.sleep(self._delay(attempt))
        raise AssertionError("unreachable")

    async def submit(self, task_id: str | None = None, source: str | None = None, *,
                     items: list[dict] | None = None, fresh_shapes: int | None = None,
                     timing_budget_s: float | None = None) -> list[str]:
        body = _items(task_id, source, items, fresh_shapes=fresh_shapes, timing_budget_s=timing_budget_s)
        key = {"Idempotency-Key": secrets.token_hex(16)}
        return (await self._request("POST", "/jobs", json=body, headers=key))["jobs"]

    async def job(self, job_id: str, wait: float = 0.0) -> dict:
        return await self._request("GET", f"/jobs/{job_id}", params={"wait": wait} if wait else None)

    async def wait(self, job_ids: list[str], timeout: float = 3600.0, poll_s: float = 30.0) -> list[dict]:
        end = time.monotonic() + timeout

        async def one(job_id: str) -> dict:
            while True:
                job = await self.job(job_id, wait=max(0.0, min(poll_s, end - time.monotonic())))
                if job["state"] in FINISHED or time.monotonic() >= end:
                    return job

        return list(await asyncio.gather(*(one(j) for j in job_ids)))

    async def evaluate(self, task_id: str, source: str, **options) -> dict:
        for attempt in range(3):
            try:
                job = (await self.wait(await self.submit(task_id, source, **options)))[0]
                break
            except ServiceError as exc:  # a job the service no longer knows: submit again
                if exc.status != 404 or attempt == 2 or "unknown job" not in exc.reason:
                    raise
        if job["state"] != "done":
            raise ServiceError(500, job.get("message") or f"job {job['id']} is {job['state']}")
        return job["result"]
