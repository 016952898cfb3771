"""Reads files written by hxsim with h5py and pandas, and checks them against `hxsim run --json`.

Run with `make test` (which builds hxsim and installs h5py/pandas), or by hand:

    HXSIM_BIN=target/debug/hxsim python3 tests/python/test_hdf5.py

Each `test_*` function also runs under pytest. Without pytest, this file runs them itself and
prints `N passed, N failed`; the exit code is non-zero if any failed.
"""

import json
import math
import os
import subprocess
import sys
import tempfile
import tomllib
import traceback
from pathlib import Path

import warnings

import h5py
import numpy as np
import pandas as pd
import xarray as xr

ROOT = Path(__file__).resolve().parents[2]
QUICKSTART = str(ROOT / "configs" / "quickstart.toml")
SHORT = ["--set", "simulation.warmup_cycles=500", "--set", "simulation.measure_cycles=1000"]
TIMING_KEYS = {"wall_seconds", "hops_per_second", "peak_memory_bytes"}
WHEN_WHERE_ATTRS = {"start_time", "end_time", "host", "jobs", "argv"}


def hxsim_bin():
    b = os.environ.get("HXSIM_BIN")
    if b:
        return b
    target = os.environ.get("CARGO_TARGET_DIR", str(ROOT / "target"))
    return str(Path(target) / "debug" / "hxsim")


def hxsim(*args, check=True):
    r = subprocess.run([hxsim_bin(), *args], capture_output=True, text=True)
    if check and r.returncode != 0:
        raise AssertionError(f"hxsim {' '.join(args)} exited {r.returncode}: {r.stderr}")
    return r


def load_sweep(path):
    """The manual's one-call loader (docs/output.md): the whole sweep table as a DataFrame, in
    column order."""
    with h5py.File(path, "r") as f:
        t = f["sweep"]
        return pd.DataFrame({k: t[k].asstr()[()] if t[k].dtype.kind == "O" else t[k][()] for k in t.attrs["columns"]})


