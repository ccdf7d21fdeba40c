"""The dependencies, computed where the package is built: Debian installs h5py as the distribution
`h5py._debian_h5py_serial` (or `h5py._debian_h5py_mpi`), so a plain "h5py" requirement is unmet
there and pip would go to PyPI. Where a distribution other than "h5py" already provides the h5py
package, the requirement names that distribution instead; everywhere else it is plain "h5py".
"""
import importlib.metadata

from setuptools import setup


def h5py_requirement():
    try:
        providers = importlib.metadata.packages_distributions().get("h5py", [])
    except AttributeError:  # Python < 3.10 has no packages_distributions
        return "h5py"
    return "h5py" if not providers or "h5py" in providers else providers[0]


setup(install_requires=["numpy", h5py_requirement(), "pandas"])
