"""External power meter logs (`--power-log NODE=FILE.csv`, `all=FILE.csv`): a smart
plug's or USB meter's CSV export of time and watts, read and integrated over the
repetitions of a run (docs/energy.md).

A log is a list of samples; the power between two samples is taken as the straight
line between them (the trapezoid rule). A stretch of the log that cannot be trusted
(time going backwards, negative watts) is a `bad` span: a repetition that touches one
is unmeasured, never patched.
"""

from __future__ import annotations

import csv
import datetime as dt
import io
import re
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path

import numpy as np

TIME_NAMES = ("time", "timestamp", "date", "datetime", "date_time", "time_utc", "utc", "ts",
              "unix", "epoch", "unix_time", "time_s", "seconds")
WATT_NAMES = ("watts", "watt", "w", "power", "power_w", "active_power", "apower", "p",
              "real_power", "power_watts", "load_w")
VOLT_NAMES = ("volts", "volt", "v", "voltage", "voltage_v", "u")
AMP_NAMES = ("amps", "amp", "a", "current", "current_a", "i", "ampere", "amperes")
GAP_PERIODS = 10  # a step longer than this many median periods is a gap, not a measurement
_SCALE = {"m": 1e-3, "k": 1e3, "": 1.0}


@dataclass
class Log:
    """One meter log: samples in file order."""

    path: Path
    node: str  # a hostname, or "all"
    t_utc: np.ndarray  # s since 1970-01-01 UTC
    watts: np.ndarray
    skipped_lines: int = 0
    columns: str = ""  # how the columns were read, e.g. "timestamp, power (W)"
    error: str = ""  # why the log could not be read at all
    bad: list[tuple[float, float, str]] = field(default_factory=list)  # (t0, t1, why)
    problems: list[str] = field(default_factory=list)  # named warnings, one per kind

    @property
    def usable(self) -> bool:
        return not self.error and self.t_utc.size >= 2

    @property
    def span(self) -> tuple[float, float]:
        return (float(np.nanmin(self.t_utc)), float(np.nanmax(self.t_utc))) if self.usable \
            else (float("nan"), float("nan"))

    @cached_property
    def increasing(self) -> bool:
        return bool(np.all(np.diff(self.t_utc) > 0))

    @cached_property
    def period_s(self) -> float:
        """Median time between samples."""
        steps = np.diff(self.t_utc)
        steps = steps[steps > 0]
        return float(np.median(steps)) if steps.size else float("nan")

    @cached_property
    def period_err_s(self) -> float:
        """The spread of the sampling period (the meter's jitter): its standard deviation."""
        steps = np.diff(self.t_utc)
        steps = steps[(steps > 0) & (steps <= GAP_PERIODS * self.period_s)]
        return float(np.std(steps)) if steps.size > 1 else float("nan")


def _norm(name: str) -> tuple[str, str]:
    """A header cell as (bare name, unit prefix): 'Power (mW)' -> ('power', 'm')."""
    text = name.strip().strip('"').lower()
    unit = ""
    m = re.search(r"[\(\[]\s*([mk]?)(w|v|a|s|utc)\s*[\)\]]", text)
    if m:
        unit = m.group(1)
        text = text[:m.start()] + text[m.end():]
    text = re.sub(r"[^a-z0-9]+", "_", text).strip("_")
    m = re.fullmatch(r"(.+?)_(ms|us|s)", text)
    if m and m.group(1) in TIME_NAMES:  # the magnitude tells seconds from ms and us
        return m.group(1), ""
    m = re.fullmatch(r"(.*?)_?(mw|kw|ma|mv)", text)
    if m and m.group(1) in ("", "power", "current", "voltage", "load"):
        unit = m.group(2)[0]
        text = (m.group(1) or {"w": "power", "a": "current", "v": "voltage"}[m.group(2)[1]])
    return text, unit


def _number(cell: str, decimal_comma: bool) -> float:
    text = cell.strip().strip('"')
    if decimal_comma:
        text = text.replace(",", ".")
    text = re.sub(r"\s*[wva]$", "", text, flags=re.I)  # "6.1 W": the header gives the unit
    try:
        return float(text)
    except ValueError:
        return float("nan")


