"""The resolver builds each Case without the frozen dataclass's __init__ (suite.runner.case._new_case):
what it builds must be what ``Case(**values)`` builds, and a __post_init__ (which it would skip) must
not appear on Case unnoticed."""

from __future__ import annotations

from dataclasses import fields

from suite.context import Context
from suite.runner import expand_entry
from suite.runner.case import Case, _new_case


def test_new_case_builds_what_the_dataclass_builds():
    assert not hasattr(Case, "__post_init__")  # _new_case would skip it: build cases with Case(**values) then
    case = expand_entry({"technique": "poseidon", "params": {"nodes": [2, 8]}}, context=Context.build()).cases[1]
    values = {f.name: getattr(case, f.name) for f in fields(Case)}
    built, fast = Case(**values), _new_case(dict(values))
    assert vars(fast) == vars(built) and fast == built and fast.key == case.key and fast.scenario is case.scenario
