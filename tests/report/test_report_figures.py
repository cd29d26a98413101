"""Issue 20's report: every facet value a panel, every scenario a bar (paged, said so), log axes
over geometric sweeps, the cases table sorted numerically with one unit and format per column,
the head-to-head section of a category run; display-time units; the headless-Chromium check."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from suite.report import plots
from suite.report.units import column_scale, format_number, format_value, geometric, sort_key

# --------------------------------------------------------------------------- units for people


def test_format_value_scales_for_display_by_hand():
    assert format_value(0.0123, "s") == "12.3 ms"
    assert format_value(7.8e-4, "s") == "780 us"
    assert format_value(2.5, "s") == "2.5 s"
    # 3,791,828,288 B / 2^30 = 3.5314 GiB (memory is allocated in powers of two)
    assert format_value(3791828288.0, "B") == "3.531 GiB"
    assert format_value(512 * 2**20, "B") == "512 MiB"
    # rates and FLOPs in the datasheets' decimal prefixes
    assert format_value(1.25e9, "B/s") == "1.25 GB/s"
    assert format_value(3.12e14, "FLOP/s") == "312 TFLOP/s"
    assert format_value(2845.04, "samples/s") == "2845 samples/s"  # no ladder: kept as it is
    assert format_value(0.9985, "1") == "0.9985"
    assert format_number(123456.7) == "123457" and format_number(1.5e-7) == "1.500e-07"


def test_one_scale_per_column():
    # the median (0.08 s) picks ms for the whole column, so 1 ms and 0.5 s share a unit
    assert column_scale([0.001, 0.08, 0.09, 0.5], "s") == (1e-3, "ms")
    assert column_scale([None, float("nan")], "s") == (1.0, "s")


def test_numeric_sort_key():
    vals = ["10 Gbit/s", "2 Gbit/s", "40 Gbit/s", "5 Gbit/s"]
    assert sorted(vals, key=sort_key) == ["2 Gbit/s", "5 Gbit/s", "10 Gbit/s", "40 Gbit/s"]
    assert sorted([16, 2, None, 4], key=sort_key) == [2, 4, 16, None]
    # by value across the units of one dimension: 1 GB/s is 8 Gbit/s (it came first, by its spelling)
    assert sorted(["20 Gbit/s", "1 GB/s", "4 Gbit/s"], key=sort_key) == ["4 Gbit/s", "1 GB/s", "20 Gbit/s"]
    assert sorted(["0.1 ms", "37 us", "1 ms"], key=sort_key) == ["37 us", "0.1 ms", "1 ms"]


def test_geometric_spacing():
    assert geometric([1, 2, 4, 8, 16, 32])  # log gaps all ln 2
    assert geometric([1, 10, 100])
    assert not geometric([10, 20, 30, 40])  # spans only 4x
    assert not geometric(range(1, 11))  # 1..10: even linear gaps (CV 0) vs uneven log gaps
    assert not geometric([0, 1, 2, 4])  # not all positive


# --------------------------------------------------------------------------- figures from a real sweep


NODES = [1, 2, 4, 8, 16, 32]  # the README sweep (conftest.py builds it)
BANDWIDTHS = ["2 Gbit/s", "5 Gbit/s", "10 Gbit/s", "20 Gbit/s", "30 Gbit/s", "40 Gbit/s"]


def _no_png(fig) -> str:
    import matplotlib.pyplot as plt

    plt.close(fig)
    return ""


def _capture(monkeypatch):
    figs = []

    def fake_render(fig):
        import matplotlib.pyplot as plt

        figs.append(fig)
        plt.close(fig)  # its axes stay readable
        return ""

    monkeypatch.setattr(plots, "render", fake_render)
    return figs


@pytest.fixture(scope="module")
def chosen(wide):
    """The sweep's figures, chosen and drawn once (~3 s of matplotlib) for the tests that only read
    them: (the chosen figures, the matplotlib figures drawn, in order)."""
    with pytest.MonkeyPatch.context() as mp:
        figs = _capture(mp)
        return plots.choose_figures(wide, wide.attrs["directions"], wide.attrs["units"], "ps", "poseidon"), figs


def test_every_facet_value_is_a_panel_and_geometric_axes_are_log(chosen):
    chosen, figs = chosen
    lines = [f for f in chosen if f.kind == "line"]
    assert [(f.x, f.y) for f in lines] == [("param.nodes", "speedup"), ("param.nodes", "throughput"),
                                           ("set.network.-1.bandwidth", "iteration_time"),
                                           ("set.network.-1.bandwidth", "comm_time")]
    for f, mpl in zip(lines, figs):
        panels = [ax for ax in mpl.axes if ax.get_visible()]
        titles = [ax.get_title() for ax in panels]
        if f.x == "param.nodes":  # one panel per bandwidth, all six, in numeric order
            assert titles == [f"network.-1.bandwidth = {b}" for b in BANDWIDTHS]
            assert {ax.get_xscale() for ax in panels} == {"log"}  # 1..32 doubling
        else:  # one panel per node count, all six
            assert titles == [f"nodes = {n}" for n in NODES]
            assert {ax.get_xscale() for ax in panels} == {"log"}  # 2..40: log gaps more even
        assert len(panels) == 6 and len(mpl.axes) == 6  # a 2 x 3 grid, nothing dropped
        for ax in panels:
            assert len(ax.get_lines()) == 4  # every variant in every panel


def test_bars_cover_every_scenario_once_in_numeric_order(wide):
    pages = plots.bars_pages(wide, "speedup", "ps", ["param.nodes", "set.network.-1.bandwidth"])
    labels = [lab for page, _d in pages for lab in page]
    assert len(pages) == 2 and [len(p) for p, _d in pages] == [18, 18]
    assert labels == [f"nodes={n}, network.-1.bandwidth={b}" for n in NODES for b in BANDWIDTHS]
    # poseidon over ps at one node is 1.0 (no communication either way)
    first = pages[0][1]
    assert first["poseidon"][0] == pytest.approx(1.0, rel=1e-9)


def test_bar_figure_captions_say_which_page(chosen):
    bars = [f for f in chosen[0] if f.kind == "bars"]
    assert [f.caption.rsplit("; ", 1)[-1] for f in bars] == ["page 1 of 2: scenarios 1-18 of 36",
                                                              "page 2 of 2: scenarios 19-36 of 36"]


def _cases_table(html: str, section: str) -> tuple[list[str], list[list[str]]]:
    part = html[html.index(f'id="technique-{section}"'):]
    part = part[part.index('<table class="cases">'):]
    part = part[:part.index("</table>")]
    head = re.findall(r"<th>(.*?)</th>", part)
    rows = [re.findall(r"<td[^>]*>(.*?)</td>", r) for r in re.findall(r"<tr>(.*?)</tr>", part)[1:]]
    return head, rows


def _stand_in_png(fig) -> str:
    """What :func:`plots.render` gives, for a figure not drawn: the figure closed and a 1 x 1 PNG."""
    import base64
    import io

    import matplotlib.pyplot as plt
    from PIL import Image

    plt.close(fig)
    buf = io.BytesIO()
    Image.new("RGB", (1, 1)).save(buf, format="PNG")
    return base64.b64encode(buf.getvalue()).decode("ascii")


@pytest.fixture(scope="module")
def written(request, report_context, tmp_path_factory):
    """The written report of a run, built once per run for every test of this module that reads its
    page: run -> the page's HTML. "sweep" (the README's sweep) and "two-drawn" (the category run)
    have their figures rendered for real; "two" is the category run with every PNG a 1 x 1 stand-in
    (drawing its ten figures is ~3 s CPU, ~75% of the build): what its tests read (sections, alt
    texts, tables, that each image is embedded as a PNG) does not depend on the pixels, and
    test_category_figure_legend_names_papers renders a category figure for real and decodes it."""
    from suite.report import write_report

    pages: dict[str, str] = {}

    def page(run: str) -> str:
        if run not in pages:
            store = request.getfixturevalue("tour_store" if run == "sweep" else "category_store")
            path = tmp_path_factory.mktemp("written") / f"{run}.html"
            with pytest.MonkeyPatch.context() as mp:
                if run == "two":
                    mp.setattr(plots, "render", _stand_in_png)
                pages[run] = write_report(store, run.removesuffix("-drawn"), path, scoreboard=False,
                                          context=report_context).read_text(encoding="utf-8")
        return pages[run]

    return page


@pytest.fixture(scope="module")
def tour_html(written):
    """The sweep's report (the same page test_every_figure_has_what_the_page_draws[sweep] checks)."""
    return written("sweep")


