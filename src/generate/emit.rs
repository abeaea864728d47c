//! A block of users turned into the row mutations of every table, through the schema layer's
//! builders: what the loader writes, what the determinism test digests.

use super::{Follow, Generator};
use crate::design::Entity;
use crate::schema::{self, actions, blog, microblog, series};
use crate::store::{Mutation, RowMutation, TableDescriptor};

/// A table a workload writes: its place among its design's tables, and its name in the
/// store. The seed designs' eight are constants ([`Table::SEEDS`]); a workload's own design
/// makes its tables with [`Table::new`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Table {
    index: u8,
    name: &'static str,
}

pub use crate::design::MAX_TABLES;

impl Table {
    /// `weibo:user`.
    pub const USER: Table = Table::seed(0, microblog::USER);
    /// `weibo:relation`.
    pub const RELATION: Table = Table::seed(1, microblog::RELATION);
    /// `weibo:celebrity`.
    pub const CELEBRITY: Table = Table::seed(2, microblog::CELEBRITY);
    /// `weibo:content`.
    pub const CONTENT: Table = Table::seed(3, microblog::CONTENT);
    /// `weibo:inbox`.
    pub const INBOX: Table = Table::seed(4, microblog::INBOX);
    /// `useractions`.
    pub const ACTIONS: Table = Table::seed(5, actions::TABLE);
    /// `blog`.
    pub const BLOG: Table = Table::seed(6, blog::TABLE);
    /// `series`.
    pub const SERIES: Table = Table::seed(7, series::TABLE);

    /// The seed designs' tables, in report order.
    pub const SEEDS: [Table; 8] = [
        Table::USER,
        Table::RELATION,
        Table::CELEBRITY,
        Table::CONTENT,
        Table::INBOX,
        Table::ACTIONS,
        Table::BLOG,
        Table::SERIES,
    ];

    const fn seed(index: u8, name: &'static str) -> Table {
        Table { index, name }
    }

    /// The table at `index` (below [`MAX_TABLES`]) of a design, named `name` in the store.
    pub fn new(index: usize, name: &str) -> Table {
        assert!(index < MAX_TABLES, "a design has at most {MAX_TABLES} tables");
        Table {
            index: index as u8,
            name: crate::design::intern(name),
        }
    }

    /// The table's name in the store.
    pub fn name(self) -> &'static str {
        self.name
    }

    /// The key design (a field of the workload's `[keys]`) of a seed table's row keys;
    /// `None` for the microblog tables keyed by the text uid alone, and for a table of a
    /// workload's own design.
    pub fn design(self) -> Option<&'static str> {
        match self {
            Table::CONTENT => Some("weibo"),
            Table::ACTIONS => Some("actions"),
            Table::BLOG => Some("blog"),
            Table::SERIES => Some("series"),
            _ => None,
        }
    }

    /// Whether a seed table's row keys are binary (big-endian integers) rather than text.
    pub fn binary_keys(self) -> bool {
        matches!(self, Table::ACTIONS | Table::BLOG)
    }

    /// Its place among its design's tables.
    pub fn index(self) -> usize {
        usize::from(self.index)
    }
}

/// Where generated rows go.
pub trait Sink {
    /// Takes one row mutation of `table`.
    fn row(&mut self, table: Table, row: RowMutation) -> schema::Result<()>;
}

/// Keeps every row, in order.
impl Sink for Vec<(Table, RowMutation)> {
    fn row(&mut self, table: Table, row: RowMutation) -> schema::Result<()> {
        self.push((table, row));
        Ok(())
    }
}

/// Reusable buffers of one worker.
#[derive(Debug, Default)]
pub struct Scratch {
    followees: Vec<Follow>,
    seen: super::Seen,
    stamps: Vec<i64>,
    text: String,
    actions: Vec<actions::Action>,
    articles: Vec<blog::Article>,
    points: Vec<series::Point>,
    gathered: Vec<(usize, RowMutation)>,
}

