"""``device.*`` overrides on profiles with device groups (``[ext.mix]``; issue 42).

Before, ``--set device.peak_flops.fp32=...`` on vf-mix changed a top-level device the models
never read: distinct cases, identical results, no warning.
"""

from __future__ import annotations

import pytest

from suite.errors import ProfileError
from session_context import session_context


def test_several_groups_of_the_device_type_are_refused_naming_the_groups():
    with pytest.raises(ProfileError) as exc:
        session_context().profile("vf-mix").with_overrides({"device.peak_flops.fp32": "1 TFLOP/s"})
    msg = str(exc.value)
    assert "\n" not in msg
    assert msg.startswith("profile 'vf-mix': override 'device.peak_flops.fp32': expected a path into one device group")
    assert "groups.0 = nvidia-v100-sxm2-16gb x 4, groups.1 = nvidia-rtx-2080-ti x 4" in msg
    with pytest.raises(ProfileError, match="groups.1 = nvidia-titan-xp x 8"):
        session_context().profile("hetseq-v100-titanxp-4n").with_overrides({"device.memory": "32 GB"})


def test_a_group_path_changes_that_group_only():
    base = session_context().profile("vf-mix")
    p = base.with_overrides({"groups.1.device.peak_flops.fp32": "26.9 TFLOP/s"})
    assert p.groups[1].device.peak_flops["fp32"] == 26.9e12
    assert p.groups[0].device.peak_flops["fp32"] == base.groups[0].device.peak_flops["fp32"]


def test_the_one_group_of_the_device_type_follows_the_device():
    # hyscale-cpu-gpu: two EPYC sockets and four RTX A5000; the A5000 is the device and its group
    base = session_context().profile("hyscale-cpu-gpu")
    p = base.with_overrides({"device.peak_flops.fp32": "55.6 TFLOP/s"})
    assert p.device.peak_flops["fp32"] == 55.6e12 and p.groups[1].device.peak_flops["fp32"] == 55.6e12
    assert p.groups[0].device.peak_flops == base.groups[0].device.peak_flops  # the CPU group is untouched
    assert p.overrides == {"device.peak_flops.fp32": "55.6 TFLOP/s"}  # what the user wrote, once
