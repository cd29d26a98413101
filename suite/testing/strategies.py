"""Hypothesis strategies for plugin authors and core tests: valid hardware profiles of each kind,
perturbations of one field, layer tables, and scenarios of a technique.

Every generated profile is a real :class:`suite.hardware.Profile` that passes schema validation,
with figures inside physically plausible ranges (so properties are tested where they matter,
not on absurd hardware)::

    from hypothesis import given
    from suite.testing.strategies import profiles

    @given(profiles(kind="cluster"))
    def test_iteration_time_finite(profile): ...
"""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

from suite.hardware import Profile
from suite.technique import Scenario, Technique
from suite.workloads import Layer, LayerTable

__all__ = ["devices", "networks", "profiles", "perturb", "PERTURBABLE", "layers", "layer_tables", "scenarios"]

# field path -> (dimension, low factor, high factor) for perturbation
PERTURBABLE: dict[str, str] = {
    "device.memory": "bytes",
    "device.memory_bandwidth": "bandwidth",
    "device.peak_flops.fp32": "flop_rate",
    "network.-1.bandwidth": "bandwidth",
    "network.-1.latency": "time",
}


@st.composite
def devices(draw: st.DrawFn, type: str | None = None) -> dict[str, Any]:
    """A valid ``[device]`` table (SI floats): a GPU-like or CPU-like device."""
    dtype = type or draw(st.sampled_from(["gpu", "cpu"]))
    fp32 = draw(st.floats(0.5e12, 100e12)) if dtype != "cpu" else draw(st.floats(0.2e12, 5e12))
    dev = {
        "type": dtype,
        "name": f"gen-{dtype}",
        "memory": draw(st.floats(4 * 2**30, 192 * 2**30)),
        "memory_bandwidth": draw(st.floats(50e9, 8e12)),
        "peak_flops": {"fp32": fp32, "fp16": fp32 * draw(st.floats(1.0, 16.0))},
        "host_link": {"name": "PCIe", "bandwidth": draw(st.floats(4e9, 64e9)), "latency": 1e-6},
    }
    return dev


@st.composite
def networks(draw: st.DrawFn, levels: int | None = None, nodes: int = 2, devices_per_node: int = 1) -> list[dict[str, Any]]:
    """``[[network]]`` levels, innermost first: optional intra-node, then the inter-node fabric."""
    out = []
    if devices_per_node > 1:
        out.append({"name": "intra", "topology": "switch", "size": devices_per_node,
                    "bandwidth": draw(st.floats(16e9, 900e9)), "latency": draw(st.floats(0.5e-6, 5e-6))})
    out.append({"name": "fabric", "topology": draw(st.sampled_from(["switch", "fat-tree"])), "size": nodes,
                "bandwidth": draw(st.floats(0.1e9, 100e9)), "latency": draw(st.floats(1e-6, 100e-6))})
    return out


@st.composite
def profiles(draw: st.DrawFn, kind: str | None = None, max_nodes: int = 64) -> Profile:
    """A random VALID profile of *kind* (``device``, ``node`` or ``cluster``; any when None)."""
    kind = kind or draw(st.sampled_from(["device", "node", "cluster"]))
    dev = draw(devices(type="gpu" if kind != "device" else None))
    data: dict[str, Any] = {"name": f"generated-{kind}", "kind": kind, "source": "hypothesis", "device": dev}
    if kind in ("node", "cluster"):
        dpn = draw(st.integers(1, 8))
        data["node"] = {"device": dev["name"], "devices_per_node": dpn,
                        "host_memory": draw(st.floats(64 * 2**30, 2 * 2**40))}
        nodes = draw(st.integers(1, max_nodes)) if kind == "cluster" else 1
        if kind == "cluster":
            data["nodes"] = nodes
        data["network"] = draw(networks(nodes=nodes, devices_per_node=dpn)) if (kind == "cluster" or dpn > 1) else []
        data["reliability"] = {"device_mtbf": draw(st.floats(1e3 * 3600, 1e5 * 3600)),
                               "restart_time": draw(st.floats(10, 1800)), "repair_time": draw(st.floats(60, 7200))}
    return Profile.model_validate(data)


