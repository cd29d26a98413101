"""The reproduction scoreboard for people: the terminal view, the Markdown page, table rows.

:func:`suite.runner.reproduce.reproduce` runs and judges the claims; this module only renders
what it judged (and :func:`stored_scoreboard` judges what a store already holds, for a report).

The terminal view (:func:`render_text`) is written for someone who has read nothing else: a
legend once (band, null, ratio, gain, the verdicts and the reason classes), then per claim its id
(never cut), the verdict and reason class, what the paper says, the comparison made (ours against
the band, in the claim's unit, with the ratio and every null) and one line of why; ``wide=True``
gives the full note and the assumptions the verdict rests on. The rules themselves are stated,
with examples, in ``docs/verdicts.md``.
"""

from __future__ import annotations

import math
import re
import textwrap
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from suite.runner.verdicts import (CONFIDENCE, MEASURED_LABEL, VERDICTS, Scoreboard, assumption_value, flip_text,
                                   format_value)

__all__ = ["stored_scoreboard", "ClaimInfo", "claim_info", "render_text", "legend", "explain", "why",
           "format_value", "format_nulls", "format_ours", "format_verdict", "counts_line", "render_markdown",
           "table_rows", "RULES_PAGE"]

#: The project's page of verdict rules (tolerances, nulls, margins, measured claims), with examples.
RULES_PAGE = "docs/verdicts.md"

#: verdict -> the mark at the start of its row (plain characters, so a log or a pipe keeps them)
_MARK = {"reproduced": "✓", "reproduced (no null)": "○", "not discriminating": "~", "not reproduced": "✗",
         "inconclusive": "?", "claim defect": "!", "error": "!"}


@dataclass(frozen=True)
class ClaimInfo:
    """What the renderer needs of a claim beyond its outcome: its acceptance and its value's unit.

    ``unit`` is the stored unit of the claim's metric in its case (``"MB"``, ``"s"``), ``"x"`` for a
    ratio judged as a gain, or ``""`` when the value has no unit (a count, an ordering).
    """

    expect: Any = None
    unit: str = ""
    metric: str | None = None
    data_unit: str | None = None  # the stored unit (``"1"`` included) for JSON; None when unknown


# --------------------------------------------------------------------------- values


class _Fmt:
    """Formats a claim's numbers in its unit, all in one display unit (paper, band, ours, nulls:
    ``1004 MiB`` beside ``0.8845 GiB`` would read as different scales)."""

    def __init__(self, unit: str = "", values: Sequence[Any] = ()):
        from suite.report.units import column_scale

        self.unit = unit or ""
        nums = [_num(v) for v in values]
        nums = [x for x in nums if x is not None]
        self.factor, self.shown = ((1.0, self.unit) if self.unit in ("", "1", "x")
                                   else column_scale(nums, self.unit))

    def __call__(self, v: Any) -> str:
        from suite.report.units import format_number

        if isinstance(v, Mapping):
            return ", ".join(f"{k}={self(x)}" for k, x in v.items())
        x = None if isinstance(v, bool) else _num(v)
        if x is None or not self.unit:
            return format_value(v)
        if not math.isfinite(x):
            return str(x)
        if self.unit == "x":
            return f"{x:.4g}x"
        text = format_number(x / self.factor)
        return text if self.shown in ("", "1") else f"{text} {self.shown}"

    def pair(self, lo: float, hi: float) -> str:
        """``28 to 42 MB``, ``12.6x to 18.4x``."""
        a, b = self(lo), self(hi)
        tail = f" {self.shown}" if self.unit not in ("", "1", "x") and self.shown not in ("", "1") else ""
        if tail and a.endswith(tail):
            a = a[: -len(tail)]
        return f"{a} to {b}"


def _num(v: Any) -> float | None:
    if isinstance(v, (bool, str)) or v is None:
        return None
    try:
        return float(v)
    except (TypeError, ValueError):
        return None


def _claim_fmt(o: Any, info: "ClaimInfo | None") -> _Fmt:
    """The formatter of one claim: its unit, scaled to suit the paper's number."""
    unit = info.unit if info else ""
    paper = getattr(getattr(info, "expect", None), "paper", None)
    return _Fmt(unit, [paper if _num(paper) is not None else o.ours])


