"""The precompiled prefix of nvcc's final host compile (backends/extbuild/host_pch.py, used by backends/extbuild/nvcc_split.py).

Fast tests of the prefix logic on synthetic cudafe1.cpp text (no compiler). The real round (where nvcc is
installed: the warmer's probe is precompiled, a shipped solution is compiled through the split driver with it,
and the object is compared section by section with the one built without it at the same path) is
tests/test_cuda_light_headers.py::test_a_shipped_solution_builds_the_same_object_with_the_precompiled_prefix,
whose module fixture already compiles that solution the same way without the prefix (one nvcc compile less).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from multikernelbench.backends.extbuild import host_pch, nvcc_split

FINAL = ('gcc -std=c++20 -D__CUDA_ARCH_LIST__=900 -c -x c++ -fPIC -O3 -I"/inc" -m64 '
         '"/tmp/tmpxft_0000_00000000-6_cuda.cudafe1.cpp" -o "/b/cuda.cuda.o"')
PRELUDE_OUT = "#pragma GCC diagnostic push\nnamespace at { struct Tensor; }\n#pragma GCC diagnostic pop\n"


def _cudafe(main: str, own: str) -> str:
    return f'# 1 "{main}"\n{PRELUDE_OUT}# 8 "{main}"\n{own}'


def test_prefix_is_what_the_prelude_produced():
    assert host_pch.prefix_of(_cudafe("/w/probe/cuda.cu", "void probe();\n")) == PRELUDE_OUT
    # A prefix that names the main file would differ between builds: none.
    assert host_pch.prefix_of('# 1 "/w/cuda.cu"\nconst char* f = "/w/cuda.cu";\n# 8 "/w/cuda.cu"\nx;\n') is None
    assert host_pch.prefix_of("int x;\n") is None


def test_key_ignores_input_and_output_only():
    other_io = FINAL.replace("tmpxft_0000", "tmpxft_ffff").replace("/b/", "/c/")
    assert host_pch.key(FINAL) == host_pch.key(other_io)
    assert host_pch.key(FINAL) != host_pch.key(FINAL.replace("-O3", "-O2"))
    assert host_pch.key(FINAL.replace(" -c", "")) is None  # not a compile of a cudafe1.cpp


def _root_with_header(tmp_path: Path) -> Path:
    root = tmp_path / "host"
    folder = root / host_pch.key(FINAL)
    folder.mkdir(parents=True)
    (folder / host_pch.HEADER).write_text(PRELUDE_OUT)
    (folder / host_pch.GCH).write_bytes(b"stands in for the .gch: apply only checks it is there")
    return root


def test_apply_swaps_an_identical_prefix_for_the_include(tmp_path):
    root = _root_with_header(tmp_path)
    src = tmp_path / "cuda.cudafe1.cpp"
    src.write_text(_cudafe("/b/cuda.cu", "void relu();\n"))
    final = FINAL.replace("/tmp/tmpxft_0000_00000000-6_cuda.cudafe1.cpp", str(src))
    assert host_pch.apply(root, final) == {"host_pch": "used"}
    header = root / host_pch.key(final) / host_pch.HEADER
    assert src.read_text() == f'# 1 "/b/cuda.cu"\n#include "{header}"\n# 8 "/b/cuda.cu"\nvoid relu();\n'


@pytest.mark.parametrize("change", [
    lambda t: t.replace("struct Tensor;", "struct Tensor; int planted;"),  # one declaration more
    lambda t: t.replace("pop", "pop "),  # one byte
    lambda t: t.replace(PRELUDE_OUT, PRELUDE_OUT[:-10]),  # shorter
])
def test_apply_leaves_any_other_text_alone(tmp_path, change):
    root = _root_with_header(tmp_path)
    src = tmp_path / "cuda.cudafe1.cpp"
    text = change(_cudafe("/b/cuda.cu", "void relu();\n"))
    src.write_text(text)
    final = FINAL.replace("/tmp/tmpxft_0000_00000000-6_cuda.cudafe1.cpp", str(src))
    assert host_pch.apply(root, final) == {"host_pch": "prefix differs"}
    assert src.read_text() == text


def test_no_header_for_other_flags(tmp_path):
    root = _root_with_header(tmp_path)
    src = tmp_path / "cuda.cudafe1.cpp"
    src.write_text(_cudafe("/b/cuda.cu", ""))
    final = FINAL.replace("-O3", "-O0").replace("/tmp/tmpxft_0000_00000000-6_cuda.cudafe1.cpp", str(src))
    assert host_pch.apply(root, final)["host_pch"] == "no header for these flags"


def test_module_id_is_the_flag_sets_not_the_builds():
    a = ["-O3", "-c", "/b1/cuda.cu", "-o", "/b1/cuda.cuda.o", "-DTORCH_EXTENSION_NAME=ext_1"]
    b = ["-O3", "-c", "/b2/cuda.cu", "-o", "/b2/cuda.cuda.o", "-DTORCH_EXTENSION_NAME=ext_2"]
    assert nvcc_split.module_identifier("/b1/cuda.cu", a) == nvcc_split.module_identifier("/b2/cuda.cu", b)
    assert nvcc_split.module_identifier("/b1/cuda.cu", a) != nvcc_split.module_identifier(
        "/b1/cuda.cu", [w.replace("-O3", "-O2") for w in a])
    assert re.fullmatch(r"_[0-9a-f]{16}_7_cuda_cu_mkb", nvcc_split.module_identifier("/b1/cuda.cu", a))
