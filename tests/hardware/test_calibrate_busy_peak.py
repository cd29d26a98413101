"""A GEMM "peak" below what a smaller product reached is a large product slowed by a busy machine.
`suite hardware calibrate --quick` measured fp32 n=64 at 67.5 GFLOP/s against a peak of 20.4 and
clipped the curve to 1.0 with no word (found by a newcomer): the peak is now the best rate seen, the
curve is relative to it, and the figure's spread shows the busy machine."""

from __future__ import annotations

import pytest

import suite.hardware.calibrate as cal
from suite.hardware.measurement import Measurement


def _fake(monkeypatch, peak_rate: float, best: list[float]) -> None:
    def gemm(dtype, repeats=5, **_kw):
        return Measurement("device.peak_flops.fp32", peak_rate, "flop_rate", "numpy.matmul 1024x1024", [peak_rate] * repeats,
                           {"n": 1024})

    def curve(dtype, sizes, peak, repeats=3, flop_per_sample=1e9):
        pts = [[2.0 * n**3, min(1.0, b / peak)] for n, b in zip(sizes, best)]
        return Measurement("device.efficiency.gemm_fp32", best[0], "flop_rate",
                           "numpy.matmul n x n float32; fraction of the best large-n rate", list(best),
                           {"curve": pts, "sizes": list(sizes), "best": list(best)})

    monkeypatch.setattr(cal, "measure_gemm", gemm)
    monkeypatch.setattr(cal, "measure_gemm_curve", curve)


def test_a_smaller_product_faster_than_the_peak_raises_the_peak(monkeypatch):
    _fake(monkeypatch, 20.4e9, [67.5e9, 30.0e9])
    peak, eff = cal._gemm_with_curve("float32", 5, {}, [64, 128], quick=True)
    assert peak.value == 67.5e9 and max(peak.samples) == 67.5e9
    assert "raised to 6.75e+10 FLOP/s" in peak.method and "busy" in peak.method
    assert peak.spread == pytest.approx((67.5 - 20.4) / 67.5)  # > MAX_SPREAD: calibration_warnings says so
    assert peak.spread > cal.MAX_SPREAD
    # each point relative to the raised peak: 67.5 / 67.5; n = 128's 30 is below n = 64's 67.5, so
    # it is raised to it (a product of order 128 is 8 of order 64); the peak's own size last
    assert eff.params["curve"] == [[2.0 * 64**3, 1.0], [2.0 * 128**3, 1.0], [2.0 * 1024**3, 1.0]]
    assert "best" not in eff.params
    assert eff.method == ("numpy.matmul n x n float32; fraction of the best rate of any size (a smaller product "
                          "beat the large one); 1 point(s) (n = 128) slower than a smaller product raised to its "
                          "rate (a product of order 2n is 8 products of order n, so it runs at least as fast: the "
                          "machine was busy)")


def test_a_curve_point_slower_than_a_smaller_product_is_raised_to_its_rate(monkeypatch):
    """A tryout's --quick calibration at load 6-7 wrote gemm_fp32 = [[65536, 0.4647], [524288, 1.0],
    [4194304, 0.001147], ...]: any model pricing a 4 MFLOP GEMM on it was ~900x slow."""
    _fake(monkeypatch, 100e9, [46.47e9, 100e9, 0.1147e9])
    peak, eff = cal._gemm_with_curve("float32", 5, {}, [32, 64, 128], quick=True)
    assert peak.value == 100e9 and "raised" not in peak.method
    assert eff.params["curve"] == [[2.0 * 32**3, 0.4647], [2.0 * 64**3, 1.0], [2.0 * 128**3, 1.0], [2.0 * 1024**3, 1.0]]
    assert "1 point(s) (n = 128) slower than a smaller product" in eff.method


def test_a_peak_within_5_percent_of_a_smaller_product_is_raised_without_calling_the_machine_busy(monkeypatch):
    _fake(monkeypatch, 100e9, [100.1e9, 80e9])
    peak, _eff = cal._gemm_with_curve("float32", 5, {}, [64, 128], quick=True)
    assert peak.value == 100.1e9 and "raised to 1.001e+11" in peak.method and "busy" not in peak.method


def test_a_peak_above_every_smaller_product_is_kept(monkeypatch):
    _fake(monkeypatch, 100e9, [40e9, 80e9])
    peak, eff = cal._gemm_with_curve("float32", 5, {}, [64, 128], quick=True)
    assert peak.value == 100e9 and peak.spread == 0.0 and "raised" not in peak.method
    assert eff.params["curve"] == [[2.0 * 64**3, 0.4], [2.0 * 128**3, 0.8], [2.0 * 1024**3, 1.0]]