def parse_time(cell: str) -> float:
    """Unix seconds (also milliseconds or microseconds, told by size) or ISO 8601
    (UTC unless the text names an offset) -> s since 1970-01-01 UTC; NaN if neither."""
    text = cell.strip().strip('"')
    try:
        value = float(text)
    except ValueError:
        value = float("nan")
    if np.isfinite(value):
        if value > 1e14:  # microseconds since 1970
            return value / 1e6
        if value > 1e11:  # milliseconds since 1970
            return value / 1e3
        return value
    iso = text.replace("/", "-")
    if iso.endswith(("Z", "z")):
        iso = iso[:-1] + "+00:00"
    try:
        when = dt.datetime.fromisoformat(iso)
    except ValueError:
        return float("nan")
    if when.tzinfo is None:
        when = when.replace(tzinfo=dt.timezone.utc)
    return when.timestamp()


def _delimiter(lines: list[str]) -> str:
    sample = [ln for ln in lines if ln.strip() and not ln.lstrip().startswith("#")][:20]
    counts = {d: sum(ln.count(d) for ln in sample) for d in (";", "\t", ",")}
    if counts[";"] and counts[";"] >= min(counts[","], len(sample)):
        return ";"
    if counts["\t"] and counts["\t"] >= len(sample):
        return "\t"
    return ","


def _pick(names: list[tuple[str, str]], wanted: tuple[str, ...]) -> int:
    for want in wanted:
        for k, (name, _unit) in enumerate(names):
            if name == want:
                return k
    return -1


def read(path: Path, node: str) -> Log:
    """Read a meter log. A log that cannot be read at all gets `error` set; bad
    samples are found by `check`."""
    log = Log(path=Path(path), node=node, t_utc=np.zeros(0), watts=np.zeros(0))
    try:
        text = Path(path).read_text(encoding="utf-8-sig", errors="replace")
    except OSError as exc:
        log.error = f"cannot be read ({exc.strerror or exc})"
        return log
    lines = text.splitlines()
    delim = _delimiter(lines)
    cells = csv.reader(io.StringIO(text), delimiter=delim)
    try:
        rows = [r for r in cells if r and any(c.strip() for c in r) and not r[0].lstrip().startswith("#")]
    except csv.Error as exc:
        # A corrupt export can hold a line of megabytes: csv stops at its field limit.
        log.error = f"cannot be parsed as CSV at line {cells.line_num} ({exc})"
        return log
    if not rows:
        log.error = "holds no rows"
        return log
    decimal_comma = delim == ";"
    first = rows[0]
    header = not (len(first) >= 2 and np.isfinite(parse_time(first[0]))
                  and np.isfinite(_number(first[1], decimal_comma)))
    if header:
        names = [_norm(c) for c in first]
        body = rows[1:]
    else:
        if len(first) != 2:
            log.error = (f"has {len(first)} columns and no header row; give a header "
                         "(time, watts or time, volts, amps)")
            return log
        names = [("time", ""), ("watts", "")]
        body = rows
    t_col = _pick(names, TIME_NAMES)
    w_col = _pick(names, WATT_NAMES)
    v_col, a_col = _pick(names, VOLT_NAMES), _pick(names, AMP_NAMES)
    date_col = _pick(names, ("date",))
    clock_col = _pick(names, ("time", "clock"))
    join_date = date_col >= 0 and clock_col >= 0 and date_col != clock_col
    if join_date:
        t_col = date_col
    if t_col < 0 or (w_col < 0 and (v_col < 0 or a_col < 0)):
        found = ", ".join(c.strip() for c in first) if header else "none"
        log.error = (f"has no time and watts columns (columns: {found}); name them e.g. "
                     "time,watts (or time,volts,amps)")
        return log
    used = [t_col, clock_col] if join_date else [t_col]
    used += [w_col] if w_col >= 0 else [v_col, a_col]
    log.columns = ", ".join(first[k].strip() for k in used) if header else "time, watts"
    times, watts = [], []
    for row in body:
        if len(row) <= max(used):
            log.skipped_lines += 1
            continue
        stamp = f"{row[date_col].strip()} {row[clock_col].strip()}" if join_date else row[t_col]
        t = parse_time(stamp)
        if w_col >= 0:
            w = _number(row[w_col], decimal_comma) * _SCALE[names[w_col][1]]
        else:
            w = (_number(row[v_col], decimal_comma) * _SCALE[names[v_col][1]]
                 * _number(row[a_col], decimal_comma) * _SCALE[names[a_col][1]])
        if not (np.isfinite(t) and np.isfinite(w)):
            log.skipped_lines += 1
            continue
        times.append(t)
        watts.append(w)
    log.t_utc = np.asarray(times, dtype=float)
    log.watts = np.asarray(watts, dtype=float)
    if log.t_utc.size < 2:
        log.error = f"holds {log.t_utc.size} usable sample(s); at least 2 are needed"
    check(log)
    return log