def test_cases_table_sorted_one_unit_and_format_per_column(tour_html):
    html = tour_html
    head, rows = _cases_table(html, "poseidon")
    assert len(rows) == 144
    # poseidon's headline metrics first, each header with the one unit its column is shown in
    assert head[:8] == ["variant", "nodes", "network.-1.bandwidth", "iteration_time (ms)",
                        "throughput (samples/s)", "speedup", "comm_time (ms)", "exposed_comm (ms)"]
    ps = [(r[1], r[2]) for r in rows if r[0] == "ps"]
    assert ps == [(str(n), b) for n in NODES for b in BANDWIDTHS]  # numeric, not "10" < "2"
    for col in range(3, len(head)):  # one number of decimals per column
        decimals = {len(c.split(".")[1]) if "." in c else 0 for c in (r[col] for r in rows) if c}
        assert len(decimals) == 1, (head[col], decimals)
    assert '<div class="scroll"><table class="cases">' in html  # scrolls sideways, never overflows


def test_report_has_no_silent_cut(tour_html):
    html = tour_html
    imgs = re.findall(r'<img src="data:image/png;base64,', html)
    assert len(imgs) == 2  # 2 pages of bars (the line figures are interactive: test_interactive.py)
    assert html.count('<div class="ifig"') == 6  # 3 headline metrics x 2 swept axes, 6 panels each
    assert "page 2 of 2: scenarios 19-36 of 36" in html


