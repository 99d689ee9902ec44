"""The real thing, both ways the package is installed, then from an empty folder, offline, with an empty
``HF_HOME`` and nothing else run first: ``load_dataset("multikernelbench")`` (every config) and
``evaluate.load("mkb_speedup")`` (the installed ``.pth`` hook fills the caches).

- The environment running these tests: CI makes it with README.md's install command verbatim
  (``pip install torch==2.13.0 -e ".[test]"``) in a fresh venv (.ci/run), so the editable install is checked
  as a new user gets it, in two fresh ``HF_HOME``s. Doing that install inside a test instead would cost ~2.3 min
  of wall and ~110 CPU-s per CI run (3.1 GB unpacked: torch, triton, jaxlib, ...; measured on the 2-core host,
  benchmarks/hf_by_name/README.md) for an install CI already does.
- A wheel, installed (not editable) into a fresh venv, below.

Kept fast enough for CI (~1 minute on 2 cores): the wheel is built from a copy of the sources (nothing is
written into the checkout), without build isolation where this interpreter's setuptools can, and the venv
sees this interpreter's site folders (a plain path line in a ``.pth``, after its own site-packages; not
``--system-site-packages``, which would mean the base interpreter's folders when this one is itself a venv, as
in CI), so only the wheel itself is installed (``--no-deps --no-index``). Folders added that way have their own
``.pth`` files ignored, so this interpreter's editable finder stays out, and the test checks that
``multikernelbench`` is imported from the venv, not from the checkout.
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

pytestmark = pytest.mark.slow

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


EVERY_CONFIG = textwrap.dedent("""
    import json, sys
    from datasets import load_dataset
    import evaluate
    import multikernelbench
    out = {"package": multikernelbench.__file__, "configs": {}}
    out["default"] = list(load_dataset("multikernelbench", split="test")["id"])
    for name in json.loads(sys.argv[2]):
        out["configs"][name] = list(load_dataset("multikernelbench", name, split="test")["id"])
    metric = evaluate.load("mkb_speedup")
    out["pass@1"] = metric.compute(predictions=[[{"compiled": True, "correct": True, "speedup": 2.0},
                                                  {"compiled": False, "correct": False}]], references=["a"])["pass@1"]
    out["metric_module"] = type(metric).__module__
    json.dump(out, open(sys.argv[1], "w"))
""")


def _clean_env(hf_home: Path) -> dict[str, str]:
    """This environment, with an empty HF_HOME of its own and the Hub unreachable; the hook left on."""
    env = {k: v for k, v in os.environ.items()
           if k not in ("HF_DATASETS_CACHE", "HF_MODULES_CACHE", "MKB_HF_CACHE", "PYTHONPATH")}
    env.update(HF_HOME=str(hf_home), HF_HUB_OFFLINE="1")
    return env


def _installed_by_pip() -> tuple[bool, Path | None]:
    """(editable?, the hook file) of the multikernelbench that pip installed into this interpreter's site
    folders (not the checkout's ``*.egg-info``, which ``importlib.metadata`` also finds from the repo root)."""
    import importlib.metadata as md
    import site

    folders = [*site.getsitepackages(), site.getusersitepackages()]
    dists = [d for d in md.distributions(path=folders) if d.metadata["Name"] == "multikernelbench"]
    if not dists:
        pytest.skip("multikernelbench is not installed by pip in this interpreter (README: pip install -e ...)")
    direct = json.loads(dists[0].read_text("direct_url.json") or "{}")
    hooks = [Path(f, "multikernelbench-hfcache.pth") for f in folders]
    hook = next((h for h in hooks if h.is_file()), None)
    return bool(direct.get("dir_info", {}).get("editable")), hook


def test_this_install_loads_every_config_and_the_metric_by_name_in_any_fresh_hf_home(tmp_path):
    from multikernelbench.tasks import load_from_dataset

    editable, hook = _installed_by_pip()
    assert hook is not None and hook.is_file(), (
        f"the {'editable' if editable else 'installed'} multikernelbench has no multikernelbench-hfcache.pth: "
        "installed before setup.py added it to editable wheels? run README.md's install command again")
    packaged = load_from_dataset()
    categories = sorted({t.category for t in packaged})
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    # Every config in a first empty HF_HOME; a second HF_HOME on the same machine is as empty as the first
    # (the hook's markers live in each cache), so the default and one category there.
    for home, configs in (("hf-1", ["all", *categories]), ("hf-2", ["all", "loss"])):
        out_file = tmp_path / f"{home}.json"
        proc = subprocess.run([sys.executable, "-c", EVERY_CONFIG, str(out_file), json.dumps(configs)],
                              cwd=elsewhere, env=_clean_env(tmp_path / home), capture_output=True, text=True,
                              timeout=600)
        assert proc.returncode == 0, proc.stderr[-4000:]
        out = json.loads(out_file.read_text())
        if editable:  # the checkout itself, through setuptools' editable finder
            assert Path(out["package"]).resolve() == (REPO / "multikernelbench" / "__init__.py").resolve()
        assert out["default"] == out["configs"]["all"] == [t.id for t in packaged]
        for category in configs[1:]:
            assert out["configs"][category] == [t.id for t in packaged if t.category == category], category
        assert out["pass@1"] == 0.5 and out["metric_module"].startswith("evaluate_modules.metrics.evaluate-metric--")


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
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=300)
    python = venv / "bin" / "python"
    purelib = subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                             capture_output=True, text=True, check=True, timeout=120).stdout.strip()
    import site

    Path(purelib, "mkb-test-outer-site.pth").write_text("\n".join(site.getsitepackages()) + "\n")
    proc = subprocess.run([str(python), "-m", "pip", "install", "-q", "--no-deps", "--no-index", str(wheel)],
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-4000:]
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    env = _clean_env(tmp_path / "hf")
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
