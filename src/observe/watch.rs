//! The observer's thread: while a run or a load goes on, it asks the master for the
//! cluster's status about once a second and for its procedures every few seconds, and each
//! region server that reports an info port for its `/jmx` every 10 s, and keeps the events
//! and per-server samples they add, counting them as it goes for the live metrics ([`Live`]).
//! A failed read is counted and the next one tried: the observer never fails what it watches.

use super::events::{Event, Events};
use hbase_client::status::{Compaction, Procedure, Status};
use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// Where the master's answers come from: HBase's own client, or a test's script.
pub trait Source: Send + 'static {
    /// The cluster's status now.
    fn status(&self) -> Result<Status, String>;
    /// The master's procedures, running and recently ended.
    fn procedures(&self) -> Result<Vec<Procedure>, String>;
    /// A region server's `/jmx` on its info port.
    fn jmx(&self, host: &str, info_port: u16) -> Result<super::jmx::Reading, String> {
        super::jmx::read(host, info_port, Duration::from_secs(2))
    }
}

impl Source for hbase_client::Client {
    fn status(&self) -> Result<Status, String> {
        self.cluster_status().map_err(|e| e.to_string())
    }

    fn procedures(&self) -> Result<Vec<Procedure>, String> {
        hbase_client::Client::procedures(self).map_err(|e| e.to_string())
    }
}

/// How often each is read.
#[derive(Debug, Clone, Copy)]
pub struct Every {
    /// The status (region servers report every 3 s; a read a second sees each report soon).
    pub status: Duration,
    /// The procedures (the master keeps an ended one a client waits on for minutes, one it
    /// started itself, a server's recovery or a region's move, until its cleaner's next pass,
    /// up to 30 s: a short one between two reads can be missed, and a server's death is also
    /// read from the live list).
    pub procedures: Duration,
    /// Each region server's `/jmx` (Hadoop's metrics refresh their JMX view every 10 s by
    /// default); `None`: not read.
    pub jmx: Option<Duration>,
}

impl Default for Every {
    fn default() -> Every {
        Every {
            status: Duration::from_secs(1),
            procedures: Duration::from_secs(3),
            jmx: Some(Duration::from_secs(10)),
        }
    }
}

/// One region server's figures from one of its reports.
#[derive(Debug, Clone, PartialEq)]
pub struct Sample {
    /// The report's end, ms since the epoch on the server's clock.
    pub at_ms: u64,
    /// The server, `host:port`.
    pub server: String,
    /// Reads and writes per second over the report before (none for a server's first).
    pub read_per_s: Option<f64>,
    /// See `read_per_s`.
    pub write_per_s: Option<f64>,
    /// Regions it holds.
    pub regions: u32,
    /// Its memstores, MiB.
    pub memstore_mib: u64,
    /// The most store files in one of its regions.
    pub max_store_files: u32,
    /// Its compactions running (regions reported compacting, or compaction tasks running,
    /// whichever says more).
    pub compacting: u32,
}

/// What the observer has seen so far, counted as it reads: the live metrics' view
/// (`--metrics`), readable while it watches.
#[derive(Debug, Default)]
pub struct Live {
    /// Events seen, by kind (a span counts at its start).
    events: Mutex<BTreeMap<&'static str, u64>>,
    /// Reads of a region server's `/jmx` that answered.
    jmx_reads: AtomicU64,
    /// Reads that failed.
    failed_reads: AtomicU64,
}

impl Live {
    /// Events seen so far, by kind, in the kinds' order.
    pub fn events(&self) -> Vec<(&'static str, u64)> {
        let events = self.events.lock().unwrap_or_else(|e| e.into_inner());
        events.iter().map(|(k, n)| (*k, *n)).collect()
    }

    /// Reads of a region server's `/jmx` that answered so far.
    pub fn jmx_reads(&self) -> u64 {
        self.jmx_reads.load(Ordering::Relaxed)
    }

    /// Reads that failed so far.
    pub fn failed_reads(&self) -> u64 {
        self.failed_reads.load(Ordering::Relaxed)
    }
}

