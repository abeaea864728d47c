//! Faults made by HBase itself while tallrow works through `api=native`, against the
//! two-region-server HBase of scripts/hbase.sh: regions split and moved by HBase's Java Admin
//! (`scripts/hbase.sh chaos`, tests/hbase/src/.../faults/Chaos.java) during a load and during
//! a run, a region server killed with SIGKILL during a load and a run, and what operators do to a
//! cluster: a rolling restart of both region servers (`scripts/hbase.sh graceful`, as
//! HBase's graceful_stop.sh), ZooKeeper stopped for 10 s and the active master killed (its
//! backup takes over) during a run, and the active master killed while a load creates its
//! tables. The client must ride them out: the load completes and verifies, the run's
//! operations do not fail, and both count the retries they made, by kind: the kinds the
//! fault causes.
//!
//! During a load, each fault is made while the load is stopped (SIGSTOP) part-way, its
//! cached region locations in hand, and the load is continued after it: so the fault lands
//! within the load on any machine, however fast, and the client meets it with its next
//! calls. During a run, the faults are made while its operations go on, for 60 s.
//!
//! A killed region server stalls every table it serves, not only this test's: scripts/test.sh
//! runs these tests alone, after the rest of the suite.

use crate::common::{SchemaTables, real_hbase, real_hbase_there};
use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// The table the faults are made on: the quickstart's largest table but one, written from
/// the load's first batch to its last.
const TABLE: &str = "useractions";

fn repo() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn quickstart() -> String {
    repo().join("workloads/quickstart.toml").to_str().unwrap().to_string()
}

fn native_url() -> String {
    real_hbase("TALLROW_HBASE_NATIVE").expect("TALLROW_HBASE_NATIVE")
}

/// The quickstart at 500 users: 94,275 row writes.
const USERS: &str = "data.users=500";

