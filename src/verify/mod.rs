//! `tallrow verify`: regenerates a workload's data and checks a store against it.
//!
//! Three passes. (1) Every user, in blocks of users in parallel: the rows the user owns are
//! read back (point reads for the profile, relation, celebrity and inbox rows, one multi-get
//! per table for the whole block; prefix scans for posts, actions, articles and points) and
//! compared cell by cell, and the `fans` cells the user's follows put into other rows are
//! read with the block's multi-gets. (2) Every table is scanned for
//! rows that belong to no user of the workload. (3) Sampled users are queried through the
//! DAOs: action pages by offset and by cursor, time ranges, push and pull timelines, follower
//! lists, category listings and series ranges, against what the generator says they hold.

mod described;
mod queries;

use crate::generate::{Generator, Plan, Scratch, Table};
use crate::keys::{self, weibo};
use crate::schema::{self, microblog};
use crate::store::{self, Column, Get, Mutation, Row, RowMutation, Scan, Store};
use rayon::prelude::*;
use std::collections::{BTreeMap, HashSet};
use std::sync::Arc;

/// How to verify.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Options {
    /// Users queried through the DAOs.
    pub sample: u64,
    /// Worker threads.
    pub threads: usize,
    /// Differences kept for the report (all are counted).
    pub show: usize,
}

/// Row counts of one table.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Counts {
    /// Rows the workload defines.
    pub expected: u64,
    /// Rows found by a full scan.
    pub found: u64,
    /// Expected rows not found.
    pub missing: u64,
    /// Rows found that the workload does not define (or cells beyond its own).
    pub unexpected: u64,
    /// Rows found with cells other than expected.
    pub mismatched: u64,
}

/// The outcome of a verify.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Report {
    /// Per table, the tables the workload writes.
    pub tables: Vec<(Table, Counts)>,
    /// Query checks: name, passed, failed.
    pub checks: Vec<(&'static str, u64, u64)>,
    /// The first differences, in user order.
    pub differences: Vec<String>,
    /// Every difference.
    pub difference_count: u64,
    /// Users queried through the DAOs.
    pub sampled: u64,
}

impl Report {
    /// Whether the store holds exactly the workload's data.
    pub fn ok(&self) -> bool {
        self.difference_count == 0
    }
}

type Cell = (String, Vec<u8>, i64, Vec<u8>);

fn cells_of(mutations: &[Mutation], out: &mut Vec<Cell>) {
    for m in mutations {
        if let Mutation::Put {
            family,
            qualifier,
            timestamp,
            value,
        } = m
        {
            out.push((
                family.clone(),
                qualifier.clone(),
                timestamp.unwrap_or(-1),
                value.clone(),
            ));
        }
    }
}

fn row_cells(row: &Row) -> Vec<Cell> {
    let mut v: Vec<Cell> = row
        .cells
        .iter()
        .map(|c| (c.family.clone(), c.qualifier.clone(), c.timestamp, c.value.clone()))
        .collect();
    v.sort();
    v
}

/// What differs between two sorted cell lists, in a few words.
fn cell_difference(expected: &[Cell], found: &[Cell]) -> String {
    let name = |c: &Cell| format!("{}:{}", c.0, keys::to_string_binary(&c.1));
    for i in 0..expected.len().max(found.len()) {
        match (expected.get(i), found.get(i)) {
            (Some(e), Some(f)) if e == f => continue,
            (Some(e), Some(f)) if (&e.0, &e.1, e.2) == (&f.0, &f.1, f.2) => {
                return format!(
                    "cell {} at {} has a different value ({} bytes, expected {})",
                    name(e),
                    e.2,
                    f.3.len(),
                    e.3.len()
                );
            }
            (Some(e), Some(f)) if (&e.0, &e.1) == (&f.0, &f.1) => {
                return format!("cell {} has timestamp {}, expected {}", name(e), f.2, e.2);
            }
            (Some(e), Some(f)) => {
                let (first, what) = if (&e.0, &e.1, e.2) < (&f.0, &f.1, f.2) {
                    (e, "missing")
                } else {
                    (f, "unexpected")
                };
                return format!("{what} cell {} at {}", name(first), first.2);
            }
            (Some(e), None) => return format!("missing cell {} at {}", name(e), e.2),
            (None, Some(f)) => return format!("unexpected cell {} at {}", name(f), f.2),
            (None, None) => break,
        }
    }
    "cells differ".to_string()
}

