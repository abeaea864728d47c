//! `summary.json`: the types of a run's summary, written by [`super::run`] and read back by
//! [`super::read`]; no behaviour beyond formatting its own figures.

use super::text::{fmt_ns, thousands};
use crate::stats::Summary;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Version of the folder's layout.
pub const FORMAT: u32 = 2;
/// Name of the row of all operations together.
pub const ALL: &str = "all";

/// `summary.json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunSummary {
    /// Layout version ([`FORMAT`]).
    pub format: u32,
    /// The tallrow that wrote it.
    pub tallrow: String,
    /// What ran.
    pub workload: WorkloadInfo,
    /// Against what.
    pub backend: BackendInfo,
    /// Where.
    pub machine: Machine,
    /// How.
    pub config: RunConfig,
    /// Start of measurement (ISO 8601, UTC).
    pub started: String,
    /// End of measurement.
    pub finished: String,
    /// Start of measurement (epoch ms).
    pub started_ms: i64,
    /// End of measurement (epoch ms).
    pub finished_ms: i64,
    /// Measured seconds.
    pub measured_s: f64,
    /// Whether operations were scheduled at a target rate.
    pub open_loop: bool,
    /// Whether the figures can be trusted.
    pub valid: bool,
    /// Why not, when not.
    pub invalid_reason: Option<String>,
    /// Share of operations started within a second of schedule (open loop).
    pub on_time_share: Option<f64>,
    /// Per operation.
    pub ops: Vec<OpReport>,
    /// All operations together.
    pub all: OpReport,
    /// The report folders this one merges (empty for a single run).
    #[serde(default)]
    pub merged_from: Vec<String>,
    /// The shards (`i/N`) a merged report lacks (`report merge --partial`).
    #[serde(default)]
    pub missing_shards: Vec<String>,
    /// Per table, how the run's rows written and read spread over its regions (warm-up
    /// included); `regions.csv` has every region.
    #[serde(default)]
    pub regions: Vec<crate::regions::report::TableSkew>,
    /// The verdicts on the run's latency targets (`--slo`), in the order given.
    #[serde(default)]
    pub slos: Vec<Verdict>,
    /// The calls the backend's client repeated during the run (warm-up included), by the
    /// kind of failure that made it repeat them: faults an operation survived, so that they
    /// are not counted among its errors.
    #[serde(default)]
    pub retries: BTreeMap<String, u64>,
    /// The spans of seconds in which operations failed or the backend retried, in order:
    /// how the run went through a fault, beside its figures as a whole.
    #[serde(default)]
    pub disturbed: Vec<Disturbance>,
    /// Whether the run was stopped (SIGINT, SIGTERM) before its end: `measured_s` is what
    /// it measured.
    #[serde(default)]
    pub stopped_early: bool,
    /// What the cluster did meanwhile, as events per kind (`events.csv` has each), when it
    /// was observed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub events: Option<BTreeMap<String, u64>>,
    /// Per stage of the run (`[[run.stages]]`), in order; empty for a run of one level.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub stages: Vec<StageReport>,
    /// The most copies of a region any table of the run keeps (`REGION_REPLICATION`), as the
    /// store described the tables; `None` where it could not say.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub region_replication: Option<u32>,
}

impl RunSummary {
    /// The reads' consistency and the tables' replication, as the run's header names them:
    /// `strong reads, 1 copy of each region`.
    pub fn reads(&self) -> String {
        let r = &self.config.run;
        let mut out = match r.consistency {
            crate::workload::Consistency::Strong => "strong reads".to_string(),
            crate::workload::Consistency::Timeline => format!(
                "timeline reads (secondaries asked after {} for a get, {} for a scan)",
                humantime::format_duration(r.primary_timeout),
                humantime::format_duration(r.scan_primary_timeout)
            ),
        };
        match self.region_replication {
            Some(1) => out.push_str(", 1 copy of each region"),
            Some(n) => out.push_str(&format!(", {n} copies of each region")),
            None => {}
        }
        out
    }

    /// Whether any operation says what TIMELINE reads did.
    pub fn timeline(&self) -> bool {
        self.ops.iter().any(|o| o.timeline.is_some())
    }
}

