"""Pull the candidate's code out of a raw model response.

Models wrap code in fenced blocks with or without a language tag, emit several blocks (a C++ snippet,
then the full Python file), add prose around them, leave a fence unclosed when they hit max_tokens, or
emit bare code. The rule: prefer the fenced block that defines ``class ModelNew`` (the last such, since
models often restate a corrected version); else the longest Python-looking block; else the whole text
when it looks like code; else nothing.
"""

from __future__ import annotations

import re

_FENCE = re.compile(r"^[ \t]*(```+|~~~+)[ \t]*([\w+#.-]*)[^\n]*\n(.*?)(?:^[ \t]*\1[ \t]*$|\Z)", re.S | re.M)
_THINK = re.compile(r"<think>.*?</think>", re.S | re.I)
_PY_TAGS = {"", "python", "py", "python3"}


def split_reasoning(text: str) -> tuple[str, str]:
    """Separate ``<think>...</think>`` reasoning (as some open models emit inline) from the answer."""
    reasoning = "\n".join(m.group(0)[7:-8].strip() for m in _THINK.finditer(text))
    answer = _THINK.sub("", text)
    # An unterminated <think> means the whole response was reasoning.
    if "<think>" in answer.lower():
        idx = answer.lower().index("<think>")
        reasoning = (reasoning + "\n" + answer[idx + 7:]).strip()
        answer = answer[:idx]
    return reasoning, answer


def code_blocks(text: str) -> list[tuple[str, str]]:
    """(language tag, body) of every fenced block, in order; an unclosed final fence runs to the end."""
    return [(m.group(2).lower(), m.group(3)) for m in _FENCE.finditer(text)]


def _looks_like_python(code: str) -> bool:
    return bool(re.search(r"^\s*(import |from \S+ import |class |def )", code, re.M))


def extract_code(text: str | None) -> str:
    """The candidate source in a response, or ``""`` when there is none."""
    if not text:
        return ""
    _, answer = split_reasoning(text)
    blocks = code_blocks(answer)
    with_model = [body for _, body in blocks if re.search(r"class\s+ModelNew\b", body)]
    if with_model:
        return with_model[-1].strip() + "\n"
    python_blocks = [body for tag, body in blocks if tag in _PY_TAGS and _looks_like_python(body)]
    if python_blocks:
        return max(python_blocks, key=len).strip() + "\n"
    if not blocks and _looks_like_python(answer):
        return answer.strip() + "\n"
    return ""
