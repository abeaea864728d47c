//! What the benches that drive the binary share: loads, the generator's rows dumped for
//! other clients' loaders, and action pages by cursor.

#![allow(dead_code)]

use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;
use std::time::Instant;
use tallrow::generate::{Generator, Scratch, Sink, Table};
use tallrow::run::{Ctx, ops};
use tallrow::schema::{
    self,
    actions::{self, Actions},
};
use tallrow::stats::{self, Summary};
use tallrow::store::{Get, Mutation, RowMutation, Store};
use tallrow::workload::Workload;

/// The binary under measurement.
pub const BIN: &str = env!("CARGO_BIN_EXE_tallrow");

/// What these benches take: `[WORKLOAD] --python PATH [--samples N]`. `None` when run
/// without `--bench`, as `cargo test --all-targets` does: nothing to measure then.
pub struct Args {
    pub workload: PathBuf,
    pub python: PathBuf,
    pub samples: usize,
}

impl Args {
    /// `python_needs` names what the Python must have installed, for the error.
    pub fn parse(workload: &str, samples: usize, python_needs: &str) -> Option<Args> {
        if !std::env::args().any(|a| a == "--bench") {
            return None;
        }
        let mut args = std::env::args().skip(1).filter(|a| a != "--bench");
        let (mut w, mut python, mut samples) = (PathBuf::from(workload), None, samples);
        while let Some(a) = args.next() {
            match a.as_str() {
                "--python" => python = args.next().map(PathBuf::from),
                "--samples" => samples = args.next().and_then(|v| v.parse().ok()).expect("--samples N: a number"),
                other => w = PathBuf::from(other),
            }
        }
        let python = python.unwrap_or_else(|| panic!("--python PATH: a Python with {python_needs} installed"));
        Some(Args {
            workload: w,
            python,
            samples,
        })
    }
}

/// Row writes and row writes/s from `tallrow load`'s summary line (the rows in the tables are
/// not counted: `--no-count`).
pub fn load(workload: &Path, backend: &str, reports: &Path) -> (u64, f64) {
    load_with(workload, backend, reports, &[])
}

/// [`load`] with more flags.
pub fn load_with(workload: &Path, backend: &str, reports: &Path, flags: &[&str]) -> (u64, f64) {
    let out = Command::new(BIN)
        .arg("load")
        .arg(workload)
        .args(["--no-count", "--backend", backend, "--reports"])
        .arg(reports)
        .args(flags)
        .output()
        .expect("run tallrow load");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "tallrow load {backend} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let total = text
        .lines()
        .find(|l| l.starts_with("total"))
        .unwrap_or_else(|| panic!("no total line in {text}"));
    let fields: Vec<&str> = total.split_whitespace().collect();
    let number = |s: &str| s.replace(',', "").parse::<f64>().unwrap();
    // total, row writes, rows in table ("-"), cells, MiB, row writes/s
    (number(fields[1]) as u64, number(fields[5]))
}

/// Writes every generated row as scripts/rows_dump.py reads it (the format is documented there).
pub struct Dump<W: Write> {
    out: W,
    rows: u64,
}

fn put_bytes<W: Write>(w: &mut W, len_width: usize, b: &[u8]) -> std::io::Result<()> {
    match len_width {
        2 => w.write_all(&(b.len() as u16).to_le_bytes())?,
        _ => w.write_all(&(b.len() as u32).to_le_bytes())?,
    }
    w.write_all(b)
}

impl<W: Write> Sink for Dump<W> {
    fn row(&mut self, table: Table, row: RowMutation) -> schema::Result<()> {
        let w = &mut self.out;
        let mut write = || -> std::io::Result<()> {
            w.write_all(&[table.index() as u8])?;
            put_bytes(w, 4, &row.row)?;
            w.write_all(&(row.mutations.len() as u32).to_le_bytes())?;
            for m in &row.mutations {
                let Mutation::Put {
                    family,
                    qualifier,
                    timestamp,
                    value,
                } = m
                else {
                    panic!("the generator only puts");
                };
                put_bytes(w, 2, family.as_bytes())?;
                put_bytes(w, 4, qualifier)?;
                w.write_all(&timestamp.unwrap_or(i64::MIN).to_le_bytes())?;
                put_bytes(w, 4, value)?;
            }
            Ok(())
        };
        write().expect("write the dump");
        self.rows += 1;
        Ok(())
    }
}

