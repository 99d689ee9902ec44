"""Task format and loader: stable ids and hashes, variants, and clear errors for malformed task files."""

from pathlib import Path

import pytest

from multikernelbench.tasks import TaskFormatError, load_suite, load_task_file
from multikernelbench.tasks.record import Task

GOOD = '''"""Doubles its input."""
import torch
from multikernelbench.tasks.gen import randn
DTYPES = ("float32", "bfloat16")
TEST_SHAPES = [{"n": 3}, {"n": 37}, {"n": 1000}]
BENCH_SHAPE = {"n": 1 << 30}
class Model(torch.nn.Module):
    def forward(self, x):
        return 2 * x
def get_init_inputs(shape):
    return []
def get_inputs(shape, gen):
    return [randn(gen, shape["n"])]
def flops(shape):
    return shape["n"]
def bytes_moved(shape, itemsize):
    return 2 * shape["n"] * itemsize
'''


def write(tmp_path: Path, text: str, name: str = "double") -> Path:
    folder = tmp_path / "toy"
    folder.mkdir(exist_ok=True)
    path = folder / f"{name}.py"
    path.write_text(text)
    return path


def test_variants_ids_and_costs(tmp_path):
    fp32, bf16 = load_task_file(write(tmp_path, GOOD))
    assert (fp32.id, bf16.id) == ("toy.double", "toy.double.bf16")
    assert fp32.category == "toy" and fp32.description == "Doubles its input."
    assert fp32.bytes == 2 * 4 * (1 << 30) and bf16.bytes == 2 * 2 * (1 << 30)
    assert fp32.cpu_bench_shape == {"n": 1000}  # defaults to the last test shape
    assert (fp32.atol, bf16.atol) == (1e-4, 2e-2)
    assert fp32.content_hash != bf16.content_hash


def test_hash_is_stable_and_content_sensitive(tmp_path):
    a = load_task_file(write(tmp_path, GOOD))[0]
    b = load_task_file(write(tmp_path, GOOD))[0]
    assert a == b and a.content_hash == b.content_hash
    c = load_task_file(write(tmp_path, GOOD.replace("2 * x", "3 * x")))[0]
    assert c.content_hash != a.content_hash


def test_row_roundtrip(tmp_path):
    task = load_task_file(write(tmp_path, GOOD))[0]
    assert Task.from_row(task.to_row()) == task


@pytest.mark.parametrize("broken, message", [
    (GOOD.replace("def flops", "def flopz"), "missing flops"),
    (GOOD.replace('{"n": 3}, ', ""), "at least 3 TEST_SHAPES"),
    (GOOD.replace("import torch", "import torch\nraise ValueError('boom')"), "failed to execute"),
    (GOOD.replace('"float32", "bfloat16"', '"bfloat16",'), "must include float32"),
])
def test_malformed_files_name_the_problem(tmp_path, broken, message):
    with pytest.raises(TaskFormatError, match=message):
        load_task_file(write(tmp_path, broken))


def test_shipped_suite_ids_unique_and_sorted():
    tasks = load_suite(categories=["activation", "reduce"])
    ids = [t.id for t in tasks]
    assert ids == sorted(set(ids))
    assert sum(t.category == "activation" and t.dtype == "float32" for t in tasks) >= 15
    assert sum(t.category == "reduce" for t in tasks) >= 5
