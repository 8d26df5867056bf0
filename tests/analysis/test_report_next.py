"""The report on files with the names added in this round: paired baseline,
plausibility flags, the crossover rule, the validated forecast, phases that
add up, kB = 1000, the page's navigation, transfer statistics and link maps,
the pipeline timeline, auto repetitions and dfft."""

from __future__ import annotations

import csv
import dataclasses
import re

import numpy as np
import pytest

import fixtures
from analysis.render import plots
from analysis.find import tables
from conftest import png_size, run_cli

# p000..p005 sizes, p006..p010 files; 4 ranks: p010's 4.6 is efficiency 115 %
SPEEDUPS = [0.5, 0.8, 1.5, 2.2, 3.1, 3.8, 0.9, 1.4, 2.0, 3.0, 4.6]


def read_csv(path):
    with open(path, newline="", encoding="utf-8") as fh:
        return list(csv.DictReader(fh))


def _block(page: str, ident: str) -> str:
    m = re.search(rf"<div class='[a-z]+' id='{ident}'>(.*?)</div>", page, re.S)
    return m.group(1) if m else ""


@pytest.fixture(scope="module")
def rich(tmp_path_factory):
    folder = tmp_path_factory.mktemp("next")
    pi = fixtures.write_run(folder / "pi.h5", fixtures.PI)
    fixtures.write_run(folder / "i5.h5", fixtures.I5)
    fixtures.add_paired_baseline(pi, {f"p{i:03d}": s for i, s in enumerate(SPEEDUPS)})
    fixtures.add_pipeline(pi, "p010", mtu=1500)
    fixtures.add_pipeline(pi, "p009", link_use=None)
    fixtures.add_reps_auto(pi, "p003", "max_reps")
    fixtures.add_reps_auto(pi, "p004", "target_ci")
    fixtures.add_transfer_next(pi, slow_link=(1, 0))
    fixtures.add_dfft(pi, 4)
    out = tmp_path_factory.mktemp("next_report") / "r"
    proc = run_cli(str(folder), "-o", str(out), "--point", "p009")
    assert proc.returncode == 0, proc.stderr
    page = (out / "index.html").read_text(encoding="utf-8")
    md = (out / "summary.md").read_text(encoding="utf-8")
    return out, page, md


def test_paired_speedups_are_the_known_ones(rich):
    out, page, _ = rich
    rows = {r["point"]: r for r in read_csv(out / "speedup_paired.csv")}
    assert len(rows) == len(SPEEDUPS)
    for i, s in enumerate(SPEEDUPS):
        r = rows[f"p{i:03d}"]
        assert r["kind"] == "paired"
        assert float(r["speedup"]) == pytest.approx(s, rel=0.03)
        assert float(r["speedup_ci_low"]) <= float(r["speedup"]) <= float(r["speedup_ci_high"])
    assert rows["p010"]["flags"].startswith("IMPLAUSIBLE")
    assert all(rows[f"p{i:03d}"]["flags"] == "" for i in range(10))
    assert (out / "speedup_paired.png").is_file()


def test_implausible_speedup_is_flagged_with_causes_never_a_finding(rich):
    _, page, md = rich
    warn = _block(page, "readfirst")
    flagged = [line for line in md.splitlines() if "IMPLAUSIBLE" in line and "p010" in line]
    assert flagged, "no Read first entry for p010"
    line = flagged[0]
    assert "efficiency 115 %" in line and "Karp–Flatt" in line
    for cause in ("cache effects", "thermal throttling", "pi2"):
        assert cause in line, cause
    assert "p010" in warn
    findings = md.split("## Findings", 1)[1].split("## ", 1)[0]
    assert "4.6" not in findings and "115 %" not in findings
    assert "paired speedup 3" in findings  # the largest plausible point is the headline