/// One user's rows, as the generator makes them.
type Collect = Vec<(Table, RowMutation)>;

/// One user's rows as the workload defines them (see [`Verifier::expected`]).
struct Expected {
    uid: u64,
    /// The user's id as its row key in the microblog tables.
    me: Vec<u8>,
    owned: BTreeMap<(Table, Vec<u8>), Vec<Cell>>,
    /// Each follow's `fans` cell: the followee's relation row and the cell.
    fans: Vec<(Vec<u8>, Cell)>,
}

/// The tables whose rows are keyed by the user's id alone, in the order they are read.
const POINT_TABLES: [Table; 4] = [Table::USER, Table::CELEBRITY, Table::INBOX, Table::RELATION];

/// The most `fans` cells read in one call (a user follows at most `max_followees`, 1,000 by
/// default, which one call always read).
const FANS_PER_CALL: usize = 1000;

/// Counts and the first differences of one block of users.
#[derive(Default)]
struct Tally {
    /// Per table, at its [`Table::index`].
    counts: Vec<Counts>,
    differences: Vec<String>,
    count: u64,
    show: usize,
}

impl Tally {
    fn new(show: usize) -> Self {
        Tally {
            show,
            counts: vec![Counts::default(); crate::generate::MAX_TABLES],
            ..Tally::default()
        }
    }

    fn note(&mut self, text: impl FnOnce() -> String) {
        self.count += 1;
        if self.differences.len() < self.show {
            self.differences.push(text());
        }
    }

    fn merge(&mut self, other: Tally) {
        for (a, b) in self.counts.iter_mut().zip(other.counts) {
            a.expected += b.expected;
            a.found += b.found;
            a.missing += b.missing;
            a.unexpected += b.unexpected;
            a.mismatched += b.mismatched;
        }
        self.count += other.count;
        for d in other.differences {
            if self.differences.len() < self.show {
                self.differences.push(d);
            }
        }
    }
}

struct Verifier<'a> {
    store: &'a dyn Store,
    g: &'a Generator,
    plan: &'a Plan,
    /// Tables the store does not have: read as empty, so every row of theirs is missing.
    absent: HashSet<Table>,
}

