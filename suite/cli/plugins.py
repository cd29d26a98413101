"""``suite plugins``, ``suite techniques``, ``suite info``."""

from __future__ import annotations


from typing import TYPE_CHECKING, Any

import click

from suite.cli import main
from suite.cli.common import emit, format_option, warn_quarantined, strict_json
from suite.technique import CATEGORIES

if TYPE_CHECKING:  # pragma: no cover
    from suite.registry import PluginInfo
    from suite.technique import MetricMeaning, Param, Technique


@main.command("plugins")
@format_option("table", "json")
@click.pass_context
def plugins_cmd(ctx: click.Context, fmt: str) -> None:
    """Installed plugins, their versions, and quarantined ones with the reason."""
    from suite.cli.common import get_context

    reg = get_context().registry.load_all()  # every deferred hook and reference, so none hides a fault
    rows = [{"plugin": p.name, "distribution": p.distribution, "version": p.version, "status": p.status,
             "techniques": p.techniques, "load_s": round(p.import_seconds, 3), "reason": p.reason,
             "kit_opt_out": _opt_outs(reg, p)}
            for p in reg.plugins]
    emit(rows, fmt, ["plugin", "distribution", "version", "status", "techniques", "load_s", "reason", "kit_opt_out"],
         title="plugins (load_s: import and hook calls, the first plugin also pays for shared libraries)")
    for p in reg.plugins:
        if p.import_seconds > 1.0:
            click.echo(f"warning: plugin {p.name!r} took {p.import_seconds:.2f} s to load (import its heavy "
                       f"modules inside evaluate functions)", err=True)
    if ctx.obj.get("debug"):
        for p in reg.quarantined():
            click.echo(f"--- {p.name}\n{p.detail}", err=True)


def _opt_outs(reg: Any, plugin: Any) -> str:
    """The default conformance checks the plugin's techniques opt out of, with their reasons."""
    out = []
    for name in plugin.techniques:
        for check, why in reg.technique(name).kit_opt_out.items():
            out.append(f"{name}: {check} ({why})")
    return "; ".join(out)


@main.command("techniques")
@click.option("--category", type=click.Choice(list(CATEGORIES)), help="Only this category.")
@format_option("table", "json")
def techniques_cmd(category: str | None, fmt: str) -> None:
    """Installed techniques with their paper, variants and claims."""
    from suite.cli.common import get_context

    rows = []
    techs = get_context().techniques(category)
    warn_quarantined()  # after the listing: a lazily loaded plugin is quarantined while it loads
    for t in techs:
        rows.append({"name": t.name, "category": t.category, "title": t.title,
                     "paper": f"{t.paper.venue} {t.paper.year or ''}".strip(),
                     "variants": [v.name + ("*" if v.baseline else "") for v in t.variants] if fmt != "json"
                     else [v.name for v in t.variants],
                     "baselines": [v.name for v in t.baselines],
                     "fidelities": sorted(t.fidelities), "claims": len(t.claims)})
    emit(rows, fmt, ["name", "category", "title", "paper", "variants", "fidelities", "claims"],
         title="techniques (* = baseline variant)")


@main.command("info")
@click.argument("technique")
@format_option("text", "json", default="text")
def info_cmd(technique: str, fmt: str) -> None:
    """Details of one technique: paper, variants, parameters, claims, profiles used."""
    from suite.cli.common import get_context

    context = get_context()
    reg = context.registry
    t = reg.technique(technique)
    warn_quarantined()
    plug = reg.plugin_of(technique)
    reads, probe_problems, choices = _fields_read(t, context)
    recorded = _recorded_reads(t, context)
    for vf, r in recorded.items():  # what stored cases of this code read (their real scenarios)
        reads[vf] = reads.get(vf, set()) | r
    by_choice = _choice_reads(reads, choices)
    if fmt == "json":
        click.echo(strict_json(_info_data(t, plug, reads, recorded, probe_problems, by_choice), indent=2, default=str))
        return
    _print_info(t, plug)
    _print_reads(reads, probe_problems, by_choice)
    if t.docs:
        from suite.cli.common import console

        console().print(f"\ndocs: {t.docs}")


