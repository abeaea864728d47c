//! The load journal: which blocks of a load the store has acknowledged, so that
//! `tallrow load --resume` continues a load that died instead of starting it over.
//!
//! A block is acknowledged when every row it generated is in a batch the store
//! acknowledged. Each worker takes blocks in increasing order and holds the rows of a few in
//! its batches; the blocks below the oldest one it still holds are acknowledged (see
//! `Writer::ack` in the parent module). The journal keeps them as a prefix (every block
//! below it) and the few above it, with what they wrote (rows, cells, bytes per table, and
//! the sum of their block digests) so that a resumed load ends with the counts and digest of
//! one that never stopped. A writer thread rewrites the file whole (a temporary file renamed
//! over it) at most once a second while anything changed; a complete load removes it, a
//! failed one leaves it for `--resume`.
//!
//! A load through a bulk load that can be resumed (`hfile:`) acknowledges nothing when its
//! rows are staged: the blocks wait until a checkpoint ([`Journal::checkpoint`]) made the
//! staged rows durable, and the journal keeps the checkpoint's state with them, which the
//! resumed load hands back to the store (`Store::resume_bulk_load`).
//!
//! The file is `REPORTS/load.journal` (`load-shard-<i>.journal` for shard i > 1 of N), beside
//! the load manifests: one per shard index, so that a resume names what differs when the
//! workload, its data, the shard count or the target is not the journal's.

use super::{Shard, TableStats};
use crate::generate::Table;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::{Condvar, Mutex};
use std::time::Duration;

/// What identifies one load: a resume must match it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Header {
    /// The workload's name.
    pub workload: String,
    /// The digest of its data settings.
    pub data_digest: String,
    /// `i/N`.
    pub shard: String,
    /// The target, as the store names itself.
    pub target: String,
    /// Blocks of the shard.
    pub blocks_total: u64,
}

/// The journal file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct File {
    /// The load.
    #[serde(flatten)]
    pub header: Header,
    /// The process writing it.
    pub pid: u32,
    /// When it was last written (UTC).
    pub updated: String,
    /// Blocks taken by the workers so far (indices below this were started).
    pub claimed: u64,
    /// Every block below this is acknowledged.
    pub acked_below: u64,
    /// Acknowledged blocks above `acked_below`.
    pub acked_above: Vec<u64>,
    /// The sum (wrapping) of the acknowledged blocks' digests, as 32 hex digits.
    pub digest: String,
    /// What the acknowledged blocks wrote, per table.
    pub tables: BTreeMap<String, Written>,
    /// A bulk load's last checkpoint: where its staged rows and written files are.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bulk: Option<serde_json::Value>,
}

/// What acknowledged blocks wrote into one table.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Written {
    /// Row mutations.
    pub rows: u64,
    /// Cells.
    pub cells: u64,
    /// Bytes.
    pub bytes: u64,
}

impl File {
    /// Acknowledged blocks.
    pub fn acked(&self) -> u64 {
        self.acked_below + self.acked_above.len() as u64
    }

    /// Blocks taken but not acknowledged: what a resume writes again.
    pub fn in_flight(&self) -> u64 {
        self.claimed.saturating_sub(self.acked())
    }
}

/// The journal's path under `reports` for `shard`: by the shard's index alone (a whole
/// load is shard 1), so that a resume with another shard count finds the journal and says so.
pub fn path(reports: &Path, shard: Shard) -> PathBuf {
    if shard.index == 0 {
        reports.join("load.journal")
    } else {
        reports.join(format!("load-shard-{}.journal", shard.index + 1))
    }
}

/// Where the load whose journal is at `journal` keeps its plan (the followers it counted,
/// [`crate::generate::Plan::write`]) for a resume to read: `load.plan` beside `load.journal`.
pub fn plan_path(journal: &Path) -> PathBuf {
    journal.with_extension("plan")
}

/// Keeps `g`'s plan beside the journal at `journal` (written whole under a temporary name,
/// then renamed), unless it was read from there. A plan that cannot be written only costs
/// a resume the time to count again.
pub fn keep_plan(journal: &Path, g: &crate::generate::Generator) {
    if g.plan_read() {
        return;
    }
    let path = plan_path(journal);
    let tmp = path.with_extension("plan.tmp");
    let written = std::fs::File::create(&tmp).and_then(|f| {
        let mut out = std::io::BufWriter::with_capacity(1 << 16, f);
        g.plan().write(&g.workload().data_digest(), &mut out)?;
        std::io::Write::flush(&mut out)
    });
    if written.and_then(|()| std::fs::rename(&tmp, &path)).is_err() {
        let _ = std::fs::remove_file(&tmp);
        let _ = std::fs::remove_file(&path);
    }
}

