"""The FastAPI application of ``mkb serve``.

Routes: ``POST /jobs`` (alias ``POST /evaluate``) takes one submission ``{task_id, source, backend?,
fresh_shapes?, timing_budget_s?}`` or a batch ``{"items": [...]}`` and returns ``{"jobs": [ids]}`` (an
``Idempotency-Key`` header makes a resubmission return the same jobs); ``GET /jobs/{id}`` returns the
caller's own job (``?wait=S`` long-polls up to S seconds for it to finish); ``GET /health``; ``GET /metrics``
(Prometheus text). Every route but ``/health`` needs ``Authorization: Bearer <token>`` when the service has
tokens; the token's name is the client.

A rejected request is a 4xx whose body is ``{"error": "<one line>"}`` and nothing of it is queued (see
serve/parse.py). A long-poll waits on an event set by a lane's thread, not on a thread of the pool that
submissions use, and ends as soon as its client hangs up. Each client's requests and request bytes pass
token buckets (serve/ratelimit.py): past them a 429 with ``Retry-After``. Served by ``mkb serve``, the token
and the buckets are checked by the HTTP protocol before the request reaches this app (serve/gate.py); the app's
own check is for other servers.
"""

# No ``from __future__ import annotations`` here: FastAPI reads the routes' annotations (``Request``) as
# objects, and they are imported inside create_app (fastapi is an optional dependency).
import asyncio
import contextlib
import math
import re

from multikernelbench.serve.gate import ADMITTED, Gate, declared_length
from multikernelbench.serve.jobs import EvalService, OverLimit
from multikernelbench.serve.parse import Rejected, one_line, parse_submissions
from multikernelbench.serve.priority import lower_http_priority
from multikernelbench.serve.ratelimit import RateLimiter, RateLimits

__all__ = ["Rejected", "create_app", "parse_submissions"]

IDEMPOTENCY_KEY = re.compile(r"[A-Za-z0-9._:-]{8,128}")


async def _hung_up(request) -> None:
    """Returns when the client disconnects (the request's body was read already, or there is none)."""
    while True:
        message = await request.receive()
        if message["type"] == "http.disconnect":
            return


async def _read_body(request, cfg) -> bytes:
    """The request's body within the service's size and time limits (a slow or huge body is a 413/408, and
    nothing of it is kept)."""
    import anyio

    declared = request.headers.get("content-length")
    if declared is not None and declared.isdigit() and int(declared) > cfg.max_body_bytes:
        raise Rejected(413, f"body of {declared} bytes; the limit is {cfg.max_body_bytes}")
    chunks, size = [], 0
    try:
        with anyio.fail_after(cfg.body_timeout_s):
            async for chunk in request.stream():
                size += len(chunk)
                if size > cfg.max_body_bytes:
                    raise Rejected(413, f"body over the limit of {cfg.max_body_bytes} bytes")
                chunks.append(chunk)
    except TimeoutError:
        raise Rejected(408, f"the body took longer than {cfg.body_timeout_s:g} s") from None
    return b"".join(chunks)


