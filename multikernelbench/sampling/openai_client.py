"""OpenAI-compatible chat-completions client (hosted APIs, vLLM's server, llama.cpp, SGLang, ...).

Async with a concurrency limit; retries with exponential backoff (honouring ``Retry-After``) on 429, 5xx,
timeouts, connection failures and malformed bodies; each request ends as a :class:`Completion` — an
answer, or an ``error`` saying what went wrong after the last attempt — so one bad request never costs
the batch. The API key is read from the environment variable named in the config, sent only in the
``Authorization`` header and never logged, stored or included in error messages.
"""

from __future__ import annotations

import asyncio
import os
import random
import time
from dataclasses import dataclass
from typing import Any, Sequence

from multikernelbench.sampling.base import Completion, OnResult, Request, Sampler, Usage, register_sampler, \
    split_reasoning
from multikernelbench.sampling.params import SamplingParams

RETRY_STATUS = frozenset({408, 409, 425, 429, 500, 502, 503, 504})


class MalformedResponse(ValueError):
    """The server answered 200 but not with a chat completion we can read."""


@dataclass
class OpenAIConfig:
    model: str
    api_base: str = "https://api.openai.com/v1"
    api_key_env: str = "OPENAI_API_KEY"  # the variable's name; its value never enters this object
    concurrency: int = 8
    timeout_s: float = 600.0
    max_retries: int = 5  # retries after the first attempt
    backoff_s: float = 2.0  # first backoff; doubles per retry, with jitter
    max_backoff_s: float = 120.0
    extra_body: dict[str, Any] | None = None  # provider-specific fields (e.g. {"reasoning_effort": "high"})


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


def _retry_after(headers: Any) -> float | None:
    value = headers.get("retry-after") if headers is not None else None
    try:
        return float(value) if value is not None else None
    except ValueError:
        return None


@register_sampler("openai")
class OpenAISampler(Sampler):
    def __init__(self, config: OpenAIConfig | None = None, **kwargs: Any) -> None:
        self.config = config or OpenAIConfig(**kwargs)

    def _headers(self) -> dict[str, str]:
        headers = {"Content-Type": "application/json"}
        key = os.environ.get(self.config.api_key_env)
        if key:
            headers["Authorization"] = f"Bearer {key}"
        return headers

    def _payload(self, request: Request, params: SamplingParams) -> dict[str, Any]:
        payload: dict[str, Any] = {"model": self.config.model, "messages": list(request.messages),
                                   "temperature": params.temperature, "top_p": params.top_p,
                                   "max_tokens": params.max_tokens, "n": 1}
        seed = params.seed_for(request.sample_index)
        if seed is not None:
            payload["seed"] = seed
        payload.update(self.config.extra_body or {})
        return payload

    async def _one(self, client, request: Request, params: SamplingParams) -> Completion:
        cfg = self.config
        url = cfg.api_base.rstrip("/") + "/chat/completions"
        payload = self._payload(request, params)
        t0 = time.perf_counter()
        last_error = "no attempt made"
        for attempt in range(cfg.max_retries + 1):
            wait = min(cfg.max_backoff_s, cfg.backoff_s * 2 ** attempt) * (0.5 + random.random() / 2)
            try:
                resp = await client.post(url, json=payload)
                if resp.status_code == 200:
                    comp = parse_chat_response(resp.json())
                    comp.attempts, comp.latency_s = attempt + 1, time.perf_counter() - t0
                    return comp
                last_error = f"HTTP {resp.status_code}: {resp.text[:500]}"
                if resp.status_code not in RETRY_STATUS:
                    break  # 400/401/404...: retrying cannot help
                wait = max(wait, min(cfg.max_backoff_s, _retry_after(resp.headers) or 0.0))
            except MalformedResponse as exc:
                last_error = f"malformed response: {exc}"
            except ValueError as exc:  # body is not JSON
                last_error = f"malformed response: body is not JSON ({exc})"
            except Exception as exc:  # timeouts and connection errors (httpx.TransportError and friends)
                last_error = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
            if attempt < cfg.max_retries:
                await asyncio.sleep(wait)
        return Completion(error=last_error, attempts=attempt + 1, latency_s=time.perf_counter() - t0)

    async def arun(self, requests: Sequence[Request], params: SamplingParams, on_result: OnResult) -> None:
        import httpx

        sem = asyncio.Semaphore(max(1, self.config.concurrency))
        timeout = httpx.Timeout(self.config.timeout_s)
        async with httpx.AsyncClient(timeout=timeout, headers=self._headers()) as client:
            async def task(req: Request) -> None:
                async with sem:
                    comp = await self._one(client, req, params)
                on_result(req, comp)  # persisted by the caller before the next result arrives

            await asyncio.gather(*(task(r) for r in requests))

    def run(self, requests: Sequence[Request], params: SamplingParams, on_result: OnResult) -> None:
        asyncio.run(self.arun(requests, params, on_result))
