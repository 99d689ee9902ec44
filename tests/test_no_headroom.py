"""The ``NO_HEADROOM`` note (issue #15 hygiene): per-dtype, read without running the file, validated by the
loader, hidden from prompts, and outside the content hash so marking a measured task keeps its baseline row
and stored results valid. And the shipped suite: every task the committed H200 baseline finds at >= 0.9 of
the roofline carries a note, and no note sits on a task the baseline says has room."""

from __future__ import annotations

import textwrap

import pytest

from multikernelbench.baselines import Match, load_baseline
from multikernelbench.prompts.templates import task_view
from multikernelbench.tasks.loader import TaskFormatError, load_suite, tasks_from_source

BASE = textwrap.dedent('''
    """ReLU of a 2-D tensor."""
    import torch
    import torch.nn as nn
    from multikernelbench.tasks.gen import randn

    DTYPES = ("float32", "bfloat16")
    TEST_SHAPES = [{"n": 37}, {"n": 1000}, {"n": 4099}]
    BENCH_SHAPE = {"n": 1 << 28}
    {note}

    class Model(nn.Module):
        def forward(self, x):
            return torch.relu(x)

    def get_init_inputs(shape):
        return []

    def get_inputs(shape, gen):
        return [randn(gen, shape["n"])]

    def flops(shape):
        return shape["n"]

    def bytes_moved(shape, itemsize):
        return 2 * shape["n"] * itemsize
    ''')


def _load(note: str):
    source = BASE.replace("{note}\n", f"{note}\n" if note else "")  # a note adds lines, nothing else
    return {t.dtype: t for t in tasks_from_source(source, "activation", "relu_probe")}


def test_note_is_per_dtype_and_outside_the_hash():
    plain = _load("")
    marked = _load('# measured at the bound\nNO_HEADROOM = {"float32": ("at copy speed "\n    "on the H200")}')
    assert marked["float32"].no_headroom == "at copy speed on the H200"
    assert marked["bfloat16"].no_headroom is None and plain["float32"].no_headroom is None
    for dtype in plain:  # the note (and its comment) is not part of what was measured
        assert marked[dtype].content_hash == plain[dtype].content_hash
    every = _load('NO_HEADROOM = "both variants"')
    assert every["bfloat16"].no_headroom == "both variants"
    changed = _load("SCALE = 2.0")  # any other change still changes the hash
    assert changed["float32"].content_hash != plain["float32"].content_hash


def test_note_is_hidden_from_prompts():
    source = BASE.replace("{note}", 'NO_HEADROOM = {"float32": "at copy speed"}')
    assert "NO_HEADROOM" in source and "NO_HEADROOM" not in task_view(source)


@pytest.mark.parametrize("note", ['NO_HEADROOM = ""', 'NO_HEADROOM = {"float32": 3}', "NO_HEADROOM = f'{1}'",
                                  'NO_HEADROOM = {"float64": "not a declared dtype"}'])
def test_malformed_note_is_a_format_error(note):
    with pytest.raises(TaskFormatError, match="NO_HEADROOM"):
        _load(note)


@pytest.mark.slow
def test_shipped_suite_marks_exactly_the_tasks_the_baseline_finds_at_the_bound():
    baseline = load_baseline()
    at_bound, marked = set(), set()
    for task in load_suite():
        status, row = baseline.match(task.id, task.content_hash)
        if status in (Match.OK, Match.SUSPECT) and row.eager_fraction is not None and row.eager_fraction >= 0.9:
            at_bound.add(task.id)
        if task.no_headroom:
            marked.add(task.id)
    assert at_bound - marked == set(), "at >= 0.9 of the roofline on the H200 but not marked NO_HEADROOM"
    assert marked - at_bound == set(), "marked NO_HEADROOM but the baseline shows room"
