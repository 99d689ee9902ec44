"""The light header path for a candidate's ``.cu`` (backends/extbuild/light_headers.py, backends/extbuild/nvcc_light.py)
through real compiles, where nvcc is installed (CPU only: objects are compiled, never run): a shipped solution
through the driver, sharing one module fixture to keep the CPU cost to five nvcc runs plus two analyses (the light
one, also the hazard case's, whose speculative compile starts beside the first, and the ops path's). The hazard
checks without a compiler are in test_light_header_hazards.py and test_ops_headers.py.

* the shipped solution takes the light path;
* the same solution plus one line that needs the C++ frontend (``torch::nn``) fails light and is built by the
  driver's stock fallback, in the same call, with stock's exit status;
* the two objects export the same functions and call the same torch functions (see ``_symbols``): the light
  build is the stock build's module (the extra line is a ``static_assert``, which emits nothing). ``main.cpp`` (the bindings) is not touched by the
  light path, so the extension's functions are those of the stock build.
* once the analysis is there the same solution takes the ops path (only the operator headers it names,
  backends/extbuild/ops_headers.py), and its object too exports and calls what the light one does;
* the light object, compiled through the split driver as a run does, is also the object without the precompiled
  host prefix that backends/extbuild/host_pch.py's real round compares with (one nvcc compile for both).
"""

from __future__ import annotations

import inspect
import json
import re
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest
from _light_sources import PRELUDE, RELU_LIKE
from _light_sources import symbols as _symbols

from multikernelbench.backends.extbuild import light_headers as lh
from multikernelbench.backends.extbuild import nvcc_driver, nvcc_light, nvcc_split

REPO = Path(__file__).resolve().parent.parent
NVCC = shutil.which("nvcc")


# ---- real compiles (nvcc, no GPU) ---------------------------------------------------------------------------
def _flags(stub: Path) -> list[str]:
    import torch.utils.cpp_extension as ce

    std = "-std=c++20" if "-std=c++20" in inspect.getsource(ce._write_ninja_file_to_build_library) else "-std=c++17"
    flags = ["-DTORCH_EXTENSION_NAME=mkb_light_test", "-DTORCH_API_INCLUDE_EXTENSION_H", f"-I{stub}"]
    for d in ce.include_paths() + [sysconfig.get_paths()["include"]]:
        flags += ["-isystem", d]
    return flags + list(ce.COMMON_NVCC_FLAGS) + ["-gencode=arch=compute_90,code=sm_90", "--compiler-options",
                                                 "-fPIC", std, "-O3"]


def _cuda_sources(path: Path) -> str:
    text = path.read_text()
    return re.search(r'cuda_src = r"""(.*?)"""', text, re.S).group(1)


def _run(cmd: list[str], timeout: float = 1800) -> subprocess.CompletedProcess:
    """Run the driver in a session of its own; on timeout its compilers go too (not left orphaned)."""
    import os
    import signal

    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
        raise
    return subprocess.CompletedProcess(cmd, proc.returncode, out, err)


def _split_command(stub: Path) -> list[str]:
    """nvcc through the split driver with the test's flags (what follows: ``-c``, ``-o`` and the driver's own)."""
    return [sys.executable, nvcc_split.__file__, NVCC, *_flags(stub)]


def _session_alive(sid: int) -> list[str]:
    """Command names of the live processes in session ``sid`` (zombies left out)."""
    alive = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            text = stat.read_text()
        except OSError:
            continue
        fields = text[text.rindex(")") + 2:].split()  # state ppid pgrp session ...
        if int(fields[3]) == sid and fields[0] != "Z":
            alive.append(text[text.index("(") + 1:text.rindex(")")])
    return alive


def _start_hazard(work: Path) -> subprocess.Popen:
    """The light driver (around the split one) on a ``.cu`` with a hazard only the analysis finds: a macro only
    the full header defines (the C++ frontend's; not one the source check alone catches, such as pybind11's),
    with the fixture's analysis cache, which is empty when this starts (see
    test_a_light_compile_started_before_the_analysis_stops_when_it_finds_a_hazard)."""
    folder = work / "hazard"
    folder.mkdir()
    cu = folder / "hazard.cu"
    cu.write_text(PRELUDE + RELU_LIKE + "#ifdef FORWARD_HAS_DEFAULT_ARGS\n#error mkb-stock-branch\n#endif\n")
    cmd = [sys.executable, nvcc_light.__file__, "--shim", str(work / "shim"), "--cache", str(work / "analysis"),
           "--report", str(folder / "r.jsonl"), "--nvcc-words", "3", "--", sys.executable, nvcc_split.__file__,
           NVCC, *_flags(work / "stub"), "-c", str(cu), "-o", str(folder / "hazard.o")]
    return subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)


