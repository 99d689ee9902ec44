"""The light header path's hazard checks, without a compiler (backends/extbuild/light_headers.py): which host
code may go light, which sends a ``.cu`` to the stock headers and why, the namespace-scope scan and header diff
they rest on, and the driver command that puts the light driver around the split one. The real nvcc compiles
are in test_cuda_light_headers.py."""

from __future__ import annotations

from pathlib import Path

import pytest
from _light_sources import PRELUDE, RELU_LIKE

from multikernelbench.backends.extbuild import light_headers as lh
from multikernelbench.backends.extbuild import nvcc_driver, nvcc_light


def _diff(**names) -> lh.HeaderDiff:
    macros = names.pop("macros", [])
    spaces = names.pop("namespaces", {})
    return lh.HeaderDiff(macros=macros, names={"": [], "torch": [], "at": [], "c10": [], **names},
                         namespaces=spaces)




def test_plain_host_code_may_go_light():
    d = _diff(**{"": ["py", "PyObject"], "torch": ["save", "nn"]}, namespaces={"torch": ["nn"]})
    assert lh.light_hazards(PRELUDE + RELU_LIKE, d) == []


@pytest.mark.parametrize("extra, expect", [
    ("#include <pybind11/pybind11.h>\nnamespace py = pybind11;", "Python/pybind11"),
    ("PyObject* g() { return nullptr; }", "Python/pybind11"),
    ("using namespace torch;", "unqualified lookup"),
    ("namespace T = torch;", "unqualified lookup"),
    ("void g(torch::Tensor t) { torch::save(t, \"x.pt\"); }", "torch::save"),
    ("#ifdef HAVE_FANCY\nint fancy = 1;\n#endif", "HAVE_FANCY"),
    ("int clash = 1;", "clash"),  # a namespace-scope declaration named like a global of the full set
])
def test_hazards_send_the_cu_to_stock(extra, expect):
    d = _diff(**{"": ["clash", "py"], "torch": ["save", "nn"]}, namespaces={"torch": ["nn"]},
              macros=["HAVE_FANCY"])
    why = lh.light_hazards(PRELUDE + RELU_LIKE + extra, d)
    assert why and expect in " ".join(why), why


def test_sub_namespace_use_is_left_to_the_compiler():
    """``torch::nn::X`` is an entity of a namespace only the full set has: the light compile fails on it and the
    driver falls back (tested with nvcc below); it is not a silent hazard."""
    d = _diff(torch=["nn"], namespaces={"torch": ["nn"]})
    assert lh.light_hazards(PRELUDE + "static_assert(sizeof(torch::nn::LinearOptions) > 0, \"\");", d) == []


def test_scope_scan_finds_new_names_per_namespace():
    pp = "\n".join([
        '# 1 "light.h"', "namespace at { class Tensor; int known(int); }", "namespace torch { using namespace at; }",
        '# 1 "full.h"', "namespace torch {", "using at::known;", "void save(const at::Tensor& t);",
        "struct Holder { int inner(); };", "namespace nn { int deep(); }", "int known(double);", "}",
        "namespace c10::cuda { int dev(); }", 'extern "C" { int PyThing(void); }', "static int helper = 3;",
        "int f() { int local = 1; return local; }"])
    names = lh.namespace_scope_names(pp, {"full.h"}, also={"light.h"})
    assert set(names["torch"]) == {"save", "Holder", "nn", "known"}, names["torch"]
    assert names["torch"]["nn"] == "namespace" and "inner" not in names["torch"] and "deep" not in names["torch"]
    assert {"c10", "PyThing", "helper", "f"} <= set(names[""]) and "local" not in names[""] and "dev" not in names[""]
    assert "known" in names["at@also"] and "Tensor" in names["at@also"]


def test_diff_keeps_only_what_the_light_set_lacks():
    light = '# 1 "a.h"\n#define A 1\nnamespace at { int known(int); }\n'
    full = light + '# 1 "b.h"\n#define B 2\n#define A 1\nnamespace at { int known(double); int fresh(); }\n'
    d = lh.diff(light, full)
    assert d.macros == ["B"] and d.names["at"] == ["fresh"] and d.full_only_files == 1


def test_strip_comments_and_strings():
    code = lh.strip_comments_and_strings('a /* py:: */ b // PyObject\nc "using namespace torch;" R"x(py::)x" d')
    assert "py" not in code and "torch" not in code and code.split() == ["a", "b", "c", '""', '""', "d"]


def test_the_driver_puts_the_light_driver_around_the_split_one(tmp_path):
    """What a build's ``nvcc`` (``PYTORCH_NVCC``: backends/extbuild/nvcc_driver.py) runs for one compile: the
    light driver outermost, its stock command the split driver around nvcc, the reports in the build folder."""
    opts = nvcc_driver.DriverOptions(split=True, light=True, shim=tmp_path / "inc", cache=tmp_path / "light",
                                     shared=tmp_path / "shared")
    cmd = nvcc_driver.command(opts, ["/usr/local/cuda/bin/nvcc"], ["-O3", "-c", "/b/cuda.cu", "-o", "cuda.cuda.o"])
    assert cmd[1].endswith("nvcc_light.py") and "--" in cmd
    inner = cmd[cmd.index("--") + 1:]
    assert inner[1].endswith("nvcc_split.py") and inner[2] == "/usr/local/cuda/bin/nvcc"
    assert inner[3:] == ["-O3", "-c", "/b/cuda.cu", "-o", "cuda.cuda.o"]
    assert cmd[cmd.index("--nvcc-words") + 1] == "3" and cmd[cmd.index("--shared") + 1].endswith("shared")
    assert Path(cmd[cmd.index("--report") + 1]) == Path.cwd() / nvcc_driver.HEADER_REPORT
    # The options round-trip through the one line torch writes into build.ninja.
    line = opts.env_value(["/usr/local/cuda/bin/nvcc"])
    import shlex

    words = shlex.split(line)
    assert words[1].endswith("nvcc_driver.py")
    assert nvcc_driver.DriverOptions.parse(words[2:]) == (opts, ["/usr/local/cuda/bin/nvcc"])
    assert nvcc_driver.underlying(words) == ["/usr/local/cuda/bin/nvcc"]


def test_analysis_flags_drop_what_differs_per_build():
    args = ["-DTORCH_EXTENSION_NAME=x_v3", "-I/inc", "-c", "/b/cuda.cu", "-o", "/b/cuda.cuda.o", "-MD", "-MF",
            "/b/d", "-O3"]
    assert nvcc_light.analysis_flags(args) == ["-I/inc", "-O3"]
