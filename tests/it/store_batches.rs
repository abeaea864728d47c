//! The embedded store's engine under concurrent batches: fjall as vendored here applies a
//! batch to memtables after leaving the journal lock (vendor/fjall/PATCHED.md). These pin what
//! that must keep: every acknowledged batch is there, also across memtable rotations and a
//! reopen, a snapshot sees whole batches, and a batch is visible once its commit returns.

use fjall::{Database, Keyspace, KeyspaceCreateOptions, PersistMode, Readable};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

const WRITERS: usize = 4;
const KEYS: usize = 8;

fn key(writer: usize, k: usize) -> Vec<u8> {
    format!("w{writer}/k{k}").into_bytes()
}

#[test]
fn concurrent_batches_survive_memtable_rotations_and_a_reopen() {
    // A lost batch shows only when a rotation lands inside its apply: several short rounds
    // give that more chances than one long one, where memtables fill and rotate on their own.
    for _ in 0..10 {
        batches_survive_rotations_and_a_reopen();
    }
}

fn batches_survive_rotations_and_a_reopen() {
    const BATCHES: usize = 150;
    let dir = tempfile::tempdir().unwrap();
    let options = || KeyspaceCreateOptions::default().max_memtable_size(64 * 1024);
    let row = |w: usize, b: usize, i: usize| format!("w{w}/b{b:04}/i{i}").into_bytes();
    {
        let db = Database::builder(dir.path()).open().unwrap();
        let (a, b) = (db.keyspace("a", options).unwrap(), db.keyspace("b", options).unwrap());
        let done = Arc::new(AtomicBool::new(false));
        std::thread::scope(|s| {
            // Rotations, which must wait for batches still applying to the memtable.
            s.spawn(|| {
                while !done.load(Ordering::Relaxed) {
                    a.rotate_memtable().unwrap();
                    b.rotate_memtable().unwrap();
                    std::thread::yield_now();
                }
            });
            let writers: Vec<_> = (0..WRITERS)
                .map(|w| {
                    let (db, a, b) = (&db, &a, &b);
                    s.spawn(move || {
                        for n in 0..BATCHES {
                            let mut batch = db.batch().durability(Some(PersistMode::Buffer));
                            for i in 0..KEYS {
                                let ks = if i % 2 == 0 { a } else { b };
                                batch.insert(ks, row(w, n, i), vec![w as u8; 200]);
                            }
                            batch.commit().unwrap();
                        }
                    })
                })
                .collect();
            for w in writers {
                w.join().unwrap();
            }
            done.store(true, Ordering::Relaxed);
        });
        assert_eq!(a.len().unwrap() + b.len().unwrap(), WRITERS * BATCHES * KEYS);
    }
    let db = Database::builder(dir.path()).open().unwrap();
    let (a, b) = (db.keyspace("a", options).unwrap(), db.keyspace("b", options).unwrap());
    for w in 0..WRITERS {
        for n in 0..BATCHES {
            for i in 0..KEYS {
                let ks = if i % 2 == 0 { &a } else { &b };
                let got = ks.get(row(w, n, i)).unwrap();
                assert_eq!(
                    got.as_deref(),
                    Some(&[w as u8; 200][..]),
                    "writer {w} batch {n} item {i} after reopen"
                );
            }
        }
    }
}

/// The values writer `w` has under its keys in `snapshot`: all equal when batches are whole.
fn values_of(snapshot: &fjall::Snapshot, ks: &Keyspace, w: usize) -> Vec<Option<u32>> {
    (0..KEYS)
        .map(|k| {
            snapshot
                .get(ks, key(w, k))
                .unwrap()
                .map(|v| u32::from_be_bytes(v[..].try_into().unwrap()))
        })
        .collect()
}

#[test]
fn snapshots_see_whole_batches_and_each_commit_once_it_returns() {
    const BATCHES: u32 = 400;
    let dir = tempfile::tempdir().unwrap();
    let db = Database::builder(dir.path()).open().unwrap();
    let ks = db.keyspace("t", KeyspaceCreateOptions::default).unwrap();
    let done = AtomicBool::new(false);
    std::thread::scope(|s| {
        let reader = s.spawn(|| {
            let mut seen = 0usize;
            while !done.load(Ordering::Relaxed) {
                let snapshot = db.snapshot();
                for w in 0..WRITERS {
                    let values = values_of(&snapshot, &ks, w);
                    assert!(
                        values.iter().all(|v| *v == values[0]),
                        "snapshot {} sees part of a batch of writer {w}: {values:?}",
                        snapshot.seqno()
                    );
                }
                seen += 1;
            }
            seen
        });
        let writers: Vec<_> = (0..WRITERS)
            .map(|w| {
                let (db, ks) = (&db, &ks);
                s.spawn(move || {
                    for n in 1..=BATCHES {
                        let mut batch = db.batch();
                        for k in 0..KEYS {
                            batch.insert(ks, key(w, k), n.to_be_bytes().to_vec());
                        }
                        batch.commit().unwrap();
                        // Read your write: published before commit returned.
                        let values = values_of(&db.snapshot(), ks, w);
                        assert_eq!(values, vec![Some(n); KEYS], "writer {w} batch {n}");
                    }
                })
            })
            .collect();
        for w in writers {
            w.join().unwrap();
        }
        done.store(true, Ordering::Relaxed);
        assert!(reader.join().unwrap() > 0);
    });
}
