//! The parallel bulk loader: creates a workload's tables, then streams its generated rows
//! through the schema layer into a store, in batches, from a pool of workers that each claim
//! blocks of users from an atomic counter. Memory stays bounded: a worker holds one batch per
//! table and one user's data at a time (plus the generator's 4 bytes per user of follower
//! counts).
//!
//! Every cell carries an explicit timestamp, so loading the same workload again writes the
//! same cells: a re-run is idempotent, and a retried batch cannot duplicate anything.

pub mod journal;
mod manifest;
mod progress;

pub use progress::wanted as progress_wanted;

pub use journal::Journal;
pub use manifest::{Manifest, Resumed, write_manifest};

use crate::generate::{Digest, Generator, Scratch, Sink, Table, digest_row};
use crate::schema;
use crate::store::counted::{self, Counted, Spread};
use crate::store::{self, BulkLoad, RowMutation, Store};
use crate::workload::Load;
use serde::Serialize;
use std::collections::VecDeque;
use std::str::FromStr;
use std::sync::Arc;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// The most shards a load or run may be cut into.
pub const MAX_SHARDS: u64 = 1_000_000;

/// Shard `index` (0-based) of `count`: the blocks `index, index + count, ...`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Shard {
    /// 0-based.
    pub index: u64,
    /// Number of shards.
    pub count: u64,
}

impl Shard {
    /// The whole data set.
    pub const ALL: Shard = Shard { index: 0, count: 1 };

    /// The blocks of this shard out of `total`.
    pub fn blocks(self, total: u64) -> impl Iterator<Item = u64> {
        (self.index..total).step_by(self.count as usize)
    }

    /// How many blocks of `total` this shard has.
    pub fn len(self, total: u64) -> u64 {
        total.saturating_sub(self.index).div_ceil(self.count)
    }

    /// Shard `index` (0-based) of `count`, as `--shard-index` and `--shard-count` give it.
    pub fn from_index(index: u64, count: u64) -> Result<Shard, String> {
        if count == 0 || count > MAX_SHARDS {
            return Err(format!("--shard-count {count}: not between 1 and {MAX_SHARDS}"));
        }
        if index >= count {
            return Err(format!(
                "--shard-index {index}: not below --shard-count {count} (the index counts from 0)"
            ));
        }
        Ok(Shard { index, count })
    }

    /// Whether this shard has no blocks of `total`.
    pub fn is_empty(self, total: u64) -> bool {
        self.len(total) == 0
    }
}

impl std::fmt::Display for Shard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.index + 1, self.count)
    }
}

impl FromStr for Shard {
    type Err = String;

    /// `i/N` with `1 <= i <= N`.
    fn from_str(s: &str) -> Result<Shard, String> {
        let err = || format!("{s:?} is not a shard i/N with 1 <= i <= N");
        let (i, n) = s.split_once('/').ok_or_else(err)?;
        let (i, n): (u64, u64) = (i.parse().map_err(|_| err())?, n.parse().map_err(|_| err())?);
        if i == 0 || n == 0 || i > n || n > MAX_SHARDS {
            return Err(err());
        }
        Ok(Shard { index: i - 1, count: n })
    }
}

/// How to load, beside the workload's `[load]` (threads, batch, regions).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Options {
    /// Which blocks.
    pub shard: Shard,
    /// Draw progress bars.
    pub progress: bool,
    /// Count the rows in each table after a complete load (a scan of every table).
    pub count_rows: bool,
    /// Load empty tables through the backend's bulk load where it has one.
    pub bulk: bool,
    /// How often a resumable bulk load's staged rows are made durable (a journaled load).
    pub checkpoint: Duration,
    /// How long opening the store took before the load (an embedded store killed mid-load
    /// replays its journal then), for the report.
    pub opened: Duration,
}

/// What was written to one table.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct TableStats {
    /// Row mutations acknowledged by the store.
    pub rows: u64,
    /// Cells in them.
    pub cells: u64,
    /// Bytes of keys, qualifiers, values and timestamps in them.
    pub bytes: u64,
}

/// The result of a load, complete or not.
#[derive(Debug, Clone, PartialEq)]
pub struct Outcome {
    /// Per table, in its design's order, the tables the workload writes.
    pub tables: Vec<(Table, TableStats)>,
    /// Blocks generated and handed to the writers.
    pub blocks_done: u64,
    /// Blocks of this shard.
    pub blocks_total: u64,
    /// Time spent writing (after the plan).
    pub write_time: Duration,
    /// The part of it spent leaving the store flushed ([`Store::flush`]) once every row
    /// was acknowledged.
    pub flush_time: Duration,
    /// The digest of every row mutation of the shard, independent of thread count; shard
    /// digests add up (wrapping) to the whole data set's.
    pub digest: u128,
    /// Celebrities in the data set.
    pub celebrities: usize,
    /// Why the load stopped early.
    pub error: Option<String>,
    /// Per table, the split points it was created with (none where it existed already or
    /// one region was asked for).
    pub splits: Vec<(Table, Vec<Vec<u8>>)>,
    /// How the acknowledged rows spread over the regions the backend reported.
    pub spread: Spread,
    /// Per table, the distinct rows it holds after a complete load (whatever wrote them),
    /// counted with a scan, or by the bulk load that wrote the table whole; a row that
    /// several mutations wrote counts once.
    pub rows_in_table: Vec<(Table, u64)>,
    /// Time spent counting them.
    pub count_time: Duration,
    /// Time spent opening the store before the load ([`Options::opened`]).
    pub open_time: Duration,
    /// The tables loaded through the backend's bulk load (staged, then written whole at the
    /// end), in their design's order.
    pub bulk: Vec<Table>,
    /// Where the load resumed an unfinished one: what it took over.
    pub resumed: Option<Resumed>,
}

