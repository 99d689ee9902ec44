"""Static rules of the Python-syntax GPU DSLs: ``numba_cuda`` (``@cuda.jit``) and ``helion`` (``@helion.kernel``).

What the shared rules already cover for them: torch compute on the forward path (``reference_op``,
``library_compute``; for Helion only the host statements of a kernel count, see
``static_rules.host_body``), compilers, streams, patches, ``numba.float16``-style precision names. What is
specific, and here:

* numba_cuda: computing on the host. Candidates hold zero-copy device views (``as_array``); pulling data to
  the host (``.cpu()``, ``.numpy()``, ``copy_to_host``) or calling numpy/CuPy compute on the forward path does
  the work outside any kernel of the candidate's. In the simulator everything is on the CPU, so the runtime
  probes cannot see this; on the GPU the dispatcher recorder sees ``.cpu()`` copies only as helpers.
* helion: settings that lower float32 precision (``dot_precision="tf32"``/``"tf32x3"``, ``fast_math=True``);
  the harness's worker sets IEEE dots, a kernel's own settings override it.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable

from multikernelbench.anticheat import static_rules as R
from multikernelbench.anticheat.static_core import Context, register
from multikernelbench.anticheat.static_rules import Finding

#: Host transfers a numba_cuda forward path must not make (the data stays on the device).
HOST_TRANSFERS = {"cpu", "numpy", "tolist", "copy_to_host", "to_device"}
#: numpy calls that only make scalars, dtypes or buffers, never the task's compute.
NUMPY_HELPERS = {"int8", "int16", "int32", "int64", "uint32", "uint64", "intc", "intp", "float32", "float64",
                 "dtype", "empty", "empty_like", "zeros", "zeros_like"}
#: Array libraries whose kernels would do the work instead of the candidate's (CuPy, its SciPy twin).
GPU_ARRAY_LIBRARIES = ("cupy", "cupyx")


@register("numba_cuda", custom_kernel=True)
def numba_host_compute(ctx: Context) -> Iterable[Finding]:
    """Data pulled to the host, numpy compute or CuPy library kernels on a numba_cuda forward path."""
    for node in R.calls(ctx.reachable):
        name = ctx.call_name(node)
        short = name.rsplit(".", 1)[-1]
        if isinstance(node.func, ast.Attribute) and short in HOST_TRANSFERS:
            yield Finding(node.lineno, "numba_host_compute", f"forward path calls `{R.dotted(node.func)}` (moves "
                          "data to or from the host instead of computing in a kernel on the device)")
        elif name.startswith("numpy.") and short not in NUMPY_HELPERS:
            yield Finding(node.lineno, "numba_host_compute", f"forward path computes with `{R.dotted(node.func)}` "
                          "on the host (numpy), not in a Numba kernel")
        elif name.split(".")[0] in GPU_ARRAY_LIBRARIES:
            yield Finding(node.lineno, "numba_host_compute", f"forward path calls `{R.dotted(node.func)}` "
                          "(CuPy library kernels)")


@register("helion")
def helion_precision(ctx: Context) -> Iterable[Finding]:
    """Helion settings that compute float32 below IEEE precision."""
    if ctx.task_dtype not in ("float32", "float64"):
        return
    for node in ast.walk(ctx.tree):
        if not isinstance(node, ast.Call):
            continue
        for kw in node.keywords:
            value = kw.value.value if isinstance(kw.value, ast.Constant) else None
            if kw.arg == "dot_precision" and value != "ieee":
                yield Finding(node.lineno, "helion_precision", f"sets dot_precision={value!r} in a {ctx.task_dtype} "
                              "task (TF32 dots are below the task's precision; use \"ieee\")")
            elif kw.arg == "fast_math" and value is not False:
                yield Finding(node.lineno, "helion_precision", f"sets fast_math in a {ctx.task_dtype} task")