/// Reads the journal at `path`, if there is one.
pub fn read(path: &Path) -> Result<Option<File>, String> {
    match std::fs::read(path) {
        Ok(bytes) => serde_json::from_slice(&bytes)
            .map(Some)
            .map_err(|e| format!("{}: not a load journal: {e}", path.display())),
        Err(e)
            if matches!(
                e.kind(),
                std::io::ErrorKind::NotFound | std::io::ErrorKind::NotADirectory
            ) =>
        {
            Ok(None)
        }
        Err(e) => Err(format!("{}: {e}", path.display())),
    }
}

/// Whether process `pid` runs (another load writing the journal): it exists and is not a
/// zombie (a killed load whose parent has not reaped it yet).
fn alive(pid: u32) -> bool {
    if pid == std::process::id() {
        return false;
    }
    let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
        return false;
    };
    // `PID (COMMAND) STATE ...`: the command may hold spaces and parentheses.
    let state = stat
        .rsplit_once(')')
        .and_then(|(_, rest)| rest.split_whitespace().next());
    !matches!(state, Some("Z" | "X") | None)
}

/// What a load starts from: nothing, or the journal of the one it resumes.
#[derive(Debug, Clone, Default)]
pub struct Start {
    /// The journal resumed.
    pub from: Option<File>,
    /// A line to print first (the journal of an unfinished load was set aside, or there
    /// was none to resume).
    pub note: Option<String>,
    /// The unfinished load set aside: what it staged can go.
    pub replaced: Option<File>,
}

/// Opens the journal at `path` for the load `header`: with `resume`, the unfinished load
/// it records, which must be the same load (refused in one line naming the difference);
/// without, a fresh start. A journal another running load writes is refused either way.
pub fn start(path: &Path, header: &Header, resume: bool) -> Result<Start, String> {
    let old = read(path)?;
    if let Some(o) = &old
        && alive(o.pid)
    {
        return Err(format!(
            "{} is the journal of a load still running (pid {}): wait for it, or stop it first",
            path.display(),
            o.pid
        ));
    }
    if !resume {
        return Ok(Start {
            from: None,
            replaced: old.clone(),
            note: old.map(|o| {
                format!(
                    "the unfinished load of {} in {} ({} of {} blocks acknowledged) is replaced: pass --resume to continue one",
                    o.header.workload,
                    path.display(),
                    o.acked(),
                    o.header.blocks_total
                )
            }),
        });
    }
    let Some(o) = old else {
        return Ok(Start {
            from: None,
            note: Some(format!(
                "--resume: no unfinished load in {}: loading from the first block",
                path.display()
            )),
            replaced: None,
        });
    };
    let (h, was) = (header, &o.header);
    let differs = if h.workload != was.workload {
        Some(format!("of workload {}, not {}", was.workload, h.workload))
    } else if h.data_digest != was.data_digest {
        Some(format!(
            "of other data (digest {}, not {}: the workload's data settings changed)",
            was.data_digest, h.data_digest
        ))
    } else if h.shard.split('/').nth(1) != was.shard.split('/').nth(1) {
        Some(format!("shard {} of another shard count, not {}", was.shard, h.shard))
    } else if h.shard != was.shard {
        Some(format!("of shard {}, not {}", was.shard, h.shard))
    } else if h.target != was.target {
        Some(format!("into {}, not {}", was.target, h.target))
    } else if h.blocks_total != was.blocks_total {
        Some(format!("of {} blocks, not {}", was.blocks_total, h.blocks_total))
    } else {
        None
    };
    if let Some(d) = differs {
        return Err(format!(
            "--resume: the unfinished load in {} is {d}: resume it with its own settings, or load without --resume to start over",
            path.display()
        ));
    }
    Ok(Start {
        from: Some(o),
        note: None,
        replaced: None,
    })
}