def format_nulls(o: Any, unit: str = "", fmt: _Fmt | None = None) -> str:
    """The nulls of one outcome for a table cell: ``label = value (inside|outside)``; ``; ``-joined.
    A claim without nulls shows its written reason (``none: <reason>``)."""
    fmt = fmt or _Fmt(unit, [o.ours])
    if not o.nulls:
        return f"none: {o.null_reason}" if o.null_reason else "none declared"
    parts = []
    for n in o.nulls:
        if n.reason:
            state = n.reason
        elif n.straddles:
            state = "straddles"
        else:
            state = "inside" if n.inside else "outside"
        val = fmt(n.value) if n.value is not None else ""
        if n.interval:
            val += f" [{n.interval[0]:.4g}, {n.interval[1]:.4g}]"
        parts.append(f"{n.label} = {val} ({state})" if val else f"{n.label} ({state})")
    return "; ".join(parts)


def format_ours(o: Any, unit: str = "", fmt: _Fmt | None = None) -> str:
    """Our value (with its unit when known), with its bootstrap interval for a measured claim."""
    fmt = fmt or _Fmt(unit, [o.ours])
    s = fmt(o.ours) if o.ours is not None else ""
    if o.interval:
        s += f" [{o.interval[0]:.4g}, {o.interval[1]:.4g}]"
    return s


def format_verdict(o: Any) -> str:
    """``verdict[ [reason class]][: reason][ (label)]``, then each unsourced assumption the
    verdict depends on: ``† unsourced: NAME = VALUE, flips at X[ (to VERDICT)]`` for one that
    flips it (the dagger only there: the verdict rests on it), ``; unsourced: NAME = VALUE, no
    flip found`` for one no value swept flips."""
    rc = getattr(o, "reason_class", None)
    v: str = o.verdict + (f" [{rc}]" if rc else "") + (f": {o.reason}" if o.reason else "")
    v += f" ({o.label})" if o.label else ""
    for a in _assumptions(o):
        if not a.get("sourced"):
            v += (" †" if _flips(a) else ";") + (f" unsourced: {a.get('name')} = {assumption_value(a)}, "
                                                 f"{flip_text(a, o.verdict)}")
    return v


def counts_line(c: Mapping[str, int]) -> str:
    """``N claim(s): a reproduced, b not discriminating, ...`` for one counts dict (every verdict
    class present in *c*, in the order of :data:`suite.runner.verdicts.VERDICTS`)."""
    order = list(VERDICTS) + [k for k in c if k not in VERDICTS and k != "total"]
    return f"{c['total']} claim(s): " + ", ".join(f"{c[v]} {v}" for v in order if v in c)


# --------------------------------------------------------------------------- claim information


def claim_info(techniques: Sequence[Any], store: Any = None, board: Any = None) -> dict[tuple[str, str], ClaimInfo]:
    """(technique, claim id) -> :class:`ClaimInfo` for every claim of *techniques*.

    The unit is read from *store* (the claim's metric in its stored ``main`` case, through the
    store's API) when *store* and *board* are given; a claim judged as a :class:`~suite.technique.Gain`
    has unit ``"x"``; otherwise ``""``.
    """
    from suite.technique import Gain

    cases = {(o.technique, o.claim): (o.cases or {}).get("main") for o in (board.outcomes if board else ())}
    out: dict[tuple[str, str], ClaimInfo] = {}
    for t in techniques:
        for c in t.claims:
            declared = getattr(c, "unit", "") or None
            key = cases.get((t.name, c.id))
            stored = _stored_unit(store, key, c.metric) if c.metric and key and store is not None else None
            data = stored or declared
            unit = "x" if isinstance(c.expect, Gain) else ("" if data in (None, "1", "dimensionless") else data)
            out[(t.name, c.id)] = ClaimInfo(expect=c.expect, unit=unit, metric=c.metric, data_unit=data)
    return out


def _stored_unit(store: Any, key: str, metric: str) -> str | None:
    try:
        m = store.result(key).metrics.get(metric)
    except Exception:  # noqa: BLE001 - the claim's case failed or is absent: no unit to give
        return None
    return m.unit if m is not None else None


# --------------------------------------------------------------------------- explanations


