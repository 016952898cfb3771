#!/usr/bin/env python3
"""Draw a SurePath Fig. 4/5 panel's figure again from its TSV rows (this folder's `fig4-*.tsv`,
`fig5-*.tsv`), without running its sweep again (30 minutes to 2 hours each on 2 cores).

Usage: python3 docs/surepath-fig4-5/tsv_to_figure.py ROWS.tsv FIGURE.png [HXSIM]

Each row (one point: network, pattern, routing, congestion management, offered load and the
summary values `configs/surepath-fig4-5.sh` and `sweep_to_tsv.py` keep) becomes a JSON record as
the Slurm array job writes them (`{"point", "set", "summary"}`), `hxsim merge` makes them one sweep
file, whose root `config` is set to the network's config (`configs/NAME.toml`, with the row's
pattern) so that the title names the network, and `hxsim plot` draws it. The set of every point
holds the sweep's keys: `traffic.load` and `routing.algorithm` (the curves), and, one value each,
`traffic.pattern`, `router.injection_throttle` and the windows of 3,000 + 10,000 cycles, so the
title says which congestion management the figure is of. Values are those of the TSV (accepted
load to 4 decimals, latency to 0.1 cycle).
"""
import csv
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import h5py

ROOT = Path(__file__).resolve().parents[2]
ALGORITHMS = {"Minimal": "minimal", "Valiant": "valiant", "OmniWAR": "omniwar", "Polarized": "polarized",
              "OmniSP": "surepath-omni", "PolSP": "surepath-polarized"}


def records(rows):
    """The JSON records of the rows of the six routings of the figures, in TSV order."""
    out = []
    for row in rows:
        if row["routing"] not in ALGORITHMS:
            continue  # the fewer-VC variants are not in the figures
        cm = row["cm"].split(":")[0]
        summary = {
            "offered_load": float(row["offered"]),
            "accepted_load": float(row["accepted"]),
            "average_latency": float(row["latency"]),
            "jain_index": float(row["jain"]),
            "average_hops": float(row["hops"]),
            # 1 or 0: `hxsim merge` keeps a JSON summary's numbers only (a `true` would be dropped).
            "steady_state": int(row["steady"] == "True"),
        }
        if row["accepted_trend"]:
            summary["accepted_trend"] = float(row["accepted_trend"])
        out.append({
            "point": len(out),
            "set": {
                "traffic.load": row["offered"],
                "routing.algorithm": ALGORITHMS[row["routing"]],
                "traffic.pattern": row["pattern"],
                "router.injection_throttle": cm,
                "simulation.warmup_cycles": "3000",
                "simulation.measure_cycles": "10000",
            },
            "summary": summary,
        })
    return out


def main(tsv, figure, hxsim):
    with open(tsv, newline="") as f:
        rows = list(csv.DictReader(f, delimiter="\t"))
    recs = records(rows)
    if not recs:
        sys.exit(f"{tsv}: no rows of the figures' routings")
    config = (ROOT / "configs" / f"{rows[0]['config']}.toml").read_text()
    config = config.replace('pattern = "uniform"', f'pattern = "{rows[0]["pattern"]}"')
    with tempfile.TemporaryDirectory() as d:
        files = []
        for r in recs:
            p = os.path.join(d, f"point-{r['point']}.json")
            with open(p, "w") as f:
                json.dump(r, f)
            files.append(p)
        merged = os.path.join(d, "sweep.h5")
        subprocess.run([hxsim, "merge", *files, "-o", merged], check=True)
        with h5py.File(merged, "r+") as f:
            f.attrs["config"] = config
        subprocess.run([hxsim, "plot", merged, "-o", figure], check=True)


if __name__ == "__main__":
    if len(sys.argv) not in (3, 4):
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[2], sys.argv[3] if len(sys.argv) == 4 else "hxsim")
