"""main.cpp against the light ``<torch/extension.h>`` (backends/extbuild/light_main.py), with real compilers.

Fast tier (g++ on small headers, no torch): the driver in ninja's command compiles light when the source has no
hazard, with the full header when the analysis names one or is missing, and again with the full header when the
light compile fails; the build.ninja step chooses the driver only where the warmer made everything, and a folder
built before keeps what it was built with (ninja reruns a command whose text changed).

Slow (torch's headers, the cpu backend): the warmer makes the light header, and a shipped C++ solution built
light exports and calls the same functions as the full build and computes the same result; a source that needs
the C++ frontend (``torch::nn``) is built by the fallback. Every other C++ build of the suite goes light too.
"""

from __future__ import annotations

import json
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from _light_sources import symbols

from multikernelbench.backends.extbuild import light_headers as lh
from multikernelbench.backends.extbuild import light_main
from multikernelbench.backends.extbuild.cuda_build import _PCH_GCH, _PCH_HEADER, FastExtensionBuilder

CXX = shutil.which("c++") or shutil.which("g++")
needs_cxx = pytest.mark.skipif(CXX is None, reason="no C++ compiler")

FULL_H = "#pragma once\n#include <torch/extension.h>\n"
# The "full" torch/extension.h of the small world: a light part and what only the full set declares.
REAL_EXT = "#pragma once\nnamespace torch { int light_fn(); int full_fn(); namespace nn { struct Linear {}; } }\n"


def _world(tmp: Path, analysis: bool = True) -> tuple[Path, Path, Path]:
    """A PCH set folder with a light header set (only ``torch::light_fn``) and its analysis; the "real" headers
    folder with the full ``torch/extension.h``. Returns (set folder, full header, real include folder)."""
    real = tmp / "real"
    (real / "torch").mkdir(parents=True)
    (real / "torch" / "extension.h").write_text(REAL_EXT)
    set_dir = tmp / "set"
    shim, header, _, path = light_main.paths(set_dir)
    (shim / "torch").mkdir(parents=True)
    light_text = "#pragma once\nnamespace torch { int light_fn(); }\n"
    (shim / "torch" / "extension.h").write_text(light_text)
    header.write_text(light_text)
    full = set_dir / _PCH_HEADER
    full.write_text(FULL_H)
    if analysis:
        path.write_text(lh.HeaderDiff(names={"torch": ["full_fn", "nn"]}, namespaces={"torch": ["nn"]}).to_json())
    return set_dir, full, real


def _drive(tmp: Path, set_dir: Path, full: Path, real: Path, source: str) -> tuple[int, dict]:
    src = tmp / "main.cpp"
    src.write_text("#include <torch/extension.h>\n" + source)
    cmd = [sys.executable, light_main.__file__, str(set_dir), str(full), "--", CXX, "-include", str(full),
           "-isystem", str(real), "-c", str(src), "-o", str(tmp / "main.o")]
    res = subprocess.run(cmd, cwd=tmp, capture_output=True, text=True)
    rows = [json.loads(x) for x in (tmp / light_main.REPORT).read_text().splitlines()]
    return res.returncode, rows[-1]


@needs_cxx
def test_no_hazard_compiles_light(tmp_path):
    rc, row = _drive(tmp_path, *_world(tmp_path), "int f() { return torch::light_fn(); }\n")
    assert (rc, row["path"], row["why"]) == (0, "light", [])
    assert (tmp_path / "main.o").exists()


@needs_cxx
def test_a_name_only_the_full_header_declares_compiles_full(tmp_path):
    rc, row = _drive(tmp_path, *_world(tmp_path), "int f() { return torch::full_fn(); }\n")
    assert (rc, row["path"]) == (0, "full")
    assert "torch::full_fn" in row["why"][0]


@needs_cxx
def test_a_failed_light_compile_is_compiled_again_with_the_full_header(tmp_path):
    # A member of a namespace both sets know of (torch::nn is only a namespace name: no hazard by name).
    rc, row = _drive(tmp_path, *_world(tmp_path), "torch::nn::Linear layer;\n")
    assert (rc, row["path"]) == (0, "full")
    assert row["why"][0].startswith("light compile failed")


@needs_cxx
def test_no_analysis_compiles_full(tmp_path):
    rc, row = _drive(tmp_path, *_world(tmp_path, analysis=False), "int f() { return torch::light_fn(); }\n")
    assert (rc, row["path"]) == (0, "full")
    assert row["why"][0].startswith("no light main analysis")


@needs_cxx
def test_a_broken_source_fails_with_the_full_compile_error(tmp_path):
    rc, row = _drive(tmp_path, *_world(tmp_path), "int f() { return undeclared_thing(); }\n")
    assert rc != 0 and row["path"] == "full"


def test_python_is_a_hazard_for_a_cu_not_for_main():
    d = lh.HeaderDiff()
    src = "PYBIND11_MODULE(m, m) { m.def(\"f\", &f); }"
    assert lh.light_hazards(src, d) and not lh.light_hazards(src, d, python_ok=True)


NINJA = """ninja_required_version = 1.3
cxx = c++

cflags = -DTORCH_EXTENSION_NAME=x -O3
post_cflags = -fPIC

rule compile
  command = $cxx -MMD -MF $out.d $cflags -c $in -o $out $post_cflags
  depfile = $out.d

build main.o: compile /b/main.cpp
"""


