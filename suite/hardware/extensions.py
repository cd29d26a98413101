"""Profile extension tables: the one pattern for their schemas, and the tables the core registers.

The pattern (one for every ``[ext.NAME]`` table, the core's and a plugin's alike):

* the schema is a subclass of :class:`ProfileExtension` (a pydantic model that rejects unknown
  fields and is frozen) named ``<Name>Ext``, whose fields carry units through the quantity types
  of :mod:`suite.hardware.units` (``BandwidthQ``, ``BytesQ``, ``FrequencyQ``, ``TimeQ``);
* a plugin keeps it in its module ``extension.py`` and registers it by reference from its
  ``suite_profile_extensions`` hook: ``{"NAME": "suite_x.extension:NameExt"}`` (so pydantic is
  imported when a profile is loaded, never when techniques are listed).

The tables here are shared by more than one technique family, so they live once in the core
(a plugin must not register the same name; :data:`suite.hardware.CORE_EXTENSION_NAMES` lists
them without importing pydantic, and a test keeps the two equal).

* ``[ext.fpga]``: the programmable-logic resources of an FPGA device (its DSP slices, block and
  ultra RAM, LUTs, the design clock). Source per figure in the profile's ``[profile.sources]``.
* ``[ext.mix]``: a heterogeneous node or cluster as groups of devices: each group names a device
  profile (resolved like ``node.device``) and how many of it there are.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from suite.hardware.units import BandwidthQ, BytesQ, FrequencyQ

__all__ = ["ProfileExtension", "FpgaExt", "MixGroup", "MixExt", "CORE_EXTENSIONS"]


class ProfileExtension(BaseModel):
    """Base class of every ``[ext.NAME]`` schema: unknown fields are an error, values are frozen.

    Example::

        class HopperExt(ProfileExtension):  # [ext.hopper]: thread-block clusters (H100 white paper)
            max_cluster_size: int = Field(ge=1)
            dsmem_bandwidth: BandwidthQ | None = None
    """

    model_config = ConfigDict(extra="forbid", frozen=True)


class FpgaExt(ProfileExtension):
    """``[ext.fpga]``: programmable-logic resources of one FPGA (vendor data sheet)."""

    dsp_slices: int = Field(ge=1)
    bram18: int | None = Field(default=None, ge=0)  # 18 Kb block RAMs
    uram: int | None = Field(default=None, ge=0)  # 288 Kb UltraRAM blocks
    luts: int | None = Field(default=None, ge=0)
    clock: FrequencyQ | None = None  # Hz, design (kernel) clock
    on_chip_memory: BytesQ | None = None  # B, BRAM + URAM capacity
    memory_bandwidth: BandwidthQ | None = None  # B/s, off-chip memory as the toolflow assumes it


class MixGroup(ProfileExtension):
    """One group of identical devices in a heterogeneous mix."""

    device: str  # a device profile name, resolved like node.device
    count: int = Field(ge=1)


class MixExt(ProfileExtension):
    """``[ext.mix]``: a heterogeneous set of devices as ``groups = [{device = NAME, count = N}, ...]``."""

    groups: tuple[MixGroup, ...] = Field(min_length=1)


#: the extension schemas the core registers itself
CORE_EXTENSIONS: dict[str, type[ProfileExtension]] = {"fpga": FpgaExt, "mix": MixExt}

