//! `tallrow load --resume`: a load killed with SIGKILL part-way is continued from its
//! journal, skips the blocks the store acknowledged, writes again at most the blocks in
//! flight, and ends with the data, counts and digest of a load that never stopped; a resume
//! of another load is refused in one line naming the difference.
//!
//! The store is slowed by the `delay:` layer so that the kill lands part-way on any machine:
//! the test waits until the journal records a few acknowledged blocks, then kills.

use crate::common::{SAMPLE, SchemaTables, real_hbase, small_fixture, tallrow};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use tallrow::load::journal::{self, File};

fn quickstart() -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("workloads/quickstart.toml")
        .display()
        .to_string()
}

/// The digest and row writes of `wl` (with `sets` changing its data), from a load that
/// never stopped.
fn whole(cwd: &Path, wl: &str, sets: &[&str]) -> (String, u64) {
    let mut args = vec!["load", wl, "--backend", "null:", "--reports", "whole"];
    args.extend(sets);
    let out = tallrow(cwd, &args);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let m = manifest_in(&cwd.join("whole"));
    (
        m["rows_digest"].as_str().unwrap().to_string(),
        m["total"]["row_writes"].as_u64().unwrap(),
    )
}

/// The newest load manifest in `reports`.
fn manifest_in(reports: &Path) -> serde_json::Value {
    let mut all: Vec<PathBuf> = std::fs::read_dir(reports)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    all.sort();
    let newest = all.last().expect("a load manifest");
    serde_json::from_slice(&std::fs::read(newest).unwrap()).unwrap()
}

/// Starts `tallrow load ARGS` in `cwd`, waits until its journal records at least `acked`
/// acknowledged blocks, and kills it with SIGKILL; returns the journal as it was left.
fn kill_part_way(cwd: &Path, args: &[&str], acked: u64) -> File {
    kill_when(cwd, args, |j| j.acked() >= acked)
}