def _ninja_folder(tmp: Path, builder: FastExtensionBuilder, light_ready: bool) -> Path:
    """A build folder with torch's build.ninja, and the PCH set of its flags with (or without) the light main."""
    set_dir = builder._pch_paths(NINJA)[4].parent
    set_dir.mkdir(parents=True, exist_ok=True)
    (set_dir / _PCH_HEADER).write_text(FULL_H)
    (set_dir / _PCH_GCH).write_text("not a real gch")
    if light_ready:
        shim, header, gch, analysis = light_main.paths(set_dir)
        (shim / "torch").mkdir(parents=True)
        for p in (shim / "torch" / "extension.h", header, gch):
            p.write_text("x")
        analysis.write_text(lh.HeaderDiff().to_json())
    build = tmp / "build"
    build.mkdir()
    (build / "build.ninja").write_text(NINJA)
    return build


@pytest.mark.parametrize("ready", [True, False])
def test_the_driver_is_put_in_front_only_where_the_warmer_made_everything(tmp_path, ready):
    builder = FastExtensionBuilder(tmp_path / "cache", pch_root=tmp_path / "pch")
    build = _ninja_folder(tmp_path, builder, ready)
    builder._add_pch(build)
    text = (build / "build.ninja").read_text()
    assert ("light_main.py" in text) is ready
    assert f"-include {builder._pch_paths(NINJA)[3]}" in text
    assert (build / "mkb_pch_used").read_text().endswith(" light") is ready


def test_the_option_off_keeps_the_full_header(tmp_path):
    builder = FastExtensionBuilder(tmp_path / "cache", pch_root=tmp_path / "pch", light_main=False)
    build = _ninja_folder(tmp_path, builder, True)
    builder._add_pch(build)
    assert "light_main.py" not in (build / "build.ninja").read_text()


def test_a_folder_built_light_is_loaded_with_the_same_command(tmp_path):
    """The device worker's load writes build.ninja again: the command must come out the same, or ninja
    compiles main.cpp again inside the load."""
    builder = FastExtensionBuilder(tmp_path / "cache", pch_root=tmp_path / "pch")
    build = _ninja_folder(tmp_path, builder, True)
    builder._add_pch(build)
    first = (build / "build.ninja").read_text()
    (build / ".ninja_log").write_text("# ninja log v5\n")
    (build / "build.ninja").write_text(NINJA)  # torch's loader writes its own text again
    builder._add_pch(build)
    assert (build / "build.ninja").read_text() == first


# ---- torch's headers (the cpu backend) --------------------------------------------------------------------
REPO = Path(__file__).resolve().parent.parent


BUILD_CHILD = """
import json, os, sys, torch
from pathlib import Path
from multikernelbench.backends.registry import get_backend
folder, light, check = Path(sys.argv[1]), sys.argv[2] == "1", sys.argv[3]
backend = get_backend("cpu", light_main=light)
folder.mkdir(parents=True)
os.environ.update(backend.worker_env(folder))
module = backend.load(Path(sys.argv[4]).read_text(), folder)
x = torch.randn(4099)
print(json.dumps(bool(torch.equal(module.ModelNew()(x), eval(check)))))
"""


def _cpu_build(folder: Path, source: str, light: bool, check: str) -> list[dict]:
    """Build ``source`` with the cpu backend in a process of its own (one builder per process, as in a compile
    worker), check its ModelNew against ``check`` (an expression of ``x``); the light-main report rows."""
    src = folder.parent / f"{folder.name}.py"
    src.write_text(source)
    res = subprocess.run([sys.executable, "-c", BUILD_CHILD, str(folder), "1" if light else "0", check, str(src)],
                         capture_output=True, text=True, timeout=900)
    assert res.returncode == 0 and res.stdout.strip().endswith("true"), res.stdout[-2000:] + res.stderr[-3000:]
    return [json.loads(r) for p in folder.rglob(light_main.REPORT) for r in p.read_text().splitlines()]


@pytest.mark.slow
def test_a_shipped_cpu_solution_built_light_is_the_full_build(tmp_path, cpu_pch):
    source = (REPO / "solutions" / "cpu" / "activation.relu.py").read_text()
    built = {}
    for on in (True, False):
        rows = _cpu_build(tmp_path / f"light{int(on)}", source, on, "torch.relu(x)")
        assert [r["path"] for r in rows] == (["light"] if on else [])
        built[on] = next((tmp_path / f"light{int(on)}").rglob("main.o"))
    light, full = symbols(built[True]), symbols(built[False])
    assert light[0] == full[0] and light[0]
    assert light[1] == full[1]


@pytest.mark.slow
def test_a_source_needing_the_cpp_frontend_builds_through_the_fallback(tmp_path, cpu_pch):
    source = '''
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cpp = r"""
torch::Tensor twice(torch::Tensor x) { torch::nn::Identity id; return id->forward(x) * 2; }
"""
_ext = load_inline(name="mkb_light_main_frontend", cpp_sources=cpp, functions=["twice"], verbose=False)


class ModelNew(nn.Module):
    def forward(self, x):
        return _ext.twice(x)
'''
    rows = _cpu_build(tmp_path / "b", source, True, "x * 2")
    assert [r["path"] for r in rows] == ["full"], rows
    assert rows[0]["why"], shlex.join(rows[0]["why"])
