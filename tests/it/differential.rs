//! The differential test: seeded random sequences of Thrift1 calls go to real HBase's
//! Thrift1 server (scripts/hbase.sh) and to `tallrow serve`, and every answer is compared.
//! Timestamps the servers assign are compared by the order of the versions they stamp,
//! errors by their kind. Each sequence works on rows of its own, so tables are made once. A failing
//! sequence is shrunk (operations left out while the difference stays) and printed with
//! its seed; `TALLROW_DIFF_SEED=N` replays one sequence.

use crate::common::{real_hbase, real_hbase_there};
use hbase_thrift::hbase::{
    BatchMutation, ColumnDescriptor, HbaseSyncClient, IOError, IllegalArgument, Mutation, TAppend, TCell,
    THbaseSyncClient, TIncrement, TRowResult, TScan,
};
use std::collections::BTreeMap;
use std::net::TcpStream;
use std::sync::Arc;
use thrift::protocol::{TBinaryInputProtocol, TBinaryOutputProtocol};
use thrift::transport::{
    ReadHalf, TBufferedReadTransport, TBufferedWriteTransport, TIoChannel, TTcpChannel, WriteHalf,
};

const SEQUENCES: u64 = 1000;
const LATEST: i64 = i64::MAX;

type Client = HbaseSyncClient<
    TBinaryInputProtocol<TBufferedReadTransport<ReadHalf<TTcpChannel>>>,
    TBinaryOutputProtocol<TBufferedWriteTransport<WriteHalf<TTcpChannel>>>,
>;

fn connect(addr: &str) -> Client {
    let stream = TcpStream::connect(addr).expect("connect");
    stream.set_nodelay(true).unwrap();
    let (i, o) = TTcpChannel::with_stream(stream).split().unwrap();
    HbaseSyncClient::new(
        TBinaryInputProtocol::new(TBufferedReadTransport::new(i), true),
        TBinaryOutputProtocol::new(TBufferedWriteTransport::new(o), true),
    )
}

/// A small deterministic generator (splitmix64), so that a seed names a sequence.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
    fn pick<T: Clone>(&mut self, items: &[T]) -> T {
        items[self.below(items.len() as u64) as usize].clone()
    }
}

/// A mutation: whether it deletes, its column, and a put's value.
type Change = (bool, Vec<u8>, Vec<u8>);
/// A row of an answer: its key and its cells (column, timestamp, value).
type AnswerRow = (Vec<u8>, Vec<(Vec<u8>, i64, Vec<u8>)>);

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
    GetRowWithColumnsTs {
        rows: Vec<u8>,
        columns: Vec<Vec<u8>>,
        ts: i64,
    },
    Scan {
        start: Option<u8>,
        stop: Option<u8>,
        columns: Vec<Vec<u8>>,
        ts: Option<i64>,
        filter: Option<Vec<u8>>,
        reversed: bool,
        batch: i32,
    },
    ScanPrefix {
        columns: Vec<Vec<u8>>,
    },
}

const COLUMNS: [&[u8]; 8] = [b"f:a", b"f:b", b"f:", b"g:a", b"g:n", b"f", b"g", b"nofam:a"];
const FILTERS: [&[u8]; 12] = [
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
    match rng.below(13) {
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
        11 => Op::GetRowWithColumnsTs {
            rows: vec![row, rng.below(3) as u8],
            columns: (0..rng.below(3)).map(|_| rng.pick(&COLUMNS[..7]).to_vec()).collect(),
            ts: timestamp(rng),
        },
        _ => match rng.below(4) {
            0 => Op::ScanPrefix {
                columns: (0..rng.below(2)).map(|_| rng.pick(&COLUMNS[..7]).to_vec()).collect(),
            },
            _ => Op::Scan {
                start: (rng.below(2) == 0).then(|| rng.below(3) as u8),
                stop: (rng.below(2) == 0).then(|| rng.below(4) as u8),
                columns: (0..rng.below(3)).map(|_| rng.pick(&COLUMNS[..7]).to_vec()).collect(),
                ts: (rng.below(3) == 0).then(|| rng.pick(&[2, 3, 4, LATEST])),
                filter: (rng.below(2) == 0).then(|| rng.pick(&FILTERS).to_vec()),
                reversed: rng.below(4) == 0,
                batch: 1 + rng.below(3) as i32,
            },
        },
    }
}

fn sequence(seed: u64) -> Vec<Op> {
    let mut rng = Rng(seed);
    (0..3 + rng.below(10)).map(|_| op(&mut rng)).collect()
}

