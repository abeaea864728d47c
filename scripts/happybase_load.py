"""A plain happybase batch loader, a reference for `cargo bench --bench thrift` and `--bench hbase`.

Reads the rows those benches dumped from tallrow's generator, creates the tables (under a
table prefix; `--prefix ""` for none), then writes every cell with happybase batches: one
batch per table and timestamp, since a Thrift1 mutation call carries a single timestamp,
sent every --batch rows. Only the writes are timed. Prints `rows N cells N calls N seconds S`.
"""

import argparse
import sys
import time
from collections import defaultdict

import happybase

from rows_dump import NO_TIMESTAMP, read_rows


def read_dump(path):
    """The dumped rows grouped by (table, timestamp): [(row, {column: value})]."""
    tables, by_table, rows, cells = read_rows(path)
    groups = defaultdict(list)
    for table, table_rows in by_table.items():
        for key, row_cells in table_rows:
            by_ts = defaultdict(dict)
            for family, qualifier, ts, value in row_cells:
                by_ts[ts][family + b":" + qualifier] = value
            for ts, columns in by_ts.items():
                groups[(table, ts)].append((key, columns))
    return tables, groups, rows, cells


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, required=True)
    p.add_argument("--prefix", default="hb", help='table prefix; "" for none')
    p.add_argument("--dump", required=True)
    p.add_argument("--batch", type=int, default=1000)
    a = p.parse_args()

    tables, groups, rows, cells = read_dump(a.dump)
    conn = happybase.Connection(a.host, a.port, table_prefix=a.prefix or None)
    existing = set(conn.tables())
    for name, families in tables:
        if families and name.encode() not in existing:
            conn.create_table(name, {f: {"max_versions": v} for f, v in families.items()})

    calls = 0
    started = time.perf_counter()
    for (table, ts), batch_rows in groups.items():
        t = conn.table(tables[table][0])
        b = t.batch(timestamp=None if ts == NO_TIMESTAMP else ts)
        pending = 0
        for key, columns in batch_rows:
            b.put(key, columns)
            pending += 1
            if pending == a.batch:
                b.send()
                calls, pending = calls + 1, 0
        if pending:
            b.send()
            calls += 1
    seconds = time.perf_counter() - started
    print(f"rows {rows} cells {cells} calls {calls} seconds {seconds:.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
