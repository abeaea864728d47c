//! The command line: clap definitions and the dispatch from subcommand to library call.

mod bulkload;
mod compare;
mod design;
mod drop;
pub mod help;
mod history;
mod keys;
mod load;
mod report;
mod run;
mod serve;
mod sweep;
mod verify;

use crate::session::sweep::Vary;
use crate::store::backend::Backend;
use crate::workload::{Set, Workload};
use anyhow::Context;
use clap::{Args, Parser, Subcommand};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

/// Bulk-load and load-test HBase-style schemas of time-ordered, per-user data.
#[derive(Debug, Parser)]
#[command(name = "tallrow", version, about, disable_help_subcommand = true)]
pub struct Cli {
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// The subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Create a workload's tables and load its generated data.
    Load(LoadArgs),
    /// Check a store against a workload's regenerated data.
    Verify(VerifyArgs),
    /// Hand the HFiles of `load --backend hfile:DIR` to HBase, through its own RPC or its
    /// bulk-load tool: create the tables, load every shard's files, count the rows.
    Bulkload(BulkloadArgs),
    /// Run a workload's operation mix (loading it first into an empty target) and report
    /// latencies under reports/.
    Run(RunArgs),
    /// Drop the tables a workload creates (under its table prefix), each only if tallrow's
    /// mark says that workload made it, unless --force.
    Drop(DropArgs),
    /// Compare runs: one or several a side; exits 1 on a regression (several a side) or a
    /// crossed threshold (one a side), and writes the verdict as JSON and Markdown.
    Compare(CompareArgs),
    /// Many runs' reports as series per operation and figure, grouped by what makes runs
    /// comparable, with their change points (E-divisive means with Student's t, as Apache
    /// Otava finds them); writes history.html, history.json, history.md and history.csv.
    History(HistoryArgs),
    /// Work on run reports.
    #[command(subcommand)]
    Report(ReportCommand),
    /// Encode or decode the row keys of the seed designs, for debugging keys.
    #[command(subcommand)]
    Keys(KeysCommand),
    /// Look at a workload's table designs.
    #[command(subcommand)]
    Design(DesignCommand),
    /// Serve a data directory over HBase's Thrift API: Thrift1 (the `Hbase` service, for
    /// clients such as happybase) or Thrift2 (`THBaseService`).
    Serve(ServeArgs),
    /// Load and run a workload at every combination of some fields' values, into a fresh
    /// target wherever the data changes, and report each operation's throughput and p99
    /// against them.
    Sweep(SweepArgs),
    /// Print a subcommand's help, or a topic's: backends (every --backend form and its
    /// options), exit-codes.
    Help(HelpArgs),
}

/// `tallrow help`
#[derive(Debug, Args)]
pub struct HelpArgs {
    /// A subcommand (load, run, ...) or a topic: backends, exit-codes.
    #[arg(value_name = "SUBCOMMAND|TOPIC")]
    pub topic: Option<String>,
}

/// The command line as clap parses it, with what is built from the code rather than
/// written in doc comments: every `--backend` form (from [`help::FORMS`]) and the exit
/// codes.
pub fn command() -> clap::Command {
    use clap::CommandFactory;
    let mut cmd = Cli::command().after_help(format!(
        "{}\nEvery --backend form and its options: tallrow help backends",
        help::exit_codes()
    ));
    for sub in cmd.get_subcommands_mut() {
        let load = sub.get_name() == "load";
        if matches!(sub.get_name(), "load" | "run" | "verify" | "drop") {
            *sub = sub.clone().mut_arg("backend", |a| a.help(help::backend_flag(load)));
        }
    }
    cmd
}

/// Parses the process's arguments with [`command`].
pub fn parse() -> Result<Cli, clap::Error> {
    use clap::FromArgMatches;
    command().try_get_matches().and_then(|m| Cli::from_arg_matches(&m))
}

/// `tallrow sweep`
#[derive(Debug, Args)]
pub struct SweepArgs {
    /// The workload file, e.g. workloads/fanout.toml.
    pub workload: PathBuf,
    /// A field and its values, KEY=V1,V2,... (repeatable: every combination runs, the first
    /// --vary changing slowest), e.g. microblog.celebrity_threshold=0,100,1000. threads,
    /// rate, duration and warmup stand for run.threads, run.rate, run.duration, run.warmup.
    #[arg(long, value_name = "KEY=V1,V2,...", required = true)]
    pub vary: Vec<Vary>,
    /// Backend: embedded:DIR loads each data set into DIR/data-N (default:
    /// data/NAME-sweep/data-N); memory: and null: open a fresh store per data set; hbase://
    /// and bigtable:// load the data sets one after another into the workload's tables,
    /// dropping them in between.
    #[arg(long, value_name = "URL")]
    pub backend: Option<String>,
    /// A field fixed for every point (repeatable), as on run.
    #[arg(long, value_name = "KEY=VALUE")]
    pub set: Vec<crate::workload::Set>,
    /// Threads, length, rate and intervals of every point's run.
    #[command(flatten)]
    pub settings: RunSettings,
    /// On hbase:// or bigtable://, drop the workload's tables first when they exist.
    #[arg(long)]
    pub replace: bool,
    /// Keep the loaded data: every data set's directory on the embedded store, the last
    /// data set's tables on a remote backend.
    #[arg(long)]
    pub keep: bool,
    /// Folder the sweep folder goes under.
    #[arg(long, value_name = "DIR", default_value = "reports")]
    pub reports: PathBuf,
}