def _finish_hazard(proc: subprocess.Popen, work: Path) -> tuple[int, str, list[str], dict]:
    """(exit status, stderr, live processes of its session once it exited, its report row)."""
    try:
        _, err = proc.communicate(timeout=1800)
        leftovers = _session_alive(proc.pid)
    finally:
        subprocess.run(["pkill", "-KILL", "-s", str(proc.pid)])
    row = json.loads((work / "hazard" / "r.jsonl").read_text().splitlines()[-1])
    return proc.returncode, err, leftovers, row


@pytest.fixture(scope="module")
def compiled(tmp_path_factory):
    if NVCC is None:
        pytest.skip("nvcc not installed")
    work = tmp_path_factory.mktemp("light")
    stub = work / "stub"
    import torch.utils.cpp_extension as ce

    if not any(Path(d, "c10/cuda/impl/cuda_cmake_macros.h").exists() for d in ce.include_paths()):
        (stub / "c10/cuda/impl").mkdir(parents=True)  # the CPU build of torch lacks this config header
        (stub / "c10/cuda/impl/cuda_cmake_macros.h").write_text("#pragma once\n")
    src = _cuda_sources(REPO / "solutions" / "cuda" / "activation.relu.py")
    files = {"light": PRELUDE + src,
             # The same source once the analysis is there: the ops path (backends/extbuild/ops_path.py), which
             # makes its own index first (the warmer's job in a run).
             "ops": PRELUDE + src,
             # Needs the C++ frontend: the light compile fails, the driver builds it stock. Emits no code.
             "fallback": PRELUDE + src + "\nstatic_assert(sizeof(torch::nn::LinearOptions) > 0, \"frontend\");\n"}
    out = {}
    # Started first, beside the light compile below: both find no analysis, so both start their light compile
    # speculatively; one makes the analysis (under its lock), the other waits for it and reads it (a run's
    # first builds do the same). One analysis (two nvcc -E of torch's headers) instead of one per test.
    hazard = _start_hazard(work)
    try:
        for name, text in files.items():
            if name == "fallback":
                out["hazard"] = _finish_hazard(hazard, work)
            cu = work / name / "cuda.cu"  # load_inline's name: nvcc's module id (and the host prefix) holds it
            cu.parent.mkdir()
            cu.write_text(text)
            obj = cu.parent / "cuda.cuda.o"
            # Through the driver a run's build.ninja names (PYTORCH_NVCC): the light driver around the split one.
            # The light object is then also the stock-split build that
            # test_a_shipped_solution_builds_the_same_object_with_the_precompiled_prefix compares with (one nvcc
            # compile, ~36 CPU-s, instead of two).
            opts = nvcc_driver.DriverOptions(split=True, light=True, shim=work / "shim", cache=work / "analysis")
            res = _run([sys.executable, nvcc_driver.__file__, *opts.argv(), "--", NVCC, *_flags(work / "stub"),
                        "-c", str(cu), "-o", str(obj)])
            report = cu.parent / nvcc_driver.HEADER_REPORT  # beside the compile's output, as in a build folder
            out[name] = (res, json.loads(report.read_text().splitlines()[-1]), obj)
    finally:
        if "hazard" not in out:  # the light compile failed first: its compilers go too
            subprocess.run(["pkill", "-KILL", "-s", str(hazard.pid)])
    return out


@pytest.mark.slow
def test_shipped_solution_takes_the_light_path(compiled):
    res, row, obj = compiled["light"]
    assert res.returncode == 0, res.stderr[-2000:]
    assert row["path"] == "light" and row["why"] == [] and obj.exists(), row
    assert row.get("speculative") is True  # the first compile: its light attempt started beside the analysis


@pytest.mark.slow
def test_cu_needing_the_frontend_falls_back_to_stock_in_the_same_call(compiled):
    res, row, obj = compiled["fallback"]
    assert res.returncode == 0 and obj.exists(), res.stderr[-2000:]
    assert row["path"] == "stock" and "light compile failed" in row["why"][0], row
    assert row["ops_why"][0].startswith("ops compile failed"), row  # the ops path was tried first, and failed
    assert "speculative" not in row  # the analysis was there: it came first, as before
    assert "error" not in res.stderr.lower()  # the failed light attempt's messages are not shown


@pytest.mark.slow
def test_shipped_solution_takes_the_ops_path_once_the_analysis_is_there(compiled):
    res, row, obj = compiled["ops"]
    assert res.returncode == 0, res.stderr[-2000:]
    assert row["path"] == "ops" and row["ops_why"] == [] and obj.exists(), row
    assert row["ops_extra"] == ["min"], row  # std::min's name is an operator's too: its header comes
    assert "light_s" not in row and "speculative" not in row  # no light compile ran