/// Starts `tallrow ARGS` in `dir`, its stdout piped.
fn spawn(dir: &Path, args: &[&str]) -> Child {
    Command::new(env!("CARGO_BIN_EXE_tallrow"))
        .current_dir(dir)
        .env("CI", "1")
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

/// Waits for `child`, returning its exit code, stdout (after what was read of it) and stderr.
fn finish(child: Child, read: &str) -> (i32, String, String) {
    let out = child.wait_with_output().unwrap();
    (
        out.status.code().unwrap_or(-1),
        format!("{read}{}", String::from_utf8_lossy(&out.stdout)),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// `scripts/hbase.sh ARGS`: its stdout, after asserting it succeeded.
fn hbase_sh(args: &[&str]) -> String {
    let out = Command::new(repo().join("scripts/hbase.sh"))
        .current_dir(repo())
        .args(args)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "scripts/hbase.sh {}: {stdout}{}",
        args.join(" "),
        String::from_utf8_lossy(&out.stderr)
    );
    stdout
}

/// The `retries: N (...)` line of a load or run, and N.
fn retries(stdout: &str) -> (u64, String) {
    let line = stdout
        .lines()
        .find(|l| l.starts_with("retries: "))
        .unwrap_or_else(|| panic!("no retries line: the faults were not met:\n{stdout}"));
    let n = line["retries: ".len()..]
        .split(' ')
        .next()
        .unwrap()
        .replace(',', "")
        .parse()
        .unwrap();
    (n, line.to_string())
}

fn verify(dir: &Path, url: &str) {
    let out = crate::common::tallrow(dir, &["verify", &quickstart(), "--set", USERS, "--backend", url]);
    assert_eq!(out.code, 0, "{}{}", out.stdout, out.stderr);
    assert!(
        out.stdout.contains("OK: the store holds exactly the workload's data"),
        "{}",
        out.stdout
    );
}

fn thrift2_url() -> String {
    format!("hbase://{}?api=thrift2", real_hbase("TALLROW_HBASE_THRIFT2").unwrap())
}

/// A load of 943 calls of 100 rows on 2 threads with two calls in flight each, each call
/// slowed by 20 ms: at least 4.7 s, of which the test stops it (SIGSTOP) within the first
/// rows.
fn slow_load(dir: &Path) -> Child {
    load_of_100_row_calls(dir, &format!("delay:20ms:{}", native_url()))
}

/// The quickstart at 500 users loaded through `url` in 943 calls of 100 rows on 2 threads,
/// into 4 regions a table.
fn load_of_100_row_calls(dir: &Path, url: &str) -> Child {
    spawn(
        dir,
        &[
            "load",
            &quickstart(),
            "--set",
            USERS,
            "--backend",
            url,
            "--regions",
            "4",
            "--batch",
            "100",
            "--threads",
            "2",
        ],
    )
}

/// Sends `signal` (`STOP`, `CONT`, `KILL`) to `pid`.
fn signal(pid: u32, signal: &str) {
    let sent = Command::new("kill")
        .args([&format!("-{signal}"), &pid.to_string()])
        .status()
        .unwrap();
    assert!(sent.success(), "kill -{signal} {pid}");
}

/// Waits until `TABLE` holds a row, `child` still running.
fn wait_for_rows(child: &mut Child) {
    let store = tallrow::store::backend::Backend::parse(&native_url(), Path::new("."))
        .unwrap()
        .open()
        .unwrap();
    let scan = tallrow::store::Scan {
        limit: Some(1),
        ..Default::default()
    };
    while !matches!(store.scan(TABLE, &scan), Ok(rows) if !rows.is_empty()) {
        assert!(child.try_wait().unwrap().is_none(), "it ended before a row was seen");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Waits until `TABLE` holds a row, then stops `child` (SIGSTOP) where it is, still running.
fn stop_once_rows_are_in(child: &mut Child) {
    wait_for_rows(child);
    signal(child.id(), "STOP");
    assert!(
        child.try_wait().unwrap().is_none(),
        "it ended before it was stopped: the faults would test nothing"
    );
}

/// The count of the retries whose kind names one of `kinds`, from a `retries:` line.
fn retried_for(line: &str, kinds: &[&str]) -> u64 {
    let inner = line.split_once('(').map_or("", |(_, r)| r.trim_end_matches(')'));
    inner
        .split(", ")
        .filter_map(|kv| kv.rsplit_once(' '))
        .filter(|(kind, _)| kinds.iter().any(|k| kind.contains(k)))
        .map(|(_, n)| n.replace(',', "").parse::<u64>().unwrap())
        .sum()
}

fn regions_of(table: &str) -> usize {
    let store = tallrow::store::backend::Backend::parse(&native_url(), Path::new("."))
        .unwrap()
        .open()
        .unwrap();
    store.regions(table).unwrap().len() + 1
}

#[test]
fn regions_split_and_moved_during_a_load() {
    if !real_hbase_there() {
        return;
    }
    let _turn = SchemaTables::native();
    let dir = tempfile::tempdir().unwrap();
    // The calls in flight when the load is stopped are answered at once, but read only at
    // SIGCONT, a minute or more later: at the default `hbase.rpc.timeout` they would time out,
    // and a timeout forgets every cached region of its server, leaving no stale location for
    // the split and moved regions to correct. The pause is the test's, not the cluster's.
    let url = format!("delay:20ms:{}&hbase.rpc.timeout=600000", native_url());
    let mut load = load_of_100_row_calls(dir.path(), &url);
    stop_once_rows_are_in(&mut load);
    // Splits and moves three times, under the stopped load's cached locations.
    let chaos = hbase_sh(&["chaos", "shuffle", TABLE, "3"]);
    assert!(chaos.contains("splits 3 moves 3"), "{chaos}");
    signal(load.id(), "CONT");
    let (code, stdout, stderr) = finish(load, "");
    assert_eq!(code, 0, "{stdout}{stderr}");
    let (_, line) = retries(&stdout);
    eprintln!("{chaos}{line}");
    assert!(
        retried_for(&line, &["NotServingRegion", "RegionMoved"]) > 0,
        "the load met the split and moved regions: {line}"
    );
    assert_eq!(regions_of(TABLE), 4 + 3, "4 regions, split 3 times:\n{chaos}");
    // What the native client wrote through the faults, read through the gateway.
    verify(dir.path(), &thrift2_url());
}

/// A region server killed (SIGKILL) while a load writes and a run reads: the load is
/// stopped once its rows go in, a run of the quickstart's reads starts beside it, and region
/// server 2, which holds regions of the table, dies without a word. The load completes and
/// verifies; the run's operations wait through the master's recovery of the server's regions
/// and do not fail; each process's observer names the dead server (`server_dead`), and the
/// run's, still going when the server is started again, its return (`server_joined`).
#[test]
fn a_region_server_killed_during_a_load_and_a_run() {
    if !real_hbase_there() {
        return;
    }
    let _turn = SchemaTables::native();
    let dir = tempfile::tempdir().unwrap();
    let mut load = slow_load(dir.path());
    // Once the table holds rows, the load is stopped, and a run of reads starts beside it.
    stop_once_rows_are_in(&mut load);
    let (mut run, read) = start_reads(dir.path());
    let state = std::fs::read_to_string(repo().join(".hbase.env")).unwrap();
    let pid = state
        .lines()
        .find_map(|l| l.strip_prefix("export TALLROW_HBASE_RS2_PID="))
        .expect("region server 2's pid in .hbase.env")
        .trim_matches('\'')
        .to_string();
    let ports = listening_ports(&pid);
    let servers = hbase_sh(&["chaos", "servers", TABLE]);
    let held = servers
        .lines()
        .filter(|l| {
            let server = l.split_whitespace().nth(1).unwrap_or("");
            server
                .split(',')
                .nth(1)
                .is_some_and(|port| ports.contains(&port.to_string()))
        })
        .count();
    assert!(
        held > 0,
        "region server 2 (ports {ports:?}) holds a region of {TABLE}:\n{servers}"
    );
    signal(pid.parse().unwrap(), "KILL");
    signal(load.id(), "CONT");
    let (code, stdout, stderr) = finish(load, "");
    // Two region servers again, whatever the outcome, for what runs after; the run goes on
    // through the server's return.
    hbase_sh(&["regionserver", "2"]);
    let settled = hbase_sh(&["chaos", "settle", "2"]);
    std::thread::sleep(Duration::from_secs(3));
    assert!(
        run.try_wait().unwrap().is_none(),
        "the run ended before the server came back"
    );
    signal(run.id(), "INT");
    let (run_code, run_stdout, run_stderr) = finish(run, &read);
    assert_eq!(code, 0, "{stdout}{stderr}");
    let (_, line) = retries(&stdout);
    eprintln!("region server 2 (pid {pid}, {held} regions of {TABLE}) killed; {line}; {settled}");
    let dead_kinds = ["connection", "timeout", "ServerNotRunning", "RegionServerStopped"];
    assert!(
        retried_for(&line, &dead_kinds) > 0,
        "the load met the dead server: {line}"
    );
    let port = state
        .lines()
        .find_map(|l| l.strip_prefix("export TALLROW_HBASE_RS2_PORT="))
        .expect("region server 2's port in .hbase.env")
        .trim_matches('\'')
        .to_string();
    let dead = |events: &str| {
        events
            .lines()
            .any(|l| l.contains(",server_dead,") && l.contains(&format!("localhost:{port},")))
    };
    // The load's observer saw the master take the server for dead and recover its regions:
    // a server_dead event naming it (by its RPC port) beside the load's manifest, and the
    // load's line counts it.
    let events = std::fs::read_dir(dir.path().join("reports"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.to_string_lossy().ends_with("-events.csv"))
        .unwrap_or_else(|| panic!("the load's events.csv: {stdout}"));
    let events = std::fs::read_to_string(events).unwrap();
    assert!(dead(&events), "region server 2 (localhost:{port}) dead in {events}");
    let cluster = stdout.lines().find(|l| l.starts_with("cluster: ")).unwrap_or("");
    assert!(cluster.contains("1 server lost"), "{stdout}");
    // The run: no operation failed, the dead server was met (and retried), and its report
    // has the server's death and return on its time line.
    assert_eq!(run_code, 0, "{run_stdout}{run_stderr}");
    assert!(!run_stdout.contains(" failed "), "{run_stdout}");
    let (_, run_line) = retries(&run_stdout);
    eprintln!("the run: {run_line}");
    assert!(
        retried_for(&run_line, &dead_kinds) > 0,
        "the run met the dead server: {run_line}"
    );
    let report = report_of(dir.path(), &run_stdout);
    let summary: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(report.join("summary.json")).unwrap()).unwrap();
    assert_eq!(summary["all"]["errors"], 0, "{}", summary["all"]);
    let events = std::fs::read_to_string(report.join("events.csv")).unwrap();
    assert!(
        dead(&events),
        "region server 2 (localhost:{port}) dead in the run's {events}"
    );
    let joined = cluster_state("RS2_PORT");
    assert!(
        events
            .lines()
            .any(|l| l.contains(",server_joined,") && l.contains(&format!(",localhost:{joined},"))),
        "region server 2 (localhost:{joined}) back in the run's {events}"
    );
    let cluster = run_stdout.lines().find(|l| l.starts_with("cluster: ")).unwrap_or("");
    assert!(cluster.contains("1 server lost"), "{run_stdout}");
    verify(dir.path(), &native_url());
}

/// The folder a run's `report: DIR` line names, under `dir`.
fn report_of(dir: &Path, stdout: &str) -> PathBuf {
    dir.join(
        stdout
            .lines()
            .find_map(|l| l.strip_prefix("report: "))
            .unwrap_or_else(|| panic!("the report's folder in {stdout}")),
    )
}

/// Reads `run`'s stdout until it says it is running (or ends): the reader, and what it read.
fn until_running(run: &mut Child) -> (BufReader<std::process::ChildStdout>, String) {
    let mut stdout = BufReader::new(run.stdout.take().unwrap());
    let mut read = String::new();
    while !read.contains("running quickstart against") {
        let mut line = String::new();
        if stdout.read_line(&mut line).unwrap() == 0 {
            break;
        }
        read.push_str(&line);
    }
    (stdout, read)
}

/// Starts a 10-minute run of the quickstart's reads alone (so that `verify` after it checks
/// that the faults lost nothing of the load's), stopped by the test with Ctrl-C (SIGINT);
/// returns it once it measures, with what it printed until then.
fn start_reads(dir: &Path) -> (Child, String) {
    let reads = dir.join("reads.toml");
    let mut workload = std::fs::read_to_string(quickstart()).unwrap();
    workload.push_str(
        "\n[run.mix]\ntimeline = 20\ntimeline_later = 5\nown_posts = 5\nactions_offset = 8\nactions_cursor = 8\n\
         actions_range = 5\nseries_range = 5\nfollowers = 3\nfollowees = 3\ncategory = 5\n",
    );
    std::fs::write(&reads, workload).unwrap();
    let mut run = spawn(
        dir,
        &[
            "run",
            reads.to_str().unwrap(),
            "--set",
            USERS,
            "--set",
            "run.duration=10m",
            "--set",
            "run.warmup=1s",
            "--backend",
            &native_url(),
        ],
    );
    let (stdout, read) = until_running(&mut run);
    // Measuring starts 1 s (the warm-up) after the line.
    std::thread::sleep(Duration::from_secs(1));
    run.stdout = Some(stdout.into_inner());
    (run, read)
}

/// The TCP ports process `pid` listens on (`ss`).
fn listening_ports(pid: &str) -> Vec<String> {
    let out = Command::new("ss").args(["-Htlnp"]).output().expect("ss (iproute2)");
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter(|l| l.contains(&format!("pid={pid},")))
        .filter_map(|l| l.split_whitespace().nth(3)?.rsplit(':').next().map(str::to_string))
        .collect()
}

/// `TALLROW_HBASE_<NAME>` of the running cluster's state (.hbase.env), read now: a restart
/// changes the pids.
fn cluster_state(name: &str) -> String {
    let state = std::fs::read_to_string(repo().join(".hbase.env")).unwrap();
    let prefix = format!("export TALLROW_HBASE_{name}=");
    state
        .lines()
        .find_map(|l| l.strip_prefix(&prefix))
        .unwrap_or_else(|| panic!("{name} in .hbase.env"))
        .trim_matches('\'')
        .to_string()
}

/// The active master: its number in scripts/hbase.sh (1 or 2) and its address, as
/// ZooKeeper names it to a client connecting now.
fn active_master() -> (u32, String) {
    let master = crate::common::raw_client().cluster().master;
    let n = (1..=2)
        .find(|n| cluster_state(&format!("MASTER{n}_PORT")) == master.port.to_string())
        .unwrap_or_else(|| panic!("{} is neither master of .hbase.env", master.addr()));
    (n, master.addr())
}

/// Kills master `n` (SIGKILL), waits until the other one has taken over and answers, and
/// starts `n` again as the backup.
fn fail_over_from(n: u32) {
    signal(cluster_state(&format!("MASTER{n}_PID")).parse().unwrap(), "KILL");
    loop {
        let client = hbase_client::Client::connect(crate::common::raw_registry(), hbase_client::Options::default());
        if let Ok(c) = client
            && c.cluster().master.port.to_string() != cluster_state(&format!("MASTER{n}_PORT"))
            && c.table_names().is_ok()
        {
            break;
        }
        std::thread::sleep(Duration::from_millis(500));
    }
    hbase_sh(&["master", &n.to_string()]);
}

/// Restarts both region servers gracefully, one after the other, then stops ZooKeeper
/// (SIGSTOP) for 10 s; says when each happened (`at`: seconds on the test's time line).
fn rolling_restart_and_stopped_zookeeper(at: &dyn Fn() -> f64, done: &mut Vec<String>) {
    let t = at();
    let restarts = [hbase_sh(&["graceful", "1"]), hbase_sh(&["graceful", "2"])];
    done.push(format!(
        "rolling restart {t:.0}-{:.0} s: {}",
        at(),
        restarts.join("; ").trim()
    ));
    let zk: u32 = cluster_state("ZK_PID").parse().unwrap();
    let t = at();
    signal(zk, "STOP");
    std::thread::sleep(Duration::from_secs(10));
    signal(zk, "CONT");
    done.push(format!("ZooKeeper stopped {t:.0}-{:.0} s", at()));
}

/// A load and a run side by side through what HBase and its operators do to a cluster. The
/// active master is killed while the load's tables are being created (a proxy in front of it
/// holds the first CreateTable, and the master dies with it unanswered), and the backup takes
/// over; once the rows go in, a run of the quickstart's reads starts beside the load; then,
/// one after the other while both go on, both region servers are restarted (each emptied of
/// its regions first), ZooKeeper is stopped for 10 s, the loaded table's regions are split
/// and moved twice, and the active master is killed again. The load creates each table once,
/// goes on to the backup and writes through the rest; the run, of 10 minutes, outlasts the
/// faults and is stopped with Ctrl-C (SIGINT) 5 s after the last, with no failed operation,
/// its retries by kind, the seconds they were met in, and each region server's going and
/// return in its events. `verify` passes after. (Side by side, the two cost the suite one
/// rolling restart, where apart they cost two.)
#[test]
fn a_master_failover_a_rolling_restart_a_stopped_zookeeper_and_splits_during_a_load_and_a_run() {
    if !real_hbase_there() {
        return;
    }
    let _turn = SchemaTables::native();
    let dir = tempfile::tempdir().unwrap();
    let (n, master) = active_master();
    let proxy = crate::proxy::FaultProxy::start(&master);
    proxy.hold_at(b"CreateTable");
    // 943 calls of 100 rows on 2 threads with two calls in flight each, each call slowed
    // by 800 ms: at least 189 s of rows, through which the run starts and the rolling restart
    // and the stopped ZooKeeper (100 to 130 s here) are made; the load ends about when the
    // run's own faults do.
    let url = format!("delay:800ms:{}&connect_to={master}:{}", native_url(), proxy.addr());
    let mut load = load_of_100_row_calls(dir.path(), &url);
    while !proxy.caught() {
        assert!(
            load.try_wait().unwrap().is_none(),
            "the load ended before it created a table"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
    let started = Instant::now();
    let at = || started.elapsed().as_secs_f64();
    let mut done = Vec::new();
    fail_over_from(n);
    proxy.release();
    done.push(format!(
        "master {n} killed with a create in hand at 0 s, the backup active by {:.0} s",
        at()
    ));
    wait_for_rows(&mut load);
    // The quickstart's reads alone: `verify` after checks that the faults lost nothing of
    // what the load wrote.
    let (mut run, read) = start_reads(dir.path());
    done.push(format!("the run measuring from {:.0} s", at()));
    rolling_restart_and_stopped_zookeeper(&at, &mut done);
    assert!(
        load.try_wait().unwrap().is_none(),
        "the load ended before the faults were made: they tested nothing"
    );
    let t = at();
    let chaos = hbase_sh(&["chaos", "shuffle", TABLE, "2"]);
    assert!(chaos.contains("splits 2 moves 2"), "{chaos}");
    done.push(format!("splits and moves {t:.0}-{:.0} s", at()));
    let (n, _) = active_master();
    let t = at();
    fail_over_from(n);
    done.push(format!(
        "master {n} killed at {t:.0} s, the backup active by {:.0} s",
        at()
    ));
    assert!(
        run.try_wait().unwrap().is_none(),
        "the run ended before the faults were made: they tested nothing"
    );
    // Five calm seconds after, then Ctrl-C: the run stops there and reports.
    std::thread::sleep(Duration::from_secs(5));
    signal(run.id(), "INT");
    let (code, stdout, stderr) = finish(run, &read);
    assert_eq!(code, 0, "{stdout}{stderr}");
    let (load_code, load_stdout, load_stderr) = finish(load, "");
    assert_eq!(load_code, 0, "{load_stdout}{load_stderr}");
    let (_, load_line) = retries(&load_stdout);
    let (n, line) = retries(&stdout);
    let disturbed: Vec<&str> = stdout.lines().filter(|l| l.starts_with("disturbed")).collect();
    eprintln!(
        "{chaos}{}\nload: {load_line}\nrun: {line}\n{}",
        done.join("\n"),
        disturbed.join("\n")
    );

    // The load met the dead master, then the restarts.
    assert!(
        retried_for(&load_line, &["connection", "timeout"]) > 0,
        "the load met the dead master: {load_line}"
    );
    assert!(
        retried_for(&load_line, &["NotServingRegion", "RegionMoved", "RegionServerStopped"]) > 0,
        "the load met the restarts: {load_line}"
    );

    // The run failed nothing, and its report says what it met and when.
    assert!(!stdout.contains(" failed "), "{stdout}");
    let report = report_of(dir.path(), &stdout);
    let summary: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(report.join("summary.json")).unwrap()).unwrap();
    assert_eq!(summary["all"]["errors"], 0, "{}", summary["all"]);
    assert_eq!(summary["stopped_early"], true);
    assert!(
        retried_for(&line, &["NotServingRegion", "RegionMoved"]) > 0,
        "the run met the restarted, split and moved regions: {line}"
    );
    for op in summary["ops"].as_array().unwrap() {
        assert_eq!(op["errors_by_kind"], serde_json::json!({}), "{op}");
    }
    let counted: u64 = summary["retries"]
        .as_object()
        .expect("the report counts retries by kind")
        .values()
        .map(|v| v.as_u64().unwrap())
        .sum();
    assert_eq!(counted, n, "the report's retries by kind add up to the line's");
    // The run's observer saw each region server go and come back: the master's recovery of
    // it (server_dead) and its return (server_joined), each naming it by its RPC port.
    let events = std::fs::read_to_string(report.join("events.csv")).unwrap();
    for rs in [1, 2] {
        let port = cluster_state(&format!("RS{rs}_PORT"));
        for kind in ["server_dead", "server_joined"] {
            assert!(
                events
                    .lines()
                    .any(|l| l.contains(&format!(",{kind},")) && l.contains(&format!(",localhost:{port},"))),
                "{kind} of region server {rs} (localhost:{port}) in {events}"
            );
        }
    }
    let spans = summary["disturbed"].as_array().expect("the report's disturbed seconds");
    assert!(!spans.is_empty() && !disturbed.is_empty(), "{stdout}");
    let in_spans: u64 = spans.iter().map(|d| d["retries"].as_u64().unwrap()).sum();
    assert!(in_spans <= n, "retries in the spans {in_spans} > the run's {n}");
    assert!(spans.iter().all(|d| d["errors"] == 0), "{spans:?}");
    verify(dir.path(), &native_url());
}

/// The tables under `prefix`, each region's primary moved to the server on port `to` and
/// its secondary to the other one (`away`), and each one's location waited for in meta.
fn primaries_on(prefix: &str, to: u16, away: u16) {
    let client = crate::common::raw_client();
    let tables: Vec<String> = client
        .table_names()
        .unwrap()
        .into_iter()
        .filter(|t| t.contains(prefix))
        .collect();
    assert!(!tables.is_empty(), "no table under {prefix}");
    let deadline = Instant::now() + Duration::from_secs(120);
    loop {
        let regions: Vec<_> = tables.iter().flat_map(|t| client.regions(t).unwrap()).collect();
        let servers: Vec<hbase_client::zk::ServerName> = client
            .cluster_status()
            .unwrap()
            .live
            .into_iter()
            .map(|s| s.name)
            .collect();
        let named = |port: u16| servers.iter().find(|n| n.port == port).cloned();
        let mut placed = true;
        for r in &regions {
            let secondary = r.replicas.first();
            let (p, s) = (
                r.server.as_ref().map(|s| s.port),
                secondary.and_then(|s| s.server.as_ref()).map(|s| s.port),
            );
            if (p, s) == (Some(to), Some(away)) {
                continue;
            }
            placed = false;
            let (Some(to), Some(away)) = (named(to), named(away)) else {
                continue;
            };
            // A secondary on the server its primary goes to makes way first; where HBase
            // will not have both on one server for a while, the primary goes first.
            if let Some(secondary) = secondary
                && s == Some(to.port)
                && client.move_region(&secondary.name, &away).is_ok()
            {
                continue;
            }
            if p != Some(to.port) {
                let _ = client.move_region(&r.name, &to);
            }
            if let Some(secondary) = secondary
                && s != Some(away.port)
            {
                let _ = client.move_region(&secondary.name, &away);
            }
        }
        if placed {
            return;
        }
        assert!(Instant::now() < deadline, "regions of {tables:?} not placed in 120 s");
        std::thread::sleep(Duration::from_millis(500));
    }
}

/// One run of home-timeline reads through region server `n` stopped (SIGSTOP) for 30 s:
/// the run's stdout and its `summary.json`.
fn timeline_run_through_a_stopped_server(dir: &Path, n: u32, consistency: &str) -> (String, serde_json::Value) {
    let reads = dir.join("timeline.toml");
    let mut workload = std::fs::read_to_string(quickstart()).unwrap();
    workload.push_str("\n[run.mix]\ntimeline = 1\n");
    std::fs::write(&reads, workload).unwrap();
    let consistency = format!("run.consistency={consistency}");
    let mut run = spawn(
        dir,
        &[
            "run",
            reads.to_str().unwrap(),
            "--set",
            USERS,
            "--set",
            "storage.table_prefix=replicas_",
            "--set",
            &consistency,
            "--set",
            "run.threads=4",
            "--set",
            "run.duration=50s",
            "--set",
            "run.warmup=2s",
            "--backend",
            &native_url(),
        ],
    );
    let (mut stdout, read) = until_running(&mut run);
    assert!(read.contains("running quickstart against"), "{read}");
    std::thread::sleep(Duration::from_secs(7));
    let pid: u32 = cluster_state(&format!("RS{n}_PID")).parse().unwrap();
    signal(pid, "STOP");
    std::thread::sleep(Duration::from_secs(30));
    signal(pid, "CONT");
    let mut rest = String::new();
    stdout.read_to_string(&mut rest).unwrap();
    let (code, out, err) = finish(run, &(read + &rest));
    assert_eq!(code, 0, "{out}{err}");
    let summary = std::fs::read_to_string(report_of(dir, &out).join("summary.json")).unwrap();
    (out, serde_json::from_str(&summary).unwrap())
}

/// Region replicas through a lost region server. The quickstart's tables are loaded with
/// two copies of each region, every primary then moved to the region server that does not
/// hold `hbase:meta` and every secondary to the one that does; that server is stopped
/// (SIGSTOP) for 30 s, longer than its 20 s ZooKeeper session, during a run of home-timeline
/// reads: the master declares it dead and reopens its regions on the other, and once
/// continued it ends itself. With TIMELINE reads the run fails nothing and every second has
/// answers, stale ones while the primaries are silent; the same run with STRONG reads
/// stalls: seconds with no answer, which its report names.
#[test]
fn timeline_reads_answer_through_a_stopped_region_server_where_strong_ones_stall() {
    if !real_hbase_there() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let client = crate::common::raw_client();
    // What a failed try left.
    for t in client.table_names().unwrap() {
        if t.contains("replicas_") {
            client.delete_table(&t).unwrap();
        }
    }
    let load = spawn(
        dir.path(),
        &[
            "load",
            &quickstart(),
            "--set",
            USERS,
            "--set",
            "storage.region_replication=2",
            "--set",
            "storage.table_prefix=replicas_",
            "--backend",
            &native_url(),
        ],
    );
    let (code, stdout, stderr) = finish(load, "");
    assert_eq!(code, 0, "{stdout}{stderr}");
    let tables: Vec<String> = client
        .table_names()
        .unwrap()
        .into_iter()
        .filter(|t| t.contains("replicas_"))
        .collect();
    // The secondaries see what is flushed (within the servers' 1 s refresh).
    for t in &tables {
        client.flush_table(t).unwrap();
    }
    let mut figures = Vec::new();
    for consistency in ["timeline", "strong"] {
        let meta = crate::common::raw_client().cluster().meta.port;
        let (n, port) = (1..=2)
            .map(|n| (n, cluster_state(&format!("RS{n}_PORT")).parse::<u16>().unwrap()))
            .find(|(_, p)| *p != meta)
            .expect("a region server without hbase:meta");
        primaries_on("replicas_", port, meta);
        let (stdout, summary) = timeline_run_through_a_stopped_server(dir.path(), n, consistency);
        // Two region servers again for what follows.
        hbase_sh(&["regionserver", &n.to_string()]);
        hbase_sh(&["chaos", "settle", "2"]);
        let all = &summary["all"];
        let per_second: Vec<f64> = all["interval_ops_per_s"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_f64().unwrap())
            .collect();
        let silent = per_second.iter().filter(|&&x| x == 0.0).count();
        let silent_s: f64 = summary["disturbed"]
            .as_array()
            .unwrap()
            .iter()
            .map(|d| d["silent_s"].as_f64().unwrap())
            .sum();
        let stale = all["timeline"]["stale"].as_u64();
        figures.push(format!(
            "{consistency}: {} answers, {} errors, {silent} seconds with none (report: {silent_s} s), p99 {} ns, max {} ns, stale {stale:?}",
            all["count"], all["errors"], all["response"]["p99"], all["response"]["max"]
        ));
        eprintln!("{}\n{stdout}", figures.last().unwrap());
        assert_eq!(
            silent as f64, silent_s,
            "the report counts the silent seconds: {stdout}"
        );
        if consistency == "timeline" {
            assert_eq!(all["errors"], 0, "{stdout}");
            assert_eq!(silent, 0, "an answer every second: {per_second:?}\n{stdout}");
            assert!(
                stale.unwrap() > 0,
                "stale answers while the primaries were silent: {stdout}"
            );
            assert!(stdout.contains("timeline reads (stale: "), "{stdout}");
        } else {
            assert!(silent >= 10, "the stall: {per_second:?}\n{stdout}");
            assert!(stdout.contains("s with no answer"), "{stdout}");
            assert_eq!(stale, None, "{stdout}");
        }
        assert!(stdout.contains(&format!("{consistency} reads")), "{stdout}");
        assert!(stdout.contains("2 copies of each region"), "{stdout}");
    }
    eprintln!("{}", figures.join("\n"));
    for t in &tables {
        client.delete_table(t).unwrap();
    }
}
