"""The transpose-convolution layers a scenario covers (shared by the model and execute fidelities).

A scenario either names a workload whose layer table has layers of kind ``"deconv"`` (the
DCGAN / EB-GAN generators of the zoo: ``attrs`` kernel, stride, padding, output_padding), or
describes one layer with the technique's parameters (``in_channels``, ``out_channels``,
``height``, ``width``, ``kernel``, ``stride``, ``padding``, ``output_padding``). ``batch`` applies
to both.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from suite.api import Scenario, Skip, WorkloadError

from .geometry import output_size

__all__ = ["ConvT", "layers_of", "from_layer"]


@dataclass(frozen=True)
class ConvT:
    """One transpose-convolution layer instance (square kernel and stride).

    Attributes
    ----------
    name : str
    n, ci, co : int
        Batch, input channels, output channels.
    h, w : int
        Input height and width.
    k, s, p, op : int
        Kernel, stride, padding, output padding.
    """

    name: str
    n: int
    ci: int
    co: int
    h: int
    w: int
    k: int
    s: int
    p: int
    op: int = 0

    @property
    def ho(self) -> int:
        return output_size(self.h, self.k, self.s, self.p, self.op)

    @property
    def wo(self) -> int:
        return output_size(self.w, self.k, self.s, self.p, self.op)

    def as_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d.update(ho=self.ho, wo=self.wo)
        return d


def _square(layer_name: str, key: str, value: Any, default: int | None = None) -> int:
    if value is None:
        if default is None:
            raise WorkloadError(f"layer {layer_name!r}: attrs.{key} is missing (expected an int)")
        return default
    if isinstance(value, (list, tuple)):
        if len(set(value)) != 1:
            raise Skip(f"layer {layer_name!r}: non-square {key} {tuple(value)} is not supported")
        value = value[0]
    return int(value)


def from_layer(layer, batch: int) -> ConvT:
    """A :class:`ConvT` from a workload ``Layer`` of kind ``"deconv"``.

    Raises
    ------
    WorkloadError
        A missing kernel/stride attribute, or an output shape that disagrees with
        ``(H - 1) s - 2 p + k + op``.
    """
    a = layer.attrs or {}
    k = _square(layer.name, "kernel", a.get("kernel", a.get("kernel_size")))
    s = _square(layer.name, "stride", a.get("stride"), 1)
    p = _square(layer.name, "padding", a.get("padding"), 0)
    op = _square(layer.name, "output_padding", a.get("output_padding"), 0)
    ci, h, w = (int(v) for v in layer.input_shape[-3:])
    co = int(layer.output_shape[0])
    ct = ConvT(layer.name, batch, ci, co, h, w, k, s, p, op)
    if tuple(int(v) for v in layer.output_shape[-2:]) != (ct.ho, ct.wo):
        raise WorkloadError(f"layer {layer.name!r}: output_shape {tuple(layer.output_shape)} disagrees with "
                            f"(H-1)s-2p+k+op = {(co, ct.ho, ct.wo)}")
    return ct


def layers_of(scenario: Scenario) -> list[ConvT]:
    """The layers a scenario evaluates, in forward order.

    Raises
    ------
    Skip
        The workload has no layer of kind ``"deconv"``.
    """
    prm = scenario.params
    batch = int(prm["batch"])
    wl = scenario.workload
    if wl is not None:
        layers = getattr(wl, "layers", None)
        if layers is None:
            raise Skip(f"workload {wl.name!r} is not a layer table")
        out = [from_layer(l, batch) for l in layers if l.kind == "deconv"]
        if not out:
            raise Skip(f"workload {wl.name!r} has no layer of kind 'deconv'")
        return out
    ct = ConvT("layer", batch, int(prm["in_channels"]), int(prm["out_channels"]), int(prm["height"]),
               int(prm["width"]), int(prm["kernel"]), int(prm["stride"]), int(prm["padding"]),
               int(prm["output_padding"]))
    ct.ho  # validates (ParameterError on an impossible geometry)
    ct.wo
    return [ct]