@pytest.mark.slow
def test_ops_and_light_objects_export_and_call_the_same_functions(compiled):
    ops_def, ops_calls = _symbols(compiled["ops"][2])
    light_def, light_calls = _symbols(compiled["light"][2])
    assert any("empty_like" in s for s in ops_calls)  # torch::empty_like, from variable_factories.h, as before
    assert ops_def == light_def, sorted(ops_def ^ light_def)[:20]
    assert ops_calls == light_calls, sorted(ops_calls ^ light_calls)[:20]


@pytest.mark.slow
def test_the_real_ops_index_gives_an_unqualified_call_its_operator(compiled):
    """With torch's real headers: a candidate template named like an operator would take an unqualified call
    with tensors silently if the operator's header were missing (the full set finds at::maximum by
    argument-dependent lookup, an exact match); the plan includes it."""
    from multikernelbench.backends.extbuild import ops_headers

    index = ops_headers.OpsIndex.from_json(next((compiled["ops"][2].parent.parent / "analysis")
                                                .glob("*.ops.json")).read_text())
    assert not index.broken and index.operators > 1000 and "scalar_tensor" in index.always
    code = PRELUDE + RELU_LIKE + "template <typename T> T maximum(const T& a, const T& b) { return a; }\n" \
                                 "at::Tensor g(at::Tensor a, at::Tensor b) { return maximum(a, b); }\n"
    ops, why = ops_headers.plan(code, index)
    assert why == [] and "maximum" in ops


@pytest.mark.slow
def test_light_and_stock_objects_export_and_call_the_same_functions(compiled):
    light_def, light_calls = _symbols(compiled["light"][2])
    stock_def, stock_calls = _symbols(compiled["fallback"][2])
    assert any("relu_forward" in s for s in light_def)  # the function the bindings call
    assert any("empty_like" in s for s in light_calls)  # torch::empty_like: the same torch function both ways
    assert light_def == stock_def, (sorted(light_def ^ stock_def)[:20])
    assert light_calls == stock_calls, (sorted(light_calls ^ stock_calls)[:20])


def _sections(obj: Path) -> dict[str, bytes]:
    """Every section's bytes, by name."""
    names = re.findall(r"^\s*\[\s*\d+\]\s+(\S+)", subprocess.run(["readelf", "-S", "-W", str(obj)], check=True,
                       capture_output=True, text=True).stdout, flags=re.M)
    return {name: subprocess.run(["objcopy", "-O", "binary", f"--only-section={name}", str(obj), "/dev/stdout"],
                                 capture_output=True).stdout for name in names if name != "NULL"}


def _nm_lines(obj: Path) -> list[str]:
    out = subprocess.run(["nm", str(obj)], capture_output=True, text=True, check=True).stdout
    return [re.sub(r"tmpxft_[0-9a-f]+_[0-9a-f]+", "tmpxft", ln) for ln in out.splitlines()]


@pytest.mark.slow
def test_a_shipped_solution_builds_the_same_object_with_the_precompiled_prefix(tmp_path, compiled):
    """The real round of the precompiled prefix of nvcc's final host compile (backends/extbuild/host_pch.py;
    tests/test_host_pch.py has its logic): the warmer's probe is precompiled with the light build's flags, the
    shipped relu's ``.cu`` is compiled again through the split driver with the prefix, at the same path, and the
    object is the fixture's light one (the split driver without the prefix), section by section; the only
    difference two stock builds have, nvcc's per-process temporary file name in one local symbol, is
    normalised. Here rather than in test_host_pch.py so that the compile without the prefix is the fixture's."""
    from multikernelbench.backends.extbuild import host_pch

    res, row, without = compiled["light"]
    assert res.returncode == 0 and row["path"] == "light", row
    work = without.parent.parent  # the fixture's work folder (objects are in <work>/<name>/)
    shim = ["-I", str(work / "shim")]  # where the light path's <torch/extension.h> is (nvcc_light appends it)
    root, probe = tmp_path / "host", tmp_path / "probe"
    probe.mkdir()
    (probe / "cuda.cu").write_text(host_pch.PRELUDE + "__global__ void mkb_host_pch_probe() {}\n")
    assert host_pch.PRELUDE == PRELUDE  # the prelude the warmer precompiles is load_inline's
    made = nvcc_split.make_host_pch(NVCC, _flags(work / "stub") + ["-c", str(probe / "cuda.cu"), "-o",
                                                                   str(probe / "cuda.o"), *shim], root)
    assert made["state"] == "made", made
    python, split, *nvcc = _split_command(work / "stub")
    report, with_pch = tmp_path / "report.jsonl", tmp_path / "with.o"
    res = _run([python, split, "--host-pch", str(root), "--report", str(report), *nvcc,
                "-c", str(work / "light" / "cuda.cu"), "-o", str(with_pch), *shim])
    assert res.returncode == 0, res.stderr[-2000:]
    assert '"host_pch": "used"' in report.read_text()
    assert _nm_lines(with_pch) == _nm_lines(without)
    a, b = _sections(with_pch), _sections(without)
    assert a.keys() == b.keys() and len(a) > 10
    differ = [n for n in a if a[n] != b[n] and n not in (".symtab", ".strtab")]
    assert not differ, differ  # the symbol tables hold nvcc's temporary file name (compared above, normalised)


