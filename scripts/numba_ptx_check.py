"""Compile every Numba kernel the shipped numba_cuda solutions and exemplars launch to PTX for sm_90, with the
argument types their launches would have on the GPU, on a machine without one.

Numba's simulator (CI) runs kernels as Python and never types them, so a kernel can pass there and fail to
compile on the GPU. This runs each file's forward at its first test shape with launches intercepted: every
launch's argument types (numba.typeof of the zero-copy array views and scalars) go to
``cuda.compile_ptx(..., cc=(9, 0))``: Numba's real typing and NVVM, no driver. Outputs are not computed.

Needs NVVM and NVRTC, e.g. in a throwaway venv:
    python -m venv --system-site-packages /tmp/nbvenv
    /tmp/nbvenv/bin/pip install "nvidia-cuda-nvrtc==13.*" "nvidia-nvvm==13.*" "nvidia-cuda-runtime==13.*" "nvidia-cuda-cccl==13.*"
    /tmp/nbvenv/bin/python scripts/numba_ptx_check.py      (from the repository root)
Do not set NUMBA_ENABLE_CUDASIM. Exit status 1 when any file fails."""

import glob
import sys
import traceback
import types

import numba
import torch
from numba import cuda
from numba.cuda.dispatcher import CUDADispatcher

import multikernelbench.interop.numba_cuda as ic

ic.as_array = lambda t: t.detach().numpy()
ic.torch_stream = lambda: 0
ic.grid_blocks = lambda n, t: 1
compiled = {}


def getitem(self, cfg):
    def launch(*args):
        sig = tuple(numba.typeof(a) for a in args)
        key = (self.py_func.__qualname__, sig)
        if key not in compiled:
            ptx, _ = cuda.compile_ptx(self.py_func, sig, cc=(9, 0))
            compiled[key] = len(ptx)

    return launch


CUDADispatcher.__getitem__ = getitem

# After the launch interception above (kept beside the code that runs under it).
from pathlib import Path  # noqa: E402

from multikernelbench.tasks import load_task_file  # noqa: E402
from multikernelbench.tasks.module import make_inputs, make_model, materialize  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
jobs = []
for f in sorted(glob.glob(str(ROOT / "solutions/numba_cuda/*.py"))):
    tid = Path(f).stem
    cat, name = tid.split(".", 1)
    jobs.append((f, ROOT / "multikernelbench/suite" / cat / f"{name}.py", cat))
for f in sorted(glob.glob(str(ROOT / "multikernelbench/prompts/exemplars/*/numba_cuda.py"))):
    jobs.append((f, Path(f).parent / "reference.py", Path(f).parent.name))
bad = 0
for sol, ref, cat in jobs:
    try:
        task = [t for t in load_task_file(ref, category=cat) if t.dtype == "float32"][0]
        refmod = materialize(task)
        src = Path(sol).read_text()
        mod = types.ModuleType("cand")
        mod.__file__ = sol
        exec(compile(src, sol, "exec"), mod.__dict__)
        shape = task.test_shapes[0]
        model = make_model(mod.ModelNew, refmod, shape, 0, task.dtype, "cpu")
        inputs = make_inputs(refmod, shape, 0, task.dtype, "cpu")
        with torch.no_grad():
            model(*inputs)
        print("ok ", Path(sol).relative_to(ROOT))
    except Exception:
        bad += 1
        print("ERR", Path(sol).relative_to(ROOT))
        traceback.print_exc(limit=2)
print(len(compiled), "kernels compiled to PTX;", bad, "failures")
sys.exit(1 if bad else 0)
