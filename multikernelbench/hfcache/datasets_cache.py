"""Write a built dataset folder into the ``datasets`` cache, as if ``multikernelbench`` had been downloaded.

``load_dataset("multikernelbench")`` that cannot reach the Hub uses ``datasets``' ``Cache`` builder, which
looks for ``<cache>/multikernelbench/<config>/<version>/<hash>/`` with a ``dataset_info.json`` and the split's
Arrow stream file ``multikernelbench-test.arrow``. Without a config name it takes the most recently modified
folder and refuses when other configs share its version and hash; so each config gets its own hash (over its
name and files) and ``all`` is written last, with the newest time. The Arrow schema and the info are made
by the installed ``datasets`` from the features stored in the parquet files, so the cache is what this
``datasets`` release would have written itself.

Each config folder appears atomically (written under a dot-name that the cache's glob skips, then renamed),
so two interpreters starting at once cannot leave a half-written folder behind.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import tempfile
import time
from pathlib import Path
from typing import Any

from multikernelbench.hfcache.paths import DATASET_NAME

SPLIT_FILE = f"{DATASET_NAME}-{{split}}.arrow"


def read_card(folder: Path) -> dict[str, Any]:
    """The YAML block of a built folder's README.md (configs, version, dataset_info)."""
    import yaml

    text = (folder / "README.md").read_text(encoding="utf-8")
    if not text.startswith("---\n"):
        raise ValueError(f"{folder}/README.md has no YAML block: not a folder built by `mkb dataset build`")
    return yaml.safe_load(text.split("---\n", 2)[1]) or {}


def _paths(entry: dict[str, Any]) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for spec in entry.get("data_files", []):
        paths = spec["path"]
        out.setdefault(spec["split"], []).extend([paths] if isinstance(paths, str) else paths)
    return out


def config_hash(name: str, files: dict[str, list[str]], content_version: str) -> str:
    """16 hex digits over the config's name, content version and file names (which carry content hashes)."""
    blob = "\n".join([name, content_version] + [f"{s}:{p}" for s in sorted(files) for p in files[s]])
    return hashlib.sha256(blob.encode()).hexdigest()[:16]


def _info(meta: dict[str, Any], config: str, version: str, features: Any, sizes: dict[str, tuple[int, int]]):
    import datasets

    splits = datasets.SplitDict(dataset_name=DATASET_NAME)
    for split, (rows, nbytes) in sizes.items():
        splits.add(datasets.SplitInfo(name=split, num_bytes=nbytes, num_examples=rows, dataset_name=DATASET_NAME))
    return datasets.DatasetInfo(
        description=f"{meta.get('pretty_name', DATASET_NAME)} task suite, content version {meta.get('version')} "
                    f"(the copy shipped in the multikernelbench package)",
        license=str(meta.get("license", "")), features=features, builder_name="parquet",
        dataset_name=DATASET_NAME, config_name=config, version=version, splits=splits,
        dataset_size=sum(n for _, n in sizes.values()))


def _write_config(folder: Path, root: Path, meta: dict[str, Any], entry: dict[str, Any]) -> Path:
    import datasets
    import pyarrow as pa
    import pyarrow.parquet as pq

    config, version = entry["config_name"], str(entry.get("version", "0.0.0"))
    files = _paths(entry)
    target = root / config / version / config_hash(config, files, str(meta.get("version")))
    if (target / "dataset_info.json").is_file():
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=".tmp-", dir=target.parent))
    try:
        sizes, features = {}, None
        for split, paths in files.items():
            table = pa.concat_tables([pq.read_table(folder / p) for p in sorted(paths)])
            features = datasets.Features.from_arrow_schema(table.schema)
            table = table.cast(features.arrow_schema)
            with pa.OSFile(str(tmp / SPLIT_FILE.format(split=split)), "wb") as sink:
                with pa.ipc.new_stream(sink, table.schema) as writer:
                    writer.write_table(table)
            sizes[split] = (table.num_rows, table.nbytes)
        _info(meta, config, version, features, sizes).write_to_directory(str(tmp))
        try:
            os.rename(tmp, target)
        except OSError:  # another process got there first: its copy is the same
            if not (target / "dataset_info.json").is_file():
                raise
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return target


def seed_datasets_cache(folder: Path, cache_dir: Path) -> list[Path]:
    """Write every config of the built ``folder`` under ``cache_dir/multikernelbench``; the default config last.

    Returns the config folders (existing ones are kept as they are). The default's folder gets the newest
    modification time so that ``load_dataset("multikernelbench")`` without a config name picks it.
    """
    root = Path(cache_dir) / DATASET_NAME
    root.mkdir(parents=True, exist_ok=True)  # fails fast (before the heavy imports) on a read-only cache
    meta = read_card(folder)
    entries = sorted(meta.get("configs", []), key=lambda e: bool(e.get("default")))
    if not entries:
        raise ValueError(f"{folder}/README.md lists no configs")
    out = [_write_config(folder, root, meta, e) for e in entries]
    now = time.time()
    os.utime(out[-1], (now + 1, now + 1))
    return out