impl Generator {
    /// The tables of the designs the workload has data for.
    pub fn tables(&self) -> Vec<TableDescriptor> {
        let w = self.workload();
        let d = &w.data;
        let out = match self.own_design() {
            Some(own) => own.descriptors(),
            None => {
                // The seed designs' tables from their descriptions: those of the designs the
                // workload has data for, in the order the seeds' DAOs list them
                // ([`Generator::seed_tables`] holds them to the DAOs').
                let all = self.design().descriptors();
                let microblog = d.follows.is_some() || d.posts.is_some();
                [
                    (microblog, Table::CONTENT),
                    (microblog, Table::RELATION),
                    (microblog, Table::INBOX),
                    (microblog, Table::USER),
                    (microblog, Table::CELEBRITY),
                    (d.actions.is_some(), Table::ACTIONS),
                    (d.articles.is_some(), Table::BLOG),
                    (d.series.is_some(), Table::SERIES),
                ]
                .into_iter()
                .filter(|(on, _)| *on)
                .map(|(_, t)| all[t.index()].clone())
                .collect()
            }
        };
        let mark = crate::store::mark(&w.name, &w.data_digest());
        out.into_iter()
            .map(|t| TableDescriptor {
                attributes: mark.clone(),
                ..w.storage.apply(t)
            })
            .collect()
    }

    /// The tables of the seed designs the workload has data for, as the seeds' DAOs declare
    /// them: the oracle of [`Generator::tables`]' descriptions.
    pub fn seed_tables(&self) -> Vec<TableDescriptor> {
        let d = &self.workload().data;
        let mut out = Vec::new();
        if d.follows.is_some() || d.posts.is_some() {
            out.extend(microblog::Microblog::tables(&self.microblog_config()));
        }
        if d.actions.is_some() {
            out.extend(actions::Actions::tables());
        }
        if d.articles.is_some() {
            out.extend(blog::Blog::tables());
        }
        if d.series.is_some() {
            out.extend(series::Series::tables());
        }
        out
    }

    /// Whether the workload writes `table`.
    pub fn writes(&self, table: Table) -> bool {
        self.tables().iter().any(|t| t.name == table.name())
    }

    /// The microblog DAO settings of the workload.
    pub fn microblog_config(&self) -> microblog::Config {
        let w = self.workload();
        microblog::Config {
            inbox_versions: w.microblog.inbox_versions,
            keys: w.keys.weibo,
            celebrity_threshold: w.microblog.celebrity_threshold,
        }
    }

    /// Every row mutation of the users of block `b`, user by user.
    pub fn emit_block(&self, b: u64, s: &mut Scratch, sink: &mut impl Sink) -> schema::Result<()> {
        for uid in self.block_users(b) {
            self.emit_user_rows(uid, s, sink)?;
        }
        Ok(())
    }

    /// Every row mutation of user `uid`, made by the design's descriptions, the seed designs'
    /// too ([`Generator::emit_user_described`]); by the seeds' hand-written codecs only for
    /// a generator made to measure against them ([`Generator::through_codecs`]).
    pub fn emit_user_rows(&self, uid: u64, s: &mut Scratch, sink: &mut impl Sink) -> schema::Result<()> {
        if self.by_codecs() {
            self.emit_user(uid, s, sink)
        } else {
            self.emit_user_described(uid, s, sink)
        }
    }