/// Dumps every row `g` generates to `path`; returns the number of rows.
pub fn dump(g: &Generator, path: &Path) -> u64 {
    let mut out = BufWriter::new(std::fs::File::create(path).unwrap());
    let tables = g.tables();
    out.write_all(&(g.all_tables().len() as u32).to_le_bytes()).unwrap();
    for &t in g.all_tables() {
        let desc = tables.iter().find(|d| d.name == t.name());
        put_bytes(&mut out, 2, t.name().as_bytes()).unwrap();
        let families = desc.map_or(&[][..], |d| d.families.as_slice());
        out.write_all(&(families.len() as u16).to_le_bytes()).unwrap();
        for f in families {
            put_bytes(&mut out, 2, f.name.as_bytes()).unwrap();
            out.write_all(&f.max_versions.to_le_bytes()).unwrap();
        }
    }
    let mut d = Dump { out, rows: 0 };
    let mut scratch = Scratch::default();
    for block in 0..g.blocks() {
        g.emit_block(block, &mut scratch, &mut d).unwrap();
    }
    d.out.flush().unwrap();
    d.rows
}

/// A round trip (`version`), then pages of 10 and 100 actions by cursor from `starts`; the
/// first pass warms caches and connections.
pub fn measure_pages(store: Arc<dyn Store>, w: &Workload, starts: &[(i32, Vec<u8>)], samples: usize) -> Vec<Summary> {
    // The reference: one call that does no work, a round trip (getClusterId via serve).
    let mut trip = stats::histogram();
    for _ in 0..samples {
        let t = Instant::now();
        std::hint::black_box(store.version());
        stats::record(&mut trip, t.elapsed().as_nanos() as u64);
    }
    let dao = Actions::new(store, w.keys.actions);
    let sizes = [10usize, 100];
    let mut hist: Vec<_> = sizes.iter().map(|_| stats::histogram()).collect();
    // A first pass warms caches and connections.
    for pass in 0..2 {
        for i in 0..samples {
            let (uid, cursor) = &starts[i % starts.len()];
            for (h, &size) in hist.iter_mut().zip(&sizes) {
                let t = Instant::now();
                let n = dao.page_after(*uid, Some(cursor), size).unwrap().items.len();
                let ns = t.elapsed().as_nanos() as u64;
                assert_eq!(n, size);
                if pass == 1 {
                    stats::record(h, ns);
                }
            }
        }
    }
    std::iter::once(&trip).chain(&hist).map(Summary::of).collect()
}

/// Users with at least 200 actions, each read from a cursor a quarter of the way in.
pub fn paging_starts(store: Arc<dyn Store>, g: Arc<Generator>, w: &Workload) -> Vec<(i32, Vec<u8>)> {
    paging_starts_of(store, g, w, 200, usize::MAX)
}

/// [`paging_starts`] over users with at least `min` actions, at most `most` of them.
pub fn paging_starts_of(
    store: Arc<dyn Store>,
    g: Arc<Generator>,
    w: &Workload,
    min: usize,
    most: usize,
) -> Vec<(i32, Vec<u8>)> {
    let ctx = Ctx::new(store, g.clone(), &g.workload().run).unwrap();
    let mut scratch = ops::Scratch::new(0);
    (1..=w.data.users)
        .filter_map(|u| {
            let keys = ctx.action_keys(u, &mut scratch);
            (keys.len() >= min).then(|| (u as i32, keys[keys.len() / 4].clone()))
        })
        .take(most)
        .collect()
}

/// Dumps the rows of `w` to `tmp/rows.bin` for another client's loader, checking that they
/// are the `rows` tallrow loaded; returns the file.
pub fn dump_rows(w: &Workload, tmp: &Path, rows: u64) -> PathBuf {
    let rows_file = tmp.join("rows.bin");
    if !rows_file.exists() {
        let dumped = dump(&Generator::new(w), &rows_file);
        assert_eq!(dumped, rows, "the dump holds the loaded rows");
    }
    rows_file
}

