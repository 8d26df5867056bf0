"""The report as summary.md: the same blocks as the page, in Markdown, linking the PNGs."""

from __future__ import annotations

from . import plots
from ..find import tables
from .document import Report, Section, generated
from ..find.tables import Table


def md_table(t: Table) -> str:
    rows = t.shown_rows
    lines = [f"### {t.title}", "", f"CSV: [{t.name}.csv]({t.name}.csv), {len(t.rows)} rows.", ""]
    if t.note:
        lines += [f"_{t.note}_", ""]
    if not rows:
        return "\n".join(lines + ["(no rows)", ""])
    esc = lambda s: str(s).replace("|", "\\|").replace("\n", " ")  # noqa: E731
    cols = t.shown_columns
    if t.transpose:
        lines.append("| | " + " | ".join(esc(r.get(cols[0].key, "")) for r in rows) + " |")
        lines.append("|---|" + "---|" * len(rows))
        for c in cols[1:]:
            lines.append(f"| {esc(c.header)} | "
                         + " | ".join(esc(tables.render(r.get(c.key), c.kind)) for r in rows) + " |")
        return "\n".join(lines + [""])
    lines.append("| " + " | ".join(esc(c.header) for c in cols) + " |")
    lines.append("|" + "".join("---:|" if c.kind in tables.NUMERIC else "---|" for c in cols))
    for row in rows:
        lines.append("| " + " | ".join(esc(tables.render(row.get(c.key), c.kind))
                                       for c in cols) + " |")
    return "\n".join(lines + [""])


def md_section(sec: Section) -> list[str]:
    out = [f"## {sec.title}", ""]
    for kind, payload in sec.blocks:
        if kind == "p":
            out += [str(payload), ""]
        elif kind == "ul":
            out += [f"- {i}" for i in payload] + [""]  # type: ignore[union-attr]
        elif kind == "table":
            out.append(md_table(payload))  # type: ignore[arg-type]
        elif kind == "figure":
            f: plots.Figure = payload  # type: ignore[assignment]
            out += [f"![{f.title}]({f.file})", "", f"_{f.caption}_" if f.caption else "", ""]
    return out


def render_md(rep: Report) -> str:
    out = [f"# {rep.title}", "", generated(rep) + " The page with the figures is index.html.", ""]
    out += md_section(rep.lead) if rep.lead else []
    out += md_section(rep.upgrade) if rep.upgrade else []
    if rep.warnings:
        out += ["## Read first", ""] + [f"- {w}" for w in rep.warnings] + [""]
    out += ["## Summary", ""]
    if rep.study is not None:
        out.append(md_table(rep.study))
    if rep.findings:
        out += ["## Findings", ""]
        for run, items in rep.findings.items():
            out += [f"- **{run}**"] + [f"  - {f}" for f in items]
        out.append("")
    if rep.notes:
        out += ["## Notes", ""] + [f"- {n}" for n in rep.notes] + [""]
    for sec in rep.sections:
        out += md_section(sec)
    return "\n".join(out)
