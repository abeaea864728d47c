#!/usr/bin/env python3
"""Each test's wall time, from the JUnit reports of scripts/test.sh's nextest runs, and the
run's time against the suite's budget.

    scripts/test_times.py [--steps STEPS.tsv --budget docs/testing.md] OUT.tsv [STEP=JUNIT.xml...]

Writes OUT.tsv (seconds, outcome, step, binary, test; slowest first) and prints the 20
slowest tests and each step's total. With --steps (each step's start, in seconds since the
run began, and its name, a line each, the last one the run's end) and --budget (the file
whose budget tables say what each line may take), it then prints each budget line's time
against its budget, and which are over and by how much. It never fails the run for that:
the budget is for people.
"""
import re
import sys
import xml.etree.ElementTree as ET


def read_junit(args):
    rows, totals = [], {}
    for arg in args:
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
    return rows, totals


def mmss(seconds):
    s = int(round(seconds))
    sign = "-" if s < 0 else ""
    s = abs(s)
    return f"{sign}{s // 60}:{s % 60:02d}"


def seconds_of(text):
    m = re.fullmatch(r"\s*(\d+):(\d\d)\s*", text)
    if not m:
        raise ValueError(f"not m:ss: {text!r}")
    return int(m.group(1)) * 60 + int(m.group(2))


def budget_tables(path):
    """The two tables of `path` that follow a `<!-- budget: steps -->` and a
    `<!-- budget: areas -->` line: rows of (name, patterns, seconds), each table as written."""
    tables, current = {}, None
    with open(path, encoding="utf-8") as f:
        for lineno, line in enumerate(f, 1):
            m = re.match(r"\s*<!-- budget: (steps|areas) -->", line)
            if m:
                current = tables.setdefault(m.group(1), [])
                continue
            if current is None:
                continue
            if not line.startswith("|"):
                if current:
                    current = None
                continue
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            if len(cells) != 3 or set(cells[2]) <= set("-: ") or cells[0].startswith("**"):
                continue
            try:
                budget = seconds_of(cells[2])
            except ValueError:
                if cells[2] == "budget":
                    continue
                raise ValueError(f"{path}:{lineno}: budget column: {cells[2]!r} is not m:ss")
            patterns = [p.strip().strip("`") for p in cells[1].split(",") if p.strip()]
            current.append((cells[0], patterns, budget))
    for kind in ("steps", "areas"):
        if not tables.get(kind):
            raise ValueError(f"{path}: no `<!-- budget: {kind} -->` table")
    return tables["steps"], tables["areas"]


def read_steps(path):
    """(name, seconds) per step, from lines of `start<TAB>name`; the last line is the end."""
    marks = []
    with open(path, encoding="utf-8") as f:
        for line in f:
            start, _, name = line.rstrip("\n").partition("\t")
            marks.append((int(start), name))
    return [(marks[i][1], marks[i + 1][0] - marks[i][0]) for i in range(len(marks) - 1)]


def step_line(name, lines):
    """The budget line whose patterns one of begins `name` with (the longest such pattern)."""
    best, best_len = None, -1
    for line, patterns, _ in lines:
        for p in patterns:
            if name.startswith(p) and len(p) > best_len:
                best, best_len = line, len(p)
    return best


def area_of(binary, test, areas):
    """The area a test counts under: a pattern `mod::` takes the integration binary's tests
    whose name begins with it, `unit` every test of another binary, `*` the rest."""
    integration = binary.endswith("::it") or binary == "it"
    rest = None
    for name, patterns, _ in areas:
        for p in patterns:
            if p == "*":
                rest = name
            elif p == "unit" and not integration:
                return name
            elif p.endswith("::") and integration and test.startswith(p):
                return name
    return rest


def budget_report(steps_path, budget_path, rows):
    step_lines, areas = budget_tables(budget_path)
    steps = read_steps(steps_path)
    took = {name: 0.0 for name, _, _ in step_lines}
    unbudgeted = 0.0
    # The wall time of the test steps, shared out among the areas by their tests' times (the
    # tests run side by side, so their times add up to more than the step's).
    test_steps = {"default": [], "faults": []}
    for name, seconds in steps:
        line = step_line(name, step_lines)
        if line is None:
            unbudgeted += seconds
        else:
            took[line] += seconds
        if name.startswith("cargo nextest run faults::") or name.startswith("cargo test faults::"):
            test_steps["faults"].append(seconds)
        elif name in ("cargo nextest run", "cargo test"):
            test_steps["default"].append(seconds)
    area_tests = {name: {"default": 0.0, "faults": 0.0} for name, _, _ in areas}
    for seconds, _, step, binary, test in rows:
        area = area_of(binary, test, areas)
        if area is not None and step in test_steps:
            area_tests[area][step] += seconds
    area_wall = {name: 0.0 for name, _, _ in areas}
    for step, walls in test_steps.items():
        total = sum(a[step] for a in area_tests.values())
        if total > 0:
            for name in area_wall:
                area_wall[name] += sum(walls) * area_tests[name][step] / total

    def table(title, lines, times):
        print(title)
        over = []
        for name, _, budget in lines:
            t = times[name]
            mark = ""
            if t > budget:
                mark = f"  over by {mmss(t - budget)}"
                over.append(f"{name} by {mmss(t - budget)}")
            print(f"  {name:<50} {mmss(t):>6} {mmss(budget):>6}{mark}")
        return over

    print(f"the suite's time against its budget ({budget_path}; m:ss, took then budget):")
    over = table("by step:", step_lines, took)
    total = sum(took.values()) + unbudgeted
    budget = sum(b for _, _, b in step_lines)
    if unbudgeted:
        print(f"  {'(steps on no budget line)':<50} {mmss(unbudgeted):>6}")
    print(f"  {'total':<50} {mmss(total):>6} {mmss(budget):>6}" + (f"  over by {mmss(total - budget)}" if total > budget else ""))
    area_over = table(
        "by test area (each test step's wall time shared by its tests' times):", areas, area_wall
    )
    if over or area_over:
        print("over budget: " + "; ".join(over + area_over))
    else:
        print("within budget")


def main(argv):
    steps = budget = None
    while argv and argv[0].startswith("--"):
        if argv[0] == "--steps" and len(argv) > 1:
            steps, argv = argv[1], argv[2:]
        elif argv[0] == "--budget" and len(argv) > 1:
            budget, argv = argv[1], argv[2:]
        else:
            break
    if not argv or (steps is None) != (budget is None):
        print(__doc__.strip(), file=sys.stderr)
        return 64
    out = argv[0]
    rows, totals = read_junit(argv[1:])
    if rows:
        with open(out, "w") as f:
            f.write("seconds\toutcome\tstep\tbinary\ttest\n")
            for r in rows:
                f.write(f"{r[0]:.3f}\t{r[1]}\t{r[2]}\t{r[3]}\t{r[4]}\n")
        print(f"the 20 slowest of {len(rows)} tests ({out} has each one's time):")
        for r in rows[:20]:
            print(f"{r[0]:9.1f} s  {r[4]}{'' if r[1] == 'passed' else '  (' + r[1] + ')'}")
        print("test time by step: " + ", ".join(f"{s} {t:.0f} s" for s, t in totals.items()))
    if steps is not None:
        try:
            budget_report(steps, budget, rows)
        except (OSError, ValueError) as e:
            print(f"test_times.py: the budget: {e}", file=sys.stderr)
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
