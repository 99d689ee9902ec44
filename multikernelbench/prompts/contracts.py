"""What each platform's candidate must look like, stated once per backend and shared by every strategy.

The text is keyed by backend name in a registry rather than chosen by if-chains, so a new platform adds one
``register_contract(...)`` call (or, from another package, a ``multikernelbench.contracts`` entry point).
Each contract says exactly what the harness does (class name, how it is constructed, how tensors come in
and go out) and what counts as cheating, because a model that is not told the rules cannot be blamed for
breaking them — and a rule it was told can be enforced without argument.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from multikernelbench.registry import Registry


@dataclass(frozen=True)
class Contract:
    backend: str
    platform: str  # the hardware, in words
    language: str  # the kernel language, in words
    device: str  # where input tensors live
    build: str  # how kernels are built and called
    rules: tuple[str, ...] = field(default_factory=tuple)  # platform-specific musts
    not_allowed: tuple[str, ...] = field(default_factory=tuple)  # platform-specific cheating
    times_on_cpu_shape: bool = False  # the shape shown as "timed at" is the CPU one
    #: For a backend outside the package: the folder of its exemplar solutions, ``<category>/<backend>.py``
    #: (the references are the package's own, ``prompts/exemplars/<category>/reference.py``).
    exemplar_dir: str = ""


#: backend name -> Contract; a backend outside the package adds its own with ``register_contract`` or an entry
#: point in the ``multikernelbench.contracts`` group naming its Contract object.
CONTRACTS: Registry[Contract] = Registry("prompt contract", entry_point_group="multikernelbench.contracts")


def register_contract(contract: Contract) -> Contract:
    """Register ``contract`` under its backend; a different contract for a backend that has one raises."""
    return CONTRACTS.register(contract.backend, contract)


def get_contract(backend: str) -> Contract:
    try:
        return CONTRACTS.get(backend)
    except KeyError:
        raise KeyError(f"no prompt contract for backend {backend!r}; known: {', '.join(contract_backends())}") from None


def contract_backends() -> list[str]:
    return CONTRACTS.names()


# Rules every platform shares: the harness is the same, only the kernel language changes.
COMMON_RULES = (
    "Reply with one complete Python file in a single ```python code block. It must define "
    "`class ModelNew(nn.Module)` whose `__init__` and `forward` take exactly the same arguments as the "
    "reference `Model`.",
    "The harness builds `ModelNew(*get_init_inputs(shape))` right after `torch.manual_seed(s)`, exactly as it "
    "builds `Model`. If `Model` has parameters or layers (nn.Linear, nn.Conv1d, nn.Parameter, ...), create the "
    "same ones in the same order so they get identical values, and read their weights in your kernels.",
    "`forward` receives the same arguments as `Model.forward` (the tensors are contiguous, in the task's dtype; "
    "integer index tensors stay int64) and must return the same structure: a tensor, or a tuple of tensors, "
    "with the reference's shapes and dtype, on the same device.",
    "Correctness is checked on several shapes and fresh random inputs that you are not shown — including sizes "
    "that are not multiples of any tile or vector width — by comparing elementwise with "
    "|out - ref| <= atol + rtol * |ref|. Handle every shape the reference accepts; do not specialise on the "
    "shape shown.",
    "Kernels are built once at import time; the first call may not compile anything that takes minutes.",
)

COMMON_NOT_ALLOWED = (
    "calling PyTorch (or other library) operators that perform the task's main computation instead of your "
    "kernels — e.g. torch.matmul/@, F.conv*, torch.softmax, torch.sum, the reference layers' forward, "
    "cuBLAS/cuDNN/oneDNN/XLA ops; allocating outputs, .contiguous(), views, reshapes and zero-padding are fine",
    "modifying the input tensors in place",
    "caching results between calls, returning precomputed values, or inspecting the caller, the reference "
    "Model or the input generator",
    "detecting particular shapes or values and taking a shortcut for them",
    "lowering precision below the task's dtype (e.g. TF32 or fp16 arithmetic for a float32 task) or changing "
    "global settings (torch.backends flags, thread counts, environment variables)",
    "doing work outside forward's call (background threads, unsynchronised streams) so it escapes timing",
)

register_contract(Contract(
    backend="cpu",
    platform="a multi-core x86-64 CPU",
    language="C++ (OpenMP and compiler vectorisation allowed)",
    device="CPU tensors",
    build="Write the C++ in a string and build it at import time with "
          "`torch.utils.cpp_extension.load_inline(name=..., cpp_sources=..., functions=[...], "
          "extra_cflags=['-O3', '-march=native', '-fopenmp', '-fno-trapping-math'], extra_ldflags=['-fopenmp'])`; "
          "`forward` calls the built functions (the build runs on the machine that times it; these are the flags "
          "the harness keeps torch's headers precompiled for, other flags are allowed but build slower). "
          "Include <torch/extension.h>, take `torch::Tensor` arguments, call `.contiguous()` and read raw "
          "pointers with `data_ptr<float>()`.",
    rules=("Use a unique extension `name`.", "Parallelise with `#pragma omp parallel for` over independent work; "
           "the harness sets the thread count."),
    not_allowed=("calling ATen compute functions inside the C++ (at::matmul, torch::conv1d, x.sum(), ...)",),
    times_on_cpu_shape=True,
))

register_contract(Contract(
    backend="cuda",
    platform="an NVIDIA datacenter GPU (Hopper class)",
    language="CUDA C++",
    device="CUDA tensors on the current device",
    build="Write the kernels and their host launchers in `cuda_sources` and the launchers' declarations in "
          "`cpp_sources`, and build at import time with `torch.utils.cpp_extension.load_inline(name=..., "
          "cpp_sources=..., cuda_sources=..., functions=[...], extra_cuda_cflags=['-O3'])`; `forward` calls "
          "the built functions.",
    rules=("Launch on the current stream (`at::cuda::getCurrentCUDAStream()`) and allocate outputs with "
           "`torch::empty(..., x.options())`.",
           "Use a unique extension `name`; check the launch with `C10_CUDA_KERNEL_LAUNCH_CHECK()`."),
    not_allowed=("calling cuBLAS, cuDNN, CUTLASS library GEMMs or ATen compute functions for the main "
                 "computation",),
))

register_contract(Contract(
    backend="triton",
    platform="an NVIDIA datacenter GPU (Hopper class)",
    language="Triton (`@triton.jit` kernels)",
    device="CUDA tensors on the current device",
    build="Write `@triton.jit` kernels in the file and launch them from `forward` with a grid "
          "(`kernel[grid](...)`); allocate outputs with `torch.empty(..., device=x.device, dtype=x.dtype)`.",
    rules=("Mask loads and stores at the edges (`mask=offs < n`).",
           "For float32 `tl.dot`, pass `input_precision=\"ieee\"` (the TF32 default is outside tolerance)."),
    not_allowed=("torch compute operators in `forward` for the main computation (only allocation, "
                 "views and launches)",),
))

register_contract(Contract(
    backend="pallas",
    platform="an NVIDIA datacenter GPU (Hopper class), through JAX",
    language="JAX Pallas (`jax.experimental.pallas.pallas_call` kernels)",
    device="torch CUDA tensors; JAX sees the same GPU",
    build="Write Pallas kernels and call them through `pl.pallas_call(kernel, out_shape=..., grid=..., "
          "in_specs=[pl.BlockSpec(block_shape, index_map), ...], out_specs=..., interpret=...)` inside a "
          "`jax.jit` function. Convert tensors without copies: `jax.dlpack.from_dlpack(t.detach().contiguous())` "
          "in, `torch.from_dlpack(result)` out.",
    rules=("Pass `interpret=jax.default_backend() == \"cpu\"` so the same file runs in the interpreter "
           "without a GPU.",
           "The GPU lowering requires every array a kernel loads or stores to have a power-of-2 number of "
           "elements: zero-pad inputs with jnp.pad to whole blocks and slice the result.",
           "For float32 dots pass `precision=jax.lax.Precision.HIGHEST, preferred_element_type=jnp.float32` "
           "(`jnp.dot` or `lax.dot_general`; `pl.dot` is deprecated).",
           "JAX is 32-bit by default: convert int64 index tensors to int32 before handing them over."),
    not_allowed=("jax.numpy/lax operators outside the kernels for the main computation (padding, reshapes, "
                 "transposes of weights and slicing are fine)",),
))

register_contract(Contract(
    backend="opencl",
    platform="an OpenCL device chosen by the harness (PoCL on a multi-core x86-64 CPU, or an NVIDIA GPU through "
             "its OpenCL driver)",
    language="OpenCL C (kernels built from source with pyopencl)",
    device="CPU torch tensors (host memory); your code moves data to and from the OpenCL device",
    build="At import time: `ctx = cl.create_some_context(interactive=False)` (the harness selects the device), "
          "`queue = cl.CommandQueue(ctx)`, `prg = cl.Program(ctx, SRC).build()` with your `__kernel` functions in "
          "the OpenCL C string `SRC`, and keep the kernels (`kern = prg.my_kernel`). In `forward`: copy inputs in "
          "with `cl.Buffer(ctx, cl.mem_flags.READ_ONLY | cl.mem_flags.COPY_HOST_PTR, hostbuf=x.numpy())`, "
          "allocate outputs with `cl.Buffer(ctx, cl.mem_flags.WRITE_ONLY, out.nbytes)`, launch with "
          "`kern(queue, global_size, local_size_or_None, *args)` (scalars as numpy scalars: `np.int32(n)`, "
          "`np.float32(a)`) and copy the result into a `torch.empty` tensor with "
          "`cl.enqueue_copy(queue, out.numpy(), out_buf)` before returning. The copies count in your time.",
    rules=("Weights of nn layers/parameters require grad: pass `w.detach().contiguous().numpy()`.",
           "Guard every work-item against the end of the data (`if (i < n)`): global sizes are rounded up to "
           "whole work-groups. Use `long` indices where a product of sizes can exceed 2^31.",
           "float32 tasks compute in float (no `half`, `native_*`/`half_*` math or `-cl-fast-relaxed-math`); int64 "
           "index tensors are `long` in OpenCL C."),
    not_allowed=("doing the task's computation on the host (torch or numpy operators, Python loops) instead of in "
                 "your OpenCL kernels; pyopencl's library kernels (pyopencl.array arithmetic, ElementwiseKernel, "
                 "ReductionKernel, clmath) count as library code",),
    times_on_cpu_shape=True,
))

register_contract(Contract(
    backend="numba_cuda",
    platform="an NVIDIA datacenter GPU (Hopper class)",
    language="Numba CUDA (`@cuda.jit` kernels in Python syntax, `from numba import cuda`)",
    device="CUDA tensors on the current device",
    build="Write `@cuda.jit` kernels in the file and launch them from `forward` as "
          "`kernel[blocks, threads, torch_stream()](as_array(x), as_array(out), n)` with "
          "`from multikernelbench.interop.numba_cuda import as_array, grid_blocks, torch_stream`: `as_array` "
          "hands the kernel the tensor's own memory (zero copy, `__cuda_array_interface__`), `torch_stream()` is "
          "torch's current stream, `grid_blocks(n, threads)` the block count for a grid-stride loop over n items. "
          "Allocate outputs with `torch.empty(..., device=x.device, dtype=x.dtype)`.",
    rules=("Write grid-stride loops (`for i in range(cuda.grid(1), n, cuda.gridsize(1))`, or over tiles with "
           "`cuda.blockIdx.x` / `cuda.gridDim.x`) and size grids with `grid_blocks`: without a GPU the same file "
           "runs in Numba's CUDA simulator, where every thread is a Python thread.",
           "Launch on `torch_stream()` (never Numba's default stream) so the kernel is ordered with torch's work.",
           "Shared memory: `cuda.shared.array(shape, numba.float32)` with a constant shape, and "
           "`cuda.syncthreads()` reached by every thread of the block (keep it outside `if` branches)."),
    not_allowed=("torch compute operators in `forward` for the main computation (only allocation, views and "
                 "launches)", "moving the data to the host (`.cpu()`, `.numpy()`, `copy_to_host`) to compute it "
                 "there"),
))

register_contract(Contract(
    backend="helion",
    platform="an NVIDIA datacenter GPU (Hopper class)",
    language="Helion (`@helion.kernel` functions with `hl.tile` loops; Helion lowers them to Triton)",
    device="CUDA tensors on the current device",
    build="Write `@helion.kernel(config=helion.Config(block_sizes=[...]))` functions (`import helion`, "
          "`import helion.language as hl`): allocate outputs at the top of the function, then loop "
          "`for tile in hl.tile(size)` and read/write tiles with torch-style indexing and torch ops "
          "(`x[tile]`, `torch.relu`, `.sum(-1)`, `torch.addmm(acc, a, b)`, `hl.zeros`, `hl.full`) inside the "
          "loop; Helion compiles each loop nest into one Triton kernel. `forward` calls the kernel functions.",
    rules=("Give every kernel an explicit `config=helion.Config(block_sizes=[...])` with one size per `hl.tile` "
           "dimension (powers of two): there is no autotuning in the harness.",
           "Inside `hl.tile` loops, torch ops (`torch.addmm`, `.sum(1)`, `torch.exp`, `torch.where`) are Helion's kernel "
           "language and compile into your kernel: the library-op rule below applies to code outside those loops. "
           "Only allocation and shape arithmetic outside the `hl.tile` loops: code there runs on the host.",
           "Give reduction and scan dimensions as non-negative numbers (`.sum(1)`, `torch.cumsum(x, dim=1)`): "
           "Triton's CPU interpreter, which checks kernels where there is no GPU, scans the wrong axis for `-1`.",
           "Accumulate float32 dots in float32 (`hl.zeros([tm, tn], dtype=torch.float32)` + `torch.addmm`); "
           "the harness sets IEEE float32 dot precision."),
    not_allowed=("torch compute operators outside `hl.tile` loops or in `forward` for the main computation",
                 "`dot_precision=\"tf32\"` or other precision-lowering settings in a float32 task"),
))
