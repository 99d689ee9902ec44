"""OpenAI-compatible chat-completions sampling through the official ``openai`` client (async).

One sampler for hosted APIs (OpenAI, and any provider that speaks the protocol) and local servers (``vllm
serve``, SGLang, llama.cpp). Why the official client: it tracks the API (new parameters, error types) so this
module does not have to. Why our own retry loop on top of it (the client runs with ``max_retries=0``): every
stored generation records how many attempts it took, and a request that still fails becomes a record with an
``error`` instead of an exception that would cost the rest of the batch.

Retries: exponential backoff with jitter, at least the server's ``Retry-After``/``retry-after-ms``, on
408/409/425/429/5xx, timeouts, connection failures and malformed bodies; other 4xx fail at once.

Token limit: OpenAI's reasoning models refuse ``max_tokens`` with HTTP 400 "Use 'max_completion_tokens'
instead"; older servers know only ``max_tokens``. ``token_limit_param="auto"`` sends ``max_tokens`` and, on
that exact refusal, switches the whole run to ``max_completion_tokens`` and resends at once (not counted as a
retry); or name the parameter outright. The same models accept only their default ``temperature``/``top_p``
(HTTP 400 ``unsupported_value``/``unsupported_parameter`` naming the parameter): with ``omit_refused_params``
such a parameter is left out for the rest of the run and every record says so (``omitted_params``).

Where: ``api_base``, else ``$OPENAI_BASE_URL``, else OpenAI's URL. The key comes from the environment variable
named by ``api_key_env`` (default ``OPENAI_API_KEY``), is sent only in the ``Authorization`` header (none when
the variable is unset, as local servers need none) and is never logged, stored or put in an error message.
"""

from __future__ import annotations

import asyncio
import json
import os
import random
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from multikernelbench.sampling.base import (
    Completion,
    OnResult,
    Request,
    Sampler,
    Usage,
    register_sampler,
    split_reasoning,
)
from multikernelbench.sampling.params import SamplingParams

RETRY_STATUS = frozenset({408, 409, 425, 429, 500, 502, 503, 504})
OPENAI_API_BASE = "https://api.openai.com/v1"
TOKEN_LIMIT_PARAMS = ("auto", "max_tokens", "max_completion_tokens")
#: Sampling parameters a model may refuse; left out, the model samples with its own default.
OMITTABLE_PARAMS = ("temperature", "top_p")


class MalformedResponse(ValueError):
    """The server answered 200 but not with a chat completion we can read."""


class MissingAPIKey(RuntimeError):
    """OpenAI's own API was chosen (no other URL given) and no key is set: every request would be a 401."""


@dataclass
class OpenAIConfig:
    model: str
    api_base: str | None = None  # None: $OPENAI_BASE_URL, else OPENAI_API_BASE
    api_key_env: str = "OPENAI_API_KEY"  # the variable's name; its value never enters this object
    concurrency: int = 8
    timeout_s: float = 600.0
    max_retries: int = 5  # retries after the first attempt
    backoff_s: float = 2.0  # first backoff; doubles per retry, with jitter
    max_backoff_s: float = 120.0
    token_limit_param: str = "auto"  # one of TOKEN_LIMIT_PARAMS
    omit_refused_params: bool = True  # leave out a temperature/top_p the model refuses (see the module docstring)
    extra_body: dict[str, Any] | None = None  # provider-specific fields (e.g. {"reasoning_effort": "high"})

    def __post_init__(self) -> None:
        if self.token_limit_param not in TOKEN_LIMIT_PARAMS:
            raise ValueError(f"token_limit_param must be one of {TOKEN_LIMIT_PARAMS}, not {self.token_limit_param!r}")


def resolve_api_base(api_base: str | None, environ: Mapping[str, str] | None = None) -> str:
    """The explicit URL, else ``$OPENAI_BASE_URL`` (as the openai client itself reads it), else OpenAI's."""
    env = os.environ if environ is None else environ
    return (api_base or env.get("OPENAI_BASE_URL") or OPENAI_API_BASE).rstrip("/")


def parse_chat_response(body: Any) -> Completion:
    """Read one chat.completion body; MalformedResponse when it is not one."""
    try:
        choice = body["choices"][0]
        message = choice["message"]
        content = message.get("content") or ""
    except (KeyError, IndexError, TypeError, AttributeError) as exc:
        raise MalformedResponse(f"no choices[0].message in response ({exc!r})") from None
    if not isinstance(content, str):
        raise MalformedResponse("choices[0].message.content is not a string")
    reasoning = message.get("reasoning_content") or message.get("reasoning") or ""
    inline_reasoning, answer = split_reasoning(content)
    reasoning = "\n".join(r for r in (reasoning, inline_reasoning) if r)
    u = body.get("usage") or {}
    usage = Usage(u.get("prompt_tokens"), u.get("completion_tokens"), u.get("total_tokens"))
    return Completion(text=answer, reasoning=reasoning, usage=usage, finish_reason=choice.get("finish_reason"),
                      raw={"id": body.get("id"), "model": body.get("model")})


def retry_after_s(headers: Any) -> float | None:
    """Seconds the server asked us to wait (``retry-after-ms`` or ``retry-after`` in seconds), if it said."""
    if headers is None:
        return None
    for name, scale in (("retry-after-ms", 1000.0), ("retry-after", 1.0)):
        value = headers.get(name)
        if value is None:
            continue
        try:
            return max(0.0, float(value) / scale)
        except ValueError:
            continue
    return None


def asks_for_max_completion_tokens(status: int, body_text: str) -> bool:
    """The 400 a reasoning model gives for ``max_tokens`` ("... Use 'max_completion_tokens' instead.")."""
    return status == 400 and "max_completion_tokens" in body_text and "max_tokens" in body_text