async def _job_when_done(service: EvalService, job_id: str, client: str, wait: float, request):
    """The client's job once it finished, the client hung up, or ``wait`` seconds passed (None: no such job of
    this client). Waits on an event a lane's thread sets, not on a pool thread."""
    loop = asyncio.get_running_loop()
    done = asyncio.Event()

    def wake() -> None:  # called by a lane's thread
        try:
            loop.call_soon_threadsafe(done.set)
        except RuntimeError:  # the loop is closed: the server is stopping
            pass

    job = service.watch(job_id, client, wake)
    if job is None or job.finished:
        service.unwatch(job_id, wake)
        return job
    waits = [asyncio.ensure_future(done.wait()), asyncio.ensure_future(_hung_up(request))]
    try:
        await asyncio.wait(waits, timeout=wait, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for w in waits:
            w.cancel()
        service.unwatch(job_id, wake)
    return service.get(job_id, client)


class _Front:
    """What every route but /health does first: who the client is (its token's name), whether it is over its
    request rate (charged when not), and the one-line refusal when either fails. Served through
    serve/limits.py's protocol with this app's ``gate``, that check was made before the request got here (a
    refused one never does) and the scope's state names the client."""

    def __init__(self, service: EvalService, rate: RateLimits | None) -> None:
        from multikernelbench.serve.auth import TokenBook

        self.service, self.cfg = service, service.config
        limiter = RateLimiter(rate, self.cfg.max_body_bytes) if rate is not None else None
        self.gate = Gate(self.cfg.tokens or TokenBook(), limiter, service.metrics)

    def refuse(self, status: int, reason: str, headers: dict[str, str] | None = None, close: bool = False):
        """``close``: the request's body is left unread. Kept alive, the connection would still pass every byte
        of it through the HTTP parser (uvicorn reads it to find the next request), so a flooder that re-sends
        its refused 1.6 MB body at once cost the service's core as much as an accepted one (issue #42's soak,
        ``--attacks flood``: -49 %). Closed, the kernel drops the rest and the client must connect again."""
        from fastapi.responses import JSONResponse

        self.gate.counted(status)
        if close:
            headers = {**(headers or {}), "Connection": "close"}
        return JSONResponse({"error": one_line(reason)}, status_code=status, headers=headers)

    def admit(self, request, declared: int = 0, body: bool = False):
        """``(client, None)`` for a request that may go on, else ``(client or None, the refusal)``; ``body``:
        the request has a body this refusal leaves unread."""
        admitted = (request.scope.get("state") or {}).get(ADMITTED)
        if admitted is not None:
            return admitted, None
        client, refusal = self.gate.admit(request.headers.get("authorization", ""), declared)
        if refusal is not None:
            return client, self.refuse(refusal.status, refusal.reason, dict(refusal.headers), close=body)
        return client, None

    def charge_bytes(self, client: str, n: int) -> None:
        self.gate.charge_bytes(client, n)


async def _submit(front: _Front, request):
    """``POST /jobs``: the body read within its limits, parsed, and queued for the client (one line if not)."""
    import anyio

    declared = declared_length(request.headers.get("content-length"))
    unread = declared > 0 or "transfer-encoding" in request.headers
    client, refused = front.admit(request, declared, body=unread)
    if refused is not None:
        return refused
    idem = request.headers.get("idempotency-key")
    if idem is not None and not IDEMPOTENCY_KEY.fullmatch(idem):
        return front.refuse(400, "Idempotency-Key must be 8 to 128 characters of A-Z a-z 0-9 . _ : -", close=unread)
    cfg = front.cfg
    try:
        try:
            body = await _read_body(request, cfg)
        except Rejected as exc:  # an oversized body was read up to the limit
            if exc.status == 413:
                front.charge_bytes(client, cfg.max_body_bytes - declared)
            return front.refuse(exc.status, exc.reason, close=True)
        front.charge_bytes(client, len(body) - declared)
        subs = parse_submissions(body, front.service)
        jobs = await anyio.to_thread.run_sync(front.service.submit, client, subs, idem)
    except Rejected as exc:
        return front.refuse(exc.status, exc.reason)
    except OverLimit as exc:
        return front.refuse(429, str(exc))
    return {"jobs": [j.id for j in jobs], "cached": [j.cached for j in jobs]}


def create_app(service: EvalService, rate: RateLimits | None = None):
    """The ASGI app over one :class:`EvalService`; ``rate``: per-client request and byte buckets (None: none;
    ``mkb serve`` sets them from its options)."""
    from fastapi import FastAPI, Request
    from fastapi.exceptions import RequestValidationError
    from fastapi.responses import PlainTextResponse
    from starlette.exceptions import HTTPException

    cfg = service.config

    @contextlib.asynccontextmanager
    async def lifespan(_app):
        lower_http_priority(cfg.http_nice)  # in the event loop's thread, after the lanes' threads started
        yield

    app = FastAPI(title="multikernelbench evaluation service", docs_url=None, redoc_url=None, openapi_url=None,
                  lifespan=lifespan)
    front = _Front(service, rate)
    app.state.gate = front.gate  # for serve/limits.py's protocol: refusals before the app (uvicorn_config)

    @app.exception_handler(RequestValidationError)
    async def invalid(request, exc: RequestValidationError):
        first = exc.errors()[0] if exc.errors() else {}
        where = ".".join(str(p) for p in first.get("loc", ()))
        return front.refuse(400, f"{where}: {first.get('msg', 'invalid request')}")

    @app.exception_handler(HTTPException)
    async def http_error(request, exc: HTTPException):  # 404 route, 405 method: one line too
        return front.refuse(exc.status_code, str(exc.detail))

    async def submit(request: Request):
        return await _submit(front, request)

    app.post("/jobs")(submit)
    app.post("/evaluate")(submit)

    @app.get("/jobs/{job_id}")
    async def get_job(job_id: str, request: Request, wait: float = 0.0):
        client, refused = front.admit(request)
        if refused is not None:
            return refused
        wait = max(0.0, min(wait, cfg.max_wait_s)) if math.isfinite(wait) else 0.0
        job = await _job_when_done(service, job_id, client, wait, request) if wait > 0 \
            else service.get(job_id, client)
        if job is None:
            return front.refuse(404, f"unknown job {job_id[:40]!r}")
        return job.view()

    @app.get("/health")
    async def health():
        return {"ok": True, "backend": service.backend.name, "hardware": service.hardware, **service.gauges()}

    @app.get("/metrics")
    async def metrics(request: Request):
        _, refused = front.admit(request)
        if refused is not None:
            return refused
        return PlainTextResponse(service.metrics.render(service.gauges()), media_type="text/plain; version=0.0.4")

    return app