/// One stage of a run: its bounds, the level it asked for and what it got. An operation
/// counts in the stage it was due in.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StageReport {
    /// Its place, from 1.
    pub stage: usize,
    /// What it asked, as the workload says it (`30s ramp 100 to 1000 ops/s`).
    pub asked: String,
    /// Start, seconds from the start of measuring.
    pub start_s: f64,
    /// End.
    pub end_s: f64,
    /// The rate it asked for, on average over it (open loop).
    pub asked_ops_per_s: Option<f64>,
    /// The worker threads it asked for, on average over it (closed loop).
    pub asked_threads: Option<f64>,
    /// Operations per second that succeeded within its bounds, whenever they were due: where
    /// the store falls behind a rate, less than asked (the operations due in it, in `ops`,
    /// finish later).
    pub achieved_ops_per_s: f64,
    /// Per operation: the response times of the operations due in it, and as `ops_per_s`
    /// those that finished within it.
    pub ops: Vec<OpReport>,
    /// All operations together.
    pub all: OpReport,
    /// The verdicts on the run's targets (`--slo`) judged on this stage alone.
    #[serde(default)]
    pub slos: Vec<Verdict>,
}

/// Consecutive intervals in each of which an operation failed or a call was retried.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Disturbance {
    /// Start of its first interval (seconds from the start of measuring).
    pub start_s: f64,
    /// End of its last interval.
    pub end_s: f64,
    /// Calls retried in it.
    pub retries: u64,
    /// Operations failed in it.
    pub errors: u64,
    /// Operations done in it.
    pub count: u64,
    /// Seconds of it in which no operation finished: every one waiting on a silent server.
    #[serde(default)]
    pub silent_s: f64,
    /// p99 response time (ns) of all operations around it: its intervals and the one on
    /// either side, to set against the run's (`all.response.p99`).
    pub p99_around_ns: u64,
}

/// The workload of a run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WorkloadInfo {
    /// Name.
    pub name: String,
    /// The file it was read from.
    pub file: String,
    /// Digest of everything that decides the data ([`crate::workload::Workload::data_digest`]).
    pub data_digest: String,
    /// The validated workload.
    pub effective: serde_json::Value,
}

/// The backend of a run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BackendInfo {
    /// The URL given.
    pub url: String,
    /// What it is and where its data lives.
    pub identity: String,
    /// Software and version.
    pub version: String,
}

/// The machine a run ran on.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Machine {
    /// Host name.
    pub hostname: String,
    /// Operating system.
    pub os: String,
    /// Kernel release.
    pub kernel: String,
    /// CPU architecture.
    pub arch: String,
    /// CPU model.
    pub cpu: String,
    /// Cores available to the process.
    pub cores: usize,
    /// Memory, bytes.
    pub memory_bytes: u64,
}

/// The run settings as they ran: the validated `[run]` (the workload's, with every flag and
/// `--set` applied, or a find-max step's), its threads counted, plus the reporting interval
/// and the shard.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunConfig {
    /// The run.
    #[serde(flatten)]
    pub run: crate::workload::Run,
    /// Reporting interval, seconds.
    pub interval_s: f64,
    /// Shard `i/N` of a sharded run, `1/1`, or `N merged` (`N of M merged` when shards were
    /// missing).
    pub shard: String,
    /// The shard counted from 0, as `--shard-index` and Kubernetes' completion index count
    /// (absent in a merged report).
    #[serde(default)]
    pub shard_index: Option<u64>,
    /// How many shards the run was cut into.
    #[serde(default)]
    pub shard_count: Option<u64>,
    /// What the user said of the run (`--label KEY=VALUE`): a commit, a build, a change of
    /// configuration; `tallrow history --key KEY` orders runs by one.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub labels: BTreeMap<String, String>,
}

/// One operation's figures; latencies in nanoseconds.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct OpReport {
    /// Operation name.
    pub op: String,
    /// Whether it writes (a seed's write, or a design's own write, update or delete).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub writes: bool,
    /// Successful operations (those in the histograms).
    pub count: u64,
    /// Failed operations.
    pub errors: u64,
    /// Failures by kind.
    pub errors_by_kind: BTreeMap<String, ErrorCount>,
    /// Operations that started over a second behind schedule.
    pub late: u64,
    /// Successful operations per second.
    pub ops_per_s: f64,
    /// Response time (from the scheduled start under a rate).
    pub response: Summary,
    /// Service time (from the actual start; open loop only).
    pub service: Option<Summary>,
    /// The response-time histogram ([`crate::stats::encode`]).
    pub response_histogram: String,
    /// The service-time histogram (open loop only).
    pub service_histogram: Option<String>,
    /// Successful operations per second in each interval.
    pub interval_ops_per_s: Vec<f64>,
    /// Under TIMELINE reads: the operations that read a secondary's answer, and the latency
    /// of stale and fresh ones apart.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeline: Option<TimelineReads>,
}

/// What TIMELINE reads did for one operation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TimelineReads {
    /// Successful operations that read a stale answer (a secondary replica's).
    pub stale: u64,
    /// Their share of the successful operations.
    pub stale_share: f64,
    /// Response time of the operations with a stale answer.
    pub stale_response: Summary,
    /// Response time of the operations whose answers were all the primaries'.
    pub fresh_response: Summary,
    /// The stale operations' response-time histogram ([`crate::stats::encode`]).
    pub stale_histogram: String,
}

