"""Static first filter: AST rules over the candidate's Python and the C++/CUDA source strings it embeds.

Runs in the trusted parent on the source text only (``ast.parse``, no execution). Every finding carries a
line number so the reason in the result points at the offending code. Rules are registered per backend in
a registry (``"*"`` = every backend) so that what counts as "the custom kernel" stays platform-specific
without if-chains over platform names. Static rules are easy to dodge (string building, ``getattr``,
``exec``); the runtime checks in :mod:`multikernelbench.anticheat.runtime` are the real defence.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterable

from multikernelbench.anticheat import static_rules as R
from multikernelbench.anticheat.static_rules import Finding

__all__ = ["Context", "Finding", "RULES", "Rule", "check_source", "check_task_candidate", "register"]


from multikernelbench.anticheat.static_core import RULES, Context, Rule, register  # noqa: E402


def check_source(source: str, backend: str, reference_source: str = "", task_dtype: str = "float32",
                 require_custom_kernel: bool = True) -> list[Finding]:
    """All findings of the rules registered for ``backend`` (and ``"*"``), sorted by line."""
    try:
        ctx = Context(source, reference_source, task_dtype, backend)
    except SyntaxError:
        return []  # the compile step reports syntax errors with the interpreter's own message
    findings: set[Finding] = set()
    for _, rule in RULES.items():
        if not rule.applies_to(backend) or (rule.custom_kernel and not require_custom_kernel):
            continue
        findings.update(rule.fn(ctx))
    return sorted(findings, key=lambda f: (f.line, f.rule, f.message))


def check_task_candidate(source: str, task, backend: str, require_custom_kernel: bool = True) -> list[Finding]:
    from multikernelbench.tasks.kernelbench.runtime import reference_text

    # An imported KernelBench-format task holds its reference as a string: the rules read that text too.
    return check_source(source, backend, reference_text(task.source), task.dtype, require_custom_kernel)


# ---- rules for every backend ----------------------------------------------------------------------------

@register("*", custom_kernel=True)
def reference_op(ctx: Context) -> Iterable[Finding]:
    """The reference's own torch ops called from code reachable from ModelNew.forward."""
    for node in R.calls(ctx.reachable):
        name = ctx.call_name(node)
        short = name.rsplit(".", 1)[-1]
        if short in ctx.reference_ops and ctx.torch_or_tensor_call(node) and not short.startswith("_") and short not in R.HELPER_NAMES:
            yield Finding(node.lineno, "reference_op", f"forward path calls `{R.dotted(node.func)}`, an op of "
                          "the reference implementation, instead of a custom kernel")


@register("*", custom_kernel=True)
def library_compute(ctx: Context) -> Iterable[Finding]:
    """Library compute (matmul/conv/functional/nn layers, the @ operator) on the forward path."""
    layers = R.nn_layer_attrs(ctx.tree, ctx.aliases)
    for node in ast.walk(ast.Module(body=ctx.reachable, type_ignores=[])):
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.MatMult):
            yield Finding(node.lineno, "library_compute", "forward path uses the `@` operator (a library matmul)")
        if not isinstance(node, ast.Call):
            continue
        name = ctx.call_name(node)
        short = name.rsplit(".", 1)[-1]
        if name.startswith("torch.nn.functional.") or (name.startswith("torch.") and short in R.LIBRARY_OPS):
            yield Finding(node.lineno, "library_compute", f"forward path calls library op `{R.dotted(node.func)}`")
        elif short in R.LIBRARY_OPS and ctx.torch_or_tensor_call(node):
            yield Finding(node.lineno, "library_compute", f"forward path calls tensor method `.{short}()`")
        elif name.startswith("self.") and name.count(".") == 1 and short in layers:
            yield Finding(node.lineno, "library_compute",
                          f"forward path calls `self.{short}`, a torch.nn.{layers[short]} layer")


