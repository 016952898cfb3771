"""Read hxsim's results files and draw their standard figures.

hxsim writes one HDF5 file per run (`hxsim run -o run.h5`) or per sweep (`hxsim sweep -o sweep.h5`);
every group of either has netCDF-4 dimension scales, so xarray opens it with named dimensions. This
package is the few lines a user would otherwise write each time:

>>> import hxsim_results as hx
>>> pts = hx.points("sweep.h5")                 # pandas: one row per point, swept keys first
>>> run = hx.open_run("sweep.h5", point=3)      # dict of xarray Datasets: summary, timeseries, ...
>>> hx.plot_load_sweep("sweep.h5")              # matplotlib: accepted load, latency, Jain's index

Reading: :func:`open_run`, :func:`points`, :func:`swept_keys`, :func:`grid`, :func:`find_point`.
Figures: :func:`plot_load_sweep`, :func:`plot_latency`, :func:`plot_timeseries`,
:func:`paper_figure`.
"""

from .read import find_point, grid, is_sweep, open_run, points, swept_keys
from .figures import paper_figure, plot_latency, plot_load_sweep, plot_timeseries, series_label

__all__ = [
    "find_point",
    "grid",
    "is_sweep",
    "open_run",
    "points",
    "swept_keys",
    "paper_figure",
    "plot_latency",
    "plot_load_sweep",
    "plot_timeseries",
    "series_label",
]
__version__ = "0.1.0"
