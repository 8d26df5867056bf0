"""The model and forecast section (figures from analysis.find.forecast, only formatted and
drawn here)."""

from __future__ import annotations

from .. import plots
from ..document import Report
from ...find import Findings


def model_section(rep: Report, ctx: Findings) -> None:
    f = ctx.forecast
    sec = rep.section("model", "Model and forecast", "Forecast")
    sec.para("Hockney model t(m) = α + m/β fitted to pingpong (relative-error least squares); "
             "per-rank compute time fitted as c0 + c1·flops; request time on p ranks modelled as "
             "t0 + (p−1)·α + M_in·(p−1)/(p·β) + c0 + c1·F/p + (p−1)·α + M_out·(p−1)/(p·β), where "
             "M_in, M_out are the request's input and output bytes, F its flops and t0 the "
             "median residual on the measured points. That sum is the phased schedule's; for the "
             "pipelined and dynamic schedules, which overlap the three, it is t0 plus the largest "
             "of distribution, compute and gather.")
    for fit in f.fits:
        for note in fit.notes:
            sec.para(note)
        sec.figure(plots.model_fit(fit.run, fit.model, fit.compute, rep.outdir))
    if f.models is None:
        sec.para("No usable FFT points: nothing to fit.")
        return
    sec.table(f.models)
    for val, check, forecasts in f.validated:
        sec.figure(plots.forecast(val, rep.outdir))
        sec.table(check)
        sec.table(forecasts)
    for text in f.texts:
        sec.para(text)
    if not f.any_group:
        sec.para("Not enough data to forecast: no cluster run with FFT points.")
