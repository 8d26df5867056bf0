"""Derive, then render: every shared figure is computed before a section renders, so the
sections in another order give the same tables, CSVs, headline findings and summary rows."""

from __future__ import annotations

import fixtures
from analysis import energy, plots, sections, tables
from analysis.report import build_parser, load_runs


def _build(folder, outdir, order):
    args = build_parser().parse_args([str(folder), "-o", str(outdir)])
    args.energy = energy.parse_options(args.power_log, args.price, args.kwh_price)
    runs, baselines, notes, errors = load_runs(args)
    assert not errors and baselines, errors
    outdir.mkdir()
    plots.apply_style()
    return sections.build(args, runs, baselines, notes, outdir, order)


def _csvs(rep, outdir):
    """Every table as the CSV text it writes, with its title, in a stable order."""
    out = []
    for k, t in enumerate(rep.tables):
        path = outdir / f"t{k}.csv"
        tables.write_csv(t, path)
        out.append((t.name, t.title, path.read_text(encoding="utf-8")))
    return sorted(out)


def test_sections_in_another_order_give_the_same_figures(tmp_path):
    folder = tmp_path / "in"
    folder.mkdir()
    pi = fixtures.write_run(folder / "pi.h5", fixtures.PI)
    fixtures.write_run(folder / "i5.h5", fixtures.I5)
    fixtures.add_paired_baseline(pi, {f"p{i:03d}": 1.0 + 0.3 * i for i in range(10)})
    # the speedup, buys and load sections share figures; render them first and last
    reordered = tuple(reversed(sections.SECTIONS))
    assert reordered.index(sections.buys_section) < reordered.index(sections.baseline_section)
    a = _build(folder, tmp_path / "a", sections.SECTIONS)
    b = _build(folder, tmp_path / "b", reordered)
    assert [s.anchor for s in b.sections] != [s.anchor for s in a.sections]
    assert _csvs(a, tmp_path / "a") == _csvs(b, tmp_path / "b")
    assert {k: sorted(v) for k, v in a.findings.items()} == {k: sorted(v) for k, v in b.findings.items()}
    assert a.study.rows == b.study.rows
    row5 = next(r for r in a.study.rows if r["row"] == "5")
    assert "S " in row5["answer"] and "no baseline" not in row5["answer"]  # speedups reached it
    # "What the cluster buys" (its table is among the CSVs above; NaN cells never compare equal)
    text = [[blk for blk in rep.lead.blocks if blk[0] != "table"] for rep in (a, b)]
    assert text[0] == text[1] and a.lead.blocks[1][1].rows
    assert sorted(a.warnings) == sorted(b.warnings) and sorted(a.notes) == sorted(b.notes)