/// `tallrow serve`
#[derive(Debug, Args)]
pub struct ServeArgs {
    /// The embedded store's directory; `tallrow load` fills the same kind.
    #[arg(long, value_name = "DIR", default_value = "data/serve")]
    pub data: PathBuf,
    /// Address to listen on; port 0 picks a free port (printed on start).
    #[arg(long, value_name = "HOST:PORT", default_value = "127.0.0.1:9090")]
    pub bind: String,
    /// Allow a non-loopback --bind address. The server has no authentication.
    #[arg(long)]
    pub allow_remote: bool,
    /// Which Thrift service: thrift1 (`Hbase`, as `hbase thrift start`) or thrift2
    /// (`THBaseService`, as `hbase thrift2 start`).
    #[arg(long, default_value = "thrift1")]
    pub api: crate::wire::Api,
    /// Message delimiting: buffered (HBase's default) or framed.
    #[arg(long, default_value = "buffered")]
    pub transport: crate::wire::Transport,
    /// Encoding: binary (HBase's default) or compact.
    #[arg(long, default_value = "binary")]
    pub protocol: crate::wire::Protocol,
    /// Largest request accepted, in MiB; larger frames and strings are refused unread.
    #[arg(long, value_name = "MIB", default_value_t = 64, value_parser = parse_request_mib)]
    pub max_request_mib: usize,
    /// Idle time after which an open scanner is closed.
    #[arg(long, value_name = "DURATION", default_value = "60s", value_parser = parse_lease)]
    pub scanner_lease: std::time::Duration,
    /// How long a connection may send nothing while the server waits for it before it is
    /// closed (HBase's hbase.thrift.server.socket.read.timeout, 60 s); 0 for never.
    #[arg(long, value_name = "DURATION", default_value = "60s", value_parser = parse_idle)]
    pub idle_timeout: std::time::Duration,
    /// Most connections served at once; more wait to be accepted until one closes.
    #[arg(long, value_name = "N", default_value_t = 1024, value_parser = parse_connections)]
    pub max_connections: usize,
    /// Most scanners one connection may hold open (the server holds at most 100,000); a
    /// connection's scanners are closed when it closes.
    #[arg(long, value_name = "N", default_value_t = crate::serve::handler::DEFAULT_SCANNERS_PER_CONNECTION, value_parser = parse_scanners)]
    pub max_scanners_per_connection: usize,
    /// Serve Prometheus metrics (calls per method, connections) at
    /// http://HOST:PORT/metrics; loopback unless --allow-remote.
    #[arg(long, value_name = "HOST:PORT")]
    pub metrics: Option<String>,
}

fn parse_scanners(s: &str) -> Result<usize, String> {
    match s.parse::<u64>() {
        Ok(n) if (1..=100_000).contains(&n) => Ok(n as usize),
        _ => Err("must be a whole number from 1 to 100000".to_string()),
    }
}

/// Most `--max-connections`: each connection is a thread.
const MAX_CONNECTIONS: usize = 32_768;

fn parse_connections(s: &str) -> Result<usize, String> {
    match s.parse::<u64>() {
        Ok(n) if (1..=MAX_CONNECTIONS as u64).contains(&n) => Ok(n as usize),
        _ => Err(format!("must be a whole number from 1 to {MAX_CONNECTIONS}")),
    }
}

fn parse_idle(s: &str) -> Result<std::time::Duration, String> {
    if s.trim() == "0" {
        return Ok(std::time::Duration::ZERO);
    }
    crate::workload::parse_duration(s)
}

/// Largest `--max-request-mib`: Thrift's frame, string and collection lengths are 32-bit.
const MAX_REQUEST_MIB: usize = 2047;

fn parse_request_mib(s: &str) -> Result<usize, String> {
    match s.parse::<u64>() {
        Ok(n) if (1..=MAX_REQUEST_MIB as u64).contains(&n) => Ok(n as usize),
        _ => Err(format!(
            "must be a whole number of MiB from 1 to {MAX_REQUEST_MIB} (Thrift's lengths are 32-bit), got {s:?}"
        )),
    }
}

fn parse_lease(s: &str) -> Result<std::time::Duration, String> {
    crate::workload::parse_duration(s)
}

/// Where a command's data lives.
#[derive(Debug, Args)]
pub struct Target {
    /// The workload file, e.g. workloads/quickstart.toml.
    pub workload: PathBuf,
    /// Where the data is: every form is listed by `tallrow help backends`.
    #[arg(long, value_name = "URL")]
    pub backend: Option<String>,
    /// Override a workload field, validated as the file's own (repeatable), e.g.
    /// --set data.users=200000 or --set microblog.celebrity_threshold=500.
    #[arg(long, value_name = "KEY=VALUE")]
    pub set: Vec<crate::workload::Set>,
}

impl Target {
    /// Reads the workload with `--set` and then `flags` (flags lowered to settings) applied,
    /// and opens the backend.
    pub fn open(&self, flags: &[Set]) -> anyhow::Result<(Workload, Arc<dyn crate::store::Store>)> {
        let (w, backend) = self.parse(flags)?;
        let url = self.backend.as_deref().unwrap_or("embedded:");
        let store = backend.open().with_context(|| format!("cannot open {url}"))?;
        let store = crate::store::prefixed::over(store, &w.storage.table_prefix);
        Ok((w, store))
    }

