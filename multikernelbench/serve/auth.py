"""Who a request comes from: the name its bearer token has in the token file (or the one env token).

A client is who its credential says, never what a header says: a self-declared name lets one token holder
be as many clients as it likes and so multiply every per-client limit. The token file holds one
``NAME TOKEN`` pair a line (``#`` starts a comment); it is read again whenever its size, inode or mtime
changes, so tokens are added, rotated and revoked without a restart. A file that cannot be read or parsed
keeps the last good table (and says why on stderr): a half-written file never opens the service.

Tokens come from a file or the environment, never from argv (``ps`` shows argv to every local user).
"""

from __future__ import annotations

import hmac
import os
import sys
import threading
from dataclasses import dataclass
from pathlib import Path

#: Shortest token accepted: a guessable token is no identity.
MIN_TOKEN_CHARS = 16
#: The client of every request when the service has no token at all (loopback only).
ANONYMOUS = "local"


class TokenFileError(ValueError):
    pass


def parse_tokens(text: str, where: str = "token file") -> dict[str, str]:
    """``{token: name}`` from the file's text; raises :class:`TokenFileError` naming the bad line."""
    out: dict[str, str] = {}
    names: set[str] = set()
    for n, line in enumerate(text.splitlines(), 1):
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        parts = line.split()
        if len(parts) != 2:
            raise TokenFileError(f"{where}:{n}: expected 'NAME TOKEN'")
        name, token = parts
        if len(token) < MIN_TOKEN_CHARS:
            raise TokenFileError(f"{where}:{n}: the token of {name!r} is shorter than {MIN_TOKEN_CHARS} characters")
        if name in names or token in out:
            raise TokenFileError(f"{where}:{n}: {name!r} or its token appears twice")
        names.add(name)
        out[token] = name
    if not out:
        raise TokenFileError(f"{where}: no tokens")
    return out


@dataclass
class TokenBook:
    """The tokens the service accepts; ``path`` (reloaded on change) and/or one ``env_token`` named ``default``."""

    path: Path | None = None
    env_token: str | None = None

    def __post_init__(self) -> None:
        self._lock = threading.Lock()
        self._stamp: tuple | None = None
        self._table: dict[str, str] = {}
        if self.path is not None:
            self._table = parse_tokens(Path(self.path).read_text(), str(self.path))  # a bad file stops the start
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
            table = parse_tokens(Path(self.path).read_text(), str(self.path))
        except (OSError, UnicodeDecodeError, TokenFileError) as exc:
            print(f"mkb serve: keeping the previous tokens: {exc}", file=sys.stderr)
            return
        finally:
            self._stamp = stamp
        if self.env_token:
            table.setdefault(self.env_token, "default")
        self._table = table

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