/// Checks with `tallrow verify` that `url` holds exactly `workload`'s data, after `what`.
pub fn verify(workload: &Path, url: &str, what: &str) {
    let out = Command::new(BIN)
        .arg("verify")
        .arg(workload)
        .args(["--backend", url])
        .output()
        .expect("run tallrow verify");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success() && text.contains("OK: the store holds exactly"),
        "after {what}, verify: {text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Drops `tables` wherever they are (a missing one is fine).
pub fn drop_tables(store: &dyn Store, tables: &[String]) {
    for t in tables {
        let _ = store.delete_table(t);
    }
}

/// Runs another client's loader (`cmd --dump FILE` or however `cmd` takes it), which prints
/// `rows N cells N [calls N] seconds S`; returns its rows/s and calls (0 where it has no
/// count of them).
pub fn external_load(cmd: Command, rows: u64) -> (f64, u64) {
    let out = external_run(cmd, rows);
    (out.rate, out.field("calls").unwrap_or(0.0) as u64)
}

/// What another client's loader printed, and its rate.
pub struct ExternalRun {
    /// Rows/s.
    pub rate: f64,
    text: String,
}

impl ExternalRun {
    /// The number after `name` in what it printed.
    pub fn field(&self, name: &str) -> Option<f64> {
        let mut it = self.text.split_whitespace();
        it.position(|t| t == name)?;
        it.next()?.parse().ok()
    }
}

/// [`external_load`], with everything the loader printed.
pub fn external_run(mut cmd: Command, rows: u64) -> ExternalRun {
    let out = cmd.output().unwrap_or_else(|e| panic!("run {cmd:?}: {e}"));
    assert!(
        out.status.success(),
        "{cmd:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let run = ExternalRun {
        rate: 0.0,
        text: String::from_utf8_lossy(&out.stdout).into_owned(),
    };
    let got = run.field("rows").unwrap_or_else(|| panic!("no rows in {}", run.text));
    assert_eq!(got as u64, rows);
    let seconds = run
        .field("seconds")
        .unwrap_or_else(|| panic!("no seconds in {}", run.text));
    ExternalRun {
        rate: got / seconds,
        ..run
    }
}

/// The CPU time (user + system) of this process's children that ended since [`start`]:
/// `cutime` and `cstime` of /proc/self/stat, in the kernel's fixed 100 ticks a second.
///
/// [`start`]: ChildCpu::start
pub struct ChildCpu(f64);

impl ChildCpu {
    fn now() -> f64 {
        let stat = std::fs::read_to_string("/proc/self/stat").expect("/proc/self/stat");
        // Fields after the command's closing parenthesis, from field 3 (state) on.
        let rest = &stat[stat.rfind(')').expect("a stat line") + 2..];
        let f: Vec<&str> = rest.split_whitespace().collect();
        // cutime and cstime are fields 16 and 17: 13 and 14 after the state.
        let ticks: u64 = f[13].parse::<u64>().unwrap() + f[14].parse::<u64>().unwrap();
        ticks as f64 / 100.0
    }

    /// Starts counting.
    pub fn start() -> ChildCpu {
        ChildCpu(Self::now())
    }

    /// Seconds of CPU the children that ended since the start used.
    pub fn seconds(&self) -> f64 {
        Self::now() - self.0
    }
}

/// The median of some figures and their range.
#[derive(Debug, Clone, Copy)]
pub struct Spread {
    /// The median (of an even count, the mean of the middle two).
    pub median: f64,
    /// The least.
    pub min: f64,
    /// The greatest.
    pub max: f64,
}

impl Spread {
    /// Of at least one figure.
    pub fn of(figures: impl IntoIterator<Item = f64>) -> Spread {
        let mut v: Vec<f64> = figures.into_iter().collect();
        assert!(!v.is_empty(), "no figures");
        v.sort_by(f64::total_cmp);
        let n = v.len();
        let median = if n % 2 == 1 {
            v[n / 2]
        } else {
            (v[n / 2 - 1] + v[n / 2]) / 2.0
        };
        Spread {
            median,
            min: v[0],
            max: v[n - 1],
        }
    }
}

/// HBase's Java client on the bench classpath (`scripts/hbase.sh java`), running
/// tests/hbase/src/.../bench/Native.java.
pub fn java() -> Command {
    let mut cmd = Command::new("scripts/hbase.sh");
    cmd.args(["java", "dev.tallrow.bench.Native"]);
    cmd
}

/// HBase's own write reference: rows/s of `PerformanceEvaluation --nomapred sequentialWrite 1`.
pub fn performance_evaluation(rows: u64, value_size: u64, table: &str) -> f64 {
    let out = Command::new("scripts/hbase.sh")
        .args(["java", "org.apache.hadoop.hbase.PerformanceEvaluation", "--nomapred"])
        .arg(format!("--rows={rows}"))
        .arg(format!("--valueSize={value_size}"))
        .arg(format!("--table={table}"))
        .args(["sequentialWrite", "1"])
        .output()
        .expect("run PerformanceEvaluation");
    let log = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "PerformanceEvaluation failed: {log}");
    // "Finished TestClient-0 in 737ms over 20000 rows"
    let line = log
        .lines()
        .find(|l| l.contains("Finished TestClient-0 in "))
        .unwrap_or_else(|| panic!("no result in PerformanceEvaluation's log: {log}"));
    let words: Vec<&str> = line.split_whitespace().collect();
    let at = words.iter().position(|w| *w == "in").unwrap();
    let ms: f64 = words[at + 1].trim_end_matches("ms").parse().unwrap();
    let done: f64 = words[at + 3].parse().unwrap();
    assert_eq!(done as u64, rows, "{line}");
    done / (ms / 1000.0)
}

