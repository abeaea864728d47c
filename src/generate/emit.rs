//! A block of users turned into the row mutations of every table, through the schema layer's
//! builders: what the loader writes, what the determinism test digests.

use super::{Follow, Generator};
use crate::design::Entity;
use crate::schema::{self, actions, blog, microblog, series};
use crate::store::{Mutation, RowMutation, TableDescriptor};

/// The tables a workload writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Table {
    /// `weibo:user`.
    User,
    /// `weibo:relation`.
    Relation,
    /// `weibo:celebrity`.
    Celebrity,
    /// `weibo:content`.
    Content,
    /// `weibo:inbox`.
    Inbox,
    /// `useractions`.
    Actions,
    /// `blog`.
    Blog,
    /// `series`.
    Series,
}

impl Table {
    /// Every table, in report order.
    pub const ALL: [Table; 8] = [
        Table::User,
        Table::Relation,
        Table::Celebrity,
        Table::Content,
        Table::Inbox,
        Table::Actions,
        Table::Blog,
        Table::Series,
    ];

    /// The table's name in the store.
    pub fn name(self) -> &'static str {
        match self {
            Table::User => microblog::USER,
            Table::Relation => microblog::RELATION,
            Table::Celebrity => microblog::CELEBRITY,
            Table::Content => microblog::CONTENT,
            Table::Inbox => microblog::INBOX,
            Table::Actions => actions::TABLE,
            Table::Blog => blog::TABLE,
            Table::Series => series::TABLE,
        }
    }

    /// The key design (a field of the workload's `[keys]`) of the table's row keys; `None`
    /// for the microblog tables keyed by the text uid alone.
    pub fn design(self) -> Option<&'static str> {
        match self {
            Table::Content => Some("weibo"),
            Table::Actions => Some("actions"),
            Table::Blog => Some("blog"),
            Table::Series => Some("series"),
            Table::User | Table::Relation | Table::Celebrity | Table::Inbox => None,
        }
    }

    /// Whether the table's row keys are binary (big-endian integers) rather than text.
    pub fn binary_keys(self) -> bool {
        matches!(self, Table::Actions | Table::Blog)
    }

    /// Position in [`Table::ALL`].
    pub fn index(self) -> usize {
        self as usize
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
        let w = self.workload();
        let mark = crate::store::mark(&w.name, &w.data_digest());
        out.into_iter()
            .map(|t| TableDescriptor {
                attributes: mark.clone(),
                ..w.storage.apply(t)
            })
            .collect()
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
            self.emit_user(uid, s, sink)?;
        }
        Ok(())
    }

    /// Every row mutation of user `uid`: its own rows, and the `fans` cells its follows put
    /// into its followees' relation rows, by the seeds' hand-written codecs. The seed
    /// descriptions write the same rows ([`Generator::emit_user_described`], held to these
    /// row for row by a test); the loader takes these until the descriptions cost no more.
    pub fn emit_user(&self, uid: u64, s: &mut Scratch, sink: &mut impl Sink) -> schema::Result<()> {
        let w = self.workload();
        let plan = self.plan();
        let keys = w.keys;
        let start = w.data.start_ms;
        let microblog_on = w.data.follows.is_some() || w.data.posts.is_some();
        if microblog_on {
            sink.row(Table::User, microblog::user_mutation(&self.user(uid), start))?;
        }
        self.followees(uid, &mut s.followees, &mut s.seen);
        for f in &s.followees {
            for m in microblog::Microblog::follow_mutations(uid, f.target, f.at) {
                sink.row(Table::Relation, m)?;
            }
        }
        if plan.is_celebrity(uid) {
            sink.row(
                Table::Celebrity,
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
            sink.row(Table::Inbox, RowMutation::new(microblog::uid_bytes(uid), inbox))?;
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
            sink.row(Table::Content, microblog::content_mutation(keys.weibo, &post)?)?;
            s.text = post.content;
        }
        self.actions(uid, &s.followees, &mut s.stamps, &mut s.actions);
        for a in &s.actions {
            sink.row(Table::Actions, actions::mutation(keys.actions, a)?)?;
        }
        self.articles(uid, &mut s.articles);
        for a in &s.articles {
            for m in blog::mutations(keys.blog, a, a.update_at)? {
                sink.row(Table::Blog, m)?;
            }
        }
        self.points(uid, &mut s.points);
        for p in &s.points {
            sink.row(Table::Series, series::mutation(keys.series, p)?)?;
        }
        Ok(())
    }

    /// [`Generator::emit_user`]'s rows made by the design's descriptions, entity by entity
    /// in [`Entity::ALL`] order; a row keyed by the user's own fields alone (a reader's inbox)
    /// gathers the cells of all the user's instances of its entity into one mutation.
    pub fn emit_user_described(&self, uid: u64, s: &mut Scratch, sink: &mut impl Sink) -> schema::Result<()> {
        use crate::design::key::Value::{Bytes, Int};
        let w = self.workload();
        let plan = self.plan();
        let e = &*self.emitter;
        let start = i128::from(w.data.start_ms);
        let id = i128::from(uid);
        let gathered = &mut s.gathered;
        let mut put = |t: usize, row: RowMutation| sink.row(Table::ALL[t], row);
        // The rows an entity's instances gather cells into go once they are all made.
        macro_rules! flush {
            () => {
                for (t, row) in gathered.drain(..) {
                    put(t, row)?;
                }
            };
        }
        macro_rules! emit {
            ($entity:expr, $values:expr) => {
                e.emit($entity, $values, gathered, &mut put)?
            };
        }
        if (w.data.follows.is_some() || w.data.posts.is_some()) && e.makes(Entity::User) {
            let u = self.user(uid);
            emit!(
                Entity::User,
                &[Int(id), Bytes(u.name.as_bytes()), Bytes(u.sex.as_bytes()), Int(start)]
            );
            flush!();
        }
        self.followees(uid, &mut s.followees, &mut s.seen);
        if e.makes(Entity::Follow) {
            for f in &s.followees {
                emit!(Entity::Follow, &[Int(id), Int(f.target.into()), Int(f.at.into())]);
            }
            flush!();
        }
        if plan.is_celebrity(uid) && e.makes(Entity::Celebrity) {
            emit!(
                Entity::Celebrity,
                &[Int(id), Int(plan.followers(uid).into()), Int(start)]
            );
            flush!();
        }
        if w.data.posts.is_some() && e.makes(Entity::Delivery) {
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
            flush!();
        }
        if e.makes(Entity::Post) {
            let count = self.post_count(uid);
            self.post_stamps(uid, count, count, &mut s.stamps);
            for (i, &stamp) in s.stamps.iter().enumerate() {
                self.post_content(uid, i as u64, &mut s.text);
                emit!(Entity::Post, &[Int(id), Int(stamp.into()), Bytes(s.text.as_bytes())]);
            }
            flush!();
        }
        if e.makes(Entity::Action) {
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
            flush!();
        }
        if e.makes(Entity::Article) {
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
            flush!();
        }
        if e.makes(Entity::Point) {
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
            flush!();
        }
        Ok(())
    }
}

