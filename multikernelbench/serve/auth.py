"""Who a request comes from: the name its bearer token has in the token file (or the one env token).

A client is who its credential says, never what a header says: a self-declared name lets one token holder
be as many clients as it likes and so multiply every per-client limit. The token file holds one
``NAME TOKEN [WEIGHT]`` a line (``#`` starts a comment); it is read again whenever its size, inode or mtime
changes, so tokens are added, rotated, revoked and reweighted without a restart.

``WEIGHT`` (default 1, from ``MIN_WEIGHT`` to ``MAX_WEIGHT``) is the client's relative share of the engine's
lanes when clients contend for them (serve/sched.py): a client of weight 0.25 beside clients of weight 1 gets a
quarter of what each of them gets. Equal shares leave N honest clients N/(N+k) of the engine beside k admitted
clients that queue work back to back, whatever that work is; a lower weight for tokens the operator trusts less
(new users, untrusted submitters) is what bounds them below that, and nothing a client sends can raise it. A file that cannot be read or parsed
keeps the last good table (and says why on stderr): a half-written file never opens the service.

Tokens come from a file or the environment, never from argv (``ps`` shows argv to every local user).
"""

from __future__ import annotations

import hmac
import math
import os
import sys
import threading
from dataclasses import dataclass
from pathlib import Path

#: Shortest token accepted: a guessable token is no identity.
MIN_TOKEN_CHARS = 16
#: The client of every request when the service has no token at all (loopback only).
ANONYMOUS = "local"
#: Bounds of a token's weight (its relative share of the lanes): a weight of 0 would starve the client for ever.
MIN_WEIGHT, MAX_WEIGHT = 0.01, 100.0


class TokenFileError(ValueError):
    pass


def parse_tokens(text: str, where: str = "token file") -> dict[str, str]:
    """``{token: name}`` from the file's text; raises :class:`TokenFileError` naming the bad line."""
    return parse_token_file(text, where)[0]


def parse_token_file(text: str, where: str = "token file") -> tuple[dict[str, str], dict[str, float]]:
    """``({token: name}, {name: weight})`` from the file's text; raises :class:`TokenFileError` naming the bad
    line."""
    out: dict[str, str] = {}
    weights: dict[str, float] = {}
    for n, line in enumerate(text.splitlines(), 1):
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        parts = line.split()
        if len(parts) not in (2, 3):
            raise TokenFileError(f"{where}:{n}: expected 'NAME TOKEN [WEIGHT]'")
        name, token = parts[:2]
        if len(token) < MIN_TOKEN_CHARS:
            raise TokenFileError(f"{where}:{n}: the token of {name!r} is shorter than {MIN_TOKEN_CHARS} characters")
        if name in weights or token in out:
            raise TokenFileError(f"{where}:{n}: {name!r} or its token appears twice")
        weights[name] = _weight(parts[2], f"{where}:{n}") if len(parts) == 3 else 1.0
        out[token] = name
    if not out:
        raise TokenFileError(f"{where}: no tokens")
    return out, weights


def _weight(text: str, where: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not MIN_WEIGHT <= value <= MAX_WEIGHT:  # NaN fails both comparisons
        raise TokenFileError(f"{where}: the weight {text!r} is not a number from {MIN_WEIGHT:g} to {MAX_WEIGHT:g}")
    return value


@dataclass
class TokenBook:
    """The tokens the service accepts; ``path`` (reloaded on change) and/or one ``env_token`` named ``default``."""

    path: Path | None = None
    env_token: str | None = None

    def __post_init__(self) -> None:
        self._lock = threading.Lock()
        self._stamp: tuple | None = None
        self._table: dict[str, str] = {}
        self._weights: dict[str, float] = {}
        if self.path is not None:  # a bad file stops the start
            self._table, self._weights = parse_token_file(Path(self.path).read_text(), str(self.path))
            self._stamp = self._stat()
        if self.env_token:
            if len(self.env_token) < MIN_TOKEN_CHARS:
                raise TokenFileError(f"the environment's token is shorter than {MIN_TOKEN_CHARS} characters")
            self._table.setdefault(self.env_token, "default")

    @property
    def enabled(self) -> bool:
        return self.path is not None or bool(self.env_token)

    def _stat(self) -> tuple | None:
        try:
            st = os.stat(self.path) if self.path is not None else None
        except OSError:
            return None
        return (st.st_ino, st.st_size, st.st_mtime_ns) if st else None

    def _reload(self) -> None:
        stamp = self._stat()
        if stamp == self._stamp or stamp is None or self.path is None:
            return
        try:
            table, weights = parse_token_file(Path(self.path).read_text(), str(self.path))
        except (OSError, UnicodeDecodeError, TokenFileError) as exc:
            print(f"mkb serve: keeping the previous tokens: {exc}", file=sys.stderr)
            return
        finally:
            self._stamp = stamp
        if self.env_token:
            table.setdefault(self.env_token, "default")
        self._table, self._weights = table, weights

    def weight(self, name: str) -> float:
        """The client's relative share of the lanes (the token file's third column; 1 when it has none, and for
        the environment's token and clients no longer in the file). Not reloaded here: the scheduler asks
        under the service's lock, many times per lane taken, and every request's :meth:`client` reloads."""
        return self._weights.get(name, 1.0)

    def client(self, authorization: str) -> str | None:
        """The client's name for an ``Authorization`` header value, or None (reject)."""
        if not self.enabled:
            return ANONYMOUS
        if not authorization.startswith("Bearer "):
            return None
        got = authorization[7:].encode("utf-8", "replace")
        with self._lock:
            self._reload()
            table = self._table
        found = None
        for token, name in table.items():  # compare with every token: the time says nothing of which matched
            if hmac.compare_digest(got, token.encode()):
                found = name
        return found
