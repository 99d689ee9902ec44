"""The FastAPI application of ``mkb serve``.

Routes: ``POST /jobs`` (alias ``POST /evaluate``) takes one submission ``{task_id, source, backend?,
fresh_shapes?, timing_budget_s?}`` or a batch ``{"items": [...]}`` and returns ``{"jobs": [ids]}``;
``GET /jobs/{id}`` returns the job (``?wait=S`` long-polls up to S seconds for it to finish); ``GET
/health``; ``GET /metrics`` (Prometheus text). Every route but ``/health`` needs ``Authorization: Bearer
<token>`` when the service has a token.

A rejected request is a 4xx whose body is ``{"error": "<one line>"}`` and nothing of it is queued: a body
over the size limit (413), malformed JSON or fields (400), an unknown task or a backend this service does
not run (404 / 400), more items or a longer source than allowed (413), more unfinished jobs than the
client's share (429), a missing or wrong token (401).
"""

# No ``from __future__ import annotations`` here: FastAPI reads the routes' annotations (``Request``) as
# objects, and they are imported inside create_app (fastapi is an optional dependency).
import hmac
import json
from typing import Any

from multikernelbench.serve.jobs import EvalService, OverLimit, Submission

FIELDS = {"task_id", "source", "backend", "fresh_shapes", "timing_budget_s"}


class Rejected(Exception):
    def __init__(self, status: int, reason: str) -> None:
        super().__init__(reason)
        self.status, self.reason = status, reason


def parse_submissions(body: bytes, service: EvalService) -> list[Submission]:
    """The request body as submissions, every one checked; the first problem raises :class:`Rejected`."""
    cfg = service.config
    try:
        data = json.loads(body)
    except (ValueError, UnicodeDecodeError) as exc:
        raise Rejected(400, f"body is not JSON: {exc}") from None
    if isinstance(data, dict) and "items" in data:
        items = data["items"]
        if not isinstance(items, list) or not items:
            raise Rejected(400, '"items" must be a non-empty list of submissions')
    elif isinstance(data, dict):
        items = [data]
    else:
        raise Rejected(400, 'body must be a submission object or {"items": [submissions]}')
    if len(items) > cfg.max_items_per_request:
        raise Rejected(413, f"{len(items)} submissions in one request; the limit is {cfg.max_items_per_request}")
    return [_submission(i, item, service) for i, item in enumerate(items)]


def _submission(i: int, item: Any, service: EvalService) -> Submission:
    from multikernelbench.backends.registry import backend_names

    cfg = service.config
    where = f"item {i}"
    if not isinstance(item, dict):
        raise Rejected(400, f"{where}: a submission must be an object")
    extra = sorted(set(item) - FIELDS)
    if extra:
        raise Rejected(400, f"{where}: unknown field(s) {extra}; known: {sorted(FIELDS)}")
    task_id, source = item.get("task_id"), item.get("source")
    if not isinstance(task_id, str) or not isinstance(source, str):
        raise Rejected(400, f"{where}: task_id and source must be strings")
    if len(source.encode()) > cfg.max_source_bytes:
        raise Rejected(413, f"{where}: source is {len(source.encode())} bytes; the limit is {cfg.max_source_bytes}")
    if task_id not in service.tasks:
        raise Rejected(404, f"{where}: unknown task {task_id!r}")
    backend = item.get("backend", service.backend.name)
    if backend not in backend_names():
        raise Rejected(400, f"{where}: unknown backend {backend!r}; known: {', '.join(backend_names())}")
    if backend != service.backend.name:
        raise Rejected(400, f"{where}: this service evaluates on {service.backend.name!r}, not {backend!r}")
    fresh = item.get("fresh_shapes", 0)
    if not isinstance(fresh, int) or isinstance(fresh, bool) or not 0 <= fresh <= cfg.max_fresh_shapes:
        raise Rejected(400, f"{where}: fresh_shapes must be an integer from 0 to {cfg.max_fresh_shapes}")
    budget = item.get("timing_budget_s")
    if budget is not None and (isinstance(budget, bool) or not isinstance(budget, (int, float))
                               or not 0 < budget <= cfg.max_timing_budget_s):
        raise Rejected(400, f"{where}: timing_budget_s must be a number in (0, {cfg.max_timing_budget_s}]")
    return Submission(task_id=task_id, source=source, fresh_shapes=fresh,
                      timing_budget_s=float(budget) if budget is not None else None)


