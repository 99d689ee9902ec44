"""Another pytest session starting on the host leaves this session's workers their way to their folders
(tests/_private_temp.py; the cause of the EACCES builds with ``drop_root`` on)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="only a root session's workers change uid")

NOBODY = 65534


def _nobody_reaches(path: Path) -> bool:
    """Whether uid ``nobody`` can stat ``path`` (every ancestor searchable for it)."""
    return subprocess.run(["/usr/bin/test", "-e", str(path)], user=NOBODY, group=NOBODY).returncode == 0


@pytest.mark.slow
def test_a_new_pytest_session_leaves_a_running_sessions_folders_reachable(tmp_path, tmp_path_factory):
    from multikernelbench.engine.worker_uid import prepare

    build = tmp_path / "builds" / "cpu" / "0123456789abcdef0123"
    build.mkdir(parents=True)
    (build / "lock").touch()
    prepare(NOBODY, NOBODY, [str(build)], [])  # what a worker's start does for its build folder
    assert _nobody_reaches(build / "lock")
    # A second session, of another project (no conftest of ours): pytest's default base folder.
    other = tmp_path_factory.mktemp("other-project")
    (other / "test_x.py").write_text("def test_x(tmp_path):\n    assert tmp_path.is_dir()\n")
    env = {k: v for k, v in os.environ.items() if k not in ("PYTEST_ADDOPTS", "PYTEST_DEBUG_TEMPROOT")}
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:randomly",
                           str(other / "test_x.py")], cwd=other, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    assert _nobody_reaches(build / "lock"), [(str(p), oct(p.stat().st_mode)) for p in build.parents]