/// Home timelines of a page of posts for `users` in turn, `samples` of them after as many to
/// warm caches and connections: their latencies, and the round trips per page `trips`
/// (a backend's counter) says the measured pass took.
pub fn time_timelines(
    dao: &tallrow::schema::microblog::Microblog,
    users: &[u64],
    samples: usize,
    trips: &dyn Fn() -> u64,
) -> (Summary, f64) {
    let mut h = stats::histogram();
    let mut counted = 0;
    for pass in 0..2 {
        let before = trips();
        for i in 0..samples {
            let t = Instant::now();
            let n = dao.timeline(users[i % users.len()], ops::PAGE, None).unwrap().len();
            let ns = t.elapsed().as_nanos() as u64;
            assert_eq!(n, ops::PAGE);
            if pass == 1 {
                stats::record(&mut h, ns);
            }
        }
        counted = trips() - before;
    }
    (Summary::of(&h), counted as f64 / samples as f64)
}

/// What the generator emits: rows, cells and bytes of values.
#[derive(Default)]
pub struct RowSize {
    /// Rows.
    pub rows: u64,
    /// Cells put.
    pub cells: u64,
    /// Bytes of the values put.
    pub value_bytes: u64,
}

impl Sink for RowSize {
    fn row(&mut self, _: Table, row: RowMutation) -> schema::Result<()> {
        self.rows += 1;
        for m in &row.mutations {
            if let Mutation::Put { value, .. } = m {
                self.cells += 1;
                self.value_bytes += value.len() as u64;
            }
        }
        Ok(())
    }
}

impl RowSize {
    /// Of everything `g` generates.
    pub fn of(g: &Generator) -> RowSize {
        let mut size = RowSize::default();
        let mut scratch = Scratch::default();
        for block in 0..g.blocks() {
            g.emit_block(block, &mut scratch, &mut size).unwrap();
        }
        size
    }
}

