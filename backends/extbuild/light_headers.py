"""What a candidate's ``.cu`` loses when ``<torch/extension.h>`` is read as ``<torch/types.h>`` (the light path).

``load_inline`` starts every ``cuda.cu`` with ``#include <torch/types.h>`` (ATen, the tensor factories, the
dtype constants). What KernelBench-format host code includes on top, ``<torch/extension.h>``, adds the C++
frontend (``torch/all.h``: nn, optim, data, jit, serialize, ...) and the Python bindings (``torch/python.h``:
pybind11, ``Python.h``); nvcc's three passes over those headers are most of a build (measured:
``benchmarks/compile_time_cuda/``). The light path (:mod:`multikernelbench.backends.extbuild.nvcc_light`) compiles the
``.cu`` with a one-line ``torch/extension.h`` that includes ``<torch/types.h>`` only, and stock when that fails.

A light compile that fails costs a few seconds and falls back; the danger is one that *succeeds with another
meaning*. C++ gives three ways for that, and this module finds each from the preprocessor's view of both
header sets (the exact nvcc flags of the build, ``nvcc -E -Xcompiler -dD``), so no list is written by hand:

* **Macros.** A macro the full set defines (or defines differently) and the light one does not: ``#ifdef``
  on it, or a token spelled like it, silently changes. Exact: the two macro tables are compared.
* **Names the full set adds to a namespace.** ``torch::X`` where only the full set declares ``torch::X``
  would, in the light set, find ``at::X`` through ``namespace torch { using namespace at; }``; a namespace-
  scope declaration of the candidate may clash with (or overload) a global name of the full set (``py``,
  ``PyObject``, ...), which makes the stock build fail where the light one succeeds. Found by scanning the
  declarations that sit directly in namespaces ``torch``, ``at``, ``c10`` and the global one in the files only
  the full set includes; the candidate's ``torch::X`` / ``at::X`` / ``c10::X`` and the names it declares at
  namespace scope (outside function and class bodies) are checked against them.
* **Unqualified lookup into those namespaces** (``using namespace torch``, a namespace alias): not checked
  name by name; such a ``.cu`` builds stock.

A ``.cu`` that mentions pybind11 or the Python C API builds stock without trying light (it would fail).
Not covered: an overload or template specialisation that the full set adds for a name the light set declares
as well (in any namespace, e.g. ``std`` overloads for ``<valarray>``'s types), operators found by ADL, and
feature macros (``_GNU_SOURCE``, ...) that ``Python.h`` defines before the candidate's own later includes of
system headers. A name declared in namespace ``std`` only by the full set is not checked either. The
shipped solutions' light and stock objects define and reference the same symbols
(``tests/test_cuda_light_headers.py``); the H200 benchmark compares the built modules' exports
(``scripts/throughput_bench.py --per-build``).

Trust: the analysis a build reads is made by the trusted warmer (shared, read-only to builds) or by the build's
own worker (in its own folder): a candidate can only affect its own build, as with the extension cache.

Standard library only: it runs inside the nvcc driver, a plain script.
"""

from __future__ import annotations

import json
import re
from dataclasses import asdict, dataclass, field
from typing import Any, ClassVar, TypeVar, cast

#: What the light ``torch/extension.h`` holds.
SHIM_TEXT = ("// multikernelbench light path: <torch/extension.h> read as <torch/types.h> (what load_inline\n"
             "// already puts first in every cuda.cu). See backends/extbuild/light_headers.py.\n"
             "#pragma once\n#include <torch/types.h>\n")
ANALYSIS_VERSION = "mkb-light-2"
SCOPES = ("", "torch", "at", "c10")  # namespaces whose full-only names are checked ("" = global)

