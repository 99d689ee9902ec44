"""The flag sets a run's candidates build with, read (never run) from their sources (backends/flag_variants.py)."""

from __future__ import annotations

from pathlib import Path

from multikernelbench.backends.flag_variants import scan

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
