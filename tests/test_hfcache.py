"""``load_dataset("multikernelbench")`` and ``evaluate.load("mkb_speedup")`` by name, offline, from any folder.

Every load runs in a subprocess started in an empty temporary folder with its own ``HF_HOME`` and
``HF_HUB_OFFLINE=1``: the libraries read both at import, the temporary folder proves the call does not rely on
the repository root, and the private ``HF_HOME`` that it does not rely on an earlier download. (The wheel
install itself, with the ``.pth`` hook, is tested in test_install_by_name.py.)
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from multikernelbench.hfcache import paths
from multikernelbench.hfcache.startup import seed

pytestmark = pytest.mark.slow

pytest.importorskip("datasets")
pytest.importorskip("evaluate")

LOAD_BY_NAME = textwrap.dedent("""
    import json, sys
    {prelude}
    import datasets, evaluate
    out = {{}}
    ds = datasets.load_dataset("multikernelbench", split="test")
    out["ids"] = list(ds["id"])
    out["labels"] = {{k: ds.features[k].names for k in ("category", "dtype")}}
    out["version"] = str(ds.info.version)
    out["license"] = ds.info.license
    out["loss"] = list(datasets.load_dataset("multikernelbench", "loss", split="test")["id"])
    metric = evaluate.load("mkb_speedup")
    out["metric_file"] = sys.modules[type(metric).__module__].__file__
    rec = {{"compiled": True, "correct": True, "speedup": 2.0}}
    out["pass@1"] = metric.compute(predictions=[[rec, {{"compiled": True, "correct": False}}]],
                                   references=["a"])["pass@1"]
    json.dump(out, open(sys.argv[1], "w"))
""")


def _run(code: str, tmp_path: Path, hf_home: Path, **env) -> subprocess.CompletedProcess:
    cwd = tmp_path / "elsewhere"
    cwd.mkdir(exist_ok=True)
    full_env = {k: v for k, v in os.environ.items()
                if k not in ("HF_DATASETS_CACHE", "HF_MODULES_CACHE", "MKB_HF_CACHE")}
    full_env.update(HF_HOME=str(hf_home), HF_HUB_OFFLINE="1", **env)
    return subprocess.run([sys.executable, "-c", code, str(tmp_path / "out.json")], cwd=cwd, env=full_env,
                          capture_output=True, text=True, timeout=600)


def _check_loaded(out: dict) -> None:
    from multikernelbench.dataset_builder.schema import FORMAT_VERSION
    from multikernelbench.tasks import load_from_dataset

    packaged = load_from_dataset()
    assert out["ids"] == [t.id for t in packaged]
    assert out["loss"] == [t.id for t in packaged if t.category == "loss"]
    assert out["labels"]["category"] == sorted({t.category for t in packaged})
    assert out["version"] == FORMAT_VERSION and out["license"] == "apache-2.0"
    assert out["pass@1"] == 0.5


_PROBE = textwrap.dedent("""
    import importlib, json, os, sys
    import datasets.config as d, evaluate.config as e
    out = []
    for case in json.loads(sys.argv[2]):
        for key in ("HF_HOME", "XDG_CACHE_HOME", "HF_DATASETS_CACHE", "HF_MODULES_CACHE"):
            os.environ.pop(key, None)
        os.environ.update(case)
        out.append([str(importlib.reload(d).HF_DATASETS_CACHE), str(importlib.reload(e).HF_MODULES_CACHE)])
    json.dump(out, open(sys.argv[1], "w"))
