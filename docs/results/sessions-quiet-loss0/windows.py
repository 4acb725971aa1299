#!/usr/bin/env python3
"""Per-session congestion window and queue loss of the quic arm, from the
quic-go metrics every server.json carries (docs/sessions.md cites these).

    python3 docs/results/sessions-quiet-loss0/windows.py results/sessions-quiet-loss0
"""
import glob
import json
import statistics
import sys

WARMUP_NS = 5e9
workdir = sys.argv[1] if len(sys.argv) > 1 else "results/sessions-quiet-loss0"
print("N  median cwnd per session (bytes)  median bytes in flight  packets lost / sent")
for n in (1, 2, 4, 8):
    cwnd, inflight, lost, sent = [], [], 0, 0
    for f in glob.glob(f"{workdir}/*_s{n}/quic/r*/server.json"):
        r = json.load(open(f))
        for s in r.get("sessions") or [{"state": r.get("state")}]:
            q = s["state"]["quic"][0]
            m = [x for x in q["metrics"] if x["t_ns"] > WARMUP_NS]
            if m:
                cwnd.append(statistics.median(x["cwnd_bytes"] for x in m))
                inflight.append(statistics.median(x["bytes_in_flight"] for x in m))
            lost += q["stats"]["packets_lost"]
            sent += q["stats"]["packets_sent"]
    if not cwnd:
        print(f"{n}  no runs under {workdir}")
        continue
    print(f"{n}  {statistics.median(cwnd):.0f}  {statistics.median(inflight):.0f}  {100 * lost / sent:.2f}%")
