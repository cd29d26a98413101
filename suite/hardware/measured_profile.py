"""The ``kind = "measured"`` profile written from a calibration (:func:`to_toml`, where it goes by
default: :func:`default_output`), and why a validation against such a profile may mean little
(:func:`calibration_warnings`: noisy, old or quick calibrations)."""

from __future__ import annotations

import datetime as _dt
import os
from pathlib import Path
from typing import Any

from suite.hardware.measurement import Calibration

__all__ = ["to_toml", "default_output", "calibration_warnings", "MAX_SPREAD", "MAX_AGE_DAYS"]


def default_output() -> Path:
    """Where ``suite hardware calibrate`` writes by default: the first ``$SUITE_PROFILES``
    folder, else the per-user folder (``$SUITE_CONFIG_DIR/profiles``, else under
    ``$XDG_CONFIG_HOME`` or ``~/.config``: :func:`suite.hardware.user_profile_dir`); file
    ``local.toml``. Both are folders the profile library searches."""
    env = os.environ.get("SUITE_PROFILES")
    if env:
        first = next((p for p in env.split(os.pathsep) if p), None)
        if first:
            return Path(first) / "local.toml"
    from suite.hardware import user_profile_dir

    return user_profile_dir() / "local.toml"


def _q(value: float, dimension: str) -> str:
    """A TOML string with unit that parses back to *value* (6 significant digits)."""
    from suite.hardware.units import format_quantity

    return format_quantity(value, dimension)


def _toml_value(v: Any) -> str:
    import json

    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (int, float)):
        return repr(float(v)) if isinstance(v, float) else str(v)
    if isinstance(v, (list, tuple)):
        return "[" + ", ".join(_toml_value(x) for x in v) + "]"
    if v is None:
        return '""'
    return json.dumps(str(v), ensure_ascii=False)


def _vendor(model: str) -> str:
    low = model.lower()
    for key, vendor in (("amd", "amd"), ("intel", "intel"), ("apple", "apple"), ("arm", "arm"), ("ampere", "ampere")):
        if key in low:
            return vendor
    return ""


def to_toml(cal: Calibration, name: str = "local") -> str:
    """Render *cal* as a ``kind = "measured"`` profile (every figure a string with a unit)."""
    lines = _profile_tables(cal, name)
    lines += [f"{_toml_value(k)} = {_toml_value(v)}" for k, v in _sources(cal).items()]
    lines += _measured_tables(cal)
    return "\n".join(lines) + "\n"


def _profile_tables(cal: Calibration, name: str) -> list[str]:
    """``[profile]``, ``[device]``, ``[node]`` and the loopback ``[[network]]`` level, up to the
    ``[sources]`` header."""
    m, f, when = cal.measurements, cal.facts, cal.started
    lines = [
        "# Written by `suite hardware calibrate`" + (" --quick" if cal.quick else "") + f" on {when}.",
        "# Re-run it to refresh; edit at will (it is a normal profile).",
        "[profile]",
        f"name = {_toml_value(name)}",
        'kind = "measured"',
        f"source = {_toml_value('suite hardware calibrate on ' + str(f.get('hostname')) + ', ' + when)}",
        "verified = true",
        f"description = {_toml_value('This machine as measured: ' + str(f.get('cpu_model')) + ', ' + str(f.get('cores_usable')) + ' usable cores, numpy ' + str(f.get('numpy')) + (' (quick mode: small sizes, noisier)' if cal.quick else '') + '. memory_bandwidth is the STREAM triad median; network level 0 is loopback TCP between two processes.')}",
        'tags = ["measured", "local"]',
        "",
        "[device]",
        'type = "cpu"',
        f"name = {_toml_value(f.get('cpu_model'))}",
        f"vendor = {_toml_value(_vendor(str(f.get('cpu_model', ''))))}",
        f"memory = {_toml_value(_q(f['memory_bytes'], 'bytes'))}",
        f"memory_bandwidth = {_toml_value(_q(m['stream.triad'].value, 'bandwidth'))}",
    ]
    if f.get("llc_bytes"):
        lines.append(f"on_chip_memory = {_toml_value(_q(f['llc_bytes'], 'bytes'))}")
    flops = ", ".join(f"{k.rsplit('.', 1)[1]} = {_toml_value(_q(v.value, 'flop_rate'))}"
                      for k, v in m.items() if k.startswith("device.peak_flops."))
    lines.append(f"peak_flops = {{ {flops} }}")
    curves = {k.rsplit(".", 1)[1]: v.params["curve"] for k, v in m.items() if k.startswith("device.efficiency.")}
    if curves:
        lines.append("efficiency = { " + ", ".join(f"{k} = {_toml_value(v)}" for k, v in curves.items()) + " }")
    return lines + [f"cores = {int(f['cores_usable'])}", "",
                    "[node]", f"device = {_toml_value(name)}", "devices_per_node = 1",
                    f"host_memory = {_toml_value(_q(f['memory_bytes'], 'bytes'))}", "",
                    "[[network]]", 'name = "loopback-tcp"', 'topology = "switch"', "size = 1",  # one node: the level's endpoints are its devices
                    f"bandwidth = {_toml_value(_q(m['network.0.bandwidth'].value, 'bandwidth'))}",
                    f"latency = {_toml_value(_q(m['network.0.latency'].value, 'time'))}", "",
                    "[sources]"]


