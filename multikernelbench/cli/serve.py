"""``mkb serve``: the evaluation service (HTTP) over the engine, for reward loops; see multikernelbench/serve."""

from __future__ import annotations

import argparse
import ipaddress
import os
import sys
from pathlib import Path

from multikernelbench.cli._common import add_engine_options, engine_config
from multikernelbench.cli._usage import UsageError, check_backend

TOKEN_ENV = "MKB_SERVE_TOKEN"
TOKEN_FILE_ENV = "MKB_SERVE_TOKEN_FILE"


def add_parser(sub) -> None:
    p = sub.add_parser("serve", help="HTTP evaluation service (POST /jobs, GET /jobs/ID) over the engine")
    p.add_argument("--host", default="127.0.0.1", help="address to listen on (default: loopback only)")
    p.add_argument("--port", type=int, default=8088)
    p.add_argument("--token-file", default=None, metavar="PATH",
                   help=f"'NAME TOKEN' per line (or {TOKEN_FILE_ENV}); re-read when it changes. One token may come "
                        f"from {TOKEN_ENV}; tokens are never taken from the command line. Required off loopback")
    p.add_argument("--token", default=None, help=argparse.SUPPRESS)  # refused with a reason (argv is public)
    p.add_argument("--max-connections", type=int, default=512, help="open connections (capped by the fd limit)")
    p.add_argument("--refuse-in-app", action="store_true",
                   help="refuse requests without a valid token or over their rate in the app, not in the HTTP "
                        "protocol before it (slower; for comparison: benchmarks/serve/README.md)")
    p.add_argument("--header-timeout", type=float, default=10.0, help="seconds a connection has to send its headers")
    p.add_argument("--allow-code-execution", action="store_true",
                   help="required (or MKB_ALLOW_CODE_EXECUTION=1): submissions are untrusted code")
    p.add_argument("--max-pending", type=int, default=256, help="unfinished jobs per client")
    p.add_argument("--max-items", type=int, default=64, help="submissions per request")
    p.add_argument("--max-body-kb", type=int, default=2048, help="request body size limit")
    p.add_argument("--lanes", type=int, default=0,
                   help="device lanes taking jobs as they free (default: one per GPU, else one); "
                        "several CPU lanes suit correctness-only service")
    p.add_argument("--batch-size", type=int, default=1,
                   help="jobs a lane takes at once (their builds overlap; the batch runs to its end on that lane)")
    p.add_argument("--lanes-per-client", type=int, default=0, help="lanes one client may hold (default: all but one)")
    p.add_argument("--no-reserve-last-lane", dest="reserve_last_lane", action="store_false",
                   help="let a client over its fair share take the last free lane (default: kept for a lighter "
                        "client)")
    p.add_argument("--preempt-after", type=float, default=None, metavar="S",
                   help="stop a job of a client over its fair share after S s on a lane a cheaper client waits for, "
                        "and queue it again (default: 10 on CPU lanes, 120 on GPU lanes; 0: never)")
    p.add_argument("--max-preemptions", type=int, default=2, help="stops after which such a job fails instead")
    p.add_argument("--rate-requests", type=float, default=20.0, metavar="N",
                   help="requests per second per client, sustained (0: no limit); past it a 429 with Retry-After")
    p.add_argument("--rate-kb", type=float, default=1024.0, metavar="KB",
                   help="request body KB per second per client, sustained (0: no limit)")
    p.add_argument("--rate-burst", type=float, default=5.0, metavar="S",
                   help="seconds of those rates a quiet client may send at once (the byte burst is at least one "
                        "largest body)")
    p.add_argument("--http-nice", type=int, default=0, metavar="N",
                   help="nice of the HTTP front's thread (and the service's own session) above the evaluations, so "
                        "they get a shared core first (default 0: off; 10 on a host that runs nothing else)")
    p.add_argument("--sufferance-nice", type=int, default=19, metavar="N",
                   help="nice of the workers of a run taken while its client was over its fair share (a lane nobody "
                        "else wanted), below the front and other runs; only their builds when timing (default 19; "
                        "0: off)")
    p.add_argument("--ray", nargs="?", const="local", default=None, metavar="ADDRESS",
                   help="evaluate on a Ray cluster (as `mkb eval --ray`)")
    add_engine_options(p)
    p.set_defaults(func=run)


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def run(args) -> int:
    from multikernelbench.engine.runner import CodeExecutionNotAllowed, check_opt_in
    from multikernelbench.serve.auth import TokenBook, TokenFileError

    if args.token is not None:
        raise UsageError(f"--token is refused: a command line is visible to every local user (ps); put tokens in "
                         f"--token-file (or {TOKEN_FILE_ENV}) or one token in {TOKEN_ENV}")
    check_backend(args.backend)
    token_file = args.token_file or os.environ.get(TOKEN_FILE_ENV) or None
    try:
        tokens = TokenBook(Path(token_file) if token_file else None, os.environ.get(TOKEN_ENV) or None)
    except (OSError, TokenFileError) as exc:
        raise UsageError(f"tokens: {exc}") from None
    if not tokens.enabled and not is_loopback(args.host):
        raise UsageError(f"refusing to listen on {args.host} without a token: pass --token-file or set {TOKEN_ENV}")
    config = engine_config(args, args.allow_code_execution)
    config.ray_address = args.ray
    try:
        check_opt_in(config)
    except CodeExecutionNotAllowed as exc:
        print(f"mkb serve: {exc}", file=sys.stderr)
        return 3
    try:
        import fastapi  # noqa: F401
        import uvicorn
    except ImportError:
        raise UsageError('the service needs FastAPI and uvicorn: pip install "multikernelbench[serve]"') from None
    if config.ray_address:
        from multikernelbench.cluster import RayNotInstalled, require_ray

        try:
            require_ray()
        except RayNotInstalled as exc:
            raise UsageError(str(exc)) from None
    from multikernelbench.serve.app import create_app
    from multikernelbench.serve.jobs import EvalService, ServiceConfig
    from multikernelbench.serve.limits import ConnectionLimits, descriptor_budget, uvicorn_config
    from multikernelbench.serve.ratelimit import RateLimits
    from multikernelbench.tasks import load_suite

    tasks = {t.id: t for t in load_suite()}
    if args.task_ids or args.category:
        tasks = {k: t for k, t in tasks.items()
                 if (not args.task_ids or k in args.task_ids) and (not args.category or t.category in args.category)}
    service = EvalService(ServiceConfig(engine=config, db=Path(args.db), tokens=tokens,
                                        max_pending_per_client=args.max_pending, max_items_per_request=args.max_items,
                                        max_body_bytes=args.max_body_kb * 1024, batch_size=args.batch_size,
                                        lanes=args.lanes, lanes_per_client=args.lanes_per_client,
                                        preempt_after_s=args.preempt_after, max_preemptions=args.max_preemptions,
                                        http_nice=args.http_nice, reserve_last_lane=args.reserve_last_lane,
                                        sufferance_nice=args.sufferance_nice),
                          tasks)
    rate = RateLimits(requests_per_s=args.rate_requests, bytes_per_s=args.rate_kb * 1024, burst_s=args.rate_burst)
    print(f"mkb serve: {len(tasks)} tasks on {config.backend}, results in {args.db}, "
          f"http://{args.host}:{args.port} ({'token required' if tokens.enabled else 'no token: loopback only'})",
          file=sys.stderr)
    try:
        limits = ConnectionLimits(max_connections=descriptor_budget(args.max_connections),
                                  header_timeout_s=args.header_timeout, early_refusals=not args.refuse_in_app)
        app = create_app(service, rate)
        uvicorn.Server(uvicorn_config(app, args.host, args.port, limits, gate=app.state.gate)).run()
    finally:
        service.close()
    return 0
