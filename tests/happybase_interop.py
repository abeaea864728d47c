"""happybase, a client we did not write, against `tallrow serve`.

Usage: happybase_interop.py PORT TRANSPORT PROTOCOL EXPECTED_JSON

EXPECTED_JSON names a table `tallrow load` wrote and some of its rows (hex-encoded); they
must read back the same. The script also writes table `hb_written` for tallrow to read.
Prints `ok NAME` per check; any failure raises, so the exit status is non-zero.
"""

import json
import struct
import sys
import threading

import happybase
from Hbase_thrift import IOError as HbaseIOError, AlreadyExists, Mutation, TAppend
from thriftpy2.thrift import TApplicationException

port, transport, protocol, expected_path = int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4]


def connect():
    return happybase.Connection(
        "127.0.0.1", port, transport=transport, protocol=protocol, autoconnect=True, timeout=30000
    )


def ok(name):
    print("ok", name, flush=True)


def raises(kind, f, text=None):
    try:
        f()
    except kind as e:
        message = getattr(e, "message", b"") or b""
        if isinstance(message, str):
            message = message.encode()
        assert text is None or text.encode() in message, (text, message)
        return
    raise AssertionError(f"expected {kind.__name__}")


c = connect()

# Tables with column-family options, listed and described back.
c.create_table(
    "hb_t",
    {
        "cf": dict(max_versions=3, compression="SNAPPY", bloom_filter_type="ROWCOL", in_memory=True),
        "ttl": dict(time_to_live=3600, block_cache_enabled=True),
        "one": dict(),
    },
)
assert b"hb_t" in c.tables(), c.tables()
fam = c.table("hb_t").families()
assert fam[b"cf"]["max_versions"] == 3 and fam[b"cf"]["compression"] == b"SNAPPY", fam
assert fam[b"cf"]["bloom_filter_type"] == b"ROWCOL" and fam[b"cf"]["in_memory"], fam
assert fam[b"ttl"]["time_to_live"] == 3600 and fam[b"ttl"]["block_cache_enabled"], fam
assert fam[b"one"]["max_versions"] == 3, fam  # the Thrift default
raises(AlreadyExists, lambda: c.create_table("hb_t", {"cf": dict()}))
raises(HbaseIOError, lambda: c.table("hb_missing").row(b"x"), "TableNotFoundException")
raises(HbaseIOError, lambda: c.table("hb_t").put(b"r", {b"nofam:q": b"v"}), "nofam")
ok("create_table with options, families, AlreadyExists, missing table and family")

t = c.table("hb_t")
# Batch puts and deletes.
with t.batch(batch_size=7) as b:
    for i in range(50):
        b.put(b"row%02d" % i, {b"cf:a": b"a%d" % i, b"cf:b": b"b%d" % i, b"one:x": b"x"})
    b.delete(b"row03")
    b.delete(b"row04", columns=[b"cf:a"])
    b.delete(b"row05", columns=[b"cf"])
assert t.row(b"row03") == {}
assert t.row(b"row04") == {b"cf:b": b"b4", b"one:x": b"x"}
assert t.row(b"row05") == {b"one:x": b"x"}
assert t.row(b"row06", columns=[b"cf:a"]) == {b"cf:a": b"a6"}
assert t.row(b"row06", columns=[b"cf"]) == {b"cf:a": b"a6", b"cf:b": b"b6"}
ok("batch puts and deletes, rows with column selection")

# Versions and timestamps.
for ts in (100, 200, 300, 400):
    t.put(b"v", {b"cf:q": b"v%d" % ts}, timestamp=ts)
assert t.cells(b"v", b"cf:q", versions=10, include_timestamp=True) == [(b"v400", 400), (b"v300", 300), (b"v200", 200)]
assert t.cells(b"v", b"cf:q", versions=2, timestamp=400, include_timestamp=True) == [(b"v300", 300), (b"v200", 200)]
assert t.row(b"v", timestamp=300, include_timestamp=True) == {b"cf:q": (b"v200", 200)}
t.delete(b"v", columns=[b"cf:q"], timestamp=300)
assert t.cells(b"v", b"cf:q", versions=10, include_timestamp=True) == [(b"v400", 400)]
rows = dict(t.rows([b"row01", b"nope", b"row02"], columns=[b"cf:a"]))
assert rows == {b"row01": {b"cf:a": b"a1"}, b"row02": {b"cf:a": b"a2"}}, rows
ok("versions, timestamps strictly older, timestamped deletes, multi-get")

