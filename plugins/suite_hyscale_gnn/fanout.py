"""The ``fanout`` parameter of HyScale-GNN: ``"25,10"`` -> ``(25, 10)``.

Its own module, importing no numpy, because the technique's parameter validation runs for every
case a command resolves (a fully cached ``suite reproduce`` included) and needs only this.
"""

from __future__ import annotations

from suite.api import ParameterError

__all__ = ["parse_fanout"]


def parse_fanout(value, layers: int = 2) -> tuple[int, ...]:
    """``"25,10"`` -> ``(25, 10)``: one positive integer per layer (a list or tuple of them is
    accepted too; ``;`` separates like ``,``).

    Raises
    ------
    ParameterError
        ``hyscale-gnn: parameter 'fanout': expected one positive integer per layer (2 layers), got '25'``.
    """
    bad = ParameterError(f"hyscale-gnn: parameter 'fanout': expected one positive integer per layer "
                         f"({layers} layers), got {value!r}")
    if isinstance(value, (list, tuple)):
        parts = [str(v) for v in value]
    else:
        parts = [p.strip() for p in str(value).replace(";", ",").split(",")]
    if len(parts) != layers:
        raise bad
    try:
        out = tuple(int(p) for p in parts)
    except ValueError:
        raise bad from None
    if any(f < 1 for f in out):
        raise bad
    return out
