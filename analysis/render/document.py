"""The report's document model: a Report of Sections, each a list of blocks (a paragraph,
bullets, a table, a figure), built by analysis.sections and written by render_html and
render_md.

Text in the blocks is plain text in which **x** marks bold; each renderer turns that into
its own markup.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from pathlib import Path

from .. import SCHEMA
from . import plots
from ..derive.energy import Result as EnergyResult
from ..read.runs import Run
from ..find.tables import Table


@dataclass
class Section:
    anchor: str
    title: str
    nav: str = ""  # short name in the navigation bar
    blocks: list[tuple[str, object]] = field(default_factory=list)  # ("p"|"ul"|"table"|"figure", payload)

    def para(self, text: str) -> None:
        self.blocks.append(("p", text))

    def bullets(self, items: list[str]) -> None:
        if items:
            self.blocks.append(("ul", items))

    def table(self, t: Table) -> None:
        self.blocks.append(("table", t))

    def figure(self, f: plots.Figure | None) -> None:
        if f is not None:
            self.blocks.append(("figure", f))


@dataclass
class Report:
    title: str
    outdir: Path
    runs: list[Run]
    baselines: list[Run]
    # the lines above the sections, as analysis.find chose them
    warnings: list[str] = field(default_factory=list)  # "Read first": real warnings only
    notes: list[str] = field(default_factory=list)  # expected notices
    findings: dict[str, list[str]] = field(default_factory=dict)  # run name -> headline findings
    study: Table | None = None
    sections: list[Section] = field(default_factory=list)
    energy: EnergyResult = field(default_factory=EnergyResult)
    lead: Section | None = None  # "What the cluster buys", above everything else
    upgrade: Section | None = None  # "What an upgrade buys", right after it

    def section(self, anchor: str, title: str, nav: str = "") -> Section:
        sec = Section(anchor, title, nav or title)
        self.sections.append(sec)
        return sec

    @property
    def tables(self) -> list[Table]:
        found = [self.study] if self.study is not None else []
        secs = [s for s in (self.lead, self.upgrade) if s] + self.sections
        return found + [b[1] for s in secs for b in s.blocks if b[0] == "table"]  # type: ignore[misc]

    @property
    def figures(self) -> list[plots.Figure]:
        return [b[1] for s in self.sections for b in s.blocks if b[0] == "figure"]  # type: ignore[misc]


def generated(rep: Report) -> str:
    now = dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    return (f"Generated {now} from {len(rep.runs)} result file(s) (schema {SCHEMA}). Tables "
            "are also in CSV beside this page; summary.md has the same content in Markdown. "
            "kB = 1000 bytes throughout.")
