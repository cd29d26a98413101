"""dlsys-suite plugin allreduce-demo: registers the technique and its hardware profiles (nothing else here)."""

from importlib.resources import files

from suite.api import hookimpl, lazy_hook

# the technique, imported only when a command asks for it (technique.toml names it, so `suite
# techniques` lists it, and every other command starts, without importing this plugin's code)
suite_techniques = lazy_hook("suite_allreduce_demo.technique:TECHNIQUE", listed=True)


@hookimpl
def suite_hardware_profiles():
    # the folder is package data (pyproject.toml [tool.setuptools.package-data]): found in a wheel too
    return [files("suite_allreduce_demo") / "profiles"]