/// A bulk load's checkpoint: `force` takes one now, otherwise it may answer `None` (not
/// yet); `Some` is the state to journal, everything staged before the call being durable.
pub type Checkpointer<'a> = &'a (dyn Fn(bool) -> Result<Option<serde_json::Value>, String> + Sync);

/// A block whose rows are staged, acknowledged at the next checkpoint.
type Staged = (u64, u128, Vec<TableStats>);

/// The acknowledged blocks.
#[derive(Debug, Default)]
struct Acked {
    below: u64,
    above: BTreeSet<u64>,
    claimed: u64,
    digest: u128,
    /// Per table, at its [`Table::index`].
    tables: Vec<TableStats>,
    /// Blocks are staged, acknowledged by checkpoints.
    staging: bool,
    staged: Vec<Staged>,
    bulk: Option<serde_json::Value>,
    /// Changed since last written.
    dirty: bool,
}

impl Acked {
    fn ack(&mut self, k: u64, digest: u128, wrote: &[TableStats]) {
        if k < self.below || !self.above.insert(k) {
            return;
        }
        while self.above.remove(&self.below) {
            self.below += 1;
        }
        self.digest = self.digest.wrapping_add(digest);
        if self.tables.len() < wrote.len() {
            self.tables.resize(wrote.len(), TableStats::default());
        }
        for (t, w) in self.tables.iter_mut().zip(wrote) {
            t.rows += w.rows;
            t.cells += w.cells;
            t.bytes += w.bytes;
        }
        self.dirty = true;
    }
}

/// A running load's journal.
pub struct Journal {
    path: PathBuf,
    header: Header,
    tables: Vec<Table>,
    state: Mutex<Acked>,
    /// Set when the load ends: the writer thread writes a last time and stops.
    ended: Mutex<bool>,
    wake: Condvar,
    /// One checkpoint at a time.
    checkpointing: Mutex<()>,
}

impl Journal {
    /// The journal of a load of `tables` (a design's, in its order), `header` at `path`,
    /// continuing `from` where given.
    pub fn new(path: PathBuf, header: Header, from: Option<&File>, tables: &[Table]) -> Journal {
        let mut state = Acked {
            dirty: true,
            tables: vec![TableStats::default(); tables.len()],
            ..Acked::default()
        };
        if let Some(f) = from {
            state.below = f.acked_below;
            state.above = f.acked_above.iter().copied().collect();
            state.claimed = f.claimed;
            state.bulk.clone_from(&f.bulk);
            state.digest = u128::from_str_radix(&f.digest, 16).unwrap_or(0);
            for &t in tables {
                if let Some(w) = f.tables.get(t.name()) {
                    state.tables[t.index()] = TableStats {
                        rows: w.rows,
                        cells: w.cells,
                        bytes: w.bytes,
                    };
                }
            }
        }
        Journal {
            path,
            header,
            tables: tables.to_vec(),
            state: Mutex::new(state),
            ended: Mutex::new(false),
            wake: Condvar::new(),
            checkpointing: Mutex::new(()),
        }
    }

    /// From now on a block [`Journal::ack`]ed waits for the next [`Journal::checkpoint`]:
    /// its rows are staged by a bulk load (whose first checkpoint is `state`), not yet
    /// durable.
    pub fn staging(&self, state: serde_json::Value) {
        let mut s = self.state.lock().expect("journal lock");
        s.staging = true;
        s.bulk = Some(state);
        s.dirty = true;
    }

    /// Takes a checkpoint through `cp` (forced or not): the blocks staged before it are
    /// acknowledged with the state it returns, and the journal is written at once. Where
    /// it takes none, or fails, they wait for the next.
    pub fn checkpoint(&self, cp: Checkpointer, force: bool) -> Result<(), String> {
        let _alone = self.checkpointing.lock().unwrap_or_else(|e| e.into_inner());
        let staged = std::mem::take(&mut self.state.lock().expect("journal lock").staged);
        let taken = cp(force);
        let mut s = self.state.lock().expect("journal lock");
        match taken {
            Ok(Some(state)) => {
                for (k, digest, wrote) in &staged {
                    s.ack(*k, *digest, wrote);
                }
                if s.bulk.as_ref() != Some(&state) {
                    s.bulk = Some(state);
                    s.dirty = true;
                }
                drop(s);
                self.write()
                    .map_err(|e| format!("cannot write the load journal {}: {e}", self.path.display()))
            }
            Ok(None) => {
                s.staged.extend(staged);
                Ok(())
            }
            Err(e) => {
                s.staged.extend(staged);
                Err(e)
            }
        }
    }

