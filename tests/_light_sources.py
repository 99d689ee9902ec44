"""Sources shared by the light-header tests (test_light_header_hazards.py: the checks without a compiler;
test_cuda_light_headers.py: real nvcc compiles)."""

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