def _info_data(t: Technique, plug: PluginInfo, reads: dict[tuple[str, str], set[str]],
               recorded: dict[tuple[str, str], set[str]], probe_problems: list[str],
               by_choice: dict[str, set[str]]) -> dict[str, Any]:
    """``suite info --format json``: the technique's declaration and the profile fields it reads."""
    fields_union = sorted(set().union(*reads.values())) if reads else []
    return {
        "name": t.name, "title": t.title, "category": t.category, "version": t.version,
        "plugin": {"name": plug.name, "distribution": plug.distribution, "version": plug.version},
        "paper": {"citation": t.paper.cite(), "arxiv": t.paper.arxiv, "doi": t.paper.doi, "code": t.paper.code},
        "variants": [{"name": v.name, "baseline": v.baseline, "description": v.description} for v in t.variants],
        "fidelities": sorted(t.fidelities),
        "parameters": {k: {"type": p.type.__name__, "default": p.default, "unit": p.unit, "minimum": p.minimum,
                           "maximum": p.maximum, "choices": list(p.choices) if p.choices else None, "help": p.help}
                       for k, p in t.parameters.items()},
        "defaults": {"profile": t.default_profile, "workload": t.default_workload},
        "vocabulary": _vocabulary_data(t.vocabulary),
        "metrics": _metrics_data(t),
        "oracle_tolerance": t.oracle_tolerance, "kit_opt_out": dict(t.kit_opt_out),
        "claims": [{"id": c.id, "statement": c.statement, "source": c.source, "verified": c.verified,
                    "expect": c.expect.describe(),
                    "profiles": sorted({s.profile for s in c.specs().values() if s.profile})} for c in t.claims],
        "properties": [{"name": p.name, "description": p.description} for p in t.properties],
        "profile_fields_read": {"all": fields_union,
                                "by_variant": {f"{v}/{f}": sorted(r) for (v, f), r in sorted(reads.items())},
                                "recorded": sorted(set().union(*recorded.values())) if recorded else [],
                                "also_by_parameter": {k: sorted(r) for k, r in by_choice.items()},
                                "not_probed": probe_problems},
        "docs": t.docs,
    }


def _print_info(t: Technique, plug: PluginInfo) -> None:
    """``suite info``'s text: paper, plugin, variants, fidelities, parameters, claims, properties."""
    from rich.markup import escape

    from suite.cli.common import console

    c = console()
    c.print(f"[bold]{escape(t.name)}[/bold]  {escape(t.title)}  ({t.category}, v{t.version})")
    c.print(f"paper: {escape(t.paper.cite())}")
    if t.paper.code:
        c.print(f"code:  {escape(t.paper.code)}")
    c.print(f"plugin: {plug.name} from {plug.distribution} {plug.version}")
    c.print("\n[bold]variants[/bold] (* = baseline)")
    for v in t.variants:
        c.print(f"  {escape(v.name)}{'*' if v.baseline else ''}: {escape(v.description)}")
    c.print(f"\n[bold]fidelities[/bold]: {', '.join(sorted(t.fidelities))}")
    c.print(f"defaults: profile={t.default_profile}  workload={t.default_workload}")
    _print_vocabulary(t.vocabulary)
    _print_metrics(t)
    if t.parameters:
        c.print("\n[bold]parameters[/bold]")
        for k, p in t.parameters.items():
            c.print(f"  {k} ({p.type.__name__}{', ' + p.unit if p.unit else ''}; default {p.default!r}"
                    f"{_param_range(p)}): {escape(p.help)}")
    if t.claims:
        c.print("\n[bold]claims[/bold]")
        for cl in t.claims:
            tag = escape(f"[{cl.source}; {'verified' if cl.verified else 'unverified'}]")
            c.print(f"  {escape(cl.id)} {tag}: {escape(cl.statement)} (expect {escape(cl.expect.describe())})")
    if t.properties:
        c.print("\n[bold]properties[/bold]")
        for prop in t.properties:
            c.print(f"  {prop.name}: {escape(prop.description)}")


def _vocabulary_data(name: str | None) -> dict[str, Any] | None:
    """The shared metric vocabulary *name* (:data:`suite.technique.VOCABULARIES`) as ``suite info
    --format json`` gives it: ``{"name", "description", "metrics": {metric: {"unit", "direction",
    "meaning"}}}``; None when the technique declares none."""
    from suite.technique import VOCABULARIES

    if name is None:
        return None
    voc = VOCABULARIES[name]
    return {"name": voc.name, "description": voc.description,
            "metrics": {m: {"unit": u, "direction": d, "meaning": voc.meanings[m]} for m, (u, d) in voc.metrics.items()}}


