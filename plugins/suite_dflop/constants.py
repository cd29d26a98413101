"""DFLOP's constants that both the declaration and the cost model need: the claim's cluster. One
definition, imported by :mod:`suite_dflop.technique` (the claim's scenarios) and
:mod:`suite_dflop.model` (the nodes a case takes when ``nodes`` is unset), so the model does not
depend on the technique's claims. Imports nothing, so listing the technique stays cheap.
"""

from __future__ import annotations

__all__ = ["CLAIM_PROFILE", "CLAIM_NODES"]

#: The cluster of the claim. The paper's cluster was not found (verified_4 §6): we declare a
#: Selene-like DGX A100 SuperPOD with 8 nodes (64 A100-80GB), once for the technique.
CLAIM_PROFILE = "selene-dgx-a100"
CLAIM_NODES = 8
