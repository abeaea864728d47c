//! The differential test: seeded random sequences of Thrift1 calls go to real HBase's
//! Thrift1 server (scripts/hbase.sh) and to `tallrow serve`, and every answer is compared.
//! Timestamps the servers assign are compared by the order of the versions they stamp,
//! errors by their kind. Each sequence works on rows of its own, so tables are made once. A failing
//! sequence is shrunk (operations left out while the difference stays) and printed with
//! its seed; `TALLROW_DIFF_SEED=N` replays one sequence, `TALLROW_DIFF_SEQUENCES=N` runs N.

use crate::common::{real_hbase, real_hbase_there};
use std::collections::BTreeMap;
use std::net::TcpStream;
use std::sync::Arc;
use tallrow::idl::thrift1::{
    AlreadyExists, BatchMutation, ColumnDescriptor, HbaseSyncClient, IOError, IllegalArgument, Mutation, TAppend,
    TCell, THbaseSyncClient, TIncrement, TRowResult, TScan,
};
use thrift::protocol::{
    TBinaryInputProtocol, TBinaryOutputProtocol, TCompactInputProtocol, TCompactOutputProtocol, TInputProtocol,
    TOutputProtocol,
};
use thrift::transport::{
    TBufferedReadTransport, TBufferedWriteTransport, TFramedReadTransport, TFramedWriteTransport, TIoChannel,
    TTcpChannel,
};

const SEQUENCES: u64 = 1000;
pub(crate) const LATEST: i64 = i64::MAX;

type Client = HbaseSyncClient<Box<dyn TInputProtocol + Send>, Box<dyn TOutputProtocol + Send>>;

/// A Thrift1 client in HBase's default mode (buffered, binary) or framed + compact.
fn connect(addr: &str, framed_compact: bool) -> Client {
    let stream = TcpStream::connect(addr).expect("connect");
    stream.set_nodelay(true).unwrap();
    let (i, o) = TTcpChannel::with_stream(stream).split().unwrap();
    let (i, o): (Box<dyn TInputProtocol + Send>, Box<dyn TOutputProtocol + Send>) = match framed_compact {
        false => (
            Box::new(TBinaryInputProtocol::new(TBufferedReadTransport::new(i), true)),
            Box::new(TBinaryOutputProtocol::new(TBufferedWriteTransport::new(o), true)),
        ),
        true => (
            Box::new(TCompactInputProtocol::new(TFramedReadTransport::new(i))),
            Box::new(TCompactOutputProtocol::new(TFramedWriteTransport::new(o))),
        ),
    };
    HbaseSyncClient::new(i, o)
}

/// A small deterministic generator (splitmix64), so that a seed names a sequence.
pub(crate) struct Rng(pub(crate) u64);

impl Rng {
    pub(crate) fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    pub(crate) fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
    pub(crate) fn pick<T: Clone>(&mut self, items: &[T]) -> T {
        items[self.below(items.len() as u64) as usize].clone()
    }
}

/// A mutation: whether it deletes, its column, and a put's value.
type Change = (bool, Vec<u8>, Vec<u8>);
/// A row of an answer: its key, its cells (column, timestamp, value), and whether they came
/// as `sortedColumns`.
pub(crate) type AnswerRow = (Vec<u8>, Vec<(Vec<u8>, i64, Vec<u8>)>, bool);

/// One call, on rows named relative to the sequence (`row` is the suffix of `s<seq>_`).
#[derive(Debug, Clone)]
enum Op {
    MutateRow {
        row: u8,
        mutations: Vec<Change>,
        ts: i64,
    },
    MutateRows {
        rows: Vec<(u8, Vec<Change>)>,
        ts: i64,
    },
    DeleteAll {
        row: u8,
        column: Vec<u8>,
        ts: i64,
    },
    DeleteAllRow {
        row: u8,
        ts: i64,
    },
    AtomicIncrement {
        row: u8,
        column: Vec<u8>,
        amount: i64,
    },
    Increment {
        row: u8,
        column: Vec<u8>,
        amount: i64,
    },
    Append {
        row: u8,
        column: Vec<u8>,
        value: Vec<u8>,
    },
    CheckAndPut {
        row: u8,
        column: Vec<u8>,
        value: Vec<u8>,
        put: (Vec<u8>, Vec<u8>),
    },
    Get {
        row: u8,
        column: Vec<u8>,
    },
    GetVerTs {
        row: u8,
        column: Vec<u8>,
        ts: i64,
        versions: i32,
    },
    GetVer {
        row: u8,
        column: Vec<u8>,
        versions: i32,
    },
    /// getRow, getRowWithColumns, getRowTs or getRowWithColumnsTs.
    GetRow {
        row: u8,
        columns: Option<Vec<Vec<u8>>>,
        ts: Option<i64>,
    },
    /// getRows, getRowsWithColumns, getRowsTs or getRowsWithColumnsTs.
    GetRows {
        rows: Vec<u8>,
        columns: Option<Vec<Vec<u8>>>,
        ts: Option<i64>,
    },
    IncrementRows {
        increments: Vec<(u8, Vec<u8>, i64)>,
    },
    Scan {
        start: Option<u8>,
        stop: Option<u8>,
        columns: Vec<Vec<u8>>,
        ts: Option<i64>,
        filter: Option<Vec<u8>>,
        reversed: bool,
        caching: Option<i32>,
        batch_size: Option<i32>,
        sort_columns: Option<bool>,
        cache_blocks: Option<bool>,
        read: i32,
    },
    ScanPrefix {
        columns: Vec<Vec<u8>>,
    },
    /// scannerOpen, scannerOpenWithStop, scannerOpenTs or scannerOpenWithStopTs, read with
    /// scannerGet (`one_by_one`) or scannerGetList.
    ScanOpen {
        start: Option<u8>,
        stop: Option<u8>,
        columns: Vec<Vec<u8>>,
        ts: Option<i64>,
        one_by_one: bool,
    },
}