def test_cross_run_comparison_says_it_crosses_runs(rich):
    out, page, _ = rich
    rows = read_csv(out / "comparison.csv")
    # a Cortex-A72 cluster against an i5 desktop: other hardware (docs/comparison.md)
    assert rows and all(r["kind"] == "cross-machine" for r in rows)
    assert all(r["efficiency"] == "" and r["karp_flatt"] == "" and r["per_node"] for r in rows)
    assert "these comparisons cross runs" in page
    assert "Against i5-baseline (crosses runs, other hardware)" in page
    assert "--baseline BEFORE --baseline AFTER" in page  # one baseline: drift not measured


def test_crossover_rule_on_the_page(rich):
    out, _, _ = rich
    cross = {(r["kind"], r["scenario"]): r for r in read_csv(out / "crossover.csv")}
    # paired sizes: 0.5, 0.8, then above 1 to the end -> from the third size
    third = sorted(float(r["input_bytes"]) for r in read_csv(out / "speedup_paired.csv")
                   if r["scenario"] == "sizes")[2]
    paired = cross[("paired", "sizes")]
    assert float(paired["crossover_x"]) == third
    assert "crossover at" in paired["verdict"] and "every larger point" in paired["verdict"]
    assert cross[("paired", "files")]["verdict"].startswith("crossover at 2 files")
    assert cross[("cross-machine", "files")]["verdict"].startswith("no crossover: the cluster loses at 16 files")


def test_stacked_phases_add_up(rich):
    out, page, _ = rich
    rows = read_csv(out / "fft_phases.csv")
    assert rows
    for r in rows:
        parts = sum(float(r[f"{k}_s"]) for k in ("distribute", "compute", "gather", "overhead"))
        assert parts == pytest.approx(float(r["stacked_s"]), rel=1e-6)
        assert float(r["total_s"]) == pytest.approx(parts, rel=0.10)
    assert "medians of different repetitions" in page
    assert (out / "fft_phases.png").is_file()


def test_units_are_kilo_1000_everywhere(rich):
    out, page, md = rich
    for text in [page, md] + [p.read_text() for p in out.glob("*.csv")]:
        assert not re.search(r"\b[KMG]iB\b", text)
    assert "kB = 1000 bytes" in page
    assert tables.fmt_bytes(1000) == "1 kB" and tables.fmt_bytes(2 ** 20) == "1.05 MB"
    assert plots._si_bytes(4096) == "4.1 kB"
    rows = read_csv(out / "fft_points.csv")
    r = rows[0]
    assert r["kBps"] and float(r["kBps"]) == pytest.approx(
        float(r["input_bytes"]) / 1000 / float(r["total_median_s"]), rel=1e-6)
    header = open(out / "transfer_p2p.csv").readline()
    assert "bytes_bytes" not in header and "t_avg_s" in header and "t_p95_s" in header


def test_page_from_the_template_has_working_navigation(rich):
    _, page, _ = rich
    nav = re.search(r'<nav id="nav">(.*?)</nav>', page, re.S).group(1)
    targets = re.findall(r"href='#([^']+)'", nav)
    assert {"readfirst", "summary", "fft", "baseline", "pipeline", "transfer", "dfft", "model",
            "load", "method"} <= set(targets)
    ids = set(re.findall(r"id=['\"]([^'\"]+)['\"]", page))
    assert not [t for t in targets if t not in ids]
    assert "position:sticky" in page
    # no page.html placeholder ($name, ${name}) left unsubstituted; "$/1000 requests" is text
    body = re.sub(r"<img[^>]*>", "", page).split("<script>")[0].split("</style>")[1]
    assert not re.findall(r"\$\{?[A-Za-z_]", body)


def test_summary_table_answers_every_study_row(rich):
    out, page, md = rich
    rows = read_csv(out / "study_summary.csv")
    assert [r["study_row"] if "study_row" in r else r["row"] for r in rows] == \
        [str(k) for k in range(1, 12)]
    answers = {r["row"]: r["answer"] for r in rows}
    assert "kB/s" in answers["3"] and "paired" in answers["5"] and "req/s" in answers["11"]
    assert page.index("id='summary'") < page.index("id='runs'")


def test_summary_md_has_no_html(rich):
    _, _, md = rich
    assert not re.search(r"</?[a-zA-Z][a-zA-Z0-9]*(\s[^>]*)?>", md), \
        re.search(r"</?[a-zA-Z][^>]*>", md).group(0)
    assert "**pi4x4**" in md and "&lt;" not in md and "&amp;" not in md


