"""Read alpha-beta figures off a hardware profile's network levels."""

from __future__ import annotations

from typing import TYPE_CHECKING

from suite.errors import ProfileError

if TYPE_CHECKING:  # pragma: no cover
    from suite.hardware import NetworkLevel, Profile

__all__ = ["alpha_beta", "allreduce_fit"]


def alpha_beta(level: "NetworkLevel") -> tuple[float, float]:
    """``(alpha, beta)`` of a network level: its latency (s) and 1 / bandwidth (s/B)."""
    if level.bandwidth <= 0:
        raise ProfileError(f"network level {level.name!r}: bandwidth must be > 0")
    return level.latency, 1.0 / level.bandwidth


def allreduce_fit(profile: "Profile", workers: int, level: int = -1) -> tuple[float, float] | None:
    """A published all-reduce fit ``T(m) = a + b m`` for exactly *workers*, if the profile has one.

    Returns ``(a, b)`` in (s, s/B), or None when the level lists no fit for that worker count.
    """
    if not profile.network:
        raise ProfileError(f"profile {profile.name!r}: has no [[network]] level")
    for fit in profile.network[level].fits:
        if fit.collective == "allreduce" and fit.workers == workers:
            return fit.alpha, fit.beta
    return None