@register("*", custom_kernel=True)
def reference_model(ctx: Context) -> Iterable[Finding]:
    """ModelNew derived from, or delegating to, the reference Model."""
    for node in ast.walk(ctx.tree):
        if isinstance(node, ast.ClassDef) and node.name == "ModelNew":
            for base in node.bases:
                if R.dotted(base).rsplit(".", 1)[-1] == "Model":
                    yield Finding(node.lineno, "reference_model", "ModelNew inherits from the reference `Model`")
        if isinstance(node, ast.Call) and R.dotted(node.func).rsplit(".", 1)[-1] == "Model":
            yield Finding(node.lineno, "reference_model", "instantiates the reference `Model`")


@register("*")
def compile_fallback(ctx: Context) -> Iterable[Finding]:
    """torch.compile / TorchScript / dynamo: a library compiler instead of a hand-written kernel."""
    for node in ast.walk(ctx.tree):
        if not isinstance(node, (ast.Call, ast.Attribute)):
            continue
        target = node.func if isinstance(node, ast.Call) else node
        name = R.resolve(R.dotted(target), ctx.aliases)
        if any(name == p or name.startswith(p + ".") for p in R.COMPILERS):
            yield Finding(node.lineno, "compile_fallback", f"uses `{R.dotted(target)}` (a library compiler)")


@register("*")
def try_fallback(ctx: Context) -> Iterable[Finding]:
    """An except handler that does not re-raise can silently switch to a library implementation."""
    for node in ast.walk(ctx.tree):
        if isinstance(node, ast.Try):
            for h in node.handlers:
                if not (h.body and isinstance(h.body[-1], ast.Raise)):
                    yield Finding(h.lineno, "try_fallback", "try/except swallows an error (possible fallback "
                                  "to a different implementation when the kernel fails); re-raise instead")


@register("*")
def streams_threads(ctx: Context) -> Iterable[Finding]:
    """Side streams, threads and processes can run work the clock does not see."""
    for node in ast.walk(ctx.tree):
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            mods = [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module or ""]
            for m in mods:
                if m.split(".")[0] in R.CONCURRENCY_MODULES:
                    yield Finding(node.lineno, "streams_threads", f"imports `{m}` (work outside the timed call)")
        if isinstance(node, ast.Call):
            name = ctx.call_name(node)
            if any(s in name for s in R.STREAM_CALLS):
                yield Finding(node.lineno, "streams_threads", f"creates a stream via `{R.dotted(node.func)}`")
    yield from R.scan_code_strings(ctx.code_strings, R.CXX_CONCURRENCY, "streams_threads",
                                   "embedded kernel source starts a thread or stream: `{}`")


@register("*")
def monkey_patch(ctx: Context) -> Iterable[Finding]:
    """Assigning into torch/time/builtins/the harness, or reaching into the caller's frames and objects."""
    for node in ast.walk(ctx.tree):
        if isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
            targets: list[ast.expr] = node.targets if isinstance(node, ast.Assign) else [node.target]
            for t in targets:
                if isinstance(t, (ast.Attribute, ast.Subscript)):
                    root = R.dotted(t.value if isinstance(t, ast.Subscript) else t).split(".")[0]
                    if root in ctx.aliases or root in R.PATCH_ROOTS:
                        yield Finding(node.lineno, "monkey_patch", f"assigns to `{R.dotted(t) or root + '[...]'}`")
        if isinstance(node, ast.Call):
            name = ctx.call_name(node)
            if name in ("setattr", "delattr") and node.args:
                root = R.dotted(node.args[0]).split(".")[0]
                if root in ctx.aliases or root in R.PATCH_ROOTS:
                    yield Finding(node.lineno, "monkey_patch", f"`{name}` on `{R.dotted(node.args[0])}`")
            if name in R.INTROSPECTION:
                yield Finding(node.lineno, "monkey_patch", f"calls `{name}` (reaches into the harness)")
        if isinstance(node, ast.Name) and node.id == "__builtins__":
            yield Finding(node.lineno, "monkey_patch", "touches `__builtins__`")
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            mods = [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module or ""]
            for m in mods:
                if m.startswith("multikernelbench") and not m.startswith(R.HARNESS_IMPORTS_OK):
                    yield Finding(node.lineno, "monkey_patch", f"imports the harness (`{m}`)")


