"""What ``suite hardware calibrate`` measured: one figure with its samples and method
(:class:`Measurement`), and a whole calibration (:class:`Calibration`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

__all__ = ["Measurement", "Calibration"]


@dataclass
class Measurement:
    """One measured figure: SI value (the median), its samples, and how it was obtained."""

    name: str
    value: float
    dimension: str
    method: str
    samples: list[float]
    params: dict[str, Any] = field(default_factory=dict)

    @property
    def repeats(self) -> int:
        return len(self.samples)

    @property
    def spread(self) -> float:
        """(max - min) / median of the samples (0 when a single sample)."""
        if len(self.samples) < 2 or self.value == 0:
            return 0.0
        return (max(self.samples) - min(self.samples)) / self.value

    def as_dict(self) -> dict[str, Any]:
        if "curve" in self.params:  # an efficiency curve: one median rate per size, no spread across sizes
            return {"method": self.method, "dimension": self.dimension,
                    "rates": [float(f"{s:.6g}") for s in self.samples], **self.params}
        return {"value": self.value, "dimension": self.dimension, "method": self.method, "repeats": self.repeats,
                "median": self.value, "min": min(self.samples), "max": max(self.samples),
                "spread": round(self.spread, 4), "samples": [float(f"{s:.6g}") for s in self.samples],
                **self.params}


@dataclass
class Calibration:
    """The result of :func:`calibrate`."""

    measurements: dict[str, Measurement]
    facts: dict[str, Any]
    started: str
    duration_s: float
    quick: bool

    def as_dict(self) -> dict[str, Any]:
        return {"started": self.started, "duration_s": round(self.duration_s, 2), "quick": self.quick,
                "facts": self.facts, "measurements": {k: m.as_dict() for k, m in self.measurements.items()}}

    def summary_lines(self) -> list[str]:
        from suite.hardware.units import format_quantity

        out = []
        for k, m in self.measurements.items():
            if "curve" in m.params:
                pts = ", ".join(f"n={n}: {fr:.2f}" for n, (_s, fr) in zip(m.params["sizes"], m.params["curve"]))
                out.append(f"{k}: fraction of peak {pts}")
                continue
            out.append(f"{k}: {format_quantity(m.value, m.dimension)} (median of {m.repeats}, "
                       f"spread {m.spread:.1%}; {m.method.split(';')[0]})")
        f = self.facts
        out.append(f"cores: {f['cores_usable']} usable, {f['cores_logical']} logical, "
                   f"{f.get('cores_physical') or '?'} physical; memory {format_quantity(f['memory_bytes'], 'bytes')};"
                   f" last-level cache {format_quantity(f['llc_bytes'], 'bytes') if f.get('llc_bytes') else '?'}")
        out.append(f"took {self.duration_s:.1f} s")
        return out
