"""The paper's datasets as workloads described by shape only (no loader: the model needs n and d).

Sizes are Table II of Bellavita et al., arXiv 2601.17136v2 (read in full). The runs themselves use subsets: n = sqrt(G) x 96,000 points (weak scaling)
or n = 192,000 (strong scaling, single-GPU comparison), which claims pass as the ``n`` parameter.
The class counts are those of the libSVM copies (KDD Cup 2010 and HIGGS are binary, MNIST8m has
ten digits); they are not stated in the paper and only label the workload.
"""

from __future__ import annotations

from suite.api import Dataset

__all__ = ["PAPER_DATASETS", "paper_datasets"]

_SRC = "Bellavita et al., arXiv 2601.17136v2, Table II (libSVM datasets)"

PAPER_DATASETS = {
    # name: (n, d, classes, description)
    "kdd-sampled": (8_407_752, 10_000, 2,
                    "KDD Cup 2010 (libSVM), 10,000 features sampled at random 'to keep P at a manageable size' (§VI-A)"),
    "higgs": (11_000_000, 28, 2, "HIGGS (libSVM), physics"),
    "mnist8m": (8_100_000, 784, 10, "MNIST8m (libSVM), vision"),
}


def paper_datasets() -> list[Dataset]:
    """The three datasets of the paper's Table II as :class:`suite.workloads.Dataset` (n, d, classes;
    ``loader=None``: there is nothing to load, the execute fidelity skips them)."""
    return [Dataset(name=name, kind="dataset", source=_SRC, description=desc, loader=None, params={},
                    n=n, d=d, classes=c)
            for name, (n, d, c, desc) in PAPER_DATASETS.items()]