@register("*")
def tensor_subclass(ctx: Context) -> Iterable[Finding]:
    """Tensor subclasses and dispatch/function modes make outputs lazy or change what ops do."""
    for node in ast.walk(ctx.tree):
        if isinstance(node, ast.ClassDef):
            for base in node.bases:
                name = R.resolve(R.dotted(base), ctx.aliases)
                if name in R.SUBCLASS_BASES or name.endswith(("DispatchMode", "FunctionMode")):
                    yield Finding(node.lineno, "tensor_subclass", f"class `{node.name}` subclasses `{R.dotted(base)}`")
        if isinstance(node, ast.FunctionDef) and node.name in ("__torch_function__", "__torch_dispatch__"):
            yield Finding(node.lineno, "tensor_subclass", f"defines `{node.name}`")
        if isinstance(node, ast.Attribute) and node.attr in ("as_subclass", "_make_subclass", "_make_wrapper_subclass"):
            yield Finding(node.lineno, "tensor_subclass", f"uses `{node.attr}`")
        if isinstance(node, ast.Call) and R.dotted(node.func) == "type" and len(node.args) == 3:
            yield Finding(node.lineno, "tensor_subclass", "creates a class dynamically with `type(name, bases, ns)`")


@register("*")
def precision_downcast(ctx: Context) -> Iterable[Finding]:
    """Computing below the task's dtype (fp16/bf16/fp8/tf32 in an fp32 task)."""
    narrow = R.NARROWER.get(ctx.task_dtype, ())
    if not narrow:
        return
    pattern = re.compile(r"\b(" + "|".join(re.escape(n) for n in narrow) + r")\b")
    for node in ast.walk(ctx.tree):
        if isinstance(node, ast.Attribute):
            label = node.attr
        elif isinstance(node, ast.Name) and R.resolve(node.id, ctx.aliases) != node.id:
            label = node.id  # imported under that name (``from torch import float16``)
        else:
            continue
        if label and pattern.fullmatch(label):
            yield Finding(node.lineno, "precision_downcast",
                          f"uses `{label}` in a {ctx.task_dtype} task (computes below the task's precision)")
    for node in ast.walk(ctx.tree):
        if isinstance(node, ast.Assign) and any(R.dotted(t).endswith("allow_tf32") for t in node.targets) \
                and isinstance(node.value, ast.Constant) and node.value.value is True and "tf32" in narrow:
            yield Finding(node.lineno, "precision_downcast", "turns TF32 back on in an fp32 task")
    yield from R.scan_code_strings(ctx.code_strings, pattern, "precision_downcast",
                                   "embedded kernel source uses `{}`, below the task's " + ctx.task_dtype)


# ---- compiled-extension backends (C++ / CUDA through load_inline) -----------------------------------

@register("cpu", "cuda", custom_kernel=True)
def cxx_library_call(ctx: Context) -> Iterable[Finding]:
    """ATen/torch compute, cuBLAS or cuDNN called from the embedded C++/CUDA instead of a hand-written loop."""
    for text, line in ctx.code_strings:
        for m in R.CXX_CALL.finditer(text):
            op = m.group(2)
            if op not in R.CXX_HELPERS and not op[0].isupper():
                yield Finding(line + text.count("\n", 0, m.start()), "cxx_library_call",
                              f"embedded kernel source calls library op `{m.group(0).rstrip('( ')}`")
        for m in R.CXX_LIBRARIES.finditer(text):
            yield Finding(line + text.count("\n", 0, m.start()), "cxx_library_call",
                          f"embedded kernel source calls `{m.group(0).rstrip('( ')}`")


# ---- OpenCL (pyopencl candidates: OpenCL C strings built at import time) ----------------------------