    /// Every row mutation of user `uid`: its own rows, and the `fans` cells its follows put
    /// into its followees' relation rows, by the seeds' hand-written codecs: the oracle the
    /// seed descriptions ([`Generator::emit_user_described`]) are held to row for row by a
    /// test, and the reference their cost is measured against.
    pub fn emit_user(&self, uid: u64, s: &mut Scratch, sink: &mut impl Sink) -> schema::Result<()> {
        let w = self.workload();
        let plan = self.plan();
        let keys = w.keys;
        let start = w.data.start_ms;
        let microblog_on = w.data.follows.is_some() || w.data.posts.is_some();
        if microblog_on {
            sink.row(Table::USER, microblog::user_mutation(&self.user(uid), start))?;
        }
        self.followees(uid, &mut s.followees, &mut s.seen);
        for f in &s.followees {
            for m in microblog::Microblog::follow_mutations(uid, f.target, f.at) {
                sink.row(Table::RELATION, m)?;
            }
        }
        if plan.is_celebrity(uid) {
            sink.row(
                Table::CELEBRITY,
                microblog::celebrity_mutation(uid, plan.followers(uid), start),
            )?;
        }
        let n = u64::from(w.microblog.inbox_versions);
        let mut inbox: Vec<Mutation> = Vec::new();
        for f in &s.followees {
            if plan.is_celebrity(f.target) {
                continue;
            }
            let count = self.post_count(f.target);
            self.post_stamps(f.target, count, n, &mut s.stamps);
            for &stamp in &s.stamps {
                let key = crate::keys::weibo::ContentKey { uid: f.target, stamp }.encode(keys.weibo)?;
                inbox.push(microblog::inbox_cell(f.target, stamp, key));
            }
        }
        if !inbox.is_empty() {
            sink.row(Table::INBOX, RowMutation::new(microblog::uid_bytes(uid), inbox))?;
        }
        let count = self.post_count(uid);
        self.post_stamps(uid, count, count, &mut s.stamps);
        for (i, &stamp) in s.stamps.iter().enumerate() {
            self.post_content(uid, i as u64, &mut s.text);
            let post = microblog::Post {
                uid,
                stamp,
                content: std::mem::take(&mut s.text),
            };
            sink.row(Table::CONTENT, microblog::content_mutation(keys.weibo, &post)?)?;
            s.text = post.content;
        }
        self.actions(uid, &s.followees, &mut s.stamps, &mut s.actions);
        for a in &s.actions {
            sink.row(Table::ACTIONS, actions::mutation(keys.actions, a)?)?;
        }
        self.articles(uid, &mut s.articles);
        for a in &s.articles {
            for m in blog::mutations(keys.blog, a, a.update_at)? {
                sink.row(Table::BLOG, m)?;
            }
        }
        self.points(uid, &mut s.points);
        for p in &s.points {
            sink.row(Table::SERIES, series::mutation(keys.series, p)?)?;
        }
        Ok(())
    }

    /// [`Generator::emit_user`]'s rows made by the design's descriptions, entity by entity
    /// in [`Entity::ALL`] order; a row keyed by the user's own fields alone (a reader's inbox)
    /// gathers the cells of all the user's instances of its entity into one mutation.
    pub fn emit_user_described(&self, uid: u64, s: &mut Scratch, sink: &mut impl Sink) -> schema::Result<()> {
        let e = &*self.emitter;
        let all = self.all_tables();
        let mut gathered = std::mem::take(&mut s.gathered);
        let r = self.each_instance(
            uid,
            s,
            |entity| e.makes(entity),
            |seen| match seen {
                Visit::Instance(entity, values) => {
                    e.emit(entity, values, &mut gathered, &mut |t, row| sink.row(all[t], row))
                }
                // The rows an entity's instances gather cells into go once they are all made.
                Visit::End(_) => {
                    for (t, row) in gathered.drain(..) {
                        sink.row(all[t], row)?;
                    }
                    Ok(())
                }
            },
        );
        gathered.clear();
        s.gathered = gathered;
        r
    }

