"""Vocabulary and AST helpers behind the static rules (kept apart so rule code stays readable)."""

from __future__ import annotations

import ast
import re
import threading
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from multikernelbench.util import pyast

# CPython 3.11's parser keeps its AST recursion-depth bookkeeping per interpreter, not per thread: two
# compile-pool threads parsing at once raised "SystemError: AST constructor recursion depth mismatch" in CI.
_PARSE_LOCK = threading.Lock()


@dataclass(frozen=True)
class Finding:
    """One rule's finding: the line it points at, the rule's name, the reason in words."""

    line: int
    rule: str
    message: str

    def __str__(self) -> str:
        return f"line {self.line}: {self.message} [{self.rule}]"


def parse(source: str) -> ast.Module:
    with _PARSE_LOCK:
        return pyast.parse(source)

#: Tensor helpers that are never "the task's compute" (allocation, views, copies, metadata).
HELPER_NAMES = {
    "empty", "empty_like", "empty_strided", "zeros", "zeros_like", "ones", "ones_like", "full", "full_like",
    "contiguous", "view", "reshape", "flatten", "unflatten", "squeeze", "unsqueeze", "permute", "transpose", "t",
    "expand", "expand_as", "narrow", "select", "split", "chunk", "unbind", "clone", "copy_", "detach", "to",
    "size", "dim", "numel", "stride", "data_ptr", "item", "is_contiguous", "float", "double", "int", "long",
    "new_empty", "new_zeros", "new_ones", "new_full", "fill_", "zero_", "tensor", "as_tensor", "from_numpy",
    "arange", "cat", "stack", "cuda", "cpu", "type", "dtype", "device", "shape", "view_as", "reshape_as",
}

#: Library compute on the forward path (the work a kernel benchmark asks the candidate to write).
LIBRARY_OPS = {
    "matmul", "mm", "bmm", "addmm", "addbmm", "baddbmm", "addmv", "mv", "dot", "einsum", "tensordot", "linear",
    "conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d", "conv_transpose3d", "convolution",
    "scaled_dot_product_attention", "softmax", "log_softmax", "layer_norm", "group_norm", "batch_norm",
    "instance_norm", "cumsum", "cumprod", "sort", "topk", "kron", "cdist", "lstm", "gru", "rnn_tanh",
}

COMPILERS = ("torch.compile", "torch.jit", "torch._dynamo", "torch._inductor", "torch.export", "torch.fx",
             "torch._C._jit", "triton.testing", "torch._higher_order_ops")

CONCURRENCY_MODULES = {"threading", "_thread", "concurrent", "multiprocessing", "asyncio", "subprocess"}
STREAM_CALLS = ("cuda.Stream", "cuda.stream", "cuda.ExternalStream", "Stream(", "torch.Stream", "get_stream_from_external")
CXX_CONCURRENCY = re.compile(r"std::thread|std::async|std::jthread|pthread_create|cudaStreamCreate\w*|"
                             r"getStreamFromPool|hipStreamCreate\w*|\bfork\s*\(")

#: Harness modules a candidate may import (the task generators' helpers; task sources use them).
HARNESS_IMPORTS_OK = ("multikernelbench.tasks.gen", "multikernelbench.interop")
PATCH_ROOTS = {"builtins", "__builtins__", "sys", "time", "torch", "os", "gc", "inspect", "importlib"}
INTROSPECTION = {"sys._getframe", "inspect.currentframe", "inspect.stack", "inspect.getouterframes",
                 "gc.get_objects", "gc.get_referrers", "gc.get_referents", "sys.setprofile", "sys.settrace",
                 "sys.getprofile", "sys.gettrace", "threading.setprofile", "threading.settrace",
                 "sys.addaudithook", "torch._C._get_dispatch_mode", "torch._C._len_torch_dispatch_stack"}

SUBCLASS_BASES = {"torch.Tensor", "Tensor", "torch._C.TensorBase", "torch._C._TensorBase",
                  "torch.nn.parameter.Parameter", "torch.nn.Parameter"}