const COLUMNS: [&[u8]; 8] = [b"f:a", b"f:b", b"f:", b"g:a", b"g:n", b"f", b"g", b"nofam:a"];
pub(crate) const FILTERS: [&[u8]; 12] = [
    b"KeyOnlyFilter()",
    b"FirstKeyOnlyFilter()",
    b"ColumnPrefixFilter('a')",
    b"PageFilter(2)",
    b"ColumnPaginationFilter(1, 0)",
    b"QualifierFilter(>, 'binary:a')",
    b"ValueFilter(=, 'substring:1')",
    b"SingleColumnValueFilter('f', 'a', =, 'binary:v1')",
    b"TimestampsFilter(1, 3)",
    b"ColumnRangeFilter('a', true, 'b', false)",
    b"NoSuchFilter('x')",
    b"PrefixFilter(",
];

fn timestamp(rng: &mut Rng) -> i64 {
    rng.pick(&[LATEST, LATEST, 1, 2, 3, 5])
}

fn mutations(rng: &mut Rng) -> Vec<Change> {
    (0..1 + rng.below(3))
        .map(|_| {
            let delete = rng.below(4) == 0;
            let column = rng.pick(&COLUMNS[..7]).to_vec();
            let value = match rng.below(4) {
                0 => 7i64.to_be_bytes().to_vec(),
                1 => Vec::new(),
                _ => format!("v{}", rng.below(3)).into_bytes(),
            };
            (delete, column, value)
        })
        .collect()
}

fn op(rng: &mut Rng) -> Op {
    let row = rng.below(3) as u8;
    let column = rng.pick(&COLUMNS).to_vec();
    match rng.below(15) {
        0 | 1 => {
            let ts = timestamp(rng);
            let mut mutations = mutations(rng);
            if ts == LATEST && mutations.iter().any(|m| m.0) {
                // HBase's mutateRow sends a Delete and then a Put, each stamped on arrival:
                // whether the put survives depends on whether both land in one millisecond,
                // so such a call has no one answer to compare.
                mutations.retain(|m| m.0);
            }
            Op::MutateRow { row, mutations, ts }
        }
        2 => Op::MutateRows {
            rows: (0..2).map(|_| (rng.below(3) as u8, mutations(rng))).collect(),
            ts: timestamp(rng),
        },
        3 => Op::DeleteAll {
            row,
            column,
            ts: timestamp(rng),
        },
        4 => Op::DeleteAllRow {
            row,
            ts: timestamp(rng),
        },
        5 => Op::AtomicIncrement {
            row,
            column: rng.pick(&[&b"g:n"[..], b"f:a", b"g"]).to_vec(),
            amount: rng.below(7) as i64 - 3,
        },
        6 => Op::Increment {
            row,
            column: rng.pick(&[&b"g:n"[..], b"f:b"]).to_vec(),
            amount: rng.below(5) as i64,
        },
        7 => Op::Append {
            row,
            column: rng.pick(&[&b"f:a"[..], b"f:b"]).to_vec(),
            value: b"x".to_vec(),
        },
        8 => Op::CheckAndPut {
            row,
            column: b"f:a".to_vec(),
            value: rng.pick(&[&b""[..], b"v1", b"v2"]).to_vec(),
            put: (b"f:b".to_vec(), b"put".to_vec()),
        },
        9 => Op::Get { row, column },
        10 => Op::GetVerTs {
            row,
            column,
            ts: timestamp(rng),
            versions: 1 + rng.below(4) as i32,
        },
        11 => match rng.below(3) {
            0 => Op::GetVer {
                row,
                column,
                versions: rng.below(4) as i32,
            },
            1 => Op::GetRow {
                row,
                columns: (rng.below(2) == 0).then(|| columns(rng)),
                ts: (rng.below(2) == 0).then(|| timestamp(rng)),
            },
            _ => Op::GetRows {
                rows: vec![row, rng.below(3) as u8],
                columns: (rng.below(2) == 0).then(|| columns(rng)),
                ts: (rng.below(2) == 0).then(|| timestamp(rng)),
            },
        },
        12 => Op::IncrementRows {
            increments: (0..1 + rng.below(3))
                .map(|_| {
                    let column = rng.pick(&[&b"g:n"[..], b"f:b", b"nofam:a"]).to_vec();
                    (rng.below(3) as u8, column, rng.below(5) as i64)
                })
                .collect(),
        },
        _ => match rng.below(5) {
            0 => Op::ScanPrefix {
                columns: (0..rng.below(2)).map(|_| rng.pick(&COLUMNS[..7]).to_vec()).collect(),
            },
            1 => Op::ScanOpen {
                start: (rng.below(2) == 0).then(|| rng.below(3) as u8),
                stop: (rng.below(2) == 0).then(|| rng.below(4) as u8),
                columns: columns(rng),
                ts: (rng.below(2) == 0).then(|| rng.pick(&[2, 3, 4, LATEST])),
                one_by_one: rng.below(2) == 0,
            },
            _ => {
                let filter = (rng.below(2) == 0).then(|| rng.pick(&FILTERS).to_vec());
                // HBase's client retries a batched scan under a whole-row filter for about
                // 48 s before it fails: serve_fails_batched_scans_under_row_filters checks serve.
                let row_filter = filter
                    .as_ref()
                    .is_some_and(|f| f.starts_with(b"PageFilter") || f.starts_with(b"SingleColumnValueFilter"));
                Op::Scan {
                    start: (rng.below(2) == 0).then(|| rng.below(3) as u8),
                    stop: (rng.below(2) == 0).then(|| rng.below(4) as u8),
                    columns: columns(rng),
                    ts: (rng.below(3) == 0).then(|| rng.pick(&[2, 3, 4, LATEST])),
                    filter,
                    reversed: rng.below(4) == 0,
                    caching: rng.pick(&[None, Some(1), Some(2), Some(100)]),
                    batch_size: rng.pick(&[None, None, None, Some(1), Some(2)]).filter(|_| !row_filter),
                    sort_columns: rng.pick(&[None, Some(false), Some(true)]),
                    cache_blocks: rng.pick(&[None, Some(false), Some(true)]),
                    read: 1 + rng.below(3) as i32,
                }
            }
        },
    }
}

