"""Sandbox violations that are the environment's refusals, not evidence of gaming.

The audit hook (anticheat/guard.py) blocks every write outside a candidate's working directory and every
process started while ``forward`` runs. Two of these are what an honest author writes without knowing the
harness: building the extension in a temporary folder of one's own (``load_inline(build_directory="/tmp/...")``
while the module is compiled or imported), and
building it lazily at the first ``forward`` (which starts ninja and the compiler inside the timed call). They
stay blocked; the result is a compile or runtime error with ``FailureKind.ENVIRONMENT_REFUSED`` and a message
that says what the harness allows, instead of ``cheat_detected``. Any other violation beside them still
convicts.
"""

from __future__ import annotations

import re
from pathlib import Path

#: Programs a lazy extension build starts (torch's cpp_extension: ninja, then the compilers and the linker).
BUILD_PROGRAMS = frozenset({"ninja", "c++", "g++", "gcc", "cc", "clang", "clang++", "nvcc", "ld", "cc1plus",
                            "which", "hipcc"})
_WRITE = re.compile(r"^(?:write to|os\.mkdir on) (.+) \(outside the working directory\)$")
_PROCESS = re.compile(r"^process creation \((?:subprocess\.Popen|os\.posix_spawn)(?: of (\S+))?\) during forward$")

ADVICE_WRITE = ("the harness lets a candidate write only inside the build folder it is given (its working "
                "directory, where torch's extension folder points): call load_inline without build_directory "
                "and make no folders of your own")
ADVICE_PROCESS = ("no process may start while forward runs (it would be timed): build the extension at import "
                  "(load_inline at module level) or in ModelNew.__init__ (built in the build stage), not in forward")


#: Where an author puts a build folder of its own. A write anywhere else (the dataset cache, another build,
#: the home folder), or into a temporary folder while forward runs, stays a violation.
TEMP_DIRS = ("/tmp/", "/var/tmp/", "/dev/shm/")


def shared_folders(build_dir: str) -> tuple[str, ...]:
    """Folders under which no write is "a build folder of one's own", wherever they lie: the home folder (the
    dataset, torch and precompiled-header caches) and the folder holding every candidate's build. Either may
    itself be under /tmp (a CI container's HOME, a test's build root), where a write into them is the other
    candidates' or the harness's, not an author's scratch folder."""
    return (str(Path.home()), str(Path(build_dir).parent))


def _inside(path: str, folders: tuple[str, ...]) -> bool:
    return any(f and (path == f or path.startswith(f.rstrip("/") + "/")) for f in folders)


def is_refusal(violation: str, building: bool, shared: tuple[str, ...] = ()) -> bool:
    """``building``: the violation happened while the candidate's module was compiled or imported;
    ``shared``: :func:`shared_folders` (a write under one of them is never a refusal)."""
    m = _WRITE.match(violation)
    if m:
        return building and m.group(1).startswith(TEMP_DIRS) and not _inside(m.group(1), shared)
    m = _PROCESS.match(violation)
    return bool(m and m.group(1) in BUILD_PROGRAMS)


def split(violations: list[str], building: bool, shared: tuple[str, ...] = ()) -> tuple[list[str], list[str]]:
    """(the environment's refusals, every other violation)."""
    refused = [v for v in violations if is_refusal(v, building, shared)]
    return refused, [v for v in violations if not is_refusal(v, building, shared)]


def message(refused: list[str]) -> str:
    advice = []
    if any(_WRITE.match(v) for v in refused):
        advice.append(ADVICE_WRITE)
    if any(_PROCESS.match(v) for v in refused):
        advice.append(ADVICE_PROCESS)
    text = "; ".join(advice)
    return f"refused by the harness: {'; '.join(refused[:3])}. {text[:1].upper()}{text[1:]}"
