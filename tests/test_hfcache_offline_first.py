"""Offline first: with this package's copies in the caches, ``load_dataset("multikernelbench")`` and
``evaluate.load("mkb_speedup")`` make no network request at all — not even to a Hub that is down.

The Hub here is a real local TCP server that counts the connections it gets (``HF_ENDPOINT`` points at it)
and answers none of them, so a library that asks it first would show it in the count (the old behaviour: five
"Retrying" lines and 23 s before using the cache; with ``MKB_HF_OFFLINE_FIRST=0`` it still does that, which is
how this test was checked against the code before the change). ``HF_HUB_OFFLINE`` is unset on purpose: the
point is a user who set nothing.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import textwrap
import threading

import pytest

pytest.importorskip("datasets")
pytest.importorskip("evaluate")

LOAD = textwrap.dedent("""
    import json, sys
    import datasets, evaluate
    ds = datasets.load_dataset("multikernelbench", split="test")
    loss = datasets.load_dataset("multikernelbench", "loss", split="test")
    metric = evaluate.load("mkb_speedup")
    p = metric.compute(predictions=[[{"compiled": True, "correct": True, "speedup": 2.0}]], references=["a"])
    json.dump({"rows": len(ds), "loss": len(loss), "pass@1": p["pass@1"]}, open(sys.argv[1], "w"))
""")


class CountingHub:
    """A TCP listener that accepts, counts and drops every connection."""

    def __init__(self) -> None:
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.port = self.sock.getsockname()[1]
        self.connections = 0
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            self.connections += 1
            conn.close()

    def close(self) -> None:
        self.sock.close()


@pytest.mark.slow
def test_bare_names_load_without_any_network_request(tmp_path):
    hub = CountingHub()
    cwd = tmp_path / "elsewhere"
    cwd.mkdir()
    env = {k: v for k, v in os.environ.items()
           if k not in ("HF_HUB_OFFLINE", "HF_DATASETS_OFFLINE", "HF_EVALUATE_OFFLINE", "TRANSFORMERS_OFFLINE",
                        "MKB_HF_CACHE", "MKB_HF_OFFLINE_FIRST", "HF_DATASETS_CACHE", "HF_MODULES_CACHE")}
    env.update(HF_HOME=str(tmp_path / "hf"), HF_ENDPOINT=f"http://127.0.0.1:{hub.port}")
    try:
        # The first process fills the caches (the start-up hook, at `import datasets`), the second finds them.
        for _ in range(2):
            proc = subprocess.run([sys.executable, "-c", LOAD, str(tmp_path / "out.json")], cwd=cwd, env=env,
                                  capture_output=True, text=True, timeout=300)
            assert proc.returncode == 0, proc.stderr[-3000:]
            out = json.loads((tmp_path / "out.json").read_text())
            assert out["rows"] > 500 and 0 < out["loss"] < out["rows"] and out["pass@1"] == 1.0
            assert "Retrying" not in proc.stderr and "couldn't be found on the Hugging Face Hub" not in proc.stderr
    finally:
        hub.close()
    assert hub.connections == 0


def test_a_local_folder_and_other_names_are_left_to_the_library(tmp_path):
    """The shortcut only takes the bare names with nothing else asked; everything else is the library's call
    (here: a local folder named like the dataset is loaded from that folder, not from the cache)."""
    import datasets.load as load_mod

    from multikernelbench.hfcache import offline_first

    offline_first.patch_datasets()
    offline_first.patch_datasets()  # idempotent: one wrapper
    fn = load_mod.dataset_module_factory
    assert fn._mkb_offline_first and not getattr(fn.__wrapped__, "_mkb_offline_first", False)
    shortcut = offline_first._dataset_shortcut(load_mod)
    assert shortcut({"path": "org/multikernelbench"}) is None
    assert shortcut({"path": "multikernelbench", "data_files": ["x.parquet"]}) is None
    assert shortcut({"path": "multikernelbench", "revision": "v1"}) is None
    os.chdir(tmp_path)
    try:
        (tmp_path / "multikernelbench").mkdir()
        assert shortcut({"path": "multikernelbench"}) is None
    finally:
        os.chdir(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    assert offline_first.enabled({}) and not offline_first.enabled({"MKB_HF_OFFLINE_FIRST": "0"})
