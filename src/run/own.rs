//! The operations of a workload's own design ([`crate::design::ops`]): each prepared from a
//! user's instances of the operation's entity (the rows the load wrote), untimed, then run
//! as the store calls a client of that design makes, timed.

use crate::design::key::{self, Key, Owned, Segment, Value};
use crate::design::ops::{Cells, Deliver, Does, Page, Range, Sources, Target, Timeline};
use crate::design::{Design, Entity, Part};
use crate::generate::rng::Stream;
use crate::generate::{Generator, geometric};
use crate::keys;
use crate::schema::Result;
use crate::store::{Column, Get, Mutation, Row, RowMutation, Scan, Store, now_millis};
use rustc_hash::FxHashMap;
use std::rc::Rc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

/// Probability of page 1 in a page's geometric depth, as the seeds' pages draw it.
const PAGE_DEPTH_P: f64 = 0.4;
/// Deepest page asked for.
const MAX_DEPTH: u64 = 100;

/// A design's operations over one store.
pub struct Own {
    design: Design,
    /// The design's tables' names, as the loader wrote them.
    names: Vec<&'static str>,
    store: Arc<dyn Store>,
    /// What the run's updates and deletes made of the instances they took, by each one's
    /// fields but those an update sets (`None`: deleted): the next update of one starts
    /// from what the last one wrote, so that its old index rows are the ones there.
    changed: Mutex<FxHashMap<Vec<i128>, Option<Vec<Owned>>>>,
    /// New ids, for the instances the run's writes make.
    fresh: AtomicU64,
    /// Picks users as the run does: a new follow's followee, as seed 001's follow draws one.
    users: super::pick::Users,
    /// The celebrities, read once from the design's rows of entity celebrity, as seed 001's
    /// timeline service reads `weibo:celebrity`; the generator's where the design keeps none.
    celebrities: Option<std::collections::BTreeSet<u64>>,
    /// Per operation, whose row it reads where that is a user's ([`users_row`]).
    roles: Vec<Option<Role>>,
    /// Per operation, which users can run it ([`drawn`]).
    drawn: Vec<Drawn>,
}

/// A worker's scratch space for a design's operations: the generator's, and each page's
/// keys of users' instances in its order, kept between operations as the seeds' runner
/// keeps a user's action keys.
#[derive(Default)]
pub struct Scratch {
    /// The generator's scratch space.
    pub generated: crate::generate::Scratch,
    /// By user and operation.
    keys: FxHashMap<(u64, usize), Rc<Keys>>,
}

/// A user's keys under one page: each once, in the page's order, end to end in one buffer;
/// and per instance where its key lies and the run of keys sharing its page's prefix. Laid
/// out so that a page's preparation touches one record and the key's bytes (the users'
/// keys outgrow the caches: each load from a separate vector was a miss).
#[derive(Debug, Default)]
pub(crate) struct Keys {
    bytes: Vec<u8>,
    /// Where each key ends in `bytes`.
    ends: Vec<u32>,
    at: Vec<At>,
}

/// Where an instance's key lies in [`Keys::bytes`], and (`from < to`) the places of the keys
/// sharing its prefix and where in the key that prefix ends, found once where the page has
/// no salt to spread over.
#[derive(Debug, Default, Clone, Copy)]
struct At {
    start: u32,
    end: u32,
    from: u32,
    to: u32,
    prefix: u32,
}

impl Keys {
    /// The key of instance `i`.
    fn row(&self, i: usize) -> &[u8] {
        let a = self.at[i];
        &self.bytes[a.start as usize..a.end as usize]
    }

    /// The run of keys sharing instance `i`'s prefix, and where in its key the prefix ends,
    /// where they were found.
    fn run(&self, i: usize) -> Option<(std::ops::Range<usize>, usize)> {
        let a = self.at[i];
        (a.from < a.to).then_some((a.from as usize..a.to as usize, a.prefix as usize))
    }
}

/// Whose row a page of cells reads: the user's as its instances' owner, or as a followee.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Role {
    Owner,
    Followee,
}

/// No keys: a first page, which needs none.
const NO_KEYS: &[Vec<u8>] = &[];

/// Keys in a page's order, read by place.
trait Ordered {
    fn count(&self) -> usize;
    fn key(&self, j: usize) -> &[u8];
}

impl Ordered for [Vec<u8>] {
    fn count(&self) -> usize {
        self.len()
    }
    fn key(&self, j: usize) -> &[u8] {
        &self[j]
    }
}

impl Ordered for Keys {
    fn count(&self) -> usize {
        self.ends.len()
    }
    fn key(&self, j: usize) -> &[u8] {
        let start = if j == 0 { 0 } else { self.ends[j - 1] as usize };
        &self.bytes[start..self.ends[j] as usize]
    }
}

/// The first place in `from..to` of `all` where `pred` fails, `pred` holding before it.
fn partition(all: &(impl Ordered + ?Sized), (mut from, mut to): (usize, usize), pred: impl Fn(&[u8]) -> bool) -> usize {
    while from < to {
        let mid = from + (to - from) / 2;
        if pred(all.key(mid)) {
            from = mid + 1;
        } else {
            to = mid;
        }
    }
    from
}

/// Users whose page keys a worker keeps.
const CACHE_KEYS: usize = 4096;

/// One prepared operation of a design.
#[derive(Debug, Clone, PartialEq)]
pub enum OwnCall {
    /// A get of one row.
    Get {
        /// The table.
        table: &'static str,
        /// The row.
        row: Vec<u8>,
    },
    /// A page (or a time range): one scan, or one per salt bucket merged by what follows
    /// the salt.
    Page(PageCall),
    /// A page of one row's cells.
    Cells {
        /// The table.
        table: &'static str,
        /// The row, its family, the cursor and the page's size.
        get: Get,
    },
    /// A page of an index, then one multi-get of the rows its cells name.
    Lookup {
        /// The index's page.
        index: PageCall,
        /// The family holding the keys.
        family: String,
        /// The qualifier holding the key, if one.
        qualifier: Option<Vec<u8>>,
        /// Where the keys point.
        then: &'static str,
    },
    /// Rows to write, table by table.
    Write(Vec<(&'static str, Vec<RowMutation>)>),
    /// A timeline: the inbox's page (its keys, their stamps from the keys), each source's
    /// first page, merged newest first; the newest `rows`, and a multi-get of those the
    /// inbox named.
    Timeline {
        /// The inbox's page, and the lookup (its place among the operations) that names
        /// the family and qualifier of its cells holding keys.
        inbox: Option<(PageCall, usize)>,
        /// The sources' first pages, or where their list is read.
        pulls: Pulls,
        /// The timeline's table.
        table: &'static str,
        /// The timeline's rows, whose key gives each one's stamp.
        target: Target,
        /// Where in the key's fields its stamp lies.
        stamp: usize,
        /// How many rows it shows.
        rows: usize,
        /// A later page: only rows stamped before this.
        before: Option<i64>,
    },
    /// A write, then what it delivers to the readers' inboxes.
    Deliver {
        /// The write.
        write: Vec<(&'static str, Vec<RowMutation>)>,
        /// What follows it.
        then: Delivery,
    },
    /// Nothing to run: none of the users drawn has an instance of the entity, or its rows
    /// could not be made. Counted as an error, with why.
    Refused(String),
}

/// Whose first pages a timeline reads.
#[derive(Debug, Clone, PartialEq)]
pub enum Pulls {
    /// Each source's, made ahead from the followees the generator made.
    Made(Vec<PageCall>),
    /// Those of the followees the reader's list names, read when it runs, as seed 001's
    /// client reads its `attention` cells (on a timeline of celebrities, only where there
    /// are some).
    Listed {
        /// The timeline's operation.
        op: usize,
        /// The list's table.
        table: &'static str,
        /// The reader's row of it.
        row: Vec<u8>,
    },
}

/// What a write delivers after it.
#[derive(Debug, Clone, PartialEq)]
pub enum Delivery {
    /// A post to each follower its author's list names.
    Fanout {
        /// The list's table.
        table: &'static str,
        /// The list's rows.
        list: Target,
        /// The author's list.
        row: Vec<u8>,
        /// The family naming the followers.
        family: String,
        /// The author.
        author: i128,
        /// The post's time.
        stamp: i128,
    },
    /// The followee's newest posts to the new follower.
    Backfill {
        /// The followee's first page of posts.
        posts: PageCall,
        /// The posts' rows.
        target: Target,
        /// The new follower.
        reader: i128,
        /// The followee.
        followee: i128,
    },
}

/// Cells of a follower list read a call, as seed 001 pages it.
const LIST_PAGE: usize = 1000;
/// Inbox rows written a call by a fan-out, as seed 001 batches them.
const FANOUT_BATCH: usize = 1000;

/// A prepared page.
#[derive(Debug, Clone, PartialEq)]
pub struct PageCall {
    table: &'static str,
    /// One scan per bucket read.
    scans: Vec<Scan>,
    /// Where the salt lies in each row's key (merged rows compare what follows it); none
    /// for a single scan.
    salt: Option<std::ops::Range<usize>>,
    /// Newest first by a backward scan: merged rows in descending order.
    reversed: bool,
    /// Rows skipped before the page (a page by offset).
    skip: usize,
    rows: usize,
}

/// Whether the rows after `prefix` segments of `key` are newest last: a forward stamp
/// follows, so a page reads them backwards.
fn newest_last(key: &Key, prefix: usize) -> bool {
    matches!(
        key.segments.get(prefix),
        Some(Segment::Stamp {
            order: crate::keys::Order::Forward,
            ..
        })
    )
}

/// A window of `width` ms inside the data's span (the whole span when it is narrower), as
/// the seeds' range reads draw it.
fn window(start: i64, span: i64, width: i64, s: &Stream) -> (i64, i64) {
    if span <= width {
        return (start, start + span - 1);
    }
    let from = start + s.below(45, (span - width) as u64) as i64;
    (from, from + width - 1)
}

/// The values of `key`'s fields, one per field in the key's order, from an instance of
/// `entity` whose values are in the entity's order.
fn key_values<'v>(key: &Key, entity: Entity, values: &'v [Owned]) -> Vec<Value<'v>> {
    key.fields
        .iter()
        .map(|f| values[entity.field(&f.name).expect("checked: the entity has the key's fields")].as_value())
        .collect()
}

/// Whose row a page of cells reads, where it is a user's: its key one field holding a
/// user's id, as the instance's owner or as a follow's followee (whose row a user has where
/// anyone follows them), and its qualifier one field holding another's.
fn users_row(design: &Design, c: &Cells, entity: Entity) -> Option<Role> {
    let rows = &design.tables[c.target.table].rows[c.target.rows];
    let cell = rows.cells.iter().find(|x| x.family == c.family)?;
    let Part::Segments(q) = &cell.qualifier else {
        return None;
    };
    fn one(k: &Key, entity: Entity) -> Option<&str> {
        match &k.fields[..] {
            [f] if entity.user_ids().contains(&f.name.as_str()) => Some(f.name.as_str()),
            _ => None,
        }
    }
    one(q, entity)?;
    match one(&rows.key, entity)? {
        f if f == entity.per_user()[0] => Some(Role::Owner),
        "followee" if entity == Entity::Follow => Some(Role::Followee),
        _ => None,
    }
}

/// Which users can run an operation: those with instances of its entity (prepared from
/// them), or, for one prepared from the user's id alone, those someone follows (their
/// follower list), those who follow someone (a listed timeline's first page), anyone (a
/// write that sets every field, a follow).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Drawn {
    Instances,
    Followed,
    Following,
    Anyone,
}

/// [`Drawn`] of an operation doing `does`, whose row is `role`'s where it is a user's.
fn drawn(does: &Does, role: Option<Role>) -> Drawn {
    match does {
        Does::Cells(_) if role == Some(Role::Followee) => Drawn::Followed,
        Does::Write(e) if !copies(*e) => Drawn::Anyone,
        // A timeline that reads the reader's list when it runs, from its first page.
        Does::Timeline(t) if t.follows.is_some() && !t.later => Drawn::Following,
        _ => Drawn::Instances,
    }
}

/// An integer field's value.
fn int_of(v: &Owned) -> i128 {
    match v {
        Owned::Int(i) => *i,
        Owned::Bytes(_) => unreachable!("an integer field"),
    }
}

/// The values of an instance, to encode.
fn values(v: &[Owned]) -> Vec<Value<'_>> {
    v.iter().map(Owned::as_value).collect()
}

