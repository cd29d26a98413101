"""A declared flip is a value at which the verdict changes (docs/verdicts.md, Assumptions that decide
verdicts). A claim that declares a defect (``Claim(defect=...)``) is a claim defect whatever its
assumptions' values, so none of its assumptions can flip it: dhelix's hidden-83pct said "the verdict
flips at sigma 0.1295", but at sigma 0.13 (ours 66.37%, below the band) it is still a claim defect
(audit 14 #5)."""

from __future__ import annotations

from session_context import session_context


def test_no_assumption_of_a_declared_defect_claims_a_flip():
    flipping = [(t.name, c.id, a.name) for t in session_context().registry.techniques() for c in t.claims
                if c.defect for a in c.assumptions if a.flip_at is not None]
    assert flipping == [], "a declared claim defect flips at no value; say in the note where our number leaves the band"
