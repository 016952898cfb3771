"""The hxsim-results package as a user meets it: installed with pip from ./python, reading a run and
a sweep written by hxsim, drawing the standard figures, and the example script rebuilding SurePath
Fig. 4's uniform panel from a reduced sweep.

Run with `make test-python`, or by hand:

    HXSIM_BIN=target/debug/hxsim python3 python/tests/test_hxsim_results.py

Each `test_*` function also runs under pytest. Without pytest, this file runs them itself and
prints `N passed, N failed`; the exit code is non-zero if any failed.
"""

import json
import os
import subprocess
import sys
import tempfile
import traceback
from pathlib import Path

import h5py
import numpy as np

ROOT = Path(__file__).resolve().parents[2]
ROUTINGS = ["minimal", "valiant", "omniwar", "polarized", "surepath-omni", "surepath-polarized"]
PAPER_LABELS = ["Minimal", "Valiant", "OmniWAR", "Polarized", "OmniSP", "PolSP"]
# SurePath Fig. 4's network (configs/hyperx-2d-16.toml) at reduced size: 4x4 switches, 4 servers each.
REDUCED = ["--set", "topology.sides=[4,4]", "--set", "topology.servers_per_switch=4",
           "--set", "simulation.warmup_cycles=300", "--set", "simulation.measure_cycles=600"]

_WORK = tempfile.TemporaryDirectory()
WORK = Path(_WORK.name)


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


def installed():
    """`pip install ./python` into a folder of this test's own (no dependencies: the test's Python
    has them), imported from there."""
    target = WORK / "site"
    if not target.exists():
        r = subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
                            "--no-deps", "--no-build-isolation", "--target", str(target), str(ROOT / "python")],
                           capture_output=True, text=True)
        assert r.returncode == 0, r.stdout + r.stderr
        sys.path.insert(0, str(target))
    import hxsim_results

    assert Path(hxsim_results.__file__).resolve().is_relative_to(target.resolve()), hxsim_results.__file__
    return hxsim_results


def sweep_file():
    """The reduced Fig. 4 sweep: uniform traffic, offered 0.2, 0.5 and 0.8, the six routings."""
    path = WORK / "fig4.h5"
    if not path.exists():
        hxsim("sweep", str(ROOT / "configs" / "hyperx-2d-16.toml"), *REDUCED,
              "--set", "traffic.load=0.2,0.5,0.8", "--set", "routing.algorithm=" + ",".join(ROUTINGS),
              "-q", "-j", "2", "-o", str(path))
    return str(path)


def test_pip_install_gives_the_documented_api():
    hx = installed()
    for name in hx.__all__:
        assert getattr(hx, name).__doc__, name


def test_points_are_the_sweep_table_with_its_swept_keys_first():
    hx = installed()
    path = sweep_file()
    pts = hx.points(path)
    keys = hx.swept_keys(path)
    assert keys[:2] == ["topology.sides", "topology.servers_per_switch"] and "traffic.load" in keys
    assert list(pts.columns[: len(keys)]) == keys
    assert list(pts.index) == list(range(18)) and pts["complete"].all()
    assert pts["traffic.load"].dtype.kind == "f" and sorted(set(pts["traffic.load"])) == [0.2, 0.5, 0.8]
    with h5py.File(path, "r") as f:
        assert np.array_equal(pts["accepted_load"].to_numpy(), f["sweep/accepted_load"][()])
        assert [g for g in pts["group"]] == [g.decode() for g in f["sweep/group"][()]]
    i = hx.find_point(path, traffic__load=0.5, routing__algorithm="valiant")
    assert pts.loc[i, "routing.algorithm"] == "valiant" and pts.loc[i, "traffic.load"] == 0.5
    for bad in ({"traffic__load": 0.3}, {"routing__algorithm": "minimal"}):
        try:
            hx.find_point(path, **bad)
            raise AssertionError(f"{bad} found one point")
        except KeyError:
            pass
    grid = hx.grid(path)
    assert dict(grid.sizes) == {"traffic.load": 3, "routing.algorithm": 6}
    assert hx.is_sweep(path)


def test_open_run_reads_a_run_file_and_a_sweep_point():
    hx = installed()
    run = WORK / "run.h5"
    out = hxsim("run", str(ROOT / "configs" / "quickstart.toml"), *REDUCED[4:], "--json", "-q", "-o", str(run))
    summary = json.loads(out.stdout)
    r = hx.open_run(str(run))
    assert set(r) == {"summary", "timeseries", "servers", "latency", "links", "vcs", "attrs"}
    assert float(r["summary"]["accepted_load"]) == summary["accepted_load"]
    assert r["timeseries"]["accepted_load"].dims == ("cycle",) and r["timeseries"].sizes["cycle"] == 9
    assert r["servers"].sizes["server"] == 64 and r["links"].sizes["link"] == 96
    assert int(r["latency"]["packets"].sum()) == summary["packets_delivered"]
    assert r["attrs"]["status"] == "complete" and "[topology]" in r["attrs"]["config"]
    assert not hx.is_sweep(str(run))

    path = sweep_file()
    pts = hx.points(path)
    p = hx.open_run(path, point=7)
    assert float(p["summary"]["average_latency"]) == pts.loc[7, "average_latency"]
    for bad in (None, 18):
        try:
            hx.open_run(path, point=bad)
            raise AssertionError(f"point {bad} opened")
        except (ValueError, IndexError):
            pass


