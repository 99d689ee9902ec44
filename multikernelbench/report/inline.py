"""The little markdown the report's prose uses (``code``, **bold**, [links](url)), rendered for the HTML page.

The same sentences go into report.md, where they are markdown; printed raw in the HTML page they showed their
backticks. Everything is escaped first, so a message cannot inject markup.
"""

from __future__ import annotations

import html
import re

_CODE = re.compile(r"`([^`]+)`")
_BOLD = re.compile(r"\*\*([^*]+)\*\*")
_LINK = re.compile(r"\[([^\]]+)\]\((https?://[^)\s]+|[\w./#-]+)\)")


def inline_html(text: str) -> str:
    """``text`` (inline markdown) as escaped HTML."""
    out = []
    pos = 0
    for m in _CODE.finditer(text):  # code spans first: nothing inside them is markdown
        out.append(_prose(text[pos:m.start()]))
        out.append(f"<code>{html.escape(m.group(1))}</code>")
        pos = m.end()
    out.append(_prose(text[pos:]))
    return "".join(out)


def _prose(text: str) -> str:
    s = html.escape(text, quote=False)
    s = _BOLD.sub(r"<strong>\1</strong>", s)
    return _LINK.sub(lambda m: f'<a href="{html.escape(m.group(2))}">{m.group(1)}</a>', s)