impl Verifier<'_> {
    fn get(&self, t: Table, gets: &[Get]) -> store::Result<Vec<Option<Row>>> {
        if self.absent.contains(&t) {
            return Ok(vec![None; gets.len()]);
        }
        self.store.get(t.name(), gets)
    }

    fn scan_each(&self, t: Table, scan: &Scan, visit: impl FnMut(Row) -> bool) -> store::Result<()> {
        if self.absent.contains(&t) {
            return Ok(());
        }
        store::scan_each(self.store, t.name(), scan, 1000, visit)
    }

    fn row_name(&self, t: Table, key: &[u8]) -> String {
        format!("{} {}", t.name(), self.g.describe_row(t, key))
    }

    /// Compares one expected row (or its absence) with what the store returned.
    fn compare(&self, tally: &mut Tally, t: Table, key: &[u8], expected: Option<&[Cell]>, found: Option<&Row>) {
        let c = &mut tally.counts[t.index()];
        match (expected, found) {
            (Some(_), None) => {
                c.missing += 1;
                tally.note(|| format!("missing row {}", self.row_name(t, key)));
            }
            (None, Some(_)) => {
                c.unexpected += 1;
                tally.note(|| format!("unexpected row {}", self.row_name(t, key)));
            }
            (Some(e), Some(f)) => {
                let f = row_cells(f);
                if e != f.as_slice() {
                    c.mismatched += 1;
                    tally.note(|| format!("mismatched row {}: {}", self.row_name(t, key), cell_difference(e, &f)));
                }
            }
            (None, None) => {}
        }
    }

    /// What one user's check compares with: the rows the user owns, by table and key, and
    /// the `fans` cells its follows put into other users' relation rows.
    fn expected(&self, uid: u64, scratch: &mut Scratch, collect: &mut Collect) -> schema::Result<Expected> {
        collect.clear();
        self.g.emit_user_rows(uid, scratch, collect)?;
        let me = microblog::uid_bytes(uid);
        let mut owned: BTreeMap<(Table, Vec<u8>), Vec<Cell>> = BTreeMap::new();
        let mut fans: Vec<(Vec<u8>, Cell)> = Vec::new();
        for (t, rm) in collect.iter() {
            if *t == Table::RELATION && rm.row != me {
                let mut c = Vec::new();
                cells_of(&rm.mutations, &mut c);
                fans.extend(c.into_iter().map(|cell| (rm.row.clone(), cell)));
            } else {
                cells_of(&rm.mutations, owned.entry((*t, rm.row.clone())).or_default());
            }
        }
        for cells in owned.values_mut() {
            cells.sort();
        }
        Ok(Expected { uid, me, owned, fans })
    }

    /// Checks a block of users in user order. Their point rows and `fans` cells are read
    /// first, one call per table for the whole block: on a remote store verify's time is
    /// its round trips, and a user's own prefix scans cannot be merged this way.
    fn check_block(
        &self,
        users: std::ops::Range<u64>,
        scratch: &mut Scratch,
        collect: &mut Collect,
        tally: &mut Tally,
    ) -> schema::Result<()> {
        let block = users
            .map(|uid| self.expected(uid, scratch, collect))
            .collect::<schema::Result<Vec<_>>>()?;
        let w = self.g.workload();
        let microblog_on = w.data.follows.is_some() || w.data.posts.is_some();
        let (mut points, fans) = if microblog_on {
            (self.read_point_rows(&block)?, self.read_fans(&block)?)
        } else {
            Default::default()
        };
        let mut fans = fans.into_iter();
        let keys = w.keys;
        let mut prefix = Vec::new();
        for (i, e) in block.iter().enumerate() {
            if microblog_on {
                let found = points.each_mut().map(|rows| rows[i].take());
                self.check_point_rows(e, found, tally);
                self.check_fans(e, fans.by_ref().take(e.fans.len()), tally);
            }
            let uid = e.uid;
            if w.data.posts.is_some() {
                weibo::user_prefix(keys.weibo, uid, &mut prefix);
                self.check_prefix(Table::CONTENT, &[std::mem::take(&mut prefix)], &e.owned, tally)?;
            }
            if w.data.actions.is_some() {
                keys::actions::user_prefix(keys.actions, uid as i32, &mut prefix);
                self.check_prefix(Table::ACTIONS, &[std::mem::take(&mut prefix)], &e.owned, tally)?;
            }
            if w.data.articles.is_some() {
                let mut index = Vec::new();
                keys::blog::user_prefix(keys.blog, uid as i64, keys::blog::ARTICLE_TAG, &mut prefix);
                keys::blog::user_prefix(keys.blog, uid as i64, keys::blog::INDEX_TAG, &mut index);
                self.check_prefix(Table::BLOG, &[std::mem::take(&mut prefix), index], &e.owned, tally)?;
            }
            if w.data.series.is_some() {
                keys::series::user_prefix(keys.series, uid as i32, &mut prefix);
                self.check_prefix(Table::SERIES, &[std::mem::take(&mut prefix)], &e.owned, tally)?;
            }
        }
        Ok(())
    }

    /// The block's profile, celebrity, inbox and relation rows ([`POINT_TABLES`]), in user
    /// order, one call per table.
    fn read_point_rows(&self, block: &[Expected]) -> store::Result<[Vec<Option<Row>>; 4]> {
        let inbox_versions = self.g.workload().microblog.inbox_versions;
        let mut out: [Vec<Option<Row>>; 4] = Default::default();
        for (t, rows) in POINT_TABLES.into_iter().zip(&mut out) {
            let versions = if t == Table::INBOX { inbox_versions } else { 1 };
            let gets: Vec<Get> = block
                .iter()
                .map(|e| Get::new(e.me.clone()).versions(versions))
                .collect();
            *rows = self.get(t, &gets)?;
        }
        Ok(out)
    }

    /// The `fans` cell of each of the block's follows, in user order, in calls of at most
    /// [`FANS_PER_CALL`] rows.
    fn read_fans(&self, block: &[Expected]) -> store::Result<Vec<Option<Row>>> {
        let gets: Vec<Get> = block
            .iter()
            .flat_map(|e| {
                e.fans.iter().map(|(row, _)| {
                    Get::new(row.clone()).columns(vec![Column::qualifier(microblog::FANS, e.me.clone())])
                })
            })
            .collect();
        let mut out = Vec::with_capacity(gets.len());
        for chunk in gets.chunks(FANS_PER_CALL) {
            out.extend(self.get(Table::RELATION, chunk)?);
        }
        Ok(out)
    }

    /// The profile, relation (`attention` cells and the `fans` count), celebrity and inbox
    /// rows keyed by the user's id, as read ([`POINT_TABLES`]).
    fn check_point_rows(&self, e: &Expected, found: [Option<Row>; 4], tally: &mut Tally) {
        let (uid, me, owned) = (e.uid, e.me.as_slice(), &e.owned);
        let [user, celebrity, inbox, relation] = found;
        for (t, found) in [
            (Table::USER, user),
            (Table::CELEBRITY, celebrity),
            (Table::INBOX, inbox),
        ] {
            let expected = owned.get(&(t, me.to_vec())).map(Vec::as_slice);
            tally.counts[t.index()].expected += u64::from(expected.is_some());
            self.compare(tally, t, me, expected, found.as_ref());
        }
        // Relation: this user's follows exactly; its followers by count (each follower's
        // own check looks for its cell here).
        let t = Table::RELATION;
        let attention = owned.get(&(t, me.to_vec())).cloned().unwrap_or_default();
        let followers = self.plan.followers(uid);
        let exists = !attention.is_empty() || followers > 0;
        tally.counts[t.index()].expected += u64::from(exists);
        let Some(row) = relation else {
            if exists {
                tally.counts[t.index()].missing += 1;
                tally.note(|| format!("missing row {}", self.row_name(t, me)));
            }
            return;
        };
        if !exists {
            tally.counts[t.index()].unexpected += 1;
            tally.note(|| format!("unexpected row {}", self.row_name(t, me)));
            return;
        }
        let all = row_cells(&row);
        let (got_fans, got_attention): (Vec<Cell>, Vec<Cell>) = all.into_iter().partition(|c| c.0 == microblog::FANS);
        let mut bad = None;
        if got_attention != attention {
            bad = Some(cell_difference(&attention, &got_attention));
        } else if got_fans.len() as u64 > followers {
            // Name the cells of users who do not follow this one.
            let mut list = Vec::new();
            let mut seen = crate::generate::Seen::default();
            for c in &got_fans {
                let follows = weibo::parse_uid(&c.1)
                    .ok()
                    .filter(|&f| (1..=self.g.workload().data.users).contains(&f))
                    .is_some_and(|f| {
                        self.g.followees(f, &mut list, &mut seen);
                        list.iter().any(|x| x.target == uid)
                    });
                if !follows {
                    bad = Some(format!("unexpected cell {}:{}", c.0, keys::to_string_binary(&c.1)));
                    break;
                }
            }
            bad.get_or_insert_with(|| format!("{} followers, expected {followers}", got_fans.len()));
        }
        if let Some(why) = bad {
            tally.counts[t.index()].mismatched += 1;
            tally.note(|| format!("mismatched row {}: {why}", self.row_name(t, me)));
        }
    }

    /// The `fans` cells this user's follows put into its followees' relation rows, as read.
    fn check_fans(&self, e: &Expected, found: impl Iterator<Item = Option<Row>>, tally: &mut Tally) {
        let t = Table::RELATION;
        for ((row, cell), found) in e.fans.iter().zip(found) {
            let found = found.map(|r| row_cells(&r)).unwrap_or_default();
            if found.as_slice() != std::slice::from_ref(cell) {
                tally.counts[t.index()].mismatched += 1;
                let why = cell_difference(std::slice::from_ref(cell), &found);
                tally.note(|| format!("mismatched row {}: {why}", self.row_name(t, row)));
            }
        }
    }

    /// The rows under a user's key prefixes, against the expected rows of that table.
    fn check_prefix(
        &self,
        t: Table,
        prefixes: &[Vec<u8>],
        owned: &BTreeMap<(Table, Vec<u8>), Vec<Cell>>,
        tally: &mut Tally,
    ) -> schema::Result<()> {
        let mut expected: BTreeMap<&[u8], &[Cell]> = owned
            .range((t, Vec::new())..)
            .take_while(|((tt, _), _)| *tt == t)
            .map(|((_, k), v)| (k.as_slice(), v.as_slice()))
            .collect();
        tally.counts[t.index()].expected += expected.len() as u64;
        for prefix in prefixes {
            let mut rows = Vec::new();
            self.scan_each(t, &Scan::prefix(prefix.clone()), |r| {
                rows.push(r);
                true
            })?;
            for row in rows {
                let e = expected.remove(row.key.as_slice());
                self.compare(tally, t, &row.key, e, Some(&row));
            }
        }
        for (key, cells) in expected {
            self.compare(tally, t, key, Some(cells), None);
        }
        Ok(())
    }

    /// Scans a whole table: counts its rows and names those of no user of the workload.
    fn check_strays(&self, t: Table, tally: &mut Tally) -> schema::Result<()> {
        let users = self.g.workload().data.users;
        let keys = self.g.workload().keys;
        let owner = |key: &[u8]| -> Option<u64> {
            let uid = match t {
                Table::USER | Table::RELATION | Table::CELEBRITY | Table::INBOX => weibo::parse_uid(key).ok()?,
                Table::CONTENT => weibo::ContentKey::decode(keys.weibo, key).ok()?.uid,
                Table::ACTIONS => keys::actions::Key::decode(keys.actions, key).ok()?.userid as u64,
                Table::SERIES => keys::series::Key::decode(keys.series, key).ok()?.userid as u64,
                Table::BLOG => match keys::blog::ArticleKey::decode(keys.blog, key) {
                    Ok(k) => k.uid as u64,
                    Err(_) => keys::blog::IndexKey::decode(keys.blog, key).ok()?.uid as u64,
                },
                _ => return None,
            };
            (1..=users).contains(&uid).then_some(uid)
        };
        let mut strays = Vec::new();
        let mut found = 0u64;
        self.scan_each(t, &Scan::default(), |r| {
            found += 1;
            if owner(&r.key).is_none() {
                strays.push(r.key);
            }
            true
        })?;
        tally.counts[t.index()].found += found;
        for key in strays {
            tally.counts[t.index()].unexpected += 1;
            tally.note(|| format!("unexpected row {}", self.row_name(t, &key)));
        }
        Ok(())
    }
}