def test_open_run_reads_a_workloads_task_finish_times():
    hx = installed()
    run = WORK / "workload.h5"
    cfg = WORK / "workload.toml"
    cfg.write_text('[topology]\nsides = [4, 4]\nservers_per_switch = 2\n'
                   '[workload]\nkernel = "allreduce-ring"\nbytes = 4096\nmapping = "random"\n')
    out = hxsim("run", str(cfg), "--json", "-q", "-o", str(run))
    summary = json.loads(out.stdout)
    r = hx.open_run(str(run))
    tasks = r["tasks"]
    assert tasks["finish_cycles"].dims == ("task",) and tasks.sizes["task"] == 32
    finish = np.sort(tasks["finish_cycles"].values)
    assert int(finish[-1]) == summary["makespan_cycles"] == int(r["summary"]["makespan_cycles"])
    assert int(finish[0]) == summary["task_finish_min"]
    assert int(finish[(len(finish) - 1) // 2]) == summary["task_finish_median"]
    assert int(tasks["finished"].sum()) == 32 and len(set(tasks["server"].values.tolist())) == 32


def test_open_run_reads_failure_events_and_their_losses():
    hx = installed()
    run = WORK / "events.h5"
    out = hxsim("run", str(ROOT / "configs" / "quickstart.toml"), "--json", "-q", "-o", str(run),
                "--set", "routing.algorithm=surepath-polarized", "--set", "traffic.load=0.8",
                "--set", "faults.events=[{cycle=2500, links=[[0,0],[5,1]]}, {cycle=3500, switches=[10]}]")
    summary = json.loads(out.stdout)
    r = hx.open_run(str(run))
    ev = r["events"]
    assert ev["cycle"].dims == ("event",) and ev["cycle"].values.tolist() == [2500, 3500]
    assert ev["packets_lost"].values.tolist() == [e["packets_lost"] for e in summary["failure_events"]]
    assert ev["switches"].values.tolist() == [0, 1]
    # Every lost or stranded packet is in the time series' losses (the run's measured window
    # covers them all: they happen after its warm-up).
    lost = int(r["timeseries"]["lost_packets"].sum())
    assert lost <= summary["packets_lost"] + summary["packets_stranded"] and lost > 0
    # Per server, by source and by destination: every loss of the run once.
    servers = r["servers"]
    for column in ("lost_as_source", "lost_as_destination"):
        assert servers[column].dims == ("server",)
        assert int(servers[column].sum()) == summary["packets_lost"] + summary["packets_stranded"]


def test_open_run_reads_the_link_series_per_class():
    """`output.link_series`: the per-class columns are in the time series, along `cycle` and
    `link_class`; the live ports per class are the 4x4 HyperX's 4 x 4 x 3 per dimension until two
    dimension-0 links fail (4 output ports fewer), and the minimal share is a fraction."""
    hx = installed()
    run = WORK / "links.h5"
    hxsim("run", str(ROOT / "configs" / "quickstart.toml"), "-q", "-o", str(run), *REDUCED[4:],
          "--set", "output.link_series=true", "--set", "routing.algorithm=surepath-polarized",
          "--set", "faults.events=[{cycle=500, links=[[0,0],[5,1]]}]")
    ts = hx.open_run(str(run))["timeseries"]
    assert ts["link_phits"].dims == ("cycle", "link_class") and ts.sizes["link_class"] == 2
    assert [str(n) for n in ts["link_class_name"].values] == ["dim0", "dim1"]
    ports = ts["link_ports"].values
    before = ts["cycle"].values <= 500
    assert (ports[before] == [48, 48]).all() and (ports[~before] == [44, 48]).all()
    share = ts["minimal_share"].values
    assert ((share >= 0) & (share <= 1)).all() and share.mean() > 0.5
    assert (ts["link_load"].values <= 1).all() and float(ts["link_phits"].sum()) > 0
    plain = WORK / "plain.h5"
    hxsim("run", str(ROOT / "configs" / "quickstart.toml"), "-q", "-o", str(plain), *REDUCED[4:])
    assert "link_phits" not in hx.open_run(str(plain))["timeseries"]


def test_figures_have_one_curve_per_routing_at_the_paper_size():
    hx = installed()
    fig = hx.plot_load_sweep(sweep_file())
    w, h = fig.get_size_inches()
    assert w == 7.0 and h < 3.5, (w, h)
    assert [a.get_title() for a in fig.axes] == ["Throughput", "Latency", "Fairness"]
    legend = fig.legends[0]
    assert [t.get_text() for t in legend.get_texts()] == PAPER_LABELS
    assert all(t.get_fontsize() == 9.0 for t in legend.get_texts())
    assert all(t.get_fontsize() == 9.0 for a in fig.axes for t in a.get_xticklabels())
    curves = [l for l in fig.axes[1].get_lines() if not l.get_label().startswith("_")]
    assert len(curves) == 6 and all(len(l.get_xdata()) == 3 for l in curves)
    # Valiant's latency is the highest at 0.8 (every packet goes through an intermediate switch).
    valiant = curves[1].get_ydata()
    assert all(valiant[-1] > c.get_ydata()[-1] for i, c in enumerate(curves) if i != 1)
    one = hx.plot_latency(sweep_file(), where={"routing.algorithm": "minimal"})
    assert not one.legends, "one series: no legend"
    ts = hx.plot_timeseries(sweep_file(), point=0)
    assert len(ts.axes) == 3 and len(ts.axes[0].get_lines()) >= 2


def test_example_rebuilds_the_uniform_panel_of_fig_4():
    site = installed().__file__
    png = WORK / "fig4-uniform.png"
    env = dict(os.environ, PYTHONPATH=str(Path(site).parents[1]))
    r = subprocess.run([sys.executable, str(ROOT / "python" / "examples" / "surepath_fig4_uniform.py"), sweep_file(),
                        str(png)], capture_output=True, text=True, env=env)
    assert r.returncode == 0, r.stderr
    from PIL import Image

    with Image.open(png) as im:
        assert im.size[0] == 2100, im.size  # 7 in at 300 dpi


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
