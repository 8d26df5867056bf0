"""Tidy pandas DataFrames of result files (`from analysis import frames`; needs pandas).
The functions are analysis/commands/frames.py; this path stays what the docs and users import."""

from .commands.frames import (REDUCTIONS, dataset_units, energy, hosts, load, points, problems, ranks,
                              storage, transfer)

__all__ = ["REDUCTIONS", "dataset_units", "energy", "hosts", "load", "points", "problems", "ranks",
           "storage", "transfer"]
