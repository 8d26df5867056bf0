"""Report figures (matplotlib, Agg backend). Every function draws one figure,
saves it as a PNG in `outdir` and returns a `Figure` record, or None when
there is nothing to draw.
"""

from .base import Figure, _si_bytes, apply_style
from .fft import fft_times, fft_rate, fft_phases, speedup, per_rank, timeline, dfft
from .net import transfer_p2p, transfer_collectives, transfer_ring, link_maps
from .fit import model_fit, forecast, load, measured_scaling
from .storage import storage_bandwidth, storage_iops

__all__ = [
    "Figure", "_si_bytes", "apply_style", "colours", "dfft", "fft_phases", "fft_rate", "fft_times",
    "forecast", "link_maps", "load", "measured_scaling", "model_fit", "per_rank", "speedup",
    "storage_bandwidth", "storage_iops", "timeline", "transfer_collectives", "transfer_p2p", "transfer_ring"
]