@pytest.mark.slow
def test_a_compile_error_is_stocks_error(tmp_path, compiled):
    """A ``.cu`` that fails both ways ends with stock's messages and status (a missing header: both attempts
    stop in the preprocessor, seconds each; the analysis is cached by now)."""
    work = compiled["light"][2].parent.parent
    cu = tmp_path / "bad.cu"
    cu.write_text(PRELUDE + "#include <mkb/no_such_header.h>\n")
    report = tmp_path / "r.jsonl"
    res = _run([sys.executable, nvcc_light.__file__, "--shim", str(work / "shim"), "--cache",
                str(work / "analysis"), "--report", str(report), "--", NVCC, *_flags(work / "stub"),
                "-c", str(cu), "-o", str(tmp_path / "bad.o")])
    row = json.loads(report.read_text().splitlines()[-1])
    assert res.returncode != 0 and row["path"] == "stock" and row["rc"] == res.returncode
    # One message (stock's): the light attempt's is not shown.
    assert res.stderr.count("fatal error") == 1 and "no_such_header" in res.stderr and not (tmp_path / "bad.o").exists()


# Candidates whose meaning a light path without the checks would change silently: each compiles with the light
# header too, but the full header (what the candidate was written against) makes it a different program.
SILENT_CHANGES = {
    # The full header defines it (pybind11's version): light would drop the branch the author wrote.
    "macro": "#ifdef PYBIND11_VERSION_MAJOR\nconstexpr int kScale = 2;\n#else\nconstexpr int kScale = 1;\n#endif\n",
    # Only the full header declares torch::set_printoption_sci_mode; a same-named at:: entity would be found
    # through `namespace torch { using namespace at; }` in the light set.
    "torch_name": "void quiet() { torch::set_printoption_sci_mode(false); }\n",
    # Declares `py`, the full header's global alias for pybind11: stock fails to compile, light would not.
    "global_clash": "static int py = 3;\n",
}


@pytest.mark.slow
@pytest.mark.parametrize("case", sorted(SILENT_CHANGES))
def test_real_header_difference_catches_silent_changes(compiled, case):
    analysis = next(p for p in (compiled["light"][2].parent.parent / "analysis").glob("*.json")
                    if not p.name.endswith(".ops.json"))  # the light analysis, not the ops path's index
    d = lh.HeaderDiff.from_json(analysis.read_text())
    assert lh.light_hazards(PRELUDE + RELU_LIKE, d) == []  # the plain case still goes light
    assert lh.light_hazards(PRELUDE + RELU_LIKE + SILENT_CHANGES[case], d), case


def test_the_shim_written_from_several_threads_at_once(tmp_path):
    """The warmer's jobs run side by side in one process and each writes the shared shim on a fresh folder: with
    one temporary name per process, one thread's rename lost the file to another's (173 of 200 rounds failed
    with FileNotFoundError, and the host prefixes were never made)."""
    import threading

    errors: list[BaseException] = []
    for i in range(100):
        folder = tmp_path / str(i)
        barrier = threading.Barrier(3)

        def write(barrier: threading.Barrier = barrier, folder: Path = folder) -> None:
            barrier.wait()
            try:
                nvcc_light.write_shim(folder)
            except BaseException as exc:  # noqa: BLE001 - collected and asserted below
                errors.append(exc)

        threads = [threading.Thread(target=write) for _ in range(3)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert (folder / "torch" / "extension.h").read_text() == lh.SHIM_TEXT
    assert not errors, errors[:3]


@pytest.mark.slow
def test_a_light_compile_started_before_the_analysis_stops_when_it_finds_a_hazard(compiled):
    """With no analysis yet, the light compile starts beside it (a run's first builds; here beside the fixture's
    first compile, which shares the analysis: see :func:`_start_hazard`); the analysis then finds a macro only
    the full header defines (the C++ frontend's; not one the source check alone catches, such as pybind11's),
    so the light compile is stopped, every compiler of it (through the split driver, whose chains run in
    process groups of their own), and the stock build decides: here the ``#error`` its branch holds, while the
    light build would have compiled."""
    returncode, err, leftovers, row = compiled["hazard"]
    assert row.get("speculative") is True and row["path"] == "stock", row
    assert any("FORWARD_HAS_DEFAULT_ARGS" in w for w in row["why"]) and "light_s" not in row, row
    assert returncode != 0 and err.count("error: #error mkb-stock-branch") == 1, err[-2000:]
    assert leftovers == [], leftovers  # the stopped light compile left no compiler running