/// What the observer saw.
#[derive(Debug, Clone, Default)]
pub struct Observed {
    /// The events, in the order seen.
    pub events: Vec<Event>,
    /// A sample per region server report.
    pub samples: Vec<Sample>,
    /// A sample per read of a region server's `/jmx`.
    pub jmx: Vec<JmxSample>,
    /// Reads that failed.
    pub failed_reads: u64,
    /// The last failure, in one line.
    pub last_error: Option<String>,
}

/// One read of a region server's `/jmx`: its queues as they were, and what its counters
/// moved by since the read before (none for its first).
#[derive(Debug, Clone, PartialEq)]
pub struct JmxSample {
    /// When it was read, ms since the epoch on this machine's clock.
    pub at_ms: u64,
    /// The server, `host:port` (its RPC port, as its reports name it).
    pub server: String,
    /// Compactions queued.
    pub compactions_queued: u64,
    /// Flushes queued.
    pub flushes_queued: u64,
    /// Calls waiting in its RPC queues.
    pub rpc_queued: u64,
    /// Milliseconds it blocked updates since the read before.
    pub blocked_updates_ms: Option<u64>,
    /// Requests it refused for a memstore over its limit since the read before.
    pub blocked_requests: Option<u64>,
    /// GC time since the read before.
    pub gc_ms: Option<u64>,
    /// JVM pauses over the warning threshold since the read before.
    pub pauses: Option<u64>,
}

/// Turns successive statuses into samples: one per new report of a server.
#[derive(Default)]
struct Sampler {
    /// Per server: its last report's end and request counts.
    last: HashMap<String, (u64, u64, u64)>,
}

impl Sampler {
    fn status(&mut self, s: &Status, out: &mut Vec<Sample>) {
        for l in &s.live {
            let server = l.name.addr();
            if l.report_end_ms == 0 {
                continue;
            }
            let reads: u64 = l.regions.iter().map(|r| r.read_requests).sum();
            let writes: u64 = l.regions.iter().map(|r| r.write_requests).sum();
            let before = self.last.get(&server).copied();
            if before.is_some_and(|(end, _, _)| end == l.report_end_ms) {
                continue;
            }
            // Counts are per region since it opened: a region that left takes its count with
            // it, so a rate never goes below nothing.
            let rate = |now: u64, was: u64, end: u64| {
                let secs = l.report_end_ms.saturating_sub(end) as f64 / 1000.0;
                (secs > 0.0).then(|| now.saturating_sub(was) as f64 / secs)
            };
            out.push(Sample {
                at_ms: l.report_end_ms,
                server: server.clone(),
                read_per_s: before.and_then(|(end, r, _)| rate(reads, r, end)),
                write_per_s: before.and_then(|(end, _, w)| rate(writes, w, end)),
                regions: l.regions.len() as u32,
                memstore_mib: l.regions.iter().map(|r| u64::from(r.memstore_mib)).sum(),
                max_store_files: l.regions.iter().map(|r| r.store_files).max().unwrap_or(0),
                // HBase 2.6.1 leaves a region's compaction state at none while it compacts:
                // the server's running compaction tasks say it, where it lists them.
                compacting: (l.regions.iter().filter(|r| r.compaction != Compaction::None).count()).max(
                    l.tasks
                        .iter()
                        .filter(|t| t.state == "RUNNING" && t.description.starts_with("Compacting "))
                        .count(),
                ) as u32,
            });
            self.last.insert(server, (l.report_end_ms, reads, writes));
        }
    }
}

/// A running observer; [`Observer::finish`] stops it and hands over what it saw.
pub struct Observer {
    stop: Arc<(Mutex<bool>, Condvar)>,
    thread: Option<JoinHandle<Observed>>,
    live: Arc<Live>,
}