def test_run_file_equals_json_summary():
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "run.h5")
        r = hxsim("run", QUICKSTART, "--json", "-q", "-o", path)
        summary = json.loads(r.stdout)
        with h5py.File(path, "r") as f:
            assert bool(f.attrs["complete"]) is True
            assert f.attrs["status"] == "complete"
            assert f.attrs["format"] == "hxsim-results"
            cfg = tomllib.loads(f.attrs["config"])
            assert cfg["name"] == "quickstart" and cfg["topology"]["sides"] == [4, 4]
            assert cfg["seed"] == f.attrs["seed"] == 1
            assert f.attrs["threads"] == 1 and f.attrs["ranks"] == 1
            g = f["summary"]
            # How the run ended is in the root attributes; the figures are in /summary.
            assert f.attrs["complete"] == summary["complete"] and f.attrs["status"] == summary["status"] == "complete"
            scalars = {k: v for k, v in summary.items() if not isinstance(v, list) and k not in ("complete", "status")}
            assert list(g) == list(scalars), "same keys, same order (lists are groups of their own)"
            for k, v in scalars.items():
                assert g[k][()] == v, (k, g[k][()], v)
                assert "units" in g[k].attrs
            assert g["average_latency"].attrs["units"] == "cycles"

            # Time series: consecutive intervals; the window's rows add up to the summary.
            ts = pd.DataFrame({k: f["timeseries"][k][()] for k in f["timeseries"]})
            assert len(ts) == 60 and (ts["cycle"] == np.arange(1, 61) * 100).all()
            w = ts[(ts["cycle"] > 2000) & (ts["cycle"] <= 6000)]
            assert w["delivered_packets"].sum() == summary["packets_delivered"]
            # The summary counts a packet's 16 phits when its tail arrives; the series counts each phit
            # in the interval it arrives in, so at each end of the window at most 15 per server move across.
            delivered_phits = 16 * int(w["delivered_packets"].sum())
            assert math.isclose(delivered_phits / (4000 * 64), summary["accepted_load"], rel_tol=1e-12)
            assert abs(int(w["accepted_phits"].sum()) - delivered_phits) <= 2 * 15 * 64
            # One phit per cycle per server each way at most.
            assert (ts["injected_phits"] <= 100 * 64).all() and (ts["accepted_phits"] <= 100 * 64).all()
            assert math.isclose(w["latency_sum"].sum() / w["delivered_packets"].sum(), summary["average_latency"])
            assert np.allclose(ts["accepted_load"], ts["accepted_phits"] / (100 * 64))

            # Servers: Jain's index recomputed.
            x = f["servers/injected_phits"][()].astype(float)
            assert math.isclose(x.sum() ** 2 / (len(x) * (x**2).sum()), summary["jain_index"], rel_tol=1e-12)

            # Sparse latency histogram: count, exact sum, mean and 99th percentile recomputed.
            lat, counts = f["latency/latency"][()], f["latency/packets"][()]
            assert (counts > 0).all() and (np.diff(lat) > 0).all()
            assert counts.sum() == summary["packets_delivered"] == f["latency"].attrs["total_packets"]
            assert (lat * counts).sum() == f["latency"].attrs["latency_sum"]
            assert math.isclose((lat * counts).sum() / counts.sum(), summary["average_latency"])
            cum = np.cumsum(counts)
            p99 = lat[np.searchsorted(cum, math.ceil(0.99 * counts.sum()))]
            assert p99 == summary["latency_p99"]

            # Arrays from 4 KiB are compressed, smaller ones stored in their object header; the time
            # series, appended during the run, is chunked and compressed; the build is recorded.
            _check_storage(f)
            assert f["timeseries/cycle"].compression == "gzip" and f["timeseries/cycle"].maxshape == (None,)
            assert f.attrs["git_dirty"] in ("true", "false", "unknown")
            assert f.attrs["build_profile"] and list(f.attrs["argv"])[1] == "run"

            # Links: 16 switches x 6 ports; hottest link found in one line.
            links = pd.DataFrame({k: f["links"][k][()] for k in f["links"]})
            assert len(links) == 96 and set(links["dimension"]) == {0, 1}
            assert np.allclose(links["utilization"], links["phits"] / f["links"].attrs["measured_cycles"])
            hot = links.loc[links["utilization"].idxmax()]
            assert 0 < hot["utilization"] <= 1

            # Per-VC phits: the summary's list, along the dimension `vc`; every phit on a link is on one VC.
            vcs = f["vcs"]
            assert list(vcs["phits"][()]) == summary["vc_phits"] and len(summary["vc_phits"]) == 4
            assert list(vcs["vc"][()]) == [0, 1, 2, 3]
            assert vcs["phits"][()].sum() == links["phits"].sum() > 0
            assert summary["vcs_used"] == (vcs["phits"][()] > 0).sum()
            assert math.isclose(vcs["share"][()].sum(), 1.0)


def _check_storage(f):
    """hxsim's storage rule (src/output/hdf5.rs, `column`): a fixed-size array of 4 KiB or more is
    chunked and deflated (integers byte-shuffled first), a smaller one compact and unfiltered."""
    seen = []

    def visit(name, obj):
        if not isinstance(obj, h5py.Dataset) or obj.ndim != 1 or obj.maxshape != obj.shape or obj.dtype.kind == "O":
            return
        layout = obj.id.get_create_plist().get_layout()
        if obj.nbytes >= 4096:
            assert obj.compression == "gzip" and obj.shuffle == (obj.dtype.kind in "ui"), name
            seen.append("deflated")
        elif obj.size > 0:
            assert layout == h5py.h5d.COMPACT and obj.compression is None, (name, layout)
            seen.append("compact")

    f.visititems(visit)
    return seen