# --------------------------------------------------------------------------- category head to head


def test_category_section_one_figure_per_shared_metric(written):
    html = written("two")
    assert "<h2>Head to head: communication</h2>" in html
    sec = html[html.index('id="category-communication"'):]
    sec = sec[:sec.index("</section>")]
    # the data-parallel vocabulary first, in its order, then whatever else both report
    alts = re.findall(r'alt="communication: ([a-z_]+)"', sec)
    assert alts[:5] == ["iteration_time", "throughput", "speedup", "comm_time", "exposed_comm"]
    assert "Poseidon: An Efficient Communication Architecture" in sec and "MG-WFBP" in sec
    # best variant vs best baseline, per profile and technique, by iteration time
    best = re.findall(r"<tr><td>(h100-ndr-fat-tree|k80-cluster-10gbe)</td><td>(mg-wfbp|poseidon)</td>", sec)
    assert sorted(best) == sorted((p, t) for p in ("h100-ndr-fat-tree", "k80-cluster-10gbe")
                                  for t in ("mg-wfbp", "poseidon"))


def test_category_figure_legend_names_papers(category_store, report_context, monkeypatch):
    from suite.results.load import load

    drawn = plots.render
    figs = _capture(monkeypatch)
    w = load(category_store, run="two", wide=True)
    w = w[w["technique"].isin(["poseidon", "mg-wfbp"])]
    reg = report_context.registry
    techs = {t: reg.technique(t) for t in ("poseidon", "mg-wfbp")}
    base = {t: {v.name for v in techs[t].baselines} for t in techs}
    plots.category_figure(w, "iteration_time", "s", "lower", techs, base, "t")
    fig = figs[-1]
    assert [ax.get_title() for ax in fig.axes] == ["profile h100-ndr-fat-tree", "profile k80-cluster-10gbe"]
    legend = [t.get_text() for t in fig.legends[0].get_texts()]
    # each legend entry and each bar names the scale (--param nodes=8, workers=8: 8 GPUs each)
    assert legend == ["mg-wfbp: Shi et al., IEEE INFOCOM, 2019 (at 8 workers = 8 GPUs)",
                      "poseidon: Zhang et al., USENIX ATC, 2017 (at 8 nodes = 8 GPUs)", "baseline variant"]
    labels = [t.get_text() for t in fig.axes[0].get_yticklabels()]
    assert "poseidon: ps (baseline) @ 8 nodes = 8 GPUs" in labels and "mg-wfbp: mg-wfbp @ 8 workers = 8 GPUs" in labels
    assert len(labels) == 8
    assert fig.axes[0].get_xscale() == "linear"  # bar lengths are linear, whatever their spread
    # one colour per technique, the same in every figure (by name among all the report's techniques)
    from suite.report.plots import technique_colours

    want = technique_colours(["hetseq", "mg-wfbp", "poseidon"])
    plots.category_figure(w[w["technique"] == "poseidon"], "iteration_time", "s", "lower", techs, base, "t",
                          colours=want)
    bar = figs[-1].axes[0].patches[0]
    import matplotlib.colors as mc

    assert mc.to_hex(bar.get_facecolor()) == want["poseidon"]
    # drawn for real, what it returns is a PNG that decodes (the fast "two" page embeds stand-ins)
    monkeypatch.setattr(plots, "render", drawn)
    png = plots.category_figure(w[w["technique"] == "poseidon"], "iteration_time", "s", "lower", techs, base, "t")
    assert _undrawable(f'<img src="data:image/png;base64,{png}">') == [] and _png_size(png)[0] > 100