/// The Java client's get of each start's cursor row and pages of 10 and 100 actions after
/// it, from the same starts as [`gets`] and [`measure_pages`]: `[get, 10, 100]`.
pub fn java_pages(w: &Workload, starts: &[(i32, Vec<u8>)], samples: usize, tmp: &Path) -> [Summary; 3] {
    let file = starts_file(w, starts, tmp);
    let out = java()
        .arg("pages")
        .arg(&file)
        .args([actions::TABLE, actions::FAMILY])
        .arg(String::from_utf8_lossy(actions::QUALIFIER).as_ref())
        .arg(samples.to_string())
        .output()
        .expect("run the Java reader");
    assert!(
        out.status.success(),
        "the Java reader failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    page_summaries(&String::from_utf8_lossy(&out.stdout))
}

/// The starts, as the Java reader takes them: "CURSOR STOP" per line, in hex.
fn starts_file(w: &Workload, starts: &[(i32, Vec<u8>)], tmp: &Path) -> PathBuf {
    let hex = |b: &[u8]| b.iter().map(|x| format!("{x:02x}")).collect::<String>();
    let mut lines = String::new();
    for (uid, cursor) in starts {
        let mut prefix = Vec::new();
        tallrow::keys::actions::user_prefix(w.keys.actions, *uid, &mut prefix);
        lines.push_str(&format!(
            "{} {}\n",
            hex(cursor),
            hex(&tallrow::keys::next_prefix(&prefix))
        ));
    }
    let file = tmp.join("starts.txt");
    std::fs::write(&file, lines).unwrap();
    file
}

/// The Java reader's times of gets and of pages of 10 and 100 rows.
fn page_summaries(text: &str) -> [Summary; 3] {
    let kind = |kind: &str| -> Summary {
        let line = text
            .lines()
            .find(|l| l.split_whitespace().next() == Some(kind))
            .unwrap_or_else(|| panic!("no {kind} line from the Java reader: {text}"));
        let mut h = stats::histogram();
        for ns in line.split_whitespace().skip(1) {
            stats::record(&mut h, ns.parse().unwrap());
        }
        Summary::of(&h)
    };
    [kind("get"), kind("10"), kind("100")]
}

/// Dumps the rows of `w` and times a plain Python loader writing them (`script ARGS --dump
/// FILE`); returns its rows/s and calls.
pub fn python_load(python: &Path, script: &str, args: &[&str], w: &Workload, tmp: &Path, rows: u64) -> (f64, u64) {
    let rows_file = dump_rows(w, tmp, rows);
    let mut cmd = Command::new(python);
    cmd.arg(script).args(args).arg("--dump").arg(&rows_file);
    external_load(cmd, rows)
}

/// The reference for pages: a get of one row (each start's cursor row); the first pass warms
/// caches and connections.
pub fn gets(store: &dyn Store, starts: &[(i32, Vec<u8>)], samples: usize) -> Summary {
    let mut hist = stats::histogram();
    for pass in 0..2 {
        gets_pass(store, starts, samples, (pass == 1).then_some(&mut hist));
    }
    Summary::of(&hist)
}

/// p50 of a 1-row get ([`gets`]) and of a 10-row page of actions by cursor, each measured
/// after a first, unrecorded pass that warms the block cache.
pub fn get_and_page_p50(store: Arc<dyn Store>, w: &Workload, starts: &[(i32, Vec<u8>)], samples: usize) -> (u64, u64) {
    let get = gets(&*store, starts, samples).p50;
    let mut h = stats::histogram();
    for pass in 0..2 {
        pages_pass(&store, w, starts, samples, (pass == 1).then_some(&mut h));
    }
    (get, Summary::of(&h).p50)
}

/// `samples` pages of 10 actions by cursor, recorded into `h` when given.
pub fn pages_pass(
    store: &Arc<dyn Store>,
    w: &Workload,
    starts: &[(i32, Vec<u8>)],
    samples: usize,
    mut h: Option<&mut stats::Histogram>,
) {
    let dao = Actions::new(store.clone(), w.keys.actions);
    for i in 0..samples {
        let (uid, cursor) = &starts[i % starts.len()];
        let t = Instant::now();
        let n = dao.page_after(*uid, Some(cursor), 10).unwrap().items.len();
        let ns = t.elapsed().as_nanos() as u64;
        assert_eq!(n, 10);
        if let Some(h) = h.as_deref_mut() {
            stats::record(h, ns);
        }
    }
}

/// `samples` 1-row gets of the starts' cursor rows, recorded into `h` when given.
pub fn gets_pass(store: &dyn Store, starts: &[(i32, Vec<u8>)], samples: usize, mut h: Option<&mut stats::Histogram>) {
    for i in 0..samples {
        let get = [Get::new(starts[i % starts.len()].1.clone())];
        let t = Instant::now();
        let found = store.get(actions::TABLE, &get).unwrap();
        let ns = t.elapsed().as_nanos() as u64;
        assert!(found[0].is_some(), "the cursor row exists");
        if let Some(h) = h.as_deref_mut() {
            stats::record(h, ns);
        }
    }
}

/// What the benches of rounds over HBase take: `WORKLOAD [--regions N] [--rounds N]
/// [--samples N]`. `None` when run without `--bench`, as `cargo test --all-targets` does.
pub struct RoundsArgs {
    pub workload: PathBuf,
    pub regions: usize,
    pub rounds: usize,
    pub samples: usize,
    /// Any other `--flag`, for the bench to read.
    pub flags: Vec<String>,
}

impl RoundsArgs {
    pub fn parse() -> Option<RoundsArgs> {
        if !std::env::args().any(|a| a == "--bench") {
            return None;
        }
        let mut a = RoundsArgs {
            workload: PathBuf::from("workloads/capacity.toml"),
            regions: 4,
            rounds: 3,
            samples: 2000,
            flags: Vec::new(),
        };
        let mut it = std::env::args().skip(1).filter(|x| x != "--bench");
        while let Some(x) = it.next() {
            let mut num = |what: &str| -> usize {
                it.next()
                    .and_then(|v| v.parse().ok())
                    .unwrap_or_else(|| panic!("{what}: a number"))
            };
            match x.as_str() {
                "--regions" => a.regions = num("--regions"),
                "--rounds" => a.rounds = num("--rounds"),
                "--samples" => a.samples = num("--samples"),
                f if f.starts_with("--") => a.flags.push(f.to_string()),
                w => a.workload = PathBuf::from(w),
            }
        }
        Some(a)
    }
}

/// The median and range of `f` over the rounds.
pub fn spread<R>(rounds: &[R], f: impl Fn(&R) -> f64) -> (f64, f64, f64) {
    let mut v: Vec<f64> = rounds.iter().map(f).collect();
    v.sort_by(|a, b| a.total_cmp(b));
    (v[v.len() / 2], v[0], v[v.len() - 1])
}

/// HBase's Java client at its best, for the loads' reference: one JVM (`Native serve`) that
/// holds the dumped rows in memory and stays warm between loads, timing only the writes.
pub struct JavaLoader {
    child: std::process::Child,
    input: std::process::ChildStdin,
    output: std::io::BufReader<std::process::ChildStdout>,
    rows: u64,
}

/// The Java loader's configurations tried: writer threads and write buffer (MB). HBase's
/// default buffer is 2 MB.
pub const JAVA_CONFIGS: [(u32, u32); 6] = [(1, 2), (1, 8), (2, 2), (2, 8), (4, 2), (4, 8)];

impl JavaLoader {
    /// Starts it on `dump`, which holds `rows` rows, and waits until it holds them.
    pub fn start(dump: &Path, rows: u64) -> JavaLoader {
        use std::io::BufRead;
        let mut child = java()
            .arg("serve")
            .arg(dump)
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .spawn()
            .expect("start the Java loader");
        let input = child.stdin.take().unwrap();
        let mut output = std::io::BufReader::new(child.stdout.take().unwrap());
        let mut line = String::new();
        output.read_line(&mut line).unwrap();
        assert_eq!(line.trim(), format!("ready {rows}"), "the Java loader holds the rows");
        JavaLoader {
            child,
            input,
            output,
            rows,
        }
    }

    fn ask(&mut self, command: &str, until: &dyn Fn(&str) -> bool) -> String {
        use std::io::BufRead;
        writeln!(self.input, "{command}").unwrap();
        self.input.flush().unwrap();
        let mut text = String::new();
        loop {
            let mut line = String::new();
            assert!(
                self.output.read_line(&mut line).unwrap() > 0,
                "the Java loader ended at {command}: {text}"
            );
            assert!(!line.starts_with("error"), "{line}");
            text.push_str(&line);
            if until(&line) {
                return text;
            }
        }
    }

    /// Loads every row into the (empty) tables with `threads` writers and a write buffer of
    /// `buffer_mb`: rows/s and the JVM's CPU seconds while writing.
    pub fn load(&mut self, threads: u32, buffer_mb: u32) -> (f64, f64) {
        let text = self.ask(&format!("load {threads} {buffer_mb}"), &|l| l.starts_with("rows "));
        let run = ExternalRun { rate: 0.0, text };
        assert_eq!(run.field("rows").unwrap() as u64, self.rows);
        let rate = self.rows as f64 / run.field("seconds").unwrap();
        (rate, run.field("cpu").unwrap())
    }

    /// [`java_pages`] in this JVM.
    pub fn pages(&mut self, w: &Workload, starts: &[(i32, Vec<u8>)], samples: usize, tmp: &Path) -> [Summary; 3] {
        let file = starts_file(w, starts, tmp);
        let text = self.ask(
            &format!(
                "pages {} {} {} {} {samples}",
                file.display(),
                actions::TABLE,
                actions::FAMILY,
                String::from_utf8_lossy(actions::QUALIFIER)
            ),
            &|l| l.trim() == "done",
        );
        page_summaries(&text)
    }
}

impl Drop for JavaLoader {
    fn drop(&mut self) {
        let _ = writeln!(self.input, "quit");
        let _ = self.input.flush();
        let _ = self.child.wait();
    }
}
