"""kernel-kmeans: communication-avoiding linear-algebraic kernel k-means (Bellavita et al., 2026;
Popcorn, PPoPP 2025). Registers the technique and the paper's datasets (n, d only)."""

from suite.api import lazy_hook


suite_techniques = lazy_hook("suite_kernel_kmeans.technique:TECHNIQUE", listed=True)
suite_workloads = lazy_hook("suite_kernel_kmeans.workloads:paper_datasets", call=True)