def test_large_arrays_are_compressed_and_every_sweep_point_has_its_own_columns():
    """A sweep over loads and two networks: large arrays deflated, small ones compact; every
    point's /links holds its own datasets (none hard-linked from another point, which netCDF-4
    readers refuse), with the same network columns as the other points on its network."""
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "sweep.h5")
        hxsim("sweep", QUICKSTART, "--set", "topology.sides=[12,12],[4,4]", "--set", "traffic.load=0.2,0.4",
              "--set", "simulation.warmup_cycles=200", "--set", "simulation.measure_cycles=300", "-q", "-o", path)
        with h5py.File(path, "r") as f:
            assert {"deflated", "compact"} <= set(_check_storage(f))
            # 12x12 with 4 servers per switch: 576 servers (4.5 KiB of u64 per column), 144 x 22 link rows.
            assert f["points/000/servers/injected_phits"].compression == "gzip"
            assert f["points/002/servers/injected_phits"].compression is None
            assert len(f["points/000/links/switch"]) == 144 * 22 and len(f["points/002/links/switch"]) == 16 * 6
            addr = lambda p: h5py.h5o.get_info(f[p].id).addr
            for col in ("link", "switch", "port", "neighbour_switch", "neighbour_port", "dimension", "phits",
                        "utilization"):
                assert len({addr(f"points/{i:03}/links/{col}") for i in range(4)}) == 4, col
            for col in ("switch", "port", "neighbour_switch", "neighbour_port", "dimension"):
                assert np.array_equal(f[f"points/000/links/{col}"][()], f[f"points/001/links/{col}"][()]), col
                assert np.array_equal(f[f"points/002/links/{col}"][()], f[f"points/003/links/{col}"][()]), col
            for p in ("points/000", "points/001"):
                links = f[p + "/links"]
                assert list(links) == ["link", "switch", "port", "neighbour_switch", "neighbour_port", "dimension",
                                       "phits", "utilization"]
                assert links["phits"][()].sum() == f[p + "/vcs/phits"][()].sum() > 0
                # Each row is the port it says: the neighbour's row points back at it.
                sw, port = links["switch"][()], links["port"][()]
                nsw, nport = links["neighbour_switch"][()], links["neighbour_port"][()]
                row = {(s, q): i for i, (s, q) in enumerate(zip(sw, port))}
                assert all(nsw[row[(b, q)]] == a and nport[row[(b, q)]] == p_
                           for a, p_, b, q in zip(sw, port, nsw, nport))
            assert not np.array_equal(f["points/000/links/phits"][()], f["points/001/links/phits"][()])
            # The time series of a point is written whole: fixed size, as long as the run.
            ts = f["points/001/timeseries/cycle"]
            assert ts.maxshape == ts.shape == (5,) and list(ts[()]) == [100, 200, 300, 400, 500]
        _open_all_with_xarray(path)


def test_sweep_loads_into_pandas_and_matches_its_points():
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "sweep.h5")
        hxsim("sweep", QUICKSTART, "--set", "traffic.load=0.2:0.4:0.2", "--set", "routing.algorithm=minimal,valiant",
              *SHORT, "-q", "-j", "2", "-o", path)
        df = load_sweep(path)
        assert len(df) == 4
        assert list(df["traffic.load"]) == [0.2, 0.2, 0.4, 0.4]
        assert list(df["routing.algorithm"]) == ["minimal", "valiant"] * 2
        assert df["complete"].all() and (df["error"] == "").all()
        with h5py.File(path, "r") as f:
            assert list(f.attrs["swept_keys"]) == ["traffic.load", "routing.algorithm", "simulation.warmup_cycles",
                                                   "simulation.measure_cycles"]
            for _, row in df.iterrows():
                p = f[row["group"]]
                assert p["summary/accepted_load"][()] == row["accepted_load"]
                assert p["summary/packets_delivered"][()] == row["packets_delivered"]
                cfg = tomllib.loads(p.attrs["config"])
                assert cfg["traffic"]["load"] == row["traffic.load"]
                assert cfg["routing"]["algorithm"] == row["routing.algorithm"]
        # One curve per routing algorithm, as the plot draws them.
        curves = df.pivot(index="traffic.load", columns="routing.algorithm", values="average_latency")
        assert curves.shape == (2, 2) and (curves["valiant"] > curves["minimal"]).all()


