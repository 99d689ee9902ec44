"""The dataset's fixed layout, shared by the builder and the card: names, the split, the parquet writer options
and the Arrow schema of a row (derived from the Task fields so the two cannot drift apart)."""

from __future__ import annotations

import dataclasses

from multikernelbench.tasks.record import Task

DATASET_NAME = "multikernelbench"
SPLIT = "test"  # a benchmark is an evaluation set; every config has this one split
DATA_DIR = "data"
ALL_CONFIG = "all"

# Pinned writer options: a library default that changes between pyarrow releases must not change our files.
PARQUET_OPTIONS = dict(compression="zstd", compression_level=9, use_dictionary=True, write_statistics=False,
                       version="2.6", data_page_version="1.0", row_group_size=1 << 20, store_schema=False)


def arrow_schema():
    """The fixed Arrow schema of a row, derived from the Task fields so the two cannot drift apart."""
    import pyarrow as pa

    kinds = {"str": pa.string(), "int": pa.int64(), "float": pa.float64()}
    fields = []
    for f in dataclasses.fields(Task):
        ann = f.type if isinstance(f.type, str) else getattr(f.type, "__name__", str(f.type))
        # tuple/dict annotated fields are shapes, stored as JSON strings by Task.to_row()
        fields.append(pa.field(f.name, kinds.get(ann, pa.string()), nullable=False))
    return pa.schema(fields)
