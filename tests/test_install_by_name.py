"""The real thing: a wheel, installed (not editable) into a fresh venv, then from an empty folder, offline,
``load_dataset("multikernelbench")``, ``load_dataset("multikernelbench", "loss")`` and
``evaluate.load("mkb_speedup")`` with nothing else run first (the wheel's ``.pth`` hook fills the caches).

Kept fast enough for CI (~1 minute on 2 cores): the wheel is built from a copy of the sources (nothing is
written into the checkout), without build isolation where this interpreter's setuptools can, and the venv
sees this interpreter's site packages (``--system-site-packages``), so only the wheel itself is installed
(``--no-deps --no-index``). The venv's own
site-packages comes first on ``sys.path``, so the test checks that ``multikernelbench`` is imported from the
venv, not from the checkout's editable install.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
import zipfile
from pathlib import Path

import pytest

pytest.importorskip("datasets")
pytest.importorskip("evaluate")

REPO = Path(__file__).resolve().parents[1]
SOURCES = ["multikernelbench", "backends", "dataset_builder", "metrics", "setup.py", "pyproject.toml", "README.md",
           "MANIFEST.in", "multikernelbench-hfcache.pth"]

USER_CODE = textwrap.dedent("""
    import json, sys
    from datasets import load_dataset
    import evaluate
    import multikernelbench
    ds = load_dataset("multikernelbench", split="test")
    loss = load_dataset("multikernelbench", "loss", split="test")
    metric = evaluate.load("mkb_speedup")
    ok = {"compiled": True, "correct": True, "speedup": 1.5}
    scores = metric.compute(predictions=[[ok, {"compiled": False, "correct": False}]], references=["a"])
    try:
        metric.compute(predictions=[[{"compiled": True, "correct": "yes"}]], references=["a"])
        bad = None
    except ValueError as exc:
        bad = str(exc)
    json.dump({"package": multikernelbench.__file__, "rows": len(ds), "ids": list(ds["id"]),
               "loss": list(loss["id"]), "category": type(ds.features["category"]).__name__,
               "version": str(ds.info.version), "pass@1": scores["pass@1"], "bad": bad,
               "metric_module": type(metric).__module__}, open(sys.argv[1], "w"))
""")


def _builds_wheels_in_place() -> bool:
    """This interpreter's setuptools can build a wheel itself (>= 70.1 has bdist_wheel, or ``wheel`` is there);
    else pip builds in an isolated environment (slower; needs setuptools from an index or /opt/wheels)."""
    import importlib.util

    try:
        import setuptools
    except ImportError:
        return False
    major, minor = (int(x) for x in setuptools.__version__.split(".")[:2])
    return (major, minor) >= (70, 1) or importlib.util.find_spec("wheel") is not None


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    tmp = tmp_path_factory.mktemp("wheel")
    src = tmp / "src"
    src.mkdir()
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc")
    for name in SOURCES:
        path = REPO / name
        if not path.exists():  # the wheel test below says what is missing from the wheel
            continue
        if path.is_dir():
            shutil.copytree(path, src / name, ignore=ignore)
        else:
            shutil.copy2(path, src / name)
    isolation = ["--no-build-isolation"] if _builds_wheels_in_place() else []
    proc = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", *isolation,
                           "-w", str(tmp / "dist"), str(src)], capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-4000:]
    [whl] = (tmp / "dist").glob("multikernelbench-*.whl")
    return whl


def test_wheel_ships_the_metric_folder_the_dataset_and_the_hook(wheel):
    names = set(zipfile.ZipFile(wheel).namelist())
    assert "multikernelbench-hfcache.pth" in names
    for f in ("mkb_speedup.py", "README.md", "app.py", "requirements.txt"):
        assert f"multikernelbench/metrics/mkb_speedup/{f}" in names, f
    assert "multikernelbench/README.md" in names
    assert any(n.startswith("multikernelbench/data/") and n.endswith(".parquet") for n in names)


def test_installed_wheel_loads_dataset_and_metric_by_name_offline_anywhere(wheel, tmp_path):
    from multikernelbench.tasks import load_from_dataset

    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", str(venv)], check=True, timeout=300)
    python = venv / "bin" / "python"
    proc = subprocess.run([str(python), "-m", "pip", "install", "-q", "--no-deps", "--no-index", str(wheel)],
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-4000:]
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    env = {k: v for k, v in os.environ.items()
           if k not in ("HF_DATASETS_CACHE", "HF_MODULES_CACHE", "MKB_HF_CACHE", "PYTHONPATH")}
    env.update(HF_HOME=str(tmp_path / "hf"), HF_HUB_OFFLINE="1")
    out_file = tmp_path / "out.json"
    proc = subprocess.run([str(python), "-c", USER_CODE, str(out_file)], cwd=elsewhere, env=env,
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-4000:]
    out = json.loads(out_file.read_text())
    assert Path(out["package"]).is_relative_to(venv), out["package"]
    packaged = load_from_dataset()
    assert out["rows"] == len(packaged) and out["ids"] == [t.id for t in packaged]
    assert out["loss"] == [t.id for t in packaged if t.category == "loss"]
    assert out["category"] == "ClassLabel" and out["version"] == "2.0.0"
    assert out["pass@1"] == 0.5 and out["metric_module"].startswith("evaluate_modules.metrics.evaluate-metric--")
    assert "predictions[0][0]" in out["bad"] and "'correct'" in out["bad"]
