"""A profile's content hash is part of every case key: a new optional field of the profile schema
must not move it for the profiles that do not set the field (else every stored case of every
profile would be recomputed). Profile.normalized drops such fields when absent; the None-valued
keys a network level hashes are the two it hashed before the NCCL fields existed."""

import warnings

from suite.hardware.schema import NetworkLevel

#: optional network-level fields hashed as None when absent since before 0.2 (dropping them now
#: would move every key instead)
LEGACY_NONE = {"dims", "leaf_size"}


def _shipped_profiles(ctx):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        out = []
        for name in ctx.profiles.names():
            try:
                out.append(ctx.profile(name))
            except Exception:  # noqa: BLE001 - a broken file is reported by its own tests
                continue
    return out


def test_absent_optional_network_fields_are_not_hashed(shared_context):
    optional = {k for k, f in NetworkLevel.model_fields.items() if f.default is None}
    assert {"path", "link", "reduction"} <= optional  # the NCCL fields added after 0.1
    seen = 0
    for prof in _shipped_profiles(shared_context):
        for i, level in enumerate(prof.normalized().get("network") or ()):
            seen += 1
            hashed_none = {k for k, v in level.items() if v is None and k in optional}
            assert hashed_none <= LEGACY_NONE, (
                f"{prof.name}: network.{i} hashes {sorted(hashed_none - LEGACY_NONE)} as None: drop the new "
                f"optional field when absent in Profile.normalized (suite/hardware/profile.py)")
    assert seen > 20  # the shipped clusters and nodes
