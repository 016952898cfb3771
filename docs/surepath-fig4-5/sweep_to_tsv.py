#!/usr/bin/env python3
"""Rows of a sweep file (`hxsim sweep ... -o FILE.h5`) in the TSV format of this folder, the rows
`configs/surepath-fig4-5.sh` prints: config, pattern, routing (the script's labels), cm
(congestion management), offered, accepted, latency, jain, hops, steady, accepted_trend, wall_s.

Usage: python3 docs/surepath-fig4-5/sweep_to_tsv.py FILE.h5 > rows.tsv

The table comes from the file's `/sweep` group; the config name, the routing's VC count and the
congestion management from each point's full config (the `config` attribute of its group, with
the defaults filled in), so any sweep of the figures' routings converts, whatever it swept.
"""
import math
import sys
import tomllib

import h5py

LABELS = {"minimal": "Minimal", "valiant": "Valiant", "omniwar": "OmniWAR", "polarized": "Polarized",
          "surepath-omni": "OmniSP", "surepath-polarized": "PolSP"}


def text(x):
    return x.decode() if isinstance(x, bytes) else str(x)


def label(cfg):
    """The script's routing label: the name, with `-NVC` where `routing.vcs` is set."""
    routing = cfg["routing"]
    name = LABELS.get(routing["algorithm"], routing["algorithm"])
    return f"{name}-{routing['vcs']}VC" if routing.get("vcs", 0) else name


# A point's config leaves out router keys at their defaults (`RouterConfig` in src/config.rs).
DEFAULT_WINDOW = 16
DEFAULT_THRESHOLD = 0.5


def congestion(cfg):
    """The script's `cm` column: `off`, `window:PACKETS` or `MODE:THRESHOLD`."""
    router = cfg.get("router", {})
    mode = router.get("injection_throttle", "off")
    if mode == "off":
        return "off"
    if mode == "window":
        return f"window:{router.get('injection_window', DEFAULT_WINDOW)}"
    return f"{mode}:{router.get('injection_threshold', DEFAULT_THRESHOLD)}"


def trend(x):
    """`accepted_trend` as the script writes it: empty where the run has none (NaN here)."""
    return "" if math.isnan(x) else "%.3f" % x


def main(path):
    f = h5py.File(path, "r")
    s = f["sweep"]
    print("config\tpattern\trouting\tcm\toffered\taccepted\tlatency\tjain\thops\tsteady\taccepted_trend\twall_s")
    for i in range(len(s["point"])):
        cfg = tomllib.loads(text(f[text(s["group"][i])].attrs["config"]))
        print("\t".join([cfg["name"], cfg["traffic"]["pattern"], label(cfg), congestion(cfg),
                         "%.1f" % cfg["traffic"]["load"], "%.4f" % s["accepted_load"][i],
                         "%.1f" % s["average_latency"][i], "%.4f" % s["jain_index"][i],
                         "%.3f" % s["average_hops"][i], str(bool(s["steady_state"][i])),
                         trend(s["accepted_trend"][i]), "%.0f" % s["wall_seconds"][i]]))


if __name__ == "__main__":
    main(sys.argv[1])
