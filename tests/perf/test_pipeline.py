"""Tests of suite.perf.pipeline against hand calculations and brute force."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from suite.perf import pipeline_1f1b_time
from suite.perf.pipeline import (
    enumerate_plans,
    partition_layers,
    pipeline_1f1b_schedule,
    pipeline_1f1b_unbalanced_time,
    split_microbatches,
    stage_sums,
)


def brute_force_partition(costs, p):
    """Best max-stage cost over every contiguous split (the oracle)."""
    L = len(costs)
    best = np.inf
    for cuts in itertools.combinations(range(1, L), p - 1):
        b = (0, *cuts, L)
        best = min(best, max(sum(costs[b[i]:b[i + 1]]) for i in range(p)))
    return best


def test_partition_hand_example():
    # [1,2,3 | 4,5 | 6]: stage sums 6, 9, 6; no split does better than 9 (hand-checked).
    assert partition_layers([1, 2, 3, 4, 5, 6], 3) == (0, 3, 5, 6)
    assert list(stage_sums([1, 2, 3, 4, 5, 6], (0, 3, 5, 6))) == [6, 9, 6]
    assert partition_layers([1, 1, 1, 1], 4) == (0, 1, 2, 3, 4)
    assert partition_layers([7.0], 1) == (0, 1)


@settings(max_examples=30)
@given(st.lists(st.integers(0, 20), min_size=1, max_size=9), st.data())
def test_partition_matches_brute_force(costs, data):
    p = data.draw(st.integers(1, len(costs)))
    b = partition_layers(costs, p)
    assert b[0] == 0 and b[-1] == len(costs) and len(b) == p + 1
    assert all(b[i] < b[i + 1] for i in range(p)), "every stage non-empty"
    assert max(stage_sums(costs, b)) == brute_force_partition(costs, p)



def _loop_dp(costs, p):
    """The recurrence of partition_layers' docstring one (j, i) at a time, ties to the earliest i."""
    S = [0.0]
    for c in costs:
        S.append(S[-1] + float(c))
    L = len(costs)
    F = [[math.inf] * (L + 1) for _ in range(p + 1)]
    arg = [[0] * (L + 1) for _ in range(p + 1)]
    F[1] = [math.inf] + S[1:]
    for k in range(2, p + 1):
        for j in range(k, L + 1):
            for i in range(k - 1, j):
                v = max(F[k - 1][i], S[j] - S[i])
                if v < F[k][j]:
                    F[k][j], arg[k][j] = v, i
    b, j = [L], L
    for k in range(p, 1, -1):
        j = arg[k][j]
        b.append(j)
    return tuple(reversed(b + [0]))


@pytest.mark.parametrize("L, p", [(300, 2), (300, 5), (520, 3), (40, 40)])
def test_partition_equals_the_loop_recurrence_with_ties(L, p):
    # more rows than one block of the vectorised DP (256), and integer costs full of ties
    costs = np.random.default_rng(L + p).integers(0, 4, L)
    assert partition_layers(costs, p) == _loop_dp(costs, p)

def test_partition_errors():
    with pytest.raises(ValueError, match="stages must be in"):
        partition_layers([1, 2], 3)
    with pytest.raises(ValueError, match=">= 0"):
        partition_layers([1, -2], 1)


def test_1f1b_balanced_equals_closed_form():
    # (m + p - 1)(t_f + t_b) = (8 + 4 - 1) * 3 = 33
    s = pipeline_1f1b_schedule([1.0] * 4, [2.0] * 4, 8)
    assert s.makespan == pytest.approx(33.0)
    assert s.makespan == pytest.approx(pipeline_1f1b_time(1.0, 2.0, 4, 8))
    assert pipeline_1f1b_unbalanced_time([3.0] * 4, 8) == pytest.approx(33.0)
    # bubble of each stage: (p-1)/(m+p-1) = 3/11
    assert np.allclose(s.bubble_fraction, 3 / 11)


def test_1f1b_hand_schedule_unbalanced():
    # p=2, m=2; stage 0: f=b=1, stage 1: f=b=2.
    # stage0: F0 0-1, F1 1-2; stage1: F0 1-3, B0 3-5, F1 5-7, B1 7-9; stage0: B0 5-6, B1 9-10.
    s = pipeline_1f1b_schedule([1.0, 2.0], [1.0, 2.0], 2)
    assert s.fwd_end.tolist() == [[1.0, 2.0], [3.0, 7.0]]
    assert s.bwd_end.tolist() == [[6.0, 10.0], [5.0, 9.0]]
    assert s.makespan == 10.0
    assert pipeline_1f1b_unbalanced_time([2.0, 4.0], 2) == 10.0


def test_1f1b_p2p_adds_to_critical_path():
    # p=2, m=1, f=b=1, hop 0.5: F0 1, (hop) F1 2.5, B1 3.5, (hop) B0 5.0
    assert pipeline_1f1b_schedule([1, 1], [1, 1], 1, p2p=0.5).makespan == pytest.approx(5.0)


@settings(max_examples=30)
@given(st.integers(1, 6), st.integers(1, 12), st.data())
def test_1f1b_bounds(p, m, data):
    f = np.array(data.draw(st.lists(st.floats(0.01, 3.0), min_size=p, max_size=p)))
    b = np.array(data.draw(st.lists(st.floats(0.01, 3.0), min_size=p, max_size=p)))
    s = pipeline_1f1b_schedule(f, b, m)
    c = f + b
    # the slowest stage does m micro-batches; micro-batch 0 crosses every stage both ways
    assert s.makespan >= max(m * c.max(), c.sum()) - 1e-9
    # no schedule is slower than running everything serially
    assert s.makespan <= m * c.sum() + 1e-9
    # per-micro-batch durations equal to the per-stage ones give the same schedule
    s2 = pipeline_1f1b_schedule(np.repeat(f[:, None], m, 1), np.repeat(b[:, None], m, 1), m)
    assert s2.makespan == pytest.approx(s.makespan)


def test_1f1b_extra_work_on_one_stage_is_slower():
    base = pipeline_1f1b_schedule([1, 1, 1], [2, 2, 2], 6).makespan
    f = np.ones((3, 6))
    f[1, 3] = 4.0  # one micro-batch costs more on stage 1
    assert pipeline_1f1b_schedule(f, np.full((3, 6), 2.0), 6).makespan > base


def test_split_and_enumerate():
    assert split_microbatches(10, 3) == [4, 3, 3]
    assert sum(split_microbatches(129, 7)) == 129
    plans = enumerate_plans(4, 3)
    # hand list: pp=1: dp 1..4; pp=2: dp 1,2; pp=3: dp 1
    assert plans == [(1, 1, 1), (2, 1, 1), (3, 1, 1), (4, 1, 1), (1, 2, 1), (2, 2, 1), (1, 3, 1)]
    assert all(d * p * t <= 6 for d, p, t in enumerate_plans(6, 10, tp_degrees=(1, 2)))
    with pytest.raises(ValueError):
        split_microbatches(3, 0)
