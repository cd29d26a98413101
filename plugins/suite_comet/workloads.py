"""COMET's workload: the 1-trillion-parameter GPT of Megatron-LM, as a layer table.

COMET's own Transformer-1T hyperparameters are not found (only the abstracts of arXiv 2211.16648
were read), so ``megatron-1t`` stands in for it: the 1T row of Narayanan et al., "Efficient
Large-Scale Language Model Training on GPU Clusters Using Megatron-LM", SC'21, Table 1 and the
Megatron-LM README: 128 layers, hidden 25,600, 160 attention heads, vocabulary 51,200, sequence
2,048 (learned positions, GeLU MLP of width 4h, tied embeddings). Table 1 lists 1,008 billion
parameters (rounded); our count from these hyperparameters is pinned in the tests.
"""

from __future__ import annotations

import functools

from suite.api import TransformerSpec, transformer

__all__ = ["MEGATRON_1T", "megatron_1t", "all_workloads"]

_SRC = ("Narayanan et al. SC'21 (Megatron-LM) Table 1, 1T row: 128 layers, hidden 25600, 160 heads; "
        "Megatron-LM README: vocabulary 51,200, sequence 2048 (COMET's own hyperparameters not found: a stand-in)")

MEGATRON_1T = TransformerSpec(
    "megatron-1t", layers=128, hidden=25600, heads=160, vocab=51200, seq=2048, positions=2048,
    source=_SRC, published_params=1_008_000_000_000, published_rel=0.005,
    published_note="Table 1: 1008 billion parameters (rounded to the billion)")


@functools.lru_cache(maxsize=1)
def megatron_1t():
    """The ``megatron-1t`` :class:`~suite.workloads.transformer.TransformerTable` (built once)."""
    return transformer(MEGATRON_1T)


def all_workloads():
    """Every workload the plugin registers through ``suite_workloads``."""
    return [megatron_1t()]