def test_read_first_holds_only_real_warnings(rich):
    _, page, _ = rich
    warn = _block(page, "readfirst")
    assert "has no /transfer" not in warn and "Baseline:" not in warn
    assert "has no /transfer" in page  # still said, among the notes
    for word in ("unstable", "IMPLAUSIBLE", "throttling"):
        assert word in warn, word


def test_reps_auto_points_are_flagged(rich):
    _, page, _ = rich
    warn = _block(page, "readfirst")
    assert "p003 stopped by max_reps" in warn and "target 3.0 %" in warn
    assert "p004 stopped" not in warn


def test_pipeline_timeline_and_link_use(rich):
    out, page, _ = rich
    rows = {r["point"]: r for r in read_csv(out / "pipeline.csv")}
    # The wire's bound: 0.8 x 1538 / 1448 at MTU 1500; p009's file predates it and says nothing of it.
    assert rows["p010"]["link_use"] == ("link use: 80 % of the full-duplex bound, 85 % of the wire's "
                                        "(Ethernet framing x1.062 at MTU 1500)")
    assert float(rows["p010"]["overlap"]) == pytest.approx(1.35)
    assert rows["p010"]["schedule"] == "pipelined"
    # p009 has no --link-rate: its use comes from the file's own transfer bw between nodes
    # (the figure itself is checked in test_model.py).
    assert re.fullmatch(r"link use: \d+ % of the full-duplex bound at the measured [\d.]+ MB/s "
                        r"\(transfer bw at 1048576 B, median over \d+ inter-node pair\(s\)\)",
                        rows["p009"]["link_use"]), rows["p009"]["link_use"]
    png_size(out / "timeline_pi4x4.png")
    assert "Pipeline timeline: pi4x4 p009" in page  # --point p009 chose it


def test_transfer_statistics_unstable_points_and_link_maps(rich):
    out, page, _ = rich
    rows = read_csv(out / "transfer_p2p.csv")
    pp = [r for r in rows if r["run"] == "pi4x4" and r["test"] == "pingpong"]
    assert pp[2]["unstable"].startswith("unstable") and not pp[3]["unstable"]
    for col in ("t avg over reps", "t min over reps", "t max over reps", "t p95 over reps"):
        assert col in page
    assert "t avg over ranks" in page and "t max over ranks" in page
    assert "pingpong at 16 B" in _block(page, "readfirst")
    slow = read_csv(out / "slow_links_pi4x4.csv")
    assert [(r["map"], r["sender"], r["receiver"]) for r in slow] == [("pairs_shift", "pi1:r1", "pi0:r0")]
    assert float(slow[0]["ratio"]) == pytest.approx(0.6, rel=0.02)
    png_size(out / "transfer_links_pi4x4.png")


def test_dfft_section(rich):
    out, page, _ = rich
    rows = read_csv(out / "dfft.csv")
    assert [r["shape"] for r in rows] == ["64x64x64", "128x128x128"]
    assert all(float(r["gflops"]) > 0 and float(r["transpose_s"]) > 0 for r in rows)
    png_size(out / "dfft.png")
    assert "id='dfft'" in page


def test_validated_forecast_prints_the_error(tmp_path):
    fixtures.node_scaling_set(tmp_path / "in", nodes=(1, 2, 4, 8))
    out = tmp_path / "r"
    proc = run_cli(str(tmp_path / "in"), "-o", str(out), "-q", "--max-nodes", "32")
    assert proc.returncode == 0, proc.stderr
    page = (out / "index.html").read_text(encoding="utf-8")
    assert "error on the held-out 8 nodes" in page and "fitted on 1, 2, 4 nodes" in page
    checks = read_csv(out / "forecast_check.csv")
    assert len(checks) == 5 and all(float(r["error"]) <= 0.25 for r in checks)
    assert max(int(r["nodes"]) for r in read_csv(out / "forecast.csv")) == 32
    png_size(out / "forecast.png")
    md = (out / "summary.md").read_text(encoding="utf-8")
    assert "forecast" not in md.split("## Findings", 1)[-1].split("## ", 1)[0].lower()


