//! Random mutations and reads against a backend and the in-memory model: every read must
//! answer identically, restarts included. Part of the contract suite for every backend but
//! the model itself.

use crate::common::Harness;
use proptest::collection::vec;
use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};
use tallrow::store::{Column, Get, Mutation, RowMutation, Scan, Selection, Store, TableDescriptor, memory::Memory};

// The table's name; a harness on a shared server suffixes it (`Harness::table`).
const TABLE: &str = "model_t";

// A small alphabet with the edge bytes, so that random bounds often land on stored rows.
fn bytes(max: usize) -> impl Strategy<Value = Vec<u8>> {
    vec(prop_oneof![Just(0x00u8), Just(b'a'), Just(0xff)], 0..=max)
}

fn family() -> impl Strategy<Value = String> {
    prop_oneof![Just("a".to_string()), Just("b".to_string())]
}

fn mutation() -> impl Strategy<Value = Mutation> {
    let ts = 0i64..8;
    prop_oneof![
        4 => (family(), bytes(2), ts.clone(), bytes(3)).prop_map(|(f, q, t, v)| Mutation::put(&f, q, t, v)),
        1 => (family(), bytes(2), proptest::option::of(ts.clone()))
            .prop_map(|(family, qualifier, timestamp)| Mutation::DeleteColumn { family, qualifier, timestamp }),
        1 => (family(), ts.clone()).prop_map(|(family, t)| Mutation::DeleteFamily { family, timestamp: Some(t) }),
        1 => ts.clone().prop_map(|t| Mutation::DeleteRow { timestamp: Some(t) }),
        1 => (family(), bytes(2), ts.clone()).prop_map(|(f, q, t)| Mutation::delete_version(&f, q, t)),
        1 => (family(), ts).prop_map(|(family, timestamp)| Mutation::DeleteFamilyVersion { family, timestamp }),
    ]
}

#[derive(Debug, Clone)]
enum Op {
    Mutate(Vec<RowMutation>),
    Restart,
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        8 => vec((bytes(2).prop_filter("row keys are not empty", |r| !r.is_empty()), vec(mutation(), 1..4))
            .prop_map(|(row, m)| RowMutation::new(row, m)), 1..5).prop_map(Op::Mutate),
        1 => Just(Op::Restart),
    ]
}

fn selection() -> impl Strategy<Value = Selection> {
    (
        vec(
            (family(), proptest::option::of(bytes(2))).prop_map(|(f, q)| match q {
                Some(q) => Column::qualifier(&f, q),
                None => Column::family(&f),
            }),
            0..3,
        ),
        1u32..5,
        proptest::option::of((0i64..8, 0i64..9).prop_map(|(a, b)| (a.min(b), a.max(b)))),
        proptest::option::of(bytes(2)),
        proptest::option::of(1usize..4),
    )
        .prop_map(
            |(columns, max_versions, time_range, qualifier_after, cell_limit)| Selection {
                columns,
                max_versions,
                time_range,
                qualifier_after,
                cell_limit,
            },
        )
}

#[derive(Debug, Clone)]
enum Read {
    Get(Vec<Get>),
    Scan(Scan),
}

fn read() -> impl Strategy<Value = Read> {
    prop_oneof![
        vec(
            (
                bytes(2).prop_filter("row keys are not empty", |r| !r.is_empty()),
                selection()
            )
                .prop_map(|(row, select)| Get { row, select }),
            1..4
        )
        .prop_map(Read::Get),
        (
            bytes(2),
            any::<bool>(),
            bytes(2),
            bytes(1),
            any::<bool>(),
            proptest::option::of(0usize..5),
            selection()
        )
            .prop_map(
                |(start, start_exclusive, stop, prefix, reversed, limit, select)| Read::Scan(Scan {
                    start,
                    start_exclusive,
                    stop,
                    prefix,
                    reversed,
                    limit,
                    select
                })
            ),
    ]
}

