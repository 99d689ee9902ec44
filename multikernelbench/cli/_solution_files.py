"""Files in a solutions folder that are not read as candidates, each with the reason, for ``mkb eval``'s
"skipped" lines.

Why: a kernel saved as ``relu.cpp`` beside nothing, or a ``.cu`` without the ``.py`` that builds it, was
ignored without a word, and its author saw a run with fewer candidates than files. Only ``*.py`` files are
candidates (each defines ``ModelNew`` and builds its own kernels); names starting with ``_`` are helpers.
"""

from __future__ import annotations

from pathlib import Path

#: Kernel sources that need a Python file around them.
SOURCE_SUFFIXES = (".cpp", ".cc", ".cxx", ".c", ".cu", ".cuh", ".h", ".hpp", ".cl", ".triton")
#: Files nobody expects to be read: caches and compiled Python.
IGNORED_SUFFIXES = (".pyc", ".pyo")


def why_not_a_candidate(path: Path) -> str | None:
    """The reason ``path`` (a file under a solutions folder) is not a candidate, or None when it is one."""
    if path.suffix == ".py":
        return "a name starting with '_' marks a helper module, not a candidate" if path.name.startswith("_") else None
    if path.suffix in SOURCE_SUFFIXES:
        return (f"{path.suffix} source: a candidate is a .py file defining ModelNew that builds this code itself "
                "(C++/CUDA with torch.utils.cpp_extension.load_inline)")
    return "not a .py file"


def non_candidates(root: Path) -> list[str]:
    """``"<path>: not a candidate (<why>)"`` for every file under ``root`` that is not read as a candidate;
    hidden files and folders, ``__pycache__`` and compiled Python are left out."""
    out = []
    for path in sorted(root.rglob("*")):
        rel = path.relative_to(root)
        if (not path.is_file() or path.suffix in IGNORED_SUFFIXES
                or any(part.startswith(".") or part == "__pycache__" for part in rel.parts)):
            continue
        why = why_not_a_candidate(path)
        if why is not None:
            out.append(f"{path}: not a candidate ({why})")
    return out