def _band(expect: Any, fmt: _Fmt) -> tuple[str, str, float | None, float | None]:
    """(paper, band, low, high) of an acceptance: what the paper says, the band ours must land
    in (``""`` for an exact value or an ordering) and the band's ends (None when open)."""
    from suite.technique import Approx, AtLeast, AtMost, Between, Exact, Gain, Ordered

    if isinstance(expect, Gain):
        lo, hi = expect.band()
        return f"{expect.paper:g}x, gain {expect.paper - 1:.4g} ± {expect.rel:.0%}", _Fmt("x").pair(lo, hi), lo, hi
    if isinstance(expect, Approx):
        d = expect.rel * abs(expect.paper)
        lo, hi = expect.paper - d, expect.paper + d
        return f"{fmt(expect.paper)} ± {expect.rel:.0%}", fmt.pair(lo, hi), lo, hi
    if isinstance(expect, Between):
        return (f"between {fmt(expect.low)} and {fmt(expect.high)}", fmt.pair(expect.low, expect.high),
                expect.low, expect.high)
    if isinstance(expect, AtLeast):
        return f"at least {fmt(expect.paper)}", f"{fmt(expect.paper)} or more", expect.paper, None
    if isinstance(expect, AtMost):
        return f"at most {fmt(expect.paper)}", f"{fmt(expect.paper)} or less", None, expect.paper
    if isinstance(expect, Ordered):
        sym = " < " if expect.lower else " > "
        return (sym.join(expect.paper) + f" (each {'below' if expect.lower else 'above'} the next by more "
                f"than {expect.margin:.0%})"), "", None, None
    if isinstance(expect, Exact):
        return ("exactly " + (expect.describe() if isinstance(expect.paper, (list, tuple)) else fmt(expect.paper)),
                "", None, None)
    try:
        return str(expect.describe()), "", None, None
    except Exception:  # noqa: BLE001 - a third-party acceptance: its text is decoration
        return "", "", None, None


def _passes(expect: Any, ours: Any) -> bool:
    """Whether *ours* is inside *expect*'s band (an ordering: holds by the margin); False when it
    cannot be judged."""
    try:
        return bool(expect.check(ours))
    except (TypeError, ValueError, KeyError):
        return False


def explain(o: Any, info: ClaimInfo | None = None) -> str:
    """One sentence: what was compared with what, in the claim's unit. ``ours 26.14x, above the
    band 16.2x to 23.8x (paper 20x, gain 19 ± 20%); ratio 1.31``."""
    from suite.technique import Ordered

    info = info or ClaimInfo()
    if o.ours is None:
        return "no value of ours (" + (o.reason or "not computed") + f"); paper {o.paper}"
    fmt = _claim_fmt(o, info)
    ours = format_ours(o, fmt=fmt)
    ratio = f"; ratio {o.ratio:.3g}" if o.ratio is not None and math.isfinite(o.ratio) else ""
    e = info.expect
    if e is None:
        return f"ours {ours}; paper {o.paper}{ratio}"
    paper, band, lo, hi = _band(e, fmt)
    bad = not _passes(e, o.ours)  # from the values: a claim defect or an error may hold a failing value
    if isinstance(e, Ordered) and isinstance(o.ours, Mapping):
        try:
            got = sorted(e.paper, key=lambda k: float(o.ours[k]), reverse=not e.lower)
        except (KeyError, TypeError, ValueError):
            got = list(e.paper)
        sym = " < " if e.lower else " > "
        state = ("the order holds but not by the margin" if list(got) == list(e.paper) else
                 f"our order is {sym.join(got)}") if bad else "the paper's order, by the margin"
        return f"ours {ours}: {state}; paper {paper}"
    try:
        v = float(o.ours)
    except (TypeError, ValueError):
        v = None
    if v is None or not band:
        return f"ours {ours}, {'not' if bad else 'as'} the paper's: {paper}{ratio}"
    pos = "below" if lo is not None and v < lo else "above" if hi is not None and v > hi else "inside"
    return f"ours {ours}, {pos} the band {band} (paper {paper}){ratio}"


def _first_sentence(text: str) -> str:
    text = " ".join(text.split())
    m = re.search(r"(?<=[.;!?])\s+(?=[A-Z(])", text)
    return text[: m.start()] if m else text