_LINEMARK = re.compile(r'^# \d+ "([^"]*)"')
_DEFINE = re.compile(r"^#\s*define\s+(\w+)(.*)$")
_TOKEN = re.compile(r"[A-Za-z_]\w*|::|\"(?:\\.|[^\"\\\n])*\"|'(?:\\.|[^'\\\n])*'|\S")
_IDENT = re.compile(r"[A-Za-z_]\w*$")
_KEYWORDS = frozenset("""alignas alignof asm auto bool break case catch char char8_t char16_t char32_t class concept const
consteval constexpr constinit const_cast continue co_await co_return co_yield decltype default delete do double
dynamic_cast else enum explicit export extern false final float for friend goto if inline int long mutable
namespace new noexcept nullptr operator override private protected public register reinterpret_cast requires
return short signed sizeof static static_assert static_cast struct switch template this thread_local throw true
try typedef typeid typename union unsigned using virtual void volatile wchar_t while __attribute__
__declspec __restrict__ __restrict __inline__ __forceinline__ __device__ __host__ __global__ __shared__
__constant__ __managed__ __launch_bounds__ __extension__""".split())
_PY_MARKERS = re.compile(r"\bpybind11\b|\bpy\s*::|\bPYBIND11_\w+|\b_?Py[A-Z_]\w*|\bTHP\w+|<Python\.h>")
_UNQUALIFIED_INTO = re.compile(r"\busing\s+namespace\s+(?:::)?(torch|at|c10|pybind11|py)\b"
                               r"|\bnamespace\s+\w+\s*=\s*(?:::)?(torch|at|c10|pybind11)\b")
_QUALIFIED = re.compile(r"(?<![\w:])(?:::)?(torch|at|c10)\s*::\s*([A-Za-z_]\w*)")


_J = TypeVar("_J", bound="VersionedJson")


class VersionedJson:
    """An analysis dataclass stored as JSON with its ``version``: a file of another version is refused (the
    caller makes it again), so a changed analysis never reads an old one."""

    VERSION: ClassVar[str] = ""

    def to_json(self) -> str:
        return json.dumps(asdict(cast(Any, self)), sort_keys=True)

    @classmethod
    def from_json(cls: type[_J], text: str) -> _J:
        d = json.loads(text)
        if d.get("version") != cls.VERSION:
            raise ValueError(f"analysis version {d.get('version')!r}, expected {cls.VERSION!r}")
        return cls(**d)


@dataclass
class HeaderDiff(VersionedJson):
    """What the full header set has that the light one lacks (see the module docstring)."""

    VERSION: ClassVar[str] = ANALYSIS_VERSION
    macros: list[str] = field(default_factory=list)  # defined only in full, or with another definition
    names: dict[str, list[str]] = field(default_factory=dict)  # scope ("" = global) -> names declared only in full
    namespaces: dict[str, list[str]] = field(default_factory=dict)  # those of ``names`` that are namespaces
    full_only_files: int = 0
    version: str = ANALYSIS_VERSION


def macro_table(preprocessed: str) -> dict[str, str]:
    """NAME -> definition from ``-dD`` output (the last definition wins, as for the compiler)."""
    table: dict[str, str] = {}
    for line in preprocessed.splitlines():
        m = _DEFINE.match(line)
        if m:
            table[m.group(1)] = m.group(2).strip()
        elif line.startswith("#") and line.split()[:1] == ["#undef"] and len(line.split()) > 1:
            table.pop(line.split()[1], None)
    return table


def files_of(preprocessed: str) -> set[str]:
    return {m.group(1) for m in map(_LINEMARK.match, preprocessed.splitlines()) if m}


