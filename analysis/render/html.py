"""The report as one self-contained HTML page (analysis/page.html, a string.Template;
figures embedded as data: URIs)."""

from __future__ import annotations

import base64
import html
import re
import string
from pathlib import Path

from . import plots
from ..find import tables
from .document import Report, Section, generated
from ..find.tables import Table


FOLD_ROWS = 24  # longer tables are folded on the page (the CSV and summary.md have them whole)
TEMPLATE = Path(__file__).parent / "page.html"


def _inline(text: str) -> str:
    """Report text markup to HTML: escape, then **x** to <b>x</b>."""
    return re.sub(r"\*\*(.+?)\*\*", r"<b>\1</b>", html.escape(str(text)))


def _cell_class(text: str, kind: str) -> str:
    classes = []
    if kind in tables.NUMERIC:
        classes.append("num")
    if len(text) < 80 and any(w in text for w in ("INVALID", "STRAGGLER", "FAILED", "PARTIAL",
                                                  "IMPLAUSIBLE")):
        classes.append("bad")
    elif text.startswith("unstable") or text.startswith("no ("):
        classes.append("warncell")
    return f' class="{" ".join(classes)}"' if classes else ""


def _html_cell(value: object, kind: str) -> str:
    main, detail = tables.render_parts(value, kind)
    cls = _cell_class(main + detail, kind)
    if detail:
        return (f'<td{cls} title="{html.escape(detail)}">{html.escape(main)}'
                f'<span class="ci">{html.escape(detail)}</span></td>')
    return f"<td{cls}>{html.escape(main)}</td>"


def html_table(t: Table) -> str:
    out = [f"<h3>{html.escape(t.title)} <span class='meta'>(<a href='{html.escape(t.name)}.csv'>"
           f"{html.escape(t.name)}.csv</a>, {len(t.rows)} rows)</span></h3>"]
    if t.note:
        out.append(f"<p class='meta'>{_inline(t.note)}</p>")
    rows = t.shown_rows
    if not rows:
        out.append("<p class='meta'>(no rows)</p>")
        return "\n".join(out)
    cols = t.shown_columns
    folded = len(rows) > FOLD_ROWS
    if folded:  # long tables stay one click away, so the page stays short
        out.append(f"<details><summary>show the {len(rows)} rows</summary>")
    out.append("<div class='tablewrap'><table>")
    if t.transpose:
        out.append("<tbody>")
        for c in cols:
            out.append(f"<tr><th>{html.escape(c.header)}</th>"
                       + "".join(_html_cell(row.get(c.key), c.kind) for row in rows) + "</tr>")
    else:
        out.append("<thead><tr>" + "".join(f"<th>{html.escape(c.header)}</th>" for c in cols)
                   + "</tr></thead><tbody>")
        for row in rows:
            out.append("<tr>" + "".join(_html_cell(row.get(c.key), c.kind) for c in cols) + "</tr>")
    out.append("</tbody></table></div>")
    if folded:
        out.append("</details>")
    return "\n".join(out)


def html_figure(f: plots.Figure, outdir: Path) -> str:
    data = base64.b64encode((outdir / f.file).read_bytes()).decode("ascii")
    marker = "this.setAttribute('data-missing','1');document.body.setAttribute('data-images-missing','1')"
    return (f"<figure><img src=\"data:image/png;base64,{data}\" alt=\"{html.escape(f.title)}\" "
            f"data-file=\"{html.escape(f.file)}\" onerror=\"{marker}\">"
            f"<figcaption><b>{html.escape(f.title)}</b> ({html.escape(f.file)}). "
            f"{_inline(f.caption)}</figcaption></figure>")


def _html_list(cls: str, title: str, items: list[str], anchor: str = "") -> str:
    if not items:
        return ""
    ident = f" id='{anchor}'" if anchor else ""
    return (f"<div class='{cls}'{ident}><b>{html.escape(title)}</b><ul>"
            + "".join(f"<li>{_inline(i)}</li>" for i in items) + "</ul></div>")


def _nav(rep: Report) -> list[tuple[str, str]]:
    items = [(s.anchor, s.nav) for s in (rep.lead, rep.upgrade) if s]
    items += [("readfirst", "Read first")] if rep.warnings else []
    items.append(("summary", "Summary"))
    return items + [(s.anchor, s.nav) for s in rep.sections]


def html_section(sec: Section, outdir: Path) -> list[str]:
    body = [f"<h2 id='{sec.anchor}'>{html.escape(sec.title)}</h2>"]
    for kind, payload in sec.blocks:
        if kind == "p":
            body.append(f"<p>{_inline(payload)}</p>")
        elif kind == "ul":
            body.append("<ul>" + "".join(f"<li>{_inline(i)}</li>" for i in payload) + "</ul>")  # type: ignore[union-attr]
        elif kind == "table":
            body.append(html_table(payload))  # type: ignore[arg-type]
        elif kind == "figure":
            body.append(html_figure(payload, outdir))  # type: ignore[arg-type]
    return body


def render_html(rep: Report) -> str:
    body = [line for sec in rep.sections for line in html_section(sec, rep.outdir)]
    lead = "\n".join(line for s in (rep.lead, rep.upgrade) if s for line in html_section(s, rep.outdir))
    findings = ""
    if rep.findings:
        findings = ("<div class='findings'><b>Findings</b><ul>"
                    + "".join(f"<li><b>{html.escape(run)}</b><ul>"
                              + "".join(f"<li>{_inline(f)}</li>" for f in items) + "</ul></li>"
                              for run, items in rep.findings.items()) + "</ul></div>")
    summary = "<h2 id='summary'>Summary</h2>" + (html_table(rep.study) if rep.study else "")
    page = string.Template(TEMPLATE.read_text(encoding="utf-8"))
    return page.substitute(
        title=html.escape(rep.title), generated=html.escape(generated(rep)),
        nav="".join(f"<a href='#{a}'>{html.escape(t)}</a>" for a, t in _nav(rep)),
        warnings=lead + _html_list("warn", "Read first", rep.warnings, "readfirst"),
        summary=summary, findings=findings, notes=_html_list("notes", "Notes", rep.notes),
        body="\n".join(body))
