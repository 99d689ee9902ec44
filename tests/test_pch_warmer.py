"""The PCH warmer's log: kept when it records a failure (the only time anyone reads it), gone otherwise."""

from __future__ import annotations

import pytest

from multikernelbench.backends.extbuild.cuda_warm import PchWarmer


@pytest.mark.slow
def test_a_failed_warm_keeps_its_log(tmp_path):
    # A flag g++ rejects: the .gch build fails at once, after load_inline has written build.ninja.
    warmer = PchWarmer(tmp_path, {}, with_cuda=False, variants=(("-fmkb-no-such-flag",),))
    assert warmer.wait(timeout=300) == 0
    warmer.stop()
    assert warmer.log_path.exists()
    text = warmer.log_path.read_text()
    assert '"failed"' in text and "mkb-no-such-flag" in text, text
    assert not list(tmp_path.rglob("*.gch")) and not list(tmp_path.rglob("*.tmp"))


def test_a_stopped_warm_leaves_no_log(tmp_path):
    warmer = PchWarmer(tmp_path, {}, with_cuda=False)
    warmer.stop()  # at once: killed while importing torch or compiling
    assert not warmer.log_path.exists()
    assert not list(tmp_path.rglob("*.tmp")) and not list(tmp_path.rglob("*.gch"))


@pytest.mark.slow
def test_wait_blocks_on_another_maker_and_the_default_does_not(tmp_path):
    """A run's warmer skips a header another process is making (it does not queue); ``wait=True`` (the test
    session's ``cpu_pch``) blocks until that process lets go, then takes over. The other maker is this test
    holding the header's lock; the flag set is one g++ rejects, so no header is ever really made."""
    import fcntl
    import json
    import time

    bad = (("-fmkb-no-such-flag",),)
    first = PchWarmer(tmp_path, {}, with_cuda=False, variants=bad)
    assert first.wait(timeout=300) == 0
    (report,) = json.loads(first.log_path.read_text().splitlines()[-1])["pch"]
    first.stop()
    assert report["state"] == "failed"
    with open(tmp_path / f"{report['sig']}.lock", "a+") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        t0 = time.monotonic()
        skip = PchWarmer(tmp_path, {}, with_cuda=False, variants=bad)
        assert skip.wait(timeout=300) == 0
        t_skip = time.monotonic() - t0
        assert json.loads(skip.log_path.read_text().splitlines()[-1])["pch"][0]["state"] == "being built elsewhere"
        skip.stop()
        waiter = PchWarmer(tmp_path, {}, with_cuda=False, variants=bad, background=False, wait=True)
        time.sleep(max(8.0, 3 * t_skip))  # far longer than the skipping warmer needed to get this far
        assert waiter.proc.poll() is None
        fcntl.flock(lock, fcntl.LOCK_UN)
    assert waiter.wait(timeout=300) == 0
    assert json.loads(waiter.log_path.read_text().splitlines()[-1])["pch"][0]["state"] == "failed"
    waiter.stop()
