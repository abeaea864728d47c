# Makes tests/data/otava_changepoints.json: python tests/data/otava_changepoints.py > tests/data/otava_changepoints.json,
# in a virtual environment with apache-otava==0.8.0.
# Series with steps, drifts, spikes and flat stretches, and Otava 0.8.0's change points on
# each at several settings: the fixture src/stats/changepoint.rs is held to.
import json, random, sys
from otava.analysis import compute_change_points

rng = random.Random(20261204)
series = []
for k in range(24):
    n = rng.choice([24, 40, 60, 100, 160])
    base = rng.choice([1.0, 50.0, 1200.0, 35000.0])
    noise = rng.choice([0.005, 0.02, 0.05, 0.1])
    s = []
    level = base
    steps = sorted(rng.sample(range(3, n - 3), rng.choice([0, 1, 1, 2, 3])))
    drift = rng.choice([0.0, 0.0, 0.002, -0.003])
    for i in range(n):
        if i in steps:
            level *= rng.choice([0.8, 0.9, 1.1, 1.18, 1.5])
        level *= 1.0 + drift
        v = level * (1.0 + noise * rng.gauss(0, 1))
        if rng.random() < 0.03:
            v *= 3.0  # a spike
        s.append(round(v, rng.choice([1, 3, 6])))
    if k % 6 == 5:
        s[n // 3: n // 3 + 5] = [s[n // 3]] * 5  # a flat stretch
    series.append(s)
cases = []
for s in series:
    for window, p, mag in [(50, 0.001, 0.0), (10, 0.01, 0.0), (30, 0.05, 0.02), (6, 0.2, 0.0)]:
        cps, _ = compute_change_points(list(s), window_len=window, max_pvalue=p, min_magnitude=mag)
        cases.append({
            "series": s, "window": window, "max_pvalue": p, "min_magnitude": mag,
            "change_points": [{"index": int(c.index), "mean_before": float(c.stats.mean_1),
                               "mean_after": float(c.stats.mean_2), "pvalue": float(c.stats.pvalue)} for c in cps],
        })
json.dump({"otava": "0.8.0", "cases": cases}, sys.stdout, separators=(",", ":"))
