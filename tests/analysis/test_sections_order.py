"""Derive, then render: everything the page shows is computed before a section renders, so the
sections in any order give the same page, section by section, and the same lines above them;
and the sections themselves cannot compute (they import nothing that does)."""

from __future__ import annotations

import ast
import random
from pathlib import Path

import pytest

import fixtures
from analysis.derive import energy
from analysis.render import plots, sections
from analysis.find import tables
from analysis.find import derive_findings
from analysis.render.html import html_section
from analysis.render.md import md_section
from analysis.commands.report import build_parser, load_runs

SECTIONS_DIR = Path(sections.__file__).parent


def _orders():
    shuffled = list(sections.SECTIONS)
    random.Random(20).shuffle(shuffled)
    return {"page": sections.SECTIONS, "reversed": tuple(reversed(sections.SECTIONS)),
            "shuffled": tuple(shuffled)}


@pytest.fixture(scope="module")
def rendered(tmp_path_factory):
    """One rich input (paired baseline, pipeline, auto repetitions, link maps, dfft, power)
    derived once, rendered in three orders, each into its own folder and written out (as
    Markdown, HTML and CSV) before the next renders."""
    tmp = tmp_path_factory.mktemp("order")
    folder = tmp / "in"
    folder.mkdir()
    pi = fixtures.write_run(folder / "pi.h5", fixtures.PI)
    fixtures.write_run(folder / "i5.h5", fixtures.I5)
    fixtures.add_paired_baseline(pi, {f"p{i:03d}": 1.0 + 0.3 * i for i in range(10)})
    fixtures.add_pipeline(pi, "p003")
    fixtures.add_reps_auto(pi, "p002")
    fixtures.add_transfer_next(pi)
    fixtures.add_dfft(pi, 4)
    fixtures.add_power(pi, 5.0)
    args = build_parser().parse_args([str(folder), "-o", str(tmp / "out")])
    args.energy = energy.parse_options(args.power_log, args.price, args.kwh_price)
    runs, baselines, notes, errors = load_runs(args)
    assert not errors and baselines, errors
    plots.apply_style()
    ctx = derive_findings(args, runs, baselines)
    out = {}
    for name, order in _orders().items():
        outdir = tmp / name
        outdir.mkdir()
        rep = sections.render(ctx, notes, outdir, order)
        out[name] = (rep, _pages(rep, outdir), _csvs(rep, outdir))
    return out


def _pages(rep, outdir):
    """Each section (and the lead) as its Markdown and its HTML, figures embedded as PNG bytes."""
    secs = ([rep.lead] if rep.lead else []) + rep.sections
    return {s.anchor: ("\n".join(md_section(s)), "\n".join(html_section(s, outdir))) for s in secs}


def _csvs(rep, outdir):
    """Every table as the CSV text it writes, with its title, in a stable order."""
    out = []
    for k, t in enumerate(rep.tables):
        path = outdir / f"t{k}.csv"
        tables.write_csv(t, path)
        out.append((t.name, t.title, path.read_text(encoding="utf-8")))
    return sorted(out)


def test_the_orders_differ_and_cover_every_section(rendered):
    anchors = {name: [s.anchor for s in rep.sections] for name, (rep, _p, _c) in rendered.items()}
    assert len({tuple(a) for a in anchors.values()}) == 3
    assert {"fft", "pipeline", "baseline", "ranks", "transfer", "dfft", "model", "load",
            "energy"} <= set(anchors["page"])
    assert rendered["page"][0].lead.blocks[1][1].rows  # "What the cluster buys" has rows


def test_sections_in_another_order_give_the_same_figures(rendered):
    (a, _, csv_a), (b, _, csv_b), (c, _, csv_c) = rendered.values()
    assert csv_a == csv_b == csv_c
    assert a.study.rows == b.study.rows == c.study.rows
    row5 = next(r for r in a.study.rows if r["row"] == "5")
    assert "S " in row5["answer"] and "no baseline" not in row5["answer"]  # speedups reached it


def test_every_section_renders_the_same_in_any_order(rendered):
    """Whole sections, Markdown and HTML with the figures' PNG bytes: a section that took a
    figure from one rendered before it, or changed what it reads, differs here (all three
    orders render one Findings, so the later ones see whatever the first changed)."""
    pages = [p for _rep, p, _c in rendered.values()]
    assert pages[0] == pages[1] == pages[2]
    assert sum(html.count("data:image/png") for _md, html in pages[0].values()) >= 10


