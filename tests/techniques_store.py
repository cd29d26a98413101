"""A store of one run of hand-written ok cases of several techniques, for the tests of what reads
a store (the wide form, the report)."""

from __future__ import annotations


def techniques_store(path, cases):
    """*path* as a store of one run holding *cases*: (key, technique, metrics as [name, value, unit,
    direction]), each on profile ``p``, no workload, no parameters; returns the run's id."""
    from suite.results import Store

    with Store(path) as st:
        r = st.begin_run("techniques", plugins={})
        for key, tech, metrics in cases:
            ident = {"key": key, "technique": tech, "technique_version": "1.0", "variant": "v", "fidelity": "model",
                     "profile": "p", "profile_hash": "h", "workload": None, "workload_hash": None,
                     "params": {}, "seed": 0, "overrides": {}}
            st.add_outcome(ident, {"status": "ok", "metrics": metrics, "duration": 0.1}, r)
        st.finish_run(r, "done", {"total": len(cases), "ok": len(cases)})
    return r