""")


def test_cache_paths_are_the_libraries_own(tmp_path):
    """paths.py repeats how datasets/evaluate locate their caches; a change in either library fails here
    (one subprocess; the libraries' config modules are reloaded under each environment)."""
    cases = [{"HF_HOME": str(tmp_path / "home")}, {"XDG_CACHE_HOME": str(tmp_path / "xdg")},
             {"HF_HOME": str(tmp_path / "h"), "HF_DATASETS_CACHE": str(tmp_path / "d"),
              "HF_MODULES_CACHE": str(tmp_path / "m")}]
    proc = subprocess.run([sys.executable, "-c", _PROBE, str(tmp_path / "p.json"), json.dumps(cases)],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    got = json.loads((tmp_path / "p.json").read_text())
    for case, (datasets_dir, modules_dir) in zip(cases, got, strict=True):
        env = {k: v for k, v in os.environ.items()
               if k not in ("HF_HOME", "XDG_CACHE_HOME", "HF_DATASETS_CACHE", "HF_MODULES_CACHE")}
        env.update(case)
        assert [datasets_dir, modules_dir] == [paths.datasets_cache(env), paths.modules_cache(env)], case
    assert len(got) == len(cases)


def test_seeded_caches_load_by_name_offline_from_anywhere(tmp_path):
    """`mkb dataset cache` (seed) then the bare names work outside the checkout, without network; the default
    config is taken although 16 configs are cached (the 'multiple configurations' error is gone)."""
    hf_home = tmp_path / "hf"
    report = seed({"HF_HOME": str(hf_home)})
    assert len(report.dataset) == 16 and report.metric is not None and not report.skipped
    again = seed({"HF_HOME": str(hf_home)})  # idempotent: nothing rewritten
    assert again.dataset == [] and again.metric is None
    proc = _run(LOAD_BY_NAME.format(prelude=""), tmp_path, hf_home)
    assert proc.returncode == 0, proc.stderr[-4000:]
    out = json.loads((tmp_path / "out.json").read_text())
    _check_loaded(out)
    assert Path(out["metric_file"]).read_bytes() == (Path(paths.metric_dir()) / "mkb_speedup.py").read_bytes()


def test_without_the_cache_the_bare_names_fail(tmp_path):
    """The control: same call, empty HF_HOME, nothing seeded (the installed start-up hook switched off) -> the
    libraries' own errors (what users hit without it)."""
    proc = _run(LOAD_BY_NAME.format(prelude=""), tmp_path, tmp_path / "empty-hf", MKB_HF_CACHE="0")
    assert proc.returncode != 0 and "multikernelbench" in proc.stderr


def test_start_up_hook_fills_the_caches_when_datasets_is_imported(tmp_path):
    """install() (the .pth line) defers the work to the import of datasets; a process that never imports it
    writes nothing."""
    hf_home = tmp_path / "hf"
    prelude = "import multikernelbench.hfcache.hook as h; h.install()"  # the .pth line
    quiet = _run(f"{prelude}\nimport json", tmp_path, hf_home)
    assert quiet.returncode == 0, quiet.stderr[-2000:]
    assert not hf_home.exists()
    proc = _run(LOAD_BY_NAME.format(prelude=prelude), tmp_path, hf_home, MKB_HF_CACHE_DEBUG="1")
    assert proc.returncode == 0, proc.stderr[-4000:]
    _check_loaded(json.loads((tmp_path / "out.json").read_text()))
    assert os.path.isfile(paths.dataset_marker({"HF_HOME": str(hf_home)}))
    assert os.path.isfile(paths.metric_marker({"HF_HOME": str(hf_home)}))


def test_start_up_hook_never_breaks_the_interpreter(tmp_path):
    """An unusable cache (HF_HOME is a file) leaves the process working; the hook's error stays silent."""
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("x")
    proc = _run("import multikernelbench.hfcache.hook as h; h.install()\nimport datasets\nprint('alive')",
                tmp_path, blocker)
    assert proc.returncode == 0 and proc.stdout.strip() == "alive", proc.stderr[-2000:]
    assert proc.stderr.count("multikernelbench") == 0


def test_cli_cache_fills_both_caches(tmp_path, monkeypatch, capsys):
    from multikernelbench.cli.main import main

    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))
    for key in ("HF_DATASETS_CACHE", "HF_MODULES_CACHE"):
        monkeypatch.delenv(key, raising=False)
    assert main(["dataset", "cache"]) == 0
    out = capsys.readouterr().out
    assert "16 configs" in out and "evaluate.load(\"mkb_speedup\")" in out
    assert os.path.isfile(paths.dataset_marker()) and os.path.isfile(paths.metric_marker())
    from multikernelbench.tasks import load_from_dataset

    configs = {name for name in os.listdir(paths.dataset_cache_root()) if not name.startswith(".")}
    assert configs == {"all"} | {t.category for t in load_from_dataset()}  # one folder per config
