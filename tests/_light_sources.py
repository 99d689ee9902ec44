"""Sources and helpers shared by the light-header tests (test_light_header_hazards.py: the checks without a
compiler; test_cuda_light_headers.py: real nvcc compiles; test_light_main.py: main.cpp's light header)."""

import re
import subprocess
from pathlib import Path

PRELUDE = "#include <torch/types.h>\n#include <cuda.h>\n#include <cuda_runtime.h>\n"  # what load_inline prepends

#: A relu ``.cu`` whose comments, strings and locals look like hazards and are not.
RELU_LIKE = r"""
#include <torch/extension.h>
__global__ void k(const float* x, float* y, long n) { long i = threadIdx.x; if (i < n) y[i] = x[i]; }
torch::Tensor f(torch::Tensor x) {
    TORCH_CHECK(x.is_cuda(), "cuda");  // py:: in a comment does not count
    auto y = torch::empty_like(x);
    float* py = y.data_ptr<float>();   // a local named like pybind's alias shadows it in both builds
    k<<<1, 32>>>(x.data_ptr<float>(), py, x.numel());
    const char* s = "using namespace torch;";
    return y;
}
"""


def symbols(obj: Path) -> tuple[set[str], set[str]]:
    """(strong external definitions, references into torch's libraries): what the object exports (the
    candidate's functions, kernels and their launch stubs) and which torch functions it calls. Weak inline
    instantiations, local labels and ``.cold`` parts are left out: GCC's inlining budget grows with the size
    of the translation unit, so the bigger stock TU inlines differently (seen: 101 weak symbols stock, 98
    light, for the same relu); the program's meaning is in the two sets compared here."""
    norm = lambda n: re.sub(r"tmpxft_[0-9a-f]+_[0-9a-f]+", "tmpxft", n)  # noqa: E731 - per-run temp name
    out = subprocess.run(["nm", "--defined-only", "--extern-only", str(obj)], capture_output=True, text=True,
                         check=True).stdout
    strong = {norm(p[2]) for p in (ln.split() for ln in out.splitlines()) if len(p) == 3 and p[1] in "TDBRS"}
    out = subprocess.run(["nm", "-u", str(obj)], capture_output=True, text=True, check=True).stdout
    calls = {ln.split()[-1] for ln in out.splitlines() if re.search(r"_ZN?K?(2at|3c10|5torch)", ln)}
    return strong, calls