def create_app(service: EvalService):
    """The ASGI app over one :class:`EvalService`."""
    import anyio
    from fastapi import FastAPI, Request
    from fastapi.responses import JSONResponse, PlainTextResponse

    from fastapi.exceptions import RequestValidationError

    app = FastAPI(title="multikernelbench evaluation service", docs_url=None, redoc_url=None, openapi_url=None)
    cfg = service.config
    token = cfg.token

    def refuse(status: int, reason: str) -> JSONResponse:
        service.metrics.count("rejected", f'status="{status}"')
        return JSONResponse({"error": reason}, status_code=status)

    @app.exception_handler(RequestValidationError)
    async def one_line(request, exc: RequestValidationError):
        first = exc.errors()[0] if exc.errors() else {}
        where = ".".join(str(p) for p in first.get("loc", ()))
        return refuse(400, f"{where}: {first.get('msg', 'invalid request')}")

    def unauthorized(request: Request) -> JSONResponse | None:
        if not token:
            return None
        got = request.headers.get("authorization", "")
        if not (got.startswith("Bearer ") and hmac.compare_digest(got[7:].encode(), token.encode())):
            return refuse(401, "missing or wrong bearer token")
        return None

    def client_of(request: Request) -> str:
        # The token holder is trusted to say which of its processes is asking (several trainers behind one
        # address); without the header, the peer address is the client.
        named = request.headers.get("x-mkb-client", "")[:64]
        host = request.client.host if request.client else "?"
        return f"{host}/{named}" if named else host

    async def read_body(request: Request) -> bytes:
        declared = request.headers.get("content-length")
        if declared is not None and declared.isdigit() and int(declared) > cfg.max_body_bytes:
            raise Rejected(413, f"body of {declared} bytes; the limit is {cfg.max_body_bytes}")
        chunks, size = [], 0
        async for chunk in request.stream():
            size += len(chunk)
            if size > cfg.max_body_bytes:
                raise Rejected(413, f"body over the limit of {cfg.max_body_bytes} bytes")
            chunks.append(chunk)
        return b"".join(chunks)

    async def submit(request: Request):
        denied = unauthorized(request)
        if denied is not None:
            return denied
        try:
            subs = parse_submissions(await read_body(request), service)
            jobs = await anyio.to_thread.run_sync(service.submit, client_of(request), subs)
        except Rejected as exc:
            return refuse(exc.status, exc.reason)
        except OverLimit as exc:
            return refuse(429, str(exc))
        return {"jobs": [j.id for j in jobs], "cached": [j.cached for j in jobs]}

    app.post("/jobs")(submit)
    app.post("/evaluate")(submit)

    @app.get("/jobs/{job_id}")
    async def get_job(job_id: str, request: Request, wait: float = 0.0):
        denied = unauthorized(request)
        if denied is not None:
            return denied
        wait = max(0.0, min(wait, cfg.max_wait_s))
        if wait > 0:  # a worker thread waits; a client that hangs up only leaves it to time out
            job = await anyio.to_thread.run_sync(service.wait, job_id, wait, abandon_on_cancel=True)
        else:
            job = service.get(job_id)
        if job is None:
            return refuse(404, f"unknown job {job_id!r}")
        return job.view()

    @app.get("/health")
    async def health():
        return {"ok": True, "backend": service.backend.name, "hardware": service.hardware,
                **service.gauges()}

    @app.get("/metrics")
    async def metrics(request: Request):
        denied = unauthorized(request)
        if denied is not None:
            return denied
        return PlainTextResponse(service.metrics.render(service.gauges()),
                                 media_type="text/plain; version=0.0.4")

    return app
