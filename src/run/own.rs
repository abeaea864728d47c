//! The operations of a workload's own design ([`crate::design::ops`]): each prepared from a
//! user's instances of the operation's entity (the rows the load wrote), untimed, then run
//! as the store calls a client of that design makes, timed.

use crate::design::key::{self, Key, Owned, Segment, Value};
use crate::design::ops::{Does, Page, Sources, Target, Timeline};
use crate::design::{Design, Entity};
use crate::generate::rng::Stream;
use crate::generate::{Generator, geometric};
use crate::schema::Result;
use crate::store::{Get, Mutation, Row, RowMutation, Scan, Store, now_millis};
use std::collections::HashMap;
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
    changed: Mutex<HashMap<Vec<Owned>, Option<Vec<Owned>>>>,
    /// New ids, for the instances the run's writes make.
    fresh: AtomicU64,
}

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
    /// A page: one scan, or one per salt bucket merged by what follows the salt.
    Page(PageCall),
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
        /// The inbox's page, and the family and qualifier of its cells holding keys.
        inbox: Option<(PageCall, String, Option<Vec<u8>>)>,
        /// Each source's first page.
        pulls: Vec<PageCall>,
        /// The timeline's table.
        table: &'static str,
        /// The timeline's rows, whose key gives each one's stamp.
        target: Target,
        /// Where in the key's fields its stamp lies.
        stamp: usize,
        /// How many rows it shows.
        rows: usize,
    },
    /// Nothing to run: none of the users drawn has an instance of the entity, or its rows
    /// could not be made. Counted as an error, with why.
    Refused(String),
}

/// A prepared page.
#[derive(Debug, Clone, PartialEq)]
pub struct PageCall {
    table: &'static str,
    /// One scan per bucket read.
    scans: Vec<Scan>,
    /// Where the salt lies in each row's key (merged rows compare what follows it); none
    /// for a single scan.
    salt: Option<std::ops::Range<usize>>,
    rows: usize,
}

/// The values of `key`'s fields, one per field in the key's order, from an instance of
/// `entity` whose values are in the entity's order.
fn key_values<'v>(key: &Key, entity: Entity, values: &'v [Owned]) -> Vec<Value<'v>> {
    key.fields
        .iter()
        .map(|f| values[entity.field(&f.name).expect("checked: the entity has the key's fields")].as_value())
        .collect()
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