def _print_vocabulary(name: str | None) -> None:
    """``suite info``'s vocabulary section: each shared metric with its unit, direction and meaning,
    the definition the technique's value follows on the category's head-to-head figures."""
    from rich.markup import escape

    from suite.cli.common import console

    data = _vocabulary_data(name)
    if data is None:
        return
    c = console()
    c.print(f"\n[bold]vocabulary[/bold] {escape(data['name'])} ({escape(data['description'])}): the metrics "
            "compared head to head with its category, each in this sense")
    for m, d in data["metrics"].items():
        c.print(f"  {escape(m)} ({escape(d['unit'])}, {_better(d['direction'])}): {escape(d['meaning'])}")


def _meaning_groups(t: Technique) -> dict[str, list[tuple[tuple[str, ...], str, MetricMeaning]]]:
    """Metric (or ``<i>`` pattern) -> one (fidelities, source, meaning) per distinct meaning *t*
    declares for it (:meth:`suite.technique.Technique.meaning_sources` at each of its fidelities),
    in the order of its first fidelity's; a metric one meaning covers everywhere has one entry."""
    per = {f: t.meaning_sources(f) for f in t.fidelities}
    out: dict[str, list[tuple[tuple[str, ...], str, MetricMeaning]]] = {}
    for m in dict.fromkeys(m for table in per.values() for m in table):
        groups: dict[MetricMeaning, tuple[list[str], str]] = {}
        for f, table in per.items():
            if m in table:
                groups.setdefault(table[m][1], ([], table[m][0]))[0].append(f)
        out[m] = [(tuple(fs), src, d) for d, (fs, src) in groups.items()]
    return out


def _metrics_data(t: Technique) -> dict[str, dict[str, Any]]:
    """Every metric whose meaning *t* declares as ``suite info --format json`` gives it:
    ``{metric: {"unit", "direction", "meaning", "from", "fidelities"}}``, ``from`` being
    ``"vocabulary NAME"``, ``"technique"`` (every fidelity), ``"technique, FIDELITY"`` or an include's
    reference, ``fidelities`` those it applies at; a metric meaning something else at another fidelity
    adds ``"by_fidelity": {fidelity: {"unit", "direction", "meaning", "from"}}``. Empty: none declared."""
    def entry(src: str, d: MetricMeaning) -> dict[str, Any]:
        return {"unit": d.unit, "direction": d.direction, "meaning": d.meaning, "from": src}

    out: dict[str, dict[str, Any]] = {}
    for m, groups in _meaning_groups(t).items():
        (fids, src, d), rest = groups[0], groups[1:]
        out[m] = {**entry(src, d), "fidelities": list(fids)}
        if rest:
            out[m]["by_fidelity"] = {f: entry(s, o) for fs, s, o in rest for f in fs}
    return out


def _print_metrics(t: Technique) -> None:
    """``suite info``'s metrics section: each metric of the technique's own (those outside its
    vocabulary, printed above) with its unit, direction and meaning, one line per meaning, tagged
    ``[FIDELITY, ...]`` where it holds at some fidelities only; "no meanings declared" when the
    technique declares none."""
    from rich.markup import escape

    from suite.cli.common import console

    c = console()
    groups = _meaning_groups(t)
    if not groups:
        c.print("\n[bold]metrics[/bold]: no meanings declared (the technique's results give each metric's "
                "unit and direction only)")
        return
    own = {m: g for m, g in groups.items() if any(not src.startswith("vocabulary ") for _, src, _ in g)}
    if not own:
        return
    c.print(f"\n[bold]metrics[/bold]{' of its own' if t.vocabulary else ''} (unit, which way is better: what it "
            "means; " + escape("[fidelity]") + ": at that fidelity only; <i>: any index; a metric not listed has no "
            "meaning declared)")
    for m, g in own.items():
        for fids, _, d in g:
            tag = "" if len(fids) == len(t.fidelities) else f" [{', '.join(fids)}]"
            c.print(f"  {escape(m)}{escape(tag)} ({escape(d.unit)}, {_better(d.direction)}): {escape(d.meaning)}")


def _better(direction: str) -> str:
    """``"lower is better"``, ``"higher is better"``, or ``"neither way better"`` for ``"none"``."""
    return "neither way better" if direction == "none" else f"{direction} is better"


