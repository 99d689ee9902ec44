"""The ops path: a light build that reads only the per-operator headers its ``.cu`` can name.

On top of the light path (``<torch/extension.h>`` read as ``<torch/types.h>``, :mod:`light_headers`), most of
what is left is ``<ATen/Functions.h>``: one ``#include <ATen/ops/X.h>`` per ATen operator (~1,300), each a set
of inline wrappers ``at::X(...)`` that nvcc's front ends (cudafe++ and cicc) parse and cudafe++ writes out
again for the host compiler. Measured on the dev host (``activation.relu``'s ``cuda.cu``, plain nvcc): 30.6 user-s
with the light headers, 16.2 with only the per-operator headers it names: ~29 % of the light set's lines are
those wrappers, and they are the expensive ones.

torch's headers are written for this: ``ATen/Functions.h`` is the only header in ``<torch/types.h>``'s closure
that includes every operator, the other headers include the per-operator headers they use
(``variable_factories.h``: ``empty``, ``zeros``, ... for ``torch::empty`` and friends). So an ops build puts a
folder before torch's on the include path (``-I``, as the light shim does) whose ``ATen/Functions.h`` is the
installed one's text with the operator include lines kept only for the operators the ``.cu`` can name.

What decides "can name", and why a build that succeeds means what the light build means:

* The analysis (once per flag set, like the light one) preprocesses the light probe twice, with every operator
  and with none (:data:`KEEP` aside), and records for each name declared only with every operator (in the
  global namespace, ``torch``, ``at``, ``c10``) the per-operator headers that declare it (:class:`OpsIndex`).
* A ``.cu`` gets the headers of **every identifier it contains** that the index knows, qualified or not (an
  unqualified call found by argument-dependent lookup is covered too, and a local variable named ``empty``
  only costs one header): every overload of every name it uses is declared, as in the light build.
* It takes the light path instead (:func:`plan`'s reasons) when it pastes tokens (``##``: names the scan cannot
  see), uses a macro only the full set defines, uses a name the index cannot place in a per-operator header, or
  declares at namespace scope a global name the full set declares.
* A name it does not use but that a torch header template calls for the candidate's types would be missing:
  that is a compile error (then the light path), not another meaning, unless an overload of another name
  happens to fit, which the shipped solutions' objects rule out for them (``tests/test_cuda_light_headers.py``
  compares their symbols with the light build's).

Standard library only: it runs inside the nvcc driver, a plain script.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import ClassVar

if __package__:
    from . import light_headers
else:  # run as a script (the build's nvcc)
    import light_headers  # type: ignore[no-redef]

#: Operators ``ATen/Functions.h``'s own inline code calls (its ``var``/``std`` overloads): always included.
KEEP = frozenset({"var", "var_mean", "std", "std_mean"})
OPS_VERSION = "mkb-ops-1"
#: The light analysis's namespaces and ``at::symint``, where the operators' SymInt templates sit
#: (``at::symint::view<T>``, which torch's ExpandUtils.h calls).
SCOPES = (*light_headers.SCOPES, "at::symint")
_OP_LINE = re.compile(r"^#include <ATen/ops/(\w+)\.h>[ \t]*$", re.M)
_OP_FILE = re.compile(r"/ATen/ops/(\w+)\.h$")
_AT_CALL = re.compile(r"(?<![\w:])(?:::)?at\s*::\s*(?:[A-Za-z_]\w*\s*::\s*)*([A-Za-z_]\w*)")
#: nvcc's (EDG's) messages for a name the no-operator set lacks.
_MISSING = re.compile(r'(?:has no member|identifier) "(\w+)"')


def functions_header(include_dirs: list[str]) -> Path | None:
    """The installed ``ATen/Functions.h`` among the compile's include folders (the first, as the compiler's
    search would find it), or None."""
    for d in include_dirs:
        p = Path(d) / "ATen" / "Functions.h"
        if p.is_file():
            return p
    return None


def include_dirs(args: list[str]) -> list[str]:
    """The ``-I``/``-isystem`` folders of an nvcc command, in the order given (``-I`` before ``-isystem``, as
    the search goes)."""
    quoted: list[str] = []
    system: list[str] = []
    it = iter(range(len(args)))
    for i in it:
        a = args[i]
        if a in ("-I", "-isystem") and i + 1 < len(args):
            (quoted if a == "-I" else system).append(args[i + 1])
            next(it, None)
        elif a.startswith("-isystem") and len(a) > len("-isystem"):
            system.append(a[len("-isystem"):])
        elif a.startswith("-I") and len(a) > 2:
            quoted.append(a[2:])
    return quoted + system


def operators(functions_text: str) -> list[str]:
    """The operators ``ATen/Functions.h`` includes, in its order."""
    return _OP_LINE.findall(functions_text)


def shim_text(functions_text: str, keep: set[str] | frozenset[str]) -> str:
    """``ATen/Functions.h`` with the operator include lines of ``keep`` only (every other line as it is)."""
    head = "// multikernelbench ops path: ATen/Functions.h with some operators only (backends/extbuild/ops_headers.py)\n"
    return head + _OP_LINE.sub(lambda m: m.group(0) if m.group(1) in keep else "", functions_text)


@dataclass
class OpsIndex(light_headers.VersionedJson):
    """What the every-operator set declares that the no-operator one does not, and where."""

    VERSION: ClassVar[str] = OPS_VERSION
    macros: list[str] = field(default_factory=list)  # defined only with every operator, or differently
    globals: list[str] = field(default_factory=list)  # global names declared only with every operator
    where: dict[str, list[str]] = field(default_factory=dict)  # name -> operators declaring it ("?": elsewhere)
    always: list[str] = field(default_factory=list)  # operators torch's other headers call without including
    operators: int = 0
    broken: str = ""  # why no build may take the ops path with these flags ("" = usable)
    version: str = OPS_VERSION


def analyse(none_pp: str, every_pp: str, ops: list[str]) -> OpsIndex:
    """Compare the ``-E -dD`` outputs of the light probe with no operators (:data:`KEEP` aside) and with every
    one; ``ops``: the operators ``ATen/Functions.h`` includes."""
    nm, em = light_headers.macro_table(none_pp), light_headers.macro_table(every_pp)
    macros = sorted(n for n, v in em.items() if nm.get(n) != v)
    none_files = light_headers.files_of(none_pp)
    only = light_headers.files_of(every_pp) - none_files
    origins: dict[tuple[str, str], set[str]] = {}
    both = light_headers.namespace_scope_names(every_pp, only, scopes=SCOPES, also=none_files, origins=origins)
    known = set(ops)
    where: dict[str, set[str]] = {}
    global_names: set[str] = set()
    # Every name an operator-only file declares, also one the no-operator set declares as well (the operator
    # may add overloads to it): a .cu naming it gets the operator's header.
    for (scope, name), paths in origins.items():
        if both[scope].get(name) == "namespace":
            continue  # not an entity: what is named inside it is checked by its own name
        for path in paths:
            if path.endswith("/ATen/Functions.h"):
                continue  # its own inline code: in the shim as it is
            m = _OP_FILE.search(path)
            where.setdefault(name, set()).add(m.group(1) if m and m.group(1) in known else "?")
        if scope == "" and name not in both["@also"]:
            global_names.add(name)
    # torch's own headers outside Functions.h call a few operators that only Functions.h declares
    # (ATen/ScalarOps.h: at::scalar_tensor): those operators go into every ops build.
    called = set(_AT_CALL.findall(none_pp))
    always = sorted({x for name in called for x in where.get(name, ()) if x != "?"})
    return OpsIndex(always=always, macros=macros, globals=sorted(global_names), where={k: sorted(v) for k, v in where.items()},
                    operators=len(known))


def missing_names(messages: str) -> set[str]:
    """The names a failed compile of the probe could not find."""
    return set(_MISSING.findall(messages))


def plan(cu_source: str, index: OpsIndex) -> tuple[set[str], list[str]]:
    """(the operators this ``.cu`` gets, why it must take the light path instead: [] = the ops path)."""
    code = re.sub(r"^\s*#\s*include\b.*$", "", light_headers.strip_comments_and_strings(cu_source), flags=re.M)
    why = [f"ops analysis unusable: {index.broken}"] if index.broken else []
    if "##" in code:
        why.append("pastes tokens (##)")
    idents = set(re.findall(r"[A-Za-z_]\w*", code))
    macros = sorted(idents & set(index.macros))
    if macros:
        why.append("names a macro only the operators define: " + ", ".join(macros[:5]))
    ops = set(KEEP) | set(index.always)
    unplaced = []
    for name in sorted(idents & set(index.where)):
        found = index.where[name]
        if "?" in found:
            unplaced.append(name)
        ops.update(x for x in found if x != "?")
    if unplaced:
        why.append("names what no per-operator header declares alone: " + ", ".join(unplaced[:5]))
    clash = sorted(light_headers.namespace_scope_tokens(code) & set(index.globals))
    if clash:
        why.append("declares at namespace scope a global name of the operators: " + ", ".join(clash[:5]))
    return ops, why
