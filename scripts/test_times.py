#!/usr/bin/env python3
"""Each test's wall time, from the JUnit reports of scripts/test.sh's nextest runs.

    scripts/test_times.py OUT.tsv STEP=JUNIT.xml...

Writes OUT.tsv (seconds, outcome, step, binary, test; slowest first) and prints the 20
slowest tests and each step's total.
"""
import sys
import xml.etree.ElementTree as ET


def main(argv):
    if len(argv) < 2:
        print(__doc__.strip(), file=sys.stderr)
        return 64
    out, rows, totals = argv[0], [], {}
    for arg in argv[1:]:
        step, _, path = arg.partition("=")
        try:
            root = ET.parse(path).getroot()
        except (OSError, ET.ParseError) as e:
            print(f"test_times.py: {path}: {e}", file=sys.stderr)
            continue
        for suite in root.iter("testsuite"):
            for case in suite.iter("testcase"):
                outcome = "passed"
                for tag in ("failure", "error", "skipped"):
                    if case.find(tag) is not None:
                        outcome = {"failure": "failed", "error": "failed", "skipped": "skipped"}[tag]
                        break
                seconds = float(case.get("time") or 0)
                rows.append((seconds, outcome, step, suite.get("name", ""), case.get("name", "")))
                totals[step] = totals.get(step, 0.0) + seconds
    rows.sort(key=lambda r: (-r[0], r[4]))
    with open(out, "w") as f:
        f.write("seconds\toutcome\tstep\tbinary\ttest\n")
        for r in rows:
            f.write(f"{r[0]:.3f}\t{r[1]}\t{r[2]}\t{r[3]}\t{r[4]}\n")
    print(f"the 20 slowest of {len(rows)} tests ({out} has each one's time):")
    for r in rows[:20]:
        print(f"{r[0]:9.1f} s  {r[4]}{'' if r[1] == 'passed' else '  (' + r[1] + ')'}")
    print("test time by step: " + ", ".join(f"{s} {t:.0f} s" for s, t in totals.items()))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
