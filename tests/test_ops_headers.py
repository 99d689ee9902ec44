"""The ops path's decisions without a compiler (backends/extbuild/ops_headers.py, ops_path.py): which operators a
``.cu`` gets, when it must take the light path instead, and the index made from two preprocessor outputs. The
real compiles (nvcc, symbols compared with the light build) are in test_cuda_light_headers.py."""

from __future__ import annotations

import time

from _light_sources import PRELUDE, RELU_LIKE

from multikernelbench.backends.extbuild import host_pch, ops_headers, ops_path

FUNCTIONS_H = """#pragma once
#include <ATen/Context.h>
#include <ATen/ops/abs.h>
#include <ATen/ops/maximum.h>
#include <ATen/ops/var.h>
namespace at {
inline Tensor var(const Tensor& self, int dim) { return at::var(self, IntArrayRef{dim}); }
}
"""


def _pp(files: dict[str, str]) -> str:
    """A preprocessor output with line markers: each file's text after its marker."""
    return "".join(f'# 1 "{name}"\n{text}\n' for name, text in files.items())


NONE = {"/inc/ATen/Context.h": "namespace at { class Context; }",
        "/inc/ATen/ops/var.h": "namespace at { Tensor var(const Tensor& self, IntArrayRef dim); }"}
EVERY = {**NONE,
         "/inc/ATen/ops/abs.h": "namespace at { inline Tensor abs(const Tensor& self) { return self; } }",
         "/inc/ATen/ops/maximum.h": "#define MKB_MAXIMUM_MACRO 1\nnamespace at { Tensor maximum(const Tensor& a, "
                                    "const Tensor& b); }\nnamespace at { namespace symint { template <typename T> "
                                    "Tensor maximum_symint(T x); } }",
         "/inc/ATen/misc.h": "namespace at { Tensor stray(const Tensor& a); }\nint global_only;"}


def _index() -> ops_headers.OpsIndex:
    return ops_headers.analyse(_pp(NONE), _pp(EVERY), ops_headers.operators(FUNCTIONS_H))


def test_the_shim_keeps_only_the_chosen_operators_and_every_other_line():
    text = ops_headers.shim_text(FUNCTIONS_H, {"maximum"})
    assert "#include <ATen/ops/maximum.h>" in text and "ops/abs.h" not in text and "ops/var.h" not in text
    assert "#include <ATen/Context.h>" in text and "inline Tensor var(" in text  # the rest as it is
    assert ops_headers.operators(FUNCTIONS_H) == ["abs", "maximum", "var"]


def test_the_index_places_each_name_in_its_operator_header():
    index = _index()
    assert index.where["abs"] == ["abs"] and index.where["maximum"] == ["maximum"]
    assert index.where["maximum_symint"] == ["maximum"]  # at::symint's templates count too
    assert index.where["stray"] == ["?"]  # declared outside any operator header: not placeable
    assert "var" not in index.where  # the no-operator set has it already
    assert index.macros == ["MKB_MAXIMUM_MACRO"] and index.globals == ["global_only"]
    assert index.operators == 3


def test_a_cu_gets_the_headers_of_every_name_it_contains_qualified_or_not():
    index = _index()
    ops, why = ops_headers.plan(PRELUDE + RELU_LIKE + "at::Tensor f(at::Tensor x) { return at::abs(x); }\n", index)
    assert why == [] and "abs" in ops and "maximum" not in ops
    # Unqualified (found by argument-dependent lookup in the full set): the header comes all the same. Without
    # it, a template of the candidate's would take the call silently (a different function, no error).
    unqualified = "template <typename T> T maximum(const T& a, const T& b) { return a; }\n" \
                  "at::Tensor g(at::Tensor a, at::Tensor b) { return maximum(a, b); }\n"
    ops, why = ops_headers.plan(PRELUDE + RELU_LIKE + unqualified, index)
    assert why == [] and "maximum" in ops
    # Mentioned only in a comment or a string: not a use.
    ops, why = ops_headers.plan(PRELUDE + RELU_LIKE + '// at::abs\nconst char* s = "maximum";\n', index)
    assert "abs" not in ops and "maximum" not in ops