    /// Hands `visit` each instance of user `uid` of each entity `wants`, its field values in
    /// the entity's order, entity by entity in [`Entity::ALL`] order, and the end of each
    /// entity's instances. What the load writes of a user, and what `run` picks rows from.
    pub fn each_instance<E>(
        &self,
        uid: u64,
        s: &mut Scratch,
        wants: impl Fn(Entity) -> bool,
        mut visit: impl FnMut(Visit<'_>) -> Result<(), E>,
    ) -> Result<(), E> {
        use crate::design::key::Value::{Bytes, Int};
        let w = self.workload();
        let plan = self.plan();
        let start = i128::from(w.data.start_ms);
        let id = i128::from(uid);
        macro_rules! emit {
            ($entity:expr, $values:expr) => {
                visit(Visit::Instance($entity, $values))?
            };
        }
        macro_rules! flush {
            ($entity:expr) => {
                visit(Visit::End($entity))?
            };
        }
        let users = self.own_design().is_some() || w.data.follows.is_some() || w.data.posts.is_some();
        if users && wants(Entity::User) {
            let u = self.user(uid);
            emit!(
                Entity::User,
                &[Int(id), Bytes(u.name.as_bytes()), Bytes(u.sex.as_bytes()), Int(start)]
            );
            flush!(Entity::User);
        }
        self.followees(uid, &mut s.followees, &mut s.seen);
        if wants(Entity::Follow) {
            for f in &s.followees {
                emit!(Entity::Follow, &[Int(id), Int(f.target.into()), Int(f.at.into())]);
            }
            flush!(Entity::Follow);
        }
        if plan.is_celebrity(uid) && wants(Entity::Celebrity) {
            emit!(
                Entity::Celebrity,
                &[Int(id), Int(plan.followers(uid).into()), Int(start)]
            );
            flush!(Entity::Celebrity);
        }
        if w.data.posts.is_some() && wants(Entity::Delivery) {
            let n = u64::from(w.microblog.inbox_versions);
            for f in &s.followees {
                if plan.is_celebrity(f.target) {
                    continue;
                }
                let count = self.post_count(f.target);
                self.post_stamps(f.target, count, n, &mut s.stamps);
                for &stamp in &s.stamps {
                    emit!(Entity::Delivery, &[Int(id), Int(f.target.into()), Int(stamp.into())]);
                }
            }
            flush!(Entity::Delivery);
        }
        if wants(Entity::Post) {
            let count = self.post_count(uid);
            self.post_stamps(uid, count, count, &mut s.stamps);
            for (i, &stamp) in s.stamps.iter().enumerate() {
                self.post_content(uid, i as u64, &mut s.text);
                emit!(Entity::Post, &[Int(id), Int(stamp.into()), Bytes(s.text.as_bytes())]);
            }
            flush!(Entity::Post);
        }
        if wants(Entity::Action) {
            self.actions(uid, &s.followees, &mut s.stamps, &mut s.actions);
            for a in &s.actions {
                emit!(
                    Entity::Action,
                    &[
                        Int(a.userid.into()),
                        Int(a.stamp.into()),
                        Int(a.actionid.into()),
                        Bytes(a.name.as_bytes()),
                    ]
                );
            }
            flush!(Entity::Action);
        }
        if wants(Entity::Article) {
            self.articles(uid, &mut s.articles);
            for a in &s.articles {
                emit!(
                    Entity::Article,
                    &[
                        Int(a.article_id.into()),
                        Int(a.uid.into()),
                        Int(a.category.into()),
                        Int(a.post_at.into()),
                        Int(a.update_at.into()),
                        Bytes(a.user_name.as_bytes()),
                        Bytes(a.title.as_bytes()),
                        Bytes(a.content.as_bytes()),
                        Bytes(a.category_name.as_bytes()),
                    ]
                );
            }
            flush!(Entity::Article);
        }
        if wants(Entity::Point) {
            self.points(uid, &mut s.points);
            for p in &s.points {
                emit!(
                    Entity::Point,
                    &[
                        Int(p.userid.into()),
                        Int(p.time.into()),
                        Int(p.nanos.into()),
                        Bytes(&p.value)
                    ]
                );
            }
            flush!(Entity::Point);
        }
        Ok(())
    }

    /// The rows one instance of `entity` makes in the workload's design, each with its table:
    /// what an operation that writes an instance writes.
    pub fn instance_rows(
        &self,
        entity: Entity,
        values: &[crate::design::key::Value<'_>],
    ) -> schema::Result<Vec<(Table, RowMutation)>> {
        self.rows_of(entity, values, false)
    }

    /// [`Generator::instance_rows`] with the cells' values left empty: which cells the
    /// instance wrote, what a delete of them names.
    pub fn instance_cells(
        &self,
        entity: Entity,
        values: &[crate::design::key::Value<'_>],
    ) -> schema::Result<Vec<(Table, RowMutation)>> {
        self.rows_of(entity, values, true)
    }

    fn rows_of(
        &self,
        entity: Entity,
        values: &[crate::design::key::Value<'_>],
        bare: bool,
    ) -> schema::Result<Vec<(Table, RowMutation)>> {
        let all = self.all_tables();
        let (mut gathered, mut out) = (Vec::new(), Vec::new());
        let mut sink = |t: usize, row| -> schema::Result<()> {
            out.push((all[t], row));
            Ok(())
        };
        self.emitter.emit_as(entity, values, bare, &mut gathered, &mut sink)?;
        out.extend(gathered.into_iter().map(|(t, row)| (all[t], row)));
        Ok(out)
    }

    /// The integer field `at` of user `uid`'s instances of `entity`, greatest first, the
    /// first `n` of them: a post's stamp without making the posts' text.
    pub fn newest_of(&self, uid: u64, entity: Entity, at: usize, n: usize, s: &mut Scratch) -> Vec<i128> {
        if entity == Entity::Post && Entity::Post.field("stamp") == Some(at) {
            self.post_stamps(uid, self.post_count(uid), n as u64, &mut s.stamps);
            return s.stamps.iter().map(|&t| i128::from(t)).collect();
        }
        let mut all: Vec<i128> = self
            .instances(uid, entity, s)
            .iter()
            .filter_map(|v| match v[at] {
                crate::design::key::Owned::Int(t) => Some(t),
                crate::design::key::Owned::Bytes(_) => None,
            })
            .collect();
        all.sort_unstable_by(|a, b| b.cmp(a));
        all.truncate(n);
        all
    }

    /// User `uid`'s instances of `entity`, each its field values in the entity's order.
    pub fn instances(&self, uid: u64, entity: Entity, s: &mut Scratch) -> Vec<Vec<crate::design::key::Owned>> {
        let mut out = Vec::new();
        let _ = self.each_instance::<std::convert::Infallible>(
            uid,
            s,
            |e| e == entity,
            |seen| {
                if let Visit::Instance(_, values) = seen {
                    out.push(values.iter().map(|v| v.owned()).collect());
                }
                Ok(())
            },
        );
        out
    }
}

/// What [`Generator::each_instance`] hands over.
pub enum Visit<'a> {
    /// One instance: its entity, and its field values in the entity's order.
    Instance(Entity, &'a [crate::design::key::Value<'a>]),
    /// The end of a user's instances of an entity.
    End(Entity),
}

impl Generator {
    /// A row key of `table` as its decoded fields (`userid=5 stamp=... actionid=3`), by the
    /// design's keys, the seed designs' descriptions too, for error messages and verify
    /// reports; the raw bytes when it does not decode. Where a table holds several kinds of
    /// rows, the kind whose key reads the bytes whole is named; where more than one reads
    /// them, none is (a relation row is both a user's followees and followers).
    pub fn describe_row(&self, table: Table, key: &[u8]) -> String {
        let t = &self.design().tables[table.index()];
        let mut read = t.rows.iter().filter_map(|r| Some((r, r.key.decode(key).ok()?)));
        let Some((first, fields)) = read.next() else {
            return format!("key {}", crate::keys::to_string_binary(key));
        };
        let named = fields
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect::<Vec<_>>()
            .join(" ");
        match t.rows.len() > 1 && read.next().is_none() {
            true => format!("{} {named}", first.name),
            false => named,
        }
    }
}

/// Feeds a row mutation into a digest: every key, qualifier and value with its length, every
/// timestamp, and a tag per mutation kind.
pub fn digest_row(d: &mut super::Digest, table: Table, row: &RowMutation) {
    d.int(table.index() as u64);
    d.field(&row.row);
    let ts = |t: &Option<i64>| t.map_or(u64::MAX, |t| t as u64);
    for m in &row.mutations {
        match m {
            Mutation::Put {
                family,
                qualifier,
                timestamp,
                value,
            } => {
                d.int(1);
                d.field(family.as_bytes());
                d.field(qualifier);
                d.int(ts(timestamp));
                d.field(value);
            }
            Mutation::DeleteColumn {
                family,
                qualifier,
                timestamp,
            } => {
                d.int(2);
                d.field(family.as_bytes());
                d.field(qualifier);
                d.int(ts(timestamp));
            }
            Mutation::DeleteFamily { family, timestamp } => {
                d.int(3);
                d.field(family.as_bytes());
                d.int(ts(timestamp));
            }
            Mutation::DeleteRow { timestamp } => {
                d.int(4);
                d.int(ts(timestamp));
            }
            Mutation::DeleteVersion {
                family,
                qualifier,
                timestamp,
            } => {
                d.int(5);
                d.field(family.as_bytes());
                d.field(qualifier);
                d.int(*timestamp as u64);
            }
            Mutation::DeleteFamilyVersion { family, timestamp } => {
                d.int(6);
                d.field(family.as_bytes());
                d.int(*timestamp as u64);
            }
        }
    }
}