impl Outcome {
    /// Distinct rows of `t` after the load, when counted.
    pub fn rows_in(&self, t: Table) -> Option<u64> {
        self.rows_in_table.iter().find(|(x, _)| *x == t).map(|(_, n)| *n)
    }

    /// Row writes over all tables.
    pub fn rows(&self) -> u64 {
        self.tables.iter().map(|(_, s)| s.rows).sum()
    }
}

/// A batch is sent when it has `batch` rows or this many bytes, whichever comes first, so
/// that wide rows (inboxes, articles) keep requests and memory small.
pub const MAX_BATCH_BYTES: u64 = 8 << 20;

/// What the batches of all workers together may hold, in estimated heap bytes: each worker
/// gets its share, and past it sends its biggest batch early, so that the loader's memory
/// does not grow with the thread count (16 workers held 800 MB of batches before).
pub const BATCH_MEMORY: u64 = 64 << 20;

/// Rows and bytes at which a batch for a bulk load is handed over: the bulk load keeps its
/// cells more compactly than the batches do, and a small batch costs it no round trip.
const BULK_BATCH: (usize, u64) = (256, 256 << 10);

/// Heap a buffered cell costs beyond its bytes: the mutation and its allocations.
const CELL_OVERHEAD: u64 = 64;

/// Blocks a worker may have generated but not yet seen acknowledged while it journals:
/// past it, the batches holding the oldest block's rows are sent early (a table that gets a
/// row every few hundred blocks would otherwise hold every block after it unacknowledged).
/// A load that dies leaves at most this many plus one per worker to write again.
pub const MAX_PENDING: usize = 1;

/// How often, by default, a resumable bulk load's staged rows are made durable and their
/// blocks acknowledged: a load killed while staging writes again what it staged since.
pub const CHECKPOINT: Duration = Duration::from_secs(10);

/// The error of a load stopped by a signal ([`crate::run::interrupt`]) before its last block.
pub const STOPPED: &str = "stopped by a signal";

/// Transient store errors are retried this many times, with doubling delays from 50 ms.
const RETRIES: u32 = 6;

/// One store call, retried with backoff while the error is transient.
pub fn mutate_with_retry(store: &dyn Store, table: &str, rows: &[RowMutation]) -> store::Result<()> {
    let mut delay = Duration::from_millis(50);
    let mut attempt = 0;
    loop {
        match store.mutate(table, rows) {
            Err(e) if e.is_transient() && attempt < RETRIES => {
                std::thread::sleep(delay);
                delay *= 2;
                attempt += 1;
            }
            other => return other,
        }
    }
}

/// What a load has had acknowledged so far, per table: readable while it runs (by the live
/// metrics) and the source of its [`Outcome`]'s counts.
#[derive(Debug)]
pub struct Tally {
    tables: Mutex<Vec<Table>>,
    /// Per table, at its [`Table::index`].
    rows: Vec<AtomicU64>,
    cells: Vec<AtomicU64>,
    bytes: Vec<AtomicU64>,
    done: AtomicU64,
    total: AtomicU64,
}

impl Default for Tally {
    fn default() -> Tally {
        let counters = || (0..crate::generate::MAX_TABLES).map(|_| AtomicU64::new(0)).collect();
        Tally {
            tables: Mutex::default(),
            rows: counters(),
            cells: counters(),
            bytes: counters(),
            done: AtomicU64::new(0),
            total: AtomicU64::new(0),
        }
    }
}

impl Tally {
    /// The tables the load writes, in their design's order.
    pub fn tables(&self) -> Vec<Table> {
        self.tables.lock().expect("tally lock").clone()
    }

    /// Row mutations of `t` acknowledged.
    pub fn row_writes(&self, t: Table) -> u64 {
        self.rows[t.index()].load(Ordering::Relaxed)
    }

    /// Cells of `t` acknowledged.
    pub fn cells(&self, t: Table) -> u64 {
        self.cells[t.index()].load(Ordering::Relaxed)
    }

    /// Bytes of `t` acknowledged.
    pub fn bytes(&self, t: Table) -> u64 {
        self.bytes[t.index()].load(Ordering::Relaxed)
    }

