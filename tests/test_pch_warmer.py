"""The PCH warmer's log: kept when it records a failure (the only time anyone reads it), gone otherwise."""

from __future__ import annotations

from multikernelbench.backends.cuda_build import PchWarmer


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
