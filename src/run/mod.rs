//! The query phase: workers put the workload's operation mix on a loaded store and record
//! every operation's latency.
//!
//! Closed loop by default: each worker issues its next operation when the last returns. Under
//! a target rate (open loop) operations are scheduled ahead, fixed or Poisson; latency is
//! measured from the scheduled start, so a stall shows in every operation it delayed
//! (coordinated omission), and service time (from the actual start) is kept apart. A run in
//! which fewer than 95% of operations started within a second of schedule is invalid.
//!
//! Each worker owns its histograms and hands them over once per interval; the collector (the
//! calling thread) merges them per interval and into the totals.

pub mod interrupt;
pub mod ops;
pub mod own;
mod pick;
pub mod profile;
mod schedule;
mod worker;

pub use ops::{Call, Ctx};
pub use pick::{Mix, Users};
pub use schedule::Schedule;
pub use worker::LATE;

use crate::clock::{self, Clock};
use crate::generate::Generator;
use crate::load::Shard;
use crate::schema;
use crate::stats::{self, OpStats, Summary};
use crate::store::{Store, now_millis};
use crate::workload::{Arrival, Op, Run};
use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::AtomicU64;
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// Share of operations that must start within [`LATE`] of schedule for a valid run.
pub const ON_TIME_MIN: f64 = 0.95;

/// What the workers share: the timeline of the run.
pub(crate) struct Plan {
    /// What the run is timed by: the machine's clock, or the store's simulated one.
    clock: Arc<dyn Clock>,
    threads: usize,
    start: Instant,
    measure_start: Instant,
    end: Option<Instant>,
    last_interval: Option<u64>,
    interval: Duration,
    ops: Option<u64>,
    /// The rate over time, under one (open loop).
    rate: Option<profile::Profile>,
    /// The worker threads over time, when closed-loop stages set them.
    threads_over_time: Option<profile::Profile>,
    /// Where each stage ends, from the start of measuring (empty without stages).
    stage_ends: Vec<Duration>,
    arrival: Arrival,
    stream: u64,
    /// Set by the first worker whose call the store refused for good (credentials, TLS):
    /// every worker stops, and so does the run, with that line.
    denied: std::sync::OnceLock<String>,
}

pub(crate) enum Msg {
    Flush {
        worker: usize,
        index: u64,
        stats: Vec<OpStats>,
    },
    /// A stage's figures, once the worker is past it.
    Stage { index: usize, stats: Vec<OpStats> },
    Done {
        worker: usize,
        /// Per stage and operation, those it finished (succeeded) within the stage's bounds.
        finished: Vec<Vec<u64>>,
    },
}

/// What one stage of a run measured.
#[derive(Debug, Clone)]
pub struct StageOutcome {
    /// Its bounds from the start of measuring.
    pub bounds: profile::Bounds,
    /// Per operation, what was recorded of the operations due in it.
    pub totals: Vec<OpStats>,
    /// Per operation, those that succeeded within its bounds, whenever they were due: what
    /// the store kept up with.
    pub finished: Vec<u64>,
}

/// One operation's figures in one interval.
#[derive(Debug, Clone, PartialEq)]
pub struct IntervalOp {
    /// Successful operations.
    pub ok: u64,
    /// Failed operations.
    pub errors: u64,
    /// Response-time figures.
    pub summary: Summary,
    /// The response-time histogram, encoded ([`stats::encode`]).
    pub histogram: String,
}

impl IntervalOp {
    /// The figures of `s`.
    pub fn of(s: &OpStats) -> IntervalOp {
        IntervalOp {
            ok: s.ok(),
            errors: s.failed(),
            summary: Summary::of(&s.response),
            histogram: stats::encode(&s.response),
        }
    }
}

