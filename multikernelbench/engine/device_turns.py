"""Worker side of lanes that share one GPU: use the device only while holding the parent's turn.

Why: several device lanes per GPU overlap the CPU-heavy steps of their tasks (worker start, torch.compile's
tracing and code generation), but any kernel another lane runs while a clock is running inflates that
clock's samples. Measured on the H200 with 6 lanes overlapping their whole compile requests: the
reference's first compiled call autotunes Triton kernels on the GPU, and two independent baseline runs of the
same 38 tasks disagreed by up to 2x (medians, min unchanged). So the compile request runs its GPU steps --
creating inputs and weights, and the compiled graph's first execution with its autotuning -- only inside a
turn, and compiles outside it: dynamo's compile-end callback takes the turn just before the first
execution of each freshly compiled graph.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from typing import Any


class DeviceTurns:
    """Takes and gives back the shared GPU through ``ask`` (a round trip to the parent). Disabled, it does
    nothing: a GPU with one lane, or a CPU worker."""

    def __init__(self, ask: Callable[[bool], Any], enabled: bool) -> None:
        self.ask, self.enabled, self.held = ask, enabled, False

    def take(self, *_args: Any) -> None:
        if self.enabled and not self.held:
            self.ask(True)
            self.held = True

    def give(self) -> None:
        if self.enabled and self.held:
            self.ask(False)
            self.held = False

    @contextlib.contextmanager
    def turn(self) -> Iterator[None]:
        self.take()
        try:
            yield
        finally:
            self.give()

    @contextlib.contextmanager
    def from_compile_end(self) -> Iterator[None]:
        """Take the turn when dynamo finishes compiling a graph (its first execution follows at once); where
        this torch has no compile callbacks, take it now (correct, only slower: the compile holds the GPU)."""
        if not self.enabled:
            yield
            return
        try:
            from torch._dynamo.callback import callback_handler
        except ImportError:
            callback_handler = None  # type: ignore[assignment]  # this torch has no compile callbacks
        if callback_handler is None:
            self.take()
            yield
            return
        callback_handler.register_end_callback(self.take)
        try:
            yield
        finally:
            callback_handler.remove_end_callback(self.take)
