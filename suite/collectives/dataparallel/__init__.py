"""Simulated data-parallel workers on real arrays, with a simulated wall clock.

The substrate shared by the distributed-SGD techniques (CoCoD-SGD, PALSGD and their baselines
S-SGD, Local SGD, Pipe-SGD, DiLoCo): K workers, each with its own copy of a flat parameter
vector, its own data shard and its own random stream, a relative speed, and collectives that
really move the arrays through :func:`suite.collectives.ring_allreduce` with every message in a
:class:`suite.collectives.Ledger`. A variant is a loop written against this class; it advances
the simulated clock by the compute and all-reduce times of the cost model (:func:`clock_for`),
and the class records loss and accuracy against both the step and the simulated time.

Pieces
------
* :func:`load_problem` -- scikit-learn's digits (through the workload zoo when it has them),
  standardised, a seeded train/test split, and an IID or label-skewed (Dirichlet) split of the
  training set over the workers (:func:`suite.workloads.datasets.partition`).
* :class:`FlatModel` -- multinomial logistic regression (``hidden=0``) or a one-hidden-layer
  ReLU MLP on a flat parameter vector, with exact gradients (checked against finite differences
  in tests/test_dataparallel.py).
* :func:`proportional_batches` -- CoCoD-SGD's proportional sampling: batch sizes proportional to
  each worker's speed, so all finish a local step at the same time [Shen19, §3].
* :func:`allreduce_seconds` / :func:`compute_seconds` / :func:`clock_for` -- the per-step
  compute time from FLOPs and peak (roofline compute roof, one stated efficiency) and the
  all-reduce time over the profile's levels (:func:`suite.perf.collective_time`).
* :class:`Workers` -- the simulated workers.
* :func:`virtual_node_split` -- a global batch cut into V virtual nodes and handed out to the
  workers, so many virtual nodes per worker (VirtualFlow [Or22]).

Unequal batches, dummy batches, the global-count gradient and virtual nodes
--------------------------------------------------------------------------
Synchronous data parallelism over heterogeneous devices (HetSeq [Ding20], VirtualFlow [Or22])
needs three things the equal-batch loops above do not:

* **Unequal local batches, including 0.** ``Workers(batches=...)`` takes any non-negative
  ``b_i`` with ``sum(b) >= 1``. A worker with ``b_i = 0`` holds a *dummy batch*: it takes part
  in every collective (it sends and receives its share of the ring) but contributes no samples:
  :meth:`Workers.minibatch` gives it an empty index array, :meth:`Workers.gradient_sum` a zero
  vector and a count of 0, and its averaging weight ``b_i / sum(b)`` is 0.
* **The gradient of the union.** :meth:`Workers.global_gradient` is the step's gradient as the
  single process on the union of the local batches would compute it:
  ``g = (sum_i sum_{j in B_i} grad l_j) / (sum_i |B_i|)``, the sum of per-sample gradients over
  the GLOBAL sample count (HetSeq's normalisation by the all-reduced sample count, [Ding20]).
  Each worker all-reduces its *sum* of per-sample gradients with its sample count appended as
  one more element, so the step costs ONE real ring all-reduce of ``size + 1`` floats. The
  biased alternative, DDP's mean of per-rank means ``(1/K) sum_i mean_{j in B_i} grad l_j``
  (an empty rank counted as a zero gradient), is :meth:`Workers.mean_of_means`; the two agree
  when every ``b_i`` is equal. (The existing :meth:`Workers.allreduce_mean` with the default
  weights ``b_i / sum(b)`` of per-rank mean gradients equals the union gradient too, up to
  rounding, but cannot hold an empty rank's undefined mean.)
* **Virtual-node gradient accumulation.** Passing ``micro = v`` (one int, or one per worker)
  makes a worker process its batch as v sequential micro-batches (``numpy.array_split`` of its
  indices; a micro-batch may be empty), summing their per-sample gradient sums before the one
  all-reduce [Or22, §3]; or ``idx`` may hand a worker its micro-batches explicitly, as
  :func:`virtual_node_split` does. Accumulation changes the evaluation order only: the result
  equals the single pass up to rounding (about 1e-15 relative in float64).
  :attr:`Workers.micro_batches` counts the non-empty micro-batches processed,
  :attr:`Workers.samples` the samples.
* **Resizing.** :meth:`Workers.resize` changes the number of workers between steps (elastic
  training, [Or22]): the replicas must be identical (a synchronous step just ended); the new
  workers start from that model, the shards are re-split IID, the clock, ledger and counters
  carry on.

References
----------
.. [Shen19] S. Shen, L. Xu, J. Liu, X. Liang, Y. Cheng, "Faster Distributed Deep Net Training:
   Computation and Communication Decoupled Stochastic Gradient Descent", IJCAI 2019
   (arXiv 1906.12043), and the authors' supplementary material (weighted average, eq. 9).
.. [Patarasuk09] P. Patarasuk, X. Yuan, "Bandwidth optimal all-reduce algorithms for clusters of
   workstations", JPDC 69(2), 2009: ring all-reduce ``2(p-1) alpha + 2(p-1)/p m beta``.
.. [Williams09] S. Williams et al., "Roofline", CACM 52(4), 2009 (compute roof ``F/(eff peak)``).
.. [Ding20] Y. Ding, N. Botzer, T. Weninger, "HetSeq: Distributed GPU Training on Heterogeneous
   Infrastructure", arXiv 2009.14783, 2020 (gradients summed and divided by the all-reduced
   global sample count, so unequal local batches give the union's gradient).
.. [Or22] A. Or, H. Zhang, M. J. Freedman, "VirtualFlow: Decoupling Deep Learning Models from
   the Underlying Hardware", MLSys 2022 (virtual nodes processed sequentially on a device,
   gradients accumulated before one synchronisation).
"""

from __future__ import annotations

from suite.collectives.dataparallel.batches import proportional_batches, relative_speeds
from suite.collectives.dataparallel.cost import (Clock, ModelCase, allreduce_seconds, clock_for, compute_seconds,
                                                model_case)
from suite.collectives.dataparallel.flat_model import FlatModel
from suite.collectives.dataparallel.problem import Problem, load_problem, reshard, virtual_node_split
from suite.collectives.dataparallel.workers import Workers

__all__ = [
    "Problem",
    "load_problem",
    "FlatModel",
    "proportional_batches",
    "relative_speeds",
    "allreduce_seconds",
    "compute_seconds",
    "Clock",
    "clock_for",
    "Workers",
    "virtual_node_split",
    "reshard",
    "ModelCase",
    "model_case",
]