def why(o: Any, full: bool = False) -> str:
    """Why the verdict, in one sentence (the whole note when *full*).

    A claim not reproduced: its reason class and its note (the technique author's explanation of
    the gap); not discriminating: which null lands inside the band; inconclusive and error: the
    judged reason; reproduced: the nulls it beat.
    """
    note = " ".join((o.note or "").split())
    rc = getattr(o, "reason_class", None)
    if o.verdict == "not reproduced":  # the declared reason first (the gap), else the note's first sentence
        head = f"{rc}: " if rc else ""
        if o.reason:
            text: str = head + o.reason + (f". Note: {note}" if full and note else "")
            return text
        body = note if full else _first_sentence(note)
        return head + (body or "no explanation written (the claim has no note)")
    if o.verdict == "not discriminating":
        return ((o.reason or "a null is inside the band") + ": the claim cannot tell the technique from that null"
                + (f". {note if full else _first_sentence(note)}" if note and full else ""))
    if o.verdict.startswith("reproduced"):
        beaten = [n.label for n in o.nulls if n.inside is False]
        # "reproduced (no null)": why no null counts (decide's reason), not the nulls it "beat"
        s: str = ("every null outside the band (" + ", ".join(beaten) + ")") if beaten and o.verdict == "reproduced" else (
            o.reason or o.null_reason or "no null declared")
        return s + (f". {note}" if full and note else "")
    last: str = (o.reason or o.verdict) + (f". {note}" if full and note else "")
    return last


def _assumptions(o: Any) -> list[Mapping[str, Any]]:
    a = getattr(o, "assumptions", None) or []
    return [x if isinstance(x, Mapping) else vars(x) for x in a]


def _flips(a: Mapping[str, Any]) -> bool:
    """Whether an assumption flips its claim's verdict at some value swept (``flip_at`` given)."""
    return a.get("flip_at") is not None


def _rests_on_unsourced(o: Any) -> bool:
    """Whether the verdict rests on an unsourced assumption: one no source gives that flips it (the †)."""
    return any(not a.get("sourced") and _flips(a) for a in _assumptions(o))


def _assumption_text(a: Mapping[str, Any], verdict: str | None = None) -> str:
    """``NAME = VALUE (sourced|NOT sourced: our assumption; the verdict flips at X (to V)|no flip found)``
    (:func:`~suite.runner.verdicts.flip_text`: a flip to *verdict*, the one the claim has, is said so)."""
    s = f"{a.get('name')} = {assumption_value(a)}"
    s += " (sourced" if a.get("sourced") else " (NOT sourced: our assumption"
    return s + f"; the verdict {flip_text(a, verdict)})" if _flips(a) else s + "; no flip found)"


# --------------------------------------------------------------------------- the terminal view


def legend(width: int = 100) -> str:
    """How to read the scoreboard, once, above it."""
    items = [
        ("paper", "the paper's number and the band ours must land in, fixed before ours was computed. "
                  "'35 MB ± 20%' accepts 28 to 42 MB."),
        ("gain", "an 'N-times faster' claim is judged on the gain over 1x: '4x; gain ± 20%' accepts a gain of "
                 "3 ± 0.6, so 3.4x to 4.6x, and never 1x (no gain)."),
        ("ours", "our value of the same quantity, in the same unit, from the claim's own case(s) on the paper's "
                 "setting (a cost model, or timings on this machine where marked 'measured')."),
        ("ratio", "ours / paper: 1 is the paper's number exactly, 0.5 half of it."),
        ("null", "what a trivial explanation predicts at the same setting: the baseline variant, no gain (1x), "
                 "ideal scaling. 'reproduced' needs ours inside the band AND every null outside it."),
        ("verdicts", "✓ reproduced (with a computed null that could have landed inside) · ○ reproduced (no "
                     "null): inside, but no null could have landed inside, not evidence, counted apart · "
                     "~ not discriminating (a null is inside the band too) · ✗ not reproduced "
                     f"(ours outside the band) · ? inconclusive (a timing whose {CONFIDENCE:.0%} interval straddles "
                     "the band's edge) · ! error or claim defect (the claim could not be judged)."),
        ("why", "for a claim not reproduced, its reason class: missing mechanism (the model lacks what makes the "
                "effect), setup unknown (the paper does not state the setting), baseline not modelled, source "
                "imprecise (a number read off a figure or rounded); then the note's first sentence."),
        ("†", "the verdict rests on an assumption no source gives: a value of it flips the verdict (--wide lists "
              "the assumptions, where each flips the verdict and to what, or 'no flip found')."),
    ]
    out = [f"How to read this (the rules, with examples: {RULES_PAGE}; --wide for every note in full)"]
    for k, text in items:
        out += textwrap.wrap(text, width=width, initial_indent=f"  {k:<9} ", subsequent_indent=" " * 12)
    return "\n".join(out)


