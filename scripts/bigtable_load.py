"""A plain loader written with Google's Python client, the reference for
`cargo bench --bench bigtable`.

Reads the rows that benches/bigtable.rs dumped from tallrow's generator
(scripts/rows_dump.py), creates the tables in the instance (the same table ids as
tallrow's mapping), then writes every row with `Table.mutate_rows`, --batch rows per call,
checking every row's status. Only the writes are timed. Prints
`rows N cells N calls N seconds S`. Honours BIGTABLE_EMULATOR_HOST.
"""

import argparse
import datetime
import sys
import time

from google.cloud import bigtable
from google.cloud.bigtable import column_family

from rows_dump import NO_TIMESTAMP, read_rows

EPOCH = datetime.datetime(1970, 1, 1, tzinfo=datetime.timezone.utc)


def table_id(name):
    """tallrow's mapping: `ns:name` is `ns-.name`, a '-' in the name doubled."""
    ns, _, qualifier = name.rpartition(":")
    qualifier = qualifier.replace("-", "--")
    return f"{ns}-.{qualifier}" if ns else qualifier


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--project", required=True)
    p.add_argument("--instance", required=True)
    p.add_argument("--dump", required=True)
    p.add_argument("--batch", type=int, default=1000)
    a = p.parse_args()

    tables, rows_by_table, rows, cells = read_rows(a.dump)
    client = bigtable.Client(project=a.project, admin=True)
    instance = client.instance(a.instance)
    handles = []
    for name, families in tables:
        t = instance.table(table_id(name))
        if families:
            t.create(column_families={f: column_family.MaxVersionsGCRule(v) for f, v in families.items()})
        handles.append(t)

    calls = 0
    started = time.perf_counter()
    for table, table_rows in rows_by_table.items():
        t = handles[table]
        for at in range(0, len(table_rows), a.batch):
            batch = []
            for key, row_cells in table_rows[at : at + a.batch]:
                row = t.direct_row(key)
                for family, qualifier, ts, value in row_cells:
                    when = None if ts == NO_TIMESTAMP else EPOCH + datetime.timedelta(milliseconds=ts)
                    row.set_cell(family.decode(), qualifier, value, timestamp=when)
                batch.append(row)
            for status in t.mutate_rows(batch):
                if status.code != 0:
                    print(f"write failed: {status}", file=sys.stderr)
                    return 1
            calls += 1
    seconds = time.perf_counter() - started
    print(f"rows {rows} cells {cells} calls {calls} seconds {seconds:.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