/// One reporting interval.
#[derive(Debug, Clone, PartialEq)]
pub struct Interval {
    /// Start, from the start of measurement.
    pub start: Duration,
    /// Length.
    pub length: Duration,
    /// Per operation, in the mix's order.
    pub ops: Vec<IntervalOp>,
    /// All operations together.
    pub all: IntervalOp,
    /// Calls the backend tried again within the interval, all operations together (a
    /// retry belongs to no single operation); `None` where the backend does not count them.
    pub retries: Option<u64>,
}

/// What a run measured.
#[derive(Debug, Clone)]
pub struct Outcome {
    /// The operations, in the mix's order.
    pub ops: Vec<Op>,
    /// Per operation, everything measured.
    pub totals: Vec<OpStats>,
    /// The reporting intervals, in order.
    pub intervals: Vec<Interval>,
    /// Length of the measurement.
    pub measured: Duration,
    /// Whether operations were scheduled at a target rate.
    pub open_loop: bool,
    /// Start of measurement (epoch ms).
    pub started_ms: i64,
    /// End of measurement (epoch ms).
    pub finished_ms: i64,
    /// Whether the run was stopped before its end ([`interrupt`]): its figures cover the
    /// time it measured.
    pub stopped_early: bool,
    /// Per stage, the operations due in it (empty without stages).
    pub stages: Vec<StageOutcome>,
}

impl Outcome {
    /// All operations' totals merged.
    pub fn all(&self) -> OpStats {
        let mut all = OpStats::default();
        for s in &self.totals {
            all.add(s);
        }
        all
    }

    /// Share of operations that started within [`LATE`] of schedule (open loop only).
    pub fn on_time_share(&self) -> Option<f64> {
        if !self.open_loop {
            return None;
        }
        let all = self.all();
        Some(if all.total() == 0 {
            0.0
        } else {
            1.0 - all.late as f64 / all.total() as f64
        })
    }

    /// Why the figures must not be trusted, if they must not.
    pub fn invalid_reason(&self) -> Option<String> {
        let all = self.all();
        if all.total() == 0 {
            return Some("no operation was measured".into());
        }
        match self.on_time_share() {
            Some(share) if share < ON_TIME_MIN => Some(format!(
                "only {:.1}% of operations started within {} s of schedule (at least {:.0}% needed): \
                 the store or the harness could not keep up with the target rate",
                share * 100.0,
                LATE.as_secs(),
                ON_TIME_MIN * 100.0
            )),
            _ => None,
        }
    }
}

fn total_retries(store: &dyn Store) -> u64 {
    store.retries().iter().map(|(_, n)| n).sum()
}

/// The backend's retry count read at each interval's end, from the start of measuring.
#[derive(Default)]
struct RetryMarks {
    /// The count at the start of measuring, then at the end of each interval.
    read: std::sync::Mutex<Vec<u64>>,
    done: std::sync::atomic::AtomicBool,
}

impl RetryMarks {
    /// Reads `store`'s count at `start` and every `interval` after, until stopped.
    fn sample(&self, store: &dyn Store, start: Instant, interval: Duration) {
        use std::sync::atomic::Ordering;
        for k in 0u32.. {
            let at = start + interval * k;
            loop {
                if self.done.load(Ordering::Acquire) {
                    return;
                }
                let now = Instant::now();
                if now >= at {
                    break;
                }
                std::thread::sleep((at - now).min(Duration::from_millis(50)));
            }
            self.read
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .push(total_retries(store));
        }
    }

    fn stop(&self) {
        self.done.store(true, std::sync::atomic::Ordering::Release);
    }

    /// Each interval's retries: the count at its end less the count at its start (the
    /// count now for an end not read).
    fn assign(&self, intervals: &mut [Interval], now: u64) {
        let read = self.read.lock().unwrap_or_else(|e| e.into_inner());
        let at = |k: usize| read.get(k).copied().unwrap_or(now);
        for (k, iv) in intervals.iter_mut().enumerate() {
            iv.retries = read.get(k).map(|&from| at(k + 1).saturating_sub(from));
        }
    }
}

