"""Numba's CUDA simulator made safe for the threads it simulates (the CPU path of the ``numba_cuda`` backend).

``numba.cuda.simulator.kernelapi.FakeCUDAShared.array`` (numba-cuda 0.30) finds a block's shared array by the
calling line in a plain dict: look up, and on a miss create ``np.empty`` and store it. Every simulated GPU
thread is a Python thread, so two threads can both miss: one keeps a private array that the rest of the block
never sees, its writes are lost to them and they read its slot uninitialized. CI convicted an honest kernel this
way (``solutions/numba_cuda/math.cumsum.py``: the block of rows 0, 2, 4, ... read one garbage slot; 7,992 of
16,000 values ~1e21) under load, made likelier by the short thread switch interval the backend sets.

:func:`make_shared_arrays_atomic` replaces the method with one that does the same lookup under a lock. It is
the harness's fix to its own interpreter, applied in the worker before a candidate loads; the GPU path does not
use the simulator.
"""

from __future__ import annotations

import sys
import threading
from typing import Any

_PATCHED = "_mkb_atomic_shared_arrays"


def make_shared_arrays_atomic() -> bool:
    """Install the locked ``FakeCUDAShared.array`` (idempotent); False where this numba-cuda has no such class
    or a different allocation table (then nothing is changed)."""
    try:
        from numba.cuda.simulator import kernelapi
    except ImportError:
        return False
    cls = getattr(kernelapi, "FakeCUDAShared", None)
    if cls is None:
        return False
    if getattr(cls, _PATCHED, False):
        return True
    import numpy as np
    from numba.core import types
    from numba.np import numpy_support

    original = cls.array
    lock = threading.Lock()

    def array(self: Any, shape: Any, dtype: Any, alignment: Any = None) -> Any:
        table = getattr(self, "_allocations", None)
        if shape == 0 or alignment is not None or not isinstance(table, dict):
            # Dynamic shared memory (one buffer, nothing to race on) and the errors: numba's own code.
            return original(self, shape, dtype, alignment)
        if isinstance(dtype, types.Type):
            dtype = numpy_support.as_dtype(dtype)
        caller = sys._getframe(1)
        key = (caller.f_code.co_filename, caller.f_lineno)  # numba's key: the calling file and line
        with lock:
            res = table.get(key)
            if res is None:
                res = np.empty(shape, dtype)
                table[key] = res
        return res

    array.__doc__ = original.__doc__
    cls.array = array
    setattr(cls, _PATCHED, True)
    return True
