"""happybase's counter steps on fresh rows, as fast as the client goes.

    .venv/bin/python scripts/counter_steps.py HOST:PORT [ROWS]

On each of ROWS (300) fresh rows of a new table (family c, VERSIONS 10) of the Thrift1
server at HOST:PORT: counter_get, counter_inc(10), counter_get, counter_set(0),
counter_inc(1). Prints how often the last call returned each value (1 when the put of 0
lands after the increments before it) and the calls' median latency; drops the table.
"""

import sys
import time

import happybase

host, port = sys.argv[1].rsplit(":", 1)
rows = int(sys.argv[2]) if len(sys.argv) > 2 else 300
connection = happybase.Connection(host, port=int(port), autoconnect=True)
name = "counter_steps_%d" % int(time.time() * 1000)
connection.create_table(name, {"c": dict(max_versions=10)})
table = connection.table(name)
last, calls = {}, []
for i in range(rows):
    row, column = b"r%d" % i, b"c:n"
    started = time.perf_counter()
    table.counter_get(row, column)
    table.counter_inc(row, column, 10)
    table.counter_get(row, column)
    table.counter_set(row, column, 0)
    got = table.counter_inc(row, column, 1)
    calls.append((time.perf_counter() - started) / 5 * 1000)
    last[got] = last.get(got, 0) + 1
calls.sort()
print(
    "counter_inc(1) after counter_set(0) returned %s over %d rows; median call %.2f ms"
    % (", ".join("%d on %d" % (v, n) for v, n in sorted(last.items())), rows, calls[len(calls) // 2])
)
connection.disable_table(name)
connection.delete_table(name)