impl Observer {
    /// Starts reading `source`; what ended before `since_ms` (ms since the epoch) is not an
    /// event. The first answers are read before this returns, so that what happens after it
    /// is told from what was already there.
    pub fn start(source: Box<dyn Source>, since_ms: u64, every: Every) -> Observer {
        let stop = Arc::new((Mutex::new(false), Condvar::new()));
        let live = Arc::new(Live::default());
        let mut state = State {
            source,
            events: Events::new(since_ms),
            sampler: Sampler::default(),
            seen: Observed::default(),
            info: Vec::new(),
            jmx_last: HashMap::new(),
            live: live.clone(),
            published: 0,
        };
        state.read_status();
        state.read_procedures(false);
        if every.jmx.is_some() {
            state.read_jmx();
        }
        let flag = stop.clone();
        let thread = std::thread::Builder::new()
            .name("observer".into())
            .spawn(move || {
                let (mut next_status, mut next_procedures) =
                    (Instant::now() + every.status, Instant::now() + every.procedures);
                // Far enough never to come when not read.
                let mut next_jmx = Instant::now() + every.jmx.unwrap_or(Duration::from_secs(86_400 * 365));
                loop {
                    let wake = next_status.min(next_procedures).min(next_jmx);
                    {
                        let (lock, cv) = &*flag;
                        let mut stopped = lock.lock().unwrap_or_else(|e| e.into_inner());
                        while !*stopped {
                            let left = wake.saturating_duration_since(Instant::now());
                            if left.is_zero() {
                                break;
                            }
                            stopped = cv.wait_timeout(stopped, left).unwrap_or_else(|e| e.into_inner()).0;
                        }
                        if *stopped {
                            break;
                        }
                    }
                    let now = Instant::now();
                    if now >= next_status {
                        state.read_status();
                        next_status = now + every.status;
                    }
                    if now >= next_procedures {
                        state.read_procedures(false);
                        next_procedures = now + every.procedures;
                    }
                    if let Some(gap) = every.jmx
                        && now >= next_jmx
                    {
                        state.read_jmx();
                        next_jmx = now + gap;
                    }
                }
                // A last look, so that what ended meanwhile has its end.
                state.read_status();
                state.read_procedures(true);
                if every.jmx.is_some() {
                    state.read_jmx();
                }
                state.seen
            })
            .expect("spawn the observer's thread");
        Observer {
            stop,
            thread: Some(thread),
            live,
        }
    }

    /// What it has seen so far, counted while it watches.
    pub fn live(&self) -> Arc<Live> {
        self.live.clone()
    }

    /// Stops reading, after one last read of each; what was seen.
    pub fn finish(mut self) -> Observed {
        self.stop();
        let thread = self.thread.take().expect("an observer is finished once");
        let mut seen = thread.join().unwrap_or_default();
        // In time order: a procedure's end may be read after a later flush.
        seen.events.sort_by_key(|e| e.at_ms);
        seen
    }
}

impl Observer {
    fn stop(&self) {
        let (lock, cv) = &*self.stop;
        *lock.lock().unwrap_or_else(|e| e.into_inner()) = true;
        cv.notify_all();
    }
}

/// One dropped unfinished (what it watched failed) stops reading at its next wake.
impl Drop for Observer {
    fn drop(&mut self) {
        self.stop();
    }
}

struct State {
    source: Box<dyn Source>,
    events: Events,
    sampler: Sampler,
    seen: Observed,
    /// The live servers with an info port, from the last status: name, host and port.
    info: Vec<(String, String, u16)>,
    /// Each server's last `/jmx` reading, and when.
    jmx_last: HashMap<String, (u64, super::jmx::Reading)>,
    /// The live counts, and how many of the events seen they count.
    live: Arc<Live>,
    published: usize,
}

impl State {
    /// Counts the events seen since the last call in the live view.
    fn publish(&mut self) {
        let new = &self.seen.events[self.published..];
        if !new.is_empty() {
            let mut counts = self.live.events.lock().unwrap_or_else(|e| e.into_inner());
            for e in new.iter().filter(|e| e.phase != super::events::Phase::End) {
                *counts.entry(e.kind.name()).or_insert(0) += 1;
            }
        }
        self.published = self.seen.events.len();
    }

    fn failed(&mut self, what: &str, e: String) {
        self.live.failed_reads.fetch_add(1, Ordering::Relaxed);
        self.seen.failed_reads += 1;
        self.seen.last_error = Some(format!("{what}: {}", e.lines().next().unwrap_or("")));
    }