    /// Blocks written, and blocks the load writes.
    pub fn blocks(&self) -> (u64, u64) {
        (self.done.load(Ordering::Relaxed), self.total.load(Ordering::Relaxed))
    }

    fn stats(&self, t: Table) -> TableStats {
        TableStats {
            rows: self.row_writes(t),
            cells: self.cells(t),
            bytes: self.bytes(t),
        }
    }
}

struct Shared<'a> {
    tally: &'a Tally,
    /// What the bulk load has staged, per table: acknowledged (moved into `tally`) when it
    /// finishes.
    staged: Tally,
    next: AtomicU64,
    stop: AtomicBool,
    digest: Mutex<u128>,
    error: Mutex<Option<String>>,
    journal: Option<&'a Journal>,
}

/// A batch handed to one of a worker's senders.
struct Job {
    t: Table,
    rows: Vec<RowMutation>,
}

/// A sender's answer: the batch back (its buffer is reused), and whether the store took it.
struct Done {
    sender: usize,
    rows: Vec<RowMutation>,
    result: store::Result<()>,
}

/// A batch a sender is writing: what it counts once acknowledged, and its rows' key range.
struct InFlight {
    t: Table,
    first: Option<u64>,
    lo: Vec<u8>,
    hi: Vec<u8>,
    cells: u64,
    bytes: u64,
}

/// A worker's senders: threads that write its batches while it generates the next.
struct Senders {
    jobs: Vec<std::sync::mpsc::SyncSender<Job>>,
    done: std::sync::mpsc::Receiver<Done>,
    /// Per sender, the batch it is writing.
    busy: Vec<Option<InFlight>>,
    /// Buffers of acknowledged batches, to fill again.
    spare: Vec<Vec<RowMutation>>,
}

/// A block a worker generated whose rows are not all acknowledged yet.
struct Pending {
    k: u64,
    digest: u128,
    wrote: Vec<TableStats>,
}

struct Writer<'a> {
    store: &'a Counted,
    bulk: Option<&'a dyn BulkLoad>,
    g: &'a Generator,
    /// The tables of the workload's design, in its order.
    all: &'a [Table],
    /// Per table (at its [`Table::index`], as every per-table field here): rows and bytes
    /// at which its batch is sent.
    limits: Vec<(usize, u64)>,
    /// The tables `bulk` covers.
    bulk_tables: &'a [Table],
    bufs: Vec<Vec<RowMutation>>,
    cells: Vec<u64>,
    bytes: Vec<u64>,
    /// Estimated heap of every buffered batch, and this worker's share of [`BATCH_MEMORY`].
    held: u64,
    held_max: u64,
    shared: &'a Shared<'a>,
    progress: &'a progress::Progress,
    digest: Digest,
    failure: Option<String>,
    /// With a journal: the block being generated (its index in the shard), what it wrote,
    /// the oldest block whose rows each batch holds, and the blocks not yet acknowledged.
    k: u64,
    wrote: Vec<TableStats>,
    first: Vec<Option<u64>>,
    pending: VecDeque<Pending>,
    /// Where the store takes batches in flight: the threads that write them.
    senders: Option<Senders>,
}

