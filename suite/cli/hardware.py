"""``suite hardware list|show|validate|diff|calibrate``: the hardware-profile library."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

import click

from suite.cli import main
from suite.cli.common import SuiteGroup, emit, format_option, strict_json

if TYPE_CHECKING:  # pragma: no cover
    from suite.hardware.profile import Profile


@main.group("hardware", cls=SuiteGroup)
def hardware() -> None:
    """Hardware profiles: list, show, validate, diff, and calibrate this machine.

    \b
    Profiles are TOML files with a unit on every figure (docs/profiles.md). They are found in the
    shipped library, in plugin folders, in ~/.config/dlsys-suite/profiles (calibrated profiles),
    in $SUITE_PROFILES and in --profiles DIR.
    """


F = TypeVar("F", bound=Callable[..., Any])

def _profiles_option(f: F) -> F:
    return click.option("--profiles", "profile_dirs", multiple=True, type=click.Path(file_okay=True),
                        help="Extra profile folder or file (repeatable).")(f)


def _row(prof: Any) -> dict[str, Any]:
    from suite.hardware.units import format_quantity

    dev = prof.device
    row = {"name": prof.name, "kind": prof.kind, "vendor": prof.vendor or (dev.vendor if dev else ""),
           "device": (dev.name if dev else ""), "devices": prof.num_devices if prof.kind != "device" else 1,
           "memory": format_quantity(dev.memory, "bytes") if dev else "",
           "mem_bw": format_quantity(dev.memory_bandwidth, "bandwidth") if dev else "",
           "fp32": format_quantity(dev.peak_flops["fp32"], "flop_rate") if dev and "fp32" in dev.peak_flops else "",
           "fastest": "", "network": "", "verified": prof.verified, "sources": len(prof.sources)}
    if dev and dev.peak_flops:
        k = max(dev.peak_flops, key=lambda d: dev.peak_flops[d])
        row["fastest"] = f"{format_quantity(dev.peak_flops[k], 'flop_rate')} {k}"
    if prof.network:
        lvl = prof.network[-1]
        row["network"] = f"{lvl.name} {format_quantity(lvl.bandwidth, 'bandwidth')}"
    return row


@hardware.command("list")
@click.option("--kind", type=click.Choice(["device", "node", "cluster", "measured"]), help="Only this kind.")
@click.option("--vendor", help="Only this vendor (nvidia, amd, google, intel, cerebras, hpe, aws, ...).")
@_profiles_option
@format_option("table", "json", "csv")
def list_cmd(kind: str | None, vendor: str | None, profile_dirs: tuple[str, ...], fmt: str) -> None:
    """Profiles in the library, with headline figures (one row each)."""
    from suite.cli.common import get_context
    from suite.cache import listing_key, load_listing, save_listing

    context = get_context(tuple(profile_dirs))
    reg = context.registry
    from suite.hardware.reserved import CORE_EXTENSION_NAMES

    exts = {**reg.declared_extensions(), **dict.fromkeys(CORE_EXTENSION_NAMES, "suite.hardware.extensions:core")}
    key = listing_key(context.search_dirs(), exts)  # (this code is in the suite package, which the key stamps)
    doc = load_listing(key, fields=("rows", "warnings", "file_errors"))  # every profile already validated and formatted, for these exact files
    if doc is None:
        doc = _listing(context)
        save_listing(key, doc)
    for msg in doc["file_errors"]:
        click.echo(f"warning: {msg}; skipped", err=True)
    rows = [r for r in doc["rows"] if not (kind and r["kind"] not in (kind, "?"))
            and not (vendor and r["kind"] != "?" and vendor.lower() not in (r["vendor"] or "").lower())]
    cols = ["name", "kind", "vendor", "device", "devices", "memory", "mem_bw", "fastest", "network"]
    if fmt != "table":
        cols += ["fp32", "verified", "sources"]
    emit(rows, fmt, cols, title=f"hardware profiles ({len(rows)})")
    for w in doc["warnings"]:
        click.echo(f"warning: {w}", err=True)


def _listing(context: Any) -> dict[str, Any]:
    """Every profile's row (an unloadable one: an ERROR row), the library's warnings and the
    files it skipped: what :mod:`suite.cache` caches."""
    import contextlib
    import io

    from suite.errors import ProfileError

    with contextlib.redirect_stderr(io.StringIO()):  # the skipped files are kept below, printed once
        lib = context.profiles
        names = lib.names()  # (every file parsed: a library parses a file when first needed)
    rows = []
    for name in names:
        try:
            rows.append(_row(lib.get(name)))
        except ProfileError as exc:
            rows.append({"name": name, "kind": "?", "vendor": "", "device": f"ERROR: {exc}"})
    return {"what": "hardware-list", "rows": rows, "warnings": list(lib.warnings),
            "file_errors": list(lib.file_errors.values())}


def _source_for(prof: Any, path: str) -> str:
    """The source of field *path* of *prof* as its file gives it ("" when none)."""
    if path in prof.sources:
        return str(prof.sources[path])
    # device fields of a node/cluster, sources of a dict entry's parent, list index aliases
    parts = path.split(".")
    for i in range(len(parts) - 1, 0, -1):
        cand = ".".join(parts[:i])
        if cand in prof.sources:
            return str(prof.sources[cand])
    if prof.network and parts[0] == "network" and len(parts) > 2:
        neg = f"network.{int(parts[1]) - len(prof.network)}.{'.'.join(parts[2:])}"
        if neg in prof.sources:
            return str(prof.sources[neg])
    return ""


def _overridden(prof: Any) -> set[str]:
    """The field paths of *prof* its ``--set`` overrides wrote, as :func:`flatten` spells them
    (``network.-1.bandwidth`` of two levels: ``network.1.bandwidth``)."""
    from suite.hardware.profile import field_path

    return {field_path(key, len(prof.network)) for key in prof.overrides}


def _sources(prof: Any, base: Any) -> dict[str, str]:
    """Field path -> the source ``hardware show`` prints: the file's for a figure of the file; for a
    figure a ``--set`` override wrote, ``--set override (file: <the file's value>, <its source>)``,
    *base* being the profile before the overrides."""
    from suite.hardware.derived import flatten

    written = _overridden(prof)
    before = {f.path: f.text for f in flatten(base)} if written else {}
    out = {}
    for f in flatten(prof):
        if f.path not in written:
            out[f.path] = _source_for(prof, f.path)
            continue
        was = before.get(f.path)
        src = _source_for(base, f.path)
        out[f.path] = ("--set override (not in the file)" if was is None
                       else f"--set override (file: {was}{', ' + src if src else ''})")
    return out


def show_data(prof: Any, base: Any = None) -> dict[str, Any]:
    """The JSON document of ``suite hardware show --format json``; *base* is *prof* before its
    ``--set`` overrides (default: *prof*), whose values and sources an overridden field names."""
    from suite.hardware.derived import derived, flatten

    sources = _sources(prof, prof if base is None else base)
    return {
        "name": prof.name, "kind": prof.kind, "vendor": prof.vendor, "source": prof.source,
        "verified": prof.verified, "description": prof.description, "tags": list(prof.tags), "path": prof.path,
        "content_hash": prof.content_hash(), "overrides": prof.overrides,
        "fields": [{"path": f.path, "value": f.value, "display": f.text, "dimension": f.dimension,
                    "source": sources[f.path]} for f in flatten(prof)],
        "derived": [{"name": d.name, "value": d.value, "display": d.text, "formula": d.formula}
                    for d in derived(prof)],
        "measured": prof.measured,
        "profile": prof.model_dump(mode="json"),
    }


@hardware.command("show")
@click.argument("name")
@click.option("--set", "sets", multiple=True, metavar="FIELD=VALUE",
              help='Apply an override first, e.g. --set "network.-1.bandwidth=40 Gbit/s" (repeatable).')
@click.option("--unread", is_flag=True,
              help="Evaluate every installed technique's variants on this profile (model/simulate) and mark the "
                   "fields none of them reads.")
@_profiles_option
@format_option("text", "json", "toml", default="text")
def show_cmd(name: str, sets: tuple[str, ...], unread: bool, profile_dirs: tuple[str, ...], fmt: str) -> None:
    """One profile, resolved: every figure with its unit and source, and derived figures
    (machine balance, totals, bisection and aggregate bandwidth). NAME may be a .toml path.
    --format toml writes the resolved profile as a standalone file (exact SI values)."""
    from suite.cli.common import get_context

    base = get_context(tuple(profile_dirs)).profile(name)
    prof = _with_sets(base, sets)
    if fmt == "toml":
        from suite.hardware.export import to_toml

        click.echo(to_toml(prof), nl=False)
        return
    data = show_data(prof, base)
    if unread:
        _mark_readers(data, name, tuple(profile_dirs))
    if fmt == "json":
        click.echo(strict_json(data, indent=2, default=str))
        return
    _print_profile(prof, data, unread)
    if prof.measured:
        _print_measured(prof.measured)


def _with_sets(prof: Profile, sets: tuple[str, ...]) -> Profile:
    """*prof* with the ``--set FIELD=VALUE`` overrides applied."""
    from suite.errors import ProfileError

    if not sets:
        return prof
    ov = {}
    for s in sets:
        if "=" not in s:
            raise ProfileError(f"--set: expected FIELD=VALUE, got {s!r}")
        k, v = s.split("=", 1)
        ov[k.strip()] = v.strip()
    return prof.with_overrides(ov)


def _mark_readers(data: dict[str, Any], name: str, profile_dirs: tuple[str, ...]) -> None:
    """``--unread``: each field of *data* gets ``read_by``, the installed techniques whose variants
    read it when evaluated on profile *name* (model/simulate probes at the defaults, and at each
    other value of a parameter with choices: a field only ``algorithm=auto`` reads is read), and
    ``read_with``: technique -> the parameter values that alone make it read the field."""
    from suite.cli.common import get_context
    from suite.hardware.tracking import covers
    from suite.runner.fields import probe_choice_reads, probe_fields_read

    context = get_context(profile_dirs)
    readers: dict[str, set[str]] = {}
    with_value: dict[str, dict[str, set[str]]] = {}  # technique -> "name=value" -> paths read
    for tech in context.techniques():
        reads, _problems = probe_fields_read(tech, context, profile=name)
        if reads:
            readers[tech.name] = set().union(*reads.values())
            choices, _ = probe_choice_reads(tech, context, profile=name)
            for (value, _v, _f), paths in choices.items():
                with_value.setdefault(tech.name, {}).setdefault(value, set()).update(paths)
    for f in data["fields"]:
        path = f["path"]
        f["read_by"] = sorted(t for t, r in readers.items() if covers(r, path))
        f["read_with"] = {t: sorted(v for v, r in values.items() if covers(r, path))
                          for t, values in sorted(with_value.items())
                          if t not in f["read_by"] and any(covers(r, path) for r in values.values())}
        f["read_by"] = sorted([*f["read_by"], *f["read_with"]])
    data["probed_techniques"] = sorted(readers)


def _print_profile(prof: Profile, data: dict[str, Any], unread: bool) -> None:
    """The profile's header, its figures (with their readers under ``--unread``) and derived figures."""
    from rich.markup import escape
    from rich.table import Table

    from suite.cli.common import console

    c = console()
    c.print(f"[bold]{escape(prof.name)}[/bold]  ({prof.kind}{', ' + prof.vendor if prof.vendor else ''};"
            f" {'verified' if prof.verified else 'unverified'}; hash {data['content_hash']})")
    for label, text in (("source: ", prof.source), ("", prof.description), ("file: ", prof.path)):
        if text:
            c.print(f"{label}{escape(text)}")
    if prof.overrides:
        c.print(f"overrides: {escape(json.dumps(prof.overrides))}")
    t = Table(title="figures" + (f" (read by: which of the {len(data['probed_techniques'])} techniques that "
                                  f"evaluate on this profile)" if unread else ""), show_lines=False)
    for col in ("field", "value", "source") + (("read by",) if unread else ()):
        t.add_column(col, overflow="fold")
    for f in data["fields"]:
        row = [escape(f["path"]), escape(f["display"]), escape(f["source"] or "-")]
        if unread:
            with_ = f.get("read_with") or {}
            named = [f"{t} (with {' or '.join(with_[t])})" if t in with_ else t for t in f["read_by"]]
            row.append(escape(", ".join(named)) if named else "[bold]nobody[/bold]")
        t.add_row(*row)
    c.print(t)
    if data["derived"]:
        t = Table(title="derived", show_lines=False)
        for col in ("figure", "value", "formula"):
            t.add_column(col, overflow="fold")
        for d in data["derived"]:
            t.add_row(escape(d["name"]), escape(d["display"]), escape(d["formula"]))
        c.print(t)


def _print_measured(measured: dict[str, Any]) -> None:
    """A measured profile's ``[measured]`` table: each figure's median, range, spread and method."""
    from rich.markup import escape

    from suite.cli.common import console
    from suite.hardware.units import DIMENSIONS, format_quantity

    c = console()
    c.print("[bold]measured[/bold] (how each figure was measured)")
    for k, v in measured.items():
        if isinstance(v, dict) and "method" in v:
            dim = v.get("dimension") if v.get("dimension") in DIMENSIONS else None
            fq: Callable[[Any], str] = ((lambda x: format_quantity(float(x), dim)) if dim
                                        else (lambda x: f"{x:.4g}"))
            if "curve" in v:
                pts = ", ".join(f"n={n}: {fr:.2f}" for n, (_s, fr) in zip(v.get("sizes", []), v["curve"]))
                c.print(f"  {escape(k)}: fraction of peak {pts}\n      {escape(v['method'])}")
            else:
                c.print(f"  {escape(k)}: {fq(v['median'])} (median of {v.get('repeats')}, {fq(v['min'])} .. "
                        f"{fq(v['max'])}, spread {float(v.get('spread', 0)):.1%})\n      {escape(v['method'])}")
        else:
            c.print(f"  {escape(k)}: {escape(json.dumps(v, default=str))}")


@hardware.command("validate")
@click.argument("files", nargs=-1, required=False, type=click.Path(dir_okay=True))
@_profiles_option
@format_option("text", "json", default="text")
def validate_cmd(files: tuple[str, ...], profile_dirs: tuple[str, ...], fmt: str) -> None:
    """Validate profile files (or folders), resolved against the library: schema, units,
    references, extends, extensions. One line per problem; exit status 2 on any error.

    Without FILES: the whole library (the shipped profiles, the per-user folder, $SUITE_PROFILES,
    --profiles folders and the plugins' profile folders)."""
    from pathlib import Path

    from suite.hardware import profile_dirs as library_dirs
    from suite.hardware.file_check import validate_paths

    from suite.cli.common import get_context

    context = get_context()  # the plugins' [ext.*] schemas and profile folders
    if not files:
        found = [*library_dirs(), *map(Path, profile_dirs), *map(Path, context.registry.hardware_profile_paths())]
        files = tuple(dict.fromkeys(str(d) for d in found if Path(d).exists()))
    report = validate_paths(files, profile_dirs, extensions=context.extensions(),
                            plugin_paths=tuple(context.registry.hardware_profile_paths()))
    if fmt == "json":
        click.echo(strict_json(report, indent=2))
    else:
        for ok in report["ok"]:
            click.echo(f"ok: {ok['name']} ({ok['kind']}) {ok['path']}")
        for w in report["warnings"]:
            click.echo(f"warning: {w}", err=True)
        for e in report["errors"]:
            click.echo(f"error: {e}", err=True)
    if report["errors"]:
        sys.exit(2)


@hardware.command("diff")
@click.argument("a")
@click.argument("b")
@click.option("--all", "show_all", is_flag=True, help="Also list the fields that are equal.")
@_profiles_option
@format_option("table", "json", "csv")
def diff_cmd(a: str, b: str, show_all: bool, profile_dirs: tuple[str, ...], fmt: str) -> None:
    """Field-by-field difference of two profiles (resolved), with the ratio B/A.

    Network levels are compared by position when both profiles have as many, else from the
    outermost (``network.-1`` with ``network.-1``)."""
    from suite.cli.common import get_context
    from suite.hardware.derived import derived, flatten

    context = get_context(tuple(profile_dirs))
    pa, pb = context.profile(a), context.profile(b)
    # levels of profiles with different network depths line up from the outermost (network.-1: the
    # inter-node fabric of both), not by position (a one-level cluster's NIC against a board's PCIe switch)
    outer = len(pa.network) != len(pb.network)
    fa: dict[str, Any] = {_level_path(f.path, len(pa.network), outer): f for f in flatten(pa)}
    fb: dict[str, Any] = {_level_path(f.path, len(pb.network), outer): f for f in flatten(pb)}
    for d in derived(pa):
        fa[_level_path(f"derived.{d.name}", len(pa.network), outer)] = d
    for d in derived(pb):
        fb[_level_path(f"derived.{d.name}", len(pb.network), outer)] = d
    rows = []
    for path in list(dict.fromkeys(list(fa) + list(fb))):
        x, y = fa.get(path), fb.get(path)
        vx = x.value if x is not None else None
        vy = y.value if y is not None else None
        if vx == vy and not show_all:
            continue
        ratio = None
        if isinstance(vx, (int, float)) and isinstance(vy, (int, float)) and not isinstance(vx, bool) and vx:
            ratio = vy / vx
        rows.append({"field": path, a: x.text if x is not None else "-", b: y.text if y is not None else "-",
                     "ratio_b_over_a": ratio})
    emit(rows, fmt, ["field", a, b, "ratio_b_over_a"],
         title=f"{a} vs {b} (hash {pa.content_hash()} vs {pb.content_hash()})")


def _level_path(path: str, levels: int, outer: bool) -> str:
    """*path* (a field's, or ``derived.`` and a derived figure's) with its network level counted from
    the outermost (``network.1.x`` of two levels: ``network.-1.x``) when *outer*; else as it is."""
    from suite.hardware.profile import network_level

    head, _, rest = path.partition(".") if path.startswith("derived.") else ("", "", path)
    named = network_level(rest, levels) if outer else None
    if named is None or named[0] < 0:
        return path
    moved = ".".join(["network", str(named[0] - levels), *named[1]])
    return f"{head}.{moved}" if head else moved


def _refuse_shadowed(name: str, path: Path) -> None:
    """Refuse (before measuring) to write profile *name* to *path* when a profile of that name is
    defined in another file of the library: the first definition wins, so the new file would be
    skipped as a duplicate. The default destination too (``$SUITE_PROFILES``'s first folder is
    searched after the per-user one, which may already hold a ``local.toml``).

    Raises
    ------
    ProfileError
        ``--name NAME: expected a name not in the profile library, got one already defined in FILE ...``
    """
    from suite.cli.common import get_context
    from suite.errors import ProfileError

    lib = get_context().profiles
    if name not in lib:
        return
    other = lib.path(name)
    if Path(other).resolve() != path.resolve():
        raise ProfileError(f"--name {name}: expected a name not in the profile library, got one already "
                           f"defined in {other} (it would shadow {path}); give --name NEW or -o {other}")


@hardware.command("calibrate")
@click.option("-o", "--output", type=click.Path(dir_okay=False), default=None,
              help="Where to write the profile (default: $SUITE_PROFILES's first folder, else the per-user "
                   "folder $SUITE_CONFIG_DIR/profiles or ~/.config/dlsys-suite/profiles; file local.toml).")
@click.option("--name", default="local", show_default=True, help="Profile name to write.")
@click.option("--quick", is_flag=True, help="Small arrays and few repeats (a few seconds; noisier).")
@format_option("text", "json", default="text")
def calibrate_cmd(output: str | None, name: str, quick: bool, fmt: str) -> None:
    """Measure this machine (GEMM FLOP/s per dtype, STREAM copy/triad bandwidth, cores, memory,
    loopback TCP bandwidth and latency) and write a kind = "measured" profile."""
    from suite.cli.common import get_context
    from suite.hardware import calibrate as cal
    from suite.hardware import clear_cache

    from suite.errors import ProfileError

    path = Path(output) if output else cal.default_output()
    _refuse_shadowed(name, path)
    show_progress = fmt == "text" and sys.stderr.isatty()
    result = cal.calibrate(quick=quick, progress=show_progress)
    text = cal.to_toml(result, name=name)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        if path.exists():  # a calibration is a measurement: the previous one is kept, not lost
            backup = path.with_name(path.name + ".bak")
            backup.write_bytes(path.read_bytes())
            click.echo(f"replacing {path} (the previous calibration is kept as {backup})", err=True)
        path.write_text(text, encoding="utf-8")
    except OSError as exc:
        raise ProfileError(f"{path}: expected a writable file, got {exc.strerror or exc}") from None
    clear_cache()
    get_context().clear_profiles()
    if fmt == "json":
        click.echo(strict_json({"path": str(path), "name": name, **result.as_dict()}, indent=2, default=str))
        return
    hint = f"suite hardware show {name}" + ("" if output is None else f" --profiles {path}")
    click.echo(f"wrote {path} (profile {name!r}; see `{hint}`)")
    for line in result.summary_lines():
        click.echo(f"  {line}")