/// Up to two columns of a read (families, qualifiers, an empty qualifier).
fn columns(rng: &mut Rng) -> Vec<Vec<u8>> {
    (0..rng.below(3)).map(|_| rng.pick(&COLUMNS[..7]).to_vec()).collect()
}

fn sequence(seed: u64) -> Vec<Op> {
    let mut rng = Rng(seed);
    (0..3 + rng.below(10)).map(|_| op(&mut rng)).collect()
}

/// `tallrow serve` over a fresh embedded store, in this process, in HBase's default mode or
/// framed + compact.
fn serve(framed_compact: bool) -> (tallrow::serve::Server, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let store: Arc<dyn tallrow::store::Store> =
        Arc::new(tallrow::store::embedded::Embedded::open(dir.path()).expect("open"));
    let opts = tallrow::serve::Options {
        bind: "127.0.0.1:0".parse().unwrap(),
        ..tallrow::serve::Options::default()
    };
    let opts = match framed_compact {
        false => opts,
        true => tallrow::serve::Options {
            transport: tallrow::wire::Transport::Framed,
            protocol: tallrow::wire::Protocol::Compact,
            ..opts
        },
    };
    (tallrow::serve::Server::start(store, &opts).expect("serve"), dir)
}

/// One server under test, with its own table name.
struct Side {
    client: Client,
    table: Vec<u8>,
    /// Whether each call starts on a new millisecond (HBase's pace); else as fast as the
    /// client goes.
    paced: bool,
}

/// An answer, with server-assigned timestamps still raw.
#[derive(Debug, PartialEq)]
pub(crate) enum Answer {
    Done,
    Bool(bool),
    Long(i64),
    Cells(Vec<(i64, Vec<u8>)>),
    Rows(Vec<AnswerRow>),
    /// An admin answer, compared as printed.
    Text(String),
    Error(String, Message),
}

