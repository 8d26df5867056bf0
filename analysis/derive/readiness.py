"""Cluster readiness as a run recorded it: the `/hosts` columns that `wulfbench check` also judges
(CPU governor, the interface to rank 0, its kind and link speed, the build and library versions), and
the FFTW planning time each fft point records in `t_plan`.

A node on `ondemand`, `powersave` or `schedutil` changes its clock with the load, so its times depend
on what ran before; a Wi-Fi link or one slower link sets the pace of every exchange; a node with
another build or library fails in ways that are hard to read. The report lists each as a warning.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from ..read import records

SLOW_GOVERNORS = ("ondemand", "powersave", "schedutil", "conservative")
VERSION_COLUMNS = ("git_rev", "mpi_library", "fftw_version", "hdf5_version")


def _text(value: object) -> str:
    return value.decode(errors="replace") if isinstance(value, bytes) else str(value)


def _by_node(hosts: np.ndarray) -> dict[str, np.void]:
    """The lowest rank of each host speaks for it."""
    out: dict[str, np.void] = {}
    for h in hosts:
        out.setdefault(_text(h["hostname"]), h)
    return out


def host_warnings(hosts: np.ndarray) -> list[str]:
    """Warnings from a /hosts table; [] when it lacks the columns (files made before they existed)."""
    names = hosts.dtype.names or ()
    out: list[str] = []
    nodes = _by_node(hosts)
    if "governor" in names:
        slow = [f"{host} ({_text(h['governor'])})" for host, h in nodes.items()
                if _text(h["governor"]) in SLOW_GOVERNORS]
        if slow:
            out.append("CPU governor not 'performance' on " + ", ".join(slow) + ": the clock followed the load, "
                       "so the times depend on what ran before (set performance for the run; docs/check.md)")
    if "iface_kind" in names:
        wifi = [f"{host} ({_text(h['iface'])})" for host, h in nodes.items() if _text(h["iface_kind"]) == "wifi"]
        if wifi:
            out.append("Wi-Fi link to rank 0 on " + ", ".join(wifi) + ": transfer figures are Wi-Fi's, not Ethernet's")
    if "link_mbps" in names:
        speeds = {host: int(h["link_mbps"]) for host, h in nodes.items()
                  if int(h["link_mbps"]) > 0 and _text(h["iface"]) != "lo"}
        if len(set(speeds.values())) > 1:
            top = max(speeds.values())
            slow = [f"{host} ({mbps} Mbit/s)" for host, mbps in speeds.items() if mbps < top]
            out.append(f"mixed link speeds: {', '.join(slow)} below the others' {top} Mbit/s; "
                       "the slowest link sets the pace of every exchange")
    for col in VERSION_COLUMNS:
        if col not in names:
            continue
        seen: dict[str, list[int]] = {}
        for h in hosts:
            seen.setdefault(_text(h[col]), []).append(int(h["rank"]))
        if len(seen) > 1:
            groups = "; ".join(f"'{v}' on rank{'s' if len(r) > 1 else ''} {','.join(map(str, r))}"
                               for v, r in seen.items())
            out.append(f"mismatched {col} across ranks: {groups}")
    return out


def run_warnings(path: Path) -> list[str]:
    """host_warnings of a result file's /hosts; [] when the file or the table cannot be read."""
    try:
        hosts = records.hosts(path)
    except OSError:
        return []
    return host_warnings(hosts) if hosts is not None else []


def planning_line(path: Path) -> str | None:
    """"p000: FFTW planning took 0.61 s (slowest rank), apart from t_total" for the first fft point
    that records t_plan, since a user pays it once per transform length; None without one."""
    try:
        found = records.plan_times(path)
    except OSError:
        return None
    if found is None:
        return None
    pid, t = found
    return (f"{pid}: FFTW planning took {np.nanmax(t):.3g} s on the slowest rank (apart from "
            "t_total; paid once per transform length, later points reuse the plans)")
