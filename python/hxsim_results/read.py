"""Opening runs and sweeps: xarray Datasets per group, and the sweep's points as a pandas frame.

The layout (see hxsim's manual, docs/output.md): a run's file has the groups `summary`, `timeseries`,
`servers`, `tasks` (a workload's runs only), `events` (runs with failure events only), `latency`, `links` and `vcs` at its root; a sweep's file has the same in each group
`points/NNN`, plus the table `sweep` (one row per point along the dimension `point`: `point`,
`group`, each swept key, each summary key, `complete`, `error`) and the same values gridded over the
swept keys in `grid`.
"""

import h5py
import pandas as pd
import xarray as xr

#: The groups of one run, in the order hxsim writes them.
RUN_GROUPS = ("summary", "timeseries", "servers", "tasks", "events", "latency", "links", "vcs")


def _text(v):
    return v.decode() if isinstance(v, bytes) else str(v)


def is_sweep(path):
    """Whether `path` is a sweep's file (it has the table `/sweep`), not a single run's."""
    with h5py.File(path, "r") as f:
        return "sweep" in f


def swept_keys(path):
    """The sweep's swept keys (`traffic.load`, `routing.algorithm`, ...), in `--set` order."""
    with h5py.File(path, "r") as f:
        return [_text(k) for k in f.attrs["swept_keys"]]


def _dataset(path, group):
    """The group `group` of `path` as an xarray Dataset, read into memory (the file is closed)."""
    with xr.open_dataset(path, group=group) as ds:
        return ds.load()


def points(path):
    """The sweep's points as a pandas DataFrame indexed by `point`: the swept keys first (numbers
    where every value is one), then `group` (the point's HDF5 group), the summary keys, `complete`
    and `error`. Select points with pandas, e.g. ``pts[pts["routing.algorithm"] == "minimal"]``."""
    df = _dataset(path, "sweep").to_dataframe()
    keys = swept_keys(path)
    for k in keys:
        num = pd.to_numeric(df[k], errors="coerce")
        if num.notna().all():
            df[k] = num
    rest = [c for c in df.columns if c not in keys]
    return df[keys + rest]


def grid(path):
    """The sweep's summary values gridded over the swept keys (an xarray Dataset whose dimensions
    are the keys with several values), e.g. ``grid(p).accepted_load.sel({"routing.algorithm":
    "minimal"})``."""
    return _dataset(path, "grid")


def find_point(path, **values):
    """The index of the one point whose swept keys have `values`; keys are written with `__` for
    the dots (``find_point(p, traffic__load=0.5, routing__algorithm="minimal")``). Raises
    `KeyError` when no point or several match."""
    df = points(path)
    sel = pd.Series(True, index=df.index)
    for k, v in values.items():
        key = k.replace("__", ".")
        if key not in df.columns:
            raise KeyError(f"{key} is not a swept key of {path}: {swept_keys(path)}")
        sel &= df[key] == v
    hits = list(df.index[sel])
    if len(hits) != 1:
        raise KeyError(f"{len(hits)} points of {path} have {values}")
    return int(hits[0])


def open_run(path, point=None):
    """One run's groups as xarray Datasets, in a dict keyed by group name (`summary`, `timeseries`,
    `servers`, `tasks` for a workload, `events` for failure events, `latency`, `links`, `vcs`; those the file has). `point`: which point of a sweep (its
    index, see :func:`points`); none for a run's file. The dict's `attrs` entry holds the run's
    attributes (`config` as TOML text, `seed`, `complete`, `status`, ...)."""
    with h5py.File(path, "r") as f:
        if point is None:
            if "sweep" in f:
                raise ValueError(f"{path} is a sweep: say which point (0-{len(f['points']) - 1})")
            base = ""
        else:
            table = f["sweep"]
            groups = [_text(g) for g in table["group"][()]]
            if not 0 <= point < len(groups) or not groups[point]:
                raise IndexError(f"{path} has no point {point}")
            base = groups[point]
        node = f[base] if base else f
        names = [g for g in RUN_GROUPS if g in node]
        attrs = {k: (_text(v) if isinstance(v, (bytes, str)) else v) for k, v in node.attrs.items()}
    out = {g: _dataset(path, f"{base}/{g}" if base else g) for g in names}
    out["attrs"] = attrs
    return out