def _utc(t: float) -> str:
    return dt.datetime.fromtimestamp(t, dt.timezone.utc).strftime("%Y-%m-%d %H:%M:%S UTC")


def check(log: Log) -> None:
    """Find the stretches of the log that cannot be trusted: a time that does not
    increase (the pair of samples around it) and a negative reading (the steps on
    either side of it). Each kind is named once in `problems`."""
    t, w = log.t_utc, log.watts
    if t.size < 2:
        return
    back = np.flatnonzero(np.diff(t) <= 0)
    for k in back:
        log.bad.append((float(min(t[k], t[k + 1])), float(max(t[k], t[k + 1])),
                        "times not increasing"))
    if back.size:
        k = int(back[0])
        log.problems.append(f"times not increasing: sample {k + 2} ({_utc(t[k + 1])}) is not "
                            f"after sample {k + 1} ({_utc(t[k])}); {back.size} such step(s)")
    neg = np.flatnonzero(w < 0)
    for k in neg:
        lo, hi = t[max(0, k - 1)], t[min(t.size - 1, k + 1)]
        log.bad.append((float(min(lo, hi, t[k])), float(max(lo, hi, t[k])), "negative watts"))
    if neg.size:
        k = int(neg[0])
        log.problems.append(f"negative watts: {w[k]:g} W at sample {k + 1} ({_utc(t[k])}); "
                            f"{neg.size} negative sample(s)")


@dataclass
class Span:
    """The log over one repetition."""

    energy_j: float  # NaN unless the repetition lies wholly inside trusted samples
    coverage: float  # share of the repetition inside trusted steps of the log, 0..1
    bad: str  # why the repetition is unmeasured although the log covers it ("" if not)


def integrate(log: Log, t0: float, t1: float) -> Span:
    """Energy (J) of [t0, t1] by the trapezoid rule over the log's steps. Steps that
    are gaps (longer than GAP_PERIODS median periods) or untrusted are not covered."""
    nan = float("nan")
    if not log.usable or not t1 > t0:
        return Span(nan, 0.0, "")
    for lo, hi, why in log.bad:
        if lo <= t1 and hi >= t0:
            return Span(nan, _covered(log, t0, t1), why)
    t, w = log.t_utc, log.watts
    if log.increasing:  # the usual log: only the steps around [t0, t1]
        i0 = max(0, int(np.searchsorted(t, t0, "right")) - 1)
        i1 = min(t.size - 1, int(np.searchsorted(t, t1, "left")))
        t, w = t[i0:i1 + 1], w[i0:i1 + 1]
    a, b = t[:-1], t[1:]
    wa, wb = w[:-1], w[1:]
    ok = (b > a) & (b - a <= GAP_PERIODS * log.period_s) & (wa >= 0) & (wb >= 0)
    lo = np.maximum(a, t0)
    hi = np.minimum(b, t1)
    inside = ok & (hi > lo)
    if not inside.any():
        return Span(nan, 0.0, "")
    a, b, wa, wb, lo, hi = (x[inside] for x in (a, b, wa, wb, lo, hi))
    slope = (wb - wa) / (b - a)
    w_lo = wa + slope * (lo - a)
    w_hi = wa + slope * (hi - a)
    covered = float(np.sum(hi - lo)) / (t1 - t0)
    energy = float(np.sum((hi - lo) * (w_lo + w_hi) / 2))
    # a repetition only partly inside the log is not measured: the rest is not known
    return Span(energy if covered >= 1 - 1e-9 else nan, min(1.0, covered), "")


def _covered(log: Log, t0: float, t1: float) -> float:
    a, b = log.t_utc[:-1], log.t_utc[1:]
    ok = (b > a) & (b - a <= GAP_PERIODS * log.period_s)
    overlap = np.clip(np.minimum(b, t1) - np.maximum(a, t0), 0, None)
    return min(1.0, float(np.sum(overlap[ok])) / (t1 - t0))


def overlaps(log: Log, t0: float, t1: float) -> bool:
    lo, hi = log.span
    return log.usable and lo <= t1 and hi >= t0


def mean_watts(log: Log, t0: float, t1: float) -> float:
    """Mean power over [t0, t1] when the log covers all of it, else NaN."""
    span = integrate(log, t0, t1)
    return span.energy_j / (t1 - t0) if np.isfinite(span.energy_j) else float("nan")


def utc_text(t: float) -> str:
    return _utc(t) if np.isfinite(t) else "?"