def namespace_scope_names(preprocessed: str, files: set[str], scopes=SCOPES, also: set[str] | None = None,
                          origins: dict[tuple[str, str], set[str]] | None = None) -> dict[str, dict[str, str]]:
    """Names declared directly in each of ``scopes`` by code that comes from ``files`` (and, under the keys
    ``<scope>@also``, by code from ``also``: the light set's files, collected in the same pass).

    A token-level walk, not a parser: braces after ``namespace X`` (also ``namespace a::b``, anonymous and
    inline namespaces) open namespace scopes, ``extern "C" {`` is transparent, every other brace opens a body
    that is skipped. At namespace scope, outside parentheses and template argument lists, a name counts as
    declared when it follows ``class``/``struct``/``union``/``enum``/``namespace``/``using``/``typedef`` or
    precedes ``(``, ``=``, ``;``, ``{``, ``[`` or ``,``: over-inclusive (a type name before a declarator's
    parenthesis counts too), which only makes the light path step aside more often. A using-declaration or
    alias of ``at::X``/``c10::X``/``std::X`` does not count (see :data:`_SAME_ENTITY_FROM`). ``origins``, when
    given, receives (scope, name) -> the files of ``files`` that declare it (the ops path's index)."""
    walker = _ScopeWalker(files, scopes, also or set(), origins)
    for line in preprocessed.splitlines():
        walker.line(line)
    found = walker.found
    if also:
        found.update({f"{k}@also": v for k, v in walker.other.items()})
    return found


class _ScopeWalker:
    """:func:`namespace_scope_names`'s token walk, one method per kind of token; its state is the brace
    stack, the namespace path being opened, the last few tokens, and the parenthesis/angle depths."""

    def __init__(self, files: set[str], scopes, also: set[str],
                 origins: dict[tuple[str, str], set[str]] | None = None) -> None:
        self.found: dict[str, dict[str, str]] = {s: {} for s in scopes}  # scope -> name -> "namespace"|"other"
        self.other: dict[str, dict[str, str]] = {s: {} for s in scopes}  # the same for ``also`` (one pass)
        self.also = also
        self.origins = origins
        self.files = files | also
        self.stack: list[str | None] = []  # namespace name, "" for transparent/anonymous, None for a body
        self.pending: list[str] | None = None  # namespace path being opened
        self.prev: list[str] = []
        self.paren = self.angle = 0
        self.cur = ""

    def line(self, line: str) -> None:
        if line.startswith("#"):
            m = _LINEMARK.match(line)
            if m:
                self.cur = m.group(1)
            return
        for tok in _TOKEN.findall(line):
            self.token(tok)

    def token(self, tok: str) -> None:
        if tok in ("{", "}", ";"):
            self.end_of_statement(tok)
            return
        if self.prev[-1:] == ["namespace"] or (self.pending is not None and tok != "{"):
            self.namespace_path(tok)
            return
        if tok == "(":
            if self.paren == 0 and self.angle == 0 and self.declares_previous():
                self.add(self.prev[-1])
            self.paren += 1
        elif tok == ")":
            self.paren = max(0, self.paren - 1)
        elif tok == "<" and self.prev and (self.prev[-1] == "template"
                                          or (_IDENT.match(self.prev[-1]) and self.paren == 0)):
            self.angle += 1
        elif tok == ">" and self.angle:
            self.angle -= 1
        elif self.at_scope() and self.prev and self.prev[-1] in _INTRODUCERS and _IDENT.match(tok) \
                and tok not in _KEYWORDS and not (self.prev[-1] == "using" and tok in _SAME_ENTITY_FROM):
            self.add(tok)
        elif tok in ("=", "[", ",") and self.declares_previous() \
                and not (tok == "=" and self.prev[-2:-1] == ["using"]):
            self.add(self.prev[-1])
        self.prev.append(tok)
        if len(self.prev) > 8:
            del self.prev[:-8]

    def end_of_statement(self, tok: str) -> None:
        """``{``, ``}`` or ``;``: a scope opens or closes, or a declaration ends with the name before it."""
        if tok == "{":
            _open_brace(self.stack, self.pending, self.prev)
        elif tok == "}":
            _close_brace(self.stack)
        elif self.at_scope() and self.prev and _IDENT.match(self.prev[-1]) \
                and self.prev[-1] not in _KEYWORDS and not _reuses_entity(self.prev):
            self.add(self.prev[-1])
        if tok != "}":
            self.pending = None
        self.prev, self.paren, self.angle = [], 0, 0

    def namespace_path(self, tok: str) -> None:
        """A token of ``namespace a::b`` before its brace: only the first name is declared in this scope."""
        if self.pending is None:
            self.pending = []
        if _IDENT.match(tok) and tok != "inline":
            if not self.pending and self.at_scope():
                self.add(tok, "namespace")
            self.pending.append(tok)
        self.prev.append(tok)

    def declares_previous(self) -> bool:
        """The previous token is a name declared here (not a keyword, not a member or qualified access)."""
        prev = self.prev
        return self.at_scope() and bool(prev) and bool(_IDENT.match(prev[-1])) and prev[-1] not in _KEYWORDS \
            and (len(prev) < 2 or prev[-2] not in ("::", ".", "->"))

    def at_scope(self) -> bool:
        return _at_scope(self.stack, self.cur, self.files, self.paren, self.angle)

    def add(self, name: str, kind: str = "other") -> None:
        _add(self.other if self.cur in self.also else self.found, self.stack, name, kind)
        if self.origins is not None and self.cur not in self.also:
            scope = _scope_of(self.stack)
            if scope in self.found:
                self.origins.setdefault((scope, name), set()).add(self.cur)


