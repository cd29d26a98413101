"""suite report: the HTML of a real poseidon sweep parsed back (sections, tables, embedded PNGs),
the scoreboard against `reproduce`, and escaping of every plugin/profile/command string."""

from __future__ import annotations

import base64
import re
from html.parser import HTMLParser

import pytest

from suite.report import build_report
from suite.report.plots import choose_figures, numeric_axis
from suite.results import Store
from suite.results.load import load

PNG = b"\x89PNG\r\n\x1a\n"


class Page(HTMLParser):
    """Collects what a reader sees: sections, headings, tables, images, text, start tags."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.tags: list[str] = []
        self.sections: list[str] = []
        self.headings: list[str] = []
        self.tables: list[list[list[str]]] = []
        self.images: list[str] = []
        self.text: list[str] = []
        self.divs: list[str] = []
        self.scripts: list[dict] = []
        self._h = None
        self._cell = None

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        self.tags.append(tag)
        if tag == "section":
            self.sections.append(a.get("id"))
        elif tag == "div":
            self.divs.append(a.get("class") or "")
        elif tag == "script":
            self.scripts.append(a)
        elif tag in ("h1", "h2", "h3"):
            self._h = []
        elif tag == "table":
            self.tables.append([])
        elif tag == "tr":
            self.tables[-1].append([])
        elif tag in ("td", "th"):
            self._cell = []
        elif tag == "img":
            self.images.append(a["src"])

    def handle_endtag(self, tag):
        if tag in ("h1", "h2", "h3") and self._h is not None:
            self.headings.append("".join(self._h))
            self._h = None
        elif tag in ("td", "th") and self._cell is not None:
            self.tables[-1][-1].append("".join(self._cell))
            self._cell = None

    def handle_data(self, data):
        self.text.append(data)
        if self._h is not None:
            self._h.append(data)
        if self._cell is not None:
            self._cell.append(data)


def _only_the_reports_script(text: str) -> None:
    """The only executable script is the report's own (embedded once, no src); every other script
    element is JSON data, which a browser never runs."""
    from suite.report.interactive import SCRIPT

    tags = re.findall(r"<script[^>]*>", text)
    assert tags.count("<script>") == 1 and text.count(f"<script>{SCRIPT}</script>") == 1
    assert all(t in ("<script>",) or t.startswith('<script type="application/json"') for t in tags), tags
    assert "src=" not in "".join(tags)


def parse(text: str) -> Page:
    p = Page()
    p.feed(text)
    p.close()
    return p


@pytest.fixture(scope="module")
def report_store(tmp_path_factory, sweep, shared_context):
    """A store with the sweep (run 1) and `reproduce poseidon` (run 2); the reproduce scoreboard."""
    from suite.runner.reproduce import reproduce

    run_sweep, entry = sweep
    path = tmp_path_factory.mktemp("report") / "suite.sqlite"
    with Store(path) as st:
        run_id = run_sweep(st, entry, "suite run --technique poseidon <script>alert('cmd')</script>")
        ctx = shared_context
        board = reproduce([ctx.technique("poseidon")], st, command="suite reproduce poseidon", context=ctx)
    return path, run_id, board


@pytest.fixture(scope="module")
def sweep_page(report_store, shared_context):
    path, sweep, _board = report_store
    return parse(build_report(path, sweep, context=shared_context))


def test_sweep_report_sections_tables_and_images(report_store, sweep_page):
    path, sweep, board = report_store
    page = sweep_page
    assert page.sections == ["provenance", "technique-poseidon", "scoreboard"]
    assert page.headings[:3] == [f"dlsys-suite report: run {sweep}", "Run provenance", "Technique: poseidon"]
    # plots: interactive figures (SVG drawn by the page's one script) and embedded PNGs that decode
    assert len(page.images) >= 1 and page.divs.count("ifig") >= 2
    for src in page.images:
        assert src.startswith("data:image/png;base64,")
        assert base64.b64decode(src.split(",", 1)[1])[:8] == PNG
    # no external resource; one script, the report's own, the other script elements JSON data
    assert "link" not in page.tags and all("src" not in a for a in page.scripts)
    assert [a.get("type") for a in page.scripts].count(None) == 1
    assert {a.get("type") for a in page.scripts} == {None, "application/json"}
    # the cases table: one row per case, the store's values
    cases = next(t for t in page.tables if t and "variant" in t[0] and "nodes" in t[0])
    header, rows = cases[0], cases[1:]
    assert len(rows) == 24
    wide = load(path, run=sweep, wide=True)
    col = header.index("throughput (samples/s)")
    shown = sorted(float(r[col]) for r in rows)
    assert shown == pytest.approx(sorted(wide["throughput"]), rel=1e-3)  # printed with 4 significant digits
    # provenance table holds the command (escaped, see below) and the plugin versions
    prov = page.tables[0]
    assert dict((r[0], r[1]) for r in prov)["run"] == str(sweep)


def test_scoreboard_section_matches_reproduce(report_store, sweep_page, shared_context):
    path, sweep, board = report_store
    page = sweep_page
    sb = page.tables[-1]
    assert sb[0][:2] == ["claim", "verified"]
    # the verdict cell: "verdict [reason class]: reason", the reason class when not reproduced
    got = {r[0]: r[-1].split(":")[0].split(" [")[0] for r in sb[1:]}
    assert got == {o.claim: o.verdict for o in board.outcomes}
    assert all(f"[{o.reason_class}]" in r[-1] for r in sb[1:] for o in board.outcomes
               if o.claim == r[0] and o.reason_class)
    counts = page.tables[-2]
    assert counts[-1][:2] == ["all", str(len(board.outcomes))]
    # the reproduce run's own report has the scoreboard too, said to come from that run
    page2 = parse(build_report(path, "latest", context=shared_context))
    assert "scoreboard" in page2.sections and any("by this reproduce run" in t for t in page2.text)


def test_text_from_plugins_profiles_and_commands_is_escaped(tmp_path):
    from suite.technique import Paper, Result, Technique, Variant

    evil = "<script>alert('x')</script>"

    def model(scenario):
        return Result()

    tech = Technique(name="toy", title=f"Toy {evil}", category="communication", paper=Paper(title=f"P {evil}"),
                     variants=[Variant("base", "b", baseline=True), Variant(evil, "v")], fidelities={"model": model},
                     needs_profile=False, needs_workload=False)

    class Reg:
        def technique(self, name):
            return tech

    path = tmp_path / "evil.sqlite"
    with Store(path) as st:
        run = st.begin_run(f"suite run {evil}", plugins={evil: "1.0"})
        for i, (variant, status) in enumerate([("base", "ok"), (evil, "ok"), (evil, "failed")]):
            ident = {"key": f"k{i}", "technique": "toy", "technique_version": "1.0", "variant": variant,
                     "fidelity": "model", "profile": f"prof{evil}", "profile_hash": "h", "workload": None,
                     "workload_hash": None, "params": {"n": i, "mode": evil}, "seed": 0,
                     "overrides": {"network.-1.bandwidth": f"{i + 1} Gbit/s"}}
            out = {"status": status, "metrics": [["time", 1.0 + i, "s", "lower"], [evil, 2.0, evil, "none"]],
                   "error": f"boom {evil}" if status != "ok" else None, "duration": 0.1}
            st.add_outcome(ident, out, run)
        st.finish_run(run, "failed", {"total": 3, "ok": 2, "failed": 1})
    text = build_report(path, run, registry=Reg())
    page = parse(text)
    _only_the_reports_script(text)
    assert evil not in text
    visible = "".join(page.text)
    # the evil strings are shown as text: title, paper, variant, params, profile, metric, error, command, plugin
    assert visible.count(evil) >= 8
    assert "&lt;script&gt;" in text
    assert page.sections == ["provenance", "technique-toy"]


def test_figures_chosen_for_the_poseidon_sweep(sweep_store):
    path, a, _b = sweep_store
    wide = load(path, run=a, wide=True)
    figs = choose_figures(wide, wide.attrs["directions"], wide.attrs["units"], "ps", "poseidon")
    lines = [(f.x, f.y) for f in figs if f.kind == "line"]
    # speed-up and throughput against nodes; iteration time against the swept NIC bandwidth
    assert lines[:2] == [("param.nodes", "speedup"), ("param.nodes", "throughput")]
    assert ("set.network.-1.bandwidth", "iteration_time") in lines
    assert [f.kind for f in figs].count("bars") == 1
    for f in figs:
        assert base64.b64decode(f.png)[:8] == PNG


@pytest.mark.parametrize("values,expected", [([1, 2, 4], ([1.0, 2.0, 4.0], "")),
                                             (["10 Gbit/s", "40 Gbit/s"], ([10.0, 40.0], "Gbit/s")),
                                             # 5 GB/s = 40 Gbit/s: one dimension, in the first value's unit
                                             (["10 Gbit/s", "5 GB/s"], ([10.0, 40.0], "Gbit/s")),
                                             (["10 Gbit/s", "5 us"], (None, "")), (["1 GB/s", None], (None, "")),
                                             (["fp32", "fp16"], (None, "")), ([True, False], (None, ""))])
def test_numeric_axis(values, expected):
    assert numeric_axis(values) == expected


def test_numeric_axis_in_the_unit_of_its_figure():
    # a panel whose first case is 4 Gbit/s still draws 1 GB/s at 1 on a GB/s axis (4 Gbit/s = 0.5 GB/s)
    assert numeric_axis(["4 Gbit/s", "1 GB/s", "20 Gbit/s"], "GB/s") == ([0.5, 1.0, 2.5], "GB/s")


def test_cli_writes_the_file(report_store, tmp_path, suite_cli):
    path, sweep, _board = report_store
    out = tmp_path / "r.html"
    res = suite_cli(["report", str(sweep), "--store", str(path), "-o", str(out), "--no-scoreboard"])
    assert res.exit_code == 0, res.output
    page = parse(out.read_text(encoding="utf-8"))
    assert "scoreboard" not in page.sections and len(page.images) + page.divs.count("ifig") >= 2
    res = suite_cli(["report", "42", "--store", str(path), "-o", str(out), "--force"])
    assert res.exit_code == 2 and "no run with id 42" in res.output


def test_each_technique_section_shows_only_its_own_parameters_and_metrics(tmp_path):
    class NoReg:
        def technique(self, name):
            raise KeyError(name)  # techniques no longer installed are still reported

    path = tmp_path / "two.sqlite"
    with Store(path) as st:
        run = st.begin_run("suite run two", plugins={})
        for i, (tech, params, metric) in enumerate([("alpha", {"width": 1}, "alpha_time"),
                                                    ("alpha", {"width": 2}, "alpha_time"),
                                                    ("beta", {"depth": 3}, "beta_bytes")]):
            ident = {"key": f"k{i}", "technique": tech, "technique_version": "1", "variant": "v", "fidelity": "model",
                     "profile": None, "profile_hash": None, "workload": None, "workload_hash": None,
                     "params": params, "seed": 0, "overrides": {}}
            st.add_outcome(ident, {"status": "ok", "metrics": [[metric, float(i + 1), "s", "lower"]]}, run)
        st.finish_run(run, "done", {"total": 3, "ok": 3})
    page = parse(build_report(path, run, registry=NoReg()))
    assert page.sections == ["provenance", "technique-alpha", "technique-beta"]
    alpha, beta = page.tables[1], page.tables[2]
    assert alpha[0] == ["variant", "width", "alpha_time (s)"] and [r[1:] for r in alpha[1:]] == [["1", "1"], ["2", "2"]]
    assert beta[0] == ["variant", "beta_bytes (s)"] and beta[1] == ["v", "3"]


def _frame(rows):
    import pandas as pd

    return pd.DataFrame(rows)


@pytest.fixture
def unrendered(monkeypatch):
    """Figures chosen and drawn but not encoded as PNG (what the test reads is which figures and
    their captions; the PNGs are checked on the poseidon sweep above): saves ~0.4 s CPU."""
    import matplotlib.pyplot as plt

    from suite.report import plots

    def close(fig):
        plt.close(fig)
        return ""

    monkeypatch.setattr(plots, "render", close)


def test_figures_never_average_and_skip_degenerate_axes(unrendered):
    base = {"profile": "p", "workload": "w", "fidelity": "model", "seed": 0}
    # nodes and bandwidth move together: panels per bandwidth would hold one point each, so the
    # figure has no panels; a second profile is held fixed (named in the caption), not averaged
    rows = []
    for prof, scale in (("p", 1.0), ("q", 100.0)):
        for n, bw in ((1, "10 Gbit/s"), (2, "20 Gbit/s"), (4, "40 Gbit/s")):
            for v, f in (("a", 1.0), ("b", 0.5)):
                rows.append({**base, "profile": prof, "variant": v, "param.nodes": n, "set.network.-1.bandwidth": bw,
                             "speedup": scale * f * n})
    rows += [{**base, "profile": "p", "variant": "a", "param.nodes": 8, "set.network.-1.bandwidth": "80 Gbit/s",
              "speedup": 8.0}]  # profile p is the most populated slice
    figs = choose_figures(_frame(rows), {"speedup": "higher"}, {"speedup": "1"}, "a", "t")
    line = [f for f in figs if f.kind == "line"]
    assert [(f.x, f.y) for f in line] == [("param.nodes", "speedup"), ("set.network.-1.bandwidth", "speedup")]
    for f in line:
        assert "panel" not in f.caption and f.caption.endswith("fixed at profile=p")
    # one case per variant and x value, never two x values for one variant: no line figure at all
    rows = [{**base, "variant": "a", "param.nodes": 1, "t": 1.0}, {**base, "variant": "b", "param.nodes": 2, "t": 2.0}]
    figs = choose_figures(_frame(rows), {"t": "lower"}, {"t": "s"}, "a", "t")
    assert [f for f in figs if f.kind == "line"] == []
