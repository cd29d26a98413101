"""Computron's workloads: the OPT layer tables and the authors' 18 (+1) serving configurations.

* ``opt-1.3b`` and ``opt-13b``: decoder stacks built from the OPT paper's hyperparameters
  (Zhang et al., "OPT: Open Pre-trained Transformer Language Models", arXiv 2205.01068, Table 1:
  24 / 40 layers, hidden 2048 / 5120, 32 / 40 heads) and the released configurations (FFN
  4 x hidden, vocabulary 50,272, 2,050 learned positions -- 2,048 plus OPT's offset of 2 --,
  LayerNorm, biases everywhere, tied input/output embeddings). Parameter counts
  1,315,758,080 and 12,853,473,280 (pinned in the tests). fp16 (2 bytes per parameter).
* ``computron-c00`` ... ``computron-c17``: the configurations of the authors' serving experiment
  (``dlzou/computron`` ``experiments/sim.py`` @ 3dce33b, the ``configs`` list): 3 models with
  ``max_loaded = 2`` and per-model request rates (1,1,1), (10,1,1), (10,10,1); or 6 models with
  ``max_loaded = 4`` and rates (1 x 6), (10,10,1,1,1,1), (10,10,10,10,1,1); each at Gamma
  coefficient of variation 0.25, 1 and 4, in that order. Every model is OPT-1.3B, batch 32,
  30 s of arrivals, one output token (``max_tokens = 1``), the prompt "Berkeley is the number
  one public".
* ``computron-c18``: the 19th configuration of a later commit (2 models, rate 1 each, one loaded).
  Its CV is not recorded in the notes we have; we take 1 (assumption, said in the docs).

The authors seed each client with an unseeded ``random.randint``, so their traces cannot be
regenerated: our arrivals come from the scenario's seed.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

from suite.api import Workload

__all__ = ["ServingWorkload", "CONFIGS", "PROMPT_TOKENS", "opt_spec", "opt_table", "serving_workloads",
           "cached_opt_table", "serving_workload",
           "all_workloads", "OPT_PARAMS"]

_SIM_SRC = "dlzou/computron experiments/sim.py @ 3dce33be (configs list; opt-1.3b, batch 32, 30 s, max_tokens 1)"
_OPT_SRC = ("Zhang et al. 2022, OPT, arXiv 2205.01068 Table 1 (layers, hidden, heads); released configs "
            "(FFN 4h, vocab 50272, 2050 positions, tied embeddings, LayerNorm, biases)")

#: Published parameter counts of the released checkpoints (pinned by the tests).
OPT_PARAMS = {"opt-1.3b": 1_315_758_080, "opt-13b": 12_853_473_280}

#: Tokens of the authors' prompt "Berkeley is the number one public" under the GPT-2 BPE that OPT
#: uses, plus OPT's BOS token: 8. Counted by hand from the BPE merges (an assumption: the tokenizer
#: itself is not available offline); the service time is a few ms against ~100 ms swaps, so
#: the choice does not move the latencies that the claims compare.
PROMPT_TOKENS = 8

_HYPER = {"opt-1.3b": (24, 2048, 32), "opt-13b": (40, 5120, 40)}


def opt_spec(name: str):
    """The :class:`~suite.workloads.transformer.TransformerSpec` of ``opt-1.3b`` or ``opt-13b``."""
    from suite.api import TransformerSpec

    layers, hidden, heads = _HYPER[name]
    return TransformerSpec(name, layers, hidden, heads, vocab=50272, seq=2048, positions=2050, tied=True,
                           source=_OPT_SRC, published_params=OPT_PARAMS[name],
                           published_note="parameter count of the released checkpoint")


def opt_table(name: str, seq: int | None = None):
    """The layer table of an OPT model for sequences of *seq* tokens (default 2,048)."""
    from suite.api import transformer

    return transformer(opt_spec(name), seq=seq)


@functools.lru_cache(maxsize=8)
def cached_opt_table(name: str):
    """:func:`opt_table` at the default length, built once per process (frozen)."""
    from suite.api import freeze

    return freeze(opt_table(name), f"workload {name!r}")


@functools.lru_cache(maxsize=32)
def serving_workload(name: str) -> "ServingWorkload":
    """One of :func:`serving_workloads` by name."""
    for w in serving_workloads():
        if w.name == name:
            return w
    raise KeyError(name)


@dataclass(frozen=True)
class ServingWorkload(Workload):
    """A multi-model serving workload: M copies of one model, each with its own request stream.

    Attributes
    ----------
    model : str
        The layer-table workload every served model is a copy of (``opt-1.3b``).
    rates : tuple of float
        Mean request rate of each model (requests/s).
    cv : float
        Coefficient of variation of the Gamma inter-arrival times (1 = Poisson).
    max_loaded : int
        Models resident on the GPUs at once (the LRU controller's cap).
    duration : float
        Seconds of arrivals.
    batch : int
        Largest batch the engine forms (the experiment's ``--batch-size``).
    output_tokens : int
        Tokens generated per request (``max_tokens``).
    prompt_tokens : int
        Tokens of the prompt (:data:`PROMPT_TOKENS`).
    config : int
        Index in the authors' ``configs`` list.
    """

    model: str = "opt-1.3b"
    rates: tuple[float, ...] = ()
    cv: float = 1.0
    max_loaded: int = 1
    duration: float = 30.0
    batch: int = 32
    output_tokens: int = 1
    prompt_tokens: int = PROMPT_TOKENS
    config: int = 0

    @property
    def models(self) -> int:
        return len(self.rates)

    @property
    def skewed(self) -> bool:
        """Whether the rates differ between models (the configurations the abstract calls skewed)."""
        return len(set(self.rates)) > 1


def _configs() -> list[tuple[tuple[float, ...], float, int]]:
    out = []
    for rates, cap in (((1, 1, 1), 2), ((10, 1, 1), 2), ((10, 10, 1), 2),
                       ((1,) * 6, 4), ((10, 10, 1, 1, 1, 1), 4), ((10, 10, 10, 10, 1, 1), 4)):
        for cv in (0.25, 1.0, 4.0):
            out.append((tuple(float(r) for r in rates), cv, cap))
    out.append(((1.0, 1.0), 1.0, 1))  # c18: the later commit's 19th configuration
    return out


#: (rates, cv, max_loaded) of computron-c00 ... c18, in the authors' order.
CONFIGS: tuple[tuple[tuple[float, ...], float, int], ...] = tuple(_configs())


def serving_workloads() -> list[ServingWorkload]:
    """``computron-c00`` ... ``computron-c18``."""
    out = []
    for i, (rates, cv, cap) in enumerate(CONFIGS):
        later = i == 18
        desc = (f"{len(rates)} x opt-1.3b, rates {tuple(int(r) for r in rates)} req/s, CV {cv:g}, max_loaded {cap}, "
                "batch 32, 30 s, 1 output token" + (" (later commit; CV assumed 1)" if later else ""))
        out.append(ServingWorkload(
            name=f"computron-c{i:02d}", kind="serving",
            source=_SIM_SRC + (" and a later commit (19th configuration)" if later else f", configs[{i}]"),
            description=desc, rates=rates, cv=cv, max_loaded=cap, config=i))
    return out


def all_workloads() -> list[Workload]:
    """Every workload the plugin registers through ``suite_workloads``."""
    return [opt_table("opt-1.3b"), opt_table("opt-13b"), *serving_workloads()]
