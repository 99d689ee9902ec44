"""Which compiler-flag sets a run's candidates will build with, read from their source text before any build.

The trusted warmer (``cuda_warm``) precompiles headers per flag set: main.cpp's PCH per ``extra_cflags``, the
light-header analysis and the precompiled host prefix per ``extra_cuda_cflags``. Each set costs ~20-40 s of
CPU at the start of a cold run, exactly when the first builds need the cores, so it should make the sets the
candidates use, most used first, and not the others. On the H200 the warmer's defaults (no flags, ``-O3``
for both) spent about half its work on sets no shipped solution uses (they pass ``extra_cuda_cflags=["-O3"]``
and no ``extra_cflags``).

The parent only *parses* the sources (``ast``, nothing runs); a ``load_inline`` call counts when its
flag argument is a literal list of strings or absent (torch's default: no flags). Anything else — computed
flags, unparsable code — is simply not counted; a set the warmer did not make costs that build its
precompiled headers, never its correctness.
"""

from __future__ import annotations

import ast
from collections import Counter
from dataclasses import dataclass

_LOADERS = ("load_inline",)  # not ``load``: json.load, torch.load, ... would count as flagless builds
_MAX_SOURCE = 2_000_000  # characters; a larger candidate is not parsed (it is built all the same)


@dataclass(frozen=True)
class FlagVariants:
    """Flag sets in order of use (most used first)."""

    cflags: tuple[tuple[str, ...], ...]
    cuda_cflags: tuple[tuple[str, ...], ...]


def _literal(node: ast.expr) -> tuple[str, ...] | None:
    if isinstance(node, (ast.List, ast.Tuple)) and all(isinstance(e, ast.Constant) and isinstance(e.value, str)
                                                       for e in node.elts):
        return tuple(e.value for e in node.elts)  # type: ignore[attr-defined]
    if isinstance(node, ast.Constant) and node.value is None:
        return ()
    return None


def _loader_calls(tree: ast.AST):
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            f = node.func
            name = f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else ""
            if name in _LOADERS:
                yield node


def scan(sources: list[str], limit: int = 2) -> FlagVariants | None:
    """The (at most ``limit``) most used sets of each kind among ``sources``; None when no loader call with
    readable flags was found (then the warmer keeps its defaults)."""
    counts: dict[str, Counter] = {"extra_cflags": Counter(), "extra_cuda_cflags": Counter()}
    for src in sources:
        if len(src) > _MAX_SOURCE:
            continue
        try:
            tree = ast.parse(src)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            continue
        for call in _loader_calls(tree):
            given = {k.arg: k.value for k in call.keywords if k.arg in counts}
            for kind, counter in counts.items():
                flags = _literal(given[kind]) if kind in given else ()
                if flags is not None:
                    counter[flags] += 1
    if not any(counts.values()):
        return None
    order = lambda c: tuple(v for v, _ in sorted(c.items(), key=lambda kv: (-kv[1], kv[0]))[:limit])  # noqa: E731
    return FlagVariants(cflags=order(counts["extra_cflags"]), cuda_cflags=order(counts["extra_cuda_cflags"]))
