"""The Table model (columns, rows) and its rendering: human units for the page, raw SI numbers for CSV."""

from __future__ import annotations

import csv
import math
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ...derive import stats


@dataclass
class Column:
    key: str
    header: str
    kind: str = "text"  # text, int, float, time, pct, ratio, bytes, rate, summary, Bps


@dataclass
class Table:
    name: str  # CSV file stem
    title: str
    columns: list[Column]
    rows: list[dict[str, Any]]
    note: str = ""
    html_rows: list[dict[str, Any]] | None = None  # a shorter selection for the page
    transpose: bool = False  # show one column per row (for a few wide rows)
    html_columns: list[str] | None = None  # keys shown on the page (the CSV has every column)

    @property
    def shown_rows(self) -> list[dict[str, Any]]:
        return self.rows if self.html_rows is None else self.html_rows

    @property
    def shown_columns(self) -> list[Column]:
        if self.html_columns is None:
            return self.columns
        return [c for c in self.columns if c.key in self.html_columns]


NUMERIC = {"int", "float", "time", "pct", "ratio", "bytes", "rate", "summary", "Bps", "ci"}


def _finite(value: Any) -> bool:
    try:
        return value is not None and math.isfinite(float(value))
    except (TypeError, ValueError):
        return False


def fmt_time(seconds: Any) -> str:
    if not _finite(seconds):
        return "–"
    s = float(seconds)
    for scale, unit in ((1.0, "s"), (1e-3, "ms"), (1e-6, "µs"), (1e-9, "ns")):
        if abs(s) >= scale or unit == "ns":
            return f"{s / scale:.3g} {unit}"
    return f"{s:.3g} s"


def fmt_bytes(n: Any) -> str:
    if not _finite(n):
        return "–"
    v = float(n)
    for scale, unit in ((1e9, "GB"), (1e6, "MB"), (1e3, "kB")):
        if abs(v) >= scale:
            return f"{v / scale:.3g} {unit}"
    return f"{v:.0f} B"


def fmt_bps(v: Any) -> str:
    if not _finite(v):
        return "–"
    v = float(v)
    for scale, unit in ((1e9, "GB/s"), (1e6, "MB/s"), (1e3, "kB/s")):
        if abs(v) >= scale:
            return f"{v / scale:.3g} {unit}"
    return f"{v:.3g} B/s"


def fmt_load(value: float, unit: str) -> str:
    """A load step's load: '1 client', '4 clients', '12 req/s'."""
    if unit == "clients" and value == 1:
        unit = "client"
    return f"{value:g} {unit}"


def fmt_ratio(v: Any) -> str:
    if not _finite(v):
        return "–"
    v = float(v)
    return f"{v:,.0f}" if abs(v) >= 1000 else f"{v:.3g}"


@dataclass
class Ci:
    """A value with its 95 % CI, for a table cell."""

    value: float
    lo: float
    hi: float
    fmt: str = "ratio"  # or "time"

    def parts(self) -> tuple[str, str]:
        f = fmt_time if self.fmt == "time" else fmt_ratio
        if not _finite(self.value):
            return "–", ""
        return f(self.value), f"[{f(self.lo)}, {f(self.hi)}]"


def _short(v: float) -> str:
    return f"{v:.3g}" if abs(v) < 1000 else f"{v:.0f}"


def render_parts(value: Any, kind: str) -> tuple[str, str]:
    """A cell as (main text, detail for a second line or a tooltip)."""
    if value is None:
        return "–", ""
    if kind == "summary":
        s: stats.Summary = value
        if s.n == 0:
            return "–", ""
        main = fmt_time(s.median)
        # the CI in the median's unit, so that the second line stays short
        unit = main.split()[-1]
        scale = {"s": 1.0, "ms": 1e-3, "µs": 1e-6, "ns": 1e-9}.get(unit, 1.0)
        cv = "" if not _finite(s.cv) else f" cv {s.cv * 100:.1f}%"
        return main, f"[{_short(s.ci_lo / scale)}, {_short(s.ci_hi / scale)}]{cv}"
    if kind == "ci":
        return value.parts()
    return render(value, kind), ""


def render(value: Any, kind: str) -> str:
    """A value as shown to a person."""
    if value is None:
        return "–"
    if kind in ("summary", "ci"):
        main, detail = render_parts(value, kind)
        return f"{main} {detail}".strip()
    if kind == "time":
        return fmt_time(value)
    if kind == "bytes":
        return fmt_bytes(value)
    if kind == "Bps":
        return fmt_bps(value)
    if kind == "pct":
        return f"{float(value) * 100:.1f} %" if _finite(value) else "–"
    if kind in ("float", "ratio", "rate"):
        return fmt_ratio(value)
    if kind == "int":
        return f"{int(value)}" if _finite(value) else "–"
    return str(value)


def csv_cells(value: Any, kind: str, key: str) -> dict[str, str]:
    """The CSV cells for one value: raw numbers; a summary becomes five columns."""
    if kind == "summary":
        s: stats.Summary | None = value
        names = ("median_s", "ci_lo_s", "ci_hi_s", "cv", "n")
        if s is None:
            return {f"{key}_{n}": "" for n in names}
        vals = (s.median, s.ci_lo, s.ci_hi, s.cv, s.n)
        return {f"{key}_{n}": _raw(v) for n, v in zip(names, vals)}
    if kind == "ci":
        c: Ci | None = value
        unit = "_s" if c is not None and c.fmt == "time" else ""
        vals = (None, None, None) if c is None else (c.value, c.lo, c.hi)
        return {f"{key}{unit}": _raw(vals[0]), f"{key}_ci_low{unit}": _raw(vals[1]),
                f"{key}_ci_high{unit}": _raw(vals[2])}
    suffix = {"time": "_s", "bytes": "_bytes", "Bps": "_Bps"}.get(kind, "")
    named = key.endswith(suffix) or key == suffix.lstrip("_")  # already says its unit
    return {key + ("" if named else suffix): _raw(value)}


def _raw(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, (bool, np.bool_)):
        return "1" if value else "0"
    if isinstance(value, (int, np.integer)):
        return str(int(value))
    if isinstance(value, (float, np.floating)):
        return "" if not math.isfinite(float(value)) else f"{float(value):.9g}"
    return str(value)


def write_csv(table: Table, path: Path) -> None:
    with open(path, "w", newline="", encoding="utf-8") as fh:
        writer = None
        for row in table.rows:
            cells: dict[str, str] = {}
            for col in table.columns:
                cells.update(csv_cells(row.get(col.key), col.kind, col.key))
            if writer is None:
                writer = csv.DictWriter(fh, fieldnames=list(cells))
                writer.writeheader()
            writer.writerow(cells)
        if writer is None:
            header: dict[str, str] = {}
            for col in table.columns:
                header.update(csv_cells(None, col.kind, col.key))
            csv.writer(fh).writerow(list(header))


def workload(nfiles: Any, seconds: Any, input_bytes: Any) -> str:
    """'4 × 5 s files (1.76 MB)' or '1 s file (88.2 kB)'."""
    n = int(nfiles) if _finite(nfiles) else 0
    secs = f"{float(seconds):g} s" if _finite(seconds) else "?"
    what = f"{n} × {secs} files" if n > 1 else f"{secs} file"
    return f"{what} ({fmt_bytes(input_bytes)})"


def slug(name: str) -> str:
    """A file-name-safe form of a run name."""
    out = re.sub(r"[^A-Za-z0-9._-]+", "_", name).strip("_.")
    return out[:60] or "run"