# Scans.
keys = lambda it: [k for k, _ in it]
assert keys(t.scan(row_start=b"row10", row_stop=b"row13")) == [b"row10", b"row11", b"row12"]
assert keys(t.scan(row_prefix=b"row4")) == [b"row%02d" % i for i in range(40, 50)]
assert keys(t.scan(row_prefix=b"row", limit=5)) == [b"row00", b"row01", b"row02", b"row04", b"row05"]
assert keys(t.scan(row_start=b"row20", limit=3, reverse=True)) == [b"row20", b"row19", b"row18"]
assert keys(t.scan(row_prefix=b"row4", reverse=True))[:2] == [b"row49", b"row48"]
assert all(d == {b"one:x": b"x"} for _, d in t.scan(row_prefix=b"row", columns=[b"one"]))
many = list(t.scan(row_prefix=b"row", batch_size=3))
assert len(many) == 49, len(many)
parts = list(t.scan(row_start=b"row10", row_stop=b"row11", scan_batching=1))
assert [sorted(d) for _, d in parts] == [[b"cf:a"], [b"cf:b"], [b"one:x"]], parts
ts_scan = list(t.scan(row_start=b"row10", row_stop=b"row11", include_timestamp=True, columns=[b"cf:a"]))
assert ts_scan[0][1][b"cf:a"][0] == b"a10", ts_scan
ok("scans: start/stop, prefix, limit, reverse, columns, batch size, scan batching")

f = lambda s: keys(t.scan(row_prefix=b"row", filter=s))
assert f(b"ValueFilter(=, 'binary:a7')") == [b"row07"]
assert f(b"PrefixFilter('row1') AND RowFilter(>=, 'binary:row18')") == [b"row18", b"row19"]
assert f(b"SingleColumnValueFilter('cf', 'a', =, 'regexstring:^a4[0-2]$', true, true)") == [b"row40", b"row41", b"row42"]
assert f(b"(RowFilter(=, 'binary:row01') OR RowFilter(=, 'substring:W02')) AND KeyOnlyFilter()") == [b"row01", b"row02"]
assert all(v == b"" for _, d in t.scan(row_prefix=b"row0", filter=b"KeyOnlyFilter()") for v in d.values())
assert [len(d) for _, d in t.scan(row_prefix=b"row1", filter=b"FirstKeyOnlyFilter()")] == [1] * 10
assert f(b"PageFilter(4)") == [b"row00", b"row01", b"row02", b"row04"]
assert [sorted(d) for _, d in t.scan(row_prefix=b"row1", filter=b"ColumnPrefixFilter('b')")][0] == [b"cf:b"]
assert [sorted(d) for _, d in t.scan(row_prefix=b"row1", filter=b"QualifierFilter(=, 'binaryprefix:x')")][0] == [b"one:x"]
assert [sorted(d) for _, d in t.scan(row_prefix=b"row1", filter=b"FamilyFilter(=, 'binary:one')")][0] == [b"one:x"]
assert [sorted(d) for _, d in t.scan(row_prefix=b"row1", filter=b"MultipleColumnPrefixFilter('a', 'x')")][0] == [b"cf:a", b"one:x"]
# HBase's filter parser throws an unchecked IllegalArgumentException, which its Thrift
# processor answers as an internal error, without detail.
bad_filter = "Internal error processing scannerOpenWithScan"
raises(TApplicationException, lambda: list(t.scan(filter=b"NoSuchFilter('x')")), bad_filter)
raises(TApplicationException, lambda: list(t.scan(filter=b"ValueFilter(<, 'substring:a')")), bad_filter)
ok("filters: value, prefix, row, single column value, key only, first key, page, column prefix, qualifier, family, AND/OR; unknown filters refused")

