"""The test process's one :class:`suite.context.Context` of the installed plugins and the shipped
profiles, for test modules whose helpers (plain functions, module constants) read profiles,
workloads or techniques but do not test plugin loading. Building a context loads every plugin and
checks each for tampering (~0.2 s CPU in a session with the suite's dependencies loaded); one per
module that only reads it was that cost again and again. A test that changes what a context reads
(SUITE_PROFILES, a substituted registry, profile files) builds its own."""

from __future__ import annotations

import functools


@functools.cache
def session_context():
    from suite.context import Context

    return Context.build()
