"""Profile values in a report's ``set.FIELD`` columns: a case stored without an override shows the
figure its profile has at that field, so the column stays an axis."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, cast

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["fill_profile_values"]


def fill_profile_values(wide: pd.DataFrame, profile: Callable[[str], Any] | None = None) -> pd.DataFrame:
    """*wide* with each empty ``set.FIELD`` cell filled with the figure the case's profile has at
    FIELD, in the unit of the column's first value (other cells may write other units of its
    dimension). *profile* resolves a profile name (a report passes its context's
    :meth:`suite.context.Context.profile`, so a plugin's profiles are found too; given none, a new
    context's, with a DeprecationWarning: required from 0.3.0).

    A ``--set`` value equal to the profile's own figure (``10 Gbit/s`` on a 10 GbE profile) gives
    the case of the unmodified profile, which may have been stored before without an override
    (by ``suite reproduce``); its cell would be empty and the column no axis. Cells that cannot
    be filled (an unknown profile, a field that is no number) stay empty.
    """
    import math as _m

    from suite.results.load import numeric_overrides

    cols = [c for c in wide.columns if c.startswith("set.") and wide[c].isna().any() and wide[c].notna().any()]
    if not cols:
        return wide
    from suite.hardware.units import ureg

    if profile is None:
        from suite.context import Context

        profile = Context.given(None, "fill_profile_values()").profile
    wide = wide.copy()
    for c in cols:
        got = numeric_overrides(list(wide[c]))
        if got is None:
            continue
        unit = got[1]
        path = c[len("set."):].split(".")
        filled = {}
        for prof in {str(p) for p in wide.loc[wide[c].isna(), "profile"]}:
            try:
                cur = profile(prof).normalized()
                for part in path:
                    cur = cur[int(part)] if isinstance(cur, list) else cur[part]
                q = ureg.Quantity(float(cast(Any, cur)), _si_unit(ureg.Quantity(1.0, unit)))
                mag = q.to(unit).magnitude
                if _m.isfinite(mag):
                    filled[prof] = f"{mag:.6g} {unit}"
            except Exception:  # noqa: BLE001 - left empty: the column is then no axis, as before
                continue
        mask = wide[c].isna()
        wide.loc[mask, c] = [filled.get(str(p)) for p in wide.loc[mask, "profile"]]
    return wide


def _si_unit(q: Any) -> str:
    """The SI unit the profiles store a quantity like *q* in (bytes, B/s, s, FLOP/s, W, Hz)."""
    from suite.hardware.units import DIMENSIONS, ureg

    for si, _d, _e in DIMENSIONS.values():
        if q.dimensionality == ureg.Quantity(1.0, si).dimensionality:
            return si
    raise ValueError(f"no SI unit for {q.units}")