/// One server under test, with its own table name.
struct Side {
    client: Client,
    table: Vec<u8>,
}

/// An answer, with server-assigned timestamps still raw.
#[derive(Debug, PartialEq)]
enum Answer {
    Done,
    Bool(bool),
    Long(i64),
    Cells(Vec<(i64, Vec<u8>)>),
    Rows(Vec<AnswerRow>),
    Error(String),
}

fn error(e: thrift::Error) -> Answer {
    Answer::Error(match e {
        thrift::Error::User(u) if u.downcast_ref::<IOError>().is_some() => "IOError".into(),
        thrift::Error::User(u) if u.downcast_ref::<IllegalArgument>().is_some() => "IllegalArgument".into(),
        thrift::Error::User(u) => format!("user error {u}"),
        thrift::Error::Application(a) => format!("TApplicationException {:?}", a.kind),
        other => format!("broken: {other}"),
    })
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
    let cells = r
        .columns
        .unwrap_or_default()
        .into_iter()
        .map(|(name, c)| (name, c.timestamp.unwrap_or(-1), c.value.unwrap_or_default()))
        .collect();
    (r.row.unwrap_or_default(), cells)
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
        while tallrow::store::now_millis() == start {
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
            Op::GetRowWithColumnsTs {
                rows: which,
                columns,
                ts,
            } => {
                let keys = which.iter().map(|r| self.key(seq, *r)).collect();
                rows(
                    self.client
                        .get_rows_with_columns_ts(t, keys, columns.clone(), *ts, none()),
                )
            }
            Op::Scan {
                start,
                stop,
                columns,
                ts,
                filter,
                reversed,
                batch,
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
                    caching: Some(*batch),
                    filter_string: filter.clone(),
                    batch_size: None,
                    sort_columns: None,
                    reversed: Some(*reversed),
                    cache_blocks: None,
                };
                let id = match self.client.scanner_open_with_scan(t, scan, none()) {
                    Ok(id) => id,
                    Err(e) => return error(e),
                };
                self.drain(id, *batch)
            }
            Op::ScanPrefix { columns } => {
                let prefix = format!("s{seq}_").into_bytes();
                match self.client.scanner_open_with_prefix(t, prefix, columns.clone(), none()) {
                    Ok(id) => self.drain(id, 2),
                    Err(e) => error(e),
                }
            }
        }
    }

    /// Reads a scanner to its end in batches of `n`, then closes it.
    fn drain(&mut self, id: i32, n: i32) -> Answer {
        let mut all = Vec::new();
        loop {
            match self.client.scanner_get_list(id, n) {
                Ok(batch) if batch.is_empty() => break,
                Ok(batch) => all.extend(batch.into_iter().map(row)),
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
fn normalise(answers: &mut [Answer]) {
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
                .for_each(|(_, cells)| cells.iter_mut().for_each(|(_, ts, _)| fix(ts))),
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
    if !real_hbase_there() {
        return;
    }
    let addr = real_hbase("TALLROW_HBASE_THRIFT1").unwrap();
    let dir = tempfile::tempdir().unwrap();
    let store: Arc<dyn tallrow::store::Store> =
        Arc::new(tallrow::store::embedded::Embedded::open(dir.path()).expect("open"));
    let opts = tallrow::serve::Options {
        bind: "127.0.0.1:0".parse().unwrap(),
        ..tallrow::serve::Options::default()
    };
    let server = tallrow::serve::Server::start(store, &opts).expect("serve");
    let table = format!("diff_{}", std::process::id()).into_bytes();
    let mut hbase = Side {
        client: connect(&addr),
        table: table.clone(),
    };
    let mut ours = Side {
        client: connect(&server.addr().to_string()),
        table,
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

    let seeds: Vec<u64> = match std::env::var("TALLROW_DIFF_SEED") {
        Ok(s) => vec![s.parse().expect("TALLROW_DIFF_SEED is a number")],
        Err(_) => (0..SEQUENCES).collect(),
    };
    // Rows are named by a run number and the seed, so that a shrink's replays start fresh.
    let mut run = 0u64;
    for seed in seeds {
        let ops = sequence(seed);
        run += 1;
        let Some(first) = differs(&mut hbase, &mut ours, run * 100_000 + seed, &ops) else {
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
            match differs(&mut hbase, &mut ours, run * 100_000 + seed, &fewer) {
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
    let _ = hbase.client.disable_table(hbase.table.clone());
    let _ = hbase.client.delete_table(hbase.table.clone());
}
