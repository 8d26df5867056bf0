"""scaling.png: the measured scaling figure of derive.scaling's rows (the report's, and
analysis.scaling's)."""

from __future__ import annotations

from pathlib import Path

import numpy as np


def plot(rows: list[dict], outdir: Path, name: str = "scaling.png") -> str | None:
    """scaling.png: t_total, speedup (with the ideal line) and efficiency
    against the count, one line per series and point. None without rows."""
    if not rows:
        return None
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    lines: dict[tuple[str, str], list[dict]] = {}
    for r in rows:
        lines.setdefault((r["series"], r["point"]), []).append(r)
    axis = "nodes" if any(r["axis"] == "nodes" for r in rows) else "ranks"
    refs = sorted({r["reference"] for r in rows})
    fig, (ax_t, ax_s, ax_e) = plt.subplots(1, 3, figsize=(15, 4.8), layout="constrained")
    xs_all: set[int] = set()
    for k, ((series, point), items) in enumerate(sorted(lines.items())):
        colour = f"C{k % 10}"
        label = point if len({s for s, _ in lines}) == 1 else f"{series}: {point}"
        x = np.array([r[axis] for r in items], dtype=float)
        xs_all.update(int(v) for v in x)

        def band(ax, key, scale=1.0):
            y = np.array([r[key] for r in items], dtype=float) * scale
            lo = np.array([r[f"{key}_ci_low" if key != "t_total_median_s" else "t_total_ci_low_s"]
                           for r in items], dtype=float) * scale
            hi = np.array([r[f"{key}_ci_high" if key != "t_total_median_s" else "t_total_ci_high_s"]
                           for r in items], dtype=float) * scale
            err = np.vstack([np.clip(y - lo, 0, None), np.clip(hi - y, 0, None)])
            ax.errorbar(x, y, yerr=np.nan_to_num(err), color=colour, marker="o", ms=4,
                        capsize=3, lw=1.5, label=label)

        band(ax_t, "t_total_median_s", 1e3)
        band(ax_s, "speedup")
        band(ax_e, "efficiency", 100.0)
    ticks = sorted(xs_all)
    ideal_x = np.array([min(ticks), max(ticks)], dtype=float)
    ax_s.plot(ideal_x, ideal_x / min(ticks), color="0.4", ls="--", lw=1, label="ideal")
    ax_e.axhline(100.0, color="0.4", ls="--", lw=1, label="ideal (100 %)")
    unit = "nodes" if axis == "nodes" else "ranks (processes)"
    tick_text = [str(t) for t in ticks]
    if axis == "nodes":  # nodes on the axis, and the ranks they held under each
        held = {t: sorted({r["ranks"] for r in rows if r["nodes"] == t}) for t in ticks}
        tick_text = [f"{t}\n({'/'.join(map(str, held[t]))} ranks)" for t in ticks]
    for ax in (ax_t, ax_s, ax_e):
        ax.set_xticks(ticks, tick_text)
        ax.set_xlabel(f"{unit}, linear scale")
        ax.grid(True, alpha=0.3)
    ax_t.set_yscale("log")
    ax_t.set_ylabel("median t_total [ms], log scale")
    ax_t.set_title("request time (95 % CI of the median)")
    against = refs[0] if len(refs) == 1 else "the smallest count of each series"
    ax_s.set_ylabel(f"speedup against {against}, linear")
    ax_s.set_title("speedup (95 % CI)")
    ax_e.set_ylabel("parallel efficiency [%], linear")
    ax_e.set_title("efficiency = speedup / ideal")
    ax_s.legend(fontsize=7, loc="upper left")
    fig.suptitle("Measured scaling: the same points at several "
                 + ("node" if axis == "nodes" else "rank") + " counts")
    fig.savefig(outdir / name, format="png", facecolor="white", dpi=110)
    plt.close(fig)
    return name