def _walk(f):
    """Every dataset and attribute of a file, minus what records when, where or how fast."""
    items = {}

    def visit(name, obj):
        for a, v in obj.attrs.items():
            # Dimension-scale links are object addresses, which depend on the order points were written.
            if a not in WHEN_WHERE_ATTRS and a not in ("DIMENSION_LIST", "REFERENCE_LIST"):
                items[f"{name}@{a}"] = v
        if isinstance(obj, h5py.Dataset) and name.rsplit("/", 1)[-1] not in TIMING_KEYS:
            items[name] = obj.asstr()[()] if obj.dtype.kind == "O" else obj[()]

    for a, v in f.attrs.items():
        if a not in WHEN_WHERE_ATTRS:
            items[f"@{a}"] = v
    f.visititems(visit)
    return items


def test_sweep_file_does_not_depend_on_jobs():
    with tempfile.TemporaryDirectory() as d:
        walks = []
        for jobs in ("1", "2"):
            path = os.path.join(d, f"s{jobs}.h5")
            hxsim("sweep", QUICKSTART, "--set", "traffic.load=0.3,0.6", "--set", "routing.algorithm=minimal,valiant",
                  *SHORT, "-q", "-j", jobs, "-o", path)
            with h5py.File(path, "r") as f:
                walks.append(_walk(f))
        a, b = walks
        assert a.keys() == b.keys()
        assert len(a) > 100
        for k in a:
            x, y = a[k], b[k]
            same = np.array_equal(x, y, equal_nan=True) if isinstance(x, np.ndarray) and x.dtype.kind == "f" else np.array_equal(x, y)
            assert same, k


def _groups(path):
    with h5py.File(path, "r") as f:
        out = ["/"]
        f.visit(lambda n: out.append(n) if isinstance(f[n], h5py.Group) else None)
        return out