# Counters, including one written by a plain put of 8 bytes.
assert t.counter_inc(b"cnt", b"cf:n") == 1
assert t.counter_inc(b"cnt", b"cf:n", 10) == 11
assert t.counter_dec(b"cnt", b"cf:n", 2) == 9
assert t.counter_get(b"cnt", b"cf:n") == 9
t.put(b"cnt", {b"cf:p": struct.pack(">q", 41)})
assert t.counter_inc(b"cnt", b"cf:p") == 42
t.counter_set(b"cnt", b"cf:s", -5)
assert t.counter_get(b"cnt", b"cf:s") == -5
t.put(b"cnt", {b"cf:bad": b"abc"})
raises(HbaseIOError, lambda: t.counter_inc(b"cnt", b"cf:bad"), "not a long")
ok("counters: inc, dec, get, set, on a put 8-byte value; non-8-byte refused")

# append and checkAndPut through the raw Thrift client.
client = c.client
cells = client.append(TAppend(table=b"hb_t", row=b"app", columns=[b"cf:s"], values=[b"ab"]))
cells = client.append(TAppend(table=b"hb_t", row=b"app", columns=[b"cf:s"], values=[b"cd"]))
assert cells[0].value == b"abcd", cells
m = Mutation(column=b"cf:c", value=b"new")
assert client.checkAndPut(b"hb_t", b"cap", b"cf:c", None, m, {}) is True
assert client.checkAndPut(b"hb_t", b"cap", b"cf:c", None, m, {}) is False
assert client.checkAndPut(b"hb_t", b"cap", b"cf:c", b"new", Mutation(column=b"cf:c", value=b"newer"), {}) is True
assert t.row(b"cap") == {b"cf:c": b"newer"}
ok("append and checkAndPut")

# A pool of connections used by several threads at once.
pool = happybase.ConnectionPool(size=4, host="127.0.0.1", port=port, transport=transport, protocol=protocol)
errors = []


def worker(n):
    try:
        with pool.connection() as pc:
            pt = pc.table("hb_t")
            for i in range(100):
                pt.counter_inc(b"pool", b"cf:n")
                pt.put(b"pool-%d-%03d" % (n, i), {b"cf:a": b"%d" % i})
            assert len(list(pt.scan(row_prefix=b"pool-%d-" % n))) == 100
    except Exception as e:  # reported below
        errors.append(e)


threads = [threading.Thread(target=worker, args=(n,)) for n in range(6)]
[th.start() for th in threads]
[th.join() for th in threads]
assert not errors, errors
assert t.counter_get(b"pool", b"cf:n") == 600
ok("connection pool of 4 shared by 6 threads: no lost increment")

# Enable, disable, delete.
assert c.is_table_enabled("hb_t")
raises(HbaseIOError, lambda: c.delete_table("hb_t"), "TableNotDisabledException")
c.disable_table("hb_t")
assert not c.is_table_enabled("hb_t")
raises(HbaseIOError, lambda: t.row(b"row01"), "disabled")
c.enable_table("hb_t")
assert t.row(b"row01")[b"cf:a"] == b"a1"
c.delete_table("hb_t", disable=True)
assert b"hb_t" not in c.tables()
ok("enable, disable, delete only when disabled")

# What `tallrow load` wrote reads back the same.
with open(expected_path) as fh:
    expected = json.load(fh)
lt = c.table(expected["table"])
for row in expected["rows"]:
    key = bytes.fromhex(row["key"])
    got = lt.row(key, include_timestamp=True)
    want = {bytes.fromhex(k): (bytes.fromhex(v), ts) for k, (v, ts) in row["cells"].items()}
    assert got == want, (key, got, want)
count = sum(1 for _ in lt.scan(filter=b"FirstKeyOnlyFilter() AND KeyOnlyFilter()"))
assert count == expected["count"], (count, expected["count"])
ok("rows tallrow load wrote: %d compared, %d counted by scan" % (len(expected["rows"]), count))

# Rows for tallrow to read back.
c.create_table("hb_written", {"d": dict(max_versions=2)})
w = c.table("hb_written")
with w.batch(timestamp=1234) as b:
    for i in range(300):
        b.put(b"w%04d" % i, {b"d:v": b"value %d" % i})
w.put(b"w0000", {b"d:v": b"second"}, timestamp=1235)
ok("wrote hb_written for tallrow")
