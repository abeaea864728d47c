"""Reads the rows that benches/shared.rs dumps from tallrow's generator, for the plain
loaders the benches compare with (little-endian): tables: `u32 n`, then per table `u16 len,
name, u16 families`, per family `u16 len, name, u32 versions`; then per row `u8 table,
u32 len, key, u32 cells`, per cell `u16 len, family, u32 len, qualifier, i64 timestamp
(i64::MIN for none), u32 len, value`.
"""

import struct
from collections import defaultdict

NO_TIMESTAMP = -(2**63)


def read_rows(path):
    """Returns (tables, rows by table, rows, cells): tables as [(name, {family: versions})],
    rows by table index as [(key, [(family, qualifier, timestamp, value)])]."""
    with open(path, "rb") as f:
        data = f.read()
    at = 0

    def take(fmt):
        nonlocal at
        values = struct.unpack_from(fmt, data, at)
        at += struct.calcsize(fmt)
        return values[0] if len(values) == 1 else values

    def blob(width):
        nonlocal at
        n = take("<H" if width == 2 else "<I")
        b = data[at : at + n]
        at += n
        return b

    tables = []
    for _ in range(take("<I")):
        name = blob(2).decode()
        families = {}
        for _ in range(take("<H")):
            family = blob(2).decode()
            families[family] = take("<I")
        tables.append((name, families))
    by_table = defaultdict(list)
    rows = cells = 0
    while at < len(data):
        table = data[at]
        at += 1
        key = blob(4)
        row_cells = []
        for _ in range(take("<I")):
            family = blob(2)
            qualifier = blob(4)
            ts = take("<q")
            row_cells.append((family, qualifier, ts, blob(4)))
        cells += len(row_cells)
        by_table[table].append((key, row_cells))
        rows += 1
    return tables, by_table, rows, cells