def _open_all_with_xarray(path):
    """Every group opens with xarray without a warning and without invented (phony) dimensions."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for g in _groups(path):
            with xr.open_dataset(path, group=g, engine="h5netcdf") as ds:
                assert not [d for d in ds.sizes if str(d).startswith("phony")], (path, g, dict(ds.sizes))


def test_xarray_opens_every_group_with_named_dims():
    with tempfile.TemporaryDirectory() as d:
        run = os.path.join(d, "run.h5")
        hxsim("run", QUICKSTART, "-q", "-o", run, *SHORT)
        _open_all_with_xarray(run)
        ts = xr.open_dataset(run, group="timeseries", engine="h5netcdf")
        assert ts["accepted_load"].dims == ("cycle",) and (ts["injected_load"] <= 1.0).all()
        assert xr.open_dataset(run, group="servers", engine="h5netcdf")["injected_phits"].dims == ("server",)
        assert xr.open_dataset(run, group="links", engine="h5netcdf")["utilization"].dims == ("link",)
        assert xr.open_dataset(run, group="latency", engine="h5netcdf")["packets"].dims == ("latency",)
        assert xr.open_dataset(run, group="vcs", engine="h5netcdf")["phits"].dims == ("vc",)

        sweep = os.path.join(d, "sweep.h5")
        hxsim("sweep", QUICKSTART, "--set", "traffic.load=0.2,0.4,0.6", "--set", "routing.algorithm=minimal,valiant",
              *SHORT, "-q", "-o", sweep)
        _open_all_with_xarray(sweep)
        # The manual's one-liners (docs/output.md).
        df = xr.open_dataset(sweep, group="sweep", engine="h5netcdf").to_dataframe()
        assert len(df) == 6 and list(df["routing.algorithm"]) == ["minimal", "valiant"] * 3
        grid = xr.open_dataset(sweep, group="grid", engine="h5netcdf")
        assert dict(grid.sizes) == {"traffic.load": 3, "routing.algorithm": 2}
        assert grid["accepted_load"].dims == ("traffic.load", "routing.algorithm")
        assert float(grid["simulation.warmup_cycles"]) == 500  # a key with one value: a scalar coordinate
        cell = grid["average_latency"].sel({"traffic.load": 0.4, "routing.algorithm": "valiant"})
        row = df[(df["traffic.load"] == 0.4) & (df["routing.algorithm"] == "valiant")]
        assert float(cell) == float(row["average_latency"].iloc[0])
        assert bool(grid["complete"].all())


def test_slurm_array_results_merge_into_a_sweep_file_that_plots():
    """Per-point files as jobs/sweep-array.slurm writes them, one point missing and one cut short,
    merged into HDF5 (JSON and HDF5 inputs) and drawn."""
    with tempfile.TemporaryDirectory() as d:
        points = [("0.2", "minimal"), ("0.2", "valiant"), ("0.5", "minimal"), ("0.5", "valiant")]
        out = os.path.join(d, "out")
        os.makedirs(out)
        for i, (load, routing) in enumerate(points):
            if i == 2:
                continue  # this array task never ran
            sets = ["--set", f"traffic.load={load}", "--set", f"routing.algorithm={routing}"]
            r = hxsim("run", QUICKSTART, *sets, *SHORT, "--json", "-q", "-o", os.path.join(out, f"point-{i}.h5"))
            if i == 0:
                steady0 = json.loads(r.stdout)["steady_state"]
            with open(os.path.join(out, f"point-{i}.json"), "w") as f:
                if i == 3:
                    # the run failed: the task recorded its point but no summary
                    f.write('{"point":3,"set":{"traffic.load":"0.5","routing.algorithm":"valiant"},"error":"exit 143"}')
                else:
                    f.write(json.dumps({"point": i, "set": {"traffic.load": load, "routing.algorithm": routing},
                                        "summary": json.loads(r.stdout)}))
        for kind in ("json", "h5"):
            files = sorted(str(p) for p in Path(out).glob(f"*.{kind}"))
            merged = os.path.join(d, f"merged-{kind}.h5")
            r = hxsim("merge", *files, "-o", merged, check=False)
            if kind == "json":
                assert r.returncode == 3, r.stderr  # a point missing, one incomplete
            _open_all_with_xarray(merged)
            df = xr.open_dataset(merged, group="sweep", engine="h5netcdf").to_dataframe()
            assert list(df.index) == [0, 1, 2, 3]
            assert df.loc[2, "error"] == "missing" and not df.loc[2, "complete"]
            assert df.loc[0, "complete"] and df.loc[1, "complete"]
            assert math.isnan(df.loc[2, "accepted_load"])
            # steady_state (true, false or null) comes through a JSON input as through an HDF5 one
            with h5py.File(merged, "r") as f:
                got = f["points/000/summary/steady_state"][()]
            assert (math.isnan(got) if steady0 is None else got == int(steady0)), (kind, got, steady0)
            grid = xr.open_dataset(merged, group="grid", engine="h5netcdf")
            assert dict(grid.sizes) == {"traffic.load": 2, "routing.algorithm": 2}
            assert not bool(grid["complete"].sel({"traffic.load": 0.5, "routing.algorithm": "minimal"}))
            if kind == "json":
                assert not df.loc[3, "complete"] and df.loc[3, "error"] == "exit 143"
            else:
                assert df.loc[3, "complete"]
                with h5py.File(merged, "r") as f:
                    assert f["points/001/timeseries/accepted_load"].shape[0] > 0
            png = os.path.join(d, f"merged-{kind}.png")
            hxsim("plot", merged, "-o", png)
            assert os.path.getsize(png) > 10000


def main():
    tests = [(n, fn) for n, fn in sorted(globals().items()) if n.startswith("test_") and callable(fn)]
    passed = failed = 0
    for name, fn in tests:
        try:
            fn()
            passed += 1
            print(f"ok      {name}")
        except Exception:
            failed += 1
            print(f"FAILED  {name}")
            traceback.print_exc()
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