# --------------------------------------------------------------------------- headless Chromium

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
_PROBE = ("<script>window.addEventListener('load',function(){var im=[].slice.call(document.images);"
          "var f=[].slice.call(document.querySelectorAll('.ifig'));"
          "document.body.setAttribute('data-images',im.length);"
          "document.body.setAttribute('data-broken',im.filter(function(i){return !(i.complete&&i.naturalWidth>0)})"
          ".length);"
          "document.body.setAttribute('data-drawn',f.filter(function(x){return x.querySelectorAll('svg circle')"
          ".length>0}).length);"
          "document.body.setAttribute('data-ifigs',f.length);});</script>")


def _chromium(*args: str) -> subprocess.CompletedProcess:
    base = [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--enable-logging=stderr", "--v=0",
            "--virtual-time-budget=10000"]
    return subprocess.run([*base, *args], capture_output=True, text=True, timeout=180)


def _undrawable(html: str) -> list[str]:
    """What would leave a figure of *html* undrawn, without a browser: an ``<img>`` whose PNG does
    not decode (or is empty), and an interactive figure whose spec or data table is missing or not
    JSON, or whose variants have no point with finite x and y (each one the page's script draws as
    an SVG circle) or a point naming a row its data table lacks."""
    import base64
    import io
    import json
    import math

    from PIL import Image

    bad = []
    for i, b64 in enumerate(re.findall(r'<img src="data:image/png;base64,([^"]*)"', html)):
        try:
            with Image.open(io.BytesIO(base64.b64decode(b64, validate=True))) as im:
                im.load()
                if im.format != "PNG" or min(im.size) < 1:
                    bad.append(f"image {i}: {im.format} {im.size}")
        except Exception as exc:  # noqa: BLE001 - any decoding failure is the finding
            bad.append(f"image {i}: {type(exc).__name__}: {exc}")
    scripts = dict(re.findall(r'<script type="application/json" id="([^"]+)">(.*?)</script>', html, re.S))
    for fid in re.findall(r'<div class="ifig" data-spec="([^"]+)">', html):
        try:
            spec = json.loads(scripts[fid])
            rows = json.loads(scripts[spec["d"]])["rows"]
        except (KeyError, ValueError) as exc:
            bad.append(f"figure {fid}: {type(exc).__name__}: {exc}")
            continue
        pts = [pt for panel in spec["p"] for name in spec["v"] for pt in panel["s"].get(name, [])]
        if not [pt for pt in pts if all(isinstance(v, (int, float)) and math.isfinite(v) for v in pt[:2])]:
            bad.append(f"figure {fid}: no point to draw")
        if any(not 0 <= pt[2] < len(rows) for pt in pts):
            bad.append(f"figure {fid}: a point names a row the data table lacks")
    return bad


def _png_size(b64: str) -> tuple[int, int]:
    import base64
    import io

    from PIL import Image

    with Image.open(io.BytesIO(base64.b64decode(b64))) as im:
        return im.size