/// What names instance `v` of `entity` across updates: its fields but those an update sets.
fn now_at_zero(v: &[Owned], entity: Entity) -> Vec<Owned> {
    let mut v = v.to_vec();
    for f in entity.updated() {
        v[entity.field(f).expect("an entity's time field")] = Owned::Int(0);
    }
    v
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
    /// The operations of `g`'s own design over `store`.
    pub fn new(g: &Generator, store: Arc<dyn Store>) -> Option<Own> {
        let design = g.own_design()?.clone();
        Some(Own {
            names: g.all_tables().iter().map(|t| t.name()).collect(),
            design,
            store,
            changed: Mutex::default(),
            fresh: AtomicU64::new(0),
        })
    }

    /// The design's operation `index`'s entity: whose instances a user must have.
    pub fn entity(&self, index: usize) -> Entity {
        self.design.operations[index].entity(&self.design)
    }

    /// Prepares operation `index` from `instances`, user `uid`'s instances of its entity
    /// (one at least), with the draws of `s`; `x` makes other users' instances (a
    /// timeline's sources').
    pub fn prepare(
        &self,
        g: &Generator,
        index: usize,
        instances: &[Vec<Owned>],
        s: &Stream,
        x: &mut crate::generate::Scratch,
    ) -> Result<OwnCall> {
        let op = &self.design.operations[index];
        let entity = op.entity(&self.design);
        let pick = &instances[s.below(60, instances.len() as u64) as usize];
        Ok(match &op.does {
            Does::Get(t) => OwnCall::Get {
                table: self.names[t.table],
                row: self.key_of(*t, entity, pick)?,
            },
            Does::Page(p) => OwnCall::Page(self.page(p, entity, pick, instances, s)?),
            Does::Lookup {
                index,
                family,
                qualifier,
                then,
            } => OwnCall::Lookup {
                index: self.page(index, entity, pick, instances, s)?,
                family: family.clone(),
                qualifier: qualifier.clone(),
                then: self.names[then.table],
            },
            // The picked instance made again now, as a new one: its times the write's, its ids
            // past every generated one.
            Does::Write(e) => {
                let mut v = now_at(pick, *e, e.times());
                let n = self.fresh.fetch_add(1, Ordering::Relaxed);
                for (f, id) in e.fresh_ids(&v, n) {
                    v[f] = Owned::Int(id);
                }
                OwnCall::Write(by_table(g.instance_rows(*e, &values(&v))?))
            }
            Does::Update(e) => {
                let (was, now) = {
                    let mut changed = self.changed.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
                    let slot = changed
                        .entry(now_at_zero(pick, *e))
                        .or_insert_with(|| Some(pick.to_vec()));
                    let was = slot.clone();
                    let now = now_at(pick, *e, e.updated());
                    *slot = Some(now.clone());
                    (was, now)
                };
                // A deleted instance is written anew.
                let old = match &was {
                    Some(v) => g.instance_rows(*e, &values(v))?,
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
            Does::Timeline(t) => self.timeline(g, t, instances, s, x)?,
            Does::Delete(e) => {
                let was = {
                    let mut changed = self.changed.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
                    changed
                        .insert(now_at_zero(pick, *e), None)
                        .unwrap_or_else(|| Some(pick.to_vec()))
                };
                // Deleted before: its cells' deletes again, which change nothing.
                let was = was.unwrap_or_else(|| pick.to_vec());
                let rows = g.instance_rows(*e, &values(&was))?;
                OwnCall::Write(by_table(
                    rows.into_iter()
                        .map(|(t, r)| (t, RowMutation::new(r.row, deletes(&r.mutations))))
                        .collect(),
                ))
            }
        })
    }

    fn key(&self, t: Target) -> &Key {
        &self.design.tables[t.table].rows[t.rows].key
    }

    fn key_of(&self, t: Target, entity: Entity, values: &[Owned]) -> Result<Vec<u8>> {
        let key = self.key(t);
        Ok(key.encode(&key_values(key, entity, values))?)
    }

    /// A page sharing `pick`'s prefix, at a geometric depth: past page 1 it resumes after
    /// the key of the last row of the page before, among the user's own rows of the prefix
    /// in the page's order (rows other users' instances put under the prefix are not
    /// counted: the cursor is a row's real key, its depth a draw).
    fn page(&self, p: &Page, entity: Entity, pick: &[Owned], instances: &[Vec<Owned>], s: &Stream) -> Result<PageCall> {
        let key = self.key(p.target);
        let row = self.key_of(p.target, entity, pick)?;
        let spans = key.spans(&row)?;
        let end = spans[p.prefix - 1].end;
        let salt = p.spread.map(|(i, _)| spans[i].clone());
        // What orders the merged rows: the key without its salt.
        let order = |k: &[u8]| -> Vec<u8> {
            match &salt {
                Some(r) => [&k[..r.start], &k[r.end..]].concat(),
                None => k.to_vec(),
            }
        };
        let mut same: Vec<Vec<u8>> = Vec::new();
        for v in instances {
            let k = self.key_of(p.target, entity, v)?;
            if k.len() >= end && order(&k[..end]) == order(&row[..end]) {
                same.push(k);
            }
        }
        same.sort_by_key(|k| order(k));
        same.dedup();
        let pages = same.len().div_ceil(p.rows).max(1) as u64;
        let depth = (1 + geometric(s, 61, PAGE_DEPTH_P).min(MAX_DEPTH - 1)).min(pages) as usize;
        let cursor = (depth > 1).then(|| same[(depth - 1) * p.rows - 1].clone());
        let scans = match p.spread {
            None => vec![Scan {
                prefix: row[..end].to_vec(),
                start: cursor.clone().unwrap_or_default(),
                start_exclusive: cursor.is_some(),
                limit: Some(p.rows),
                ..Scan::default()
            }],
            Some((i, n)) => {
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
                    .map(|b| Scan {
                        prefix: with_bucket(&row[..end], b),
                        start: cursor.as_deref().map(|c| with_bucket(c, b)).unwrap_or_default(),
                        start_exclusive: cursor.is_some(),
                        limit: Some(p.rows),
                        ..Scan::default()
                    })
                    .collect()
            }
        };
        Ok(PageCall {
            table: self.names[p.target.table],
            scans,
            salt,
            rows: p.rows,
        })
    }

    /// A timeline of the reader whose follows are `follows`: the inbox's page (drawn as its
    /// lookup's is), and the first page of each source's rows.
    fn timeline(
        &self,
        g: &Generator,
        t: &Timeline,
        follows: &[Vec<Owned>],
        s: &Stream,
        x: &mut crate::generate::Scratch,
    ) -> Result<OwnCall> {
        let reader = &follows[0];
        let uid = match reader[0] {
            Owned::Int(u) => u,
            Owned::Bytes(_) => unreachable!("a follow's uid is an integer"),
        };
        let inbox = match t.inbox {
            Some(i) => {
                let Does::Lookup {
                    index,
                    family,
                    qualifier,
                    ..
                } = &self.design.operations[i].does
                else {
                    unreachable!("checked: an inbox is a lookup")
                };
                let entity = self.design.operations[i].entity(&self.design);
                let mine = g.instances(uid as u64, entity, x);
                // Its first page: no instances to draw a depth from.
                match mine.first() {
                    Some(pick) => Some((
                        self.page(index, entity, pick, &[], s)?,
                        family.clone(),
                        qualifier.clone(),
                    )),
                    None => None,
                }
            }
            None => None,
        };
        let target = t.page.target;
        let entity = self.design.tables[target.table].rows[target.rows]
            .entity
            .expect("checked");
        let followee = Entity::Follow.field("followee").expect("a follow's followee");
        let mut pulls = Vec::new();
        for f in follows {
            let Owned::Int(source) = f[followee] else { continue };
            if t.sources == Sources::Celebrities && !g.plan().is_celebrity(source as u64) {
                continue;
            }
            // The source's first page: the key of any of its rows, cut at the page's prefix.
            if let Some(pick) = g.instances(source as u64, entity, x).first() {
                pulls.push(self.page(&t.page, entity, pick, &[], s)?);
            }
        }
        let key = self.key(target);
        let stamp = key.segments[t.stamp].field().expect("a stamp has its field");
        Ok(OwnCall::Timeline {
            inbox,
            pulls,
            table: self.names[target.table],
            target,
            stamp,
            rows: t.page.rows,
        })
    }

    /// Runs a prepared call.
    pub fn execute(&self, call: &OwnCall) -> Result<()> {
        match call {
            OwnCall::Get { table, row } => self.store.get(table, &[Get::new(row.clone())]).map(drop)?,
            OwnCall::Page(p) => drop(self.read_page(p)?),
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
            OwnCall::Write(tables) => {
                for (table, rows) in tables {
                    self.store.mutate(table, rows)?;
                }
            }
            OwnCall::Timeline { table, .. } => {
                let gets: Vec<Get> = self
                    .timeline_rows(call)?
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
    fn timeline_rows(&self, call: &OwnCall) -> Result<Vec<(i128, Vec<u8>, bool)>> {
        let OwnCall::Timeline {
            inbox,
            pulls,
            target,
            stamp,
            rows,
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
        if let Some((page, family, qualifier)) = inbox {
            for r in self.read_page(page)? {
                for c in r.cells {
                    if &c.family == family && qualifier.as_ref().is_none_or(|q| *q == c.qualifier) {
                        merged.push((stamp_of(&c.value)?, c.value, false));
                    }
                }
            }
        }
        for p in pulls {
            for r in self.read_page(p)? {
                merged.push((stamp_of(&r.key)?, r.key, true));
            }
        }
        merged.sort_by(|a, b| b.0.cmp(&a.0).then_with(|| a.1.cmp(&b.1)));
        merged.dedup_by(|a, b| a.1 == b.1);
        merged.truncate(*rows);
        Ok(merged)
    }

    /// A page's rows: one scan's, or each bucket's merged in order of what follows the salt.
    fn read_page(&self, p: &PageCall) -> Result<Vec<Row>> {
        let Some(salt) = &p.salt else {
            return Ok(self.store.scan(p.table, &p.scans[0])?);
        };
        let mut rows = Vec::new();
        for scan in &p.scans {
            rows.extend(self.store.scan(p.table, scan)?);
        }
        rows.sort_by(|a, b| a.key[salt.end..].cmp(&b.key[salt.end..]));
        rows.truncate(p.rows);
        Ok(rows)
    }
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
    "#;

    fn post(uid: i128, stamp: i128) -> Vec<Owned> {
        vec![Owned::Int(uid), Owned::Int(stamp), Owned::Bytes(b"x".to_vec())]
    }

    #[test]
    fn a_page_over_salt_buckets_merges_them_newest_first_and_resumes_after_its_cursor() {
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
            let call = own.page(&page, Entity::Post, &instances[0], &instances, &s).unwrap();
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
        for uid in 1..=40 {
            let mut rows: Vec<(crate::generate::Table, RowMutation)> = Vec::new();
            g.emit_user_rows(uid, &mut x, &mut rows).unwrap();
            for (t, r) in rows {
                store.mutate(t.name(), &[r]).unwrap();
            }
        }
        let own = Own::new(&g, store).unwrap();
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
            v.sort_by(|a, b| b.0.cmp(&a.0).then_with(|| a.1.cmp(&b.1)));
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
            let call = own.prepare(&g, 1, &follows, &s, &mut x).unwrap();
            let got: Vec<Vec<u8>> = own
                .timeline_rows(&call)
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
            let call = own.prepare(&g, 2, &follows, &s, &mut x).unwrap();
            let shown = own.timeline_rows(&call).unwrap();
            let got: Vec<Vec<u8>> = shown.iter().map(|(_, k, _)| k.clone()).collect();
            assert_eq!(got, newest(home), "user {uid}'s home timeline");
            own.execute(&call).unwrap();
        }
        assert!(
            stars > 0 && inboxes > 0,
            "celebrities followed ({stars}) and inboxes read ({inboxes})"
        );
    }
}