/// What sees each finished interval: its figures, the operations, and per operation what
/// was recorded in it.
pub type OnInterval<'a> = dyn FnMut(&Interval, &[Op], &[OpStats]) + 'a;

/// Runs `r` (its mix, skew, threads, rate and length) against `store` with the data of `g`,
/// drawing from `shard`'s random streams (the shards of one run pick different users and
/// operations); `on_interval` sees each interval of length `interval` as soon as every worker
/// is past it (for live output), with its figures per operation.
pub fn run(
    store: Arc<dyn Store>,
    g: Arc<Generator>,
    r: &Run,
    shard: Shard,
    interval: Duration,
    on_interval: &mut OnInterval<'_>,
) -> schema::Result<Outcome> {
    // Retries are read on the wall clock at each interval's end; a simulated clock's
    // backends count none.
    let sampled = (!store.clock().is_some_and(|c| c.is_virtual())).then(|| store.clone());
    let clock = store.clock().unwrap_or_else(clock::real);
    let ctx = Ctx::new(store, g, r)?;
    let mix = Mix::new(&r.mix);
    let threads = r.workers();
    let interval = interval.max(Duration::from_millis(10));
    let opts = r;
    let start = clock.now();
    let started_ms = now_millis() + opts.warmup.as_millis() as i64;
    let measure_start = start + opts.warmup;
    let (end, last_interval) = match opts.ops {
        Some(_) => (None, None),
        None => {
            let n = opts.duration.as_nanos().div_ceil(interval.as_nanos()).max(1) as u64;
            (Some(measure_start + opts.duration), Some(n - 1))
        }
    };
    let plan = Plan {
        clock,
        threads,
        start,
        measure_start,
        end,
        last_interval,
        interval,
        ops: opts.ops,
        rate: match (opts.rate, opts.open_loop()) {
            (Some(rate), _) => Some(profile::Profile::flat(rate)),
            (None, true) => profile::Profile::of(opts),
            (None, false) => None,
        },
        threads_over_time: (!opts.open_loop()).then(|| profile::Profile::of(opts)).flatten(),
        stage_ends: profile::bounds(opts).iter().map(|b| b.end).collect(),
        arrival: opts.arrival,
        stream: shard.index,
        denied: std::sync::OnceLock::new(),
    };
    let claimed = AtomicU64::new(0);
    let n_ops = mix.ops().len();
    let mut totals: Vec<OpStats> = (0..n_ops).map(|_| OpStats::default()).collect();
    let mut intervals = Vec::new();
    let mut stages: Vec<StageOutcome> = profile::bounds(opts)
        .into_iter()
        .map(|bounds| StageOutcome {
            bounds,
            totals: (0..n_ops).map(|_| OpStats::default()).collect(),
            finished: vec![0; n_ops],
        })
        .collect();
    let (tx, rx) = mpsc::channel::<Msg>();
    plan.clock.join(threads);
    let marks = RetryMarks::default();
    let _measuring = interrupt::measuring();
    // When the last worker stopped: a stopped run ends there, not when its sampler is joined.
    let mut workers_done = None;
    std::thread::scope(|scope| {
        if let Some(store) = &sampled {
            let marks = &marks;
            scope.spawn(move || marks.sample(&**store, measure_start, interval));
        }
        for id in 0..threads {
            let tx = tx.clone();
            let (plan, ctx, mix, claimed) = (&plan, &ctx, &mix, &claimed);
            std::thread::Builder::new()
                .name(format!("run-{id}"))
                .spawn_scoped(scope, move || worker::work(id, plan, ctx, mix, claimed, tx))
                .expect("spawning a worker thread");
        }
        drop(tx);
        let mut pending: BTreeMap<u64, Vec<OpStats>> = BTreeMap::new();
        let mut passed = vec![0u64; threads];
        let mut next = 0u64;
        let mut finish = |k: u64, stats: Option<Vec<OpStats>>, intervals: &mut Vec<Interval>| {
            let stats = stats.unwrap_or_else(|| (0..n_ops).map(|_| OpStats::default()).collect());
            let mut all = OpStats::default();
            for (t, s) in totals.iter_mut().zip(&stats) {
                t.add(s);
                all.add(s);
            }
            let iv = Interval {
                start: interval * k as u32,
                length: interval,
                ops: stats.iter().map(IntervalOp::of).collect(),
                all: IntervalOp::of(&all),
                retries: None,
            };
            on_interval(&iv, mix.ops(), &stats);
            intervals.push(iv);
        };
        for msg in rx {
            match msg {
                Msg::Flush { worker, index, stats } => {
                    match pending.get_mut(&index) {
                        Some(acc) => acc.iter_mut().zip(&stats).for_each(|(a, s)| a.add(s)),
                        None => {
                            pending.insert(index, stats);
                        }
                    }
                    passed[worker] = passed[worker].max(index + 1);
                }
                Msg::Stage { index, stats } => {
                    if let Some(st) = stages.get_mut(index) {
                        st.totals.iter_mut().zip(&stats).for_each(|(a, s)| a.add(s));
                    }
                    continue;
                }
                Msg::Done { worker, finished } => {
                    for (st, per_op) in stages.iter_mut().zip(finished) {
                        st.finished.iter_mut().zip(per_op).for_each(|(a, n)| *a += n);
                    }
                    passed[worker] = u64::MAX;
                    if passed.iter().all(|&p| p == u64::MAX) {
                        workers_done = Some(plan.clock.now());
                    }
                }
            }
            let upto = passed.iter().copied().min().unwrap_or(u64::MAX);
            while next < upto && upto != u64::MAX {
                finish(next, pending.remove(&next), &mut intervals);
                next += 1;
            }
        }
        // Every worker is done: the rest, with the intervals nobody recorded in left empty.
        let last = pending.keys().next_back().copied().max(last_interval);
        while last.is_some_and(|l| next <= l) {
            finish(next, pending.remove(&next), &mut intervals);
            next += 1;
        }
        marks.stop();
    });
    if let Some(store) = &sampled {
        marks.assign(&mut intervals, total_retries(&**store));
    }
    if let Some(why) = plan.denied.get() {
        return Err(schema::Error::Store(crate::store::Error::Denied(format!(
            "the run stopped: {why}"
        ))));
    }
    let stopped_early = interrupt::requested();
    let elapsed = (workers_done
        .unwrap_or_else(|| plan.clock.now())
        .saturating_duration_since(measure_start))
    .max(Duration::from_millis(1));
    let mut measured = match opts.ops {
        None if !stopped_early => opts.duration,
        None => elapsed.min(opts.duration).max(Duration::from_millis(1)),
        Some(_) => elapsed,
    };
    if stopped_early {
        // The intervals and stages the run never reached are not part of it: those after
        // the stop, and a last one begun after every worker had finished its last call.
        intervals.retain(|iv| iv.start < measured || iv.start.is_zero());
        if intervals.len() > 1
            && let Some(last) = intervals.last()
            && last.all.ok + last.all.errors == 0
        {
            measured = last.start;
            intervals.pop();
        }
        stages.retain(|st| st.bounds.start < measured || st.bounds.start.is_zero());
        if let Some(last) = stages.last_mut() {
            last.bounds.end = last.bounds.end.min(measured);
        }
    }
    if let (true, Some(last)) = (opts.ops.is_some() || stopped_early, intervals.last_mut()) {
        last.length = measured.saturating_sub(last.start).max(Duration::from_millis(1));
    }
    Ok(Outcome {
        ops: mix.ops().to_vec(),
        totals,
        intervals,
        measured,
        open_loop: opts.open_loop(),
        started_ms,
        finished_ms: started_ms + measured.as_millis() as i64,
        stopped_early,
        stages,
    })
}
