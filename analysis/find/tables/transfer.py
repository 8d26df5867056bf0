"""The transfer statistics, pairs matrix and slow-link tables."""

from __future__ import annotations

from ... import derive
from ...read.runs import Run
from .base import Column, Table, slug


def transfer_stats(items: list[derive.TransferStats], name: str, title: str) -> Table:
    """Point to point and ring: statistics over repetitions; collectives: over ranks."""
    rows = []
    collective = any(t.kind == "collective" for t in items)
    for t in items:
        for i, m in enumerate(t.bytes):
            row = {"run": t.run.name, "test": t.test, "bytes": float(m),
                   "unstable": "unstable (CV > 5 %)" if t.unstable[i] else ""}
            for key, arr in t.columns.items():
                row[key] = arr[i]
            rows.append(row)
    if collective:
        cols = [Column("t_avg", "t avg over ranks", "time"),
                Column("t_max", "t max over ranks", "time"),
                Column("t_min", "t min over ranks", "time"),
                Column("t_med", "t median over ranks", "time")]
        if any("t_p95" in t.columns for t in items):
            cols.append(Column("t_p95", "t p95 over ranks", "time"))
        cols.append(Column("cv", "CV over reps (slowest rank)", "pct"))
        note = ("Each rank's mean over repetitions, then reduced over ranks: avg (as OSU), max "
                "(IMB's t_max), min and median. CV: standard deviation / mean over the "
                "repetitions of the slowest rank.")
    else:
        cols = [Column("t_avg", "t avg over reps", "time"),
                Column("t_min", "t min over reps", "time"),
                Column("t_max", "t max over reps", "time"),
                Column("t_med", "t median over reps", "time"),
                Column("t_p95", "t p95 over reps", "time"),
                Column("cv", "CV over reps", "pct")]
        note = ("Statistics over repetitions, as OSU prints them (avg, min, max) plus median and "
                "p95; with several pairs the median pair's value (CV: the largest over pairs).")
    windowed = sorted({derive.send_rule(t.run.transfer[t.test].attrs) for t in items
                       if t.test in ("bw", "bibw") and t.test in t.run.transfer})
    if windowed:
        note += " bw and bibw sent " + "; or ".join(windowed) + "."
    cols = [Column("run", "run"), Column("test", "test"), Column("bytes", "size", "bytes"),
            Column("reps", "reps", "int")] + cols + [Column("bandwidth", "bandwidth", "Bps"), Column("unstable", "flag")]
    return Table(name, title, cols, rows, note=note + " A size with CV > 5 % is flagged unstable.")


def pairs_matrix(run: Run) -> Table:
    pa = run.pairs_all
    rows = []
    if pa is not None:
        n = max((m.shape[0] for m in (pa.latency_s, pa.bandwidth_Bps) if m is not None), default=0)
        for s in range(n):
            for r in range(n):
                if s == r:
                    continue
                rows.append({"run": run.name, "sender": run.rank_label(s),
                             "receiver": run.rank_label(r),
                             "latency": pa.latency_s[s, r] if pa.latency_s is not None else None,
                             "bandwidth": pa.bandwidth_Bps[s, r] if pa.bandwidth_Bps is not None else None})
    cols = [Column("run", "run"), Column("sender", "sender"), Column("receiver", "receiver"),
            Column("latency", "latency", "time"), Column("bandwidth", "bandwidth", "Bps")]
    return Table(f"transfer_pairs_{slug(run.name)}", f"All pairs: {run.name}", cols, rows)


def link_maps(run: Run, maps: list[tuple[str, derive.LinkMap]]) -> Table:
    """Links slower than 80 % of the median, from every map."""
    rows = []
    for which, lm in maps:
        for s_, r, ratio in lm.slow:
            rows.append({"run": run.name, "map": which, "what": lm.what,
                         "sender": run.rank_label(s_), "receiver": run.rank_label(r),
                         "value": lm.values[s_, r], "median": lm.median, "ratio": ratio})
    kind = "time" if all(lm.what == "latency" for _w, lm in maps) else "float"
    cols = [Column("run", "run"), Column("map", "map"), Column("what", "measure"),
            Column("sender", "sender"), Column("receiver", "receiver"),
            Column("value", "value (s or B/s)", kind), Column("median", "median", kind),
            Column("ratio", "speed / median", "pct")]
    return Table(f"slow_links_{slug(run.name)}", f"Links below 80 % of the median: {run.name}",
                 cols, rows, note="Speed relative to the median: bandwidth / median bandwidth, "
                 "or median latency / latency.")