/// `v`, an instance of `entity`, with its fields `times` set to now.
fn now_at(v: &[Owned], entity: Entity, times: &[&str]) -> Vec<Owned> {
    let mut v = v.to_vec();
    let now = i128::from(now_millis());
    for f in times {
        v[entity.field(f).expect("an entity's time field")] = Owned::Int(now);
    }
    v
}

/// `pick`, an instance of user `uid`'s, made again as a new instance of `entity`: its time
/// fields now, its owner `uid`, a follow's followee to be drawn, the rest copied. A field
/// the write sets is not read from `pick` (a user's instances are spread over memory: a
/// follow is written without a load of the one picked).
fn anew(pick: &[Owned], entity: Entity, uid: u64) -> Vec<Owned> {
    let now = Owned::Int(i128::from(now_millis()));
    entity
        .fields()
        .iter()
        .enumerate()
        .map(|(i, (name, _))| match set_by_write(entity, name) {
            Some(Set::Now) => now.clone(),
            Some(Set::Owner) => Owned::Int(i128::from(uid)),
            Some(Set::Drawn) => Owned::Int(0),
            None => pick[i].clone(),
        })
        .collect()
}

/// What a write sets a field of its new instance to, where it does not copy it.
enum Set {
    Now,
    Owner,
    /// Drawn by the write (a follow's followee).
    Drawn,
}

/// How a write of `entity` sets field `name`: its times, its owner, a follow's followee.
fn set_by_write(entity: Entity, name: &str) -> Option<Set> {
    match name {
        _ if entity.times().contains(&name) => Some(Set::Now),
        _ if name == entity.per_user()[0] => Some(Set::Owner),
        "followee" if entity == Entity::Follow => Some(Set::Drawn),
        _ => None,
    }
}

/// Whether [`anew`] copies any field of the picked instance of `entity`.
fn copies(entity: Entity) -> bool {
    entity
        .fields()
        .iter()
        .any(|(name, _)| set_by_write(entity, name).is_none())
}

/// What names instance `v` of `entity` across updates: its integer fields but those an
/// update sets (the generator's instances of an entity differ in those alone; its text is
/// not hashed a call).
fn identity(v: &[Owned], entity: Entity) -> Vec<i128> {
    let set: Vec<usize> = entity
        .updated()
        .iter()
        .map(|f| entity.field(f).expect("an entity's time field"))
        .collect();
    v.iter()
        .enumerate()
        .filter_map(|(i, o)| match o {
            Owned::Int(x) if !set.contains(&i) => Some(*x),
            _ => None,
        })
        .collect()
}

/// Deletes of the cells `puts` wrote: the very version where it was stamped, every version
/// (up to now) of a column the write stamped.
fn deletes(puts: &[Mutation]) -> Vec<Mutation> {
    puts.iter()
        .filter_map(|m| match m {
            Mutation::Put {
                family,
                qualifier,
                timestamp,
                ..
            } => Some(match timestamp {
                Some(t) => Mutation::DeleteVersion {
                    family: family.clone(),
                    qualifier: qualifier.clone(),
                    timestamp: *t,
                },
                None => Mutation::DeleteColumn {
                    family: family.clone(),
                    qualifier: qualifier.clone(),
                    timestamp: None,
                },
            }),
            _ => None,
        })
        .collect()
}

/// Deletes of the cells of `old` that `new`, a row of the same key, does not write again:
/// a column it does not write, and the old version of one it writes at another time (which
/// would show again once the new one is deleted). An unstamped cell rewritten is left to
/// the newer write.
fn unwritten(old: &RowMutation, new: &RowMutation) -> Vec<Mutation> {
    let written: Vec<(&String, &Vec<u8>, Option<i64>)> = new
        .mutations
        .iter()
        .filter_map(|m| match m {
            Mutation::Put {
                family,
                qualifier,
                timestamp,
                ..
            } => Some((family, qualifier, *timestamp)),
            _ => None,
        })
        .collect();
    let gone: Vec<Mutation> = old
        .mutations
        .iter()
        .filter(|m| match m {
            Mutation::Put {
                family,
                qualifier,
                timestamp,
                ..
            } => {
                let again: Vec<Option<i64>> = written
                    .iter()
                    .filter(|(f, q, _)| *f == family && *q == qualifier)
                    .map(|(_, _, t)| *t)
                    .collect();
                again.is_empty() || (timestamp.is_some() && !again.contains(timestamp))
            }
            _ => false,
        })
        .cloned()
        .collect();
    deletes(&gone)
}

