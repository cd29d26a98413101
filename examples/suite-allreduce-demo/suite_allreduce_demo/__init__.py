"""dlsys-suite plugin allreduce-demo: registers the technique and its hardware profiles (nothing else here)."""

from importlib.resources import files

from suite.api import hookimpl


@hookimpl
def suite_techniques():
    from suite_allreduce_demo.technique import TECHNIQUE

    return [TECHNIQUE]


@hookimpl
def suite_hardware_profiles():
    # the folder is package data (pyproject.toml [tool.setuptools.package-data]): found in a wheel too
    return [files("suite_allreduce_demo") / "profiles"]
