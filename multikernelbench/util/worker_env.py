"""The environment a worker starts from: an allow-list, never the harness's whole environment.

Why: a worker runs candidate code, and whatever is in its environment (``HF_TOKEN``, ``MKB_SERVE_TOKEN``,
cloud keys) can be read by the candidate and returned in its result message, which is stored and shown to the
model (issue #41). So a worker gets only what it needs to run: ``PATH``, the locale, ``HOME``/``TMPDIR`` in its
own folder, and the toolchain and device variables its backend declares (``Backend.worker_env_allow``, copied
by ``Backend.worker_env``). A name that looks like a secret is dropped even when a pattern allows it.

The zygote forks workers, and a forked worker's ``/proc/self/environ`` shows the environment the zygote was
*exec'd* with (not ``os.environ``), so the zygote is started from this same allow-list.

Its own module, below the engine and the backends, so both use one definition.
"""

from __future__ import annotations

import fnmatch
import os
import re
from collections.abc import Iterable, Mapping

#: What every worker inherits from the harness: the search path, the locale, the dynamic loader's path (CUDA
#: and conda hosts need it) and ``PYTHONPATH`` (a checkout run without installing). Nothing else.
BASE_ALLOW = ("PATH", "LANG", "LANGUAGE", "LC_*", "TZ", "LD_LIBRARY_PATH", "PYTHONPATH")

#: Names that are secrets whatever pattern allows them.
_SECRET = re.compile(r"TOKEN|SECRET|PASSW|CREDENTIAL|(^|_)KEY($|_)|API_?KEY|AUTH|COOKIE|SESSION", re.IGNORECASE)


def is_secret(name: str) -> bool:
    return bool(_SECRET.search(name))


def allowed(name: str, patterns: Iterable[str]) -> bool:
    """Whether ``name`` matches one of ``patterns`` (exact names or ``fnmatch`` patterns such as ``TRITON_*``)
    and does not look like a secret."""
    return not is_secret(name) and any(fnmatch.fnmatchcase(name, p) for p in patterns)


def inherited(patterns: Iterable[str], source: Mapping[str, str] | None = None) -> dict[str, str]:
    """The variables of ``source`` (default: this process's environment) that ``patterns`` allow."""
    pats = tuple(patterns)
    src = os.environ if source is None else source
    return {k: v for k, v in src.items() if allowed(k, pats)}


def base_env(home: str | None = None, source: Mapping[str, str] | None = None) -> dict[str, str]:
    """The start of every worker's (and the zygote's) environment: :data:`BASE_ALLOW` from ``source``, and
    ``HOME``/``TMPDIR`` at ``home`` when given (the worker's own folder), so nothing reaches for the harness
    user's home (its caches, its ``.netrc``, its Hugging Face token)."""
    env = inherited(BASE_ALLOW, source)
    env.setdefault("PATH", os.defpath)
    if home is not None:
        env["HOME"] = env["TMPDIR"] = str(home)
    return env


#: How long an idle OpenMP thread of a worker spins before it sleeps (libgomp's ``GOMP_SPINCOUNT``; the harness's
#: own value passes through when set). libgomp's default, 300,000 spins (~10 ms of a core on current x86), made
#: CPU time a function of the host's load: a thread waiting at a barrier for a descheduled partner spins its
#: whole count, so beside busy loops an honest eager ``deep_mlp`` burned 62 ms of CPU per call against 13 ms
#: on a quiet host (wall 82 ms against 6.5), and the clock audit's CPU-time evidence (anticheat/clock_audit.py)
#: convicted an honest OpenCL kernel on CI. At 10,000 the same call takes 18 ms of CPU beside the busy loops
#: and the quiet figures do not move (benchmarks/verdicts_under_load/omp_spin_bench.py). Set in the worker's
#: (and the zygote's) environment before torch loads libgomp: libgomp reads it once, at load.
OMP_SPIN_DEFAULTS = {"GOMP_SPINCOUNT": "10000"}


#: glibc's allocator with fixed thresholds in every worker: blocks up to 32 MiB come from the heap (not a fresh
#: ``mmap`` each time) and freed memory is not given back to the system while the worker lives. At glibc's
#: defaults both thresholds move with the process's history (the first free of a large mapped block raises
#: them), so two workers running the same honest code could differ: in some, the memory the reference's call
#: freed was trimmed and the renewal of its inputs page-faulted 24 MB again (~12 ms on the dev host) while the
#: candidate's renewal reused warm memory. The clock audit reads that difference as work moved into the
#: reference's turn: an honest SGD-momentum exemplar was convicted in 3 of 16 evaluations on a quiet host, its
#: round differences -12 ms or ~0 by worker; with these values 0 of 8, every difference within 0.4 ms
#: (tests/test_malloc_state.py). Read by glibc when the process starts (the zygote's state is its workers').
MALLOC_DEFAULTS = {"MALLOC_MMAP_THRESHOLD_": str(32 << 20), "MALLOC_TRIM_THRESHOLD_": str(1 << 32)}

#: Everything a worker's runtime reads once at start that the timing's evidence depends on.
RUNTIME_DEFAULTS = {**OMP_SPIN_DEFAULTS, **MALLOC_DEFAULTS}


def runtime_env(source: Mapping[str, str] | None = None) -> dict[str, str]:
    """:data:`RUNTIME_DEFAULTS`, with the value of ``source`` (default: this process's environment) where set."""
    src = os.environ if source is None else source
    return {k: src.get(k, v) for k, v in RUNTIME_DEFAULTS.items()}


def scrub(env: Mapping[str, str]) -> dict[str, str]:
    """``env`` without anything that looks like a secret (the last step before a worker or zygote starts)."""
    return {k: v for k, v in env.items() if not is_secret(k)}