@pytest.mark.parametrize("run", ["sweep", "two", pytest.param("two-drawn", marks=pytest.mark.slow)])
def test_every_figure_has_what_the_page_draws(run, written):
    """The browser check below without the browser (it is slow): every PNG decodes and every
    interactive figure has its spec, its data table and points to draw; the script is on the page.
    The script running without error is checked only by the browser (test_report_in_headless_chromium).
    "two" checks the category page's images are embedded as PNGs (stand-ins, not drawn: see
    :func:`written`); "two-drawn", slow, draws them."""
    from suite.report.interactive import SCRIPT

    html = written(run)
    images, ifigs = html.count('<img src="data:image/png;base64,'), html.count('<div class="ifig"')
    assert images + ifigs > 0 and html.count(SCRIPT) == 1
    if run == "sweep":  # headline metrics (iteration time, throughput, speed-up) x 2 swept axes
        assert ifigs == 6
    assert _undrawable(html) == []
    # the check finds a broken image and a figure without points
    broken = re.sub(r'(<img src="data:image/png;base64,)([^"]{40})', r"\1AAAA", html, count=1)
    empty = re.sub(r'"s": ?\{[^{}]*\}', '"s": {}', html) if ifigs else html
    assert (images == 0 or _undrawable(broken)) and (ifigs == 0 or _undrawable(empty))


@pytest.mark.slow
@pytest.mark.skipif(not Path(CHROMIUM).exists(),
                    reason="the browser check needs Debian's chromium (apt-get install chromium; .ci/run installs "
                           "it where apt-get works as root)")
@pytest.mark.parametrize("run", ["sweep", "two"])
def test_report_in_headless_chromium(run, tour_store, category_store, report_context, tmp_path):
    """The page loads, every figure is drawn (PNG images decode, every interactive figure has
    points in its SVG), and the page logs nothing to the console (no script error). Slow (a
    browser start and a page render per report: ~4-20 s); test_every_figure_has_what_the_page_draws
    checks the figures' images and data fast."""
    from suite.report import write_report

    store = tour_store if run == "sweep" else category_store
    out = write_report(store, run, tmp_path / f"{run}.html", scoreboard=False, context=report_context)
    html = out.read_text(encoding="utf-8")
    images = html.count('<img src="data:image/png;base64,')
    ifigs = html.count('<div class="ifig"')
    if run == "sweep":  # headline metrics (iteration time, throughput, speed-up) x 2 swept axes
        assert ifigs == 6
    probe = tmp_path / f"{run}-probe.html"
    probe.write_text(html.replace("</body>", _PROBE + "</body>"), encoding="utf-8")
    r = _chromium("--dump-dom", probe.as_uri())
    assert r.returncode == 0, r.stderr[-2000:]
    body = re.search(r"<body[^>]*>", r.stdout).group(0)
    assert f'data-images="{images}"' in body and 'data-broken="0"' in body, body
    assert f'data-ifigs="{ifigs}"' in body and f'data-drawn="{ifigs}"' in body, body
    assert f'data-figures="{ifigs}"' in body, body  # the report's own script ran to its end
    console = [ln for ln in r.stderr.splitlines() if ":CONSOLE" in ln]
    assert console == [], console