impl Generator {
    /// A row key of `table` as its decoded fields (`userid=5 stamp=... actionid=3`), for
    /// error messages and verify reports; the raw bytes when it does not decode.
    pub fn describe_row(&self, table: Table, key: &[u8]) -> String {
        use crate::keys::Layout;
        let keys = self.workload().keys;
        let decoded = match table {
            Table::User | Table::Relation | Table::Celebrity | Table::Inbox => {
                crate::keys::weibo::parse_uid(key).map(|uid| vec![("uid", uid.to_string())])
            }
            Table::Content => Layout::WeiboContent.decode(keys.weibo, key),
            Table::Actions => Layout::Actions.decode(keys.actions, key),
            Table::Series => Layout::Series.decode(keys.series, key),
            Table::Blog => Layout::Blog
                .decode(keys.blog, key)
                .or_else(|_| Layout::BlogIndex.decode(keys.blog, key)),
        };
        match decoded {
            Ok(fields) => fields
                .iter()
                .map(|(k, v)| format!("{k}={v}"))
                .collect::<Vec<_>>()
                .join(" "),
            Err(_) => format!("key {}", crate::keys::to_string_binary(key)),
        }
    }
}

/// Feeds a row mutation into a digest: every key, qualifier and value with its length, every
/// timestamp, and a tag per mutation kind.
pub fn digest_row(d: &mut super::Digest, table: Table, row: &RowMutation) {
    d.int(table as u64);
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
