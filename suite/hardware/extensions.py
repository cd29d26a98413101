"""Profile extension tables the core itself registers (shared by several techniques).

A plugin registers its own ``[ext.NAME]`` schemas through the ``suite_profile_extensions`` hook;
the tables here are shared by more than one technique family, so they live once in the core
(a plugin must not register the same name).

* ``[ext.fpga]``: the programmable-logic resources of an FPGA device (its DSP slices, block and
  ultra RAM, LUTs, the design clock). Source per figure in the profile's ``[profile.sources]``.
* ``[ext.mix]``: a heterogeneous node or cluster as groups of devices: each group names a device
  profile (resolved like ``node.device``) and how many of it there are.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from suite.hardware.units import BandwidthQ, BytesQ, FrequencyQ

__all__ = ["FpgaExt", "MixGroup", "MixExt", "CORE_EXTENSIONS"]

_STRICT = ConfigDict(extra="forbid", frozen=True)


class FpgaExt(BaseModel):
    """``[ext.fpga]``: programmable-logic resources of one FPGA (vendor data sheet)."""

    model_config = _STRICT
    dsp_slices: int = Field(ge=1)
    bram18: int | None = Field(default=None, ge=0)  # 18 Kb block RAMs
    uram: int | None = Field(default=None, ge=0)  # 288 Kb UltraRAM blocks
    luts: int | None = Field(default=None, ge=0)
    clock: FrequencyQ | None = None  # Hz, design (kernel) clock
    on_chip_memory: BytesQ | None = None  # B, BRAM + URAM capacity
    memory_bandwidth: BandwidthQ | None = None  # B/s, off-chip memory as the toolflow assumes it


class MixGroup(BaseModel):
    """One group of identical devices in a heterogeneous mix."""

    model_config = _STRICT
    device: str  # a device profile name, resolved like node.device
    count: int = Field(ge=1)


class MixExt(BaseModel):
    """``[ext.mix]``: a heterogeneous set of devices as ``groups = [{device = NAME, count = N}, ...]``."""

    model_config = _STRICT
    groups: tuple[MixGroup, ...] = Field(min_length=1)


#: the extension schemas the core registers itself
CORE_EXTENSIONS: dict[str, type[BaseModel]] = {"fpga": FpgaExt, "mix": MixExt}


def _names_agree() -> None:
    from suite.hardware.reserved import CORE_EXTENSION_NAMES  # light (no pydantic): what the registry reserves

    if set(CORE_EXTENSIONS) != CORE_EXTENSION_NAMES:
        raise RuntimeError(f"suite.hardware.CORE_EXTENSION_NAMES {sorted(CORE_EXTENSION_NAMES)} is out of date: "
                           f"expected {sorted(CORE_EXTENSIONS)}")


_names_agree()
