"""Reproduce paper claims: run every scenario a claim needs, compute our value, give a verdict.

A verdict is information, never forced: ``reproduced`` when the claim's acceptance (fixed before
our number was seen) holds, ``not reproduced`` when it does not, ``error`` when a case failed or
the claim's ``derive`` raised (with the one-line reason). One claim's error never stops the others.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from suite.errors import SuiteError
from suite.results.store import Store
from suite.runner.case import Case, Resolver
from suite.runner.engine import RunSummary, run_cases
from suite.runner.executors import ExecOptions
from suite.technique import Claim, Technique

__all__ = ["ClaimOutcome", "Scoreboard", "reproduce", "REPRODUCED", "NOT_REPRODUCED", "ERROR"]

REPRODUCED, NOT_REPRODUCED, ERROR = "reproduced", "not reproduced", "error"


@dataclass
class ClaimOutcome:
    """One row of the scoreboard."""

    technique: str
    claim: str
    statement: str
    source: str
    verified: bool
    paper: str  # expect.describe()
    ours: Any = None
    ratio: float | None = None
    verdict: str = ERROR
    reason: str = ""
    note: str = ""
    cases: dict[str, str] = field(default_factory=dict)  # label -> case key

    def as_dict(self) -> dict[str, Any]:
        return {"technique": self.technique, "claim": self.claim, "statement": self.statement, "source": self.source,
                "verified": self.verified, "paper": self.paper, "ours": _jsonable(self.ours), "ratio": self.ratio,
                "verdict": self.verdict, "reason": self.reason, "note": self.note, "cases": self.cases}


def _jsonable(v: Any) -> Any:
    if isinstance(v, tuple):
        return list(v)
    try:
        import numpy as np

        if isinstance(v, np.generic):
            return v.item()
    except ImportError:  # pragma: no cover
        pass
    return v


def format_value(v: Any) -> str:
    """Our value for a table: numbers with 4 significant digits, orderings as ``a > b``."""
    if v is None:
        return ""
    if isinstance(v, bool):
        return str(v)
    if isinstance(v, (int,)):
        return str(v)
    if isinstance(v, float):
        return f"{v:.4g}" if math.isfinite(v) else str(v)
    if isinstance(v, (list, tuple)):
        if v and all(isinstance(x, str) for x in v):
            return "(" + ", ".join(v) + ")"
        return "[" + ", ".join(format_value(x) for x in v) + "]"
    try:
        return f"{float(v):.4g}"
    except (TypeError, ValueError):
        return str(v)


@dataclass
class Scoreboard:
    """Every claim outcome, and the run that computed their cases."""

    outcomes: list[ClaimOutcome]
    run: RunSummary | None = None

    def counts(self, verified: bool | None = None) -> dict[str, int]:
        rows = [o for o in self.outcomes if verified is None or o.verified == verified]
        c = {REPRODUCED: 0, NOT_REPRODUCED: 0, ERROR: 0}
        for o in rows:
            c[o.verdict] += 1
        c["total"] = len(rows)
        return c

    def as_dict(self) -> dict[str, Any]:
        return {"claims": [o.as_dict() for o in self.outcomes],
                "counts": {"all": self.counts(), "verified": self.counts(True), "unverified": self.counts(False)},
                "run": self.run.as_dict() if self.run else None}


def _one_line(exc: BaseException) -> str:
    msg = str(exc).strip().splitlines()
    return msg[0] if msg and isinstance(exc, SuiteError) else (f"{type(exc).__name__}: {msg[0]}" if msg else type(exc).__name__)


def reproduce(techniques: Sequence[Technique], store: Store, *, executor: str = "local",
              options: ExecOptions | None = None, verified_only: bool = False, rerun: bool = False,
              progress: Any = None, command: str | None = None, registry: Any = None,
              resolver: Resolver | None = None) -> Scoreboard:
    """Run the claims of *techniques* through the runner (stored and cached) and judge them.

    Parameters
    ----------
    techniques : sequence of Technique
    store : Store
    verified_only : bool
        Only claims whose number was read in the paper (``verified=True``).
    executor, options, rerun, progress, command, registry
        As :func:`suite.runner.engine.run_cases`.

    Returns
    -------
    Scoreboard
        One :class:`ClaimOutcome` per claim, in technique then declaration order.
    """
    resolver = resolver or Resolver()
    pending: list[tuple[Technique, Claim, ClaimOutcome, dict[str, Case]]] = []
    outcomes: list[ClaimOutcome] = []
    all_cases: list[Case] = []
    for tech in techniques:
        for claim in tech.claims:
            if verified_only and not claim.verified:
                continue
            o = ClaimOutcome(technique=tech.name, claim=claim.id, statement=claim.statement, source=claim.source,
                             verified=claim.verified, paper=_safe(claim.expect.describe), note=claim.note)
            outcomes.append(o)
            try:
                cases = {label: resolver.resolve(tech, spec) for label, spec in claim.specs().items()}
            except Exception as exc:  # noqa: BLE001 - a claim that does not resolve is an error row
                o.reason = f"scenario does not resolve: {_one_line(exc)}"
                continue
            o.cases = {label: c.key for label, c in cases.items()}
            all_cases.extend(cases.values())
            pending.append((tech, claim, o, cases))
    summary = None
    if all_cases:
        summary = run_cases(all_cases, store, executor=executor, options=options, rerun=rerun, progress=progress,
                            command=command, registry=registry)
        if summary.interrupted:
            raise KeyboardInterrupt
    status = store.statuses({c.key for _t, _c, _o, cases in pending for c in cases.values()})
    for _tech, claim, o, cases in pending:
        judge(claim, o, cases, status, store)
    return Scoreboard(outcomes, summary)


def judge(claim, o, cases, status, store) -> None:
    """Fill outcome *o* of *claim* from stored cases: the reason when a case is not ok or the value
    cannot be derived, else our value, the ratio and the verdict. ``status`` maps case key ->
    (status, error); ``cases`` maps the claim's labels -> resolved Case."""
    bad = [(label, status.get(c.key, ("missing", "not computed"))) for label, c in cases.items()
           if status.get(c.key, ("missing",))[0] != "ok"]
    if bad:
        label, (st, err) = bad[0]
        o.reason = f"case {label!r} {st}: {err or ''}".rstrip(": ")
        return
    try:
        ours = claim.value({label: store.result(c.key) for label, c in cases.items()})
    except Exception as exc:  # noqa: BLE001
        o.reason = f"value could not be derived: {_one_line(exc)}"
        return
    o.ours = ours
    try:
        ok = bool(claim.expect.check(ours))
    except Exception as exc:  # noqa: BLE001
        o.reason = f"acceptance check failed: {_one_line(exc)}"
        return
    try:
        o.ratio = claim.expect.ratio(ours)
    except Exception:  # noqa: BLE001 - a ratio is decoration
        o.ratio = None
    o.verdict = REPRODUCED if ok else NOT_REPRODUCED


