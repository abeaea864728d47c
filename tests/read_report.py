"""Reads a tallrow run report with the HdrHistogram Python package and checks that every
operation's interval log agrees with ops.csv: the same count, max, mean and percentiles.

Usage: read_report.py REPORT_DIR   (exit 0 and one line per operation when they agree)
"""

import csv
import math
import os
import sys

from hdrh.histogram import HdrHistogram
from hdrh.log import HistogramLogReader

LOWEST, HIGHEST, DIGITS = 1, 3600 * 10**9, 3


def value_at_quantile(h, q):
    """The value at quantile q by the rank rule tallrow's HdrHistogram uses: the ceil(q * n)-th
    value, reported as the highest value equivalent to it."""
    n = h.get_total_count()
    rank = max(1, math.ceil(q * n))
    seen = 0
    for index in range(h.counts_len):
        seen += h.get_count_at_index(index)
        if seen >= rank:
            return h.get_highest_equivalent_value(h.get_value_from_index(index))
    return 0


def main(folder):
    with open(os.path.join(folder, "ops.csv"), newline="") as f:
        rows = list(csv.DictReader(f))
    problems = []
    checked = 0
    for row in rows:
        op = row["op"]
        if op == "all":
            continue
        reader = HistogramLogReader(os.path.join(folder, op + ".hlog"), HdrHistogram(LOWEST, HIGHEST, DIGITS))
        total = HdrHistogram(LOWEST, HIGHEST, DIGITS)
        intervals = 0
        while True:
            h = reader.get_next_interval_histogram()
            if h is None:
                break
            total.add(h)
            intervals += 1
        count = total.get_total_count()
        if count != int(row["count"]):
            problems.append(f"{op}: count {count} in the log, {row['count']} in ops.csv")
            continue
        if count == 0:
            continue
        figures = {
            "max_us": total.get_max_value() / 1000,
            "p50_us": total.get_value_at_percentile(50) / 1000,
            "p90_us": value_at_quantile(total, 0.9) / 1000,
            "p99_us": value_at_quantile(total, 0.99) / 1000,
            "p999_us": value_at_quantile(total, 0.999) / 1000,
        }
        for column, got in figures.items():
            want = float(row[column])
            if abs(got - want) > 0.0015:
                problems.append(f"{op}: {column} {got:.3f} from the log, {want:.3f} in ops.csv")
        mean = total.get_mean_value() / 1000
        if abs(mean - float(row["mean_us"])) > max(0.001 * mean, 0.002):
            problems.append(f"{op}: mean_us {mean:.3f} from the log, {row['mean_us']} in ops.csv")
        checked += 1
        print(f"{op}: {count} values in {intervals} intervals, p50 {figures['p50_us']:.3f} us, "
              f"p99 {figures['p99_us']:.3f} us, max {figures['max_us']:.3f} us: agree")
    if problems:
        print("\n".join(problems), file=sys.stderr)
        return 1
    if checked == 0:
        print("no operation with values to check", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
