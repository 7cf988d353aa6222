"""The run report (:mod:`dashboard.ui.report`): one self-contained HTML page with the run's
plots, settings, seed, versions, the reproducing link and the final numbers; the same from
the dashboard's *Download report* and from ``simulate ... --report FILE``."""

from __future__ import annotations

import html
import re
from urllib.parse import parse_qs, urlsplit

import pytest
from bokeh.document import Document
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dashboard.cli import main
from dashboard.simulation import Simulation
from dashboard.simulation.specs import make_spec
from dashboard.ui.app import DashboardApp
from dashboard.ui.report import report_html, report_text, reproduce_query, write_report


@pytest.fixture(scope="module")
def result():
    spec = make_spec("cmab", d=6, m=2)
    with Simulation(
        spec, ["CUCB", "AROQ-CMAB"], horizon=300, runs=2, seed=4, params={"CUCB": {"C": 2.0}}
    ) as s:
        return s.run()


def _link(page: str) -> dict[str, str]:
    (href,) = re.findall(r'<p class="link"><a href="([^"]+)"', page)
    return {k: v[-1] for k, v in parse_qs(urlsplit(html.unescape(href)).query).items()}


def test_the_report_holds_plots_settings_seed_versions_link_and_final_numbers(result):
    page = report_html(result, reproduce_query(result, {"CUCB": {"C": 2.0}}))
    for text in ("Final numbers", "Reproduce this run", "Settings", "Versions", "bokeh"):
        assert text in page, text
    summary = result["CUCB"].summary()
    assert f"{summary['final_regret_mean']:.2f}" in page
    assert f"{result['AROQ-CMAB'].summary()['oracle_queries_mean']:.1f}" in page
    for name in ("regret-plot", "timeline-plot", "complexity-plot", "regret-CUCB"):
        assert f'"name":"{name}"' in page, name
    link = _link(page)
    assert link["seed"] == "4" and link["horizon"] == "300" and link["runs"] == "2"
    assert link["d"] == "6" and link["m"] == "2" and "speed" not in link
    assert '"CUCB": {"C": 2.0}' in link["constants"]
    assert "AROQ-CMAB" in link["algorithms"]
    # self-contained: Bokeh's scripts inline, nothing loaded from a URL
    assert not re.findall(r'<(?:script|link)[^>]+(?:src|href)="https?:', page)


def test_the_dashboard_link_sets_the_run_up_again(result):
    app = DashboardApp(autostart_timer=False)
    from dashboard.ui.urlstate import apply_query, parse_query

    values, notices = parse_query(reproduce_query(result))
    assert notices == []
    assert apply_query(app.config, values) == []
    c = app.config
    assert (c.problem, c.d, c.m, c.horizon, c.runs, c.seed) == ("cmab", 6, 2, 300, 2, 4)
    assert c.algorithms == ["CUCB", "AROQ-CMAB"]


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(st.text(min_size=1, max_size=40))
def test_text_from_the_run_is_escaped(result, text):
    """The report's text (what report_html puts before the figures) escapes any string."""
    page = report_text(result, {"seed": text}, base_url="http://h/" + text, title=text)
    assert f"<h1>{html.escape(text)}</h1>" in page
    # no markup but the report's own: every tag is one the report writes
    own = {"h1", "h2", "p", "a", "table", "thead", "tbody", "tr", "th", "td"}
    assert {t.lower() for t in re.findall(r"</?([a-zA-Z][\w-]*)", page)} <= own


def test_markup_in_the_title_stays_text_in_the_whole_page(result):
    text = '<script>alert(1)</script><img src=x onerror="alert(2)">'
    page = report_html(result, {"seed": text}, title=text)
    assert "<script>alert(1)" not in page and "<img src=x" not in page
    assert f"<title>{html.escape(text)}</title>" in page


def test_write_report_names_the_file_on_failure(result, tmp_path):
    path = write_report(result, tmp_path / "r.html")
    assert path.read_text(encoding="utf-8").startswith("<!DOCTYPE html>")
    with pytest.raises(ValueError, match="cannot write the report"):
        write_report(result, tmp_path / "missing" / "r.html")


def test_the_download_button_gives_the_report_of_the_run_shown():
    app = DashboardApp(autostart_timer=False)
    app.config.param.update(d=5, m=2, horizon=300, runs=1, seed=9)
    app.__panel__().get_root(Document())
    assert app.report_download.disabled
    app.run()
    while app.run_model.status == "running":
        app.tick()
    assert not app.report_download.disabled
    data = app.report_download.callback().getvalue().decode("utf-8")
    assert "Final numbers" in data and _link(data)["seed"] == "9"
    assert app.report_download.filename == "bandit-report-cmab-seed9.html"


def test_simulate_report_writes_the_file(tmp_path, capsys):
    out = tmp_path / "run.html"
    code = main(
        [
            "simulate",
            "--problem",
            "cmab",
            "--d",
            "5",
            "--m",
            "2",
            "--horizon",
            "200",
            "--runs",
            "1",
            "--seed",
            "3",
            "--algorithm",
            "CUCB",
            "--report",
            str(out),
        ]
    )
    assert code == 0
    page = out.read_text(encoding="utf-8")
    assert _link(page)["seed"] == "3" and '"name":"regret-CUCB"' in page
    code = main(
        [
            "simulate",
            "--problem",
            "cmab",
            "--horizon",
            "100",
            "--report",
            str(tmp_path / "no" / "x.html"),
        ]
    )
    err = capsys.readouterr().err
    assert code == 2 and err.startswith("error: ") and err.count("\n") == 1