impl Writer<'_> {
    fn flush(&mut self, t: Table) -> schema::Result<()> {
        let i = t.index();
        if self.bufs[i].is_empty() {
            return Ok(());
        }
        // Asked to stop (Ctrl-C): no batch goes out after the request. The batches in flight
        // are answered (the caller settles them); the block being generated stays
        // unacknowledged, for a resume to write again.
        if crate::run::interrupt::requested() {
            self.failure.get_or_insert_with(|| STOPPED.to_string());
            return Err(store::Error::Io(STOPPED.to_string()).into());
        }
        let bulk = self.bulk.filter(|_| self.bulk_tables.contains(&t));
        if bulk.is_none() && self.senders.is_some() {
            return self.send(t);
        }
        let written = match bulk {
            Some(b) => b
                .add(t.name(), &self.bufs[i])
                .inspect(|()| self.store.layer.written(t.name(), &self.bufs[i])),
            None => mutate_with_retry(self.store, t.name(), &self.bufs[i]),
        };
        if let Err(e) = written {
            return Err(failed(&mut self.failure, self.g, t, &self.bufs[i], e));
        }
        let n = self.bufs[i].len() as u64;
        let (cells, bytes) = (std::mem::take(&mut self.cells[i]), std::mem::take(&mut self.bytes[i]));
        self.bufs[i].clear();
        self.first[i] = None;
        self.acknowledged(t, n, cells, bytes, bulk.is_some());
        Ok(())
    }

    /// Counts a batch the store (or the bulk load) took.
    fn acknowledged(&mut self, t: Table, n: u64, cells: u64, bytes: u64, staged: bool) {
        let i = t.index();
        self.held -= bytes + CELL_OVERHEAD * cells;
        let tally = if staged { &self.shared.staged } else { self.shared.tally };
        tally.rows[i].fetch_add(n, Ordering::Relaxed);
        tally.cells[i].fetch_add(cells, Ordering::Relaxed);
        tally.bytes[i].fetch_add(bytes, Ordering::Relaxed);
        self.progress.add(t, n);
        self.ack();
    }

    /// Hands table `t`'s batch to a free sender. It waits for answers while none is free,
    /// or while one writes a batch of the same table whose key range meets this one's: the
    /// store may apply two batches in flight in either order, and a cell written twice must
    /// end as the later write left it.
    fn send(&mut self, t: Table) -> schema::Result<()> {
        let i = t.index();
        let (lo, hi) = key_range(&self.bufs[i]);
        let (lo, hi) = (lo.to_vec(), hi.to_vec());
        let sender = loop {
            let s = self.senders.as_ref().expect("senders");
            let meets = s.busy.iter().flatten().any(|f| f.t == t && f.lo <= hi && lo <= f.hi);
            match s.busy.iter().position(Option::is_none) {
                Some(free) if !meets => break free,
                _ => self.answer()?,
            }
        };
        let flight = InFlight {
            t,
            first: self.first[i].take(),
            lo,
            hi,
            cells: std::mem::take(&mut self.cells[i]),
            bytes: std::mem::take(&mut self.bytes[i]),
        };
        let s = self.senders.as_mut().expect("senders");
        let fresh = s.spare.pop().unwrap_or_default();
        let rows = std::mem::replace(&mut self.bufs[i], fresh);
        s.busy[sender] = Some(flight);
        // A sender ends only when its jobs end, or when it panicked (the scope rethrows).
        s.jobs[sender].send(Job { t, rows }).expect("a load sender");
        Ok(())
    }

    /// Waits for one sender's answer and counts it.
    fn answer(&mut self) -> schema::Result<()> {
        let s = self.senders.as_mut().expect("senders");
        let done = s.done.recv().expect("a load sender");
        let flight = s.busy[done.sender].take().expect("a batch in flight");
        let mut rows = done.rows;
        if let Err(e) = done.result {
            return Err(failed(&mut self.failure, self.g, flight.t, &rows, e));
        }
        let n = rows.len() as u64;
        rows.clear();
        s.spare.push(rows);
        self.acknowledged(flight.t, n, flight.cells, flight.bytes, false);
        Ok(())
    }

    /// Waits for every batch in flight; the first failure is returned once all answered.
    fn settle(&mut self) -> schema::Result<()> {
        let mut result = Ok(());
        while self
            .senders
            .as_ref()
            .is_some_and(|s| s.busy.iter().any(Option::is_some))
        {
            if let Err(e) = self.answer() {
                result = result.and(Err(e));
            }
        }
        result
    }

    /// Journals the blocks every row of which is acknowledged: those older than the oldest
    /// block whose rows a batch still holds.
    fn ack(&mut self) {
        let Some(journal) = self.shared.journal else { return };
        let flying = self
            .senders
            .iter()
            .flat_map(|s| s.busy.iter().flatten().map(|f| f.first));
        let held = self
            .first
            .iter()
            .copied()
            .chain(flying)
            .flatten()
            .min()
            .unwrap_or(u64::MAX);
        while self.pending.front().is_some_and(|p| p.k < held) {
            let p = self.pending.pop_front().expect("a pending block");
            journal.ack(p.k, p.digest, &p.wrote);
        }
    }

    /// Block `k` is generated: pending until its rows are acknowledged. Past
    /// [`MAX_PENDING`] blocks, the batches holding the oldest one's rows are sent.
    fn generated(&mut self, digest: u128) -> schema::Result<()> {
        if self.shared.journal.is_none() {
            return Ok(());
        }
        self.pending.push_back(Pending {
            k: self.k,
            digest,
            wrote: std::mem::replace(&mut self.wrote, vec![TableStats::default(); self.all.len()]),
        });
        loop {
            self.ack();
            if self.pending.len() <= MAX_PENDING {
                return Ok(());
            }
            let oldest = self.pending[0].k;
            let mut sent = false;
            for &t in self.all {
                if self.first[t.index()].is_some_and(|f| f <= oldest) {
                    self.flush(t)?;
                    sent = true;
                }
            }
            // Nothing buffered holds its rows: a batch in flight does.
            if !sent {
                self.answer()?;
            }
        }
    }

    fn flush_all(&mut self) -> schema::Result<()> {
        for &t in self.all {
            self.flush(t)?;
        }
        self.settle()
    }
}

