"""Request bodies of ``POST /jobs`` as checked submissions; anything else is a one-line 4xx reason.

Every way a body can be wrong ends here as :class:`Rejected`, never as an exception escaping to a 500:
JSON nested past the parser's recursion limit, integers too long to convert, lone surrogates (valid JSON,
not encodable text), wrong types, unknown fields. Reasons quote client text only shortened and escaped.
"""

from __future__ import annotations

import json
from typing import Any

FIELDS = {"task_id", "source", "backend", "fresh_shapes", "timing_budget_s"}
#: Longest piece of client text quoted in a reason.
QUOTE_CHARS = 60


class Rejected(Exception):
    def __init__(self, status: int, reason: str) -> None:
        super().__init__(reason)
        self.status, self.reason = status, reason


def quote(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= QUOTE_CHARS else text[:QUOTE_CHARS] + "..."


def one_line(reason: str, limit: int = 400) -> str:
    """A reason as one printable line of at most ``limit`` characters."""
    text = " ".join(reason.split())
    text = text.encode("utf-8", "backslashreplace").decode("utf-8")
    return text if len(text) <= limit else text[:limit] + "..."


def parse_submissions(body: bytes, service) -> list:
    """The request body as submissions, every one checked; the first problem raises :class:`Rejected`."""
    cfg = service.config
    try:
        data = json.loads(body)
    except (ValueError, UnicodeDecodeError) as exc:  # includes too-long integers (ValueError)
        raise Rejected(400, f"body is not JSON: {exc}") from None
    except RecursionError:
        raise Rejected(400, "body is not JSON the service takes: nested too deeply") from None
    if isinstance(data, dict) and "items" in data:
        if set(data) != {"items"}:
            raise Rejected(400, 'a batch is {"items": [submissions]} and nothing else')
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


def _text(value: str, where: str, name: str) -> bytes:
    try:
        return value.encode("utf-8")
    except UnicodeEncodeError:
        raise Rejected(400, f"{where}: {name} is not valid text (a lone surrogate?)") from None


def _submission(i: int, item: Any, service):
    from multikernelbench.backends.registry import backend_names
    from multikernelbench.serve.jobs import Submission

    cfg = service.config
    where = f"item {i}"
    if not isinstance(item, dict):
        raise Rejected(400, f"{where}: a submission must be an object")
    extra = sorted(set(item) - FIELDS)
    if extra:
        raise Rejected(400, f"{where}: unknown field(s) {quote(extra)}; known: {sorted(FIELDS)}")
    task_id, source = item.get("task_id"), item.get("source")
    if not isinstance(task_id, str) or not isinstance(source, str):
        raise Rejected(400, f"{where}: task_id and source must be strings")
    _text(task_id, where, "task_id")
    size = len(_text(source, where, "source"))
    if size > cfg.max_source_bytes:
        raise Rejected(413, f"{where}: source is {size} bytes; the limit is {cfg.max_source_bytes}")
    if task_id not in service.tasks:
        raise Rejected(404, f"{where}: unknown task {quote(task_id)}")
    backend = item.get("backend", service.backend.name)
    if not isinstance(backend, str) or backend not in backend_names():
        raise Rejected(400, f"{where}: unknown backend {quote(backend)}; known: {', '.join(backend_names())}")
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