/// An error's message: printed with a difference, not compared (the two servers word
/// their messages differently).
#[derive(Debug)]
pub(crate) struct Message(#[allow(dead_code)] pub(crate) String);

impl PartialEq for Message {
    fn eq(&self, _: &Message) -> bool {
        true
    }
}

fn error(e: thrift::Error) -> Answer {
    let first = |s: &str| {
        s.lines()
            .next()
            .unwrap_or_default()
            .chars()
            .take(160)
            .collect::<String>()
    };
    let (kind, message) = match e {
        thrift::Error::User(u) => match (
            u.downcast_ref::<IOError>(),
            u.downcast_ref::<IllegalArgument>(),
            u.downcast_ref::<AlreadyExists>(),
        ) {
            (Some(e), _, _) => ("IOError".to_string(), e.message.clone().unwrap_or_default()),
            (_, Some(e), _) => ("IllegalArgument".to_string(), e.message.clone().unwrap_or_default()),
            (_, _, Some(e)) => ("AlreadyExists".to_string(), e.message.clone().unwrap_or_default()),
            _ => (format!("user error {u}"), String::new()),
        },
        thrift::Error::Application(a) => (format!("TApplicationException {:?}", a.kind), a.message),
        other => (format!("broken: {other}"), String::new()),
    };
    Answer::Error(kind, Message(first(&message)))
}

fn cells(r: thrift::Result<Vec<TCell>>) -> Answer {
    match r {
        Ok(cells) => Answer::Cells(
            cells
                .into_iter()
                .map(|c| (c.timestamp.unwrap_or(-1), c.value.unwrap_or_default()))
                .collect(),
        ),
        Err(e) => error(e),
    }
}

fn rows(r: thrift::Result<Vec<TRowResult>>) -> Answer {
    match r {
        Ok(rows) => Answer::Rows(rows.into_iter().map(row).collect()),
        Err(e) => error(e),
    }
}

fn row(r: TRowResult) -> AnswerRow {
    let sorted = r.sorted_columns.is_some();
    let mut cells: Vec<_> = r
        .columns
        .unwrap_or_default()
        .into_iter()
        .map(|(name, c)| (name, c.timestamp.unwrap_or(-1), c.value.unwrap_or_default()))
        .collect();
    for c in r.sorted_columns.unwrap_or_default() {
        let cell = c.cell.unwrap_or_default();
        cells.push((
            c.column_name.unwrap_or_default(),
            cell.timestamp.unwrap_or(-1),
            cell.value.unwrap_or_default(),
        ));
    }
    (r.row.unwrap_or_default(), cells, sorted)
}

fn done<T>(r: thrift::Result<T>, f: impl FnOnce(T) -> Answer) -> Answer {
    match r {
        Ok(v) => f(v),
        Err(e) => error(e),
    }
}

fn thrift_mutations(m: &[Change]) -> Vec<Mutation> {
    m.iter()
        .map(|(delete, column, value)| Mutation::new(*delete, column.clone(), (!*delete).then(|| value.clone()), true))
        .collect()
}

impl Side {
    fn key(&self, seq: u64, row: u8) -> Vec<u8> {
        format!("s{seq}_{row}").into_bytes()
    }

    fn run(&mut self, seq: u64, op: &Op) -> Answer {
        // Calls to real HBase take more than a millisecond, so no two of them are stamped
        // in the same one; `serve` answers in microseconds. Each call starts on a new
        // millisecond, so that both are compared at HBase's pace. (Within one call, serve
        // follows HBase's own order of stamping.)
        let start = tallrow::store::now_millis();
        while self.paced && tallrow::store::now_millis() == start {
            std::thread::sleep(std::time::Duration::from_micros(100));
        }
        let t = self.table.clone();
        let none = BTreeMap::new;
        match op {
            Op::MutateRow { row, mutations, ts } => {
                let (k, m) = (self.key(seq, *row), thrift_mutations(mutations));
                let r = match *ts {
                    LATEST => self.client.mutate_row(t, k, m, none()),
                    ts => self.client.mutate_row_ts(t, k, m, ts, none()),
                };
                done(r, |_| Answer::Done)
            }
            Op::MutateRows { rows, ts } => {
                let batches = rows
                    .iter()
                    .map(|(row, m)| BatchMutation::new(self.key(seq, *row), thrift_mutations(m)))
                    .collect();
                let r = match *ts {
                    LATEST => self.client.mutate_rows(t, batches, none()),
                    ts => self.client.mutate_rows_ts(t, batches, ts, none()),
                };
                done(r, |_| Answer::Done)
            }
            Op::DeleteAll { row, column, ts } => {
                let k = self.key(seq, *row);
                let r = match *ts {
                    LATEST => self.client.delete_all(t, k, column.clone(), none()),
                    ts => self.client.delete_all_ts(t, k, column.clone(), ts, none()),
                };
                done(r, |_| Answer::Done)
            }
            Op::DeleteAllRow { row, ts } => {
                let k = self.key(seq, *row);
                let r = match *ts {
                    LATEST => self.client.delete_all_row(t, k, none()),
                    ts => self.client.delete_all_row_ts(t, k, ts, none()),
                };
                done(r, |_| Answer::Done)
            }
            Op::AtomicIncrement { row, column, amount } => {
                let k = self.key(seq, *row);
                done(
                    self.client.atomic_increment(t, k, column.clone(), *amount),
                    Answer::Long,
                )
            }
            Op::Increment { row, column, amount } => {
                let inc = TIncrement::new(t, self.key(seq, *row), column.clone(), *amount);
                done(self.client.increment(inc), |_| Answer::Done)
            }
            Op::Append { row, column, value } => {
                let append = TAppend::new(t, self.key(seq, *row), vec![column.clone()], vec![value.clone()]);
                cells(self.client.append(append))
            }
            Op::CheckAndPut {
                row,
                column,
                value,
                put,
            } => {
                let m = Mutation::new(false, put.0.clone(), put.1.clone(), true);
                let k = self.key(seq, *row);
                done(
                    self.client
                        .check_and_put(t, k, column.clone(), value.clone(), m, none()),
                    Answer::Bool,
                )
            }
            Op::Get { row, column } => {
                let k = self.key(seq, *row);
                cells(self.client.get(t, k, column.clone(), none()))
            }
            Op::GetVerTs {
                row,
                column,
                ts,
                versions,
            } => {
                let k = self.key(seq, *row);
                cells(self.client.get_ver_ts(t, k, column.clone(), *ts, *versions, none()))
            }
            Op::GetVer { row, column, versions } => {
                let k = self.key(seq, *row);
                cells(self.client.get_ver(t, k, column.clone(), *versions, none()))
            }
            Op::GetRow { row, columns, ts } => {
                let k = self.key(seq, *row);
                let c = &mut self.client;
                rows(match (columns, ts) {
                    (None, None) => c.get_row(t, k, none()),
                    (Some(cols), None) => c.get_row_with_columns(t, k, cols.clone(), none()),
                    (None, Some(ts)) => c.get_row_ts(t, k, *ts, none()),
                    (Some(cols), Some(ts)) => c.get_row_with_columns_ts(t, k, cols.clone(), *ts, none()),
                })
            }
            Op::GetRows {
                rows: which,
                columns,
                ts,
            } => {
                let keys: Vec<_> = which.iter().map(|r| self.key(seq, *r)).collect();
                let c = &mut self.client;
                rows(match (columns, ts) {
                    (None, None) => c.get_rows(t, keys, none()),
                    (Some(cols), None) => c.get_rows_with_columns(t, keys, cols.clone(), none()),
                    (None, Some(ts)) => c.get_rows_ts(t, keys, *ts, none()),
                    (Some(cols), Some(ts)) => c.get_rows_with_columns_ts(t, keys, cols.clone(), *ts, none()),
                })
            }
            Op::IncrementRows { increments } => {
                let incs = increments
                    .iter()
                    .map(|(row, column, amount)| {
                        TIncrement::new(t.clone(), self.key(seq, *row), column.clone(), *amount)
                    })
                    .collect();
                done(self.client.increment_rows(incs), |_| Answer::Done)
            }
            Op::ScanOpen {
                start,
                stop,
                columns,
                ts,
                one_by_one,
            } => {
                let start_row = self.key(seq, start.unwrap_or(0));
                let stop_row = stop.map(|r| self.key(seq, r));
                let c = &mut self.client;
                let opened = match (stop_row, ts) {
                    (None, None) => c.scanner_open(t, start_row, columns.clone(), none()),
                    (Some(stop), None) => c.scanner_open_with_stop(t, start_row, stop, columns.clone(), none()),
                    (None, Some(ts)) => c.scanner_open_ts(t, start_row, columns.clone(), *ts, none()),
                    (Some(stop), Some(ts)) => {
                        c.scanner_open_with_stop_ts(t, start_row, stop, columns.clone(), *ts, none())
                    }
                };
                match opened {
                    Ok(id) if *one_by_one => self.drain_one_by_one(seq, id),
                    Ok(id) => self.drain(seq, id, 2),
                    Err(e) => error(e),
                }
            }
            Op::Scan {
                start,
                stop,
                columns,
                ts,
                filter,
                reversed,
                caching,
                batch_size,
                sort_columns,
                cache_blocks,
                read,
            } => {
                // Rows of this sequence only: `s<seq>_` bounds the range on both sides.
                let base = format!("s{seq}_").into_bytes();
                let end = format!("s{seq}`").into_bytes();
                let start_row = start.map_or(base.clone(), |r| self.key(seq, r));
                let stop_row = stop.map_or(end.clone(), |r| self.key(seq, r));
                let (start_row, stop_row) = match reversed {
                    false => (start_row, stop_row),
                    true => (
                        start.map_or(end, |r| self.key(seq, r)),
                        stop.map_or(base, |r| self.key(seq, r)),
                    ),
                };
                let scan = TScan {
                    start_row: Some(start_row),
                    stop_row: Some(stop_row),
                    timestamp: *ts,
                    columns: (!columns.is_empty()).then(|| columns.clone()),
                    caching: *caching,
                    filter_string: filter.clone(),
                    batch_size: *batch_size,
                    sort_columns: *sort_columns,
                    reversed: Some(*reversed),
                    cache_blocks: *cache_blocks,
                };
                let id = match self.client.scanner_open_with_scan(t, scan, none()) {
                    Ok(id) => id,
                    Err(e) => return error(e),
                };
                self.drain(seq, id, *read)
            }
            Op::ScanPrefix { columns } => {
                let prefix = format!("s{seq}_").into_bytes();
                match self.client.scanner_open_with_prefix(t, prefix, columns.clone(), none()) {
                    Ok(id) => self.drain(seq, id, 2),
                    Err(e) => error(e),
                }
            }
        }
    }

    /// Reads a scanner in batches of `n` to its end or to the first row of another sequence
    /// (scans without a stop row run on into them), then closes it.
    fn drain(&mut self, seq: u64, id: i32, n: i32) -> Answer {
        let ours = format!("s{seq}_").into_bytes();
        let mut all = Vec::new();
        'read: loop {
            match self.client.scanner_get_list(id, n) {
                Ok(batch) if batch.is_empty() => break,
                Ok(batch) => {
                    for r in batch.into_iter().map(row) {
                        if !r.0.starts_with(&ours) {
                            break 'read;
                        }
                        all.push(r);
                    }
                }
                Err(e) => return error(e),
            }
        }
        match self.client.scanner_close(id) {
            Ok(()) => Answer::Rows(all),
            Err(e) => error(e),
        }
    }

    /// The same with scannerGet, one row per call.
    fn drain_one_by_one(&mut self, seq: u64, id: i32) -> Answer {
        let ours = format!("s{seq}_").into_bytes();
        let mut all = Vec::new();
        loop {
            match self.client.scanner_get(id) {
                Ok(batch) if batch.is_empty() => break,
                Ok(batch) => {
                    let rows: Vec<_> = batch.into_iter().map(row).collect();
                    let foreign = rows.iter().any(|r| !r.0.starts_with(&ours));
                    all.extend(rows.into_iter().filter(|r| r.0.starts_with(&ours)));
                    if foreign {
                        break;
                    }
                }
                Err(e) => return error(e),
            }
        }
        match self.client.scanner_close(id) {
            Ok(()) => Answer::Rows(all),
            Err(e) => error(e),
        }
    }
}