def test_what_sends_a_cu_to_the_light_path():
    index = _index()
    cases = {
        "pastes tokens": "#define CALL(f) at::f##_out\n",
        "macro only the operators define": "#ifdef MKB_MAXIMUM_MACRO\nint k = 2;\n#endif\n",
        "no per-operator header declares alone": "at::Tensor s(at::Tensor a) { return at::stray(a); }\n",
        "global name of the operators": "static int global_only = 3;\n",
    }
    for what, code in cases.items():
        _, why = ops_headers.plan(PRELUDE + RELU_LIKE + code, index)
        assert why, what
    broken = _index()
    broken.broken = "the base headers do not compile"
    assert ops_headers.plan(PRELUDE + RELU_LIKE, broken)[1]


def test_extra_operators_need_the_extension_header_before_any_code():
    assert ops_path.extension_first(PRELUDE + "\n// a kernel\n#include <torch/extension.h>\n#include <x.h>\nint a;\n")
    assert not ops_path.extension_first(PRELUDE + "int a;\n#include <torch/extension.h>\n")
    assert not ops_path.extension_first(PRELUDE + "int a;\n")
    text = ops_path.extra_text({"maximum", "abs"})
    assert text.index("<torch/types.h>") < text.index("ops/abs.h") < text.index("ops/maximum.h")


def test_the_per_build_folder_is_not_part_of_the_host_prefix_key():
    final = "gcc -I/b/light/ops-1 -I/tmp/mkb-ops-x -isystem /t -c -x c++ a.cudafe1.cpp -o a.o"
    spaced = "gcc -I/b/light/ops-1 -I /tmp/mkb-ops-x -isystem /t -c -x c++ a.cudafe1.cpp -o a.o"
    base = "gcc -I/b/light/ops-1 -isystem /t -c -x c++ a.cudafe1.cpp -o a.o"
    assert host_pch.key(final, ("/tmp/mkb-ops-x",)) == host_pch.key(base)
    assert host_pch.key(spaced, ("/tmp/mkb-ops-x",)) == host_pch.key(base)
    assert host_pch.key(final) != host_pch.key(base)  # only the named folder is left out
    assert host_pch.key(final, ("/b/light/ops-1",)) != host_pch.key(base)


def test_the_per_build_folder_is_not_part_of_the_module_id():
    """The module id names the prelude's anonymous namespaces in cudafe++'s output: were it to hold the per-build
    folder, the prelude's text (the host prefix) would differ for every build with extra operators (seen on an
    H100: 9 of 15 ops builds "prefix differs", the 6 without extras "used")."""
    from multikernelbench.backends.extbuild import nvcc_split

    args = ["-O3", "-I/b/ops-1", "-c", "cuda.cu", "-o", "cuda.o"]
    plain = nvcc_split.module_identifier("cuda.cu", args)
    assert nvcc_split.module_identifier("cuda.cu", ["-I/tmp/x", *args], ("/tmp/x",)) == plain
    assert nvcc_split.module_identifier("cuda.cu", ["-I", "/tmp/x", *args], ("/tmp/x",)) == plain
    assert nvcc_split.module_identifier("cuda.cu", ["-I/tmp/x", *args]) != plain


def test_with_a_warmer_a_build_neither_makes_the_index_nor_waits_for_it(tmp_path):
    """The index costs ~15-30 CPU-s and a build's cache is its own: with the warmer's folder given, a build that
    finds no index there takes the light path at once (``None``) instead of making one (the command here would
    fail if it ran); the warmer's, once there, is read."""
    shared = tmp_path / "analysis"
    shared.mkdir()
    t0 = time.monotonic()
    assert ops_path.find(["false"], [], tmp_path, tmp_path / "cache", (shared,), "k", FUNCTIONS_H) is None
    assert time.monotonic() - t0 < 2 and not (tmp_path / "cache").exists()
    k = ops_path.key("k", FUNCTIONS_H)
    (shared / f"{k}.ops.json").write_text(_index().to_json())
    assert ops_path.find(["false"], [], tmp_path, tmp_path / "cache", (shared,), "k", FUNCTIONS_H) is None  # no base
    ops_path.write_folder(shared / f"ops-{k}", FUNCTIONS_H, ops_headers.KEEP)
    index, base = ops_path.find(["false"], [], tmp_path, tmp_path / "cache", (shared,), "k", FUNCTIONS_H)
    assert index.where == _index().where and base == shared / f"ops-{k}"