    /// Whether block `k` (the k-th of the shard) was acknowledged.
    pub fn done(&self, k: u64) -> bool {
        let s = self.state.lock().expect("journal lock");
        k < s.below || s.above.contains(&k)
    }

    /// Records that the workers have taken every block below `k`.
    pub fn claimed(&self, k: u64) {
        let mut s = self.state.lock().expect("journal lock");
        if k > s.claimed {
            s.claimed = k;
            s.dirty = true;
        }
    }

    /// Records block `k` as acknowledged, with its digest and what it wrote.
    /// While [`Journal::staging`], it waits for the next checkpoint.
    pub fn ack(&self, k: u64, digest: u128, wrote: &[TableStats]) {
        let mut s = self.state.lock().expect("journal lock");
        if s.staging {
            s.staged.push((k, digest, wrote.to_vec()));
        } else {
            s.ack(k, digest, wrote);
        }
    }

    /// The file as it stands.
    fn snapshot(&self) -> Option<File> {
        let mut s = self.state.lock().expect("journal lock");
        if !s.dirty {
            return None;
        }
        s.dirty = false;
        let tables = self
            .tables
            .iter()
            .filter(|t| s.tables.get(t.index()).is_some_and(|w| *w != TableStats::default()))
            .map(|t| {
                let w = s.tables[t.index()];
                (
                    t.name().to_string(),
                    Written {
                        rows: w.rows,
                        cells: w.cells,
                        bytes: w.bytes,
                    },
                )
            })
            .collect();
        Some(File {
            header: self.header.clone(),
            pid: std::process::id(),
            updated: crate::date::iso(crate::store::now_millis()),
            claimed: s.claimed.max(s.below),
            acked_below: s.below,
            acked_above: s.above.iter().copied().collect(),
            digest: format!("{:032x}", s.digest),
            tables,
            bulk: s.bulk.clone(),
        })
    }

    /// Writes the journal when it changed: whole, or not at all.
    pub fn write(&self) -> std::io::Result<()> {
        let Some(f) = self.snapshot() else { return Ok(()) };
        if let Some(dir) = self.path.parent() {
            std::fs::create_dir_all(dir)?;
        }
        let tmp = self.path.with_extension("journal.tmp");
        let text = serde_json::to_string_pretty(&f).map_err(std::io::Error::other)? + "\n";
        std::fs::write(&tmp, text)?;
        std::fs::rename(&tmp, &self.path)
    }

    /// Writes the journal every `period` (at most a second) until [`Journal::end`], then
    /// once more, taking the bulk load's checkpoints through `cp` where there is one: a
    /// checkpoint interval under a second is kept only if the writer wakes that often. A
    /// journal that cannot be written stops nothing: the load goes on, and says so once.
    pub fn keep(&self, cp: Option<Checkpointer>, period: Duration) {
        let period = period.clamp(Duration::from_millis(1), Duration::from_secs(1));
        let mut said = false;
        let mut ended = self.ended.lock().expect("journal lock");
        loop {
            let stop = *ended;
            drop(ended);
            if let Some(cp) = cp
                && !stop
                && let Err(e) = self.checkpoint(cp, false)
                && !said
            {
                eprintln!(
                    "tallrow: cannot checkpoint the bulk load: {e} (the load goes on, but a resume would start further back)"
                );
                said = true;
            }
            if let Err(e) = self.write()
                && !said
            {
                eprintln!(
                    "tallrow: cannot write the load journal {}: {e} (the load goes on, but could not be resumed)",
                    self.path.display()
                );
                said = true;
            }
            if stop {
                return;
            }
            ended = self.ended.lock().expect("journal lock");
            if !*ended {
                ended = self.wake.wait_timeout(ended, period).expect("journal lock").0;
            }
        }
    }

    /// Ends [`Journal::keep`].
    pub fn end(&self) {
        *self.ended.lock().unwrap_or_else(|e| e.into_inner()) = true;
        self.wake.notify_all();
    }

    /// Removes the journal and the plan kept beside it: the load is complete.
    pub fn remove(&self) {
        let _ = std::fs::remove_file(&self.path);
        let _ = std::fs::remove_file(plan_path(&self.path));
    }

