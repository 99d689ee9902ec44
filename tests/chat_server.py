"""A small OpenAI-compatible chat-completions server for tests (http.server on 127.0.0.1, in a thread).

Behaviour is scripted per task: the handler finds the task id in the prompt ("## Your task: `<id>`") and
looks up a list of steps; each request for that task consumes the next step (the last one repeats).
Steps: ("ok", text) | ("status", code[, retry_after]) | ("sleep", seconds) | ("malformed", body).

Like OpenAI's API, a reasoning model (a name starting with one of ``reasoning_prefixes``) refuses ``max_tokens``,
and a ``temperature`` or ``top_p`` other than 1, with the API's real HTTP 400 bodies, before any scripted step
is consumed. The server records every request's
body, Authorization header and arrival time.
"""

from __future__ import annotations

import json
import re
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

_TASK = re.compile(r"## Your task: `([^`]+)`")
#: What OpenAI answers when a reasoning model (o1, o3, o4-mini, gpt-5, ...) is sent ``max_tokens``.
MAX_TOKENS_REFUSAL = {"error": {
    "message": "Unsupported parameter: 'max_tokens' is not supported with this model. "
               "Use 'max_completion_tokens' instead.",
    "type": "invalid_request_error", "param": "max_tokens", "code": "unsupported_parameter"}}


def unsupported_value(param: str, value) -> dict:
    """What OpenAI answers when a reasoning model is sent a sampling parameter other than its default."""
    return {"error": {
        "message": f"Unsupported value: '{param}' does not support {value} with this model. "
                   "Only the default (1) value is supported.",
        "type": "invalid_request_error", "param": param, "code": "unsupported_value"}}


def reasoning_refusal(body: dict) -> dict | None:
    if "max_tokens" in body:
        return MAX_TOKENS_REFUSAL
    for param in ("temperature", "top_p"):
        if param in body and body[param] != 1:
            return unsupported_value(param, body[param])
    return None


class ChatServer:
    def __init__(self, script: dict[str, list[tuple]], default: tuple = ("ok", "no code here"),
                 reasoning_prefixes: tuple[str, ...] = ("o1", "o3", "o4", "gpt-5")) -> None:
        self.script = {k: list(v) for k, v in script.items()}
        self.default = default
        self.reasoning_prefixes = reasoning_prefixes
        self.calls: dict[str, int] = {}
        self.auth_headers: list[str | None] = []
        self.bodies: list[dict] = []
        self.times: list[tuple[str, float]] = []  # (task, time.monotonic()) per request
        self.refused: list[str] = []  # the parameter of every refusal sent to a reasoning model
        self.lock = threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):  # keep test output quiet
                pass

            def do_POST(self):
                if self.path.rstrip("/") != "/v1/chat/completions":
                    self.send_response(404)
                    self.end_headers()
                    return
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                user = body["messages"][1]["content"] if len(body["messages"]) > 1 else ""
                m = _TASK.search(user)
                task = m.group(1) if m else ""
                with server.lock:
                    server.auth_headers.append(self.headers.get("Authorization"))
                    server.bodies.append(body)
                    server.times.append((task, time.monotonic()))
                    reasoning = str(body.get("model", "")).startswith(server.reasoning_prefixes)
                    refusal = reasoning_refusal(body) if reasoning else None
                    if refusal is not None:
                        server.refused.append(refusal["error"]["param"])
                if refusal is not None:
                    server._send(self, 400, json.dumps(refusal).encode())
                    return
                with server.lock:
                    n = server.calls.get(task, 0)
                    server.calls[task] = n + 1
                    steps = server.script.get(task, [server.default])
                    step = steps[min(n, len(steps) - 1)]
                server._respond(self, step, body, turn=sum(1 for x in body["messages"] if x["role"] == "assistant"))

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"

    def __enter__(self) -> ChatServer:
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()

    @staticmethod
    def _send(h: BaseHTTPRequestHandler, status: int, data: bytes) -> None:
        h.send_response(status)
        h.send_header("Content-Type", "application/json")
        h.send_header("Content-Length", str(len(data)))
        h.end_headers()
        h.wfile.write(data)

    def _respond(self, h: BaseHTTPRequestHandler, step: tuple, body: dict, turn: int) -> None:
        kind = step[0]
        if kind == "by_turn":  # ("by_turn", [text for turn 0, text for turn 1, ...])
            texts = step[1]
            step = ("ok", texts[min(turn, len(texts) - 1)])
            kind = "ok"
        if kind == "sleep":
            time.sleep(step[1])
            kind, step = "ok", ("ok", "late")
        if kind == "status":
            data = json.dumps({"error": {"message": f"scripted {step[1]}"}}).encode()
            h.send_response(step[1])
            h.send_header("Content-Type", "application/json")
            h.send_header("Retry-After", str(step[2]) if len(step) > 2 else "0")
        elif kind == "malformed":
            data = step[1].encode()
            h.send_response(200)
            h.send_header("Content-Type", "application/json")
        else:
            data = json.dumps({
                "id": "chatcmpl-test", "object": "chat.completion", "model": body.get("model"),
                "choices": [{"index": 0, "finish_reason": "stop",
                             "message": {"role": "assistant", "content": step[1],
                                         "reasoning_content": "thinking about tiles"}}],
                "usage": {"prompt_tokens": 100, "completion_tokens": 20, "total_tokens": 120},
            }).encode()
            h.send_response(200)
            h.send_header("Content-Type", "application/json")
        h.send_header("Content-Length", str(len(data)))
        h.end_headers()
        try:
            h.wfile.write(data)
        except (BrokenPipeError, ConnectionResetError):  # the client gave up (timeout test)
            pass