@pytest.mark.parametrize("nodes, brk, words", [
    ((1, 2, 4, 8), True, "more than 25 %"),
    ((1, 2), False, "three or more node counts"),
    ((2,), False, "three or more node counts"),
])
def test_forecast_is_suppressed(tmp_path, nodes, brk, words):
    fixtures.node_scaling_set(tmp_path / "in", nodes=nodes, model_break=brk)
    out = tmp_path / "r"
    proc = run_cli(str(tmp_path / "in"), "-o", str(out), "-q")
    assert proc.returncode == 0, proc.stderr
    page = (out / "index.html").read_text(encoding="utf-8")
    assert "Not enough data to forecast" in page and words in page
    assert not (out / "forecast.png").exists() and not (out / "forecast.csv").exists()


def test_two_baselines_bracket_the_run_and_show_drift(tmp_path):
    before = fixtures.write_run(tmp_path / "before.h5", fixtures.I5)
    after = fixtures.write_run(tmp_path / "after.h5", dataclasses.replace(
        fixtures.I5, label="i5-after", s_per_flop=fixtures.I5.s_per_flop * 1.3, seed=9,
        extra_attrs={"created_utc": "2024-05-01T13:00:00Z"}))
    ec2 = fixtures.write_run(tmp_path / "ec2.h5", fixtures.EC2)
    out = tmp_path / "r"
    proc = run_cli(str(ec2), "--baseline", str(after), "--baseline", str(before), "-o", str(out), "-q")
    assert proc.returncode == 0, proc.stderr
    page = (out / "index.html").read_text(encoding="utf-8")
    assert "once before (i5-baseline) and once after (i5-after)" in page
    rows = read_csv(out / "comparison.csv")
    assert rows and all(float(r["drift"]) > 0.05 for r in rows)
    assert all(float(r["speedup_ci_low"]) < float(r["speedup"]) < float(r["speedup_ci_high"])
               for r in rows)


def test_scaling_section_comes_from_one_call(tmp_path, monkeypatch):
    """The measured scaling plugs in through one call in each stage: derive.scaling.scaling_rows(runs),
    with the baselines left out, when the findings are derived (its table from
    find.tables.scaling.table), and render.plots.scaling.plot(rows, outdir) when the section draws."""
    import matplotlib.pyplot as plt

    from analysis.commands import report
    from analysis.derive import scaling
    from analysis.find.tables import Column, Table
    from analysis.find.tables import scaling as scaling_table
    from analysis.render.plots import scaling as scaling_plot

    calls = []
    rows = [{"ranks": 1}]

    def scaling_rows(runs):
        calls.append([r.name for r in runs])
        return rows, ["one note from scaling"]

    def plot(given, outdir):
        calls.append(("plot", given == rows))
        (outdir / "scaling.png").write_bytes((tmp_path / "one.png").read_bytes())
        return "scaling.png"

    fig = plt.figure(figsize=(4, 3))
    fig.savefig(tmp_path / "one.png")
    plt.close(fig)
    monkeypatch.setattr(scaling, "scaling_rows", scaling_rows)
    monkeypatch.setattr(scaling_plot, "plot", plot)
    monkeypatch.setattr(scaling_table, "table", lambda given: Table(
        "scaling", "Scaling", [Column("ranks", "ranks", "int")], list(given)))
    fixtures.write_run(tmp_path / "in" / "i5.h5", fixtures.I5)
    fixtures.write_run(tmp_path / "in" / "pi.h5", fixtures.PI)
    out = tmp_path / "r"
    assert report.main([str(tmp_path / "in"), "-o", str(out), "-q"]) == 0
    assert len(calls) == 2 and "i5-baseline" not in calls[0] and calls[0]
    assert calls[1] == ("plot", True)
    page = (out / "index.html").read_text(encoding="utf-8")
    assert "id='scaling'" in page and "one note from scaling" in page
    assert 'data-file="scaling.png"' in page