    /// Where it is.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

/// Ends a journal's [`Journal::keep`] when dropped.
pub struct Ending<'a>(pub &'a Journal);

impl Drop for Ending<'_> {
    fn drop(&mut self) {
        self.0.end();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn header() -> Header {
        Header {
            workload: "w".into(),
            data_digest: "d1".into(),
            shard: "1/1".into(),
            target: "memory:".into(),
            blocks_total: 10,
        }
    }

    #[test]
    fn acknowledged_blocks_are_a_prefix_and_a_few_above() {
        let tmp = tempfile::tempdir().unwrap();
        let p = path(tmp.path(), Shard::ALL);
        let j = Journal::new(p.clone(), header(), None, &Table::SEEDS);
        let one = [TableStats {
            rows: 2,
            cells: 3,
            bytes: 40,
        }; 8];
        j.claimed(5);
        for k in [0, 2, 1, 4] {
            j.ack(k, k as u128 + 1, &one);
        }
        j.ack(4, 99, &one); // twice: once
        assert!(j.done(0) && j.done(2) && j.done(4) && !j.done(3) && !j.done(5));
        j.write().unwrap();
        let f = read(&p).unwrap().unwrap();
        assert_eq!((f.acked_below, f.acked_above.clone(), f.claimed), (3, vec![4], 5));
        assert_eq!((f.acked(), f.in_flight()), (4, 1));
        assert_eq!(f.digest, format!("{:032x}", 1 + 2 + 3 + 5));
        assert_eq!(f.tables["weibo:user"].rows, 8);
        // Resumed, it picks up where it was.
        let again = Journal::new(p.clone(), header(), Some(&f), &Table::SEEDS);
        assert!(again.done(4) && !again.done(3));
        again.ack(3, 4, &one);
        again.write().unwrap();
        let f = read(&p).unwrap().unwrap();
        assert_eq!((f.acked_below, f.acked_above.len()), (5, 0));
        assert_eq!(f.digest, format!("{:032x}", 1 + 2 + 3 + 4 + 5));
    }

    #[test]
    fn a_resume_of_another_load_is_refused_naming_the_difference() {
        let tmp = tempfile::tempdir().unwrap();
        let p = path(tmp.path(), Shard::ALL);
        let none = start(&p, &header(), true).unwrap();
        assert!(none.from.is_none() && none.note.unwrap().contains("loading from the first block"));
        let j = Journal::new(p.clone(), header(), None, &Table::SEEDS);
        j.write().unwrap();
        // A journal of this very process reads as unfinished (its pid is ours).
        assert!(start(&p, &header(), true).unwrap().from.is_some());
        for (change, says) in [
            (
                Header {
                    workload: "x".into(),
                    ..header()
                },
                "of workload w, not x",
            ),
            (
                Header {
                    data_digest: "d2".into(),
                    ..header()
                },
                "of other data",
            ),
            (
                Header {
                    shard: "1/2".into(),
                    ..header()
                },
                "shard 1/1 of another shard count, not 1/2",
            ),
            (
                Header {
                    target: "null:".into(),
                    ..header()
                },
                "into memory:, not null:",
            ),
        ] {
            let e = start(&p, &change, true).unwrap_err();
            assert!(e.contains(says) && e.starts_with("--resume: "), "{e}");
            assert_eq!(e.lines().count(), 1);
        }
        let fresh = start(&p, &header(), false).unwrap();
        assert!(fresh.from.is_none() && fresh.note.unwrap().contains("pass --resume"));
    }

    #[test]
    fn a_journal_a_running_load_writes_is_left_alone() {
        let tmp = tempfile::tempdir().unwrap();
        let p = path(tmp.path(), Shard::ALL);
        let mut other = std::process::Command::new("sleep").arg("60").spawn().unwrap();
        let j = Journal::new(p.clone(), header(), None, &Table::SEEDS);
        let mut f = j.snapshot().unwrap();
        f.pid = other.id();
        std::fs::write(&p, serde_json::to_vec(&f).unwrap()).unwrap();
        for resume in [false, true] {
            let e = start(&p, &header(), resume).unwrap_err();
            assert!(e.contains(&format!("still running (pid {})", other.id())), "{e}");
        }
        other.kill().unwrap();
        other.wait().unwrap();
        assert!(start(&p, &header(), true).unwrap().from.is_some(), "its load is gone");
    }
}