fn check_reads(
    table: &str,
    backend: &dyn Store,
    model: &dyn Store,
    reads: &[Read],
    reversed: bool,
) -> Result<(), TestCaseError> {
    for r in reads {
        match r {
            // A backend without reversed scans refuses them (see the contract), but may answer
            // one whose bounds hold no row without asking the service.
            Read::Scan(s) if s.reversed && !reversed => match backend.scan(table, s) {
                Ok(rows) => prop_assert_eq!(rows, model.scan(table, s).unwrap(), "{:?}", r),
                Err(e) => prop_assert!(e.to_string().contains("does not support reversed scans"), "{}", e),
            },
            Read::Get(gets) => prop_assert_eq!(
                backend.get(table, gets).unwrap(),
                model.get(table, gets).unwrap(),
                "{:?}",
                r
            ),
            Read::Scan(s) => prop_assert_eq!(
                backend.scan(table, s).unwrap(),
                model.scan(table, s).unwrap(),
                "{:?}",
                r
            ),
        }
    }
    // Everything, every version.
    let all = Scan::default().versions(10);
    prop_assert_eq!(backend.scan(table, &all).unwrap(), model.scan(table, &all).unwrap());
    Ok(())
}

// The case's table: family `a` keeps one version, `b` three.
fn descriptor(h: &dyn Harness) -> TableDescriptor {
    let mut desc = TableDescriptor::new(&h.table(TABLE), &["a", "b"], 3);
    desc.families[0].max_versions = 1;
    desc
}

// A backend with the case's table made, empty.
fn prepared<H: Harness>(make: impl Fn() -> H) -> H {
    let h = make();
    h.store().create_table(&descriptor(&h)).unwrap();
    h
}

fn run(h: &mut dyn Harness, ops: &[Op], reads: &[Read]) -> Result<(), TestCaseError> {
    let model = Memory::with(h.semantics());
    let desc = descriptor(h);
    let table = desc.name.clone();
    model.create_table(&desc).unwrap();
    for op in ops {
        match op {
            Op::Mutate(batch) => {
                // A backend without one-version deletes refuses them (see the contract).
                let mut batch = batch.clone();
                if !h.version_deletes() {
                    for rm in &mut batch {
                        rm.mutations.retain(|m| !m.is_version_delete());
                    }
                    batch.retain(|rm| !rm.mutations.is_empty());
                }
                h.store().mutate(&table, &batch).unwrap();
                model.mutate(&table, &batch).unwrap();
            }
            Op::Restart => {
                h.restart();
            }
        }
        check_reads(&table, &*h.store(), &model, reads, h.reversed_scans())?;
    }
    Ok(())
}

/// Runs `cases` random cases, each on a fresh backend from `make`.
///
/// On a shared server a case's own calls take a fraction of what its table takes to be
/// made and dropped (HBase's master creates and assigns, then disables and deletes it:
/// 0.2 to 0.6 s each way on an idle cluster, against 0.05 to 0.3 s for the case's calls),
/// and the master does several at once. So `HELPERS` threads make tables ahead, each
/// holding one ready, and as many drop them behind; the cases still run one after another,
/// each on a table no other case touched. (On the rig's HBase, alone: hbase_native's 64
/// cases in 10 s rather than 25, hbase_buffered_binary's in 15 s rather than 47.)
pub fn reads_as_the_model<H: Harness + Send>(make: impl Fn() -> H + Sync, cases: u32) {
    const HELPERS: usize = 3;
    let mut runner = TestRunner::new(Config {
        cases,
        ..Config::default()
    });
    let make = &make;
    // A maker hands its backend over only when a case takes it; once the cases are done
    // the channel closes, and what a maker made after that is dropped with its table.
    let (ready, take) = std::sync::mpsc::sync_channel::<H>(0);
    // Two waiting to be dropped at most: a server slower to drop than the cases are to run
    // holds the cases back rather than piling up tables.
    let (done, retired) = std::sync::mpsc::sync_channel::<H>(2);
    let retired = std::sync::Mutex::new(retired);
    let result = std::thread::scope(|scope| {
        for _ in 0..HELPERS {
            let ready = ready.clone();
            scope.spawn(move || while ready.send(prepared(make)).is_ok() {});
            scope.spawn(|| {
                loop {
                    let next = retired.lock().unwrap().recv();
                    let Ok(h) = next else { break };
                    drop(h);
                }
            });
        }
        drop(ready);
        let result = runner.run(&(vec(op(), 1..12), vec(read(), 1..8)), |(ops, reads)| {
            let mut h = take.recv().expect("a thread making backends");
            let outcome = run(&mut h, &ops, &reads);
            done.send(h).expect("the threads dropping harnesses");
            outcome
        });
        drop(take);
        drop(done);
        result
    });
    if let Err(e) = result {
        panic!("{e}");
    }
}
