"""The built dataset: deterministic, versioned, loadable offline with ``datasets``, identical to the suite.

``datasets.load_dataset`` runs in a subprocess with HF_HUB_OFFLINE=1 so the test proves no network access
is needed (the flag is read when ``datasets`` is imported) and so the bare-name call runs from the
repository root, the place where ``load_dataset("multikernelbench")`` is documented to work.
"""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from _suite_ids import suite_tasks

from multikernelbench.dataset_builder import build
from multikernelbench.dataset_builder.card import _PLACEHOLDER, FIELD_DOCS
from multikernelbench.dataset_builder.push import PushError, execute, plan_push
from multikernelbench.tasks import Task, load_from_dataset
from multikernelbench.tasks.from_dataset import DatasetIntegrityError
from multikernelbench.tasks.rows import from_dataset_row

REPO = Path(__file__).resolve().parents[1]
SECTIONS = ["## Summary", "## Categories", "## Fields", "## How to load", "## How to evaluate", "## Licensing",
            "## Citation"]

pytest.importorskip("pyarrow")


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    return build.build_dataset(tmp_path_factory.mktemp("ds"), list(suite_tasks()))


def _files(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


@pytest.mark.slow
def test_build_is_deterministic_and_versioned(built, tmp_path):
    tasks = list(suite_tasks())
    assert built.version == build.dataset_version(tasks) and len(built.version) == 12
    assert built.folder.name == f"multikernelbench-{built.version}"
    again = build.build_dataset(tmp_path, list(reversed(tasks)))  # input order must not matter
    assert again.folder.name == built.folder.name
    assert _files(again.folder) == _files(built.folder)
    names = build.data_files(tasks)
    assert sorted(_files(built.folder)) == sorted(["README.md", *names.values()])
    assert all(names[c].startswith(f"data/{c}-") for c in built.counts)


def test_version_changes_with_any_task():
    tasks = list(suite_tasks())
    t0 = tasks[0]
    changed = dataclasses.replace(t0, content_hash="0" * 16)
    assert build.dataset_version([changed] + tasks[1:]) != build.dataset_version(tasks)


def test_card_has_fixed_sections_counts_and_configs(built):
    import yaml

    text = (built.folder / "README.md").read_text()
    meta = yaml.safe_load(text.split("---\n", 2)[1])
    body = text.split("---\n", 2)[2]
    assert meta["version"] == built.version and meta["license"] == "apache-2.0"
    configs = {c["config_name"]: c for c in meta["configs"]}
    assert set(configs) == {"all"} | set(built.counts)
    assert configs["all"].get("default") is True
    files = build.data_files(suite_tasks())
    assert configs["all"]["data_files"] == [{"split": "test", "path": [files[c] for c in sorted(files)]}]
    assert configs["loss"]["data_files"] == [{"split": "test", "path": files["loss"]}]
    assert [body.find(s) for s in SECTIONS] == sorted(body.find(s) for s in SECTIONS) and body.find(SECTIONS[0]) > 0
    for cat, n in built.counts.items():
        assert f"| `{cat}` | {n} |" in body
    assert f"| `all` (default) | {built.total} |" in body
    assert built.version in body
    assert not _PLACEHOLDER.search(body), _PLACEHOLDER.search(body)
    assert set(FIELD_DOCS) == set(Task.__dataclass_fields__)


def test_unknown_placeholder_is_an_error(tmp_path):
    bad = tmp_path / "CARD.md"
    bad.write_text("# x {{ nope }}\n")
    with pytest.raises(KeyError, match="nope"):
        build.write_dataset(list(suite_tasks())[:3], tmp_path / "out", template=bad)


@pytest.mark.slow
def test_load_from_dataset_gives_identical_tasks(built):
    import datasets

    suite = list(suite_tasks())
    assert load_from_dataset(built.folder) == suite
    ds = datasets.load_dataset(str(built.folder), split="test", cache_dir=str(built.folder.parent / "cache"))
    assert load_from_dataset(ds) == suite
    assert load_from_dataset([t.to_row() for t in suite], categories=["loss"]) == [
        t for t in suite if t.category == "loss"]
    first = suite[0].id
    assert [t.id for t in load_from_dataset(built.folder, ids=[first])] == [first]


def test_load_from_dataset_rejects_edited_rows(built):
    rows = [t.to_row() for t in suite_tasks()][:5]
    rows[2]["source"] += "\n# edited\n"
    with pytest.raises(DatasetIntegrityError, match=rows[2]["id"]):
        load_from_dataset(rows)


def test_rebuilt_folder_is_not_served_from_a_stale_datasets_cache(tmp_path):
    """The package copy is rebuilt in place; ``datasets`` must notice the new files, not reuse its cache."""
    import datasets

    tasks = list(suite_tasks())
    folder, cache = tmp_path / "same", str(tmp_path / "cache")
    build.write_dataset(tasks[:4], folder)
    assert len(datasets.load_dataset(str(folder), split="test", cache_dir=cache)) == 4
    build.write_dataset(tasks[:7], folder)
    assert len(datasets.load_dataset(str(folder), split="test", cache_dir=cache)) == 7


OFFLINE_LOAD = textwrap.dedent("""
    import json, sys
    from datasets import load_dataset
    folder, out, cache = sys.argv[1:4]
    res = {}
    ds = load_dataset(folder, split="test", cache_dir=cache)
    res["folder"] = ds.to_list()
    res["labels"] = {k: ds.features[k].names for k in ("category", "dtype")}
    res["folder_loss"] = list(load_dataset(folder, "loss", split="test", cache_dir=cache)["id"])
    res["bare"] = load_dataset("multikernelbench", split="test", cache_dir=cache).to_list()
    res["bare_loss"] = list(load_dataset("multikernelbench", "loss", split="test", cache_dir=cache)["id"])
    json.dump(res, open(out, "w"))
""")


@pytest.fixture(scope="module")
def offline_loads(built, tmp_path_factory):
    tmp = tmp_path_factory.mktemp("offline")
    env = dict(os.environ, HF_HUB_OFFLINE="1", HF_DATASETS_OFFLINE="1", HF_HOME=str(tmp / "hf"))
    out = tmp / "rows.json"
    proc = subprocess.run([sys.executable, "-c", OFFLINE_LOAD, str(built.folder), str(out), str(tmp / "cache")],
                          cwd=REPO, env=env, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-4000:]
    return json.loads(out.read_text())


@pytest.mark.slow
def test_built_folder_loads_offline_with_exactly_the_suite_rows(offline_loads):
    suite = list(suite_tasks())
    assert [from_dataset_row(r, offline_loads["labels"]) for r in offline_loads["folder"]] == suite
    assert offline_loads["folder_loss"] == [t.id for t in suite if t.category == "loss"]


@pytest.mark.slow
def test_bare_name_loads_the_package_copy_from_the_repo_root(offline_loads):
    pkg = build.package_folder()
    assert not (pkg / "multikernelbench.py").exists(), "datasets would treat the bare name as a dataset script"
    bare = [from_dataset_row(r, offline_loads["labels"]) for r in offline_loads["bare"]]
    assert bare == load_from_dataset(pkg)
    assert offline_loads["bare_loss"] == [t.id for t in load_from_dataset(pkg, categories=["loss"])]


@pytest.mark.slow
def test_package_copy_is_up_to_date(capsys):
    """The committed copy must match the suite: a task edit without `mkb dataset build` would ship stale tasks."""
    from multikernelbench.cli.main import main

    rc = main(["dataset", "build", "--check"])
    assert rc == 0, capsys.readouterr().err
    assert load_from_dataset() == list(suite_tasks())


@pytest.mark.slow
def test_cli_build(tmp_path, capsys):
    from multikernelbench.cli.main import main

    assert main(["dataset", "build", "--out", str(tmp_path), "--no-package"]) == 0
    version = build.dataset_version(suite_tasks())
    assert (tmp_path / f"multikernelbench-{version}" / "README.md").is_file()
    assert version in capsys.readouterr().out


# ---------------------------------------------------------------------------------------------- push
def test_push_plan_uses_the_documented_hub_calls(built):
    plan = plan_push(built.folder, "my-org/multikernelbench")
    assert [name for name, _ in plan.calls] == ["create_repo", "upload_folder", "create_tag"]
    create, upload, tag = (kw for _, kw in plan.calls)
    assert create == dict(repo_id="my-org/multikernelbench", repo_type="dataset", private=False, exist_ok=True,
                          token=None)
    assert upload["repo_id"] == "my-org/multikernelbench" and upload["repo_type"] == "dataset"
    assert upload["folder_path"] == str(built.folder) and built.version in upload["commit_message"]
    assert tag == dict(repo_id="my-org/multikernelbench", tag=f"v{built.version}", repo_type="dataset",
                       exist_ok=True, token=None)
    assert plan.files == ["README.md"] + sorted(build.data_files(suite_tasks()).values())
    # the keyword names are huggingface_hub's own: a renamed parameter fails here, not at push time
    import inspect

    from huggingface_hub import HfApi

    for name, kwargs in plan.calls:
        inspect.signature(getattr(HfApi, name)).bind(None, **kwargs)


def test_push_executes_calls_in_order(built):
    calls = []

    class FakeApi:
        def __getattr__(self, name):
            return lambda **kw: calls.append((name, kw)) or name

    plan = plan_push(built.folder, "o/n", tag=False)
    assert execute(plan, FakeApi()) == ["create_repo", "upload_folder"]
    assert calls == plan.calls


def test_push_network_failure_is_a_clear_error(built):
    from huggingface_hub import HfApi

    api = HfApi(endpoint="http://127.0.0.1:9", token="hf_not_a_real_token")  # nothing listens on port 9
    with pytest.raises(PushError, match="create_repo failed.*network access"):
        execute(plan_push(built.folder, "o/n"), api)


def test_push_rejects_bad_input(tmp_path, built):
    with pytest.raises(PushError, match="ORG/NAME"):
        plan_push(built.folder, "no-slash")
    with pytest.raises(PushError, match="not a built dataset"):
        plan_push(tmp_path, "o/n")


def test_cli_push_dry_run_sends_nothing(built, capsys):
    from multikernelbench.cli.main import main

    assert main(["dataset", "push", "--repo-id", "o/n", "--folder", str(built.folder), "--dry-run"]) == 0
    out = capsys.readouterr().out
    assert "HfApi().create_repo(" in out and "HfApi().upload_folder(" in out and "dry run" in out
    assert build.data_files(suite_tasks())["loss"] in out


# ---------------------------------------------------------------------------------------------- typed rows
@pytest.mark.slow
def test_rows_are_typed_and_the_card_declares_them(built, tmp_path):
    """Shapes are structured features, category/dtype ClassLabels; the card's dataset_info and version say so."""
    import datasets
    import yaml

    from multikernelbench.dataset_builder.schema import FORMAT_VERSION, features_json

    suite = sorted(suite_tasks(), key=lambda t: t.id)
    names = sorted({t.category for t in suite})
    want = datasets.Features.from_dict(features_json(names))
    builder = datasets.load_dataset_builder(str(built.folder), cache_dir=str(tmp_path / "cache"))
    assert str(builder.info.version) == FORMAT_VERSION and builder.info.features == want
    assert builder.info.splits["test"].num_examples == len(suite)
    ds = datasets.load_dataset(str(built.folder), split="test", cache_dir=str(tmp_path / "cache"))
    assert isinstance(ds.features["category"], datasets.ClassLabel) and ds.features["category"].names == names
    assert isinstance(ds.features["dtype"], datasets.ClassLabel)
    row, task = ds[0], suite[0]
    assert ds.features["category"].int2str(row["category"]) == task.category
    assert ds.features["dtype"].int2str(row["dtype"]) == task.dtype
    assert {p["name"]: p["size"] for p in row["bench_shape"]} == task.bench_shape
    assert [{p["name"]: p["size"] for p in s} for s in row["test_shapes"]] == list(task.test_shapes)
    meta = yaml.safe_load((built.folder / "README.md").read_text().split("---\n", 2)[1])
    infos = {i["config_name"]: i for i in meta["dataset_info"]}
    assert set(infos) == {"all"} | set(built.counts)
    for name, info in infos.items():
        assert info["features"] == want._to_yaml_list(), name  # the YAML datasets itself writes
        assert info["splits"][0]["num_examples"] == (len(suite) if name == "all" else built.counts[name])
    assert {c["config_name"]: c["version"] for c in meta["configs"]} == dict.fromkeys(infos, FORMAT_VERSION)


@pytest.mark.slow
def test_pushed_folder_loads_back_as_the_suite(built, tmp_path, capsys):
    """`mkb dataset push --local-dir` leaves the folder as the Hub repository would be; it loads back whole."""
    import datasets

    from multikernelbench.cli.main import main

    dest = tmp_path / "hub-clone"
    (dest / "data").mkdir(parents=True)
    (dest / "data" / "gone-00000000.parquet").write_bytes(b"a category that left the suite")
    assert main(["dataset", "push", "--folder", str(built.folder), "--local-dir", str(dest)]) == 0
    plan = plan_push(built.folder, "o/n")
    assert sorted(p.relative_to(dest).as_posix() for p in dest.rglob("*") if p.is_file()) == sorted(plan.files)
    cache = str(tmp_path / "cache")
    suite = list(suite_tasks())
    assert load_from_dataset(datasets.load_dataset(str(dest), split="test", cache_dir=cache)) == suite
    loss = datasets.load_dataset(str(dest), "loss", split="test", cache_dir=cache)
    assert load_from_dataset(loss) == [t for t in suite if t.category == "loss"]
    assert "load_dataset(" in capsys.readouterr().out
