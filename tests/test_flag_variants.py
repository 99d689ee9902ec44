"""The flag sets a run's candidates build with, read (never run) from their sources (backends/extbuild/flag_variants.py)."""

from __future__ import annotations

from pathlib import Path

from multikernelbench.backends.extbuild.flag_variants import scan

REPO = Path(__file__).resolve().parent.parent


def test_the_shipped_cuda_solutions_build_with_O3_for_nvcc_and_no_cflags():
    sources = [p.read_text() for p in sorted((REPO / "solutions" / "cuda").glob("*.py"))]
    used = scan(sources)
    assert used is not None
    assert used.cuda_cflags == (("-O3",),) and used.cflags == ((),)


def test_most_used_first_and_at_most_the_limit():
    call = "from torch.utils.cpp_extension import load_inline\nm = load_inline(name='x', cpp_sources='', {})\n"
    sources = ([call.format("extra_cuda_cflags=['-O2']")] * 3 + [call.format("extra_cuda_cflags=['-O3']")] * 2
               + [call.format("")] + [call.format("extra_cflags=['-O3'], extra_cuda_cflags=None")])
    used = scan(sources, limit=2)
    assert used.cuda_cflags == (("-O2",), ())  # () twice (absent, None), -O3 twice: a tie goes to the smaller set
    assert used.cflags == ((), ("-O3",))


def test_what_cannot_be_read_is_not_counted():
    sources = ["def f(:\n",  # not Python
               "import json\njson.load(open('x'))\n",  # not the extension loader
               "from torch.utils.cpp_extension import load_inline\nflags = ['-O3']\n"
               "load_inline(name='x', cpp_sources='', extra_cflags=flags, extra_cuda_cflags=flags)\n"]
    assert scan(sources) is None


ATTACK = '''import torch
from torch.utils.cpp_extension import load_inline
ext = load_inline(name="pwn", cpp_sources="int f() {{ return 0; }}", functions=["f"],
                  extra_cflags=["-O3", "-wrapper", "'/bin/sh,-c,touch {marker}'"])
'''


def test_a_candidates_flags_do_not_run_a_program_in_the_trusted_warmer(tmp_path):
    """Attack (issue #41, the trusted helpers): the candidate's source names its compile flags, the parent reads
    them before any build (CudaBackend.prepare_builds), and the warmer runs g++ with them outside every sandbox.
    gcc's ``-wrapper`` runs a program of the flag's choosing in place of cc1plus: here ``touch`` of a file in a
    folder no worker may write. Before the list of harmless flags the warmer created it (checked by running
    this test with ``flag_variants.harmless`` made to accept everything); now the set is not counted, so the
    warmer gets only the sets it would have had without this candidate."""
    from multikernelbench.backends.extbuild.cuda_warm import PchWarmer

    marker = tmp_path / "outside" / "warmer-ran-it"
    marker.parent.mkdir()
    used = scan([ATTACK.format(marker=marker)])
    sets = tuple(s for s in (used.cflags if used else ()) if s)  # () alone would build a real PCH: not the point
    if sets:
        warmer = PchWarmer(tmp_path / "pch", {}, with_cuda=False, variants=sets)
        assert warmer.wait(timeout=300) is not None
        warmer.stop()
    assert not marker.exists(), "the warmer ran the candidate's program"
    assert not sets


def test_harmless_flags_are_counted_and_those_naming_files_or_programs_are_not():
    from multikernelbench.backends.extbuild.flag_variants import harmless

    for ok in [(), ("-O3", "--use_fast_math"), ("-U__CUDA_NO_HALF_OPERATORS__", "--expt-relaxed-constexpr"),
               ("-Xcompiler", "-fopenmp"), ("-gencode", "arch=compute_90,code=sm_90"), ("-D", "N=4"),
               ("-std=c++17", "-Xptxas", "-v", "-arch=sm_90a", "-lineinfo")]:
        assert harmless(ok), ok
    for bad in [("-ccbin", "/tmp/cc"), ("-fplugin=/tmp/p.so",), ("-B/tmp",), ("-include", "/etc/hostname"),
                ("-I/tmp",), ("-Xcompiler", "-wrapper,/bin/sh"), ("-Xcompiler=-fplugin=/x.so",), ("-specs=/x",),
                ("-DX=' -wrapper",), ("-o", "/tmp/x"), ("-Wl,-rpath,/x",), ("-Wp,-include,/x",), ("-D",)]:
        assert not harmless(bad), bad
    call = "from torch.utils.cpp_extension import load_inline\nload_inline(name='x', cpp_sources='', {})\n"
    used = scan([call.format("extra_cuda_cflags=['-O3']")] * 2 + [call.format("extra_cuda_cflags=['-ccbin', '/x']")] * 3)
    assert used is not None and used.cuda_cflags == (("-O3",),)  # the unsafe set, though most used, is not
