"""The fast tier's rule, checked when asked: ``python -m pytest -q -m "not slow" --fast-limit 5``.

``-m "not slow"`` is what a developer runs while working (docs/testing.md), so it stays fast only if every
test that costs time carries ``@pytest.mark.slow``. Wall time depends on the host's load, so the check is not
always on (a loaded CI host would fail honest fast tests): with ``--fast-limit SECONDS`` a test that is not
marked ``slow`` and spends longer than that in its setup and call together fails, naming the time. Setup
counts because a module fixture's engine run is paid by the first test that asks for it, and a fast-tier run
pays it too.
"""

from __future__ import annotations

import pytest

_SPENT = pytest.StashKey[float]()


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--fast-limit", type=float, default=None, metavar="SECONDS",
                     help="fail a test not marked slow whose setup and call take longer than SECONDS "
                          "(the fast tier's rule; docs/testing.md)")


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> pytest.TestReport:
    report: pytest.TestReport = yield
    limit = item.config.getoption("fast_limit")
    if limit is None or report.when == "teardown" or item.get_closest_marker("slow") is not None:
        return report
    spent = item.stash.get(_SPENT, 0.0) + report.duration
    item.stash[_SPENT] = spent
    if report.when == "call" and report.passed and spent > limit:
        report.outcome = "failed"
        report.longrepr = (f"{item.nodeid} took {spent:.1f} s (setup and call) in the fast tier, over "
                           f"--fast-limit {limit:g} s: mark it @pytest.mark.slow or make it cheaper")
    return report
