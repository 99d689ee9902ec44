"""References built concurrently (parallel device workers share the parent) get the weights of their seed."""

from concurrent.futures import ThreadPoolExecutor

import pytest
import torch

from multikernelbench.tasks import load_suite
from multikernelbench.tasks.module import make_model, materialize


@pytest.mark.slow
def test_concurrent_model_construction_is_seed_exact():
    task = load_suite(ids=["index.embedding_bag"])[0]
    mod = materialize(task)
    shape = task.test_shapes[2]

    def build(seed: int) -> torch.Tensor:
        return make_model(mod.Model, mod, shape, seed, task.dtype).bag.weight.detach().clone()

    expected = {seed: build(seed) for seed in range(8)}
    with ThreadPoolExecutor(8) as pool:
        for _ in range(5):
            seeds = list(range(8)) * 4
            for seed, weight in zip(seeds, pool.map(build, seeds), strict=True):
                assert torch.equal(weight, expected[seed])