/// The uids of `design`'s rows of entity celebrity in `store` (each such table holding
/// those rows alone); none where the design has no such table.
fn read_celebrities(
    design: &Design,
    names: &[&'static str],
    store: &dyn Store,
) -> Result<Option<std::collections::BTreeSet<u64>>> {
    let mut found = None;
    for (t, table) in design.tables.iter().enumerate() {
        let [rows] = &table.rows[..] else { continue };
        if rows.entity != Some(Entity::Celebrity) {
            continue;
        }
        let at = rows.key.field("uid").expect("a celebrity's rows are keyed by its uid");
        let set = found.get_or_insert_with(std::collections::BTreeSet::new);
        let mut failed = None;
        // A table not there holds none.
        let read = crate::store::scan_each(store, names[t], &Scan::default(), 1000, |row| {
            match rows.key.decode(&row.key) {
                Ok(mut fields) => {
                    if let Owned::Int(uid) = fields.swap_remove(at).1 {
                        set.insert(uid as u64);
                    }
                    true
                }
                Err(e) => {
                    failed = Some(e);
                    false
                }
            }
        });
        match read {
            Err(crate::store::Error::TableNotFound(_)) => continue,
            r => r?,
        }
        if let Some(e) = failed {
            return Err(e.into());
        }
    }
    Ok(found)
}

/// Rows grouped by table, in the order the tables first come.
fn by_table(rows: Vec<(crate::generate::Table, RowMutation)>) -> Vec<(&'static str, Vec<RowMutation>)> {
    let mut out: Vec<(&'static str, Vec<RowMutation>)> = Vec::new();
    for (t, row) in rows {
        match out.iter_mut().find(|(n, _)| *n == t.name()) {
            Some((_, rows)) => rows.push(row),
            None => out.push((t.name(), vec![row])),
        }
    }
    out
}

impl Own {
    /// The operations of `g`'s design over `store`, its users picked by `users`: the
    /// workload's own design's, or the seed designs' descriptions'.
    pub fn new(g: &Generator, store: Arc<dyn Store>, users: super::pick::Users) -> Result<Own> {
        let design = g.design();
        let names: Vec<&'static str> = g.all_tables().iter().map(|t| t.name()).collect();
        let celebrities = read_celebrities(design, &names, &*store)?;
        let roles: Vec<Option<Role>> = design
            .operations
            .iter()
            .map(|op| match &op.does {
                Does::Cells(c) => users_row(design, c, op.entity(design)),
                _ => None,
            })
            .collect();
        let drawn = design
            .operations
            .iter()
            .zip(&roles)
            .map(|(op, role)| drawn(&op.does, *role))
            .collect();
        Ok(Own {
            roles,
            drawn,
            names,
            design: design.clone(),
            store,
            changed: Mutex::default(),
            fresh: AtomicU64::new(0),
            users,
            celebrities,
        })
    }

    /// Whether `uid` is a celebrity, as the run knows them.
    fn is_celebrity(&self, g: &Generator, uid: u64) -> bool {
        match &self.celebrities {
            Some(set) => set.contains(&uid),
            None => g.plan().is_celebrity(uid),
        }
    }

    /// Whether the run knows of any celebrity.
    fn any_celebrity(&self, g: &Generator) -> bool {
        match &self.celebrities {
            Some(set) => !set.is_empty(),
            None => !g.plan().celebrities().is_empty(),
        }
    }

    /// The place of the design's operation named `name`.
    pub fn index_of(&self, name: &str) -> Option<usize> {
        self.design.operations.iter().position(|o| o.name == name)
    }

    /// The design's operation `index`'s entity: whose instances a user must have.
    pub fn entity(&self, index: usize) -> Entity {
        self.design.operations[index].entity(&self.design)
    }

    /// Prepares operation `index` from `instances`, user `uid`'s instances of its entity
    /// (one at least), with the draws of `s`; `x` keeps the user's page keys, and makes
    /// other users' instances (a timeline's sources').
    pub fn prepare(
        &self,
        g: &Generator,
        index: usize,
        (uid, instances): (u64, &[Vec<Owned>]),
        s: &Stream,
        x: &mut Scratch,
    ) -> Result<OwnCall> {
        let op_index = index;
        let op = &self.design.operations[index];
        let entity = op.entity(&self.design);
        if let Does::Cells(c) = &op.does {
            return self.cells(g, (c, self.roles[index]), entity, (uid, instances), s);
        }
        let picked = s.below(60, instances.len() as u64) as usize;
        // None where the operation needs no instances ([`Own::needs_instances`]).
        let pick = instances.get(picked).map_or(&[][..], Vec::as_slice);
        Ok(match &op.does {
            Does::Get(t) => OwnCall::Get {
                table: self.names[t.table],
                row: self.key_of(*t, entity, pick)?,
            },
            Does::Page(p) => {
                let all = self.keys_of(index, p, entity, (uid, instances), &mut x.keys)?;
                OwnCall::Page(self.page_of(p, all.row(picked), &*all, all.run(picked), s))
            }
            Does::Range(r) => OwnCall::Page(self.range(g, r, entity, (uid, pick), s)?),
            Does::Cells(_) => unreachable!("prepared above"),
            Does::Lookup {
                index,
                family,
                qualifier,
                then,
            } => OwnCall::Lookup {
                index: {
                    let all = self.keys_of(op_index, index, entity, (uid, instances), &mut x.keys)?;
                    self.page_of(index, all.row(picked), &*all, all.run(picked), s)
                },
                family: family.clone(),
                qualifier: qualifier.clone(),
                then: self.names[then.table],
            },
            // The picked instance made again now, as a new one: its times the write's, its ids
            // past every generated one.
            Does::Write(e) => {
                let mut v = anew(pick, *e, uid);
                let n = self.fresh.fetch_add(1, Ordering::Relaxed);
                for (f, id) in e.fresh_ids(&v, n) {
                    v[f] = Owned::Int(id);
                }
                // A new follow: of another user, picked as the seeds' runner picks one.
                if *e == Entity::Follow {
                    v[1] = Owned::Int(i128::from(self.users.followee(g, s, uid)));
                }
                let write = by_table(g.instance_rows(*e, &values(&v))?);
                match &op.deliver {
                    Some(d) => self.delivering(g, d, write, &v, s)?,
                    None => OwnCall::Write(write),
                }
            }
            Does::Update(e) => {
                let (was, now) = {
                    let mut changed = self.changed.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
                    let slot = changed.entry(identity(pick, *e)).or_insert_with(|| Some(pick.to_vec()));
                    let now = now_at(pick, *e, e.updated());
                    (slot.replace(now.clone()), now)
                };
                // A deleted instance is written anew.
                let old = match &was {
                    Some(v) => g.instance_cells(*e, &values(v))?,
                    None => Vec::new(),
                };
                let mut new = g.instance_rows(*e, &values(&now))?;
                // What the new rows do not overwrite of the old ones goes.
                for (t, row) in old {
                    match new.iter_mut().find(|(n, r)| *n == t && r.row == row.row) {
                        // Columns apart from those written: one row mutation.
                        Some((_, kept)) => {
                            let gone = unwritten(&row, kept);
                            kept.mutations.extend(gone);
                        }
                        None => new.push((t, RowMutation::new(row.row, deletes(&row.mutations)))),
                    }
                }
                OwnCall::Write(by_table(new))
            }
            Does::Timeline(t) => self.timeline(g, (op_index, t), (uid, instances), s, &mut x.generated)?,
            Does::Delete(e) => {
                // Deleted before, or never changed: its cells' deletes as the load wrote
                // them (again, which changes nothing, where deleted).
                let was = {
                    let mut changed = self.changed.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
                    match changed.insert(identity(pick, *e), None) {
                        Some(Some(v)) => std::borrow::Cow::Owned(v),
                        _ => std::borrow::Cow::Borrowed(pick),
                    }
                };
                let recall = op.deliver == Some(Deliver::Recall);
                let mut rows: Vec<(crate::generate::Table, RowMutation)> = g
                    .instance_cells(*e, &values(&was))?
                    .into_iter()
                    .map(|(t, r)| {
                        let mut gone = deletes(&r.mutations);
                        // An unfollow: every version of the follow's cells, as seed 001's.
                        if recall {
                            for m in &mut gone {
                                if let Mutation::DeleteVersion { family, qualifier, .. } = m {
                                    *m = Mutation::DeleteColumn {
                                        family: std::mem::take(family),
                                        qualifier: std::mem::take(qualifier),
                                        timestamp: None,
                                    };
                                }
                            }
                        }
                        (t, RowMutation::new(r.row, gone))
                    })
                    .collect();
                if recall {
                    rows.extend(self.recall(g, &was)?);
                }
                OwnCall::Write(by_table(rows))
            }
        })
    }

    /// A write of a post or a follow with what it delivers to the readers' inboxes: the
    /// followers the author's list names, read when it runs; or the followee's newest posts.
    /// A celebrity's post, or a follow of one, delivers nothing (its posts are read at read
    /// time).
    fn delivering(
        &self,
        g: &Generator,
        d: &Deliver,
        write: Vec<(&'static str, Vec<RowMutation>)>,
        v: &[Owned],
        s: &Stream,
    ) -> Result<OwnCall> {
        let int = int_of;
        Ok(match d {
            Deliver::Fanout { list, family } => {
                let (author, stamp) = (int(&v[0]), int(&v[1]));
                if self.is_celebrity(g, author as u64) {
                    return Ok(OwnCall::Write(write));
                }
                let follow = [Owned::Int(0), Owned::Int(author), Owned::Int(0)];
                OwnCall::Deliver {
                    write,
                    then: Delivery::Fanout {
                        table: self.names[list.table],
                        list: *list,
                        row: self.key_of(*list, Entity::Follow, &follow)?,
                        family: family.clone(),
                        author,
                        stamp,
                    },
                }
            }
            Deliver::Backfill { posts } => {
                let (reader, followee) = (int(&v[0]), int(&v[1]));
                if self.is_celebrity(g, followee as u64) {
                    return Ok(OwnCall::Write(write));
                }
                // The followee's first page: made from their id where it alone is the prefix,
                // else from a post of theirs, any one naming the prefix.
                let first = Page {
                    rows: g.workload().microblog.inbox_versions as usize,
                    ..*posts
                };
                let known = [(Entity::Post.field("uid"), Owned::Int(followee))];
                let page = match self.first_page(&first, Entity::Post, &known)? {
                    Some(page) => page,
                    None => {
                        let post = [Owned::Int(followee), Owned::Int(0), Owned::Bytes(Vec::new())];
                        self.page(&first, Entity::Post, &post, NO_KEYS, s)?
                    }
                };
                OwnCall::Deliver {
                    write,
                    then: Delivery::Backfill {
                        posts: page,
                        target: posts.target,
                        reader,
                        followee,
                    },
                }
            }
            Deliver::Recall => unreachable!("a recall goes with a delete"),
        })
    }

    /// Deletes of every version of each cell a delivery from the followee of follow `f`
    /// wrote into its reader's rows.
    fn recall(&self, g: &Generator, f: &[Owned]) -> Result<Vec<(crate::generate::Table, RowMutation)>> {
        let delivery = [f[0].clone(), f[1].clone(), Owned::Int(0)];
        let all = g.all_tables();
        let mut out = Vec::new();
        for (t, table) in self.design.tables.iter().enumerate() {
            for rows in table.rows.iter().filter(|r| r.entity == Some(Entity::Delivery)) {
                let row = rows.key.encode(&key_values(&rows.key, Entity::Delivery, &delivery))?;
                let mut gone = Vec::new();
                for c in &rows.cells {
                    let qualifier = match &c.qualifier {
                        Part::Segments(q) => q.encode(&key_values(q, Entity::Delivery, &delivery))?,
                        _ => unreachable!("checked: a qualifier of the delivery's fields"),
                    };
                    gone.push(Mutation::DeleteColumn {
                        family: c.family.clone(),
                        qualifier,
                        timestamp: None,
                    });
                }
                out.push((all[t], RowMutation::new(row, gone)));
            }
        }
        Ok(out)
    }

    /// The deliveries of a post to each follower its author's list names, a page of the
    /// list at a time, written [`FANOUT_BATCH`] rows a call.
    fn fan_out(&self, g: &Generator, d: &Delivery) -> Result<()> {
        let Delivery::Fanout {
            table,
            list,
            row,
            family,
            author,
            stamp,
        } = d
        else {
            unreachable!("a fan-out")
        };
        let q = self.qualifier_key(*list, family);
        let at = q.field("uid").expect("checked: named by the follower's uid");
        let mut batch = Vec::new();
        self.each_listed(table, row, family, |c| {
            let reader = q.decode(&c.qualifier)?.swap_remove(at).1;
            let delivery = [reader, Owned::Int(*author), Owned::Int(*stamp)];
            batch.extend(g.instance_rows(Entity::Delivery, &values(&delivery))?);
            if batch.len() >= FANOUT_BATCH {
                self.write(&by_table(std::mem::take(&mut batch)))?;
            }
            Ok(())
        })?;
        if !batch.is_empty() {
            self.write(&by_table(batch))?;
        }
        Ok(())
    }

    /// The followee's newest posts delivered to the new follower, in one write.
    fn backfill(&self, g: &Generator, d: &Delivery) -> Result<()> {
        let Delivery::Backfill {
            posts,
            target,
            reader,
            followee,
        } = d
        else {
            unreachable!("a backfill")
        };
        let key = self.key(*target);
        let at = key.field("stamp").expect("checked: posts keyed by their stamp");
        let mut rows = Vec::new();
        for r in self.read_page(posts)? {
            let stamp = key.decode(&r.key)?.swap_remove(at).1;
            let delivery = [Owned::Int(*reader), Owned::Int(*followee), stamp];
            rows.extend(g.instance_rows(Entity::Delivery, &values(&delivery))?);
        }
        // One row of the reader's with every delivery's cells, as the seed writes it.
        let mut merged: Vec<(crate::generate::Table, RowMutation)> = Vec::new();
        for (t, row) in rows {
            match merged.iter_mut().find(|(n, r)| *n == t && r.row == row.row) {
                Some((_, r)) => r.mutations.extend(row.mutations),
                None => merged.push((t, row)),
            }
        }
        self.write(&by_table(merged))
    }

    fn write(&self, tables: &[(&'static str, Vec<RowMutation>)]) -> Result<()> {
        for (table, rows) in tables {
            self.store.mutate(table, rows)?;
        }
        Ok(())
    }

    fn key(&self, t: Target) -> &Key {
        &self.design.tables[t.table].rows[t.rows].key
    }

    fn key_of(&self, t: Target, entity: Entity, values: &[Owned]) -> Result<Vec<u8>> {
        let key = self.key(t);
        Ok(key.encode(&key_values(key, entity, values))?)
    }

    /// A page sharing `pick`'s prefix, at a geometric depth: past page 1 it resumes after
    /// the key of the last row of the page before (or, by offset, skips the rows before it),
    /// among the user's own rows of the prefix in the page's order (rows other users'
    /// instances put under the prefix are not counted: the cursor is a row's real key, its
    /// depth a draw). Newest first: where a forward stamp follows the prefix, the scans run
    /// backwards.
    fn page(
        &self,
        p: &Page,
        entity: Entity,
        pick: &[Owned],
        all: &(impl Ordered + ?Sized),
        s: &Stream,
    ) -> Result<PageCall> {
        let row = self.key_of(p.target, entity, pick)?;
        Ok(self.page_of(p, &row, all, None, s))
    }

    /// [`Own::page`] for the instance whose key is `row`, the run of `all` sharing its
    /// prefix given where it is known.
    fn page_of(
        &self,
        p: &Page,
        row: &[u8],
        all: &(impl Ordered + ?Sized),
        run: Option<(std::ops::Range<usize>, usize)>,
        s: &Stream,
    ) -> PageCall {
        let key = self.key(p.target);
        // A known run knows where the prefix ends (and has no salt to find).
        let (spans, end) = match &run {
            Some((_, end)) => (Vec::new(), *end),
            None => {
                let spans = key.places(row);
                let end = spans[p.prefix - 1].end;
                (spans, end)
            }
        };
        // The user's rows under the same prefix (salt aside), in the page's order: without a
        // salt, a run of the sorted keys, found by bisection; with one, those that match
        // around it.
        let salt = p.spread.map_or(0..0, |(i, _)| spans[i].clone());
        let same =
            |k: &[u8]| k.len() >= end && k[..salt.start] == row[..salt.start] && k[salt.end..end] == row[salt.end..end];
        let (from, to) = match p.spread {
            None if let Some((r, _)) = run => (r.start, r.end),
            None => {
                let at = |k: &[u8]| k[..end.min(k.len())].cmp(&row[..end]);
                let (before, after) = match newest_last(key, p.prefix) {
                    false => (std::cmp::Ordering::Less, std::cmp::Ordering::Greater),
                    true => (std::cmp::Ordering::Greater, std::cmp::Ordering::Less),
                };
                let n = all.count();
                let from = partition(all, (0, n), |k| at(k) == before);
                (from, partition(all, (from, n), |k| at(k) != after))
            }
            Some(_) => (0, (0..all.count()).filter(|&j| same(all.key(j))).count()),
        };
        let pages = (to - from).div_ceil(p.rows).max(1) as u64;
        let depth = (1 + geometric(s, 20, PAGE_DEPTH_P).min(MAX_DEPTH - 1)).min(pages) as usize;
        let cursor = (!p.offset && depth > 1).then(|| {
            let n = (depth - 1) * p.rows - 1;
            match p.spread {
                None => all.key(from + n).to_vec(),
                Some(_) => (0..all.count())
                    .map(|j| all.key(j))
                    .filter(|k| same(k))
                    .nth(n)
                    .expect("counted")
                    .to_vec(),
            }
        });
        self.page_from(p, &row[..end], &spans, cursor, depth)
    }

    /// The keys of user `uid`'s `instances` under page `p` of operation `op`, in the page's
    /// order (by what follows a salt it spreads over; newest first), each once: made once a
    /// user and kept in `cache`.
    fn keys_of(
        &self,
        op: usize,
        p: &Page,
        entity: Entity,
        (uid, instances): (u64, &[Vec<Owned>]),
        cache: &mut FxHashMap<(u64, usize), Rc<Keys>>,
    ) -> Result<Rc<Keys>> {
        if let Some(k) = cache.get(&(uid, op)) {
            return Ok(k.clone());
        }
        let key = self.key(p.target);
        let made: Vec<Vec<u8>> = instances
            .iter()
            .map(|v| self.key_of(p.target, entity, v))
            .collect::<Result<_>>()?;
        // What follows the salt orders the merged buckets' rows.
        let cuts: Vec<usize> = match p.spread {
            Some((i, _)) => made.iter().map(|k| key.places(k)[i].end).collect(),
            None => vec![0; made.len()],
        };
        let mut order: Vec<usize> = (0..made.len()).collect();
        order.sort_by(|&a, &b| {
            made[a][cuts[a]..]
                .cmp(&made[b][cuts[b]..])
                .then_with(|| made[a].cmp(&made[b]))
        });
        let (mut sorted, mut of) = (Vec::<Vec<u8>>::new(), vec![0u32; made.len()]);
        for i in order {
            if sorted.last() != Some(&made[i]) {
                sorted.push(made[i].clone());
            }
            of[i] = (sorted.len() - 1) as u32;
        }
        if newest_last(key, p.prefix) {
            sorted.reverse();
            let last = sorted.len() as u32 - 1;
            for o in &mut of {
                *o = last - *o;
            }
        }
        // Keys sharing a prefix lie together, the salt aside.
        let (mut runs, mut prefixes) = (Vec::new(), Vec::new());
        if p.spread.is_none() {
            prefixes = sorted.iter().map(|k| key.places(k)[p.prefix - 1].end).collect();
            let prefix = |i: usize| &sorted[i][..prefixes[i]];
            let mut from = 0;
            for i in 1..=sorted.len() {
                if i == sorted.len() || prefix(i) != prefix(from) {
                    runs.extend(std::iter::repeat_n((from as u32, i as u32), i - from));
                    from = i;
                }
            }
        }
        let (mut bytes, mut ends) = (
            Vec::with_capacity(sorted.iter().map(Vec::len).sum()),
            Vec::with_capacity(sorted.len()),
        );
        for k in &sorted {
            bytes.extend_from_slice(k);
            ends.push(bytes.len() as u32);
        }
        let at = of
            .iter()
            .map(|&o| {
                let o = o as usize;
                let (from, to) = runs.get(o).copied().unwrap_or((0, 0));
                At {
                    start: if o == 0 { 0 } else { ends[o - 1] },
                    end: ends[o],
                    from,
                    to,
                    prefix: prefixes.get(o).map_or(0, |&e| e as u32),
                }
            })
            .collect();
        let all = Keys { bytes, ends, at };
        if cache.len() >= CACHE_KEYS {
            cache.clear();
        }
        let all = Rc::new(all);
        cache.insert((uid, op), all.clone());
        Ok(all)
    }

    /// Page `depth` (from 1) of the rows sharing `row`'s prefix, `same` being the user's
    /// rows of it in the page's order.
    #[cfg(test)]
    fn page_at(&self, p: &Page, row: &[u8], same: &[Vec<u8>], depth: usize) -> Result<PageCall> {
        let cursor = (!p.offset && depth > 1).then(|| same[(depth - 1) * p.rows - 1].clone());
        let spans = self.key(p.target).spans(row)?;
        Ok(self.page_from(p, &row[..spans[p.prefix - 1].end], &spans, cursor, depth))
    }

    /// Page `depth` of the rows under `prefix`, the first segments of a key whose places
    /// are `spans` (needed only where the page spreads over a salt's buckets): after
    /// `cursor`, or by offset.
    fn page_from(
        &self,
        p: &Page,
        prefix: &[u8],
        spans: &[std::ops::Range<usize>],
        cursor: Option<Vec<u8>>,
        depth: usize,
    ) -> PageCall {
        let key = self.key(p.target);
        let salt = p.spread.map(|(i, _)| spans[i].clone());
        let reversed = newest_last(key, p.prefix);
        // A prefix that is the whole key of a delimited last field reads that row alone,
        // not the rows of longer values that begin with it.
        let exact = p.prefix == key.segments.len() && key.segments[p.prefix - 1].delimited();
        let skip = if p.offset { (depth - 1) * p.rows } else { 0 };
        let scans = self.spread(key, p.spread, spans, prefix, |prefix, bucket| {
            let (start, start_exclusive) = match &cursor {
                Some(c) => (bucket(c), true),
                None if reversed => (keys::next_prefix(prefix), true),
                None => (Vec::new(), false),
            };
            let stop = match () {
                () if reversed => prefix.to_vec(),
                () if exact => [prefix, &[0]].concat(),
                () => Vec::new(),
            };
            Scan {
                prefix: prefix.to_vec(),
                start,
                start_exclusive,
                stop,
                reversed,
                limit: Some(skip + p.rows),
                select: crate::store::Selection {
                    max_versions: p.versions,
                    ..Default::default()
                },
            }
        });
        PageCall {
            table: self.names[p.target.table],
            scans,
            salt,
            reversed,
            skip,
            rows: p.rows,
        }
    }

    /// The first page of `p` for an instance of `entity` whose fields `known` are given (by
    /// their place in the entity), made without the instances: none where the page spreads
    /// over buckets or its prefix holds a field not known.
    fn first_page(&self, p: &Page, entity: Entity, known: &[(Option<usize>, Owned)]) -> Result<Option<PageCall>> {
        let key = self.key(p.target);
        if p.spread.is_some() || known.iter().any(|(at, _)| at.is_none()) {
            return Ok(None);
        }
        // The key's values straight from what is known, the rest zero or empty: only the
        // prefix is encoded, and it must be known whole.
        let mut values: Vec<Value<'_>> = Vec::with_capacity(key.fields.len());
        let mut given = vec![false; key.fields.len()];
        for (f, field) in key.fields.iter().enumerate() {
            let at = entity.field(&field.name);
            values.push(match known.iter().find(|(k, _)| *k == at) {
                Some((_, v)) => {
                    given[f] = true;
                    v.as_value()
                }
                None => match field.kind {
                    crate::design::key::Kind::Int { .. } => Value::Int(0),
                    crate::design::key::Kind::Bytes => Value::Bytes(&[]),
                },
            });
        }
        if !key.segments[..p.prefix]
            .iter()
            .filter_map(Segment::field)
            .all(|f| given[f])
        {
            return Ok(None);
        }
        let prefix = key.prefix(&values, p.prefix)?;
        Ok(Some(self.page_from(p, &prefix, &[], None, 1)))
    }

    /// One scan per bucket of the salt at `spread` (or one scan): `make` is given the
    /// prefix with each bucket's salt, and what puts that bucket into another key of the
    /// same layout (`key` unchanged where there is no salt).
    fn spread(
        &self,
        key: &Key,
        spread: Option<(usize, u32)>,
        spans: &[std::ops::Range<usize>],
        prefix: &[u8],
        make: impl Fn(&[u8], &dyn Fn(&[u8]) -> Vec<u8>) -> Scan,
    ) -> Vec<Scan> {
        let Some((i, n)) = spread else {
            return vec![make(prefix, &|k: &[u8]| k.to_vec())];
        };
        let r = spans[i].clone();
        let Segment::Salt { form, separator, .. } = &key.segments[i] else {
            unreachable!("a page spreads over a salt")
        };
        let with_bucket = |k: &[u8], b: u32| {
            let mut out = k[..r.start].to_vec();
            key::write_bucket(n, *form, b, &mut out);
            out.extend_from_slice(separator);
            out.extend_from_slice(&k[r.end..]);
            out
        };
        (0..n)
            .map(|b| make(&with_bucket(prefix, b), &|k: &[u8]| with_bucket(k, b)))
            .collect()
    }

    /// The rows sharing `pick`'s prefix whose stamp lies in a window of the data's span,
    /// newest first, up to the range's rows.
    fn range(
        &self,
        g: &Generator,
        r: &Range,
        entity: Entity,
        (uid, pick): (u64, &[Owned]),
        s: &Stream,
    ) -> Result<PageCall> {
        let data = &g.workload().data;
        let (from, to) = window(data.start_ms, data.span_ms, r.span_ms, s);
        self.range_of(r, entity, (Some(uid), pick), from, to)
    }

    /// The rows sharing `pick`'s prefix stamped `from..=to`, newest first.
    #[cfg(test)]
    fn range_at(&self, r: &Range, entity: Entity, pick: &[Owned], from: i64, to: i64) -> Result<PageCall> {
        self.range_of(r, entity, (None, pick), from, to)
    }

    /// [`Own::range_at`]; the owner's id, where given, is `uid`, not read from `pick` (whose
    /// values a range keyed by its owner alone does not read: a user's instances are
    /// spread over memory, and reading one is a miss).
    fn range_of(
        &self,
        r: &Range,
        entity: Entity,
        (uid, pick): (Option<u64>, &[Owned]),
        from: i64,
        to: i64,
    ) -> Result<PageCall> {
        let p = &r.page;
        let key = self.key(p.target);
        let at = key.segments[r.stamp].field().expect("a stamp has its field");
        // The key of `pick` at another time, up to its stamp: the fields of the segments
        // before it (the others are not encoded).
        let owner = entity.per_user()[0];
        let used: Vec<usize> = key.segments[..r.stamp].iter().filter_map(Segment::field).collect();
        let mut v: Vec<Value<'_>> = key
            .fields
            .iter()
            .enumerate()
            .map(|(f, field)| match uid {
                Some(uid) if field.name == owner => Value::Int(i128::from(uid)),
                _ if !used.contains(&f) => Value::Int(0),
                _ => pick[entity
                    .field(&field.name)
                    .expect("checked: the entity has the key's fields")]
                .as_value(),
            })
            .collect();
        let mut cut = |t: i64| -> Result<Vec<u8>> {
            v[at] = Value::Int(i128::from(t));
            Ok(key.prefix(&v, r.stamp + 1)?)
        };
        let reversed = newest_last(key, p.prefix);
        // In key order, the window's first and last stamps.
        let (first, last) = if reversed {
            (cut(from)?, cut(to)?)
        } else {
            (cut(to)?, cut(from)?)
        };
        // Where the salt lies, where the range spreads over its buckets.
        let spans = match p.spread {
            Some(_) => key.spans(&self.key_of(p.target, entity, pick)?)?,
            None => Vec::new(),
        };
        let salt = p.spread.map(|(i, _)| spans[i].clone());
        let scans = self.spread(key, p.spread, &spans, &first, |_, bucket| {
            let (low, high) = (bucket(&first), keys::next_prefix(&bucket(&last)));
            let (start, stop) = if reversed { (high, low) } else { (low, high) };
            Scan {
                start,
                start_exclusive: reversed,
                stop,
                reversed,
                limit: Some(p.rows),
                ..Scan::default()
            }
        });
        Ok(PageCall {
            table: self.names[p.target.table],
            scans,
            salt,
            reversed,
            skip: 0,
            rows: p.rows,
        })
    }

    /// A page of the cells of one row: page 1 half the time, else a page deeper in it. Where
    /// the row is a user's ([`users_row`]), the drawn user's, after the cell of a
    /// random user's id, as the seeds' follower and followee lists are read; otherwise the
    /// row of one of the user's instances, after that instance's own cell.
    fn cells(
        &self,
        g: &Generator,
        (c, role): (&Cells, Option<Role>),
        entity: Entity,
        (uid, instances): (u64, &[Vec<Owned>]),
        s: &Stream,
    ) -> Result<OwnCall> {
        let deeper = s.unit(21) >= 0.5;
        if role.is_some() {
            let after = deeper.then(|| s.below(22, g.workload().data.users) + 1);
            return self.cells_of_user(c, uid, after);
        }
        let pick = &instances[s.below(60, instances.len() as u64) as usize];
        self.cells_at(c, entity, pick, deeper)
    }

    /// Whether operation `index` is prepared from the user's instances, not their id alone:
    /// not a followee's list, a write that sets every field of what it makes (a follow), nor
    /// a first timeline page that reads its reader's list when it runs.
    pub fn needs_instances(&self, index: usize) -> bool {
        self.drawn[index] == Drawn::Instances
    }

    /// Whether user `uid` can run operation `index`, where their instances do not tell
    /// (a follower list: a user has one where anyone follows them; anyone writes a new
    /// follow; a timeline's reader follows someone); `None` where they do.
    pub fn has_row(&self, g: &Generator, index: usize, uid: u64) -> Option<bool> {
        match self.drawn[index] {
            Drawn::Instances => None,
            Drawn::Followed => Some(g.plan().followers(uid) > 0),
            // A reader who follows anyone, as the seeds' timeline draws one.
            Drawn::Following => Some(g.out_degree(uid) > 0),
            Drawn::Anyone => Some(true),
        }
    }

    /// A page of the cells of user `uid`'s row, after the cell of user `after`.
    fn cells_of_user(&self, c: &Cells, uid: u64, after: Option<u64>) -> Result<OwnCall> {
        let id = |v: u64| [Value::Int(i128::from(v))];
        let row = self.key(c.target).encode(&id(uid))?;
        self.cells_page(c, row, after.map(|a| move |q: &Key| Ok(q.encode(&id(a))?)))
    }

    /// A page of the cells of `pick`'s row: the first, or the one after `pick`'s own cell.
    fn cells_at(&self, c: &Cells, entity: Entity, pick: &[Owned], after: bool) -> Result<OwnCall> {
        let row = self.key_of(c.target, entity, pick)?;
        self.cells_page(
            c,
            row,
            after.then_some(|q: &Key| Ok(q.encode(&key_values(q, entity, pick))?)),
        )
    }

    /// A page of `c`'s cells of `row`: the first, or the one after the qualifier `after`
    /// makes by the family's qualifier.
    fn cells_page(
        &self,
        c: &Cells,
        row: Vec<u8>,
        after: Option<impl FnOnce(&Key) -> Result<Vec<u8>>>,
    ) -> Result<OwnCall> {
        let mut get = Get::new(row).columns(vec![Column::family(&c.family)]);
        get.select.cell_limit = Some(c.rows);
        if let Some(after) = after {
            let cell = self.design.tables[c.target.table].rows[c.target.rows]
                .cells
                .iter()
                .find(|x| x.family == c.family)
                .expect("checked: the rows hold the family's cells");
            if let Part::Segments(q) = &cell.qualifier {
                get.select.qualifier_after = Some(after(q)?);
            }
        }
        Ok(OwnCall::Cells {
            table: self.names[c.target.table],
            get,
        })
    }

    /// A timeline of the reader whose follows are `follows`: the inbox's page (drawn as its
    /// lookup's is), and the first page of each source's rows.
    fn timeline(
        &self,
        g: &Generator,
        (op, t): (usize, &Timeline),
        (reader, follows): (u64, &[Vec<Owned>]),
        s: &Stream,
        x: &mut crate::generate::Scratch,
    ) -> Result<OwnCall> {
        let uid = i128::from(reader);
        let target = t.page.target;
        let entity = self.design.tables[target.table].rows[target.rows]
            .entity
            .expect("checked");
        let stamp = self.key(target).segments[t.stamp]
            .field()
            .expect("a stamp has its field");
        let at = entity
            .field(&self.key(target).fields[stamp].name)
            .expect("checked: the entity has the key's fields");
        let before = t.later.then(|| self.later_start(g, t, follows, (entity, at), s, x));
        let inbox = match t.inbox {
            Some(i) => {
                let Does::Lookup { index, .. } = &self.design.operations[i].does else {
                    unreachable!("checked: an inbox is a lookup")
                };
                let entity = self.design.operations[i].entity(&self.design);
                let reader = [(entity.field("reader"), Owned::Int(uid))];
                // Its first page: no instances to draw a depth from.
                let first = match self.first_page(index, entity, &reader)? {
                    Some(page) => Some(page),
                    None => match g.instances(uid as u64, entity, x).first() {
                        Some(pick) => Some(self.page(index, entity, pick, NO_KEYS, s)?),
                        None => None,
                    },
                };
                match first {
                    Some(mut page) => {
                        // A later page: the inbox's cells stamped before it, as many versions
                        // of each as the lookup reads.
                        if let Some(b) = before {
                            for scan in &mut page.scans {
                                scan.select.time_range = Some((0, b.max(0)));
                            }
                        }
                        Some((page, i))
                    }
                    None => None,
                }
            }
            None => None,
        };
        let pulls = match &t.follows {
            Some((list, _)) => Pulls::Listed {
                op,
                table: self.names[list.table],
                row: self.key_of(*list, Entity::Follow, &[Owned::Int(uid), Owned::Int(0), Owned::Int(0)])?,
            },
            None => {
                let followee = Entity::Follow.field("followee").expect("a follow's followee");
                let mut pulls = Vec::new();
                for f in follows {
                    let Owned::Int(source) = f[followee] else { continue };
                    if let Some(page) = self.source_page(g, t, source, x)? {
                        pulls.push(page);
                    }
                }
                Pulls::Made(pulls)
            }
        };
        Ok(OwnCall::Timeline {
            inbox,
            pulls,
            table: self.names[target.table],
            target,
            stamp,
            rows: t.page.rows,
            before,
        })
    }

    /// The first page of timeline `t`'s source `source`, read whether or not it has rows, as
    /// a client does; none for a source not pulled (not a celebrity, on a timeline of
    /// celebrities) or without rows to name its prefix by.
    fn source_page(
        &self,
        g: &Generator,
        t: &Timeline,
        source: i128,
        x: &mut crate::generate::Scratch,
    ) -> Result<Option<PageCall>> {
        if t.sources == Sources::Celebrities && !self.is_celebrity(g, source as u64) {
            return Ok(None);
        }
        let target = t.page.target;
        let entity = self.design.tables[target.table].rows[target.rows]
            .entity
            .expect("checked");
        let first = Page {
            rows: t.per_source,
            ..t.page
        };
        let by = entity.field(&self.key(target).fields[t.by].name);
        if let Some(page) = self.first_page(&first, entity, &[(by, Owned::Int(source))])? {
            return Ok(Some(page));
        }
        // A prefix of other fields than the source's: named by one of its rows.
        match g.instances(source as u64, entity, x).first() {
            Some(pick) => {
                let row = self.key_of(target, entity, pick)?;
                let spans = self.key(target).spans(&row)?;
                let end = spans[first.prefix - 1].end;
                Ok(Some(self.page_from(&first, &row[..end], &spans, None, 1)))
            }
            None => Ok(None),
        }
    }

    /// Each cell of the list `row` of `table` whose family is `family`, a page of the list
    /// at a time, as seed 001 reads a relation row.
    fn each_listed(
        &self,
        table: &str,
        row: &[u8],
        family: &str,
        mut visit: impl FnMut(&crate::store::Cell) -> Result<()>,
    ) -> Result<()> {
        let mut after = None;
        loop {
            let mut get = Get::new(row.to_vec()).columns(vec![Column::family(family)]);
            get.select.qualifier_after = after.take();
            get.select.cell_limit = Some(LIST_PAGE);
            let cells = self
                .store
                .get(table, &[get])?
                .pop()
                .flatten()
                .map(|r| r.cells)
                .unwrap_or_default();
            for c in &cells {
                visit(c)?;
            }
            if cells.len() < LIST_PAGE {
                return Ok(());
            }
            after = cells.last().map(|c| c.qualifier.clone());
        }
    }

    /// The first pages of the followees a timeline's list names.
    fn listed_pulls(&self, g: &Generator, op: usize, table: &str, row: &[u8]) -> Result<Vec<PageCall>> {
        let Does::Timeline(t) = &self.design.operations[op].does else {
            unreachable!("a timeline's operation")
        };
        let Some((list, family)) = &t.follows else {
            unreachable!("a listed timeline names its list")
        };
        if t.sources == Sources::Celebrities && !self.any_celebrity(g) {
            return Ok(Vec::new());
        }
        let q = self.qualifier_key(*list, family);
        let at = q.field("followee").expect("checked: named by the followee");
        let mut x = crate::generate::Scratch::default();
        let mut pulls = Vec::new();
        self.each_listed(table, row, family, |c| {
            let Owned::Int(source) = q.decode(&c.qualifier)?.swap_remove(at).1 else {
                unreachable!("a followee is an integer")
            };
            if let Some(page) = self.source_page(g, t, source, &mut x)? {
                pulls.push(page);
            }
            Ok(())
        })?;
        Ok(pulls)
    }

    /// The key of the qualifiers of `family` in the rows `list`, which a list's cells are
    /// named by.
    fn qualifier_key(&self, list: Target, family: &str) -> &Key {
        let cell = self.design.tables[list.table].rows[list.rows]
            .cells
            .iter()
            .find(|c| c.family == family && matches!(&c.qualifier, Part::Segments(_)))
            .expect("checked: a cell of the family named by fields");
        let Part::Segments(q) = &cell.qualifier else {
            unreachable!("found so")
        };
        q
    }

    /// Where a later page of a timeline starts: the time of one of the `per_source` newest
    /// rows of one of the reader's followees (up to four drawn until one has rows), as the
    /// last row of an earlier page would be; the middle of the data's span if none has.
    fn later_start(
        &self,
        g: &Generator,
        t: &Timeline,
        follows: &[Vec<Owned>],
        (entity, at): (Entity, usize),
        s: &Stream,
        x: &mut crate::generate::Scratch,
    ) -> i64 {
        let followee = Entity::Follow.field("followee").expect("a follow's followee");
        for k in 0..4 {
            let f = &follows[s.below(40 + k, follows.len() as u64) as usize];
            let Owned::Int(source) = f[followee] else { continue };
            let stamps = g.newest_of(source as u64, entity, at, t.per_source, x);
            if stamps.is_empty() {
                continue;
            }
            let n = s.below(44, t.per_source as u64) as usize;
            return stamps[n.min(stamps.len() - 1)] as i64;
        }
        let data = &g.workload().data;
        data.start_ms + data.span_ms / 2
    }

    /// Runs a prepared call; `g` makes the rows a write delivers.
    pub fn execute(&self, g: &Generator, call: &OwnCall) -> Result<()> {
        match call {
            OwnCall::Deliver { write, then } => {
                self.write(write)?;
                match then {
                    Delivery::Fanout { .. } => self.fan_out(g, then)?,
                    Delivery::Backfill { .. } => self.backfill(g, then)?,
                }
            }
            OwnCall::Get { table, row } => self.store.get(table, &[Get::new(row.clone())]).map(drop)?,
            OwnCall::Page(p) => drop(self.read_page(p)?),
            OwnCall::Cells { table, get } => self.store.get(table, std::slice::from_ref(get)).map(drop)?,
            OwnCall::Lookup {
                index,
                family,
                qualifier,
                then,
            } => {
                let gets: Vec<Get> = self
                    .read_page(index)?
                    .into_iter()
                    .flat_map(|r| r.cells)
                    .filter(|c| &c.family == family && qualifier.as_ref().is_none_or(|q| *q == c.qualifier))
                    .map(|c| Get::new(c.value))
                    .collect();
                if !gets.is_empty() {
                    self.store.get(then, &gets)?;
                }
            }
            OwnCall::Write(tables) => self.write(tables)?,
            OwnCall::Timeline { table, .. } => {
                let gets: Vec<Get> = self
                    .timeline_rows(g, call)?
                    .into_iter()
                    .filter(|(_, _, read)| !read)
                    .map(|(_, k, _)| Get::new(k))
                    .collect();
                if !gets.is_empty() {
                    self.store.get(table, &gets)?;
                }
            }
            OwnCall::Refused(why) => return Err(crate::store::Error::BadArgument(why.clone()).into()),
        }
        Ok(())
    }

    /// What a timeline shows, newest first: each row's stamp, key, and whether its page
    /// read it already (a source's) or it is still to get (the inbox named it).
    fn timeline_rows(&self, g: &Generator, call: &OwnCall) -> Result<Vec<(i128, Vec<u8>, bool)>> {
        let OwnCall::Timeline {
            inbox,
            pulls,
            target,
            stamp,
            rows,
            before,
            ..
        } = call
        else {
            unreachable!("a timeline's call")
        };
        let key = self.key(*target);
        let stamp_of = |k: &[u8]| -> Result<i128> {
            match key.decode(k)?.swap_remove(*stamp).1 {
                Owned::Int(v) => Ok(v),
                Owned::Bytes(_) => unreachable!("a stamp is an integer"),
            }
        };
        let mut merged: Vec<(i128, Vec<u8>, bool)> = Vec::new();
        if let Some((page, lookup)) = inbox {
            let Does::Lookup { family, qualifier, .. } = &self.design.operations[*lookup].does else {
                unreachable!("checked: an inbox is a lookup")
            };
            for r in self.read_page(page)? {
                for c in r.cells {
                    if &c.family == family && qualifier.as_ref().is_none_or(|q| *q == c.qualifier) {
                        merged.push((stamp_of(&c.value)?, c.value, false));
                    }
                }
            }
        }
        let listed;
        let pulls = match pulls {
            Pulls::Made(pulls) => pulls,
            Pulls::Listed { op, table, row } => {
                listed = self.listed_pulls(g, *op, table, row)?;
                &listed
            }
        };
        for p in pulls {
            for r in self.read_page(p)? {
                let at = stamp_of(&r.key)?;
                if before.is_none_or(|b| at < i128::from(b)) {
                    merged.push((at, r.key, true));
                }
            }
        }
        // Newest first; of one time, the greater key first, as seed 001's merge orders them.
        merged.sort_by(|a, b| b.0.cmp(&a.0).then_with(|| b.1.cmp(&a.1)));
        merged.dedup_by(|a, b| a.1 == b.1);
        merged.truncate(*rows);
        Ok(merged)
    }

    /// A page's rows: one scan's, or each bucket's merged in order of what follows the salt;
    /// then the rows a page by offset skips dropped.
    fn read_page(&self, p: &PageCall) -> Result<Vec<Row>> {
        let mut rows = match &p.salt {
            None => self.store.scan(p.table, &p.scans[0])?,
            Some(salt) => {
                let mut rows = Vec::new();
                for scan in &p.scans {
                    rows.extend(self.store.scan(p.table, scan)?);
                }
                rows.sort_by(|a, b| a.key[salt.end..].cmp(&b.key[salt.end..]));
                if p.reversed {
                    rows.reverse();
                }
                rows
            }
        };
        rows.drain(..p.skip.min(rows.len()));
        rows.truncate(p.rows);
        Ok(rows)
    }
}

/// The run's user picker for `g`'s workload, as the run makes it.
#[cfg(test)]
fn users(g: &Generator) -> super::pick::Users {
    let w = g.workload();
    super::pick::Users::new(w.run.skew, w.run.skew_exponent, w.data.users)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::generate::rng::{Kind, Rng};
    use crate::store::memory::Memory;

    /// Posts keyed by a salt of their stamp, the user, the stamp reversed: a user's posts
    /// lie in all four buckets, and a page by user reads each and merges them newest first.
    const DESIGN: &str = r#"
        [tables.posts]
        name = "t:posts"
        families = ["p"]
        entity = "post"
        key = [{ salt = "stamp", buckets = 4 }, { int = "uid", bytes = 8 }, { stamp = "stamp", order = "reverse" }]
        cells = [{ family = "p", qualifier = "c", value = [{ text = "content" }] }]

        [operations.newest]
        page = "posts"
        by = ["uid"]
        buckets = "all"
        rows = 5

        [operations.window]
        range = "posts"
        by = ["uid"]
        buckets = "all"
        span = "4ms"
        rows = 3
    "#;

    fn post(uid: i128, stamp: i128) -> Vec<Owned> {
        vec![Owned::Int(uid), Owned::Int(stamp), Owned::Bytes(b"x".to_vec())]
    }

    #[test]
    fn a_page_and_a_range_over_salt_buckets_merge_them_newest_first() {
        let design = Design::parse(DESIGN).unwrap();
        let Does::Page(page) = design.operations[0].does.clone() else {
            panic!("a page")
        };
        assert_eq!((page.prefix, page.spread), (2, Some((0, 4))));
        let store: Arc<dyn Store> = Arc::new(Memory::new());
        store.create_table(&design.descriptors()[0]).unwrap();
        let key = &design.tables[0].rows[0].key;
        // User 7's twelve posts and user 8's three, at stamps whose salts differ.
        let mut instances = Vec::new();
        let mut rows = Vec::new();
        for (uid, stamps) in [(7, 1000..1012), (8, 1000..1003)] {
            for stamp in stamps {
                let v = post(uid, stamp);
                let k = key.encode(&key_values(key, Entity::Post, &v)).unwrap();
                rows.push(RowMutation::new(
                    k,
                    vec![Mutation::Put {
                        family: "p".into(),
                        qualifier: b"c".to_vec(),
                        timestamp: Some(1),
                        value: b"x".to_vec(),
                    }],
                ));
                if uid == 7 {
                    instances.push(v);
                }
            }
        }
        store.mutate("t:posts", &rows).unwrap();
        let own = Own {
            design,
            names: vec!["t:posts"],
            store,
            changed: Mutex::default(),
            fresh: AtomicU64::new(0),
            users: super::super::pick::Users::new(crate::workload::Skew::Uniform, 1.0, 7),
            celebrities: None,
            roles: Vec::new(),
            drawn: vec![Drawn::Instances; 2],
        };
        let stamps = |rows: &[Row]| -> Vec<i64> {
            rows.iter()
                .map(|r| i64::MAX - i64::from_be_bytes(r.key[9..17].try_into().unwrap()))
                .collect()
        };
        let rng = Rng::new(5);
        let mut seen = std::collections::BTreeSet::new();
        for i in 0..64 {
            let s = rng.stream(Kind::Post, i, 0);
            let all = own
                .keys_of(0, &page, Entity::Post, (7, &instances), &mut FxHashMap::default())
                .unwrap();
            let call = own.page(&page, Entity::Post, &instances[0], &*all, &s).unwrap();
            assert_eq!(call, own.page_of(&page, all.row(0), &*all, all.run(0), &s));
            for (i, v) in instances.iter().enumerate() {
                assert_eq!(all.row(i), own.key_of(page.target, Entity::Post, v).unwrap());
            }
            assert_eq!(call.scans.len(), 4, "one scan per bucket");
            let got = stamps(&own.read_page(&call).unwrap());
            // Newest first, five of user 7's: from the top, or after a cursor at a page's end.
            let first = got[0];
            assert!([1011, 1006, 1001].contains(&first), "{got:?}");
            let expect: Vec<i64> = (0..5).map(|k| first - k).filter(|s| *s >= 1000).collect();
            assert_eq!(got, expect);
            seen.insert(first);
        }
        assert!(
            seen.contains(&1011) && seen.len() > 1,
            "page 1 and deeper pages: {seen:?}"
        );
        // A range over the same buckets: the user's rows stamped in the window, newest
        // first, at most its rows, whether the owner comes from the instance or the draw.
        let Does::Range(range) = own.design.operations[1].does.clone() else {
            panic!("a range")
        };
        assert_eq!(range.page.spread, Some((0, 4)));
        for (from, to) in [(1000, 1003), (1004, 1011), (1009, 1020), (990, 999)] {
            let call = own.range_at(&range, Entity::Post, &instances[3], from, to).unwrap();
            assert_eq!(call.scans.len(), 4, "one scan per bucket");
            let drawn = own
                .range_of(&range, Entity::Post, (Some(7), &instances[3]), from, to)
                .unwrap();
            assert_eq!(drawn, call);
            let expect: Vec<i64> = (from.max(1000)..=to.min(1011)).rev().take(3).collect();
            assert_eq!(stamps(&own.read_page(&call).unwrap()), expect, "{from}..={to}");
        }
    }

    /// A microblog of the workload's own: posts keyed by author and reversed stamp, and an
    /// inbox row per reader gathering the keys of its non-celebrity followees' newest posts.
    const MICROBLOG: &str = r#"
        [tables.posts]
        name = "m:posts"
        families = ["p"]
        entity = "post"
        key = [{ int = "uid", bytes = 8 }, { stamp = "stamp" }]
        cells = [{ family = "p", qualifier = "c", value = [{ text = "content" }], timestamp = "stamp" }]

        [tables.inbox]
        name = "m:inbox"
        families = ["i"]
        entity = "delivery"
        key = [{ int = "reader", bytes = 8 }]
        cells = [{ family = "i", qualifier = [{ int = "uid", bytes = 8 }, { stamp = "stamp" }], value = { key = "posts" }, timestamp = "stamp" }]

        [operations.inbox]
        lookup = "inbox"
        by = ["reader"]
        rows = 1
        then = "posts"

        [operations.pull]
        timeline = "posts"
        by = ["uid"]
        rows = 10

        [operations.home]
        timeline = "posts"
        by = ["uid"]
        rows = 10
        sources = "celebrities"
        inbox = "inbox"
    "#;

    /// Each timeline shows what a reader would compute from the generator: the pull, the
    /// newest 10 of every followee's newest 10; the home timeline, the newest 10 of the
    /// inbox's posts and each celebrity followee's newest 10.
    #[test]
    fn a_new_instance_is_the_picked_one_with_its_times_owner_and_followee_set() {
        for entity in Entity::ALL {
            let uid = 7u64;
            let owner = entity.field(entity.per_user()[0]).unwrap();
            let pick: Vec<Owned> = entity
                .fields()
                .iter()
                .enumerate()
                .map(|(i, (_, kind))| match kind {
                    _ if i == owner => Owned::Int(i128::from(uid)),
                    crate::design::FieldKind::Int => Owned::Int(1000 + i as i128),
                    crate::design::FieldKind::Bytes => Owned::Bytes(format!("field {i}").into_bytes()),
                })
                .collect();
            let (mut made, mut want) = (anew(&pick, entity, uid), now_at(&pick, entity, entity.times()));
            for f in entity.times() {
                let f = entity.field(f).unwrap();
                assert!(made[f] >= pick[f] && want[f] >= pick[f], "{entity:?}: the write's time");
                (made[f], want[f]) = (Owned::Int(0), Owned::Int(0));
            }
            if entity == Entity::Follow {
                assert_eq!(made[1], Owned::Int(0), "a followee to be drawn");
                made[1] = want[1].clone();
            }
            assert_eq!(made, want, "{entity:?}");
            // A write of what copies nothing is made from no instance at all.
            if !copies(entity) {
                assert_eq!(anew(&[], entity, uid).len(), pick.len());
            }
        }
        assert!(!copies(Entity::Follow) && copies(Entity::Post) && copies(Entity::Action));
    }

    #[test]
    fn timelines_merge_their_sources_newest_first() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("designs")).unwrap();
        std::fs::write(dir.path().join("designs/m.toml"), MICROBLOG).unwrap();
        let path = dir.path().join("m.toml");
        std::fs::write(
            &path,
            "name = \"m\"\nseed = 3\ndesign = \"designs/m.toml\"\n[data]\nusers = 40\n\
             start = 2026-01-01T00:00:00Z\nspan_days = 30\n[data.follows]\nmean = 6.0\n\
             [data.posts]\nper_month = 20.0\n[microblog]\ninbox_versions = 3\ncelebrity_threshold = 5\n",
        )
        .unwrap();
        let w = crate::workload::Workload::from_file(&path).unwrap();
        let g = Generator::new(&w);
        let store: Arc<dyn Store> = Arc::new(Memory::new());
        for t in g.tables() {
            store.create_table(&t).unwrap();
        }
        let mut x = crate::generate::Scratch::default();
        let mut ox = Scratch::default();
        for uid in 1..=40 {
            let mut rows: Vec<(crate::generate::Table, RowMutation)> = Vec::new();
            g.emit_user_rows(uid, &mut x, &mut rows).unwrap();
            for (t, r) in rows {
                store.mutate(t.name(), &[r]).unwrap();
            }
        }
        let own = Own::new(&g, store, users(&g)).unwrap();
        let key = |uid: u64, stamp: i64| [uid.to_be_bytes(), (i64::MAX - stamp).to_be_bytes()].concat();
        // A user's posts' stamps, newest first.
        let posts = |uid: u64, x: &mut crate::generate::Scratch| -> Vec<i64> {
            let mut v: Vec<i64> = g
                .instances(uid, Entity::Post, x)
                .iter()
                .map(|p| match p[1] {
                    Owned::Int(s) => s as i64,
                    Owned::Bytes(_) => unreachable!(),
                })
                .collect();
            v.sort_by(|a, b| b.cmp(a));
            v
        };
        let newest = |mut v: Vec<(i64, Vec<u8>)>| -> Vec<Vec<u8>> {
            v.sort_by(|a, b| b.0.cmp(&a.0).then_with(|| b.1.cmp(&a.1)));
            v.dedup_by(|a, b| a.1 == b.1);
            v.into_iter().take(10).map(|(_, k)| k).collect()
        };
        let rng = Rng::new(9);
        let (mut stars, mut inboxes) = (0, 0);
        for uid in 1..=40u64 {
            let follows = g.instances(uid, Entity::Follow, &mut x);
            if follows.is_empty() {
                continue;
            }
            let followees: Vec<u64> = follows
                .iter()
                .map(|f| match f[1] {
                    Owned::Int(v) => v as u64,
                    Owned::Bytes(_) => unreachable!(),
                })
                .collect();
            let s = rng.stream(Kind::User, uid, 0);
            // The pull.
            let mut pulled = Vec::new();
            for &f in &followees {
                pulled.extend(posts(f, &mut x).into_iter().take(10).map(|st| (st, key(f, st))));
            }
            let call = own.prepare(&g, 1, (uid, &follows), &s, &mut ox).unwrap();
            let got: Vec<Vec<u8>> = own
                .timeline_rows(&g, &call)
                .unwrap()
                .into_iter()
                .map(|(_, k, _)| k)
                .collect();
            assert_eq!(got, newest(pulled), "user {uid}'s pull");
            // The home timeline: the inbox's deliveries, and the celebrities' pages.
            let mut home: Vec<(i64, Vec<u8>)> = g
                .instances(uid, Entity::Delivery, &mut x)
                .iter()
                .map(|d| match (&d[1], &d[2]) {
                    (Owned::Int(u), Owned::Int(st)) => (*st as i64, key(*u as u64, *st as i64)),
                    _ => unreachable!(),
                })
                .collect();
            inboxes += usize::from(!home.is_empty());
            for &f in followees.iter().filter(|&&f| g.plan().is_celebrity(f)) {
                stars += 1;
                home.extend(posts(f, &mut x).into_iter().take(10).map(|st| (st, key(f, st))));
            }
            let call = own.prepare(&g, 2, (uid, &follows), &s, &mut ox).unwrap();
            let shown = own.timeline_rows(&g, &call).unwrap();
            let got: Vec<Vec<u8>> = shown.iter().map(|(_, k, _)| k.clone()).collect();
            assert_eq!(got, newest(home), "user {uid}'s home timeline");
            own.execute(&g, &call).unwrap();
        }
        assert!(
            stars > 0 && inboxes > 0,
            "celebrities followed ({stars}) and inboxes read ({inboxes})"
        );
    }
}

/// The shipped seed descriptions' operations read what the seed DAOs read: the same rows,
/// in the same order, from a store the description loaded, for every user and page.
#[cfg(test)]
mod seed_operations {
    use super::*;
    use crate::generate::rng::{Kind, Rng};
    use crate::store::memory::Memory;

    /// A workload of the shipped design `file` (its text changed by `edit`) over 40 users,
    /// loaded into a memory store.
    fn loaded(file: &str, edit: impl Fn(String) -> String, body: &str) -> (Generator, Arc<dyn Store>, Own) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("w.toml");
        let shipped = format!("{}/workloads/designs/{file}.toml", env!("CARGO_MANIFEST_DIR"));
        let design = dir.path().join("d.toml");
        std::fs::write(&design, edit(std::fs::read_to_string(shipped).unwrap())).unwrap();
        std::fs::write(
            &path,
            format!(
                "name = \"s\"\nseed = 11\ndesign = {design:?}\n[data]\nusers = 40\n\
                 start = 2026-01-01T00:00:00Z\nspan_days = 30\n{body}"
            ),
        )
        .unwrap();
        let w = crate::workload::Workload::from_file(&path).unwrap();
        let g = Generator::new(&w);
        let store: Arc<dyn Store> = Arc::new(Memory::new());
        for t in g.tables() {
            crate::store::ensure_table(&*store, &t).unwrap();
        }
        let mut x = crate::generate::Scratch::default();
        for uid in 1..=w.data.users {
            let mut rows: Vec<(crate::generate::Table, RowMutation)> = Vec::new();
            g.emit_user_rows(uid, &mut x, &mut rows).unwrap();
            for (t, r) in rows {
                store.mutate(t.name(), &[r]).unwrap();
            }
        }
        let own = Own::new(&g, store.clone(), users(&g)).unwrap();
        (g, store, own)
    }

    /// The design's operation `name`.
    fn op<'o>(own: &'o Own, name: &str) -> &'o Does {
        &own.design.operations.iter().find(|o| o.name == name).unwrap().does
    }

    /// The integer fields of each row's key, in the key's order.
    fn fields(own: &Own, t: Target, keys: impl IntoIterator<Item = Vec<u8>>) -> Vec<Vec<i128>> {
        keys.into_iter()
            .map(|k| {
                own.key(t)
                    .decode(&k)
                    .unwrap()
                    .into_iter()
                    .filter_map(|(_, v)| match v {
                        Owned::Int(i) => Some(i),
                        Owned::Bytes(_) => None,
                    })
                    .collect()
            })
            .collect()
    }

    fn int(v: &Owned) -> i128 {
        match v {
            Owned::Int(i) => *i,
            Owned::Bytes(_) => panic!("an integer field"),
        }
    }

    /// A page's row keys at every depth, with the user's rows of its prefix.
    fn pages(own: &Own, p: &Page, entity: Entity, instances: &[Vec<Owned>]) -> Vec<(PageCall, Vec<Vec<u8>>)> {
        let row = own.key_of(p.target, entity, &instances[0]).unwrap();
        let s = Rng::new(1).stream(Kind::User, 0, 0);
        // The user's rows of the prefix, as the page draws its cursor from them.
        let keys = own
            .keys_of(0, p, entity, (0, instances), &mut FxHashMap::default())
            .unwrap();
        // Each instance's own key is where the cache says, and the run of keys sharing its
        // prefix found as bisection finds it, as the prepared pages take them.
        for (i, v) in instances.iter().enumerate() {
            assert_eq!(keys.row(i), own.key_of(p.target, entity, v).unwrap());
            let s = Rng::new(3).stream(Kind::User, i as u64, 0);
            assert_eq!(
                own.page_of(p, keys.row(i), &*keys, keys.run(i), &s),
                own.page_of(p, keys.row(i), &*keys, None, &s)
            );
        }
        let mut all = own.page(p, entity, &instances[0], &*keys, &s).unwrap();
        all.rows = usize::MAX;
        all.skip = 0;
        for scan in &mut all.scans {
            scan.limit = None;
            scan.start = if scan.reversed {
                keys::next_prefix(&scan.prefix)
            } else {
                Vec::new()
            };
            scan.start_exclusive = scan.reversed;
        }
        let same: Vec<Vec<u8>> = own.read_page(&all).unwrap().into_iter().map(|r| r.key).collect();
        (1..=same.len().div_ceil(p.rows).max(1))
            .map(|depth| {
                let call = own.page_at(p, &row, &same, depth).unwrap();
                let keys = own.read_page(&call).unwrap().into_iter().map(|r| r.key).collect();
                (call, keys)
            })
            .collect()
    }

    #[test]
    fn the_actions_description_pages_and_ranges_as_seeds_000_and_003() {
        for order in ["reverse", "forward"] {
            let (g, store, own) = loaded(
                "actions",
                |d| d.replace("order = \"reverse\"", &format!("order = \"{order}\"")),
                "[data.follows]\n[data.posts]\nper_month = 10.0\n[data.actions]\nper_user = 40.0\n",
            );
            let w = g.workload();
            let opts = crate::keys::KeyOptions {
                order: if order == "forward" {
                    keys::Order::Forward
                } else {
                    keys::Order::Reverse
                },
                ..w.keys.actions
            };
            let dao = crate::schema::actions::Actions::new(store.clone(), opts);
            let (Does::Page(cursor), Does::Page(offset), Does::Range(range)) = (
                op(&own, "actions_cursor"),
                op(&own, "actions_offset"),
                op(&own, "actions_range"),
            ) else {
                panic!("the actions description's operations")
            };
            let mut x = crate::generate::Scratch::default();
            let (mut deep, mut ranged) = (0, 0);
            for uid in 1..=w.data.users {
                let mine = g.instances(uid, Entity::Action, &mut x);
                if mine.is_empty() {
                    continue;
                }
                let action = |a: &crate::schema::actions::Action| {
                    vec![i128::from(a.userid), i128::from(a.stamp), i128::from(a.actionid)]
                };
                let t = cursor.target;
                for (depth, (_, keys)) in pages(&own, cursor, Entity::Action, &mine).into_iter().enumerate() {
                    let at = depth * 10;
                    let seed: Vec<Vec<i128>> = dao
                        .page_by_offset(uid as i32, at, 10)
                        .unwrap()
                        .iter()
                        .map(action)
                        .collect();
                    assert_eq!(fields(&own, t, keys), seed, "{order}: user {uid}'s page {}", depth + 1);
                    deep += usize::from(depth > 0);
                }
                for (depth, (call, keys)) in pages(&own, offset, Entity::Action, &mine).into_iter().enumerate() {
                    assert_eq!(call.skip, depth * 10, "a page by offset skips the pages before it");
                    let seed: Vec<Vec<i128>> = dao
                        .page_by_offset(uid as i32, depth * 10, 10)
                        .unwrap()
                        .iter()
                        .map(action)
                        .collect();
                    assert_eq!(
                        fields(&own, t, keys),
                        seed,
                        "{order}: user {uid}'s page {} by offset",
                        depth + 1
                    );
                }
                let data = &w.data;
                for k in 0..4 {
                    let from = data.start_ms + k * (data.span_ms / 4);
                    let to = from + 7 * 86_400_000 - 1;
                    let call = own.range_at(range, Entity::Action, &mine[0], from, to).unwrap();
                    // A run's range takes its owner from the user drawn, not the instance.
                    let drawn = own.range_of(range, Entity::Action, (Some(uid), &mine[0]), from, to);
                    assert_eq!(drawn.unwrap(), call);
                    let got = fields(&own, t, own.read_page(&call).unwrap().into_iter().map(|r| r.key));
                    let seed: Vec<Vec<i128>> = dao
                        .range(uid as i32, from, to, 100)
                        .unwrap()
                        .iter()
                        .map(action)
                        .collect();
                    assert_eq!(got, seed, "{order}: user {uid}'s actions in [{from}, {to}]");
                    ranged += usize::from(!seed.is_empty());
                }
            }
            assert!(
                deep > 10 && ranged > 10,
                "{order}: {deep} deeper pages, {ranged} ranges with rows"
            );
        }
    }

    #[test]
    fn the_series_description_reads_a_day_as_seed_004() {
        let (g, store, own) = loaded("series", |d| d, "[data.series]\nper_user = 200.0\n");
        let w = g.workload();
        let dao = crate::schema::series::Series::new(store, w.keys.series);
        let Does::Range(range) = op(&own, "series_range") else {
            panic!("a range")
        };
        assert_eq!(range.span_ms, 86_400_000);
        let mut x = crate::generate::Scratch::default();
        let mut ranged = 0;
        for uid in 1..=w.data.users {
            let mine = g.instances(uid, Entity::Point, &mut x);
            if mine.is_empty() {
                continue;
            }
            let s = Rng::new(3).stream(Kind::User, uid, 0);
            for k in 0..6 {
                let (from, to) = window(w.data.start_ms, w.data.span_ms, range.span_ms, &s.child(k));
                let call = own.range_at(range, Entity::Point, &mine[0], from, to).unwrap();
                let drawn = own.range_of(range, Entity::Point, (Some(uid), &mine[0]), from, to);
                assert_eq!(drawn.unwrap(), call);
                let got = fields(
                    &own,
                    range.page.target,
                    own.read_page(&call).unwrap().into_iter().map(|r| r.key),
                );
                let seed: Vec<Vec<i128>> = dao
                    .range(uid as i32, from, to, 100)
                    .unwrap()
                    .iter()
                    .map(|p| vec![i128::from(p.userid), i128::from(p.time), i128::from(p.nanos)])
                    .collect();
                assert_eq!(got, seed, "user {uid}'s points in [{from}, {to}]");
                ranged += usize::from(!seed.is_empty());
            }
        }
        assert!(ranged > 20, "{ranged} ranges with points");
    }

    #[test]
    fn the_blog_description_pages_a_category_as_seed_002() {
        let (g, store, own) = loaded("blog", |d| d, "[data.articles]\nper_user = 30.0\ncategories = 2\n");
        let w = g.workload();
        let dao = crate::schema::blog::Blog::new(store, w.keys.blog);
        let Does::Page(p) = op(&own, "category") else {
            panic!("a page")
        };
        let mut x = crate::generate::Scratch::default();
        let mut deep = 0;
        for uid in 1..=w.data.users {
            let mine = g.instances(uid, Entity::Article, &mut x);
            for category in [0, 1] {
                let of: Vec<Vec<Owned>> = mine.iter().filter(|a| int(&a[2]) == category).cloned().collect();
                if of.is_empty() {
                    continue;
                }
                let mut cursor: Option<Vec<u8>> = None;
                for (depth, (_, keys)) in pages(&own, p, Entity::Article, &of).into_iter().enumerate() {
                    let seed = dao
                        .list_category(uid as i64, category as i32, cursor.as_deref(), 10)
                        .unwrap();
                    let want: Vec<Vec<i128>> = seed
                        .items
                        .iter()
                        .map(|a| {
                            vec![
                                i128::from(a.uid),
                                i128::from(a.category),
                                i128::from(a.post_at),
                                i128::from(a.article_id),
                            ]
                        })
                        .collect();
                    // The description's key holds the uid twice: once in its hash.
                    let got: Vec<Vec<i128>> = fields(&own, p.target, keys.clone())
                        .into_iter()
                        .map(|f| f[f.len() - 4..].to_vec())
                        .collect();
                    assert_eq!(got, want, "user {uid}'s category {category}, page {}", depth + 1);
                    cursor = keys.last().cloned();
                    deep += usize::from(depth > 0);
                }
            }
        }
        assert!(deep > 5, "{deep} deeper pages");
    }

    #[test]
    fn the_microblog_description_reads_timelines_posts_and_lists_as_seed_001() {
        let (g, store, own) = loaded(
            "microblog",
            |d| d,
            "[data.follows]\nmean = 8.0\n[data.posts]\nper_month = 20.0\n\
             [microblog]\ninbox_versions = 3\ncelebrity_threshold = 6\n",
        );
        let w = g.workload();
        let mut dao = crate::schema::microblog::Microblog::new(store, g.microblog_config());
        let stars = dao.load_celebrities().unwrap();
        assert!(!stars.is_empty(), "celebrities to pull");
        // The run's celebrities are the store's, read as the seed reads them: none from a
        // store without their rows, whatever the generator planned.
        assert_eq!(own.celebrities.as_ref(), Some(&stars));
        let bare = Own::new(&g, Arc::new(Memory::new()), users(&g)).unwrap();
        assert_eq!(bare.celebrities, Some(Default::default()));
        assert!(!bare.any_celebrity(&g) && !g.plan().celebrities().is_empty());
        dao = dao.with_celebrities(stars);
        let Does::Page(posts) = op(&own, "own_posts") else {
            panic!("a page")
        };
        let (Does::Cells(fans), Does::Cells(followees)) = (op(&own, "followers"), op(&own, "followees")) else {
            panic!("pages of cells")
        };
        let index = |name: &str| own.design.operations.iter().position(|o| o.name == name).unwrap();
        // A list is its user's row: the followees' by the owner of the follows, the
        // followers' by the followee, which needs no follows of the user's own.
        assert_eq!(users_row(&own.design, followees, Entity::Follow), Some(Role::Owner));
        assert_eq!(users_row(&own.design, fans, Entity::Follow), Some(Role::Followee));
        assert!(own.needs_instances(index("followees")) && !own.needs_instances(index("followers")));
        for u in 1..=w.data.users + 1 {
            let followed = dao.followers(u, None, 1).unwrap().len() == 1;
            assert_eq!(own.has_row(&g, index("followers"), u), Some(followed), "user {u}");
            assert_eq!(own.has_row(&g, index("followees"), u), None);
            // Anyone follows someone new; a post copies an instance's content.
            assert_eq!(own.has_row(&g, index("follow"), u), Some(true));
            assert_eq!(own.has_row(&g, index("publish"), u), None);
            // A timeline's reader follows someone; a later page draws from their follows.
            assert_eq!(own.has_row(&g, index("timeline"), u), Some(g.out_degree(u) > 0));
            assert_eq!(own.has_row(&g, index("timeline_later"), u), None);
        }
        let post = |p: &crate::schema::microblog::Post| vec![i128::from(p.uid), i128::from(p.stamp)];
        let cells = |call: &OwnCall| -> Vec<u64> {
            let OwnCall::Cells { table, get } = call else {
                panic!("cells")
            };
            own.store.get(table, std::slice::from_ref(get)).unwrap()[0]
                .iter()
                .flat_map(|r| &r.cells)
                .map(|c| std::str::from_utf8(&c.qualifier).unwrap().parse().unwrap())
                .collect()
        };
        let mut x = crate::generate::Scratch::default();
        let mut ox = Scratch::default();
        let (mut later, mut listed, mut unfollowed) = (0, 0, None);
        for uid in 1..=w.data.users {
            // A user's own posts, every page, after the cursor the page before ends at.
            let mine = g.instances(uid, Entity::Post, &mut x);
            if !mine.is_empty() {
                let mut cursor: Option<Vec<u8>> = None;
                for (depth, (_, keys)) in pages(&own, posts, Entity::Post, &mine).into_iter().enumerate() {
                    let seed: Vec<Vec<i128>> = dao
                        .posts(uid, cursor.as_deref(), 10)
                        .unwrap()
                        .items
                        .iter()
                        .map(post)
                        .collect();
                    assert_eq!(
                        fields(&own, posts.target, keys.clone()),
                        seed,
                        "user {uid}'s posts, page {}",
                        depth + 1
                    );
                    cursor = keys.last().cloned();
                }
            }
            // The user's own lists, as a run reads them: from the top, and after a random
            // user's cell (the seeds' cursor deep in a list).
            for after in [None, Some(1), Some(uid), Some(w.data.users / 2)] {
                let got = cells(&own.cells_of_user(followees, uid, after).unwrap());
                assert_eq!(
                    got,
                    dao.followees(uid, after, 20).unwrap(),
                    "user {uid}'s followees after {after:?}"
                );
                let got = cells(&own.cells_of_user(fans, uid, after).unwrap());
                assert_eq!(
                    got,
                    dao.followers(uid, after, 20).unwrap(),
                    "user {uid}'s followers after {after:?}"
                );
            }
            let follows = g.instances(uid, Entity::Follow, &mut x);
            if follows.is_empty() {
                continue;
            }
            // Its followees' list, and the followers of each it follows, from the top and
            // after a cell.
            for f in &follows {
                let (me, them) = (int(&f[0]) as u64, int(&f[1]) as u64);
                for after in [false, true] {
                    let got = cells(&own.cells_at(followees, Entity::Follow, f, after).unwrap());
                    assert_eq!(
                        got,
                        dao.followees(me, after.then_some(them), 20).unwrap(),
                        "user {me}'s followees"
                    );
                    let got = cells(&own.cells_at(fans, Entity::Follow, f, after).unwrap());
                    assert_eq!(
                        got,
                        dao.followers(them, after.then_some(me), 20).unwrap(),
                        "user {them}'s followers"
                    );
                    listed += 1;
                }
            }
            // The timelines: the pull, the home timeline, and later pages of it.
            let shown = |call: &OwnCall| -> Vec<Vec<i128>> {
                let rows = own.timeline_rows(&g, call).unwrap();
                fields(&own, posts.target, rows.into_iter().map(|(_, key, _)| key))
            };
            for k in 0..3 {
                let s = Rng::new(7).stream(Kind::User, uid, k);
                let call = own
                    .prepare(&g, index("timeline_pull"), (uid, &follows), &s, &mut ox)
                    .unwrap();
                let seed: Vec<Vec<i128>> = dao.timeline_pull(uid, 10, None).unwrap().iter().map(post).collect();
                assert_eq!(shown(&call), seed, "user {uid}'s pulled timeline");
                let call = own
                    .prepare(&g, index("timeline"), (uid, &follows), &s, &mut ox)
                    .unwrap();
                let seed: Vec<Vec<i128>> = dao.timeline(uid, 10, None).unwrap().iter().map(post).collect();
                assert_eq!(shown(&call), seed, "user {uid}'s home timeline");
                let call = own
                    .prepare(&g, index("timeline_later"), (uid, &follows), &s, &mut ox)
                    .unwrap();
                let OwnCall::Timeline {
                    before: Some(before), ..
                } = call
                else {
                    panic!("a later page starts before a time")
                };
                let seed: Vec<Vec<i128>> = dao.timeline(uid, 10, Some(before)).unwrap().iter().map(post).collect();
                assert_eq!(shown(&call), seed, "user {uid}'s home timeline before {before}");
                later += usize::from(!seed.is_empty());
            }
            // Who the reader follows is read when its timeline runs: with the user's
            // `attention` cells gone, a timeline prepared as before shows nothing, as the
            // seed's.
            if unfollowed.is_none() && !dao.timeline_pull(uid, 10, None).unwrap().is_empty() {
                let gone = follows
                    .iter()
                    .map(|f| Mutation::DeleteColumn {
                        family: "attention".into(),
                        qualifier: int(&f[1]).to_string().into_bytes(),
                        timestamp: None,
                    })
                    .collect();
                let row = RowMutation::new(uid.to_string().into_bytes(), gone);
                own.store.mutate("weibo:relation", &[row]).unwrap();
                let s = Rng::new(7).stream(Kind::User, uid, 0);
                let call = own
                    .prepare(&g, index("timeline_pull"), (uid, &follows), &s, &mut ox)
                    .unwrap();
                assert_eq!(shown(&call), Vec::<Vec<i128>>::new(), "user {uid} follows no one now");
                assert!(dao.timeline_pull(uid, 10, None).unwrap().is_empty());
                unfollowed = Some(uid);
            }
        }
        assert!(
            later > 20 && listed > 40 && unfollowed.is_some(),
            "{later} later pages with posts, {listed} lists, {unfollowed:?} unfollowing"
        );
    }

    /// Every row of a table, each cell's every version.
    fn dump(store: &dyn Store, table: &str) -> Vec<Row> {
        let mut scan = Scan::default();
        scan.select.max_versions = 1000;
        store.scan(table, &scan).unwrap()
    }

    #[test]
    fn the_microblog_descriptions_writes_deliver_as_seed_001s() {
        // Followees picked uniformly: by popularity they would all be celebrities, whose
        // follows deliver nothing.
        let body = "[data.follows]\nmean = 8.0\n[data.posts]\nper_month = 20.0\n\
                    [microblog]\ninbox_versions = 3\ncelebrity_threshold = 6\n\
                    [run]\nskew = \"uniform\"\n";
        let (g, store, own) = loaded("microblog", |d| d, body);
        let (_, seed_store, _) = loaded("microblog", |d| d, body);
        let tables = ["weibo:content", "weibo:inbox", "weibo:relation"];
        for t in tables {
            assert_eq!(dump(&*store, t), dump(&*seed_store, t), "{t}: the two loads alike");
        }
        let mut dao = crate::schema::microblog::Microblog::new(seed_store.clone(), g.microblog_config());
        let stars = dao.load_celebrities().unwrap();
        dao = dao.with_celebrities(stars);
        let index = |name: &str| own.design.operations.iter().position(|o| o.name == name).unwrap();
        let text = |b: &[u8]| -> u64 { std::str::from_utf8(b).unwrap().parse().unwrap() };
        let mut x = crate::generate::Scratch::default();
        let mut ox = Scratch::default();
        let (mut fanned, mut backfilled, mut unfollowed) = (0, 0, 0);
        for uid in 1..=g.workload().data.users {
            let s = Rng::new(5).stream(Kind::User, uid, 0);
            let posts = g.instances(uid, Entity::Post, &mut x);
            if !posts.is_empty() {
                let call = own.prepare(&g, index("publish"), (uid, &posts), &s, &mut ox).unwrap();
                let write = match &call {
                    OwnCall::Deliver { write, .. } => {
                        fanned += 1;
                        write
                    }
                    OwnCall::Write(write) => write,
                    other => panic!("a write: {other:?}"),
                };
                let row = &write[0].1[0];
                let Mutation::Put { value, .. } = &row.mutations[0] else {
                    panic!("a put")
                };
                let content = Target {
                    table: own.design.tables.iter().position(|t| t.id == "content").unwrap(),
                    rows: 0,
                };
                let fields = own.key(content).decode(&row.row).unwrap();
                let stamp = fields.iter().find(|(n, _)| *n == "stamp").map(|(_, v)| int(v)).unwrap();
                own.execute(&g, &call).unwrap();
                dao.publish(&crate::schema::microblog::Post {
                    uid,
                    stamp: stamp as i64,
                    content: String::from_utf8(value.clone()).unwrap(),
                })
                .unwrap();
            }
            let follows = g.instances(uid, Entity::Follow, &mut x);
            if follows.is_empty() {
                continue;
            }
            // A follow written again now, then one (perhaps another) unfollowed.
            let call = own.prepare(&g, index("follow"), (uid, &follows), &s, &mut ox).unwrap();
            backfilled += usize::from(matches!(call, OwnCall::Deliver { .. }));
            let (OwnCall::Deliver { write, .. } | OwnCall::Write(write)) = &call else {
                panic!("a write")
            };
            let attention = write
                .iter()
                .flat_map(|(_, rows)| rows)
                .find(|r| text(&r.row) == uid)
                .unwrap();
            let Mutation::Put {
                qualifier,
                timestamp: Some(at),
                ..
            } = &attention.mutations[0]
            else {
                panic!("a put")
            };
            // The followee the seeds' runner draws for this follow: its own users' pick at
            // the draw it uses, 28.
            let mut drawn = users(&g).pick(&g, &s, 28);
            if drawn == uid {
                drawn = uid % g.workload().data.users + 1;
            }
            assert_eq!(text(qualifier), drawn, "user {uid}'s new followee");
            own.execute(&g, &call).unwrap();
            dao.follow(uid, text(qualifier), *at).unwrap();
            let call = own
                .prepare(&g, index("unfollow"), (uid, &follows), &s.child(1), &mut ox)
                .unwrap();
            let OwnCall::Write(write) = &call else {
                panic!("a write")
            };
            let attention = write
                .iter()
                .flat_map(|(_, rows)| rows)
                .find(|r| r.row == uid.to_string().into_bytes())
                .unwrap();
            let Mutation::DeleteColumn { qualifier, .. } = &attention.mutations[0] else {
                panic!("every version")
            };
            own.execute(&g, &call).unwrap();
            dao.unfollow(uid, text(qualifier)).unwrap();
            unfollowed += 1;
        }
        for t in tables {
            assert_eq!(dump(&*store, t), dump(&*seed_store, t), "{t} after the writes");
        }
        assert!(
            fanned > 10 && backfilled > 5 && unfollowed > 20,
            "{fanned} fan-outs, {backfilled} backfills, {unfollowed} unfollows"
        );
    }
}