def test_a_set_value_equal_to_the_profile_is_filled_in(tmp_path, report_context):
    """The tour's trap: `suite reproduce poseidon` stores nodes=16 on the unmodified 10 GbE profile;
    the sweep's `--set network.-1.bandwidth=10 Gbit/s` case is that very case (same SI figures, same
    key), stored without an override. The report still sees 10 Gbit/s there, so the column stays
    an axis with every value."""
    from suite.report.html import fill_profile_values
    from suite.results import Store
    from suite.results.load import load
    from suite.runner.engine import run_cases
    from suite.runner.experiment import expand_entry

    ctx = report_context
    with Store(tmp_path / "s.sqlite") as st:
        run_cases(expand_entry({"technique": "poseidon", "variants": ["ps"], "params": {"nodes": ["2"]}},
                               context=ctx).cases, st, context=ctx)
        s = run_cases(expand_entry({"technique": "poseidon", "variants": ["ps"], "params": {"nodes": ["2"]},
                                    "set": {"network.-1.bandwidth": ["5 Gbit/s", "10 Gbit/s"]}}, context=ctx).cases, st,
                      context=ctx)
        assert s.cached == 1
        w = load(st, run=s.run_id, wide=True)
    # each run shows the overrides it asked for (schema 5): the cached case carries this run's
    # 10 Gbit/s, not the empty overrides of the run that computed it first (0.1.0: 1 empty cell)
    assert w["set.network.-1.bandwidth"].isna().sum() == 0
    w.loc[w["set.network.-1.bandwidth"] == "10 Gbit/s", "set.network.-1.bandwidth"] = None  # a 0.1.0 store's view
    filled = fill_profile_values(w, profile=ctx.profile)
    assert sorted(filled["set.network.-1.bandwidth"], key=sort_key) == ["5 Gbit/s", "10 Gbit/s"]
    # the profile comes from the resolver it is given (a report passes its context's, which
    # knows the plugins' profile folders); one it cannot resolve leaves the cell empty
    get_profile = ctx.profile

    asked: list[str] = []
    again = fill_profile_values(w, profile=lambda n: asked.append(n) or get_profile(n))
    assert list(again["set.network.-1.bandwidth"]) == list(filled["set.network.-1.bandwidth"])
    assert asked == [str(w.loc[w["set.network.-1.bandwidth"].isna(), "profile"].iloc[0])]

    def unknown(n):
        raise KeyError(n)

    assert fill_profile_values(w, profile=unknown)["set.network.-1.bandwidth"].isna().sum() == 1


def test_no_head_to_head_without_a_shared_scenario(tmp_path, monkeypatch, report_context):
    """Two communication techniques each on its own paper's setup share no (profile, workload):
    the report pits nothing against nothing."""
    from suite.report import build_report
    from suite.results import Store
    from suite.runner.engine import run_cases
    from suite.runner.experiment import expand_entry

    monkeypatch.setattr(plots, "render", _no_png)
    ctx = report_context
    cases = (expand_entry({"technique": "poseidon", "variants": ["ps", "poseidon"]}, context=ctx).cases
             + expand_entry({"technique": "mg-wfbp", "variants": ["sync", "mg-wfbp"]}, context=ctx).cases)
    with Store(tmp_path / "s.sqlite") as st:
        run_cases(cases, st, context=ctx)
    html = build_report(tmp_path / "s.sqlite", "latest", scoreboard=False, context=ctx)
    assert "Technique: poseidon" in html and "Technique: mg-wfbp" in html
    assert "Head to head" not in html


_HOVER = ("<script>window.addEventListener('load',function(){setTimeout(function(){"
          "var svg=document.querySelector('.ifig svg'),c=svg&&svg.querySelector('circle');"
          "if(!c){document.body.setAttribute('data-hovered','none');return;}"
          "var r=svg.getBoundingClientRect(),vb=svg.viewBox.baseVal,w=(vb&&vb.width)||r.width,h=(vb&&vb.height)||r.height;"
          "var x=r.left+c.cx.baseVal.value*r.width/w,y=r.top+c.cy.baseVal.value*r.height/h;"
          "svg.dispatchEvent(new MouseEvent('mousemove',{clientX:x,clientY:y,bubbles:true}));"
          "var tip=document.querySelector('.itip');"
          "document.body.setAttribute('data-hovered',tip?'1':'0');"
          "document.body.setAttribute('data-tip-img',tip?tip.querySelectorAll('img').length:-1);"
          "document.body.setAttribute('data-tip-has-payload',tip&&tip.textContent.indexOf('onerror')>=0?'1':'0');"
          "},500);});</script>")