def _param_range(p: Param) -> str:
    """``"; >= 1, <= 8"``, ``"; one of a/b"``, or ``""``: a parameter's bounds and choices."""
    rng = []
    if p.minimum is not None:
        rng.append(f">= {p.minimum}")
    if p.maximum is not None:
        rng.append(f"<= {p.maximum}")
    if p.choices:
        rng.append("one of " + "/".join(map(str, p.choices)))
    return "; " + ", ".join(rng) if rng else ""


def _choice_reads(reads: dict[tuple[str, str], set[str]], choices: dict[tuple[str, str, str], set[str]]
                  ) -> dict[str, set[str]]:
    """``"name=value (variant, fidelity)"`` -> the fields that parameter value reads and the
    variant's default scenario (and its stored cases) did not; values that add none left out."""
    out = {}
    for (pv, v, f), r in sorted(choices.items()):
        extra = r - reads.get((v, f), set())
        if extra:
            out[f"{pv} ({v}, {f})"] = extra
    return out


def _print_reads(reads: dict[tuple[str, str], set[str]], probe_problems: list[str],
                 by_choice: dict[str, set[str]]) -> None:
    """The profile fields each (variant, fidelity) reads: those every variant reads, then the rest,
    then those a parameter's other value reads besides."""
    from rich.markup import escape

    from suite.cli.common import console

    c = console()
    if reads:
        c.print("\n[bold]profile fields read[/bold] (default scenario of each variant, model/simulate, and "
                "every case of this code stored with its reads; a field not listed changed no result "
                "of those scenarios: another profile (more network levels) or parameter may read more)")
        common = set.intersection(*reads.values())
        c.print(f"  every variant: {escape(', '.join(sorted(common)) or '(none)')}")
        for (v, f), r in sorted(reads.items()):
            if r - common:
                c.print(f"  {escape(v)} ({f}) also: {escape(', '.join(sorted(r - common)))}")
        for what, r in by_choice.items():
            c.print(f"  with {escape(what)} also: {escape(', '.join(sorted(r)))}")
    for msg in probe_problems:
        c.print(f"  not probed: {escape(msg)}")


def _recorded_reads(t: Any, context: Any) -> dict[tuple[str, str], set[str]]:
    """(variant, fidelity) -> the profile fields the stored cases of *t*'s current code were
    recorded reading (runs record them as they evaluate: claims' real scenarios, not a probe);
    empty when there is no store."""
    from suite.errors import StoreError
    from suite.runner.fingerprint import code_fingerprint

    try:
        st = context.open_store(readonly=True)
    except StoreError:
        return {}
    try:
        reads: dict[tuple[str, str], set[str]] = st.fields_read(t.name, code_fingerprint(t))
        return reads
    except Exception:  # noqa: BLE001 - a store of an older schema: nothing recorded to add
        return {}
    finally:
        st.close()


def _fields_read(t: Any, context: Any) -> Any:
    """:func:`suite.runner.fields.probe_fields_read` and :func:`~suite.runner.fields.probe_choice_reads` of
    *t*, cached like `suite hardware list`'s
    index (:mod:`suite.cache`): keyed by every profile file, the core's and every
    plugin's source files, and the extension modules, so a probe is re-run after any change that
    could change what it reads."""
    from suite.cache import listing_key, load_listing, package_files, save_listing

    reg = context.registry
    # the core's files are stamped by listing_key itself
    code = package_files([p.module for p in reg.plugins] + t.implementation_modules)
    what = f"fields-read-{t.name}"
    key = listing_key(context.search_dirs(), reg.declared_extensions(), code=code, what=what)
    doc = load_listing(key, what=what, fields=("reads", "problems", "choices"))
    if doc is not None:
        return ({(v, f): set(r) for v, f, r in doc["reads"]}, list(doc["problems"]),
                {(pv, v, f): set(r) for pv, v, f, r in doc["choices"]})
    from suite.runner.fields import probe_choice_reads, probe_fields_read

    reads, problems = probe_fields_read(t, context)
    choices, _ = probe_choice_reads(t, context)  # a value the default profile refuses: nothing to add
    save_listing(key, {"what": what, "reads": [[v, f, sorted(r)] for (v, f), r in sorted(reads.items())],
                       "problems": problems, "choices": [[*k, sorted(r)] for k, r in sorted(choices.items())]},
                 what=what)
    return reads, problems, choices
