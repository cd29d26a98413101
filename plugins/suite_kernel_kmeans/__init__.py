"""kernel-kmeans: communication-avoiding linear-algebraic kernel k-means (Bellavita et al., 2026;
Popcorn, PPoPP 2025). Registers the technique and the paper's datasets (n, d only)."""

from suite.api import hookimpl


@hookimpl
def suite_techniques():
    from suite_kernel_kmeans.technique import TECHNIQUE

    return [TECHNIQUE]


@hookimpl
def suite_workloads():
    from suite_kernel_kmeans.workloads import paper_datasets

    return paper_datasets()
