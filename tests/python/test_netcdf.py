"""Results files open in the netCDF tools: netCDF4.Dataset (the netCDF-C library), xarray's default
engine and `ncdump -h`, for a run and a 10-point sweep on one network (whose points once shared
hard-linked /links columns that netCDF-C refused).

Run with `make test-python`, or by hand:

    HXSIM_BIN=target/debug/hxsim python3 tests/python/test_netcdf.py

Each `test_*` function also runs under pytest. Without pytest, this file runs them itself and
prints `N passed, N failed`; the exit code is non-zero if any failed.
"""

import os
import re
import subprocess
import sys
import tempfile
import traceback
import warnings
from pathlib import Path

import h5py
import netCDF4
import numpy as np
import xarray as xr

ROOT = Path(__file__).resolve().parents[2]
QUICKSTART = str(ROOT / "configs" / "quickstart.toml")
SHORT = ["--set", "simulation.warmup_cycles=300", "--set", "simulation.measure_cycles=500"]
LOADS = [round(0.1 * k, 1) for k in range(1, 11)]


def hxsim_bin():
    b = os.environ.get("HXSIM_BIN")
    if b:
        return b
    target = os.environ.get("CARGO_TARGET_DIR", str(ROOT / "target"))
    return str(Path(target) / "debug" / "hxsim")


def hxsim(*args):
    r = subprocess.run([hxsim_bin(), *args], capture_output=True, text=True)
    if r.returncode != 0:
        raise AssertionError(f"hxsim {' '.join(args)} exited {r.returncode}: {r.stderr}")
    return r


def _h5_groups(path):
    """Every group of the file as h5py sees it, `/` first."""
    with h5py.File(path, "r") as f:
        out = ["/"]
        f.visit(lambda n: out.append("/" + n) if isinstance(f[n], h5py.Group) else None)
        return out


def _nc_groups(ds, prefix=""):
    """Every group of a netCDF4.Dataset, as paths."""
    out = [prefix or "/"]
    for name, g in ds.groups.items():
        out += _nc_groups(g, f"{prefix}/{name}")
    return out


def _check_netcdf4(path):
    """netCDF-C reads every group h5py sees, every variable with the values h5py reads and with
    dimensions of its own group or above (no invented `phony_dim`), and returns the open dataset's
    groups."""
    with netCDF4.Dataset(path) as nc:
        assert sorted(_nc_groups(nc)) == sorted(_h5_groups(path))
        with h5py.File(path, "r") as f:

            def check(g, prefix):
                for name, v in g.variables.items():
                    assert not [d for d in v.dimensions if d.startswith("phony")], (prefix, name, v.dimensions)
                    h = f[f"{prefix}/{name}"]
                    if h.dtype.kind == "O":
                        assert list(v[:]) == list(h.asstr()[()]), (prefix, name)
                    else:
                        assert np.array_equal(np.ma.filled(v[:], np.nan), h[()], equal_nan=h.dtype.kind == "f"), (
                            prefix,
                            name,
                        )
                for sub, child in g.groups.items():
                    check(child, f"{prefix}/{sub}")

            check(nc, "")


def _check_xarray(path):
    """xarray with its default engine (netCDF4 when installed) opens every group without a warning."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for g in _h5_groups(path):
            with xr.open_dataset(path, group=g) as ds:
                assert not [d for d in ds.sizes if str(d).startswith("phony")], (path, g, dict(ds.sizes))


def _ncdump(path):
    r = subprocess.run(["ncdump", "-h", path], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    return r.stdout


def test_default_xarray_engine_is_netcdf4():
    """So that the other tests here check what a user gets from `xr.open_dataset(path)`."""
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "run.h5")
        hxsim("run", QUICKSTART, *SHORT, "-q", "-o", path)
        assert xr.backends.plugins.guess_engine(path) == "netcdf4"


def test_run_file_opens_in_netcdf4_xarray_and_ncdump():
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "run.h5")
        hxsim("run", QUICKSTART, *SHORT, "-q", "-o", path)
        _check_netcdf4(path)
        _check_xarray(path)
        with netCDF4.Dataset(path) as nc:
            # 4x4 switches, 6 ports each; 64 servers; the time series of 800 cycles in 100-cycle rows,
            # extendable (appended during the run: unlimited in netCDF terms).
            assert nc["links"].dimensions["link"].size == 96
            assert nc["servers"].dimensions["server"].size == 64
            assert nc["timeseries"].dimensions["cycle"].size == 8
            assert nc.format == "hxsim-results"
        header = _ncdump(path)
        for line in ("group: links {", "link = 96 ;", "server = 64 ;",
                     "cycle = UNLIMITED ; // (8 currently)", "uint64 phits(link) ;",
                     "double accepted_load(cycle) ;"):
            assert line in header, line


def test_ten_point_sweep_on_one_network_opens_in_netcdf4_xarray_and_ncdump():
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "sweep.h5")
        hxsim("sweep", QUICKSTART, *SHORT, "--set", "traffic.load=0.1:1.0:0.1", "-q", "-j", "2", "-o", path)
        _check_netcdf4(path)
        _check_xarray(path)
        # The one-liners a user types, with xarray's default engine.
        table = xr.open_dataset(path, group="sweep").to_dataframe()
        assert list(table["traffic.load"]) == LOADS and table["complete"].all()
        links = [xr.open_dataset(path, group=f"points/{i:03}/links") for i in range(10)]
        assert all(ds["phits"].dims == ("link",) and ds.sizes["link"] == 96 for ds in links)
        # Every point has the network's columns, the same for all, and its own phits.
        for col in ("switch", "port", "neighbour_switch", "neighbour_port", "dimension"):
            assert all(np.array_equal(ds[col], links[0][col]) for ds in links), col
        assert links[0]["phits"].sum() < links[9]["phits"].sum()
        header = _ncdump(path)
        assert len(re.findall(r"group: links \{", header)) == 10
        assert re.search(r"point = 10 ;", header)


def test_link_series_open_in_netcdf4_xarray_and_ncdump():
    """`output.link_series`: the per-class columns, written when the run ends beside the columns
    appended during it, share their `cycle` dimension (a run's, extendable, and a sweep point's,
    written once) and have their own `link_class`."""
    with tempfile.TemporaryDirectory() as d:
        run = os.path.join(d, "run.h5")
        sweep = os.path.join(d, "sweep.h5")
        hxsim("run", QUICKSTART, *SHORT, "--set", "output.link_series=true", "-q", "-o", run)
        hxsim("sweep", QUICKSTART, *SHORT, "--set", "output.link_series=true", "--set", "traffic.load=0.2,0.8",
              "-q", "-j", "2", "-o", sweep)
        for path, group in ((run, "timeseries"), (sweep, "points/001/timeseries")):
            _check_netcdf4(path)
            _check_xarray(path)
            with netCDF4.Dataset(path) as nc:
                ts = nc[group]
                assert ts["link_phits"].dimensions == ("cycle", "link_class")
                assert ts["minimal_share"].dimensions == ("cycle",)
                assert list(ts["link_class_name"][:]) == ["dim0", "dim1"]
                assert ts.dimensions["cycle"].size == 8
            header = _ncdump(path)
            for line in ("uint64 link_phits(cycle, link_class) ;", "double minimal_share(cycle) ;", "link_class = 2 ;"):
                assert line in header, (path, line)


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