def _sources(cal: Calibration) -> dict[str, str]:
    """``[sources]``: how each figure of the profile was obtained (read, or measured by what)."""
    m, f = cal.measurements, cal.facts
    src = {
        "device.memory": "os.sysconf(SC_PHYS_PAGES x SC_PAGE_SIZE) (read, not timed)",
        "device.memory_bandwidth": "measured: " + m["stream.triad"].method,
        "device.cores": "os.sched_getaffinity (cores usable by this process; read, not timed)",
        "node.host_memory": "os.sysconf (read, not timed)",
        "network.0.bandwidth": "measured: " + m["network.0.bandwidth"].method,
        "network.0.latency": "measured: " + m["network.0.latency"].method,
    }
    if f.get("llc_bytes"):
        src["device.on_chip_memory"] = "sysfs /sys/devices/system/cpu/cpu0/cache (largest level; read, not timed)"
    for k, v in m.items():
        if k.startswith(("device.peak_flops.", "device.efficiency.")):
            src[k] = "measured: " + v.method
    return src


def _measured_tables(cal: Calibration) -> list[str]:
    """``[measured]`` (when, how long, the host facts) and one ``[measured."NAME"]`` table per
    measurement (samples, spread, method)."""
    lines = ["", "[measured]", f"started = {_toml_value(cal.started)}", f"duration_s = {round(cal.duration_s, 2)}",
             f"quick = {_toml_value(cal.quick)}"]
    for k, v in cal.facts.items():
        if v is not None:
            lines.append(f"{k} = {_toml_value(v)}")
    aliases = {"stream.triad": ["device.memory_bandwidth"]}
    for k, meas in cal.measurements.items():
        d = meas.as_dict()
        lines += ["", f"[measured.{_toml_value(k)}]"]
        if k in aliases:
            d["used_for"] = aliases[k]
        lines += [f"{kk} = {_toml_value(vv)}" for kk, vv in d.items()]
    return lines


#: a calibrated figure whose repeats spread more than this, (max - min) / value, is too noisy for
#: a validation error to mean much; a calibration older than MAX_AGE_DAYS may describe another machine state
MAX_SPREAD = 0.25
MAX_AGE_DAYS = 30


def calibration_warnings(profile: Any, now: "_dt.datetime | None" = None) -> list[str]:
    """Why a validation against the measured *profile* may mean little: figures whose repeats
    spread more than :data:`MAX_SPREAD`, a calibration older than :data:`MAX_AGE_DAYS` days or
    made with ``--quick``. Empty for a profile that is not ``kind = "measured"``."""
    if getattr(profile, "kind", None) != "measured":
        return []
    meas = dict(getattr(profile, "measured", None) or {})
    name = getattr(profile, "name", "?")
    out = []
    noisy = sorted((k, float(v["spread"])) for k, v in meas.items()
                   if isinstance(v, dict) and isinstance(v.get("spread"), (int, float)) and v["spread"] > MAX_SPREAD)
    if noisy:
        out.append(f"profile {name!r}: calibrated figure(s) spread over {MAX_SPREAD:.0%} between repeats ("
                   + ", ".join(f"{k} {sp:.0%}" for k, sp in noisy) + "): the machine was busy; errors against it "
                   "measure the load as much as the model (re-run `suite hardware calibrate` on an idle machine)")
    started = meas.get("started")
    if started:
        try:
            when = _dt.datetime.fromisoformat(str(started))
            age = ((now or _dt.datetime.now(_dt.timezone.utc)) - when).total_seconds() / 86400.0
            if age > MAX_AGE_DAYS:
                out.append(f"profile {name!r}: calibrated {age:.0f} days ago ({started}); re-run `suite hardware "
                           f"calibrate` if the machine or its software changed")
        except (TypeError, ValueError):
            pass
    if meas.get("quick") is True:
        out.append(f"profile {name!r}: a --quick calibration (fewer, smaller repeats); a full one is steadier")
    return out
