"""Core metadata read without the e-mail parser (suite.distributions)."""

from __future__ import annotations

from suite.distributions import metadata_headers


class _Dist:
    def __init__(self, text: str) -> None:
        self.text = text

    def read_text(self, name: str) -> str | None:
        return self.text if name == "METADATA" else None


def test_a_folded_header_with_a_blank_continuation_line_does_not_end_the_headers():
    # a License header folded over several lines, one of them only a space (scipy's and matplotlib's
    # METADATA: the reader stopped there and found none of their 38 and 9 Requires-Dist lines)
    text = ("Metadata-Version: 2.1\nName: demo\nVersion: 1.0\nLicense: Copyright (c) Demo\n        \n"
            "        All rights reserved.\n\t\nRequires-Dist: numpy>=1.25\nRequires-Dist: scipy; extra == 'x'\n"
            "\nThe long description: Requires-Dist: not-a-header\n")
    found = metadata_headers(_Dist(text))
    assert found["Requires-Dist"] == ["numpy>=1.25", "scipy; extra == 'x'"]
    assert found["Name"] == ["demo"] and found["License"] == ["Copyright (c) Demo"]