/// Starts `tallrow load ARGS` in `cwd`, waits until its journal is as `ready` wants, and
/// kills it with SIGKILL; returns the journal as it was left.
fn kill_when(cwd: &Path, args: &[&str], ready: impl Fn(&File) -> bool) -> File {
    let mut child = Command::new(env!("CARGO_BIN_EXE_tallrow"))
        .current_dir(cwd)
        .env("CI", "1")
        .arg("load")
        .args(args)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let path = cwd.join("reports/load.journal");
    loop {
        if let Ok(Some(j)) = journal::read(&path)
            && ready(&j)
        {
            break;
        }
        if let Some(status) = child.try_wait().unwrap() {
            let mut err = String::new();
            std::io::Read::read_to_string(child.stderr.as_mut().unwrap(), &mut err).unwrap();
            panic!("the load ended ({status}) before its journal was as the test waits for: {err}");
        }
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    child.kill().unwrap();
    child.wait().unwrap();
    journal::read(&path).unwrap().expect("the journal stays")
}

/// Resumes with `args`, then checks what the manifest says it took over and that the
/// counts and digest are those of a load that never stopped.
fn resume_and_check(cwd: &Path, args: &[&str], left: &File, threads: u64, sets: &[&str]) {
    assert!(left.acked() < left.header.blocks_total, "killed part-way: {left:?}");
    let bound = threads * (tallrow::load::MAX_PENDING as u64 + 1);
    assert!(
        left.in_flight() <= bound,
        "{} in flight, at most {bound}",
        left.in_flight()
    );
    resumed(cwd, args, left, sets);
}

/// Resumes with `args` (the workload first); checks that the manifest says what it took
/// over and wrote again (the blocks in flight), and that the counts and digest are those of
/// a whole load. Returns the resumed load's manifest.
fn resumed(cwd: &Path, args: &[&str], left: &File, sets: &[&str]) -> serde_json::Value {
    let (digest, row_writes) = whole(cwd, args[0], sets);
    let plan = cwd.join("reports/load.plan");
    assert!(plan.exists(), "the killed load kept the followers it counted");
    let mut all = vec!["load"];
    all.extend_from_slice(args);
    all.push("--resume");
    let out = tallrow(cwd, &all);
    assert_eq!(out.code, 0, "{}\n{}", out.stdout, out.stderr);
    assert!(out.stdout.contains("resumed the unfinished load"), "{}", out.stdout);
    assert!(
        out.stdout.contains("s reading the followers counted before"),
        "{}",
        out.stdout
    );
    assert!(
        !cwd.join("reports/load.journal").exists() && !plan.exists(),
        "a complete load removes its journal and its plan"
    );
    let m = manifest_in(&cwd.join("reports"));
    let r = &m["resumed"];
    assert_eq!(r["from_blocks"].as_u64(), Some(left.acked()), "{r}");
    assert_eq!(r["in_flight"].as_u64(), Some(left.in_flight()), "{r}");
    // Written again: exactly the blocks in flight (for a batch load, at most the blocks
    // each worker may hold unacknowledged).
    assert_eq!(r["rewritten"].as_u64(), Some(left.in_flight()), "{r}");
    assert_eq!(m["status"], "complete");
    assert_eq!(m["blocks_done"], m["blocks_total"]);
    assert_eq!(m["rows_digest"].as_str(), Some(digest.as_str()));
    assert_eq!(m["total"]["row_writes"].as_u64(), Some(row_writes));
    m
}

/// Every HFile of a directory's manifest, by path: what it holds, all but its length (its
/// file info records when it was written).
fn hfiles_of(dir: &Path) -> std::collections::BTreeMap<String, serde_json::Value> {
    let m: serde_json::Value = serde_json::from_slice(&std::fs::read(dir.join("bulkload.json")).unwrap()).unwrap();
    let mut out = std::collections::BTreeMap::new();
    for t in m["tables"].as_array().unwrap() {
        for f in t["files"].as_array().unwrap() {
            let mut f = f.clone();
            f.as_object_mut().unwrap().remove("bytes");
            out.insert(f["path"].as_str().unwrap().to_string(), f);
        }
    }
    out
}

/// The committed files a journal's checkpoint lists.
fn checkpointed_files(j: &File) -> Vec<String> {
    let files = &j.bulk.as_ref().expect("a bulk checkpoint")["files"];
    files
        .as_object()
        .map(|t| {
            t.values()
                .flat_map(|fs| fs.as_array().unwrap().iter())
                .map(|f| f["path"].as_str().unwrap().to_string())
                .collect()
        })
        .unwrap_or_default()
}

/// An hfile: load killed while it stages its rows resumes from its last checkpoint; killed
/// again while it writes its files, it keeps those its checkpoint lists and writes the rest.
/// Each time it ends with the counts and digest of a load that never stopped, and its files
/// hold what a whole load's hold.
#[test]
fn a_killed_hfile_load_resumes_from_its_checkpoints() {
    let tmp = tempfile::tempdir().unwrap();
    let cwd = tmp.path();
    let wl = quickstart();
    let bigger = ["--set", "data.users=8000", "--regions", "24", "--threads", "2"];
    let whole_dir = cwd.join("whole-hfiles");
    let target = format!("hfile:{}", whole_dir.display());
    let mut all = vec![
        "load",
        wl.as_str(),
        "--backend",
        target.as_str(),
        "--reports",
        "whole-reports",
    ];
    all.extend(bigger);
    let out = tallrow(cwd, &all);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let expected = hfiles_of(&whole_dir);

    let dir = cwd.join("hfiles");
    let target = format!("hfile:{}", dir.display());
    let mut args = vec![wl.as_str(), "--backend", target.as_str(), "--checkpoint-every", "100ms"];
    args.extend(bigger);

    // Killed while staging: blocks acknowledged by a checkpoint, no file written yet.
    let left = kill_when(cwd, &args, |j| j.acked() >= 8);
    assert!(left.acked() < left.header.blocks_total, "killed part-way: {left:?}");
    assert!(checkpointed_files(&left).is_empty(), "{:?}", left.bulk);
    let runs = left.bulk.as_ref().unwrap()["runs"]["dir"].as_str().unwrap().to_string();
    assert!(Path::new(&runs).is_dir(), "the checkpoint's runs stay");
    resumed(cwd, &args, &left, &bigger[..2]);
    assert_eq!(hfiles_of(&dir), expected);
    assert!(!Path::new(&runs).exists(), "a complete load removes its runs");

    // Killed while writing its files: those its checkpoint lists are kept as they are.
    let mut again = args.clone();
    again.push("--replace");
    let left = kill_when(cwd, &again, |j| j.bulk.is_some() && !checkpointed_files(j).is_empty());
    assert_eq!(left.acked(), left.header.blocks_total, "every block staged: {left:?}");
    let kept = checkpointed_files(&left);
    assert!(
        kept.len() < expected.len(),
        "killed with files left to write: {} of {} written",
        kept.len(),
        expected.len()
    );
    let stamp = |p: &str| std::fs::metadata(dir.join(p)).unwrap().modified().unwrap();
    let before: Vec<_> = kept.iter().map(|p| stamp(p)).collect();
    std::thread::sleep(std::time::Duration::from_millis(20));
    let m = resumed(cwd, &args, &left, &bigger[..2]);
    assert_eq!(m["resumed"]["from_blocks"], m["blocks_total"], "{}", m["resumed"]);
    let after: Vec<_> = kept.iter().map(|p| stamp(p)).collect();
    assert_eq!(before, after, "the files the checkpoint lists are not written again");
    assert_eq!(hfiles_of(&dir), expected);
    let local = tallrow::bulkload::fs::Dir::Local(dir.clone());
    let temporaries = tallrow::bulkload::manifest::temporaries_in(&local).unwrap();
    assert!(temporaries.is_empty(), "{temporaries:?}");
}

#[test]
fn a_killed_row_by_row_load_resumes_and_verifies() {
    let tmp = tempfile::tempdir().unwrap();
    let cwd = tmp.path();
    let db = cwd.join("db");
    let slow = format!("delay:20ms:embedded:{}", db.display());
    let wl = quickstart();
    let args = ["--backend", slow.as_str(), "--no-bulk", "--threads", "2"];
    let all: Vec<&str> = [wl.as_str()].into_iter().chain(args).collect();
    let left = kill_part_way(cwd, &all, 4);

    // Another load is refused, in one line, and the journal stays as it was.
    let other_db = format!("delay:20ms:embedded:{}", cwd.join("other").display());
    let small = small_fixture().display().to_string();
    for (what, args, says) in [
        (
            "workload",
            vec![small.as_str(), "--backend", &slow, "--no-bulk"],
            "is of workload quickstart, not small",
        ),
        (
            "data",
            vec![wl.as_str(), "--backend", &slow, "--no-bulk", "--set", "data.users=4000"],
            "of other data",
        ),
        (
            "shard count",
            vec![wl.as_str(), "--backend", &slow, "--no-bulk", "--shard", "1/2"],
            "shard 1/1 of another shard count, not 1/2",
        ),
        (
            "target",
            vec![wl.as_str(), "--backend", &other_db, "--no-bulk"],
            "/db, not embedded (fjall 3) at",
        ),
    ] {
        let mut all = vec!["load"];
        all.extend(args);
        all.push("--resume");
        let out = tallrow(cwd, &all);
        assert_ne!(out.code, 0, "{what}");
        assert!(out.stderr.contains(says), "{what}: {}", out.stderr);
        assert!(out.stderr.contains("reports/load.journal"), "{what}: {}", out.stderr);
        assert_eq!(out.stderr.trim().lines().count(), 1, "{what}: {}", out.stderr);
        assert_eq!(
            journal::read(&cwd.join("reports/load.journal")).unwrap().as_ref(),
            Some(&left)
        );
    }

    // The rest through the same store without the `delay:` layer, which only let the kill
    // land part-way (it is not part of where the data goes).
    let db = format!("embedded:{}", db.display());
    let fast = [wl.as_str(), "--backend", db.as_str(), "--no-bulk", "--threads", "2"];
    resume_and_check(cwd, &fast, &left, 2, &[]);
    let out = tallrow(cwd, &["verify", &wl, "--backend", &db, "--sample", SAMPLE]);
    assert_eq!(out.code, 0, "{}\n{}", out.stdout, out.stderr);
    assert!(out.stdout.contains("OK: the store holds exactly"), "{}", out.stdout);
}

/// A load stopped with Ctrl-C (SIGINT) while it writes sends no more batches, waits for those
/// in flight, journals what was acknowledged, says in one line how far it got and how to go
/// on, and exits 130; a resume through
/// the same store without the `delay:` layer (which is not part of where the data goes)
/// writes the rest and verifies.
#[test]
fn a_load_stopped_with_ctrl_c_resumes_without_its_delay_and_verifies() {
    let tmp = tempfile::tempdir().unwrap();
    let cwd = tmp.path();
    let db = format!("embedded:{}", cwd.join("db").display());
    let slow = format!("delay:20ms:{db}");
    let wl = quickstart();
    let mut child = Command::new(env!("CARGO_BIN_EXE_tallrow"))
        .current_dir(cwd)
        .env("CI", "1")
        .args(["load", &wl, "--backend", &slow, "--no-bulk", "--threads", "2"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let path = cwd.join("reports/load.journal");
    while !journal::read(&path).is_ok_and(|j| j.is_some_and(|j| j.acked() >= 4)) {
        assert!(child.try_wait().unwrap().is_none(), "it ended before it was stopped");
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    let sent = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(sent.success());
    let out = child.wait_with_output().unwrap();
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    assert_eq!(out.status.code(), Some(130), "{stdout}{stderr}");
    assert!(stderr.contains("SIGINT: the load sends no more batches"), "{stderr}");
    let said = stderr
        .lines()
        .find(|l| l.contains("the load stopped after"))
        .unwrap_or_else(|| panic!("{stderr}"));
    assert!(said.contains(&format!("`tallrow load {wl} --resume`")), "{said}");
    let left = journal::read(&path).unwrap().expect("the journal stays");
    // It stopped where it was: at most the blocks each worker had in hand are left to write
    // again, as after a crash.
    assert!(left.acked() < left.header.blocks_total, "stopped part-way: {left:?}");
    assert!(
        left.in_flight() <= 2 * (tallrow::load::MAX_PENDING as u64 + 1),
        "{left:?}"
    );
    assert_eq!(manifest_in(&cwd.join("reports"))["status"], "stopped");
    resumed(cwd, &[wl.as_str(), "--backend", &db, "--no-bulk"], &left, &[]);
    let out = tallrow(cwd, &["verify", &wl, "--backend", &db, "--sample", SAMPLE]);
    assert_eq!(out.code, 0, "{}\n{}", out.stdout, out.stderr);
    assert!(out.stdout.contains("OK: the store holds exactly"), "{}", out.stdout);
}

#[test]
fn a_killed_load_through_thrift2_resumes_and_verifies() {
    let Some(addr) = real_hbase("TALLROW_HBASE_THRIFT2") else {
        return;
    };
    let _turn = SchemaTables::thrift2();
    let tmp = tempfile::tempdir().unwrap();
    let cwd = tmp.path();
    let url = format!("hbase://{addr}?api=thrift2");
    let slow = format!("delay:10ms:{url}");
    // Twelve blocks of 256 users, each a few hundred calls of 10 ms: a worker acknowledges
    // a block once it holds two more, so the journal (written every 100 ms) shows two
    // acknowledged blocks seconds before the load's end.
    let wl = crate::common::hbase_fixture().display().to_string();
    let users = ["--set", "data.users=3000"];
    let all = [
        wl.as_str(),
        "--backend",
        slow.as_str(),
        "--threads",
        "2",
        "--checkpoint-every",
        "100ms",
        users[0],
        users[1],
    ];
    let left = kill_part_way(cwd, &all, 2);
    // The rest without the `delay:` layer, which only let the kill land part-way.
    let mut fast = all;
    fast[2] = url.as_str();
    resume_and_check(cwd, &fast, &left, 2, &users);
    let out = tallrow(
        cwd,
        &["verify", &wl, "--backend", &url, users[0], users[1], "--sample", SAMPLE],
    );
    assert_eq!(out.code, 0, "{}\n{}", out.stdout, out.stderr);
}

/// A load that completes removes its journal; one that starts over an unfinished load's
/// journal says it replaced it.
#[test]
fn a_fresh_load_replaces_an_unfinished_ones_journal() {
    let tmp = tempfile::tempdir().unwrap();
    let cwd = tmp.path();
    let slow = format!("delay:20ms:embedded:{}", cwd.join("db").display());
    let wl = quickstart();
    let all = [wl.as_str(), "--backend", slow.as_str(), "--no-bulk", "--threads", "2"];
    kill_part_way(cwd, &all, 2);
    let fast = format!("embedded:{}", cwd.join("db").display());
    // The loads after it at one block of users: what they say of the journal is the test.
    let one_block = "data.users=256";
    let out = tallrow(cwd, &["load", &wl, "--backend", &fast, "--no-bulk", "--set", one_block]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(out.stderr.contains("is replaced: pass --resume"), "{}", out.stderr);
    assert!(!cwd.join("reports/load.journal").exists());
    let out = tallrow(
        cwd,
        &[
            "load",
            &wl,
            "--backend",
            &fast,
            "--no-bulk",
            "--resume",
            "--set",
            one_block,
        ],
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(out.stderr.contains("no unfinished load"), "{}", out.stderr);
}
