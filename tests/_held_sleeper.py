"""A candidate that waits at import until the test lets it go: for tests that need a job to stay on a lane while
something else happens, without sleeping a fixed time that is too short on a loaded host and wasted on a quiet one.

The candidate polls for a ``go`` file in its own build folder (``TORCH_EXTENSIONS_DIR``, which its sandbox may read,
and which the test can write: engine/build_stage.py puts it at build_root/<backend>/<code hash>). It waits at every
import, so at its build and again at its load; once released, both pass at once. Never released, it goes on after
``HOLD_S``: a service that misorders it still ends, and the test's ordering asserts fail instead of hanging.
"""

from __future__ import annotations

from pathlib import Path

HOLD_S = 60


def held(hold_s: float = HOLD_S) -> str:
    """Python lines to put at a candidate's top level (after nothing it depends on)."""
    return ("import os\nimport time\n_go = os.path.join(os.environ['TORCH_EXTENSIONS_DIR'], 'go')\n"
            f"_until = time.monotonic() + {hold_s}\n"
            "while not os.path.exists(_go) and time.monotonic() < _until:\n    time.sleep(0.05)\n")


def release(build_root: Path, source: str, backend: str = "cpu") -> None:
    """Lets the held candidate with this source go (before it starts, too: it then never waits)."""
    from multikernelbench.engine.candidates import code_hash

    folder = Path(build_root) / backend / code_hash(source)
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "go").write_text("")