/// Replaces each server-assigned timestamp (any past 2001) by one token. Two servers'
/// clocks differ, and two calls on different cells may share a millisecond on one server
/// and not on the other; the order of a column's versions is still compared, by the order
/// reads list them in (newest first).
pub(crate) fn normalise(answers: &mut [Answer]) {
    const ASSIGNED: i64 = 1_000_000_000_000;
    let fix = |ts: &mut i64| {
        if *ts >= ASSIGNED && *ts != LATEST {
            *ts = -1;
        }
    };
    for a in answers.iter_mut() {
        match a {
            Answer::Cells(cells) => cells.iter_mut().for_each(|(ts, _)| fix(ts)),
            Answer::Rows(rows) => rows
                .iter_mut()
                .for_each(|(_, cells, _)| cells.iter_mut().for_each(|(_, ts, _)| fix(ts))),
            _ => {}
        }
    }
}

/// Runs `ops` as sequence `seq` on both sides; the index of the first differing answer.
fn differs(hbase: &mut Side, ours: &mut Side, seq: u64, ops: &[Op]) -> Option<(usize, Answer, Answer)> {
    let mut a: Vec<Answer> = ops.iter().map(|op| hbase.run(seq, op)).collect();
    let mut b: Vec<Answer> = ops.iter().map(|op| ours.run(seq, op)).collect();
    normalise(&mut a);
    normalise(&mut b);
    a.into_iter()
        .zip(b)
        .enumerate()
        .find(|(_, (x, y))| x != y)
        .map(|(i, (x, y))| (i, x, y))
}

fn families() -> Vec<ColumnDescriptor> {
    let family = |name: &str, versions: i32| ColumnDescriptor {
        name: Some(name.as_bytes().to_vec()),
        max_versions: Some(versions),
        compression: Some("NONE".into()),
        in_memory: Some(false),
        bloom_filter_type: Some("NONE".into()),
        bloom_filter_vector_size: Some(0),
        bloom_filter_nb_hashes: Some(0),
        block_cache_enabled: Some(false),
        time_to_live: Some(-1),
    };
    vec![family("f:", 3), family("g:", 1)]
}

#[test]
fn thrift1_calls_answer_as_real_hbase_answers() {
    differential("TALLROW_HBASE_THRIFT1", false, SEQUENCES);
}

/// The twin in framed + compact mode: fewer sequences, the same calls.
#[test]
fn thrift1_framed_compact_calls_answer_as_real_hbase_answers() {
    differential("TALLROW_HBASE_THRIFT1_FC", true, SEQUENCES / 4);
}

