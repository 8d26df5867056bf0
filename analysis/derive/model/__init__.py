"""Performance model: a Hockney latency-bandwidth fit t(m) = alpha + m/beta, a
per-rank compute-cost fit t = c0 + c1 * flops, and a forecast of request time
and speedup for 1..64 nodes of the measured kind.

Request time on p compute ranks (root rank computes unless the point says
root_computes=0; then all p compute ranks are remote):

    remote(p)  = p - 1 if the root computes, else p
    t_dist(p)  = remote * alpha + M_in  * remote / p / beta    (linear scatter from the root)
    t_comp(p)  = c0 + c1 * F / p                               (F: flops of the request)
    t_gath(p)  = remote * alpha + M_out * remote / p / beta    (linear gather to the root)
    t_total(p) = t0 + t_dist + t_comp + t_gath

t0 is the per-request cost the three terms do not explain (barriers, reading,
bookkeeping): the median residual over the measured points, never negative.
Every rank is assumed to sit on its own node and to talk at the fitted alpha
and beta; the fit errors on the measured points say how far to trust it.
"""

from .fit import (AffineFit, HockneyFit, RunModel, fit_affine_rel, fit_hockney, line_rate,
                  link_use, remote_ranks, request_shape, predict, overlapped, fit_run)
from .check import MAX_HELD_OUT_ERROR, node_count, validate, forecast

__all__ = [
    "AffineFit", "HockneyFit", "MAX_HELD_OUT_ERROR", "RunModel", "fit_affine_rel", "fit_hockney",
    "fit_run", "forecast", "line_rate", "link_use", "node_count", "overlapped", "predict",
    "remote_ranks", "request_shape", "validate"
]
