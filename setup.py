"""Package discovery with folder mapping (pyproject.toml holds all other metadata).

backends/ and dataset_builder/ live at the repository's top level but install under the multikernelbench
namespace, so no bare ``backends`` package lands in site-packages. Subpackages are found automatically so
new modules need no edit here.
"""

from setuptools import find_packages, setup

MAPPED = {"backends": "multikernelbench.backends", "dataset_builder": "multikernelbench.dataset_builder"}

packages = find_packages(include=["multikernelbench", "multikernelbench.*"])
package_dir = {"multikernelbench": "multikernelbench"}
for folder, name in MAPPED.items():
    packages.append(name)
    package_dir[name] = folder
    for sub in find_packages(where=folder):
        packages.append(f"{name}.{sub}")
        package_dir[f"{name}.{sub}"] = f"{folder}/{sub.replace('.', '/')}"

setup(packages=packages, package_dir=package_dir)