/// Counters on fresh rows each time: happybase's counter steps (`counter_get` is an
/// increment by 0, `counter_set` a put without a timestamp), puts and increments of one
/// cell one after another, increments by 0, and appends between puts; every answer and the
/// cell's newest value. HBase stamps an increment `max(previous + 1, now)` and a put `now`;
/// at its own pace (a call or more a millisecond, each call here on a new one) a put lands
/// after the increments before it, and `counter_inc(1)` after `counter_set(0)` returns 1.
/// serve is driven as fast as the client goes: stamped the same way, its increments would
/// run ahead of the clock and hide the put (it returned 11).
#[test]
fn counters_at_full_speed_answer_as_real_hbase_answers() {
    if !real_hbase_there() {
        return;
    }
    let addr = real_hbase("TALLROW_HBASE_THRIFT1").unwrap();
    let (server, _dir) = serve(false);
    let table = format!("counters_{}", std::process::id()).into_bytes();
    let mut hbase = Side {
        client: connect(&addr, false),
        table: table.clone(),
        paced: true,
    };
    let mut ours = Side {
        client: connect(&server.addr().to_string(), false),
        table,
        paced: false,
    };
    for s in [&mut hbase, &mut ours] {
        s.client.create_table(s.table.clone(), families()).expect("createTable");
    }
    let inc = |amount| Op::AtomicIncrement {
        row: 0,
        column: b"f:b".to_vec(),
        amount,
    };
    let put = |value: Vec<u8>| Op::MutateRow {
        row: 0,
        mutations: vec![(false, b"f:b".to_vec(), value)],
        ts: LATEST,
    };
    let append = || Op::Append {
        row: 0,
        column: b"f:b".to_vec(),
        value: b"x".to_vec(),
    };
    let get = Op::GetVer {
        row: 0,
        column: b"f:b".to_vec(),
        versions: 1,
    };
    let diff = |seq: u64, ops: &[Op]| differs(&mut hbase, &mut ours, seq, ops);
    each_counter_sequence(&counter_sequences(inc, put, append, get), diff);
    let _ = hbase.client.disable_table(hbase.table.clone());
    let _ = hbase.client.delete_table(hbase.table.clone());
}

/// The counter sequences both differentials run, built from each API's calls on one cell:
/// an increment, a put without a timestamp, an append of `x`, and a read of its newest value.
pub(crate) fn counter_sequences<O: Clone>(
    inc: impl Fn(i64) -> O,
    put: impl Fn(Vec<u8>) -> O,
    append: impl Fn() -> O,
    get: O,
) -> Vec<(&'static str, Vec<O>)> {
    let long = |n: i64| n.to_be_bytes().to_vec();
    vec![
        (
            "counter_get, counter_inc(10), counter_get, counter_set(0), counter_inc(1)",
            vec![inc(0), inc(10), inc(0), put(long(0)), inc(1), get.clone()],
        ),
        (
            "puts and increments of one cell in turn",
            vec![
                put(long(5)),
                inc(1),
                put(long(7)),
                inc(1),
                inc(0),
                put(long(2)),
                get.clone(),
            ],
        ),
        ("increments by 0", vec![inc(0), inc(0), inc(0), inc(2), get.clone()]),
        (
            "appends between puts",
            vec![put(b"a".to_vec()), append(), put(b"b".to_vec()), append(), get],
        ),
    ]
}

/// Runs each of `sequences` on 50 fresh rows through `diff` (which runs one as the given
/// sequence number on both sides and says where they first differ); fails on the first
/// difference.
pub(crate) fn each_counter_sequence<O: std::fmt::Debug>(
    sequences: &[(&str, Vec<O>)],
    mut diff: impl FnMut(u64, &[O]) -> Option<(usize, Answer, Answer)>,
) {
    for (k, (what, ops)) in sequences.iter().enumerate() {
        for seq in 0..50 {
            if let Some((i, a, b)) = diff(k as u64 * 1000 + seq, ops) {
                panic!(
                    "{what}, row {seq}: operation {i} ({:?}): HBase {a:?}, serve {b:?}",
                    ops[i]
                );
            }
        }
    }
}

fn differential(var: &str, framed_compact: bool, sequences: u64) {
    if !real_hbase_there() {
        return;
    }
    let addr = real_hbase(var).unwrap();
    let (server, _dir) = serve(framed_compact);
    let table = format!("diff_{}_{}", std::process::id(), u8::from(framed_compact)).into_bytes();
    let mut hbase = Side {
        client: connect(&addr, framed_compact),
        table: table.clone(),
        paced: true,
    };
    let mut ours = Side {
        client: connect(&server.addr().to_string(), framed_compact),
        table,
        paced: true,
    };
    let created =
        [&mut hbase, &mut ours].map(|s| done(s.client.create_table(s.table.clone(), families()), |_| Answer::Done));
    assert_eq!(created[0], created[1]);
    assert_eq!(created[0], Answer::Done, "{created:?}");
    let described: Vec<_> = [&mut hbase, &mut ours]
        .into_iter()
        .map(|s| s.client.get_column_descriptors(s.table.clone()).expect("describe"))
        .collect();
    assert_eq!(described[0], described[1], "column descriptors as HBase reports them");

    let diff = |run: u64, seed: u64, ops: &[Op]| differs(&mut hbase, &mut ours, run * 100_000 + seed, ops);
    each_sequence(sequences, sequence, diff);
    let _ = hbase.client.disable_table(hbase.table.clone());
    let _ = hbase.client.delete_table(hbase.table.clone());
}

/// Runs the sequences of seeds `0..count` (`TALLROW_DIFF_SEQUENCES` sets another count for a
/// longer search; `TALLROW_DIFF_SEED` runs one seed alone) through `diff`,
/// which runs one on both sides and says where they first differ; a differing sequence is
/// shrunk and printed. `diff` takes a run number, new for every replay, so that names made
/// from it start fresh.
pub(crate) fn each_sequence<O: Clone + std::fmt::Debug>(
    count: u64,
    make: impl Fn(u64) -> Vec<O>,
    mut diff: impl FnMut(u64, u64, &[O]) -> Option<(usize, Answer, Answer)>,
) {
    let seeds: Vec<u64> = match std::env::var("TALLROW_DIFF_SEED") {
        Ok(s) => vec![s.parse().expect("TALLROW_DIFF_SEED is a number")],
        Err(_) => {
            let count = std::env::var("TALLROW_DIFF_SEQUENCES")
                .map(|n| n.parse().expect("TALLROW_DIFF_SEQUENCES is a number"))
                .unwrap_or(count);
            (0..count).collect()
        }
    };
    let mut run = 0u64;
    for seed in seeds {
        let ops = make(seed);
        run += 1;
        let Some(first) = diff(run, seed, &ops) else {
            continue;
        };
        // Shrink: leave out one operation at a time while the sequence still differs.
        let mut ops = ops[..=first.0].to_vec();
        let mut found = first;
        let mut i = 0;
        while i < ops.len() {
            let mut fewer = ops.clone();
            fewer.remove(i);
            run += 1;
            match diff(run, seed, &fewer) {
                Some(d) => {
                    ops = fewer[..=d.0].to_vec();
                    found = d;
                }
                None => i += 1,
            }
        }
        let listing: Vec<String> = ops.iter().enumerate().map(|(i, op)| format!("  {i}: {op:?}")).collect();
        panic!(
            "seed {seed} (TALLROW_DIFF_SEED={seed} replays it) differs at operation {}:\n{}\nHBase: {:?}\nserve: {:?}",
            found.0,
            listing.join("\n"),
            found.1,
            found.2
        );
    }
}

