"""Backend options are typed: an option a backend does not read, or a value of the wrong type, is an error
before a run starts (it used to be ignored silently, so a run measured something its author did not ask for)."""

from __future__ import annotations

import subprocess
import sys

import pytest

from multikernelbench.backends.options import BackendOptionError, BackendOptions
from multikernelbench.backends.registry import BACKENDS, backend_names, check_backend_options, get_backend


def test_a_typo_names_the_option_it_probably_meant():
    with pytest.raises(BackendOptionError, match=r"no option 'fast_biuld' \(did you mean 'fast_build'\?\)"):
        get_backend("cuda", fast_biuld=False)


def test_another_backends_option_is_refused():
    with pytest.raises(BackendOptionError, match="no option 'interpret'"):
        get_backend("cuda", interpret=True)
    with pytest.raises(BackendOptionError, match="no option 'allow_graphs'"):
        check_backend_options("pallas", {"allow_graphs": True})  # pallas's timer never replays graphs
    with pytest.raises(BackendOptionError, match="no option 'pch'"):
        check_backend_options("opencl", {"pch": False})


@pytest.mark.parametrize("key, value, wants", [
    ("max_jobs", "8", "int"), ("max_jobs", True, "int"), ("pch", "false", "bool"), ("pch", 0, "bool"),
    ("short_ms", "1", "float or null"), ("arch", 9.0, "str or null"),
])
def test_a_value_of_the_wrong_type_is_refused(key, value, wants):
    with pytest.raises(BackendOptionError, match=f"option '{key}' wants {wants}"):
        check_backend_options("cuda", {key: value})


def test_given_values_are_read_and_defaults_hold():
    cuda = get_backend("cuda", max_jobs=8, short_ms=2, light_ahead=False)
    assert (cuda.opts.max_jobs, cuda.opts.light_ahead, cuda.opts.pch, cuda.opts.arch) == (8, False, True, None)
    assert cuda.opts.timer_kwargs() == {"short_ms": 2}
    assert cuda.options == {"max_jobs": 8, "short_ms": 2, "light_ahead": False}  # sent on to workers as given
    cpu = get_backend("cpu", threads=3, pch=False)
    assert (cpu.opts.threads, cpu.opts.pch, cpu.opts.pch_root) == (3, False, None)


@pytest.mark.parametrize("name", backend_names())
def test_every_backend_declares_its_options_and_takes_threads(name):
    cls = BACKENDS.get(name)
    assert issubclass(cls.Options, BackendOptions)
    check_backend_options(name, {"threads": 2})  # the engine passes --threads to every backend


@pytest.mark.slow
def test_the_cli_stops_before_the_run_on_a_typo(tmp_path):
    out = subprocess.run([sys.executable, "-m", "multikernelbench.cli.main", "eval", "--backend", "cpu",
                          "--solutions", str(tmp_path), "--db", str(tmp_path / "r.sqlite"),
                          "--backend-option", "pch_rot=/tmp/x", "--no-progress"],
                         capture_output=True, text=True, timeout=120)
    assert out.returncode != 0
    assert "--backend-option: backend 'cpu' has no option 'pch_rot' (did you mean 'pch_root'?)" in out.stderr
    assert not (tmp_path / "r.sqlite").exists()