@pytest.mark.slow
@pytest.mark.skipif(not Path(CHROMIUM).exists(), reason="the browser check needs Debian's chromium")
def test_a_tooltip_shows_a_parameter_value_as_text_not_markup(report_context, tmp_path):
    """A tryout ran odyssey with ``--param 'failures=<img src=x onerror=alert(1)>,exponential'``: hovering
    a point of `suite report`'s figure ran the handler (the tooltip was built with innerHTML)."""
    from suite.report import write_report
    from suite.report.interactive import SCRIPT
    from suite.results import Store
    from suite.runner.engine import run_cases
    from suite.runner.experiment import expand_entry

    payload = "<img src=x onerror=document.body.setAttribute('data-pwned','1')>"
    trace = tmp_path / payload  # a file name may hold markup: the value shown is its path
    trace.write_text("time,device,event\n3600,0,fail\n7200,0,repair\n")
    exp = expand_entry({"technique": "odyssey", "variants": ["odyssey"],
                        "params": {"failures": [str(trace), "exponential"], "mfu": ["0.3", "0.4"]}}, context=report_context)
    path = tmp_path / "s.sqlite"
    with Store(path) as st:
        s = run_cases(exp.cases, st, context=report_context, command="xss")
    assert s.by_status.get("ok") == 4, s.by_status
    html = write_report(path, s.run_id, tmp_path / "x.html", scoreboard=False, context=report_context).read_text()
    assert "innerHTML" not in SCRIPT and html.count('<div class="ifig"') > 0
    probe = tmp_path / "probe.html"
    probe.write_text(html.replace("</body>", _HOVER + "</body>"), encoding="utf-8")
    r = _chromium("--dump-dom", probe.as_uri())
    assert r.returncode == 0, r.stderr[-2000:]
    body = re.search(r"<body[^>]*>", r.stdout).group(0)
    # the hovered point's tooltip holds the payload (as text: no img element), so the check bites
    assert 'data-hovered="1"' in body and 'data-tip-has-payload="1"' in body and 'data-tip-img="0"' in body, body
    assert "data-pwned" not in body, body


def test_the_pages_script_never_writes_markup():
    """The fast half of the tooltip check above: the report's script builds every element from text
    nodes (``textContent``), so no value of a run can become markup on the reader's page."""
    from suite.report.interactive import SCRIPT

    assert "innerHTML" not in SCRIPT and "outerHTML" not in SCRIPT and "insertAdjacentHTML" not in SCRIPT
    assert "document.write" not in SCRIPT


def test_a_metric_two_techniques_mean_differently_is_not_put_on_one_axis():
    """cocod-sgd's `speedup` is S-SGD's time to target over the variant's, poseidon's is over one
    device: the head-to-head section drew both as bars on one axis."""
    import pandas as pd

    df = pd.DataFrame({"technique": ["a", "b", "c"], "speedup": [1.0, 12.0, 3.0], "round_time": [0.2, 0.3, 0.1]})
    directions = {"speedup": "higher", "round_time": "lower"}
    meanings = {"a": {"speedup": "over one device", "round_time": "seconds of one round"},
                "b": {"speedup": "over S-SGD's time to target", "round_time": "seconds of one round"},
                "c": {"speedup": "over one device"}}  # c declares no meaning for round_time
    assert plots.shared_metrics(df, ["a", "b", "c"], directions) == ["round_time", "speedup"]
    assert plots.shared_metrics(df, ["a", "b"], directions, meanings=meanings) == ["round_time"]
    assert plots.shared_metrics(df, ["a", "c"], directions, meanings=meanings) == ["speedup"]
    assert plots.shared_metrics(df, ["a", "b", "c"], directions, meanings=meanings) == []


def _three_on_one_setup(path, ctx):
    """poseidon and hetseq (throughput in samples/s) and dhelix (tokens/s), one variant each, their
    cases relabelled onto one (profile, workload) so the report pits them head to head."""
    from suite.results import Store
    from suite.runner.engine import run_cases
    from suite.runner.experiment import expand_entry

    cases = [c for t, v in (("poseidon", "poseidon"), ("hetseq", "hetseq"), ("dhelix", "dhelix"))
             for c in expand_entry({"technique": t, "variants": [v], "params": {"nodes": ["2"]} if t == "poseidon"
                                    else {}}, context=ctx).cases]
    with Store(path) as st:
        assert run_cases(cases, st, context=ctx).ok == 3
        st.conn.execute("UPDATE cases SET profile = 'shared', workload = 'shared'")
        st.conn.commit()