def _cut(text: str, width: int) -> str:
    return text if len(text) <= width else text[: max(width - 1, 1)].rstrip() + "…"


def _lines(label: str, text: str, width: int, wide: bool, lines: int = 1) -> list[str]:
    """*text* after a ``label`` column: wrapped in full when *wide*, else at most *lines* lines
    (the last one cut with an ellipsis)."""
    head = f"    {label:<9} "
    if not text:
        return []
    out = textwrap.wrap(text, width=max(width, len(head) + 20), initial_indent=head,
                        subsequent_indent=" " * len(head))
    if wide or len(out) <= lines:
        return out
    last = out[lines - 1][: len(head)] + " ".join(x[len(head):] for x in out[lines - 1:])
    return out[: lines - 1] + [_cut(last, max(width, len(head) + 20))]


def render_claim(o: Any, info: ClaimInfo | None = None, *, wide: bool = False, width: int = 100) -> list[str]:
    """The lines of one claim: the header (mark, id never cut, verdict, reason class, †), then
    ``claim``, ``compared``, ``nulls`` and ``why`` lines (each one line unless *wide*)."""
    info = info or ClaimInfo()
    rc = getattr(o, "reason_class", None)
    head = (f"  {_MARK.get(o.verdict, '!')} {o.claim}  {o.verdict}" + (f" · {rc}" if rc else "")
            + (" †" if _rests_on_unsourced(o) else "") + (f" ({o.label})" if o.label else ""))
    out = [head]
    out += _lines("claim", f"{' '.join(o.statement.split())} ({o.source})", width, wide)
    out += _lines("compared", explain(o, info), width, wide)
    out += _lines("nulls", format_nulls(o, fmt=_claim_fmt(o, info)), width, wide)
    out += _lines("why", why(o, full=wide), width, wide, lines=2)
    if wide:
        for a in _assumptions(o):
            out += _lines("assumes", _assumption_text(a, o.verdict), width, wide)
    return out


def render_text(board: Any, infos: Mapping[tuple[str, str], ClaimInfo] | None = None, *, wide: bool = False,
                width: int = 100, show_legend: bool = True) -> str:
    """The scoreboard for a terminal: the legend, one block per claim by technique (verified
    claims first), the counts."""
    infos = infos or {}
    out = [legend(width), ""] if show_legend else []
    for tech in dict.fromkeys(o.technique for o in board.outcomes):
        for verified in (True, False):
            rows = [o for o in board.outcomes if o.technique == tech and o.verified == verified]
            if not rows:
                continue
            out.append(f"{tech}: {'verified' if verified else 'unverified'} claims "
                       f"({'read in the paper' if verified else 'from a secondary source'})")
            for o in rows:
                out += render_claim(o, infos.get((o.technique, o.claim)), wide=wide, width=width)
            out.append("")
    for label, v in (("verified", True), ("unverified", False), ("all", None)):
        out.append(f"{label}: {counts_line(board.counts(v))}")
    return "\n".join(out) + "\n"


# --------------------------------------------------------------------------- Markdown and tables


#: what ends a line in a Markdown reader or in ``str.splitlines`` (a CR LF pair is one break)
_LINE_BREAK = re.compile("\r\n|[\n\r\v\f\x1c\x1d\x1e\x85\u2028\u2029]")