/// The tables of `tables` the store does not have: verify reads them as empty.
fn absent(store: &dyn Store, tables: &[Table]) -> schema::Result<HashSet<Table>> {
    let mut absent = HashSet::new();
    for &t in tables {
        match store.describe_table(t.name()) {
            Ok(_) => {}
            Err(store::Error::TableNotFound(_)) => {
                absent.insert(t);
            }
            Err(e) => return Err(e.into()),
        }
    }
    Ok(absent)
}

/// Verifies `store` against the workload of `g`, on a pool of `opts.threads`.
pub fn verify(store: Arc<dyn Store>, g: &Generator, opts: &Options) -> schema::Result<Report> {
    // What the loader acknowledged is the primaries' to answer for: a secondary replica may
    // not have it yet.
    store.set_consistency(store::Consistency::Strong)?;
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(opts.threads.max(1))
        .build()
        .expect("a thread pool");
    pool.install(|| {
        if g.own_design().is_some() {
            return described::verify(&*store, g, opts.show);
        }
        let plan = g.plan();
        let tables = g.written_tables();
        let absent = absent(&*store, &tables)?;
        let v = Verifier {
            store: &*store,
            g,
            plan,
            absent,
        };
        let blocks: Vec<Tally> = (0..g.blocks())
            .into_par_iter()
            .map_init(
                || (Scratch::default(), Collect::new()),
                |(scratch, collect), b| -> schema::Result<Tally> {
                    let mut tally = Tally::new(opts.show);
                    v.check_block(g.block_users(b), scratch, collect, &mut tally)?;
                    Ok(tally)
                },
            )
            .collect::<schema::Result<Vec<_>>>()?;
        let mut total = Tally::new(opts.show);
        for &t in &tables {
            if v.absent.contains(&t) {
                total.note(|| format!("missing table {}", t.name()));
            }
        }
        for t in blocks {
            total.merge(t);
        }
        for &t in &tables {
            v.check_strays(t, &mut total)?;
        }
        let mut report = Report::default();
        // Queries through the DAOs need the tables; with some missing, the rows say enough.
        let sample = if v.absent.is_empty() { opts.sample } else { 0 };
        let sampled = queries::sample_users(g, sample);
        report.sampled = sampled.len() as u64;
        let checks = queries::run(&store, g, plan, &sampled, &mut |d: String| total.note(|| d))?;
        report.checks = checks;
        report.tables = tables.iter().map(|&t| (t, total.counts[t.index()])).collect();
        report.differences = total.differences;
        report.difference_count = total.count;
        Ok(report)
    })
}