_HALF = ("float16", "half", "bfloat16", "float8_e4m3fn", "float8_e5m2", "at::Half", "c10::Half", "at::BFloat16",
         "c10::BFloat16", "__half", "__half2", "half2", "__nv_bfloat16", "__nv_bfloat162", "_Float16", "kHalf",
         "kBFloat16", "__float2half", "__float2bfloat16", "__hmul", "__hadd", "hfma", "tf32", "TF32", "bf16", "fp16")
NARROWER = {
    "float32": _HALF,
    "float64": _HALF + ("float32", "kFloat32", "kFloat"),
    "float16": ("float8_e4m3fn", "float8_e5m2", "fp8", "__nv_fp8_e4m3"),
    "bfloat16": ("float8_e4m3fn", "float8_e5m2", "fp8", "__nv_fp8_e4m3"),
}

#: ``at::op(`` / ``torch::op(`` in embedded C++; helpers in CXX_HELPERS are allowed.
CXX_CALL = re.compile(r"\b(at|torch)::(?:native::)?([a-z_][A-Za-z0-9_]*)\s*\(")
CXX_HELPERS = HELPER_NAMES | {
    "from_blob", "parallel_for", "parallel_reduce", "get_num_threads", "get_thread_num", "in_parallel_region",
    "set_num_threads", "empty_cpu", "scalar_tensor", "check", "device_of", "getCurrentCUDAStream",
    "getDefaultCUDAStream", "globalContext", "elementSize", "toString", "typeMetaToScalarType",
}
CXX_LIBRARIES = re.compile(r"\b(cublas|cublasLt|cudnn|cusparse|cufft|mkl|cblas|dnnl|rocblas|miopen|hipblas)"
                           r"[A-Za-z0-9_]*\s*\(")


def dotted(node: ast.AST) -> str:
    """``a.b.c`` for Name/Attribute chains ('' otherwise; calls in the chain are skipped)."""
    parts = []
    while True:
        if isinstance(node, ast.Attribute):
            parts.append(node.attr)
            node = node.value
        elif isinstance(node, ast.Call):
            node = node.func
        elif isinstance(node, ast.Name):
            parts.append(node.id)
            break
        else:
            return ".".join(reversed(parts)) if parts else ""
    return ".".join(reversed(parts))


def import_aliases(tree: ast.AST) -> dict[str, str]:
    """Local name -> full dotted name for every import (``F`` -> ``torch.nn.functional``)."""
    out: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                out[a.asname or a.name.split(".")[0]] = a.name if a.asname else a.name.split(".")[0]
        elif isinstance(node, ast.ImportFrom) and node.module:
            for a in node.names:
                out[a.asname or a.name] = f"{node.module}.{a.name}"
    return out


def resolve(name: str, aliases: dict[str, str]) -> str:
    head, _, rest = name.partition(".")
    if head in aliases:
        return aliases[head] + ("." + rest if rest else "")
    return name


def calls(nodes: list[ast.stmt]) -> Iterator[ast.Call]:
    for stmt in nodes:
        for node in ast.walk(stmt):
            if isinstance(node, ast.Call):
                yield node


def reference_ops(source: str) -> set[str]:
    """Short names of the ops the reference Model's methods call (``relu``, ``softmax``, ``matmul``...)."""
    try:
        tree = parse(source)
    except SyntaxError:
        return set()
    ops: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef) and node.name == "Model":
            for fn in node.body:
                if isinstance(fn, ast.FunctionDef) and fn.name == "forward":
                    for call in calls(fn.body):
                        name = dotted(call.func)
                        if name and not name.startswith("self."):
                            ops.add(name.rsplit(".", 1)[-1])
    return {op for op in ops if op not in HELPER_NAMES and not op.startswith("_")}


#: Decorators whose function body is device code compiled by a DSL, except its host part (see host_body).
DEVICE_KERNEL_DECORATORS = ("helion.kernel",)
#: Loops whose body is device code inside such a function (``for tile in hl.tile(n):``).
DEVICE_LOOPS = ("helion.language.tile", "helion.language.grid")