/// A table admin call. Tables 0 and 1 are this sequence's own; table 2 has a name HBase
/// refuses.
#[derive(Debug, Clone)]
enum Admin {
    Create {
        table: u8,
        families: Vec<Family>,
    },
    Disable(u8),
    Enable(u8),
    Delete(u8),
    IsEnabled(u8),
    /// getTableNames, this sequence's tables only.
    Names,
    /// getTableNamesWithIsTableEnabled, the same.
    NamesEnabled,
    Describe(u8),
    /// getTableRegions: the regions' start and end keys.
    Regions(u8),
    /// mutateRow of f:a, on a table enabled or not.
    Put(u8),
    /// get of f:a.
    Get(u8),
}

/// A column family to create, every field sent as clients send them.
#[derive(Debug, Clone)]
struct Family {
    name: Option<&'static str>,
    versions: i32,
    compression: &'static str,
    bloom: &'static str,
    ttl: i32,
    in_memory: bool,
    block_cache: bool,
}

fn admin_sequence(seed: u64) -> Vec<Admin> {
    let mut rng = Rng(seed ^ 0xAD31_0000);
    let mut ops = vec![];
    for i in 0..2 + rng.below(7) {
        let table = if rng.below(16) == 0 { 2 } else { rng.below(2) as u8 };
        // The first call makes a table as clients do; later ones try HBase's refusals too.
        let op = match if i == 0 { 0 } else { rng.below(14) } {
            0..=2 => Admin::Create {
                table: if i == 0 { 0 } else { table },
                families: (0..u64::from(i == 0) + rng.below(3))
                    .map(|_| {
                        let odd = i > 0 && rng.below(3) == 0;
                        family(&mut rng, odd)
                    })
                    .collect(),
            },
            3 | 4 => Admin::Disable(table),
            5 => Admin::Enable(table),
            6 => Admin::Delete(table),
            7 => Admin::IsEnabled(table),
            8 => rng.pick(&[Admin::Names, Admin::NamesEnabled]),
            9 | 10 => rng.pick(&[Admin::Describe(table), Admin::Regions(table)]),
            _ => rng.pick(&[Admin::Put(table), Admin::Get(table)]),
        };
        ops.push(op);
    }
    ops
}

/// A column family; with `odd`, any of the values HBase refuses or rewrites.
fn family(rng: &mut Rng, odd: bool) -> Family {
    if odd {
        return Family {
            name: rng.pick(&[Some("f:"), Some("f"), Some("g:x"), Some(""), Some(".f"), None]),
            versions: rng.pick(&[1, 3, 0, -1]),
            compression: rng.pick(&["NONE", "GZ", "gz", "bogus"]),
            bloom: rng.pick(&["NONE", "ROWCOL", "row", "bogus"]),
            ttl: rng.pick(&[-1, 0, 100, i32::MAX]),
            in_memory: rng.below(2) == 0,
            block_cache: rng.below(2) == 0,
        };
    }
    Family {
        name: rng.pick(&[Some("f:"), Some("f"), Some("g:"), Some("f:x")]),
        versions: rng.pick(&[1, 3, 5]),
        compression: rng.pick(&["NONE", "GZ", "gz"]),
        bloom: rng.pick(&["NONE", "ROW", "ROWCOL"]),
        ttl: rng.pick(&[-1, 0, 100, i32::MAX]),
        in_memory: rng.below(2) == 0,
        block_cache: rng.below(2) == 0,
    }
}

impl Side {
    fn admin_table(run: u64, table: u8) -> Vec<u8> {
        match table {
            2 => b"adm bad!".to_vec(),
            t => format!("adm{run}_{}_{t}", std::process::id()).into_bytes(),
        }
    }

