"""Read alpha-beta figures off a hardware profile's network levels."""

from __future__ import annotations

from typing import TYPE_CHECKING

from suite.errors import ProfileError

if TYPE_CHECKING:  # pragma: no cover
    from suite.hardware import NetworkLevel, Profile

__all__ = ["alpha_beta", "allreduce_fit", "ceil_log2", "floor_log2"]


def ceil_log2(n: int) -> int:
    """ceil(log2 n) for n >= 1 (0 for n <= 1): the rounds of a recursive-doubling or halving
    schedule over n ranks, which pads a non-power of two up."""
    return max(0, (n - 1).bit_length())


def floor_log2(n: int) -> int:
    """floor(log2 n) for n >= 1 (0 for n <= 1): the depth of a binary tree over n nodes, as the
    tree latency term of NCCL's tuning model (``ncclTopoTuneModel``) counts it."""
    return max(0, n.bit_length() - 1)


def alpha_beta(level: "NetworkLevel") -> tuple[float, float]:
    """``(alpha, beta)`` of a network level: its latency (s) and 1 / bandwidth (s/B)."""
    if level.bandwidth <= 0:
        raise ProfileError(f"network level {level.name!r}: bandwidth must be > 0")
    return level.latency, 1.0 / level.bandwidth


def allreduce_fit(profile: "Profile", workers: int, level: int = -1) -> tuple[float, float] | None:
    """A published all-reduce fit ``T(m) = a + b m`` for exactly *workers*, if the profile has one
    that still describes it.

    A fit was measured on the network as loaded, by *workers* ranks packed onto the profile's
    nodes (:func:`suite.perf.network.placement.group_of`): once an override
    (:meth:`suite.hardware.Profile.with_overrides`) changes a field of a level that group crosses,
    the fit no longer describes that traffic and None is returned (the caller prices the network
    model). An override of another level (one the group never crosses) keeps it, and so does an
    override of the level's ``fits`` themselves.

    Returns ``(a, b)`` in (s, s/B), or None when the level lists no such fit.

    Raises
    ------
    ProfileError
        The profile has no network level.
    """
    if not profile.network:
        raise ProfileError(f"profile {profile.name!r}: has no [[network]] level")
    for fit in profile.network[level].fits:
        if fit.collective == "allreduce" and fit.workers == workers:
            if profile.overrides and _stale(profile, workers, level):
                return None
            return fit.alpha, fit.beta
    return None


def _stale(profile: "Profile", workers: int, level: int) -> bool:
    """Whether an override of *profile* names a field of a network level that *workers* packed
    ranks cross (the ``fits`` of level *level* overridden: never stale)."""
    from suite.perf.network.placement import _touch_placement, dimensions, group_of

    touched, fits = profile.overridden_levels()
    if not touched or level % len(profile.network) in fits:
        return False
    dims = dimensions(profile, group_of(profile, workers))
    _touch_placement(profile, dims)  # the answer depends on the placement: recorded as read
    return bool(touched & {d.level for d in dims})