def render_markdown(board: Any, title: str = "Reproductions", infos: Mapping[tuple[str, str], ClaimInfo] | None = None) -> str:
    """The scoreboard as a Markdown page (``suite reproduce --all --format markdown``)."""
    infos = infos or {}

    def esc(s: Any) -> str:
        # every character that ends a line (CommonMark takes a bare CR; str.splitlines the Unicode
        # separators too) becomes a space: a plugin's text cannot start a line of its own (a heading)
        return _LINE_BREAK.sub(" ", str(s)).replace("|", "\\|")

    techs = list(dict.fromkeys(o.technique for o in board.outcomes))
    cmd = "suite reproduce --all --format markdown" if len(techs) != 1 else f"suite reproduce {techs[0]} --format markdown"
    lines = [f"# {title}", "",
             f"Generated by `{cmd}`. Each claim's acceptance was fixed before our number was computed. "
             "Verdicts: *reproduced* (ours inside the band, every null prediction outside, and at least one "
             "computed null that could have landed inside), *reproduced (no null)* (ours inside, but no null could "
             "have landed inside: not evidence, counted apart), *not discriminating* (ours inside, but a null, the "
             "baseline at the same scenario or a trivial predictor, is inside too), *not reproduced* (ours outside; "
             "its [reason class] in brackets), *inconclusive* (a measured claim whose "
             f"{CONFIDENCE:.0%} bootstrap interval straddles the band's edge), *claim defect* (a pass or a fail was "
             "impossible before any run), *error*. † marks a verdict resting on an unsourced assumption, with the "
             "value at which it flips (and to what, where stated); an unsourced assumption no value swept flips is "
             "listed after a semicolon, *no flip found*. A claim our model does not "
             "reproduce stays *not reproduced* and the technique's page explains why. Claims "
             f"{MEASURED_LABEL} (execute fidelity) are timings of this machine, not of the paper's hardware; "
             f"model claims are deterministic. The rules, with examples: [verdicts](verdicts.md).", ""]
    head = "| | claims | " + " | ".join(VERDICTS) + " |"
    lines += [head, "|---|---|" + "---|" * len(VERDICTS)]
    for label, v in (("verified", True), ("unverified", False), ("**all**", None)):
        c = board.counts(v)
        lines.append(f"| {label} | {c['total']} | " + " | ".join(str(c.get(x, 0)) for x in VERDICTS) + " |")
    lines.append("")
    for tech in techs:
        lines += [f"## {tech}", ""]
        for verified in (True, False):
            rows = [o for o in board.outcomes if o.technique == tech and o.verified == verified]
            if not rows:
                continue
            lines += [f"### {'Verified' if verified else 'Unverified'} claims", "",
                      "| claim | statement | source | paper | ours | null(s) | ratio | verdict |",
                      "|---|---|---|---|---|---|---|---|"]
            for o in rows:
                unit = getattr(infos.get((o.technique, o.claim)), "unit", "")
                ratio = f"{o.ratio:.3f}" if o.ratio is not None else ""
                lines.append(f"| {esc(o.claim)} | {esc(o.statement)} | {esc(o.source)} | {esc(o.paper)} | "
                             f"{esc(format_ours(o, unit))} | {esc(format_nulls(o, unit))} | {ratio} | "
                             f"{esc(format_verdict(o))} |")
            lines.append("")
    return "\n".join(lines) + "\n"


def table_rows(board: Any, verified: bool, infos: Mapping[tuple[str, str], ClaimInfo] | None = None) -> list[dict[str, Any]]:
    """One dict per claim (technique, claim, statement, source, paper, ours, nulls, ratio, verdict,
    why) for a table of *verified* (or unverified) claims."""
    infos = infos or {}
    rows = []
    for o in board.outcomes:
        if o.verified != verified:
            continue
        unit = getattr(infos.get((o.technique, o.claim)), "unit", "")
        rows.append({"technique": o.technique, "claim": o.claim, "statement": o.statement, "source": o.source,
                     "paper": o.paper, "ours": format_ours(o, unit), "nulls": format_nulls(o, unit),
                     "ratio": f"{o.ratio:.3f}" if o.ratio is not None else "",
                     "verdict": format_verdict(o), "why": why(o)})
    return rows


# --------------------------------------------------------------------------- judged from a store


