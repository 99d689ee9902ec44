"""The trusted warmer of the CUDA/C++ build cache: the light-header analyses and the precompiled torch/extension.h
that every build of a run reads, made once by a background process the parent starts (never by a candidate's
build, which may only read them).

Builds that start while the warmer is still making what they need wait for it (bounded) instead of making
their own copy: each folder the warmer is filling carries a mark with its pid (:func:`warm_wait.mark`, written
by the parent as it starts the warmer), removed when the warmer is done or stopped. Split from :mod:`cuda_build`, which holds the builder itself.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from multikernelbench.backends.extbuild import light_main, warm_wait
from multikernelbench.backends.extbuild.cuda_build import _PCH_GCH, FastExtensionBuilder, _ninja_vars
from multikernelbench.util.procs import lower_priority


class _WarmOnly(Exception):
    """Stops load_inline after build.ninja is written: the warmer wants the flags, not the extension."""


#: The cflags variants warmed by default: none (what KernelBench-style CUDA candidates pass for the C++
#: half) and -O3 (the most common explicit choice).
WARM_VARIANTS: tuple[tuple[str, ...], ...] = ((), ("-O3",))


def _each_variant_ninja(variants: tuple[tuple[str, ...], ...], with_cuda: bool, visit, on_error=None,
                        cuda_flags: bool = False) -> None:
    """For each ``extra_cflags`` variant, run torch's ``load_inline`` of an empty extension until it has written
    build.ninja, call ``visit(variant, build_dir)`` and stop before any build: how the warmer and the probe
    learn each set's exact compiler flags. ``on_error(variant, exc)`` takes what the loader raises; without it
    the exception propagates."""
    import torch.utils.cpp_extension as ce

    current: list[tuple[str, ...]] = []

    def capture(build_directory, verbose, error_prefix):
        visit(current[-1], Path(build_directory))
        raise _WarmOnly

    orig = ce._run_ninja_build
    ce._run_ninja_build = capture
    try:
        for i, extra in enumerate(variants):
            current.append(tuple(extra))
            with tempfile.TemporaryDirectory(prefix=warm_wait.probe_dir_prefix(os.getpid())) as tmp:
                kw: dict[str, Any] = {"cuda_sources": "__global__ void mkb_warm() {}"} if with_cuda else {}
                kw["extra_cuda_cflags" if cuda_flags else "extra_cflags"] = list(extra)
                try:
                    ce.load_inline(name=f"mkb_pch_warm_{i}", cpp_sources="", build_directory=tmp, verbose=False,
                                   **kw)
                except _WarmOnly:
                    pass
                except Exception as exc:  # noqa: BLE001 - the caller's on_error decides
                    if on_error is None:
                        raise
                    on_error(tuple(extra), exc)
    finally:
        ce._run_ninja_build = orig


def ninja_texts(variants: tuple[tuple[str, ...], ...], with_cuda: bool,
                cuda_flags: bool = False) -> list[tuple[tuple[str, ...], str | dict[str, Any]]]:
    """Each variant's build.ninja text as torch's loader writes it (or the error it raised, as a report row).
    Asking the loader patches it process-wide, so a warmer collects every flag set this way first, then makes
    its products side by side in threads."""
    found: list[tuple[tuple[str, ...], str | dict[str, Any]]] = []
    _each_variant_ninja(variants, with_cuda,
                        lambda extra, build_dir: found.append((extra, (build_dir / "build.ninja").read_text())),
                        lambda extra, exc: found.append((extra, {"variant": list(extra), "state": "error",
                                                                 "error": repr(exc)[:500]})),
                        cuda_flags=cuda_flags)
    return found


def warm_pch(pch_root: Path | str, variants: tuple[tuple[str, ...], ...] = WARM_VARIANTS,
             with_cuda: bool = True, wait: bool = False,
             texts: list[tuple[tuple[str, ...], str | dict[str, Any]]] | None = None) -> list[dict[str, Any]]:
    """Make the PCH of torch/extension.h for the flags torch's loader would use for a ``load_inline`` with each
    ``extra_cflags`` variant (trusted: no candidate code; run in a process without the workers' limits).
    ``wait``: see :meth:`FastExtensionBuilder.build_pch_from_text`. ``texts``: the variants' build.ninja
    texts, collected beforehand (:func:`ninja_texts`); asked for here otherwise."""
    builder = FastExtensionBuilder(pch_root, pch=False, cache=False, split_nvcc=False, pch_root=pch_root)
    # A warmer that cannot warm one set reports it and leaves those builds as they were.
    return [builder.build_pch_from_text(text, wait=wait) if isinstance(text, str) else text
            for _, text in (texts if texts is not None else ninja_texts(variants, with_cuda))]


def light_root_of(pch_root: Path | str) -> Path:
    """Where the warmer puts the light-header analyses: beside the PCH folder (shared, read-only to builds)."""
    return Path(pch_root).parent / "light"


def warm_light(light_root: Path | str, variants: tuple[tuple[str, ...], ...] = WARM_VARIANTS,
               flag_sets: list[tuple[tuple[str, ...], dict[str, str]]] | None = None) -> list[dict[str, Any]]:
    """Trusted side: the light-header analysis (backends/extbuild/light_headers.py) for the nvcc flags torch's loader
    uses with each ``extra_cuda_cflags`` variant, so that builds with those flags only read it. A build with
    other flags makes its own, in its own folder. ``flag_sets``: the variants' build.ninja variables, collected
    beforehand (:func:`host_pch_flags`); asked for here otherwise."""
    from multikernelbench.backends.extbuild import nvcc_light

    light_root = Path(light_root)
    report: list[dict[str, Any]] = []
    for extra, v in (flag_sets if flag_sets is not None else host_pch_flags(variants)):
        try:
            cmd = shlex.split(v.get("nvcc", "nvcc"))
            flags = _analysis_flags(v)
            t0 = time.perf_counter()
            nvcc_light.write_shim(light_root / "include")
            d = nvcc_light.header_diff(cmd, flags, light_root / "include", light_root / "analysis")
            row = {"variant": list(extra), "state": "ready", "seconds": round(time.perf_counter() - t0, 1),
                   "macros": len(d.macros), "files": d.full_only_files}
            row["ops"] = _ops_base(cmd, flags, light_root)[2]  # in the same job: builds wait for both
            row["seconds_with_ops"] = round(time.perf_counter() - t0, 1)
            report.append(row)
        except Exception as exc:  # noqa: BLE001 - a warmer that cannot warm one set reports it
            report.append({"variant": list(extra), "state": "error", "error": repr(exc)[:500]})
    return report


def _analysis_flags(v: dict[str, str]) -> list[str]:
    """A flag set's nvcc flags (its build.ninja variables) as a build's analyses key them."""
    from multikernelbench.backends.extbuild import nvcc_light

    return nvcc_light.analysis_flags(shlex.split(v.get("cuda_cflags", "")) + shlex.split(v.get("cuda_post_cflags", "")))


def _ops_base(cmd: list[str], flags: list[str], light_root: Path) -> tuple[Path | None, bool, dict[str, Any]]:
    """Trusted side of the ops path (backends/extbuild/ops_path.py): its index and base folder for one flag set,
    in the shared analysis folder (made once; a second caller waits for the first under its lock). (base
    folder or None, usable, report)."""
    from multikernelbench.backends.extbuild import nvcc_driver, nvcc_light, ops_headers, ops_path

    cmd = nvcc_driver.underlying(cmd)  # nvcc itself: the base is settled by compiling a probe
    header = ops_headers.functions_header(ops_headers.include_dirs(flags))
    if header is None:
        return None, False, {"state": "skipped", "why": "no ATen/Functions.h on the include path"}
    index, base = ops_path.make(cmd, flags, light_root / "include", light_root / "analysis",
                                nvcc_light.analysis_key(cmd, flags), header.read_text())
    if index.broken:
        return None, False, {"state": "unusable", "why": index.broken[:300]}
    return base, True, {"state": "ready", "base_operators": len(ops_headers.KEEP | set(index.always))}


def host_pch_flags(variants: tuple[tuple[str, ...], ...] = WARM_VARIANTS) -> list[tuple[tuple[str, ...], dict[str, str]]]:
    """Each ``extra_cuda_cflags`` variant's build.ninja variables (a fraction of a second each). Separate from
    :func:`warm_host_pch` because asking torch's loader patches it process-wide: done before any thread."""
    found: list[tuple[tuple[str, ...], dict[str, str]]] = []
    _each_variant_ninja(variants, True, lambda extra, build_dir: found.append(
        (extra, _ninja_vars((build_dir / "build.ninja").read_text()))), cuda_flags=True)
    return found


def _probe_args(v: dict[str, str], probe: Path, shim: Path) -> list[str]:
    """nvcc's arguments for a probe ``cuda.cu`` exactly as a light build's split driver gets them: torch's
    ``$cuda_cflags -c IN -o OUT $cuda_post_cflags``, then the light path's ``-I <shared shim>``."""
    return (shlex.split(v.get("cuda_cflags", "")) + ["-c", str(probe), "-o", str(probe.with_suffix(".o"))]
            + shlex.split(v.get("cuda_post_cflags", "")) + ["-I", str(shim)])


def _per_flag_set(light_root: Path, flag_sets: list[tuple[tuple[str, ...], dict[str, str]]],
                  make: Callable[[str, dict[str, str], Path, Path], list[dict[str, Any]]]) -> list[dict[str, Any]]:
    """``make(nvcc, variables, shim, probe folder)``'s report rows for each flag set, each tagged with its
    variant; a set whose nvcc is not one word is skipped, one that fails is reported (the warmer goes on)."""
    from multikernelbench.backends.extbuild import nvcc_driver, nvcc_light

    shim = light_root / "include"
    report: list[dict[str, Any]] = []
    for extra, v in flag_sets:
        nvcc = nvcc_driver.underlying(shlex.split(v.get("nvcc", "nvcc")))
        if len(nvcc) != 1:
            report.append({"variant": list(extra), "state": "skipped", "why": f"nvcc is {v.get('nvcc')!r}"})
            continue
        try:
            nvcc_light.write_shim(shim)
            with tempfile.TemporaryDirectory(prefix=warm_wait.probe_dir_prefix(os.getpid())) as tmp:
                rows = make(nvcc[0], v, shim, Path(tmp))
            report.extend({"variant": list(extra), **row} for row in rows)
        except Exception as exc:  # noqa: BLE001 - a warmer that cannot warm one set reports it
            report.append({"variant": list(extra), "state": "error", "error": repr(exc)[:500]})
    return report


def warm_host_pch(light_root: Path | str, flag_sets: list[tuple[tuple[str, ...], dict[str, str]]]) -> list[dict[str, Any]]:
    """Trusted side of :mod:`host_pch`: for each flag set (:func:`host_pch_flags`), the precompiled prelude part
    of nvcc's final host compile, from a probe ``cuda.cu`` compiled with exactly the arguments a light build's
    split driver gets (:func:`_probe_args`). ~40 s of CPU per flag set on the dev host, once per host."""
    from multikernelbench.backends.extbuild import host_pch, nvcc_split

    light_root = Path(light_root)

    def make(nvcc: str, v: dict[str, str], shim: Path, tmp: Path) -> list[dict[str, Any]]:
        probe = tmp / "cuda.cu"
        probe.write_text(host_pch.PRELUDE + "__global__ void mkb_host_pch_probe() {}\n")
        rows = [nvcc_split.make_host_pch(nvcc, _probe_args(v, probe, shim), light_root / "host", tmp_root=str(tmp))]
        # The ops path's prelude reads the base folder instead of the light shim: a prefix of its own.
        base, usable, _ = _ops_base(shlex.split(v.get("nvcc", "nvcc")), _analysis_flags(v), light_root)
        if usable and base is not None:
            rows.append({"ops": True, **nvcc_split.make_host_pch(nvcc, _probe_args(v, probe, base), light_root / "host",
                                                                tmp_root=str(tmp))})
        return rows

    return _per_flag_set(light_root, flag_sets, make)


def pch_dirs(pch_root: Path | str, variants: tuple[tuple[str, ...], ...],
             with_cuda: bool = False) -> dict[tuple[str, ...], Path]:
    """Each ``extra_cflags`` variant's folder under ``pch_root`` (where its .gch is or would be). Asks torch's
    loader for each set's exact flags the way :func:`warm_pch` does, stopping before any build (a fraction of
    a second in a process that has torch imported). Raises what the loader raises."""
    probe = FastExtensionBuilder(pch_root, pch=False, cache=False, split_nvcc=False, pch_root=pch_root)
    dirs: dict[tuple[str, ...], Path] = {}

    def visit(extra: tuple[str, ...], build_dir: Path) -> None:
        dirs[extra] = probe._pch_paths((build_dir / "build.ninja").read_text())[4].parent

    _each_variant_ninja(variants, with_cuda, visit)
    return dirs


def missing_pch_variants(pch_root: Path | str, variants: tuple[tuple[str, ...], ...],
                         with_cuda: bool = False) -> list[tuple[str, ...]]:
    """The ``extra_cflags`` variants whose ``.gch`` is not in ``pch_root`` yet (:func:`pch_dirs`: where a
    warmer process would cost seconds of CPU just to import torch, this costs a fraction of one). Raises what
    the loader raises; callers decide what a probe that cannot tell means."""
    return missing_in(pch_dirs(pch_root, variants, with_cuda))


def missing_in(dirs: dict[tuple[str, ...], Path]) -> list[tuple[str, ...]]:
    """The variants of :func:`pch_dirs`'s answer whose ``.gch`` or light ``main.cpp`` header
    (backends/extbuild/light_main.py) is not there yet."""
    return [extra for extra, folder in dirs.items()
            if not (folder / _PCH_GCH).exists() or not light_main.ready(folder)]


def _background_priority() -> None:
    """In the warmer's child process, after ``setsid``: nice 10 for it and its session's autogroup (a niced
    warmer in a session of its own otherwise got as much CPU as a run's compile workers together: two warmers
    on a cold PCH folder slowed the builds beside them about threefold on 2 cores)."""
    lower_priority(10)


class PchWarmer:
    """Handle on a background warmer process started by the parent (``wait`` for tests and benchmarks)."""

    def __init__(self, pch_root: Path, env: dict[str, str], with_cuda: bool,
                 variants: tuple[tuple[str, ...], ...] = WARM_VARIANTS, background: bool = True,
                 wait: bool = False, light: bool = False, niced: bool | None = None,
                 cuda_variants: tuple[tuple[str, ...], ...] | None = None) -> None:
        """``background``: niced (a run's warmer shares a small host's cores with builds and, on GPU backends,
        with timing); False for a caller that waits for it. ``niced`` overrides that: a host with many cores
        gives one core to the warmer whose products every build waits for (builds wait while it marks its
        folders, see :mod:`warm_wait`); niced there, the builds' compilers starved it (no PCH was ready in a
        whole 16-candidate H200 run); not niced, it also makes its products side by side (``--side-by-side``).
        ``wait``: if another process is making one of the headers, wait for it instead of skipping it.
        ``light``: also make the light-header analyses (:func:`warm_light`, a few seconds; before the PCH when
        not side by side) in :func:`light_root_of` the PCH folder, and the precompiled host prefixes. ``variants`` are ``extra_cflags`` sets (main.cpp's PCH), ``cuda_variants`` ``extra_cuda_cflags``
        sets (the analyses and host prefixes; default: ``variants``), each in the order they are made."""
        self.pch_root = Path(pch_root)
        self.pch_root.mkdir(parents=True, exist_ok=True)
        cmd = [sys.executable, "-m", "multikernelbench.backends.extbuild.warm_jobs", "--warm-pch", str(self.pch_root),
               "--variants", json.dumps([list(v) for v in variants]),
               "--cuda-variants", json.dumps([list(v) for v in (variants if cuda_variants is None else cuda_variants)])]
        if not with_cuda:
            cmd.append("--cpu")
        if wait:
            cmd.append("--wait")
        if light and with_cuda:
            cmd.append("--light")
        if not (background if niced is None else niced):
            cmd.append("--side-by-side")
        with tempfile.NamedTemporaryFile(dir=self.pch_root, prefix="warm.", suffix=".log", delete=False) as log:
            self.log_path = Path(log.name)  # one per warmer: several may start in one process
            self.proc = subprocess.Popen(cmd, env={**os.environ, **env}, stdout=log, stderr=subprocess.STDOUT,
                                         stdin=subprocess.DEVNULL, start_new_session=True,
                                         preexec_fn=_background_priority if (background if niced is None
                                                                             else niced) else None)
        # Marked now, for the warmer: builds starting while it imports torch wait for it too.
        self.marked = [self.pch_root] + ([light_root_of(self.pch_root) / sub for sub in ("analysis", "host")]
                                         if light and with_cuda else [])
        for folder in self.marked:
            warm_wait.mark(folder, self.proc.pid)
        #: The log's text once :meth:`stop` has read it (a run's trace shows what the warmer did, and when).
        self.log_text = ""
        self._seen = 0  # characters of the log already returned by new_events

    @staticmethod
    def _events(text: str) -> list[tuple[float, str]]:
        out: list[tuple[float, str]] = []
        for line in text.splitlines():
            try:
                row = json.loads(line)
            except ValueError:
                continue
            if isinstance(row, dict) and isinstance(row.get("t"), (int, float)):
                what = json.dumps({k: v for k, v in row.items() if k != "t"})
                out.append((float(row["t"]), what[:600]))
        return out

    def new_events(self) -> list[tuple[float, str]]:
        """The timed lines written since the last call (complete lines only), from the live log or, once
        :meth:`stop` has removed it, from the text it read: a run's trace shows the warmer's steps as they
        happen, so a run cut short (a benchmark's cap) still says when each product came."""
        text = self.log_text
        if not text:
            try:
                text = self.log_path.read_text(errors="replace")
            except OSError:
                return []
        end = text.rfind("\n") + 1
        if end <= self._seen:
            return []
        chunk, self._seen = text[self._seen:end], end
        return self._events(chunk)

    def wait(self, timeout: float | None = None) -> int | None:
        try:
            return self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            return None

    def stop(self) -> None:
        """Stop a warmer still running when the run ends: its whole session (the compiler too), and remove its
        half-written .gch (named after the warmer's pid; never renamed into place). Its log is removed too
        unless it records a failure: every run starts a warmer, and one log per run piled up by the hundred
        in the shared PCH folder."""
        killed = self.proc.poll() is None
        if killed:
            try:
                os.killpg(self.proc.pid, 9)
            except (ProcessLookupError, PermissionError):
                self.proc.kill()
            self.proc.wait()
        for folder in self.marked:
            warm_wait.unmark(folder, self.proc.pid)
        for tmp in [*self.pch_root.glob(f"*/*.{self.proc.pid}.tmp"),
                    *self.pch_root.glob(f"*/{light_main.FOLDER}/**/*.{self.proc.pid}.tmp"),  # its .gch
                    *self.pch_root.glob(f"*/{light_main.FOLDER}/**/*.{self.proc.pid}.*.tmp"),  # write_if_changed
                    *light_root_of(self.pch_root).glob(f"*/*.{self.proc.pid}.tmp"),
                    *light_root_of(self.pch_root).glob(f"host/*/*.{self.proc.pid}.tmp")]:
            tmp.unlink(missing_ok=True)
        for tmp in Path(tempfile.gettempdir()).glob(warm_wait.probe_dir_prefix(self.proc.pid) + "*"):
            shutil.rmtree(tmp, ignore_errors=True)
        try:
            text = self.log_path.read_text(errors="replace")
        except OSError:
            return
        self.log_text = text
        failed = not killed and (self.proc.returncode != 0 or '"failed"' in text or '"error"' in text)
        if not failed:
            self.log_path.unlink(missing_ok=True)