    fn admin(&mut self, run: u64, op: &Admin) -> Answer {
        let name = |t: &u8| Side::admin_table(run, *t);
        let ours = format!("adm{run}_").into_bytes();
        let mine = |names: &[Vec<u8>]| -> Vec<Vec<u8>> {
            let mut out: Vec<_> = names.iter().filter(|n| n.starts_with(&ours)).cloned().collect();
            out.sort();
            out
        };
        let text = |v: &dyn std::fmt::Debug| Answer::Text(format!("{v:?}"));
        let c = &mut self.client;
        match op {
            Admin::Create { table, families } => {
                let families = families
                    .iter()
                    .map(|f| ColumnDescriptor {
                        name: f.name.map(|n| n.as_bytes().to_vec()),
                        max_versions: Some(f.versions),
                        compression: Some(f.compression.into()),
                        in_memory: Some(f.in_memory),
                        bloom_filter_type: Some(f.bloom.into()),
                        bloom_filter_vector_size: Some(0),
                        bloom_filter_nb_hashes: Some(0),
                        block_cache_enabled: Some(f.block_cache),
                        time_to_live: Some(f.ttl),
                    })
                    .collect();
                done(c.create_table(name(table), families), |_| Answer::Done)
            }
            Admin::Disable(t) => done(c.disable_table(name(t)), |_| Answer::Done),
            Admin::Enable(t) => done(c.enable_table(name(t)), |_| Answer::Done),
            Admin::Delete(t) => done(c.delete_table(name(t)), |_| Answer::Done),
            Admin::IsEnabled(t) => done(c.is_table_enabled(name(t)), Answer::Bool),
            Admin::Names => done(c.get_table_names(), |names| text(&mine(&names))),
            Admin::NamesEnabled => done(
                {
                    // HBase lists every table, then asks each whether it is enabled: another
                    // test's table deleted in between fails the whole call (TableNotFound
                    // naming it). Not this sequence's answer: ask again.
                    let mut r = c.get_table_names_with_is_table_enabled();
                    for _ in 0..5 {
                        let others = matches!(&r, Err(e) if {
                            let e = format!("{e:?}");
                            e.contains("TableNotFoundException") && !e.contains(&format!("adm{run}_"))
                        });
                        if !others {
                            break;
                        }
                        r = c.get_table_names_with_is_table_enabled();
                    }
                    r
                },
                |map| {
                    let names: Vec<Vec<u8>> = map.keys().cloned().collect();
                    text(&mine(&names).iter().map(|n| (n.clone(), map[n])).collect::<Vec<_>>())
                },
            ),
            Admin::Describe(t) => done(c.get_column_descriptors(name(t)), |d| text(&d)),
            Admin::Regions(t) => done(c.get_table_regions(name(t)), |regions| {
                text(
                    &regions
                        .into_iter()
                        .map(|r| (r.start_key, r.end_key))
                        .collect::<Vec<_>>(),
                )
            }),
            Admin::Put(t) => {
                let m = vec![Mutation::new(false, b"f:a".to_vec(), b"v".to_vec(), true)];
                done(c.mutate_row(name(t), b"r".to_vec(), m, BTreeMap::new()), |_| {
                    Answer::Done
                })
            }
            Admin::Get(t) => cells(c.get(name(t), b"r".to_vec(), b"f:a".to_vec(), BTreeMap::new())),
        }
    }

    /// Drops what a sequence may have left.
    fn drop_admin_tables(&mut self, run: u64) {
        for t in 0..2 {
            let name = Side::admin_table(run, t);
            let _ = self.client.disable_table(name.clone());
            let _ = self.client.delete_table(name);
        }
    }
}

const ADMIN_SEQUENCES: u64 = 60;

#[test]
fn thrift1_table_admin_answers_as_real_hbase_answers() {
    if !real_hbase_there() {
        return;
    }
    let addr = real_hbase("TALLROW_HBASE_THRIFT1").unwrap();
    let (server, _dir) = serve(false);
    let mut hbase = Side {
        client: connect(&addr, false),
        table: Vec::new(),
        paced: true,
    };
    let mut ours = Side {
        client: connect(&server.addr().to_string(), false),
        table: Vec::new(),
        paced: true,
    };
    each_sequence(ADMIN_SEQUENCES, admin_sequence, |run, _, ops| {
        let mut a: Vec<Answer> = ops.iter().map(|op| hbase.admin(run, op)).collect();
        let mut b: Vec<Answer> = ops.iter().map(|op| ours.admin(run, op)).collect();
        normalise(&mut a);
        normalise(&mut b);
        hbase.drop_admin_tables(run);
        ours.drop_admin_tables(run);

        a.into_iter()
            .zip(b)
            .enumerate()
            .find(|(_, (x, y))| x != y)
            .map(|(i, (x, y))| (i, x, y))
    });
}

/// Seen on HBase 2.6.1: a scan with a batch size under a filter that decides on whole rows
/// (`hasFilterRow`) opens, and its first read fails with an IOError naming
/// IncompatibleFilterException after the client's retries (about 48 s). `serve` fails the
/// read at once; without the batch size the same scan reads.
#[test]
fn serve_fails_batched_scans_under_row_filters() {
    let (server, _dir) = serve(false);
    let mut c = connect(&server.addr().to_string(), false);
    let t = b"batched".to_vec();
    c.create_table(t.clone(), families()).unwrap();
    let put = vec![Mutation::new(false, b"f:a".to_vec(), b"v1".to_vec(), true)];
    c.mutate_row(t.clone(), b"r".to_vec(), put, BTreeMap::new()).unwrap();
    for filter in [
        &b"PageFilter(2)"[..],
        b"SingleColumnValueFilter('f', 'a', =, 'binary:v1')",
        b"WHILE PageFilter(2)",
    ] {
        for batch in [Some(1), None] {
            let scan = only(filter, batch);
            let id = c
                .scanner_open_with_scan(t.clone(), scan, BTreeMap::new())
                .expect("opens");
            let read = c.scanner_get_list(id, 10);
            match batch {
                Some(_) => {
                    let e = read.expect_err("a batched read under a row filter");
                    let thrift::Error::User(u) = e else { panic!("{e}") };
                    let message = u.downcast_ref::<IOError>().and_then(|e| e.message.clone());
                    assert!(message.unwrap_or_default().contains("IncompatibleFilterException"));
                }
                None => assert_eq!(read.unwrap().len(), 1, "{}", String::from_utf8_lossy(filter)),
            }
            c.scanner_close(id).unwrap();
        }
    }
    // Filters that decide cell by cell take a batch size.
    let id = c
        .scanner_open_with_scan(t.clone(), only(b"KeyOnlyFilter()", Some(1)), BTreeMap::new())
        .unwrap();
    assert_eq!(c.scanner_get_list(id, 10).unwrap().len(), 1);
}

/// A TScan with only a filter and a batch size set (the generated `Default` sets every field).
fn only(filter: &[u8], batch_size: Option<i32>) -> TScan {
    TScan {
        start_row: None,
        stop_row: None,
        timestamp: None,
        columns: None,
        caching: None,
        filter_string: Some(filter.to_vec()),
        batch_size,
        sort_columns: None,
        reversed: None,
        cache_blocks: None,
    }
}
