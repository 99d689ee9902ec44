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

The flags are the candidate's words and the warmer runs g++ and nvcc with them *outside* any sandbox, so a set
counts only when every flag is on :func:`harmless`'s list: optimisation, language standard, macros, target
architecture and warnings, nothing that names a path, a program or a plugin. Without that list a candidate's
``extra_cflags=["-wrapper", "'/bin/sh,-c,CMD'"]`` ran CMD in the warmer, with the harness's rights
(``tests/test_flag_variants.py``); nvcc's ``-ccbin``, gcc's ``-fplugin=``, ``-B``, ``-include`` and
``-specs=`` name programs or files the same way.
"""

from __future__ import annotations

import ast
import re
from collections import Counter
from dataclasses import dataclass

from multikernelbench.util import pyast

_LOADERS = ("load_inline",)  # not ``load``: json.load, torch.load, ... would count as flagless builds
_MAX_SOURCE = 2_000_000  # characters; a larger candidate is not parsed (it is built all the same)


@dataclass(frozen=True)
class FlagVariants:
    """Flag sets in order of use (most used first)."""

    cflags: tuple[tuple[str, ...], ...]
    cuda_cflags: tuple[tuple[str, ...], ...]


#: One flag that names no path, program, plugin or output: what the trusted warmer may run a compiler with.
#: Values are plain words (letters, digits, ``_.+=,-``): no quote or space, which the build.ninja text would
#: re-split into other flags, and no ``/``.
_HARMLESS = re.compile(r"""(
    -O[0-3sgz]? | -Ofast | -g[0-3]? | -w | -lineinfo | -G | -pg? |
    --?std=[a-z0-9+]+ |
    -[DU][A-Za-z_][A-Za-z0-9_]*(=[A-Za-z0-9_.+-]*)? |
    -W(no-)?[a-z][a-z0-9+=-]* | -Werror |
    -f(no-)?(fast-math|openmp|unroll-loops|strict-aliasing|PIC|pic|math-errno|finite-math-only|tree-vectorize
             |omit-frame-pointer|exceptions|rtti|signed-char|unsigned-char|visibility=(hidden|default)
             |visibility-inlines-hidden|permissive|extended-identifiers|diagnostics-color(=[a-z]+)?) |
    -m(arch|tune|cpu)=[a-z0-9_.-]+ | -m[a-z0-9][a-z0-9.-]* |
    --?use[_-]fast[_-]math | --?expt-relaxed-constexpr | --?expt-extended-lambda | --?extended-lambda |
    --?restrict | --?resource-usage | -res-usage | --?allow-unsupported-compiler | -Xptxas=-v |
    --?(ftz|prec-div|prec-sqrt|fmad)=(true|false) |
    --?maxrregcount=[0-9]+ | --?threads=[0-9]+ | -t[0-9]+ |
    (-arch|--gpu-architecture|-code|--gpu-code)=[a-z0-9_,]+ |
    (-gencode|--generate-code)=?arch=[a-z0-9_]+,code=\[?[a-z0-9_,]+\]? |
    --?ptxas-options=(-v|-O[0-3])(,(-v|-O[0-3]))*
)""", re.VERBOSE)

#: Flags whose value is the next word, and what that value may be.
_WITH_VALUE = {"-D": r"[A-Za-z_][A-Za-z0-9_]*(=[A-Za-z0-9_.+-]*)?", "-U": r"[A-Za-z_][A-Za-z0-9_]*",
               "-arch": r"[a-z0-9_,]+", "--gpu-architecture": r"[a-z0-9_,]+", "-gencode": r"arch=[a-z0-9_]+,code=\[?[a-z0-9_,]+\]?",
               "-maxrregcount": r"[0-9]+", "--maxrregcount": r"[0-9]+", "-Xptxas": r"-v|-O[0-3]"}
#: nvcc's pass-through to the host compiler: its value is a comma list of host flags, each harmless on its own.
_HOST_PASS = ("-Xcompiler", "--compiler-options")


def _harmless_host_list(value: str) -> bool:
    return all(_HARMLESS.fullmatch(part) for part in value.split(","))


def harmless(flags: tuple[str, ...]) -> bool:
    """Whether every flag of one ``extra_cflags``/``extra_cuda_cflags`` list is on the warmer's list (see the
    module docstring); a flag list that is not is left to the candidate's own, sandboxed build."""
    i = 0
    while i < len(flags):
        f = flags[i]
        if f in _WITH_VALUE or f in _HOST_PASS:
            if i + 1 >= len(flags):
                return False
            value = flags[i + 1]
            ok = _harmless_host_list(value) if f in _HOST_PASS else re.fullmatch(_WITH_VALUE[f], value)
            if not ok:
                return False
            i += 2
            continue
        name, eq, value = f.partition("=")
        if name in _HOST_PASS and eq:
            if not _harmless_host_list(value):
                return False
        elif not _HARMLESS.fullmatch(f):
            return False
        i += 1
    return True


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
            tree = pyast.parse(src)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            continue
        for call in _loader_calls(tree):
            given = {k.arg: k.value for k in call.keywords if k.arg in counts}
            for kind, counter in counts.items():
                flags = _literal(given[kind]) if kind in given else ()
                if flags is not None and harmless(flags):
                    counter[flags] += 1
    if not any(counts.values()):
        return None
    order = lambda c: tuple(v for v, _ in sorted(c.items(), key=lambda kv: (-kv[1], kv[0]))[:limit])  # noqa: E731
    return FlagVariants(cflags=order(counts["extra_cflags"]), cuda_cflags=order(counts["extra_cuda_cflags"]))
