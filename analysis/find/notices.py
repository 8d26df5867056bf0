"""Derive the "Read first" warnings and the notes about each run as a whole."""

from __future__ import annotations

import numpy as np

from ..derive import cpushare, health, netfaults, readiness
from .common import bold
from ..read.runs import Run
from .common import as_float, as_int

# More lines of one kind than this become one line, and the detail goes to the table.
GATHER_OVER = 3

DETAIL = "Read first, in detail"


def _retransmits(run: Run, tag: str) -> tuple[list[str], list[dict]]:
    """The retransmission warnings: each node and point its own line when there are few; else one
    line (how many nodes and points, the worst with its figure), every one a row of the detail."""
    rows = netfaults.warning_rows(run.path)
    detail = [{"run": run.name, "kind": "retransmitted segments", "node": n.host, "point": n.point,
               "figure": n.rate, "line": line} for line, n in rows]
    if len(rows) <= GATHER_OVER:
        return [f"{tag}: {line}" for line, _n in rows], []
    line, worst = max(rows, key=lambda r: r[1].rate if np.isfinite(r[1].rate) else -1)
    nodes = len({n.host for _l, n in rows})
    points = len({n.point for _l, n in rows})
    return [f"{tag}: {nodes} node(s) retransmitted TCP segments in {points} point(s) ({len(rows)} "
            f"node-points over {netfaults.pct(netfaults.RETRANS_WARN)}, or on a point the report calls "
            f"unstable); the worst, {line}. Every one is in the table \"{DETAIL}\" (Per rank)."], detail


def _gathered(run: Run, tag: str, kind: str, lines: list[str]) -> tuple[list[str], list[dict]]:
    """Lines of one kind: as they are when few, else the first and how many more, the rest in the
    detail table."""
    detail = [{"run": run.name, "kind": kind, "node": "", "point": "", "figure": float("nan"),
               "line": line} for line in lines]
    if len(lines) <= GATHER_OVER:
        return [f"{tag}: {line}" for line in lines], []
    return [f"{tag}: {len(lines)} {kind} warnings; the first: {lines[0]}. Every one is in the table "
            f"\"{DETAIL}\" (Per rank)."], detail


def run_notices(ctx, run: Run) -> tuple[list[str], list[str], list[dict]]:
    """(warnings, notes, the detail rows of warnings gathered into one line) about one run."""
    warnings: list[str] = []
    notes: list[str] = []
    detail: list[dict] = []
    tag = f"{bold(run.name)} ({run.path.name})"
    if run.partial or run.status in ("interrupted", "timeout"):
        warnings.append(
            f"{tag} is PARTIAL: the run had not finished (status '{run.status}'). It holds "
            f"{len(run.points)} FFT points, {len(run.transfer)} transfer tests and "
            f"{len(run.load_steps)} load steps; what is missing was not measured.")
    if run.invalid:
        warnings.append(f"{tag} FAILED VERIFICATION (verified={run.verified}, status "
                            f"'{run.status}'): its numbers are listed as INVALID and left out "
                            "of figures, comparisons and the model.")
    elif run.status == "failed":
        warnings.append(f"{tag} ended with status 'failed'; the points it flushed are shown.")
    items = ctx.stats[run.name]
    bad = [s.point.id for s in items if s.point.verified == 0]
    if bad and not run.invalid:
        warnings.append(f"{tag}: point(s) {', '.join(bad)} failed verification "
                            "(verify/passed=0); shown as INVALID and left out of figures, "
                            "comparisons and the model.")
    unstable = [f"{s.point.id} ({s.status[len('unstable ('):-1]})" for s in items
                if s.status.startswith("unstable")]
    if unstable:
        warnings.append(f"{tag}: {len(unstable)} point(s) unstable (CV of t_total > 5 %, or a "
                        "repetition stalled over 1 s between windows): " + ", ".join(unstable) + ".")
    auto = []
    for s in items:
        a = s.point.attrs
        reason = str(a.get("reps_stop_reason") or "")
        if as_int(a.get("unstable"), 0) == 1 or reason not in ("", "fixed", "target_ci"):
            half = as_float(a.get("ci_halfwidth_rel"))
            target = as_float(a.get("target_ci"))
            what = f"{s.point.id} stopped by {reason or '?'}"
            if np.isfinite(half):
                what += f" at a CI half-width of {100 * half:.1f} %"
            if np.isfinite(target):
                what += f" (target {100 * target:.1f} %)"
            auto.append(what)
    if auto:
        warnings.append(f"{tag}: --reps auto did not reach its CI target: "
                            + "; ".join(auto) + ".")
    for kind, lines in (("health", health.point_warnings(run.path)),
                        ("readiness", readiness.run_warnings(run.path))):
        more, rows = _gathered(run, tag, kind, lines)
        warnings += more
        detail += rows
    more, rows = _retransmits(run, tag)
    warnings += more
    detail += rows
    warnings += [f"{tag}: {line}" for line in cpushare.warnings(run.path)]
    hot = ctx.throttled(run)
    if hot:
        warnings.append(f"{tag}: throttling recorded on {', '.join(hot)} (in /hosts or the "
                            "points' health record): its times may be slow and uneven.")
    for problem in run.problems + ctx.extra[run.name].problems:
        warnings.append(f"{tag}: {problem}")
    missing = [g for g in ("fft", "transfer", "load") if g not in run.groups]
    if missing:
        sub = run.attrs.get("subcommand")
        notes.append(f"{tag} has no " + ", ".join(f"/{g}" for g in missing)
                         + (f" group (subcommand '{sub}')" if sub else " group")
                         + "; those sections skip it.")
    return warnings, notes, detail
