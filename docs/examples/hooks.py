"""The optional hooks (docs/plugin-authors.md, "Hooks"): workloads a plugin adds."""

from __future__ import annotations

from suite.api import Dataset, hookimpl


@hookimpl
def suite_workloads():
    return [Dataset(name="higgs-paper", kind="dataset", source="Baldi et al. 2014", n=11_000_000, d=28, classes=2)]


def demo() -> None:
    (higgs,) = suite_workloads()
    assert (higgs.name, higgs.n, higgs.d) == ("higgs-paper", 11_000_000, 28)


if __name__ == "__main__":
    demo()
