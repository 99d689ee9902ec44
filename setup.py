"""Package discovery with folder mapping (pyproject.toml holds all other metadata).

backends/, dataset_builder/ and metrics/ live at the repository's top level but install under the
multikernelbench namespace, so no bare ``backends`` or ``metrics`` package lands in site-packages. Subpackages
are found automatically so new modules need no edit here.

A wheel also carries ``multikernelbench-hfcache.pth`` at its root: one line that runs
``multikernelbench.hfcache.hook.install()`` at interpreter start; that puts the shipped dataset and metric
where ``load_dataset("multikernelbench")`` / ``evaluate.load("mkb_speedup")`` look when the Hub is out of
reach (see multikernelbench/hfcache/__init__.py).

An editable install (``pip install -e .``, PEP 660) gets the same file: setuptools builds an editable wheel that
holds only its own path hook (``__editable__.*.pth`` + finder), never ``build_lib`` files, so
:class:`EditableWheelWithPth` adds the line to the finished wheel and its ``RECORD`` (``pip uninstall`` removes
it again). ``site`` reads ``.pth`` files in name order, so setuptools' ``__editable__`` hook ('_' < 'm') makes
the checkout importable before this line imports from it.
"""

import base64
import hashlib
import os
import zipfile
from pathlib import Path

from setuptools import find_packages, setup
from setuptools.command.build_py import build_py
from setuptools.command.editable_wheel import editable_wheel

MAPPED = {"backends": "multikernelbench.backends", "dataset_builder": "multikernelbench.dataset_builder",
          "metrics": "multikernelbench.metrics"}
PTH = "multikernelbench-hfcache.pth"

packages = find_packages(include=["multikernelbench", "multikernelbench.*"])
package_dir = {"multikernelbench": "multikernelbench"}
for folder, name in MAPPED.items():
    packages.append(name)
    package_dir[name] = folder
    for sub in find_packages(where=folder):
        packages.append(f"{name}.{sub}")
        package_dir[f"{name}.{sub}"] = f"{folder}/{sub.replace('.', '/')}"


class BuildPyWithPth(build_py):
    """build_py that also puts the start-up hook at the root of the wheel (purelib), not in an editable one."""

    def run(self):
        super().run()
        if not getattr(self, "editable_mode", False):
            self.copy_file(PTH, os.path.join(self.build_lib, PTH), preserve_mode=0)

    def get_outputs(self, include_bytecode=1):
        outputs = super().get_outputs(include_bytecode)
        if not getattr(self, "editable_mode", False):
            outputs.append(os.path.join(self.build_lib, PTH))
        return outputs


def add_to_wheel(wheel: Path, name: str, data: bytes) -> None:
    """Add ``name`` at the root of ``wheel`` and list it in the wheel's RECORD (PEP 376/427: urlsafe base64
    sha256 without padding, then the size), rewriting the archive. Only the documented wheel format is used,
    not setuptools' internals, so any setuptools >= 64 that builds the editable wheel works."""
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    tmp = wheel.with_name(wheel.name + ".tmp")
    with zipfile.ZipFile(wheel) as src, zipfile.ZipFile(tmp, "w", zipfile.ZIP_DEFLATED) as dst:
        [record] = [i for i in src.infolist() if i.filename.endswith(".dist-info/RECORD")]
        for info in src.infolist():
            if info.filename not in (record.filename, name):
                dst.writestr(info, src.read(info))
        lines = [ln for ln in src.read(record).decode().splitlines() if ln and not ln.startswith(name + ",")]
        dst.writestr(name, data)
        dst.writestr(record, "\n".join(lines + [f"{name},sha256={digest},{len(data)}"]) + "\n")
    os.replace(tmp, wheel)


class EditableWheelWithPth(editable_wheel):
    """editable_wheel whose wheel also installs the start-up hook (see the module docstring)."""

    def run(self):
        dist_dir = Path(self.dist_dir)
        before = {w: w.stat().st_mtime_ns for w in dist_dir.glob("*.whl")}
        super().run()
        data = (Path(__file__).resolve().parent / PTH).read_bytes()
        for wheel in dist_dir.glob("*.whl"):  # the one just written (new, or rewritten in place)
            if before.get(wheel) != wheel.stat().st_mtime_ns:
                add_to_wheel(wheel, PTH, data)


setup(packages=packages, package_dir=package_dir,
      cmdclass={"build_py": BuildPyWithPth, "editable_wheel": EditableWheelWithPth})
