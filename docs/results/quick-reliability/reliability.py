#!/usr/bin/env python3
"""How often a quick headline run reads the 80 ms / 10 Mbit, 1% loss cell as
the full matrix does (QUIC worse).

Usage, from the repository root, after ten quick runs into results/quick-rel/q01
... q10 (see docs/headline.md for the loop):

    python3 docs/results/quick-reliability/reliability.py results/quick-rel

For every run directory it applies the bench's rule (stats.Compare) to the
cell twice: as recorded (every sample after the 5 s warm-up), and cut to the
first 15 s of each run, which is what the earlier -quick preset (3 repeats of
15 s) measured. Percentiles are nearest rank, a cell's p95 is the median of
its repeats' p95s, its spread the highest minus the lowest, the threshold
the wider of the two arms' spreads, as in the stats package.
"""
import json
import math
import os
import sys

CELL = "80ms-10mbit_loss1_reno"
WARMUP_NS = 5_000_000_000


def nearest_rank(xs, p):
    xs = sorted(xs)
    r = math.ceil(p * len(xs) / 100 - 1e-9)
    return xs[min(max(r, 1), len(xs)) - 1]


def median(xs):
    xs = sorted(xs)
    n = len(xs)
    return xs[n // 2] if n % 2 else (xs[n // 2 - 1] + xs[n // 2]) / 2


def arm_p95s(run_dir, arm, end_ns):
    out = []
    d = os.path.join(run_dir, CELL, arm)
    for rep in sorted(os.listdir(d)):
        if not rep.startswith("r") or not rep[1:].isdigit():
            continue  # set-aside attempts
        with open(os.path.join(d, rep, "run.json")) as f:
            run = json.load(f)
        if run.get("failed"):
            continue
        rtts = [s["rtt_ns"] / 1e6 for s in run["samples"]
                if WARMUP_NS <= s["offset_ns"] < end_ns]
        if rtts:
            out.append(nearest_rank(rtts, 95))
    return out


def verdict(tcp, quic):
    if len(tcp) < 2 or len(quic) < 2:
        return None, None, "unresolved"
    delta = median(quic) - median(tcp)
    threshold = max(max(tcp) - min(tcp), max(quic) - min(quic))
    if delta > threshold:
        v = "QUIC worse"
    elif delta < -threshold:
        v = "QUIC better"
    else:
        v = "unresolved"
    return delta, threshold, v


def main():
    top = sys.argv[1]
    print("| run | delta (ms) | threshold (ms) | reading | first 15 s: delta | threshold | reading |")
    print("|---|---|---|---|---|---|---|")
    same = {"all": 0, "15s": 0}
    runs = sorted(d for d in os.listdir(top) if os.path.isdir(os.path.join(top, d, CELL)))
    for name in runs:
        row = [name]
        for key, end in (("all", math.inf), ("15s", 15_000_000_000)):
            tcp = arm_p95s(os.path.join(top, name), "tcp", end)
            quic = arm_p95s(os.path.join(top, name), "quic", end)
            d, t, v = verdict(tcp, quic)
            same[key] += v == "QUIC worse"
            row += ["-" if d is None else f"{d:+.1f}", "-" if t is None else f"{t:.1f}", v]
        print("| " + " | ".join(row) + " |")
    print()
    print(f"QUIC worse, as the full matrix reads it: {same['all']} of {len(runs)} runs as recorded, "
          f"{same['15s']} of {len(runs)} cut to the first 15 s")
    slow = []
    total = 0
    for name in runs:
        d = os.path.join(top, name, CELL, "tcp")
        for rep in os.listdir(d):
            if not rep.startswith("r") or not rep[1:].isdigit():
                continue
            with open(os.path.join(d, rep, "run.json")) as f:
                rtts = [s["rtt_ns"] / 1e6 for s in json.load(f)["samples"] if s["offset_ns"] >= WARMUP_NS]
            total += len(rtts)
            slow += [r for r in rtts if r > 200]
    if total and slow:
        print(f"tcp round trips after the warm-up over 200 ms: {len(slow)} of {total} "
              f"({100 * len(slow) / total:.1f}%), {min(slow):.0f}-{max(slow):.0f} ms, median {median(slow):.0f}")


if __name__ == "__main__":
    main()