    /// Reads the workload as [`Target::open`] does and parses the backend, without opening it.
    pub fn parse(&self, flags: &[Set]) -> anyhow::Result<(Workload, Backend)> {
        let sets: Vec<Set> = self.set.iter().chain(flags).cloned().collect();
        let w = Workload::from_file_with(&self.workload, &sets)?;
        let url = self.backend.as_deref().unwrap_or("embedded:");
        let backend = Backend::parse(url, &w.default_data_dir()).context("--backend")?;
        Ok((w, backend))
    }
}

/// `tallrow load`
#[derive(Debug, Args)]
pub struct LoadArgs {
    /// Workload and backend.
    #[command(flatten)]
    pub target: Target,
    /// Worker threads (default: the workload's load.threads, every core where it sets none;
    /// 0 = every core).
    #[arg(long, value_name = "N")]
    pub threads: Option<usize>,
    /// Allow more than 64 worker threads per core (never more than 4,096).
    #[arg(long)]
    pub force_threads: bool,
    /// Rows per store call, at most 8 MiB (default: the workload's load.batch, 4000 where it
    /// sets none).
    #[arg(long, value_name = "N")]
    pub batch: Option<usize>,
    /// Load only one shard (blocks of users i, i+N, ...); the shards together are the whole.
    #[command(flatten)]
    pub shard: ShardArgs,
    /// Create each missing table with N regions, split where the key design and the
    /// generated keys put them (default: the workload's load.regions, 1 where it sets none).
    #[arg(long, value_name = "N")]
    pub regions: Option<u32>,
    /// Folder for the load manifest.
    #[arg(long, value_name = "DIR", default_value = "reports")]
    pub reports: PathBuf,
    /// Skip counting the rows in each table after the load (a scan of every table, which
    /// on a remote store of many rows takes a while). Tables a bulk load wrote whole are
    /// counted as they are written, without a scan.
    #[arg(long)]
    pub no_count: bool,
    /// Write every table in batches through the store's write path, even where the backend
    /// has a bulk load for empty tables (the embedded store does).
    #[arg(long)]
    pub no_bulk: bool,
    /// With hfile:DIR: replace the HFiles DIR already holds of this shard (or, when they are
    /// of another data set, all of them).
    #[arg(long)]
    pub replace: bool,
    /// With hfile:DIR: split each table where a live table of the same name has its regions
    /// (an hbase:// URL), instead of where --regions would.
    #[arg(long, value_name = "URL")]
    pub split_from: Option<String>,
    /// Continue the last load of this workload, data, shard and target that did not finish
    /// (its journal, REPORTS/load.journal, says which blocks the store acknowledged): those
    /// are skipped, and only the blocks in flight when it stopped are written again.
    #[arg(long)]
    pub resume: bool,
    /// How often an hfile: load makes the rows it staged durable, so that --resume can
    /// continue from there (sooner loses less to a crash, and spills more, smaller runs).
    #[arg(long, value_name = "DURATION", default_value = "10s", value_parser = parse_idle)]
    pub checkpoint_every: std::time::Duration,
    /// Watch the cluster meanwhile: what it did (splits, moves, flushes, compactions, servers
    /// lost) goes beside the manifest (<manifest>-events.csv, -cluster.csv). Default: the
    /// backend itself when it is api=native. A URL of HBase's own RPC
    /// (hbase://QUORUM?api=native) watches that cluster behind a gateway; off, nothing.
    #[arg(long, value_name = "URL|off")]
    pub observe: Option<String>,
    /// Live metrics.
    #[command(flatten)]
    pub live: MetricsArgs,
}

/// Live metrics of `load` and `run`.
#[derive(Debug, Args)]
pub struct MetricsArgs {
    /// Serve Prometheus metrics at http://HOST:PORT/metrics while working (port 0 picks a
    /// free port, printed on stderr).
    #[arg(long, value_name = "HOST:PORT")]
    pub metrics: Option<String>,
    /// Allow a non-loopback --metrics address. The endpoint has no authentication.
    #[arg(long)]
    pub allow_remote: bool,
    /// Keep serving --metrics this long after the work ends, so that the last scrape sees
    /// the final counts.
    #[arg(long, value_name = "DURATION", default_value = "0s", value_parser = parse_idle)]
    pub metrics_linger: std::time::Duration,
}