def test_read_first_notes_and_findings_keep_their_order(rendered):
    a, b, c = (rep for rep, _p, _c in rendered.values())
    assert a.warnings == b.warnings == c.warnings  # the same lines in the same order
    assert any("IMPLAUSIBLE" in w or "unstable" in w for w in a.warnings)
    assert a.notes == b.notes == c.notes
    assert list(a.findings.items()) == list(b.findings.items()) == list(c.findings.items())
    assert len(a.findings) >= 1 and sum(len(v) for v in a.findings.values()) >= 3


# What a section may import: the document model, the Findings it formats, the drawing of
# figures (plots), never numpy or a module that computes.
ALLOWED = {"document": None, "find": {"Findings"}, "find.common": {"bold"}}
ALLOWED_MODULES = {"plots"}  # from .. import plots (render/plots)
# Attributes of the runs and of shared statistics that only the derive stage reads.
RAW = {"stats", "extra", "attrs", "hosts", "path", "groups", "load_steps", "pairs_all"}


def section_problems(source: str, wiring: bool = False) -> list[str]:
    """What a section module does that only the derive stage should. `wiring`: the package's
    __init__, which also calls derive_findings (argparse, pathlib and Run for its signature)."""
    allowed = (dict(ALLOWED, find={"Findings", "derive_findings"}, **{"read.runs": {"Run"}}) if wiring
               else ALLOWED)
    problems = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            problems += [f"import {a.name}" for a in node.names
                         if not (wiring and a.name == "argparse")]
        elif isinstance(node, ast.ImportFrom):
            if node.level == 0:
                if node.module not in ("__future__", *(("pathlib",) if wiring else ())):
                    problems.append(f"from {node.module} import")
            elif node.level == 1:
                continue  # a sibling section
            elif node.module is None:
                problems += [f"from {'.' * node.level} import {a.name}" for a in node.names
                             if a.name not in ALLOWED_MODULES]
            elif node.module not in allowed:
                problems.append(f"from {'.' * node.level}{node.module} import")
            elif allowed[node.module] is not None:
                problems += [f"from {'.' * node.level}{node.module} import {a.name}" for a in node.names
                             if a.name not in allowed[node.module]]
        elif isinstance(node, ast.Attribute) and node.attr in RAW:
            problems.append(f"reads .{node.attr} (line {node.lineno})")
        elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
              and node.func.id in ("max", "min", "sorted", "sum")):
            problems.append(f"computes {node.func.id}() (line {node.lineno})")
    return problems


def test_sections_import_nothing_that_computes():
    found = {p.name: section_problems(p.read_text(encoding="utf-8"), p.name == "__init__.py")
             for p in sorted(SECTIONS_DIR.glob("*.py"))}
    assert len(found) >= 8
    assert {name: probs for name, probs in found.items() if probs} == {}


def test_the_scan_catches_a_section_that_computes():
    bad = ("import numpy as np\nfrom ... import derive\nfrom .. import plots\n"
           "from ...find.tables import fft_points\nfrom ...find import Findings, as_int\n"
           "def s(rep, ctx):\n    best = max(ctx.stats['a'], key=len)\n    return np.nan\n")
    assert section_problems(bad) == [
        "import numpy", "from ... import derive", "from ...find.tables import",
        "from ...find import as_int", "computes max() (line 7)", "reads .stats (line 7)"]
    assert section_problems("from .. import plots\nfrom ..document import Report\n") == []
    wiring = "import argparse\nfrom ...find import derive_findings\nfrom ...find import tables\n"
    assert section_problems(wiring, wiring=True) == ["from ...find import tables"]
    assert section_problems(wiring) == ["import argparse", "from ...find import derive_findings",
                                        "from ...find import tables"]


def test_no_analysis_module_is_over_500_lines():
    root = SECTIONS_DIR.parents[1]
    long = {str(p.relative_to(root)): n for p in root.rglob("*.py")
            if (n := len(p.read_text(encoding="utf-8").splitlines())) > 500}
    assert long == {}