    fn read_status(&mut self) {
        match self.source.status() {
            Ok(s) => {
                let now = crate::store::now_millis().max(0) as u64;
                self.seen.events.extend(self.events.status(&s, now));
                self.sampler.status(&s, &mut self.seen.samples);
                self.info = s
                    .live
                    .iter()
                    .filter_map(|l| Some((l.name.addr(), l.name.host.clone(), l.info_port.filter(|&p| p > 0)?)))
                    .collect();
            }
            Err(e) => self.failed("the cluster's status", e),
        }
        self.publish();
    }

    /// Reads each server's `/jmx`: a sample each, and a `writes_blocked` event for one that
    /// blocked updates since the read before.
    fn read_jmx(&mut self) {
        for (server, host, port) in self.info.clone() {
            let r = match self.source.jmx(&host, port) {
                Ok(r) => r,
                Err(e) => {
                    self.failed(&format!("{server}'s /jmx"), e);
                    continue;
                }
            };
            let now = crate::store::now_millis().max(0) as u64;
            let before = self.jmx_last.insert(server.clone(), (now, r.clone()));
            let moved = |f: fn(&super::jmx::Reading) -> u64| before.as_ref().map(|(_, b)| f(&r).saturating_sub(f(b)));
            let sample = JmxSample {
                at_ms: now,
                server: server.clone(),
                compactions_queued: r.compactions_queued,
                flushes_queued: r.flushes_queued,
                rpc_queued: r.rpc_queued,
                blocked_updates_ms: moved(|r| r.blocked_updates_ms),
                blocked_requests: moved(|r| r.blocked_requests),
                gc_ms: moved(|r| r.gc_ms),
                pauses: moved(|r| r.pauses),
            };
            if let (Some((since, _)), Some(ms), Some(refused)) =
                (before.as_ref(), sample.blocked_updates_ms, sample.blocked_requests)
                && ms + refused > 0
            {
                let event = |phase, at_ms, detail: String| Event {
                    at_ms,
                    kind: super::events::Kind::WritesBlocked,
                    phase,
                    table: String::new(),
                    region: String::new(),
                    server: server.clone(),
                    detail,
                    source: "jmx",
                };
                self.seen
                    .events
                    .push(event(super::events::Phase::Start, *since, String::new()));
                self.seen.events.push(event(
                    super::events::Phase::End,
                    now,
                    format!(
                        "updates blocked {:.1} s, {refused} requests refused",
                        ms as f64 / 1000.0
                    ),
                ));
            }
            self.seen.jmx.push(sample);
            self.live.jmx_reads.fetch_add(1, Ordering::Relaxed);
        }
        self.publish();
    }

