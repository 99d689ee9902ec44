"""One zygote per test process instead of one per engine run (engine/zygote_pool.py), and the opt-out.

The suite makes ~60-80 in-process engine runs; each started a zygote, ~3.4 s of CPU importing torch and the
worker code (issue #46: README's test command must fit 25 minutes on CI's 2 cores). The pool keeps the zygotes
for the session and hands each run a lease on the one started for the same environment and preloads (keyed on
all of it, so a test that changes what the zygote's start reads gets its own). Runs through ``mkb``
subprocesses, Ray actors and ``EngineConfig(zygote=False)`` are unchanged.

``own_zygotes``: for a test that checks what a production run does with its zygote (starts it, hands it on,
ends it): no pool while it runs.
"""

from __future__ import annotations

import pytest


@pytest.fixture(scope="session", autouse=True)
def kept_zygotes():
    from multikernelbench.engine.zygote_pool import ZygotePool

    pool = ZygotePool()
    ZygotePool.install(pool)
    try:
        yield pool
    finally:
        ZygotePool.install(None)
        pool.close()


@pytest.fixture
def own_zygotes(kept_zygotes):
    from multikernelbench.engine.zygote_pool import ZygotePool

    ZygotePool.install(None)
    try:
        yield
    finally:
        ZygotePool.install(kept_zygotes)