def _judge_stored(tech: Any, claim: Any, store: Any, resolver: Any, watch: Any) -> tuple[Any, str, bool]:
    """(outcome, note, judged) of *claim* on the cases *store* holds: None when none of its cases is
    stored; an error row (not judged) when its scenario does not resolve."""
    from suite.runner.judging import judge_unchanged, null_cases, resolve_claim
    from suite.runner.verdicts import ERROR, new_outcome

    o = new_outcome(tech, claim)
    cases = resolve_claim(tech, claim, resolver, o)
    if cases is None:  # the claim's scenario does not resolve: an error row
        o.verdict = ERROR
        return o, "", False
    status = store.statuses(c.key for c in cases.values())
    if not status:
        return None, "", False
    nc = null_cases(tech, claim, resolver)
    nkeys = [c.key for _n, ncases, _r in nc if ncases for c in ncases.values()]
    if nkeys:
        status.update(store.statuses(nkeys))
    watch.begin()
    note = judge_unchanged(claim, o, cases, status, store, nc)
    _say_artifacts_missing(o, cases, nc, store)
    return o, note, True


#: what an error row of the report says in place of the exception of a value derived from artifacts
#: that were not stored: ``suite reproduce`` computes such cases again
ARTIFACTS_MISSING = ("its cases are stored without the artifacts its value reads (--artifacts summary or none): "
                     "`suite reproduce` computes them")


def _say_artifacts_missing(o: Any, cases: Mapping[str, Any], nulls: Sequence[Any], store: Any) -> None:
    """Replace the reason of *o*'s value (or of a variant null's) that could not be derived, when
    some of its cases are stored without some artifacts (:meth:`suite.results.store.Store.summarized_keys`),
    by :data:`ARTIFACTS_MISSING`: the exception (``KeyError: 'layers'``) says nothing of the cause."""
    if o.reason.startswith("value could not be derived") and store.summarized_keys(c.key for c in cases.values()):
        o.reason = f"value not derived: {ARTIFACTS_MISSING}"
    for no, (_n, ncases, _why) in zip(o.nulls, nulls):
        keys = [c.key for c in (ncases or {}).values()] + [c.key for c in cases.values()]
        if no.reason.startswith("null value could not be derived") and store.summarized_keys(keys):
            no.reason = f"null value not derived: {ARTIFACTS_MISSING}"


def stored_scoreboard(techniques: Sequence[Any], store: Any, resolver: Any = None, *,
                      context: Any = None) -> tuple[Scoreboard, int]:
    """Judge the claims of *techniques* on the cases stored in *store* (nothing is run).

    Each claim's cases and its nulls' substituted cases resolve to their keys exactly as
    :func:`suite.runner.reproduce.reproduce` resolves them (:func:`suite.runner.judging.resolve_claim`
    with the same :class:`~suite.runner.case.Resolver`, so the same case keys); the stored results
    are judged by :func:`suite.runner.judging.judge` (the same verdict classes and nulls).

    Parameters
    ----------
    techniques : sequence of Technique
    store : suite.results.Store
    resolver : suite.runner.case.Resolver, optional
        Whose caches (and context) to use; default a new one of *context*.
    context : suite.context.Context, optional
        Where techniques' profiles and workloads come from, when no *resolver* is given (one of
        the two is required: without either, ``suite.context.Context.given`` decides: a
        ``DeprecationWarning`` in 0.2, an error from 0.3.0).

    Returns
    -------
    (Scoreboard, int)
        The :class:`suite.runner.verdicts.Scoreboard` of every claim with at least one stored
        case, and how many claims had no stored case at all (left out).
    """
    from suite.runner.judging import CoreWatch

    if resolver is None:
        from suite.context import Context
        from suite.runner.case import Resolver

        resolver = Resolver(context=Context.given(context, "stored_scoreboard()"))
    outcomes: list[Any] = []
    notes: list[str] = []
    not_run = 0
    watch = CoreWatch(techniques)
    for tech in techniques:
        judged = []
        for claim in tech.claims:
            o, note, was_judged = _judge_stored(tech, claim, store, resolver, watch)
            if o is None:
                not_run += 1
                continue
            outcomes.append(o)
            notes += [note] if note else []
            judged += [o] if was_judged else []
        watch.settle(tech, judged)
    return Scoreboard(outcomes, None, notes), not_run