_INTRODUCERS = frozenset({"class", "struct", "union", "enum", "using", "typedef", "concept"})


def _open_brace(stack: list[str | None], pending: list[str] | None, prev: list[str]) -> None:
    """A ``{``: the namespace path being opened (``""`` for an anonymous one), ``""`` for a transparent
    ``extern "C" {``, or None for any other body; then ``|``, which marks where this block's pushes end."""
    if pending is not None:
        stack.extend(pending or [""])
    elif prev[-1:] == ['"C"'] or prev[-1:] == ['"C++"']:
        stack.append("")
    else:
        stack.append(None)
    stack.append("|")


def _close_brace(stack: list[str | None]) -> None:
    """A ``}``: everything the matching ``{`` pushed comes off."""
    if stack and stack[-1] == "|":
        stack.pop()
        while stack and stack[-1] != "|":
            stack.pop()


def _scope_of(stack: list[str | None]) -> str | None:
    names = [s for s in stack if s != "|"]
    if any(s is None for s in names):
        return None
    return "::".join(s for s in names if s)


def _at_scope(stack, cur: str, files: set[str], paren: int, angle: int) -> bool:
    return cur in files and paren == 0 and angle == 0 and _scope_of(stack) is not None


#: ``using at::X;`` / ``using X = at::X;`` in namespace torch names the entity that the light set reaches
#: through ``namespace torch { using namespace at; }`` (or c10's, or std's): not a new entity.
_SAME_ENTITY_FROM = frozenset({"at", "c10", "std", "::"})


def _reuses_entity(prev: list[str]) -> bool:
    """``prev`` ends a using-declaration or alias whose target is qualified by at/c10/std."""
    if "using" not in prev:
        return False
    tail = prev[prev.index("using") + 1:]
    if "=" in tail:
        tail = tail[tail.index("=") + 1:]
    return len(tail) >= 3 and tail[0] in _SAME_ENTITY_FROM or (tail[:1] == ["::"] and tail[1:2] in (["at"], ["c10"]))


def _add(found: dict[str, dict[str, str]], stack, name: str, kind: str = "other") -> None:
    scope = _scope_of(stack)
    if scope in found and found[scope].get(name) != "other":
        found[scope][name] = kind


def diff(light_pp: str, full_pp: str) -> HeaderDiff:
    """Compare the ``-E -dD`` outputs of the same probe compiled with the light and with the full header."""
    lm, fm = macro_table(light_pp), macro_table(full_pp)
    macros = sorted(n for n, v in fm.items() if lm.get(n) != v)
    light_files = files_of(light_pp)
    only = files_of(full_pp) - light_files
    both = namespace_scope_names(full_pp, only, also=light_files)  # the full text holds the light files too
    new = {k: v for k, v in both.items() if not k.endswith("@also")}
    known = {k[:-len("@also")]: v for k, v in both.items() if k.endswith("@also")}
    # A name the light set declares in the same scope too is a redeclaration or an added overload: the
    # second is the residual risk the module docstring names; flagging every such name would flag them all.
    names = {s: sorted(n for n in new[s] if n not in known[s]) for s in new}
    spaces = {s: sorted(n for n in names[s] if new[s][n] == "namespace") for s in names}
    return HeaderDiff(macros=macros, names=names, namespaces=spaces, full_only_files=len(only))