#: numpy calls that only make scalars, dtypes or buffers (kernel arguments, outputs), never the task's compute.
NUMPY_HELPERS = {"int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "intc", "uintc", "intp",
                 "float32", "float64", "dtype", "empty", "empty_like", "zeros", "zeros_like", "ascontiguousarray",
                 "asarray", "frombuffer", "ndarray"}
#: pyopencl modules made of library kernels (array arithmetic, generic map/reduce/scan, math, random, sort).
PYOPENCL_LIBRARIES = ("pyopencl.array", "pyopencl.elementwise", "pyopencl.reduction", "pyopencl.scan",
                      "pyopencl.clmath", "pyopencl.clrandom", "pyopencl.algorithm", "pyopencl.bitonic_sort",
                      "pyopencl.cltypes")
#: Reduced-precision OpenCL C builtins and build options (fast math trades IEEE float results for speed).
OPENCL_FAST_MATH = re.compile(r"\b(?:native|half)_(?:exp|exp2|exp10|log|log2|log10|sqrt|rsqrt|recip|divide|powr|sin|"
                              r"cos|tan)\b|-cl-fast-relaxed-math|-cl-unsafe-math-optimizations|-cl-finite-math-only|"
                              r"-cl-denorms-are-zero|-cl-no-signed-zeros")


@register("opencl", custom_kernel=True)
def opencl_host_numpy(ctx: Context) -> Iterable[Finding]:
    """numpy doing the work on the host (``np.maximum(x.numpy(), 0)``, ``x.numpy().sum()``) instead of a kernel:
    invisible to the dispatcher recorder, so only this rule sees it."""
    for node in R.calls(ctx.reachable):
        name = ctx.call_name(node)
        short = name.rsplit(".", 1)[-1]
        if name.startswith("numpy.") and short not in NUMPY_HELPERS and not name.startswith("numpy.random."):
            yield Finding(node.lineno, "opencl_host_numpy", f"forward path computes with `{R.dotted(node.func)}` "
                          "on the host (numpy), not in an OpenCL kernel")
        elif ".numpy." in R.dotted(node.func) and short not in NUMPY_HELPERS | {"copy", "view", "reshape", "ravel"}:
            yield Finding(node.lineno, "opencl_host_numpy", f"forward path calls `.{short}()` on a numpy view of a "
                          "tensor (host compute)")


@register("opencl", custom_kernel=True)
def opencl_library_kernels(ctx: Context) -> Iterable[Finding]:
    """pyopencl's library kernels (array arithmetic, ElementwiseKernel, ReductionKernel, clmath...) do the work."""
    for node in ast.walk(ctx.tree):
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else \
                [f"{node.module}.{a.name}" for a in node.names] + [node.module or ""]
            for m in names:
                if any(m == lib or m.startswith(lib + ".") for lib in PYOPENCL_LIBRARIES):
                    yield Finding(node.lineno, "opencl_library_kernels", f"imports `{m}` (pyopencl library kernels)")
                    break
        elif isinstance(node, ast.Attribute):
            name = R.resolve(R.dotted(node), ctx.aliases)
            if any(name == lib or name.startswith(lib + ".") for lib in PYOPENCL_LIBRARIES):
                yield Finding(node.lineno, "opencl_library_kernels", f"uses `{R.dotted(node)}` (pyopencl library "
                              "kernels)")


@register("opencl")
def opencl_fast_math(ctx: Context) -> Iterable[Finding]:
    """native_*/half_* math builtins and fast-math build options compute below IEEE float precision."""
    if ctx.task_dtype not in ("float32", "float64"):
        return
    docs = R._docstrings(ctx.tree)
    for node in ast.walk(ctx.tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docs:
            for m in OPENCL_FAST_MATH.finditer(node.value):
                yield Finding(node.lineno + node.value.count("\n", 0, m.start()), "opencl_fast_math",
                              f"uses `{m.group(0)}` in a {ctx.task_dtype} task (reduced-precision OpenCL math)")


# Rules of the Python-syntax GPU DSLs (numba_cuda, helion) live in their own module; importing it registers them.
from multikernelbench.anticheat import static_python_dsl as _static_python_dsl  # noqa: E402,F401
