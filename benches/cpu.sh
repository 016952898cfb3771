#!/usr/bin/env bash
# Router speed in CPU time, which other jobs on a shared machine disturb far less than wall time:
# switch traversals per CPU-second (user + system, from getrusage of the child) and peak RSS, one
# thread, on the SurePath paper's 3-D HyperX (configs/hyperx-3d-8.toml: 8x8x8, 8 servers/switch,
# uniform, load 0.6, 3000 + 3000 cycles) with `minimal`, `surepath-polarized` (PolSP) and
# `surepath-omni` (OmniSP).
#
# Usage:
#   benches/cpu.sh                     # the three routings, full runs
#   benches/cpu.sh --cachegrind        # instructions per traversal (valgrind's cachegrind, 500 + 1500 cycles)
#   benches/cpu.sh --million CYCLES    # configs/hyperx-3d-32.toml (1M endpoints), CYCLES measured after
#                                      # CYCLES/5 warm-up: CPU-seconds per cycle and peak bytes per endpoint
# HXSIM=path/to/hxsim overrides the binary (default: a release build of this checkout).
set -euo pipefail
cd "$(dirname "$0")/.."
if [ -z "${HXSIM:-}" ]; then
  cargo build --release --quiet
  HXSIM=${CARGO_TARGET_DIR:-target}/release/hxsim
fi
export HXSIM
python3 - "$@" <<'PY'
import json, os, resource, subprocess, sys

hx = os.environ["HXSIM"]
args = sys.argv[1:]

def run(cmd):
    """Run `cmd`; return (stdout, CPU seconds, peak RSS bytes) of that child alone."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    out = subprocess.run(cmd, check=True, capture_output=True, text=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return out, cpu, after.ru_maxrss * 1024

def summary(stdout):
    d = json.loads(stdout)
    # hops_per_second is traversals per wall second of the run: their product is the traversal count.
    return d, round(d["hops_per_second"] * d["wall_seconds"])

routings = ["minimal", "surepath-polarized", "surepath-omni"]
cfg = "configs/hyperx-3d-8.toml"
if args[:1] == ["--cachegrind"]:
    short = ["--set", "simulation.warmup_cycles=500", "--set", "simulation.measure_cycles=1500"]
    print(f"{'routing':20} {'traversals':>11} {'instructions':>15} {'per traversal':>14}")
    for r in routings:
        base = [hx, "run", cfg, "--threads", "1", "--json", "--quiet", "--no-output",
                "--set", f"routing.algorithm={r}"] + short
        d, trav = summary(run(base)[0].stdout)
        cg = subprocess.run(["valgrind", "--tool=cachegrind", "--cache-sim=no",
                             "--cachegrind-out-file=/dev/null"] + base,
                            check=True, capture_output=True, text=True)
        ir = next(int(l.split(":")[1].replace(",", "")) for l in cg.stderr.splitlines() if "I   refs" in l)
        print(f"{r:20} {trav:>11} {ir:>15} {ir / trav:>14.0f}")
elif args[:1] == ["--million"]:
    cycles = int(args[1]) if len(args) > 1 else 200
    warm = max(cycles // 5, 1)
    cmd = [hx, "run", "configs/hyperx-3d-32.toml", "--threads", "1", "--json", "--quiet", "--no-output",
           "--set", f"simulation.warmup_cycles={warm}", "--set", f"simulation.measure_cycles={cycles}"]
    # Setup alone (1 + 1 cycles), subtracted to get the cost of a cycle.
    setup = [hx, "run", "configs/hyperx-3d-32.toml", "--threads", "1", "--json", "--quiet", "--no-output",
             "--set", "simulation.warmup_cycles=1", "--set", "simulation.measure_cycles=1"]
    _, cpu0, _ = run(setup)
    out, cpu, rss = run(cmd)
    d, trav = summary(out.stdout)
    total = warm + cycles
    per_cycle = (cpu - cpu0) / (total - 2)
    print(f"hyperx-3d-32, {total} cycles: {cpu:.1f} CPU-s (setup {cpu0:.1f}), {per_cycle:.3f} CPU-s/cycle, "
          f"{trav / max(cpu - cpu0, 1e-9):,.0f} traversals/CPU-s, peak {rss / 2**20:.0f} MiB = "
          f"{rss / 1048576:.0f} bytes/endpoint; accepted {d['accepted_load']:.4f}")
    print(f"extrapolated to 10,000 cycles: {cpu0 + per_cycle * 10000:.0f} CPU-s "
          f"({(cpu0 + per_cycle * 10000) / 60:.1f} CPU-min)")
else:
    print(f"{'routing':20} {'traversals':>11} {'CPU_s':>8} {'traversals/CPU_s':>17} {'peak_MiB':>9}")
    for r in routings:
        out, cpu, rss = run([hx, "run", cfg, "--threads", "1", "--json", "--quiet", "--no-output",
                             "--set", f"routing.algorithm={r}"] + args)
        d, trav = summary(out.stdout)
        print(f"{r:20} {trav:>11} {cpu:>8.2f} {trav / cpu:>17,.0f} {rss / 2**20:>9.1f}")
PY