impl Sink for Writer<'_> {
    fn row(&mut self, t: Table, row: RowMutation) -> schema::Result<()> {
        digest_row(&mut self.digest, t, &row);
        let i = t.index();
        let (cells, bytes) = row.size();
        if self.shared.journal.is_some() {
            let w = &mut self.wrote[i];
            w.rows += 1;
            w.cells += cells;
            w.bytes += bytes;
            if self.bufs[i].is_empty() {
                self.first[i] = Some(self.k);
            }
        }
        self.cells[i] += cells;
        self.bytes[i] += bytes;
        self.bufs[i].push(row);
        self.held += bytes + CELL_OVERHEAD * cells;
        let (rows, bytes) = self.limits[i];
        if self.bufs[i].len() >= rows || self.bytes[i] >= bytes {
            self.flush(t)?;
        }
        if self.held > self.held_max {
            let biggest = self
                .all
                .iter()
                .copied()
                .max_by_key(|t| self.bytes[t.index()] + CELL_OVERHEAD * self.cells[t.index()])
                .expect("tables");
            self.flush(biggest)?;
        }
        Ok(())
    }
}

/// Records why a batch failed (the first failure is the load's error).
fn failed(
    failure: &mut Option<String>,
    g: &Generator,
    t: Table,
    rows: &[RowMutation],
    e: store::Error,
) -> schema::Error {
    failure.get_or_insert_with(|| {
        let row = g.describe_row(t, &rows[0].row);
        format!("table {}, batch of {} rows from {row}: {e}", t.name(), rows.len())
    });
    e.into()
}

/// The least and greatest row key of a batch.
fn key_range(rows: &[RowMutation]) -> (&[u8], &[u8]) {
    let first = rows.first().map_or(&[][..], |r| &r.row[..]);
    rows.iter()
        .fold((first, first), |(lo, hi), r| (lo.min(&r.row[..]), hi.max(&r.row[..])))
}

/// Starts `n` threads that write a worker's batches through `store`, in `scope`.
fn senders<'s, 'e: 's>(scope: &'s std::thread::Scope<'s, 'e>, store: &'e Counted, n: usize) -> Senders {
    let (answers, done) = std::sync::mpsc::channel();
    let jobs = (0..n)
        .map(|sender| {
            let (jobs, take) = std::sync::mpsc::sync_channel::<Job>(1);
            let answers = answers.clone();
            std::thread::Builder::new()
                .name("tallrow-send".into())
                .spawn_scoped(scope, move || {
                    for Job { t, rows } in take {
                        let result = mutate_with_retry(store, t.name(), &rows);
                        if answers.send(Done { sender, rows, result }).is_err() {
                            return;
                        }
                    }
                })
                .expect("a load sender thread");
            jobs
        })
        .collect();
    Senders {
        jobs,
        done,
        busy: (0..n).map(|_| None).collect(),
        spare: Vec::new(),
    }
}

/// Mixes a block's digest with its index, so that adding block digests in any order gives
/// one value for the data set.
fn block_digest(block: u64, d: &Digest) -> u128 {
    let mut outer = Digest::default();
    outer.field(&block.to_le_bytes());
    outer.field(&d.value().to_le_bytes());
    outer.value()
}

fn pool(threads: usize) -> rayon::ThreadPool {
    rayon::ThreadPoolBuilder::new()
        .num_threads(threads.max(1))
        .thread_name(|i| format!("tallrow-load-{i}"))
        .build()
        .expect("a thread pool")
}

/// Creates the workload's tables (unless they exist) and loads its rows. A failed load
/// returns an outcome whose `error` says what failed and whose counts say how far it got.
pub fn load(store: Arc<dyn Store>, g: &Generator, l: &Load, opts: &Options) -> Result<Outcome, schema::Error> {
    load_tallied(store, g, l, opts, &Tally::default())
}

/// [`load`], counting into `tally` as batches are acknowledged.
pub fn load_tallied(
    store: Arc<dyn Store>,
    g: &Generator,
    l: &Load,
    opts: &Options,
    tally: &Tally,
) -> Result<Outcome, schema::Error> {
    load_journaled(store, g, l, opts, tally, None)
}