impl TimelineReads {
    /// The figures of `t`.
    pub fn of(t: &crate::stats::OpStats) -> TimelineReads {
        let stale = t.stale.clone().unwrap_or_else(crate::stats::histogram);
        TimelineReads {
            stale: stale.len(),
            stale_share: if t.ok() == 0 {
                0.0
            } else {
                stale.len() as f64 / t.ok() as f64
            },
            stale_response: Summary::of(&stale),
            fresh_response: Summary::of(&t.fresh()),
            stale_histogram: crate::stats::encode(&stale),
        }
    }

    /// The columns of [`TimelineReads::cells`].
    pub const COLUMNS: [&'static str; 7] = [
        "operation",
        "stale",
        "stale share",
        "stale p50",
        "stale p99",
        "fresh p50",
        "fresh p99",
    ];

    /// The figures as the terminal table and `index.html` show them.
    pub fn cells(&self, op: &str) -> Vec<String> {
        let figure = |x: u64, s: &Summary| if s.count == 0 { "-".to_string() } else { fmt_ns(x) };
        vec![
            op.to_string(),
            thousands(self.stale),
            format!("{:.2}%", self.stale_share * 100.0),
            figure(self.stale_response.p50, &self.stale_response),
            figure(self.stale_response.p99, &self.stale_response),
            figure(self.fresh_response.p50, &self.fresh_response),
            figure(self.fresh_response.p99, &self.fresh_response),
        ]
    }
}

impl OpReport {
    /// Whether the operation writes: as the report marks it, or by a seed operation's name
    /// in a report from before the mark.
    pub fn writes_op(&self) -> bool {
        self.writes || crate::workload::Op::from_name(&self.op).is_some_and(|op| op.writes())
    }

    /// The columns of [`OpReport::cells`] (the service columns only under a rate).
    pub const COLUMNS: [&'static str; 12] = [
        "operation",
        "count",
        "ops/s",
        "mean",
        "p50",
        "p90",
        "p99",
        "p99.9",
        "max",
        "errors",
        "service p50",
        "service p99",
    ];

    /// The figures as the terminal table and `index.html` show them.
    pub fn cells(&self) -> Vec<String> {
        let r = &self.response;
        let mut row = vec![
            self.op.clone(),
            thousands(self.count),
            format!("{:.1}", self.ops_per_s),
            fmt_ns(r.mean as u64),
            fmt_ns(r.p50),
            fmt_ns(r.p90),
            fmt_ns(r.p99),
            fmt_ns(r.p999),
            fmt_ns(r.max),
            thousands(self.errors),
        ];
        if let Some(sv) = &self.service {
            row.extend([fmt_ns(sv.p50), fmt_ns(sv.p99)]);
        }
        row
    }
}

/// Failures of one kind.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ErrorCount {
    /// How many.
    pub count: u64,
    /// The first message.
    pub first: String,
}

impl Machine {
    /// The machine this process runs on.
    pub fn this() -> Machine {
        let read = |p: &str| {
            std::fs::read_to_string(p)
                .map(|s| s.trim().to_string())
                .unwrap_or_default()
        };
        let cpu = read("/proc/cpuinfo")
            .lines()
            .find_map(|l| {
                l.strip_prefix("model name")
                    .map(|r| r.trim_start_matches([' ', '\t', ':']).to_string())
            })
            .unwrap_or_default();
        let memory_bytes = read("/proc/meminfo")
            .lines()
            .find_map(|l| l.strip_prefix("MemTotal:"))
            .and_then(|r| r.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
            .map_or(0, |kb| kb * 1024);
        Machine {
            hostname: read("/proc/sys/kernel/hostname"),
            os: std::env::consts::OS.into(),
            kernel: read("/proc/sys/kernel/osrelease"),
            arch: std::env::consts::ARCH.into(),
            cpu,
            cores: std::thread::available_parallelism().map_or(1, |n| n.get()),
            memory_bytes,
        }
    }
}

/// A target's verdict, as `summary.json` keeps it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Verdict {
    /// The target, e.g. `timeline p99 < 5.0 ms`.
    pub target: String,
    /// The figure measured, as printed (none when the operation never succeeded).
    pub measured: Option<String>,
    /// The figure in the target's unit (ns, %, ops/s).
    pub value: Option<f64>,
    /// Whether the run met the target.
    pub held: bool,
}

impl Verdict {
    /// One line: the target, what was measured and the verdict.
    pub fn line(&self) -> String {
        format!(
            "{}: {} {}",
            self.target,
            self.measured.as_deref().unwrap_or("no successful operations"),
            if self.held { "(met)" } else { "(MISSED)" }
        )
    }
}