# ---- the candidate's side ------------------------------------------------------------------------------
def strip_comments_and_strings(src: str) -> str:
    """The source with comments removed and string/char literals emptied (tokens inside them do not count)."""
    out, i, n = [], 0, len(src)
    while i < n:
        c = src[i]
        if src.startswith("//", i):
            j = src.find("\n", i)
            i = n if j < 0 else j
        elif src.startswith("/*", i):
            j = src.find("*/", i + 2)
            out.append(" ")
            i = n if j < 0 else j + 2
        elif c in "\"'":
            j = i + 1
            while j < n and src[j] != c and src[j] != "\n":
                j += 2 if src[j] == "\\" else 1
            out.append(c + c)
            i = j + 1
        elif src.startswith("R\"", i):  # raw string: R"delim( ... )delim"
            m = re.match(r'R"([^()\\ ]{0,16})\(', src[i:])
            if not m:
                out.append(c)
                i += 1
                continue
            end = src.find(")" + m.group(1) + '"', i)
            out.append('""')
            i = n if end < 0 else end + len(m.group(1)) + 2
        else:
            out.append(c)
            i += 1
    return "".join(out)


def namespace_scope_tokens(code: str) -> set[str]:
    """Identifiers of ``code`` outside function and class bodies (where the candidate's own namespace-scope
    declarations are); ``namespace X {`` and ``extern "C" {`` blocks count as namespace scope."""
    tokens: set[str] = set()
    stack: list[bool] = []  # True: namespace-like block
    prev: list[str] = []
    code = "\n".join(line for line in code.splitlines() if not line.lstrip().startswith("#"))
    for tok in _TOKEN.findall(code):
        if tok == "{":
            ns = "namespace" in prev[-4:] or prev[-1:] in (['"C"'], ['""'])
            stack.append(ns)
            prev = []
            continue
        if tok == "}":
            if stack:
                stack.pop()
            prev = []
            continue
        if all(stack) and _IDENT.match(tok):
            tokens.add(tok)
        prev.append(tok)
        if tok == ";":
            prev = []
    return tokens


def light_hazards(cu_source: str, d: HeaderDiff, python_ok: bool = False) -> list[str]:
    """Why this ``.cu`` must build stock ([] = the light path may be tried). ``python_ok``: the light set has
    the Python bindings too (``main.cpp``'s, backends/extbuild/light_main.py), so using them is no hazard."""
    code = re.sub(r"^\s*#\s*include\b.*$", "", strip_comments_and_strings(cu_source), flags=re.M)
    why = []
    m = None if python_ok else _PY_MARKERS.search(code)
    if m:
        why.append(f"uses Python/pybind11 ({m.group(0).strip()})")
    m = _UNQUALIFIED_INTO.search(code)
    if m:
        why.append(f"unqualified lookup into a namespace the full header extends ({' '.join(m.group(0).split())})")
    idents = set(re.findall(r"[A-Za-z_]\w*", code))
    macros = sorted(idents & set(d.macros))
    if macros:
        why.append("names a macro only the full header defines: " + ", ".join(macros[:5]))
    # A namespace is not an entity: what the candidate names inside it is found the same way in both
    # (through the candidate's own includes) or not at all in the light set (an error, then stock).
    qualified = sorted({f"{ns}::{name}" for ns, name in _QUALIFIED.findall(code)
                        if name in set(d.names.get(ns, ())) - set(d.namespaces.get(ns, ()))})
    if qualified:
        why.append("names what only the full header declares: " + ", ".join(qualified[:5]))
    clash = sorted(namespace_scope_tokens(code) & set(d.names.get("", ())) - _KEYWORDS)
    if clash:
        why.append("declares at namespace scope a name the full header declares globally: " + ", ".join(clash[:5]))
    return why
