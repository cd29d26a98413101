"""Package discovery for dlsys-suite.

The core (`suite`) and every built-in plugin (`plugins/suite_*`) are found automatically. The
top-level `hardware_profiles/`, `experiments/` and `validation/` folders stay where a reader expects them in the
checkout, and are mapped into the wheel as `suite/data/hardware_profiles` and
`suite/data/experiments`, so a non-editable install finds them through importlib.resources
(`suite.resources.builtin_dir`).
"""

from setuptools import find_packages, setup

core = find_packages(where=".", include=["suite", "suite.*"])
plugins = find_packages(where="plugins", include=["suite_*", "suite_*.*"])
data = {
    "suite.data.hardware_profiles": "hardware_profiles",
    "suite.data.experiments": "experiments",
    "suite.data.validation": "validation",
}

setup(
    packages=core + plugins + list(data),
    package_dir={**{p: "plugins/" + p.replace(".", "/") for p in plugins}, **data},
    package_data={
        "suite.data.hardware_profiles": ["**/*.toml", "*.md"],
        "suite.data.experiments": ["*.toml"],
        "suite.data.validation": ["**/*.csv", "*.md"],
        "suite": ["py.typed"],  # PEP 561: a plugin's type checker reads suite.api's annotations
        "": ["*.toml", "*.md", "*.csv", "*.json"],
    },
)