def _is_device_kernel(fn: ast.FunctionDef, aliases: dict[str, str]) -> bool:
    return any(resolve(dotted(d), aliases) in DEVICE_KERNEL_DECORATORS for d in fn.decorator_list)


def host_body(fn: ast.FunctionDef, aliases: dict[str, str]) -> list[ast.stmt]:
    """The statements of a Helion kernel that run on the host: everything but its ``hl.tile``/``hl.grid``
    loops. Torch ops inside those loops are Helion's DSL (lowered into the generated Triton kernel, the
    candidate's own); outside them they are plain PyTorch computing on the host, which the rules judge."""
    out = []
    for stmt in fn.body:
        if isinstance(stmt, ast.For) and isinstance(stmt.iter, ast.Call) \
                and resolve(dotted(stmt.iter.func), aliases) in DEVICE_LOOPS:
            continue
        out.append(stmt)
    return out


def reachable_from_forward(tree: ast.Module, aliases: dict[str, str] | None = None) -> list[ast.stmt]:
    """Bodies of ModelNew.forward and everything it calls by name in this module (methods and functions); for a
    function decorated as a device kernel (``@helion.kernel``), only its host statements."""
    aliases = aliases if aliases is not None else import_aliases(tree)
    functions = {n.name: n for n in tree.body if isinstance(n, ast.FunctionDef)}
    methods: dict[str, ast.FunctionDef] = {}
    for n in tree.body:
        if isinstance(n, ast.ClassDef) and n.name == "ModelNew":
            methods = {m.name: m for m in n.body if isinstance(m, ast.FunctionDef)}
    if "forward" not in methods:
        return []
    seen, todo, out = {("m", "forward")}, [methods["forward"]], []
    while todo:
        fn = todo.pop()
        out.extend(host_body(fn, aliases) if _is_device_kernel(fn, aliases) else fn.body)
        for call in calls(fn.body):
            name = dotted(call.func)
            key = ("m", name[5:]) if name.startswith("self.") else ("f", name)
            target = methods.get(key[1]) if key[0] == "m" else functions.get(key[1])
            if target is not None and key not in seen:
                seen.add(key)
                todo.append(target)
    return out


def nn_layer_attrs(tree: ast.Module, aliases: dict[str, str]) -> dict[str, str]:
    """``self.<attr> = nn.<Layer>(...)`` assignments: attr -> Layer (containers and parameters excluded)."""
    skip = {"Parameter", "ParameterList", "ParameterDict", "Module", "ModuleList", "ModuleDict", "Identity", "Buffer"}
    out = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Call):
            name = resolve(dotted(node.value.func), aliases)
            layer = name.rsplit(".", 1)[-1]
            if name.startswith("torch.nn.") and layer not in skip and layer[:1].isupper():
                for t in node.targets:
                    d = dotted(t)
                    if d.startswith("self.") and d.count(".") == 1:
                        out[d[5:]] = layer
    return out


def module_globals(tree: ast.Module) -> set[str]:
    out = set()
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef, ast.AsyncFunctionDef)):
            out.add(node.name)
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            for t in (node.targets if isinstance(node, ast.Assign) else [node.target]):
                out.update(n.id for n in ast.walk(t) if isinstance(n, ast.Name))
    return out


_COMMENT = re.compile(r"//[^\n]*|/\*.*?\*/", re.S)


def _docstrings(tree: ast.AST) -> set[int]:
    ids = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                ids.add(id(first.value))
    return ids


def code_strings(tree: ast.AST) -> Iterator[tuple[str, int]]:
    """String constants that look like kernel source (docstrings skipped, C/C++ comments blanked out with
    line breaks kept), with their first line number."""
    docs = _docstrings(tree)
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docs \
                and ("{" in node.value or ";" in node.value) and "\n" in node.value:
            text = _COMMENT.sub(lambda m: re.sub(r"[^\n]", " ", m.group(0)), node.value)
            yield text, node.lineno


def scan_code_strings(strings: Iterable[tuple[str, int]], pattern: re.Pattern, rule: str, template: str):
    for text, line in strings:
        for m in pattern.finditer(text):
            yield Finding(line + text.count("\n", 0, m.start()), rule, template.format(m.group(0)))
