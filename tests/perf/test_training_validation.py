"""The training model against the published runs of validation/training (documented bounds)."""

from __future__ import annotations

import math

import pytest

from suite.perf.training_validation import (NVSMI_RESERVE_BOUND, TIME_MAX_BOUND, TIME_MEAN_BOUND, load_rows,
                                           validate_training)


@pytest.fixture(scope="module")
def report(shared_context):
    return validate_training(shared_context)


def test_every_row_has_a_source_and_is_priced(report):
    assert len(report.rows) == len(load_rows()) >= 15
    for r in report.rows:
        assert r.url.startswith("http") and r.where, r.row
        assert math.isfinite(r.predicted_time) and r.predicted_time > 0, r.row
    assert report.summary()["refused"] == 0


def test_calibration_rows_are_marked_and_kept_out():
    cal = [r["row"] for _s, _l, r in load_rows() if r["calibration"]]
    assert sorted(cal) == ["1.7b", "1t"]  # the A100 gemm_bf16 curve's two points


def test_calibration_rows_stay_calibrated(report):
    """The A100 gemm_bf16 curve (0.258 at 1e9 FLOP, 0.703 at 1e11) was solved for zero error on the
    1.7B and 1T rows of Narayanan et al.'s Table 1 (137 and 163 TFLOP/s: 3.528 s and 102.63 s) under
    the collective model of then; the NCCL collective model that came after moved the 1T row (its TP
    8 / PP 64 / DP 6 communication) to +0.83 % (103.48 s). Re-solving the curve would move the
    scoreboard (DFLOP's 3.6x claim, 1.362x -> 1.364x), so the drift is documented and bounded: 1.7B
    within 0.5 %, 1T within 1 %."""
    cal = {r.row: r for r in report.rows if r.calibration}
    assert cal["1.7b"].measured_time == pytest.approx(3.528, abs=1e-3)
    assert cal["1t"].measured_time == pytest.approx(102.63, abs=0.01)
    assert abs(cal["1.7b"].time_error) < 0.005
    assert abs(cal["1t"].time_error) < 0.01


def test_time_error_within_documented_bounds(report):
    s = report.summary()
    assert s["rows"] == 13
    assert s["time_mean_abs"] <= TIME_MEAN_BOUND
    assert s["time_max_abs"] <= TIME_MAX_BOUND


def test_nvidia_smi_memory_is_above_the_model_by_at_most_the_sources_spread(report):
    """An nvidia-smi figure is what the allocator handed out plus the CUDA context plus the caching
    allocator's reserve: the model plus the context the source measured (1,573 MiB) must stay
    below it, and by no more than the source's own spread for one configuration measured twice
    (38 and 44 GB: 16 %)."""
    rows = [r for r in report.rows if r.memory_kind == "nvidia-smi"]
    assert len(rows) == 5
    for r in rows:
        assert r.allocator_reserve > 0, r.row
        assert -NVSMI_RESERVE_BOUND <= r.memory_error < 0, r.row


def test_bloom_row_is_the_published_log_line(report):
    """tr11-176B-ml README: iteration 85376 at GBS 2048 took 104.70 s (149.77 TFLOPs)."""
    (bloom,) = [r for r in report.rows if r.row == "bloom-176b"]
    assert bloom.measured_time == pytest.approx(104.70, abs=0.01)