def test_a_metric_in_two_units_is_labelled_by_each_techniques_own(tmp_path, monkeypatch, report_context):
    """A run of dhelix (throughput 1.439e5 tokens/s) with poseidon and hetseq (samples/s): dhelix's
    cases table headed its throughput "(samples/s)", the wide form's one unit for the name. Each
    technique's table names its own unit now; the head to head compares the samples/s throughput
    of poseidon and hetseq (dhelix's, another quantity, hid it before) and says why dhelix's is apart."""
    from suite.report import build_report

    monkeypatch.setattr(plots, "render", _no_png)
    _three_on_one_setup(tmp_path / "s.sqlite", report_context)
    html = build_report(tmp_path / "s.sqlite", "latest", scoreboard=False, context=report_context)
    heads = {t: re.findall(r"<th>(throughput[^<]*)</th>", html.split(f'id="technique-{t}"')[1].split("</table>")[0])
             for t in ("dhelix", "hetseq", "poseidon")}
    assert heads == {"dhelix": ["throughput (tokens/s)"], "hetseq": ["throughput (samples/s)"],
                     "poseidon": ["throughput (samples/s)"]}
    assert re.findall(r'alt="(communication: throughput[^"]*)"', html) == ["communication: throughput [samples/s]"]
    assert ("throughput in tokens/s (dhelix) and in samples/s (hetseq, poseidon): units of different dimensions, "
            "not one quantity") in html


def test_head_to_head_shares_a_metric_only_in_one_unit(tmp_path):
    """Technique a times in s (0.1547) and reports samples/s, b in ms (51.56) and tokens/s: both
    metrics were "shared", drawn on one axis with one unit. Now time is shared in s (0.1547 and
    0.05156), and throughput is two columns, neither shared."""
    from suite.results.load import load
    from techniques_store import techniques_store

    path = tmp_path / "s.sqlite"
    r = techniques_store(path, [
        ("ka", "a", [["time", 0.1547, "s", "lower"], ["throughput", 100.0, "samples/s", "higher"]]),
        ("kb", "b", [["time", 51.56, "ms", "lower"], ["throughput", 200.0, "tokens/s", "higher"]])])
    wide = load(path, run=r, wide=True)
    assert plots.shared_metrics(wide, ["a", "b"], wide.attrs["directions"]) == ["time"]
    assert wide.attrs["units"]["time"] == "s" and wide["time"].tolist() == pytest.approx([0.1547, 0.05156])


def test_matplotlib_s_folder_follows_the_sandbox_and_never_overrides_the_user_s():
    from suite.report.plots import _sandboxed_mpl_dir

    assert _sandboxed_mpl_dir({"SUITE_CACHE_DIR": "/s/c"}) == "/s/c/matplotlib"
    assert _sandboxed_mpl_dir({"SUITE_CACHE_DIR": "/s/c", "MPLCONFIGDIR": "/mine"}) is None
    assert _sandboxed_mpl_dir({"HOME": "/h"}) is None  # not sandboxed: matplotlib's own ~/.cache


@pytest.mark.slow  # a new interpreter imports matplotlib (1.2 s); the rule itself: the test above
def test_a_sandboxed_report_keeps_matplotlib_s_cache_out_of_home(tmp_path):
    """docs/profiles.md: a sandbox that sets SUITE_CACHE_DIR (and the store and config) writes nothing
    under ~; `suite report` wrote ~/.cache/matplotlib/fontlist-*.json and ~/.config/matplotlib."""
    import os
    import subprocess
    import sys

    home, cache = tmp_path / "home", tmp_path / "cache"
    home.mkdir()
    env = {k: v for k, v in os.environ.items() if k not in ("MPLCONFIGDIR", "XDG_CACHE_HOME", "XDG_CONFIG_HOME")}
    env.update(HOME=str(home), SUITE_CACHE_DIR=str(cache))
    code = "from suite.report.plots import _plt; _plt().figure()"
    subprocess.run([sys.executable, "-c", code], env=env, check=True, capture_output=True)
    assert list(home.rglob("*")) == [] and (cache / "matplotlib").is_dir()