/// [`load_tallied`], journaling the acknowledged blocks in `journal` (skipping those it
/// already holds, which a resumed load took over) where the load writes batches; a load
/// through the backend's bulk load does not journal. The journal is removed when the load
/// completes and kept when it fails.
pub fn load_journaled(
    store: Arc<dyn Store>,
    g: &Generator,
    l: &Load,
    opts: &Options,
    tally: &Tally,
    journal: Option<(&Journal, Option<&journal::File>)>,
) -> Result<Outcome, schema::Error> {
    let mut splits = crate::regions::split_points(g, l.regions)?;
    let threads = l.workers();
    // All at once: each create is a procedure the master runs and the client waits for
    // (about half a second on a quiet cluster), and a cluster runs those of different
    // tables side by side. A table that was there keeps its regions.
    let existed: Vec<store::Result<Option<String>>> = std::thread::scope(|scope| {
        let calls: Vec<_> = g
            .tables()
            .into_iter()
            .map(|t| {
                let s = splits.iter().find(|(s, _)| s.name() == t.name).map(|(_, s)| s.clone());
                let store = &store;
                scope.spawn(
                    move || match store.create_table(&t.clone().with_splits(s.unwrap_or_default())) {
                        Err(store::Error::TableExists(_)) => store::ensure_table(&**store, &t).map(|()| Some(t.name)),
                        other => other.map(|()| None),
                    },
                )
            })
            .collect();
        calls
            .into_iter()
            .map(|c| c.join().expect("a table's creation"))
            .collect()
    });
    for name in existed {
        if let Some(name) = name? {
            splits.retain(|(s, _)| s.name() != name);
        }
    }
    let tables = g.written_tables();
    let names: Vec<String> = tables.iter().map(|t| t.name().to_string()).collect();
    let counted = counted::count(
        store.clone(),
        counted::bounds_of(&*store, &names)?,
        Duration::from_secs(1),
    );
    let total = opts.shard.len(g.blocks());
    *tally.tables.lock().expect("tally lock") = tables.clone();
    tally.total.store(total, Ordering::Relaxed);
    // A resumed bulk load takes over what its checkpoint made durable.
    let checkpointed = journal.and_then(|(_, from)| from).and_then(|f| f.bulk.as_ref());
    let bulk = if opts.bulk {
        let names: Vec<&str> = names.iter().map(String::as_str).collect();
        match checkpointed {
            Some(state) => Some(store.resume_bulk_load(&names, state)?),
            None => store.bulk_load(&names)?,
        }
    } else {
        None
    };
    let bulk_tables: Vec<Table> = match &bulk {
        Some(b) => tables.iter().copied().filter(|t| b.covers(t.name())).collect(),
        None => Vec::new(),
    };
    // A bulk load's staged rows are acknowledged by its checkpoints where it takes them and
    // covers every table; otherwise not until it finishes: nothing to journal (a journal it
    // was given is removed once it completes: the data set is whole).
    let given = journal.map(|(j, _)| j);
    let first_checkpoint = match &bulk {
        Some(b) if journal.is_some() && bulk_tables.len() == tables.len() => b.checkpoint()?,
        _ => None,
    };
    let resumable = first_checkpoint.is_some();
    let journal = journal.filter(|_| bulk_tables.is_empty() || resumable);
    if let (Some((j, _)), Some(state)) = (journal, first_checkpoint) {
        j.staging(state);
    }
    let resumed = journal.and_then(|(_, from)| from).map(|f| {
        // What the resumed load acknowledged counts as written by this one.
        for t in &tables {
            if let Some(w) = f.tables.get(t.name()) {
                let i = t.index();
                tally.rows[i].fetch_add(w.rows, Ordering::Relaxed);
                tally.cells[i].fetch_add(w.cells, Ordering::Relaxed);
                tally.bytes[i].fetch_add(w.bytes, Ordering::Relaxed);
            }
        }
        tally.done.fetch_add(f.acked(), Ordering::Relaxed);
        Resumed {
            journal: String::new(),
            from_blocks: f.acked(),
            in_flight: f.in_flight(),
            rewritten: 0,
            row_writes_taken_over: f.tables.iter().map(|(t, w)| (t.clone(), w.rows)).collect(),
        }
    });
    let resumed_digest = journal
        .and_then(|(_, from)| from)
        .map_or(0, |f| u128::from_str_radix(&f.digest, 16).unwrap_or(0));
    let claimed_before = journal.and_then(|(_, from)| from).map_or(0, |f| f.claimed);
    let rewritten = AtomicU64::new(0);
    let journal = journal.map(|(j, _)| j);
    let shared = Shared {
        tally,
        staged: Tally::default(),
        next: AtomicU64::new(0),
        stop: AtomicBool::new(false),
        digest: Mutex::new(resumed_digest),
        error: Mutex::new(None),
        journal,
    };
    let progress = progress::Progress::new(&tables, opts.progress);
    let interrupted = AtomicBool::new(false);
    let write_started = Instant::now();
    let pool = pool(threads);
    // Checkpoints of a resumable bulk load: every `opts.checkpoint` while staging, each time
    // the journal is written while writing (cheap: a list of the files written).
    let writing = AtomicBool::new(false);
    let last_checkpoint = Mutex::new(Instant::now());
    let checkpoint = |force: bool| -> Result<Option<serde_json::Value>, String> {
        let Some(b) = bulk.as_deref() else { return Ok(None) };
        let mut last = last_checkpoint.lock().expect("checkpoint lock");
        if !force && !writing.load(Ordering::Relaxed) && last.elapsed() < opts.checkpoint {
            return Ok(None);
        }
        *last = Instant::now();
        b.checkpoint().map_err(|e| e.to_string())
    };
    let checkpointer: Option<journal::Checkpointer> = resumable.then_some(&checkpoint as journal::Checkpointer);
    let mut finished = None;
    std::thread::scope(|scope| {
        // Ends the journal's writer however the workers end (a panic included), so that
        // the scope's join does not wait on it forever.
        let _end = journal.map(|j| {
            // A bulk load's checkpoints are taken by the journal's writer, as often as asked;
            // a store's acknowledgements are written ten times a second (a small file
            // renamed into place): what a resume writes again is what was acknowledged
            // since, and at once a second that was a tenth of a resumed 20,000-user load.
            let period = if checkpointer.is_some() {
                opts.checkpoint
            } else {
                Duration::from_millis(100)
            };
            scope.spawn(move || j.keep(checkpointer, period));
            journal::Ending(j)
        });
        // Stores over the network get senders per worker; a load all into a bulk load none.
        let in_flight = if bulk_tables.len() == tables.len() {
            1
        } else {
            counted.in_flight().max(1)
        };
        pool.broadcast(|_| {
            std::thread::scope(|scope| {
                let mut w = Writer {
                    store: &counted,
                    bulk: bulk.as_deref(),
                    g,
                    all: g.all_tables(),
                    limits: g
                        .all_tables()
                        .iter()
                        .map(|t| {
                            if bulk_tables.contains(t) {
                                (l.batch.clamp(1, BULK_BATCH.0), BULK_BATCH.1)
                            } else {
                                (l.batch.max(1), MAX_BATCH_BYTES)
                            }
                        })
                        .collect(),
                    bulk_tables: &bulk_tables,
                    bufs: vec![Vec::with_capacity(l.batch.min(4096)); g.all_tables().len()],
                    cells: vec![0; g.all_tables().len()],
                    bytes: vec![0; g.all_tables().len()],
                    held: 0,
                    held_max: (BATCH_MEMORY / threads.max(1) as u64).max(256 << 10),
                    shared: &shared,
                    progress: &progress,
                    digest: Digest::default(),
                    failure: None,
                    k: 0,
                    wrote: vec![TableStats::default(); g.all_tables().len()],
                    first: vec![None; g.all_tables().len()],
                    pending: VecDeque::new(),
                    senders: (in_flight > 1).then(|| senders(scope, &counted, in_flight)),
                };
                let mut scratch = Scratch::default();
                let result = (|| -> schema::Result<()> {
                    while !shared.stop.load(Ordering::Relaxed) {
                        // Asked to stop (Ctrl-C, SIGTERM): no new block; what is in hand
                        // is written and journaled below, for `--resume`.
                        if crate::run::interrupt::requested() {
                            if shared.next.load(Ordering::Relaxed) < total {
                                interrupted.store(true, Ordering::Relaxed);
                            }
                            break;
                        }
                        let k = shared.next.fetch_add(1, Ordering::Relaxed);
                        if k >= total {
                            break;
                        }
                        if let Some(j) = journal {
                            if j.done(k) {
                                continue;
                            }
                            j.claimed(k + 1);
                            if k < claimed_before {
                                rewritten.fetch_add(1, Ordering::Relaxed);
                            }
                        }
                        let block = opts.shard.index + k * opts.shard.count;
                        w.digest = Digest::default();
                        w.k = k;
                        g.emit_block(block, &mut scratch, &mut w)?;
                        let d = block_digest(block, &w.digest);
                        {
                            let mut sum = shared.digest.lock().expect("digest lock");
                            *sum = sum.wrapping_add(d);
                        }
                        w.generated(d)?;
                        let done = tally.done.fetch_add(1, Ordering::Relaxed) + 1;
                        progress.blocks(done, total);
                    }
                    w.flush_all()
                })();
                if let Err(e) = result {
                    shared.stop.store(true, Ordering::Relaxed);
                    // What was in flight still counts where the store took it.
                    let _ = w.settle();
                    let message = w.failure.take().unwrap_or_else(|| e.to_string());
                    shared.error.lock().expect("error lock").get_or_insert(message);
                }
            })
        });
        progress.finish();
        if interrupted.load(Ordering::Relaxed) {
            shared
                .error
                .lock()
                .expect("error lock")
                .get_or_insert_with(|| STOPPED.to_string());
        }
        // Dropped unfinished after an error: its runs are removed (unless a checkpoint
        // made them durable, for a resume) and nothing staged is written.
        if let Some(b) = &bulk
            && shared.error.lock().expect("error lock").is_none()
        {
            if opts.progress {
                eprintln!("tallrow: writing the bulk-loaded tables");
            }
            // Every block is staged: a last checkpoint acknowledges them before the files.
            let last = match (journal, checkpointer) {
                (Some(j), Some(cp)) => j.checkpoint(cp, true).map_err(store::Error::Io),
                _ => Ok(()),
            };
            writing.store(true, Ordering::Relaxed);
            finished = Some(last.and_then(|()| pool.install(|| b.finish())));
        }
    });
    let mut error = shared.error.into_inner().expect("error lock");
    let mut bulk_rows: Vec<(String, u64)> = Vec::new();
    if let Some(finished) = finished {
        match finished {
            Ok(rows) => {
                bulk_rows = rows;
                for &t in &bulk_tables {
                    let (i, s) = (t.index(), &shared.staged);
                    tally.rows[i].fetch_add(s.row_writes(t), Ordering::Relaxed);
                    tally.cells[i].fetch_add(s.cells(t), Ordering::Relaxed);
                    tally.bytes[i].fetch_add(s.bytes(t), Ordering::Relaxed);
                }
            }
            Err(e) => error = Some(format!("bulk load of {}: {e}", names_of(&bulk_tables))),
        }
    }
    // A finished load leaves the store as it should be closed: what went through its write
    // path flushed (the bulk-loaded tables were written as files), so that the next command
    // does not replay it. Counted in the write time: the load is not done before.
    let flush_started = Instant::now();
    if error.is_none() {
        let batched: Vec<&str> = tables
            .iter()
            .filter(|t| !bulk_tables.contains(t))
            .map(|t| t.name())
            .collect();
        if let Err(e) = store.flush(&batched) {
            error = Some(format!("flushing {}: {e}", batched.join(", ")));
        }
    }
    let flush_time = flush_started.elapsed();
    let write_time = write_started.elapsed();
    if let Some(j) = given
        && error.is_none()
    {
        j.remove();
    }
    let count_started = Instant::now();
    let mut rows_in_table = Vec::new();
    if error.is_none() {
        use rayon::prelude::*;
        // The tables counted side by side, on the load's workers.
        let counts: Vec<Option<u64>> = pool.install(|| {
            tables
                .par_iter()
                .map(|&t| {
                    // A table written whole by the bulk load was empty: it holds the rows written.
                    let name = store::canonical_table_name(t.name()).unwrap_or_default();
                    if let Some((_, n)) = bulk_rows.iter().find(|(b, _)| *b == name) {
                        return Some(*n);
                    }
                    if !opts.count_rows {
                        return None;
                    }
                    // The data is written whether or not it can be counted.
                    store::count_rows(&*store, t.name())
                        .inspect_err(|e| eprintln!("tallrow: cannot count the rows of {}: {e}", t.name()))
                        .ok()
                })
                .collect()
        });
        rows_in_table = tables.iter().zip(counts).filter_map(|(&t, n)| Some((t, n?))).collect();
    }
    Ok(Outcome {
        tables: tables.iter().map(|&t| (t, tally.stats(t))).collect(),
        blocks_done: tally.blocks().0,
        blocks_total: total,
        write_time,
        flush_time,
        digest: *shared.digest.lock().expect("digest lock"),
        celebrities: g.plan().celebrities().len(),
        error,
        splits,
        spread: counted.layer.finish(),
        rows_in_table,
        // Without counting, what passed was the pool's dispatch (milliseconds on a busy
        // machine), not a count.
        count_time: if opts.count_rows {
            count_started.elapsed()
        } else {
            Duration::ZERO
        },
        open_time: opts.opened,
        bulk: bulk_tables,
        resumed: resumed.map(|r| Resumed {
            journal: journal.map(|j| j.path().display().to_string()).unwrap_or_default(),
            rewritten: rewritten.load(Ordering::Relaxed),
            ..r
        }),
    })
}