    /// Reads the procedures; `last`: the last read, which settles every server the live list
    /// dropped (else those dropped at least a second ago).
    fn read_procedures(&mut self, last: bool) {
        let settled = if last {
            u64::MAX
        } else {
            (crate::store::now_millis().max(0) as u64).saturating_sub(1000)
        };
        match self.source.procedures() {
            Ok(p) => self.seen.events.extend(self.events.procedures(&p, settled)),
            Err(e) => self.failed("the master's procedures", e),
        }
        self.publish();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::observe::events::Kind;
    use hbase_client::status::{Acts, RegionLoad, RegionRef, Server};
    use hbase_client::zk::ServerName;

    /// Answers from a script: each read takes the next, the last repeats.
    struct Script {
        statuses: Mutex<Vec<Result<Status, String>>>,
        procedures: Mutex<Vec<Vec<Procedure>>>,
        jmx: Mutex<Vec<Result<crate::observe::jmx::Reading, String>>>,
    }

    fn next<T: Clone>(v: &Mutex<Vec<T>>) -> T {
        let mut v = v.lock().unwrap();
        if v.len() > 1 { v.remove(0) } else { v[0].clone() }
    }

    impl Source for Script {
        fn status(&self) -> Result<Status, String> {
            next(&self.statuses)
        }
        fn procedures(&self) -> Result<Vec<Procedure>, String> {
            Ok(next(&self.procedures))
        }
        fn jmx(&self, host: &str, port: u16) -> Result<crate::observe::jmx::Reading, String> {
            assert_eq!((host, port), ("rs1", 16030));
            next(&self.jmx)
        }
    }

    fn status(end: u64, reads: u64, writes: u64, flushed: u64) -> Status {
        Status {
            master: Some(ServerName {
                host: "m".into(),
                port: 16000,
                start_code: 1,
            }),
            live: vec![Server {
                name: ServerName {
                    host: "rs1".into(),
                    port: 16020,
                    start_code: 1,
                },
                report_end_ms: end,
                regions: vec![
                    RegionLoad {
                        table: "t".into(),
                        encoded: "a".into(),
                        read_requests: reads,
                        write_requests: writes,
                        store_files: 3,
                        memstore_mib: 5,
                        flushed_sequence_id: flushed,
                        ..Default::default()
                    },
                    RegionLoad {
                        table: "t".into(),
                        encoded: "b".into(),
                        store_files: 7,
                        memstore_mib: 2,
                        flushed_sequence_id: 1,
                        compaction: Compaction::Major,
                        ..Default::default()
                    },
                ],
                ..Default::default()
            }],
            ..Default::default()
        }
    }

    fn split(id: u64, submitted: u64, updated: u64, state: &str) -> Procedure {
        let r = |e: &str| RegionRef {
            table: "t".into(),
            encoded: e.into(),
        };
        Procedure {
            id,
            parent: None,
            class: "org.apache.hadoop.hbase.master.assignment.SplitTableRegionProcedure".into(),
            state: state.into(),
            submitted_ms: submitted,
            updated_ms: updated,
            what: Acts::Split {
                parent: r("a"),
                children: vec![r("c"), r("d")],
            },
        }
    }

    #[test]
    fn reports_become_samples_and_events_and_failures_are_counted() {
        let script = Script {
            statuses: Mutex::new(vec![
                Ok(status(1_000, 10, 100, 5)),
                Ok(status(1_000, 10, 100, 5)),
                Err("connection refused\nmore".into()),
                Ok(status(4_000, 40, 700, 9)),
            ]),
            procedures: Mutex::new(vec![
                vec![],
                vec![split(7, 2_000, 2_500, "RUNNABLE")],
                vec![split(7, 2_000, 3_500, "SUCCESS")],
            ]),
            jmx: Mutex::new(vec![Err("not read".into())]),
        };
        let every = Every {
            status: Duration::from_millis(5),
            procedures: Duration::from_millis(5),
            jmx: None,
        };
        let o = Observer::start(Box::new(script), 0, every);
        let live = o.live();
        std::thread::sleep(Duration::from_millis(100));
        let seen = o.finish();
        // The live view counted as it went what the end has: the split's start (not its
        // end) and the flush, and the failed read.
        assert_eq!(live.events(), [("flush", 1), ("split", 1)]);
        assert_eq!((live.failed_reads(), live.jmx_reads()), (1, 0));
        assert_eq!(seen.failed_reads, 1);
        assert_eq!(
            seen.last_error.as_deref(),
            Some("the cluster's status: connection refused")
        );
        // One sample per report, the same report read twice counted once; rates from the second.
        assert_eq!(seen.samples.len(), 2, "{:?}", seen.samples);
        assert_eq!(seen.samples[0].read_per_s, None);
        assert_eq!(
            seen.samples[1],
            Sample {
                at_ms: 4_000,
                server: "rs1:16020".into(),
                read_per_s: Some(10.0),
                write_per_s: Some(200.0),
                regions: 2,
                memstore_mib: 7,
                max_store_files: 7,
                compacting: 1,
            }
        );
        let kinds: Vec<(Kind, u64)> = seen.events.iter().map(|e| (e.kind, e.at_ms)).collect();
        assert_eq!(
            kinds,
            [(Kind::Split, 2_000), (Kind::Split, 3_500), (Kind::Flush, 4_000)]
        );
    }

    #[test]
    fn a_source_that_never_answers_leaves_nothing_but_its_failures() {
        let script = Script {
            statuses: Mutex::new(vec![Err("timed out".into())]),
            procedures: Mutex::new(vec![vec![]]),
            jmx: Mutex::new(vec![Err("not read".into())]),
        };
        let seen = Observer::start(Box::new(script), 0, Every::default()).finish();
        assert!(seen.events.is_empty() && seen.samples.is_empty());
        assert_eq!(seen.failed_reads, 2);
    }

    /// A server's `/jmx` read on its info port: a sample per read, its counters as deltas
    /// from the read before, and a `writes_blocked` span where updates were blocked between
    /// two reads; a failed read is counted.
    #[test]
    fn jmx_reads_become_samples_and_blocked_updates_an_event() {
        use crate::observe::jmx::Reading;
        let mut s = status(1_000, 0, 0, 1);
        s.live[0].info_port = Some(16030);
        let quiet = Reading {
            compactions_queued: 1,
            rpc_queued: 4,
            blocked_updates_ms: 500,
            blocked_requests: 2,
            gc_ms: 300,
            ..Default::default()
        };
        let blocked = Reading {
            blocked_updates_ms: 1_700,
            blocked_requests: 37,
            gc_ms: 380,
            pauses: 1,
            ..quiet.clone()
        };
        let script = Script {
            statuses: Mutex::new(vec![Ok(s)]),
            procedures: Mutex::new(vec![vec![]]),
            jmx: Mutex::new(vec![
                Ok(quiet.clone()),
                Err("refused".into()),
                Ok(blocked),
                Ok(Reading { gc_ms: 390, ..quiet }),
            ]),
        };
        let every = Every {
            status: Duration::from_secs(60),
            procedures: Duration::from_secs(60),
            jmx: Some(Duration::from_millis(5)),
        };
        let o = Observer::start(Box::new(script), 0, every);
        let live = o.live();
        std::thread::sleep(Duration::from_millis(100));
        let seen = o.finish();
        assert_eq!(live.jmx_reads(), seen.jmx.len() as u64);
        assert!(live.jmx_reads() >= 3, "{:?}", seen.jmx);
        assert_eq!(live.events(), [("writes_blocked", 1)]);
        assert_eq!(seen.failed_reads, 1, "{:?}", seen.last_error);
        assert_eq!(seen.last_error.as_deref(), Some("rs1:16020's /jmx: refused"));
        let deltas: Vec<[Option<u64>; 4]> = seen
            .jmx
            .iter()
            .take(3)
            .map(|j| [j.blocked_updates_ms, j.blocked_requests, j.gc_ms, j.pauses])
            .collect();
        assert_eq!(
            deltas,
            [
                [None, None, None, None],
                [Some(1_200), Some(35), Some(80), Some(1)],
                // Counters that went back (a restarted server) move by nothing.
                [Some(0), Some(0), Some(10), Some(0)],
            ]
        );
        assert!(seen.jmx.iter().all(|j| j.server == "rs1:16020" && j.rpc_queued == 4));
        let blocked: Vec<&Event> = seen.events.iter().filter(|e| e.kind == Kind::WritesBlocked).collect();
        assert_eq!(blocked.len(), 2, "{blocked:?}");
        assert_eq!(blocked[0].at_ms, seen.jmx[0].at_ms);
        assert_eq!(blocked[1].at_ms, seen.jmx[1].at_ms);
        assert_eq!(blocked[1].detail, "updates blocked 1.2 s, 35 requests refused");
        assert_eq!((blocked[1].server.as_str(), blocked[1].source), ("rs1:16020", "jmx"));
    }

    #[test]
    fn compactions_running_are_counted_from_the_servers_tasks_too() {
        let mut s = status(1_000, 0, 0, 1);
        let task = |d: &str, state: &str| hbase_client::status::Task {
            description: d.into(),
            state: state.into(),
            ..Default::default()
        };
        s.live[0].tasks = vec![
            task("Compacting a/f in t,,1.a.", "RUNNING"),
            task("Compacting b/f in t,,1.b.", "RUNNING"),
            task("Compacting c/f in t,,1.c.", "COMPLETE"),
            task("Flushing t,,1.a.", "RUNNING"),
        ];
        let mut out = Vec::new();
        Sampler::default().status(&s, &mut out);
        assert_eq!(out[0].compacting, 2);
    }
}
