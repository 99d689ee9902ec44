"""The GPU kernel probe after a sticky device error (an illegal address): the profiler must be gone.

Seen on the H200 twice (2026-12-04): a candidate whose kernel wrote through a null pointer came back
`cheat_detected` ("a thread-local at::RecordFunction callback") instead of `runtime_error`, because the probe's
exit raised on the device error before the profiler removed its own callbacks. No GPU here, so the device error
is torch.cuda.synchronize raising, as it does on every call once a CUDA context has a sticky error; the profiler,
its callbacks and the native-hook check are real.
"""

from __future__ import annotations

from unittest import mock

import pytest
import torch

from multikernelbench.anticheat.gpu_probe import ProfilerKernelProbe
from multikernelbench.anticheat.native_hooks import NativeSnapshot


def _sticky_error(*_args, **_kwargs):
    raise RuntimeError("CUDA error: an illegal memory access was encountered")


def test_probe_leaves_no_recordfunction_callback_after_a_sticky_device_error():
    snap = NativeSnapshot.capture()
    if snap.local_callbacks is None:
        pytest.skip("this torch build does not export at::hasThreadLocalCallbacks")
    assert not snap.changed()
    with mock.patch("torch.cuda.synchronize", lambda *a, **k: None):
        probe = ProfilerKernelProbe().__enter__()
    probe.prof.profiler.use_device = "cuda"  # a CUDA build's profiler synchronizes the device on its exit
    torch.relu(torch.ones(3))
    with mock.patch("torch.cuda.synchronize", _sticky_error), pytest.raises(RuntimeError, match="illegal memory"):
        probe.__exit__(None, None, None)
    assert not torch.autograd._profiler_enabled()
    assert snap.changed() == [], "the probe's own profiler callbacks would be judged the candidate's hook"
