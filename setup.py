"""Package discovery with folder mapping (pyproject.toml holds all other metadata).

backends/, dataset_builder/ and metrics/ live at the repository's top level but install under the
multikernelbench namespace, so no bare ``backends`` or ``metrics`` package lands in site-packages. Subpackages
are found automatically so new modules need no edit here.

A wheel also carries ``multikernelbench-hfcache.pth`` at its root: one line that runs
``multikernelbench.hfcache.hook.install()`` at interpreter start; that puts the shipped dataset and metric
where ``load_dataset("multikernelbench")`` / ``evaluate.load("mkb_speedup")`` look when the Hub is out of
reach (see multikernelbench/hfcache/__init__.py). Editable installs do not get it (``mkb dataset cache``).
"""

import os

from setuptools import find_packages, setup
from setuptools.command.build_py import build_py

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


setup(packages=packages, package_dir=package_dir, cmdclass={"build_py": BuildPyWithPth})