@st.composite
def perturb(draw: st.DrawFn, profile: Profile, fields: list[str] | None = None) -> tuple[str, float, Profile]:
    """Scale one numeric field of *profile* by a factor in [0.25, 4]; returns (path, factor, new)."""
    candidates = [f for f in (fields or list(PERTURBABLE)) if _get(profile, f) is not None]
    if not candidates:
        return ("", 1.0, profile)
    path = draw(st.sampled_from(candidates))
    factor = draw(st.floats(0.25, 4.0))
    return path, factor, scale(profile, path, factor)


def _get(profile: Profile, path: str) -> Any:
    cur: Any = profile
    for p in path.split("."):
        if cur is None:
            return None
        if isinstance(cur, (list, tuple)):
            try:
                cur = cur[int(p)]
            except (IndexError, ValueError):
                return None
        elif isinstance(cur, dict):
            cur = cur.get(p)
        else:
            cur = getattr(cur, p, None)
    return cur


def scale(profile: Profile, path: str, factor: float) -> Profile:
    """A copy of *profile* with the numeric field at *path* multiplied by *factor*."""
    value = _get(profile, path)
    if not isinstance(value, (int, float)):
        raise ValueError(f"profile field {path!r} is not numeric")
    return profile.with_overrides({path: float(value) * factor})


@st.composite
def layers(draw: st.DrawFn, index: int = 0, kind: str | None = None) -> Layer:
    """One conv or fc layer with consistent params and FLOPs (per sample, 2 FLOPs per MAC)."""
    kind = kind or draw(st.sampled_from(["conv", "fc"]))
    if kind == "fc":
        n_in, n_out = draw(st.integers(8, 8192)), draw(st.integers(8, 8192))
        macs = n_in * n_out
        return Layer(f"fc{index}", "fc", (n_in,), (n_out,), params=n_in * n_out + n_out, fwd_flops=2.0 * macs,
                     bwd_data_flops=2.0 * macs, bwd_weight_flops=2.0 * macs, activation_bytes=4.0 * n_out,
                     grad_shape=(n_out, n_in))
    c_in, c_out = draw(st.integers(3, 512)), draw(st.integers(8, 512))
    hw, k = draw(st.integers(7, 112)), draw(st.sampled_from([1, 3, 5]))
    macs = c_in * c_out * k * k * hw * hw
    return Layer(f"conv{index}", "conv", (c_in, hw, hw), (c_out, hw, hw), params=c_in * c_out * k * k + c_out,
                 fwd_flops=2.0 * macs, bwd_data_flops=2.0 * macs, bwd_weight_flops=2.0 * macs,
                 activation_bytes=4.0 * c_out * hw * hw, attrs={"kernel": k, "stride": 1, "padding": k // 2})


@st.composite
def layer_tables(draw: st.DrawFn, min_layers: int = 1, max_layers: int = 12) -> LayerTable:
    """A LayerTable of conv layers followed by fc layers (shapes not chained; figures consistent per layer)."""
    n = draw(st.integers(min_layers, max_layers))
    n_fc = draw(st.integers(0, n))
    ls = [draw(layers(i, "conv")) for i in range(n - n_fc)] + [draw(layers(i, "fc")) for i in range(n - n_fc, n)]
    return LayerTable(name="generated", kind="cnn", source="hypothesis", layers=tuple(ls),
                      input_shape=ls[0].input_shape)


@st.composite
def scenarios(draw: st.DrawFn, technique: Technique, fidelity: str = "model",
              profile_kind: str | None = None) -> Scenario:
    """A resolved Scenario of *technique*: one of its smoke specs, any variant, and (when the
    technique accepts the kind) a generated profile in place of the named one."""
    from dataclasses import replace

    from suite.testing.resolve import resolve_case  # one resolver for every example (profiles loaded once)

    specs = [s for s in technique.smoke if s.fidelity == fidelity] or list(technique.smoke)
    if not specs:
        raise ValueError(f"technique {technique.name!r} declares no smoke scenarios")
    spec = draw(st.sampled_from(specs))
    spec = replace(spec, variant=draw(st.sampled_from(technique.variant_names)))
    case = resolve_case(technique, spec)
    scen = case.scenario
    if scen is None:  # pragma: no cover - resolve_case resolves or raises
        raise ValueError(f"{technique.name}: {spec} did not resolve")
    if scen.profile is not None:
        kind = profile_kind or scen.profile.kind
        if kind in ("device", "node", "cluster") and kind in technique.profile_kinds:
            prof = draw(profiles(kind=kind, max_nodes=max(1, scen.profile.num_nodes)))
            scen = replace(scen, profile=prof)
    return scen
