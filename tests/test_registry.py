"""The generic registry: a name means one thing, listing imports nothing, and an installed package adds a
backend (or a sampler) through an entry point without editing this package."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from multikernelbench.registry import Registry, RegistryCollision


def _one():
    return 1


def _two():
    return 2


def test_a_name_means_one_object():
    reg: Registry = Registry("thing")
    reg.register("a", _one)
    reg.register("a", _one)  # the identical object again: fine
    with pytest.raises(RegistryCollision, match="'a' registered twice"):
        reg.register("a", _two)
    assert reg.get("a") is _one

    @reg.register("b")
    def b():
        return 3

    assert reg.get("b") is b
    with pytest.raises(RegistryCollision):
        reg.register("b")(_two)
    with pytest.raises(KeyError, match="unknown thing 'zzz'; known: a, b"):
        reg.get("zzz")


def test_lazy_entries_are_not_imported_until_asked_for_and_must_agree():
    reg: Registry = Registry("thing", lazy={"one": f"{__name__}:_one", "ghost": "no_such_module_xyz:Thing"})
    assert reg.names() == ["ghost", "one"]  # listing imports nothing (the ghost module does not exist)
    reg.add_lazy("one", f"{__name__}:_one")  # the same target again: fine
    with pytest.raises(RegistryCollision):
        reg.add_lazy("one", f"{__name__}:_two")
    assert reg.get("one") is _one
    reg.register("one", _one)  # what the lazy entry named: fine
    with pytest.raises(RegistryCollision):
        reg.register("one", _two)
    with pytest.raises(ModuleNotFoundError):
        reg.get("ghost")


ALIAS = _one  # a re-export, as a package's __init__ makes of its modules' classes


def test_a_registration_must_be_what_the_lazy_entry_names():
    reg: Registry = Registry("thing", lazy={"x": f"{__name__}:_one", "y": f"{__name__}:ALIAS",
                                            "z": "not_imported_module_xyz:Thing"})
    with pytest.raises(RegistryCollision):
        reg.register("x", _two)  # a different object than the lazy entry names
    reg.register("y", _one)  # the object the re-export names: fine
    assert reg.get("y") is _one and reg.get("x") is _one
    with pytest.raises(RegistryCollision):
        reg.register("z", _two)  # cannot be what an unloaded module defines


def test_the_package_registries_refuse_a_second_owner_of_a_name():
    from multikernelbench.anticheat.static import register as register_rule
    from multikernelbench.backends import Backend, register_backend
    from multikernelbench.prompts import get_contract, register_contract, register_strategy
    from multikernelbench.sampling import register_sampler
    from multikernelbench.sampling.base import Sampler

    with pytest.raises(RegistryCollision):
        @register_backend("cpu")
        class Impostor(Backend):  # noqa: F811
            pass
    with pytest.raises(RegistryCollision):
        @register_sampler("openai")
        class ImpostorSampler(Sampler):
            def run(self, requests, params, on_result):
                pass
    with pytest.raises(RegistryCollision):
        register_strategy("zero_shot")(lambda task, backend: None)
    with pytest.raises(RegistryCollision):
        @register_rule("*")
        def monkey_patch(ctx):  # a static rule of that name exists
            return []
    import dataclasses

    cpu = get_contract("cpu")
    assert register_contract(dataclasses.replace(cpu)) == cpu  # an equal contract again: fine
    with pytest.raises(RegistryCollision):
        register_contract(dataclasses.replace(cpu, language="Fortran"))


# ---- a backend and a sampler from outside the package --------------------------------------------------

PLUGIN = '''
import os

from multikernelbench.anticheat.static import Finding, register as static_rule
from multikernelbench.backends.base import Availability, Backend
from multikernelbench.prompts.contracts import Contract
from multikernelbench.sampling.base import Completion, Sampler

CONTRACT = Contract(backend="toychip", platform="a toy accelerator", language="ToyChip assembly",
                    device="CPU tensors", build="Assemble at import time.",
                    exemplar_dir=os.path.join(os.path.dirname(os.path.abspath(__file__)), "toychip_exemplars"))


@static_rule("toychip")
def toychip_no_magic(ctx):
    if "MAGIC" in ctx.source:
        yield Finding(1, "toychip_no_magic", "uses MAGIC")


class ToyChipBackend(Backend):
    """A backend that lives in another package: nothing of multikernelbench was edited to add it."""

    language = "ToyChip assembly"

    def availability(self):
        return Availability(True)

    def make_timer(self, config):
        raise NotImplementedError("a toy")


class EchoSampler(Sampler):
    def run(self, requests, params, on_result):
        for r in requests:
            on_result(r, Completion(text=r.messages[-1]["content"]))
'''


def _install_plugin(root: Path, name: str, entry_points: str, module: str = "") -> None:
    """What pip leaves on sys.path for a package: its module and a ``*.dist-info`` with the metadata."""
    if module:
        (root / f"{name}.py").write_text(module)
    info = root / f"{name}-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name.replace('_', '-')}\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text(textwrap.dedent(entry_points))


@pytest.mark.slow
def test_a_third_party_package_adds_a_backend_and_a_sampler_by_entry_point(tmp_path):
    _install_plugin(tmp_path, "mkb_toychip", """
        [multikernelbench.backends]
        toychip = mkb_toychip:ToyChipBackend

        [multikernelbench.samplers]
        echo = mkb_toychip:EchoSampler

        [multikernelbench.contracts]
        toychip = mkb_toychip:CONTRACT

        [multikernelbench.static_rules]
        toychip_no_magic = mkb_toychip:toychip_no_magic
        """, PLUGIN)
    (tmp_path / "toychip_exemplars" / "generic").mkdir(parents=True)
    (tmp_path / "toychip_exemplars" / "generic" / "toychip.py").write_text("# TOYCHIP_EXEMPLAR\n")
    probe = textwrap.dedent("""
        import json, sys
        from multikernelbench.backends import backend_names, get_backend
        from multikernelbench.anticheat.static import check_source
        from multikernelbench.prompts import build_prompt, contract_backends
        from multikernelbench.prompts.exemplars import exemplar_task
        from multikernelbench.sampling import get_sampler, sampler_names

        names = backend_names()
        imported_by_listing = "mkb_toychip" in sys.modules
        backend = get_backend("toychip")
        sampler = get_sampler("echo")
        print(json.dumps({"backends": names, "samplers": sampler_names(),
                          "imported_by_listing": imported_by_listing, "name": backend.name,
                          "cls": type(backend).__module__ + ":" + type(backend).__qualname__,
                          "language": backend.language, "available": backend.availability().ok,
                          "sampler": type(sampler).__name__, "contracts": contract_backends(),
                          "prompt": build_prompt(exemplar_task("generic"), "toychip", "one_shot").messages[-1]["content"],
                          "rules_toychip": [f.rule for f in check_source("MAGIC = 1\\n", "toychip")],
                          "rules_cpu": [f.rule for f in check_source("MAGIC = 1\\n", "cpu")]}))
        """)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(tmp_path), os.environ.get("PYTHONPATH", "")]))
    proc = subprocess.run([sys.executable, "-c", probe], env=env, capture_output=True, text=True, timeout=300,
                          cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    assert "toychip" in out["backends"] and {"cpu", "cuda", "triton", "pallas"} <= set(out["backends"])
    assert "echo" in out["samplers"] and "openai" in out["samplers"]
    assert out["imported_by_listing"] is False
    assert out["cls"] == "mkb_toychip:ToyChipBackend" and out["name"] == "toychip"
    assert out["language"] == "ToyChip assembly" and out["available"] is True
    assert out["sampler"] == "EchoSampler"
    # its prompt contract, exemplars and static rules come from the same package
    assert "toychip" in out["contracts"]
    assert "ToyChip assembly" in out["prompt"] and "TOYCHIP_EXEMPLAR" in out["prompt"]
    assert out["rules_toychip"] == ["toychip_no_magic"] and out["rules_cpu"] == []


def test_an_entry_point_that_claims_a_taken_name_is_an_error(tmp_path, monkeypatch):
    group = "multikernelbench.test_registry_group"
    _install_plugin(tmp_path, "mkb_first", f"[{group}]\nthing = {__name__}:_one\n")
    _install_plugin(tmp_path, "mkb_second", f"[{group}]\nthing = {__name__}:_two\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(RegistryCollision, match="'thing' registered twice"):
        Registry("thing", entry_point_group=group).names()
    reg = Registry("thing", entry_point_group=group + "_x", lazy={})
    assert reg.names() == []
