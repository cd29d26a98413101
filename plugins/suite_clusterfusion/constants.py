"""ClusterFusion's constants that the declaration needs at import time (the ``cluster_size``
choices): one definition, imported by :mod:`suite_clusterfusion.cluster` and
:mod:`suite_clusterfusion.technique`. Imports nothing, so listing the technique stays cheap.

References
----------
.. [Luo25] X. Luo et al., "ClusterFusion", NeurIPS 2025 (arXiv 2508.18850), Sec. 3.
"""

from __future__ import annotations

__all__ = ["CLUSTER_SIZES"]

#: Cluster sizes ClusterFusion supports: N = 2^k, k <= 4 [Luo25, Sec. 3].
CLUSTER_SIZES = (1, 2, 4, 8, 16)