def refused_param(status: int, body_text: str) -> str | None:
    """The sampling parameter a 400 says the model does not accept (OpenAI's ``error.param``), if omittable."""
    if status != 400:
        return None
    try:
        error = json.loads(body_text).get("error") or {}
    except (ValueError, AttributeError):
        return None
    param = error.get("param") if isinstance(error, dict) else None
    code = error.get("code") if isinstance(error, dict) else None
    if param in OMITTABLE_PARAMS and code in ("unsupported_value", "unsupported_parameter"):
        return param
    return None


def _omit() -> Any:
    """The client's marker for "leave this header out" (exported at the top level only by newer clients)."""
    try:
        from openai import Omit
    except ImportError:  # openai < 2
        from openai._types import Omit
    return Omit()


@register_sampler("openai")
class OpenAISampler(Sampler):
    def __init__(self, config: OpenAIConfig | None = None, **kwargs: Any) -> None:
        self.config = config or OpenAIConfig(**kwargs)
        self.api_base = resolve_api_base(self.config.api_base)
        if self.api_base == OPENAI_API_BASE and not os.environ.get(self.config.api_key_env):
            raise MissingAPIKey(f"no API key for {OPENAI_API_BASE}: set {self.config.api_key_env}, or name the "
                                f"server with --api-base URL or $OPENAI_BASE_URL (e.g. `vllm serve`'s "
                                f"http://localhost:8000/v1)")
        # "auto" starts with the parameter every server knows and switches once a server asks for the other.
        self.token_param = ("max_tokens" if self.config.token_limit_param == "auto"
                            else self.config.token_limit_param)
        self.omitted: set[str] = set()  # parameters refused during this run (shared by all its requests)

    def _arguments(self, request: Request, params: SamplingParams) -> dict[str, Any]:
        """Keyword arguments of ``chat.completions.create`` except the token limit (added per attempt)."""
        args: dict[str, Any] = {"model": self.config.model, "messages": list(request.messages),
                                "temperature": params.temperature, "top_p": params.top_p, "n": 1}
        seed = params.seed_for(request.sample_index)
        if seed is not None:
            args["seed"] = seed
        if self.config.extra_body:
            args["extra_body"] = dict(self.config.extra_body)
        return args

    def _backoff(self, retry: int) -> float:
        cfg = self.config
        return min(cfg.max_backoff_s, cfg.backoff_s * 2 ** retry) * (0.5 + random.random() / 2)

    async def _one(self, client: Any, request: Request, params: SamplingParams, no_auth: dict) -> Completion:
        import openai

        cfg = self.config
        args = self._arguments(request, params)
        t0 = time.perf_counter()
        attempts, retries = 0, 0
        last_error = "no attempt made"
        while True:
            attempts += 1
            token_param = self.token_param
            omitted = sorted(self.omitted)
            sent = {k: v for k, v in args.items() if k not in omitted}
            wait = self._backoff(retries)
            try:
                raw = await client.chat.completions.with_raw_response.create(
                    **sent, **{token_param: params.max_tokens}, extra_headers=no_auth)
                text = raw.http_response.text
                try:
                    body = json.loads(text)
                except ValueError as exc:
                    raise MalformedResponse(f"body is not JSON ({exc})") from None
                comp = parse_chat_response(body)
                comp.attempts, comp.latency_s, comp.omitted_params = attempts, time.perf_counter() - t0, omitted
                return comp
            except MalformedResponse as exc:
                last_error = f"malformed response: {exc}"
            except openai.APIStatusError as exc:
                status, body_text = exc.status_code, exc.response.text
                last_error = f"HTTP {status}: {body_text[:500]}"
                if (cfg.token_limit_param == "auto" and token_param == "max_tokens"
                        and asks_for_max_completion_tokens(status, body_text)):
                    self.token_param = "max_completion_tokens"  # for every later request of this run too
                    continue
                refused = refused_param(status, body_text) if cfg.omit_refused_params else None
                if refused is not None and refused not in omitted:
                    self.omitted.add(refused)  # for every later request of this run too
                    continue
                if status not in RETRY_STATUS:
                    break  # 400/401/404...: retrying cannot help
                wait = max(wait, min(cfg.max_backoff_s, retry_after_s(exc.response.headers) or 0.0))
            except openai.APIError as exc:  # timeouts and connection errors
                last_error = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
            if retries >= cfg.max_retries:
                break
            retries += 1
            await asyncio.sleep(wait)
        return Completion(error=last_error, attempts=attempts, latency_s=time.perf_counter() - t0,
                          omitted_params=sorted(self.omitted))

    async def arun(self, requests: Sequence[Request], params: SamplingParams, on_result: OnResult) -> None:
        import openai

        key = os.environ.get(self.config.api_key_env) or ""
        # Without a key, send no Authorization header at all (the client would otherwise refuse to start).
        no_auth = {} if key else {"Authorization": _omit()}
        client = openai.AsyncOpenAI(api_key=key or "unset", base_url=self.api_base, max_retries=0,
                                    timeout=self.config.timeout_s)
        sem = asyncio.Semaphore(max(1, self.config.concurrency))
        try:
            async def task(req: Request) -> None:
                async with sem:
                    comp = await self._one(client, req, params, no_auth)
                on_result(req, comp)  # persisted by the caller before the next result arrives

            await asyncio.gather(*(task(r) for r in requests))
        finally:
            await client.close()

    def run(self, requests: Sequence[Request], params: SamplingParams, on_result: OnResult) -> None:
        asyncio.run(self.arun(requests, params, on_result))