fn names_of(tables: &[Table]) -> String {
    tables.iter().map(|t| t.name()).collect::<Vec<_>>().join(", ")
}

/// The digest of every row mutation of `shard`, computed without a store on `threads`
/// workers: equal to a load's [`Outcome::digest`].
pub fn digest(g: &Generator, shard: Shard, threads: usize) -> schema::Result<u128> {
    struct Hash(Digest);
    impl Sink for Hash {
        fn row(&mut self, t: Table, row: RowMutation) -> schema::Result<()> {
            digest_row(&mut self.0, t, &row);
            Ok(())
        }
    }
    use rayon::prelude::*;
    let blocks: Vec<u64> = shard.blocks(g.blocks()).collect();
    pool(threads).install(|| {
        blocks
            .par_iter()
            .map_init(Scratch::default, |scratch, &b| {
                let mut h = Hash(Digest::default());
                g.emit_block(b, scratch, &mut h)?;
                Ok(block_digest(b, &h.0))
            })
            .try_reduce(|| 0u128, |a, b| Ok(a.wrapping_add(b)))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shards_partition_the_blocks() {
        for total in [0u64, 1, 2, 7, 100] {
            for count in 1..=5u64 {
                let mut all: Vec<u64> = (0..count)
                    .flat_map(|index| Shard { index, count }.blocks(total))
                    .collect();
                let lens: u64 = (0..count).map(|index| Shard { index, count }.len(total)).sum();
                all.sort_unstable();
                assert_eq!(all, (0..total).collect::<Vec<_>>());
                assert_eq!(lens, total);
            }
        }
        assert_eq!("2/3".parse::<Shard>(), Ok(Shard { index: 1, count: 3 }));
        for bad in ["0/3", "4/3", "1/0", "x", "1/", "/2", "1/2/3"] {
            assert!(bad.parse::<Shard>().is_err(), "{bad}");
        }
    }
}