impl MetricsArgs {
    /// Starts the endpoint when one is asked for; `info` labels `tallrow_info`.
    pub fn start(&self, command: &str, info: &[(&'static str, String)]) -> anyhow::Result<Option<LiveMetrics>> {
        let Some(addr) = &self.metrics else {
            if self.allow_remote {
                anyhow::bail!("--allow-remote: only applies to --metrics, which is not given");
            }
            return Ok(None);
        };
        let metrics = Arc::new(crate::metrics::Metrics::new(command, info));
        let exporter = crate::metrics::http::Exporter::start(addr, self.allow_remote, metrics.clone())?;
        eprintln!("tallrow: metrics at http://{}/metrics", exporter.addr());
        Ok(Some(LiveMetrics {
            metrics,
            exporter,
            linger: self.metrics_linger,
        }))
    }
}

/// A running `--metrics` endpoint.
pub struct LiveMetrics {
    /// What it serves.
    pub metrics: Arc<crate::metrics::Metrics>,
    exporter: crate::metrics::http::Exporter,
    linger: std::time::Duration,
}

impl LiveMetrics {
    /// Serves on for `--metrics-linger`, then stops.
    pub fn finish(self) {
        if !self.linger.is_zero() {
            eprintln!(
                "tallrow: metrics stay at http://{}/metrics for {}",
                self.exporter.addr(),
                humantime::format_duration(self.linger)
            );
            std::thread::sleep(self.linger);
        }
    }
}

/// `tallrow bulkload`
#[derive(Debug, Args)]
pub struct BulkloadArgs {
    /// The hfile: directories (one per shard, or one that several shards wrote): local
    /// paths or hdfs://NAMENODE:PORT/PATH, handed to the tool as they are.
    #[arg(required = true, value_name = "DIR")]
    pub dirs: Vec<String>,
    /// The HBase to load into: hbase://QUORUM?api=native (HBase's own RPC) or
    /// hbase://HOST:PORT?api=thrift2 (tables are created and rows counted through it).
    #[arg(long, value_name = "URL")]
    pub backend: String,
    /// Hand the files over through HBase's bulk-load tool rather than HBase's own RPC: the
    /// command, split into words as a shell would (no shell runs it); each table runs as CMD
    /// DIR/<namespace>/<table> <namespace>:<table>. On a cluster's edge node, `hbase
    /// completebulkload`; here, "scripts/hbase.sh completebulkload". The tool also splits
    /// files whose regions are no longer the table's. Without it, api=native hands them
    /// over itself, and api=thrift2 runs `hbase completebulkload`.
    #[arg(long, value_name = "CMD")]
    pub hbase_cmd: Option<String>,
    /// Tables handed over at once (0 = up to 16 through HBase's RPC, one per core through
    /// the tool, each run a JVM of its own).
    #[arg(long, value_name = "N", default_value_t = 0)]
    pub parallel: usize,
    /// Skip counting each table's rows through the backend after the hand-over (a scan of every
    /// row: slow on tables of billions); `tallrow verify` checks them later.
    #[arg(long)]
    pub no_count: bool,
    /// Watch the cluster meanwhile (the assigns, splits and compactions a bulk load brings):
    /// a line after the table, and REPORTS/bulkload-<UTC>-events.csv and -cluster.csv.
    /// Default: the backend itself when it is api=native. A URL of HBase's own RPC
    /// (hbase://QUORUM?api=native) watches that cluster behind a gateway; off, nothing.
    #[arg(long, value_name = "URL|off")]
    pub observe: Option<String>,
    /// Folder the observed events go under.
    #[arg(long, value_name = "DIR", default_value = "reports")]
    pub reports: PathBuf,
}

/// `tallrow verify`
#[derive(Debug, Args)]
pub struct VerifyArgs {
    /// Workload and backend.
    #[command(flatten)]
    pub target: Target,
    /// Users whose pages, ranges, timelines and lists are queried through the DAOs.
    #[arg(long, value_name = "N", default_value_t = 100)]
    pub sample: u64,
    /// Worker threads (0 = every core).
    #[arg(long, value_name = "N", default_value_t = 0)]
    pub threads: usize,
    /// Allow more than 64 worker threads per core (never more than 4,096).
    #[arg(long)]
    pub force_threads: bool,
    /// Differences printed; all are counted.
    #[arg(long, value_name = "N", default_value_t = 50)]
    pub show: usize,
}

/// `tallrow drop`
#[derive(Debug, Args)]
pub struct DropArgs {
    /// Workload and backend.
    #[command(flatten)]
    pub target: Target,
    /// Drop the workload's tables even where tallrow's mark does not say this workload made
    /// them (a backend that cannot keep the mark: Thrift1, Bigtable).
    #[arg(long)]
    pub force: bool,
}

/// Which shard of a sharded load or run: `--shard i/N`, or Kubernetes' 0-based completion
/// index as `--shard-index I --shard-count N`.
#[derive(Debug, Args)]
pub struct ShardArgs {
    /// Shard i of N, counted from 1.
    #[arg(long, value_name = "i/N", conflicts_with = "shard_index")]
    pub shard: Option<crate::load::Shard>,
    /// The shard counted from 0 (e.g. $(JOB_COMPLETION_INDEX)); needs --shard-count.
    #[arg(long, value_name = "I", requires = "shard_count")]
    pub shard_index: Option<u64>,
    /// How many shards there are; needs --shard-index.
    #[arg(long, value_name = "N", requires = "shard_index")]
    pub shard_count: Option<u64>,
}

impl ShardArgs {
    /// The shard asked for; the whole data set when none was.
    pub fn get(&self) -> anyhow::Result<crate::load::Shard> {
        match (self.shard, self.shard_index, self.shard_count) {
            (Some(s), _, _) => Ok(s),
            (None, Some(i), Some(n)) => crate::load::Shard::from_index(i, n).map_err(anyhow::Error::msg),
            _ => Ok(crate::load::Shard::ALL),
        }
    }
}

/// `tallrow run`
#[derive(Debug, Args)]
pub struct RunArgs {
    /// Workload and backend.
    #[command(flatten)]
    pub target: Target,
    /// Threads, length, rate and intervals.
    #[command(flatten)]
    pub settings: RunSettings,
    /// When the target is empty and the run loads it first: create each table with N
    /// regions (default: the workload's load.regions, 1 where it sets none).
    #[arg(long, value_name = "N")]
    pub regions: Option<u32>,
    /// Run as one shard: draw from that shard's random streams (merge the shards' reports
    /// with `tallrow report merge`).
    #[command(flatten)]
    pub shard: ShardArgs,
    /// Folder the report folder goes under.
    #[arg(long, value_name = "DIR", default_value = "reports")]
    pub reports: PathBuf,
    /// A target the run must meet, else it exits 1 after writing its report (repeatable):
    /// OP:METRIC<VALUE with OP an operation of the mix or all, METRIC mean, p50, p90, p99,
    /// p99.9 or max (response time, e.g. timeline:p99<5ms), errors (all:errors<0.1%) or
    /// throughput (all:throughput>2000).
    #[arg(long, value_name = "TARGET")]
    pub slo: Vec<crate::report::slo::Slo>,
    /// Wait until this UTC time (e.g. 2026-11-24T07:00:00Z) before the warm-up begins, after
    /// any load, so that the shards of a run on several machines measure the same period.
    #[arg(long, value_name = "TIME", value_parser = parse_start_at)]
    pub start_at: Option<std::time::SystemTime>,
    /// Find the highest open-loop rate at which every --slo holds and the run is valid: a
    /// closed-loop probe bounds it, measured steps narrow it; writes
    /// reports/<workload>-findmax-<UTC>/.
    #[arg(long, conflicts_with_all = ["rate", "ops"])]
    pub find_max: bool,
    /// Measured length of each --find-max step, after the warm-up.
    #[arg(long, value_name = "DURATION", default_value = "20s", value_parser = run::parse_step)]
    pub step_duration: Duration,
    /// How close --find-max gets: the answer is within this much of the lowest rate that
    /// failed.
    #[arg(long, value_name = "PERCENT", default_value = "5%", value_parser = run::parse_precision)]
    pub precision: f64,
    /// Watch the cluster meanwhile: what it did (splits, moves, flushes, compactions, servers
    /// lost) and its region servers' figures go into the report (events.csv, cluster.csv).
    /// Default: the backend itself when it is api=native. A URL of HBase's own RPC
    /// (hbase://QUORUM?api=native) watches that cluster behind a gateway; off, nothing.
    #[arg(long, value_name = "URL|off")]
    pub observe: Option<String>,
    /// Live metrics.
    #[command(flatten)]
    pub live: MetricsArgs,
}

fn parse_start_at(s: &str) -> Result<std::time::SystemTime, String> {
    humantime::parse_rfc3339_weak(s.trim()).map_err(|_| format!("{s:?} is not a UTC time like 2026-11-24T07:00:00Z"))
}

/// Command-line settings over a workload's `[run]`.
#[derive(Debug, Args)]
pub struct RunSettings {
    /// Worker threads (default: the workload's run.threads, every core where it sets none;
    /// 0 = every core).
    #[arg(long, value_name = "N")]
    pub threads: Option<usize>,
    /// Allow more than 64 worker threads per core (never more than 4,096).
    #[arg(long)]
    pub force_threads: bool,
    /// How long to measure after warm-up, e.g. 60s (default: the workload's run.duration,
    /// 60s where it sets none).
    #[arg(long, value_name = "DURATION", conflicts_with = "ops")]
    pub duration: Option<String>,
    /// Stop after this many measured operations instead.
    #[arg(long, value_name = "N")]
    pub ops: Option<u64>,
    /// Target operations per second: an open loop, latency from the scheduled start
    /// (default: the workload's run.rate; none, a closed loop, where it sets none).
    #[arg(long, value_name = "R")]
    pub rate: Option<f64>,
    /// Schedule under --rate (default: the workload's run.arrival, fixed where it sets
    /// none).
    #[arg(long)]
    pub arrival: Option<crate::workload::Arrival>,
    /// Unmeasured time before measuring, e.g. 10s (default: the workload's run.warmup, 5s
    /// where it sets none).
    #[arg(long, value_name = "DURATION")]
    pub warmup: Option<String>,
    /// Length of a reporting interval (at least 10ms).
    #[arg(long, value_name = "DURATION", value_parser = parse_interval, default_value = "1s")]
    pub interval: Duration,
    /// A stage of the run: DURATION:RATE for an open loop, DURATION:threads=N for a closed
    /// one, :ramp to go there linearly from the stage before (repeatable, in order; replaces
    /// the workload's [[run.stages]]), e.g. --stage 30s:500 --stage 1m:5000:ramp.
    #[arg(long = "stage", value_name = "DURATION:RATE[:ramp]", value_parser = parse_stage, conflicts_with_all = ["duration", "ops", "rate"])]
    pub stages: Vec<StageFlag>,
    /// What to say of the run in its report (repeatable), e.g. --label commit=3f2a9c1:
    /// `tallrow history --key commit` orders runs by it.
    #[arg(long = "label", value_name = "KEY=VALUE", value_parser = parse_label, action = clap::ArgAction::Append)]
    pub labels: Vec<(String, String)>,
}

/// `KEY=VALUE`: a key of letters, digits, `_`, `-` and `.`, a value of one line.
fn parse_label(s: &str) -> Result<(String, String), String> {
    let Some((k, v)) = s.split_once('=') else {
        return Err("the form is KEY=VALUE, e.g. commit=3f2a9c1".into());
    };
    let (k, v) = (k.trim(), v.trim());
    if k.is_empty() || !k.chars().all(|c| c.is_ascii_alphanumeric() || "_-.".contains(c)) {
        return Err(format!("{k:?} is not a key: letters, digits, _, - and . only"));
    }
    if v.is_empty() || v.contains(['\n', '\r']) {
        return Err(format!("the value of {k} must be one line, not empty"));
    }
    Ok((k.to_string(), v.to_string()))
}

/// One `--stage`, as given and as the workload's table.
#[derive(Debug, Clone)]
pub struct StageFlag {
    text: String,
    table: toml::Table,
    threads: bool,
}

/// `DURATION:RATE[:ramp]` or `DURATION:threads=N[:ramp]`; the numbers are checked with the
/// workload, as the same stage in the file would be.
fn parse_stage(s: &str) -> Result<StageFlag, String> {
    let form = "the form is DURATION:RATE[:ramp] or DURATION:threads=N[:ramp], e.g. 30s:1000 or 1m:threads=8:ramp";
    let parts: Vec<&str> = s.split(':').map(str::trim).collect();
    let (duration, level, ramp) = match parts.as_slice() {
        [d, l] => (*d, *l, false),
        [d, l, "ramp"] => (*d, *l, true),
        [_, _, other] => return Err(format!("{other:?} is not ramp; {form}")),
        _ => return Err(form.into()),
    };
    crate::workload::parse_duration(duration)?;
    let mut table = toml::Table::new();
    table.insert("duration".into(), toml::Value::String(duration.into()));
    let threads = match level.strip_prefix("threads=") {
        Some(n) => {
            let n: u32 = n.parse().map_err(|_| format!("{n:?} is not a thread count; {form}"))?;
            table.insert("threads".into(), toml::Value::Integer(i64::from(n)));
            true
        }
        None => {
            let r: f64 = level
                .strip_suffix("ops/s")
                .unwrap_or(level)
                .trim()
                .parse()
                .map_err(|_| format!("{level:?} is not operations per second; {form}"))?;
            table.insert("rate".into(), toml::Value::Float(r));
            false
        }
    };
    if ramp {
        table.insert("ramp".into(), toml::Value::Boolean(true));
    }
    Ok(StageFlag {
        text: s.to_string(),
        table,
        threads,
    })
}

impl RunSettings {
    /// The flags that stand for `[run]` fields, lowered to settings: validated once, as
    /// the same values in the file would be.
    pub fn sets(&self) -> Vec<Set> {
        use toml::Value;
        let mut out = Vec::new();
        if let Some(n) = self.threads {
            out.push(Set::flag("--threads", n, "run.threads", Some(int(n as u64))));
        }
        if let Some(d) = &self.duration {
            out.push(Set::flag(
                "--duration",
                d,
                "run.duration",
                Some(Value::String(d.clone())),
            ));
            // A length instead of the file's count of operations.
            out.push(Set::flag("--duration", d, "run.ops", None));
        }
        if let Some(n) = self.ops {
            out.push(Set::flag("--ops", n, "run.ops", Some(int(n))));
        }
        if let Some(r) = self.rate {
            out.push(Set::flag("--rate", r, "run.rate", Some(Value::Float(r))));
        }
        if let Some(a) = self.arrival {
            out.push(Set::flag(
                "--arrival",
                a,
                "run.arrival",
                Some(Value::String(a.to_string())),
            ));
        }
        if let Some(d) = &self.warmup {
            out.push(Set::flag("--warmup", d, "run.warmup", Some(Value::String(d.clone()))));
        }
        if !self.stages.is_empty() {
            let shown = self
                .stages
                .iter()
                .map(|s| s.text.as_str())
                .collect::<Vec<_>>()
                .join(" --stage ");
            // The stages set the run's length and level: the file's own give way.
            let mut owned = vec!["run.duration", "run.ops", "run.rate"];
            if self.stages.iter().any(|s| s.threads) && self.threads.is_none() {
                owned.push("run.threads");
            }
            for key in owned {
                out.push(Set::flag("--stage", &shown, key, None));
            }
            let tables = self.stages.iter().map(|s| Value::Table(s.table.clone())).collect();
            out.push(Set::flag("--stage", &shown, "run.stages", Some(Value::Array(tables))));
        }
        out
    }

    /// The `--label`s by key; a key given twice is an error.
    pub fn labels(&self) -> anyhow::Result<std::collections::BTreeMap<String, String>> {
        let mut out = std::collections::BTreeMap::new();
        for (k, v) in &self.labels {
            if out.insert(k.clone(), v.clone()).is_some() {
                anyhow::bail!("--label {k} is given twice");
            }
        }
        Ok(out)
    }

    /// Checks the run's thread count against this machine and its rate against its
    /// workers, naming the flag where one set them.
    pub fn check(&self, w: &Workload) -> anyhow::Result<()> {
        let named = |flag: bool, name: &'static str, field: &'static str| if flag { name } else { field };
        crate::session::checked_threads(
            w.run.threads,
            self.force_threads,
            named(self.threads.is_some(), "--threads", "run.threads"),
        )?;
        crate::session::checked_threads(w.load.threads, self.force_threads, "load.threads")?;
        crate::session::check_rate(&w.run, named(self.rate.is_some(), "--rate", "run.rate"))?;
        Ok(())
    }
}

/// A whole number as TOML writes it (counts past i64 stay out of range, as they are).
fn int(n: u64) -> toml::Value {
    toml::Value::Integer(i64::try_from(n).unwrap_or(i64::MAX))
}

/// `--regions N` lowered to `load.regions`.
fn regions_set(n: Option<u32>) -> Vec<Set> {
    n.map(|n| Set::flag("--regions", n, "load.regions", Some(int(u64::from(n)))))
        .into_iter()
        .collect()
}

fn parse_interval(text: &str) -> Result<Duration, String> {
    let d = crate::workload::parse_duration(text)?;
    if d < Duration::from_millis(10) {
        return Err("must be at least 10ms".into());
    }
    Ok(d)
}

/// `tallrow compare`
#[derive(Debug, Args)]
pub struct CompareArgs {
    /// The baseline report folder (one run; or give --baseline).
    #[arg(required_unless_present = "baselines", conflicts_with = "baselines")]
    pub baseline: Option<PathBuf>,
    /// The candidate report folder (one run; or give --candidate).
    #[arg(required_unless_present = "candidates", conflicts_with = "candidates")]
    pub candidate: Option<PathBuf>,
    /// The baseline's runs, one report folder each: three or more let compare judge a change
    /// against the spread between runs.
    #[arg(long = "baseline", value_name = "DIR", num_args = 1.., requires = "candidates")]
    pub baselines: Vec<PathBuf>,
    /// The candidate's runs, one report folder each.
    #[arg(long = "candidate", value_name = "DIR", num_args = 1.., requires = "baselines")]
    pub candidates: Vec<PathBuf>,
    /// Largest regression allowed, e.g. p99=10% or throughput=5% (repeatable).
    #[arg(long, value_name = "METRIC=PERCENT")]
    pub threshold: Vec<crate::report::compare::Threshold>,
    /// Folder the verdict (verdict.json, verdict.md) goes under.
    #[arg(long, value_name = "DIR", default_value = "reports")]
    pub reports: PathBuf,
}

/// `tallrow history`
#[derive(Debug, Args)]
pub struct HistoryArgs {
    /// Report folders, or folders holding them (searched a few levels down), in any order:
    /// runs are ordered by their start.
    #[arg(required = true, value_name = "DIR")]
    pub dirs: Vec<std::path::PathBuf>,
    /// Order runs by this label (`tallrow run --label KEY=VALUE`) or setting (as `threads`)
    /// instead of their start: numbers, versions and dates by value, other values (commits)
    /// in the order each was first run. Runs without it are left out.
    #[arg(long, value_name = "KEY")]
    pub key: Option<String>,
    /// Runs per window of the change-point search (at least 2; Otava's `--window`).
    #[arg(long, default_value_t = 50, value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(2..=100_000))]
    pub window: usize,
    /// The largest p-value of a change point (Otava's `-P`).
    #[arg(long, value_name = "P", default_value_t = 0.001, value_parser = parse_p)]
    pub p_value: f64,
    /// The smallest change of a change point, a share (Otava's `--magnitude`).
    #[arg(long, value_name = "SHARE", default_value_t = 0.0, value_parser = parse_magnitude)]
    pub magnitude: f64,
    /// Gate a CI job: exit 4 where a regression starts within the last K runs (at least
    /// --fail-above large, p at most --p-value over the series searched, not acknowledged).
    #[arg(long, value_name = "K", value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..))]
    pub fail_within: Option<usize>,
    /// The smallest regression that fails the gate, e.g. 5%.
    #[arg(long, value_name = "PERCENT", default_value = "0%", value_parser = parse_percent, requires = "fail_within")]
    pub fail_above: f64,
    /// A file of change points the team has accepted, one a line: RUN OPERATION FIGURE (the
    /// run as its report folder's name); they do not fail the gate.
    #[arg(long, value_name = "FILE", requires = "fail_within")]
    pub acknowledged: Option<std::path::PathBuf>,
    /// Folder the history (history.html, .json, .md, .csv) goes under.
    #[arg(long, value_name = "DIR", default_value = "reports")]
    pub reports: std::path::PathBuf,
}

fn parse_p(text: &str) -> Result<f64, String> {
    match text.parse::<f64>() {
        Ok(p) if p > 0.0 && p <= 1.0 => Ok(p),
        _ => Err("must be a number above 0 and at most 1".into()),
    }
}

fn parse_percent(text: &str) -> Result<f64, String> {
    match text.strip_suffix('%').map(str::parse::<f64>) {
        Some(Ok(p)) if (0.0..=1e6).contains(&p) => Ok(p / 100.0),
        _ => Err("must be a percentage of 0 or more, as 5%".into()),
    }
}

fn parse_magnitude(text: &str) -> Result<f64, String> {
    match text.parse::<f64>() {
        Ok(m) if (0.0..1e6).contains(&m) => Ok(m),
        _ => Err("must be a number of 0 or more (0.05 for 5%)".into()),
    }
}

/// `tallrow report ...`
#[derive(Debug, Subcommand)]
pub enum ReportCommand {
    /// Merge the reports of the shards of one run into one report folder; says which shards
    /// are missing.
    Merge(MergeArgs),
}

/// `tallrow report merge`
#[derive(Debug, Args)]
pub struct MergeArgs {
    /// The shards' report folders, or a folder holding them (searched a few levels down).
    #[arg(required = true, value_name = "DIR")]
    pub dirs: Vec<PathBuf>,
    /// Merge the shards found when some are missing (the merged report names them and is
    /// marked invalid); without it a missing shard is an error.
    #[arg(long)]
    pub partial: bool,
    /// Where to write the merged report (default: reports/NAME-merged-UTC).
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
}

/// `tallrow design ...`
#[derive(Debug, Subcommand)]
pub enum DesignCommand {
    /// Per table: its key segment by segment, a few generated rows read that way, key and
    /// row sizes, rows per region, and a warning where keys send every new write to one end.
    Explain(DesignExplainArgs),
}

/// `tallrow design explain`
#[derive(Debug, Args)]
pub struct DesignExplainArgs {
    /// The workload file, e.g. workloads/quickstart.toml.
    pub workload: PathBuf,
    /// Override a workload field, validated as the file's own (repeatable).
    #[arg(long, value_name = "KEY=VALUE")]
    pub set: Vec<crate::workload::Set>,
    /// Regions each table is split into for the rows-per-region figures (default: the
    /// workload's load.regions).
    #[arg(long, value_name = "N")]
    pub regions: Option<u32>,
    /// Generated rows shown per table.
    #[arg(long, value_name = "N", default_value_t = 3)]
    pub examples: usize,
}

/// `tallrow keys ...`
#[derive(Debug, Subcommand)]
pub enum KeysCommand {
    /// Build a row key from field=value pairs (stamps and times are epoch milliseconds).
    Encode {
        /// A seed layout (actions, weibo-content, blog, blog-index, series), or with --design
        /// a table of that design: TABLE, or TABLE.ROWS for one of several kinds of rows.
        layout: String,
        /// A design file whose tables' keys LAYOUT names (workloads/designs/ holds the seeds').
        #[arg(long, value_name = "FILE")]
        design: Option<PathBuf>,
        /// Field values, e.g. userid=1 stamp=1600000000000 actionid=7.
        #[arg(value_name = "FIELD=VALUE", required = true)]
        fields: Vec<String>,
        /// Key-design variant.
        #[command(flatten)]
        variant: VariantArgs,
    },
    /// Load a workload once per key-design variant, run the same mix on each for the same
    /// time, and report side by side where each variant's writes and reads landed.
    Compare(KeysCompareArgs),
    /// Read a row key given as hex.
    Decode {
        /// A seed layout (actions, weibo-content, blog, blog-index, series), or with --design
        /// a table of that design: TABLE, or TABLE.ROWS for one of several kinds of rows.
        layout: String,
        /// A design file whose tables' keys LAYOUT names (workloads/designs/ holds the seeds').
        #[arg(long, value_name = "FILE")]
        design: Option<PathBuf>,
        /// The key as hex, e.g. 000000017ffffe8b78917fff00000007.
        hex: String,
        /// Key-design variant.
        #[command(flatten)]
        variant: VariantArgs,
    },
}

/// `tallrow keys compare`
#[derive(Debug, Args)]
pub struct KeysCompareArgs {
    /// The workload file, e.g. workloads/actions.toml.
    pub workload: PathBuf,
    /// Backend: embedded:DIR puts each variant in DIR/VARIANT (default: data/NAME-keys/VARIANT);
    /// memory: and null: open a fresh store per variant; hbase:// and bigtable:// load the
    /// variants one after another into the workload's tables, dropping them in between.
    #[arg(long, value_name = "URL")]
    pub backend: Option<String>,
    /// A variant as NAME=SPEC, SPEC being comma-separated settings over the seed layouts:
    /// order=reverse|forward, salt=none|hash|N, each for every design or prefixed with
    /// actions., weibo., blog. or series. for one (e.g. fwd=order=forward,
    /// b32=actions.salt=32); `seed` alone is the seed layouts. Repeatable. Default: seed,
    /// forward, salt-none, salt-hash and salt-16, less those that key this workload's
    /// tables as an earlier one does.
    #[arg(long = "variant", value_name = "NAME=SPEC")]
    pub variants: Vec<String>,
    /// Regions each table is created with (default: the workload's load.regions, or 8 when
    /// that is 1).
    #[arg(long, value_name = "N")]
    pub regions: Option<u32>,
    /// Threads, length, rate and intervals of each variant's run.
    #[command(flatten)]
    pub settings: RunSettings,
    /// On hbase:// or bigtable://, drop the workload's tables first when they exist.
    #[arg(long)]
    pub replace: bool,
    /// Keep the loaded data: every variant's data directory on the embedded store, the last
    /// variant's tables on a remote backend.
    #[arg(long)]
    pub keep: bool,
    /// Folder the comparison folder goes under.
    #[arg(long, value_name = "DIR", default_value = "reports")]
    pub reports: PathBuf,
}

/// The key-design variant; the seed's layout when omitted.
#[derive(Debug, Args)]
pub struct VariantArgs {
    /// Time field order: reverse (MAX - stamp, newest first) or forward.
    #[arg(long)]
    pub order: Option<crate::keys::Order>,
    /// Salt prefix: none, hash (seed 002's hash(id)), or a bucket count 1-256.
    #[arg(long, value_name = "none|hash|N")]
    pub salt: Option<String>,
}

/// Runs a parsed command line.
pub fn run(cli: Cli) -> anyhow::Result<ExitCode> {
    match cli.command {
        Command::Load(args) => load::load(args),
        Command::Verify(args) => verify::verify(args),
        Command::Bulkload(args) => bulkload::bulkload(args),
        Command::Run(args) => run::run(args),
        Command::Drop(args) => drop::drop(args),
        Command::Compare(args) => compare::compare(args),
        Command::History(args) => history::history(args),
        Command::Report(ReportCommand::Merge(args)) => report::merge(args),
        Command::Keys(cmd) => keys::command(cmd),
        Command::Design(DesignCommand::Explain(args)) => design::explain(args),
        Command::Serve(args) => serve::serve(args),
        Command::Sweep(args) => sweep::sweep(args),
        Command::Help(args) => help::print(args.topic.as_deref()),
    }
}

/// Success, or an error that names the runs of an experiment that are invalid.
fn all_valid<'a>(invalid: impl Iterator<Item = &'a str>) -> anyhow::Result<ExitCode> {
    let invalid: Vec<&str> = invalid.collect();
    if !invalid.is_empty() {
        anyhow::bail!("the runs of {} are invalid (see their reports)", invalid.join(", "));
    }
    Ok(ExitCode::SUCCESS)
}