def _safe(f) -> str:
    try:
        return str(f())
    except Exception as exc:  # noqa: BLE001
        return f"<{type(exc).__name__}>"


# --------------------------------------------------------------------------- rendering


def render_markdown(board: Scoreboard, title: str = "Reproductions") -> str:
    """The scoreboard as a Markdown page (``suite reproduce --all --format markdown``)."""
    def esc(s: Any) -> str:
        return str(s).replace("|", "\\|").replace("\n", " ")

    techs = list(dict.fromkeys(o.technique for o in board.outcomes))
    cmd = "suite reproduce --all --format markdown" if len(techs) != 1 else f"suite reproduce {techs[0]} --format markdown"
    lines = [f"# {title}", "",
             f"Generated by `{cmd}`. Each claim's acceptance was fixed before our "
             "number was computed; a claim our model does not reproduce stays *not reproduced* and the technique's "
             "page explains why. Claims reproduced by measurement on this machine (execute fidelity) vary between "
             "runs and machines; model claims are deterministic.", ""]
    c = board.counts()
    cv, cu = board.counts(True), board.counts(False)
    lines += ["| | claims | reproduced | not reproduced | error |", "|---|---|---|---|---|",
              f"| verified | {cv['total']} | {cv[REPRODUCED]} | {cv[NOT_REPRODUCED]} | {cv[ERROR]} |",
              f"| unverified | {cu['total']} | {cu[REPRODUCED]} | {cu[NOT_REPRODUCED]} | {cu[ERROR]} |",
              f"| **all** | {c['total']} | {c[REPRODUCED]} | {c[NOT_REPRODUCED]} | {c[ERROR]} |", ""]
    for tech in dict.fromkeys(o.technique for o in board.outcomes):
        lines += [f"## {tech}", ""]
        for verified in (True, False):
            rows = [o for o in board.outcomes if o.technique == tech and o.verified == verified]
            if not rows:
                continue
            lines += [f"### {'Verified' if verified else 'Unverified'} claims", "",
                      "| claim | statement | source | paper | ours | ratio | verdict |",
                      "|---|---|---|---|---|---|---|"]
            for o in rows:
                verdict = o.verdict + (f": {o.reason}" if o.reason else "")
                ratio = f"{o.ratio:.3f}" if o.ratio is not None else ""
                lines.append(f"| {esc(o.claim)} | {esc(o.statement)} | {esc(o.source)} | {esc(o.paper)} | "
                             f"{esc(format_value(o.ours))} | {ratio} | {esc(verdict)} |")
            lines.append("")
    return "\n".join(lines) + "\n"


def table_rows(board: Scoreboard, verified: bool) -> list[dict[str, Any]]:
    return [{"technique": o.technique, "claim": o.claim, "statement": o.statement, "source": o.source,
             "paper": o.paper, "ours": format_value(o.ours),
             "ratio": f"{o.ratio:.3f}" if o.ratio is not None else "",
             "verdict": o.verdict + (f": {o.reason}" if o.reason else "")}
            for o in board.outcomes if o.verified == verified]
