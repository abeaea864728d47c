#!/usr/bin/env python3
"""A long history for `scripts/bench.sh history`: RUNS report folders made from one real run.

    scripts/history_runs.py SRC OUT RUNS OPS

Each run is a nightly copy (a day apart, the last on the source's day) of the report folder
SRC with OPS operations, the source's operations repeated under the names op00, op01, ...:
their figures (throughput,
p50, p99, p99.9) scaled by a run's own noise (3%, log-normal), and op00 to op03's latencies
stepped up 15% from two thirds of the way on. The histograms and interval logs are the
source's, so the runs read and merge as real ones do; only their figures differ.
"""
import csv
import datetime
import io
import json
import math
import random
import shutil
import sys
from pathlib import Path


def main(src, out, runs, ops):
    src, out = Path(src), Path(out)
    base = json.loads((src / "summary.json").read_text())
    names = [o["op"] for o in base["ops"]]
    mapping = [(f"op{i:02}", names[i % len(names)]) for i in range(ops)]
    rows = list(csv.DictReader(io.StringIO((src / "timeseries.csv").read_text())))
    rng = random.Random(1)
    day = 86_400_000
    for r in range(runs):
        s = json.loads(json.dumps(base))
        by_name = {o["op"]: o for o in base["ops"]}
        s["ops"] = []
        for new, old in mapping:
            o = json.loads(json.dumps(by_name[old]))
            o["op"] = new
            step = 1.15 if new < "op04" and r >= 2 * runs // 3 else 1.0
            k = math.exp(rng.gauss(0.0, 0.03)) * step
            for f in ("p50", "p90", "p99", "p99.9", "mean"):
                if f in o["response"]:
                    o["response"][f] = round(o["response"][f] * k)
            o["ops_per_s"] /= k
            s["ops"].append(o)
        s["started_ms"] = base["started_ms"] - (runs - 1 - r) * day
        s["finished_ms"] = base["finished_ms"] - (runs - 1 - r) * day
        for k in ("started", "finished"):
            at = datetime.datetime.fromtimestamp(s[k + "_ms"] / 1000, datetime.timezone.utc)
            s[k] = at.strftime("%Y-%m-%dT%H:%M:%S.") + f"{s[k + '_ms'] % 1000:03}Z"
        d = out / f"nightly-{r:04}"
        d.mkdir(parents=True, exist_ok=True)
        (d / "summary.json").write_text(json.dumps(s))
        text = io.StringIO()
        w = csv.DictWriter(text, fieldnames=list(rows[0].keys()), lineterminator="\n")
        w.writeheader()
        for row in rows:
            if row["op"] == "all":
                w.writerow(row)
                continue
            for new, old in mapping:
                if row["op"] == old:
                    w.writerow({**row, "op": new})
        (d / "timeseries.csv").write_text(text.getvalue())
        for new, old in mapping:
            shutil.copyfile(src / f"{old}.hlog", d / f"{new}.hlog")


if __name__ == "__main__":
    if len(sys.argv) != 5:
        sys.exit("usage: scripts/history_runs.py SRC OUT RUNS OPS")
    main(sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]))
