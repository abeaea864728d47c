//! The microblog (seed 001), namespace `weibo`:
//!
//! - `weibo:content`, family `info`: row `uid_(MAX-stamp)`, `info:content` = the post.
//! - `weibo:relation`, families `attention` and `fans`: row `uid`; `attention:<followee>` =
//!   followee and `fans:<follower>` = follower.
//! - `weibo:inbox`, family `receive` with `VERSIONS = N`: row `uid`; `receive:<followee>` =
//!   the content row key of one of the followee's posts, one version per post, so the family
//!   keeps the N newest posts of each followee.
//! - `weibo:user`, family `info`: row `uid`; `info:name` and `info:sex`.
//! - `weibo:celebrity`, family `info`: row `uid` of each producer with more followers than the
//!   celebrity threshold; `info:followers` = the follower count (8 bytes, big-endian).
//!
//! Celebrities are not fanned out on write: `publish` writes no inbox cells for them and
//! `follow` backfills none; the push timeline merges their newest posts at read time, from the
//! celebrity set the DAO holds (read once from `weibo:celebrity`, as a timeline service caches
//! it). The set is fixed when the data is loaded.
//!
//! Every inbox cell is stamped with its post's time, on publish and on follow's backfill
//! alike: versions keep post order however the writes interleave, and a reload rewrites the
//! same cells. Relation cells are stamped with the follow time.

use super::{Error, Page, Result, corrupt, newest_first_in};
use crate::keys::{KeyOptions, weibo};
use crate::store::{Column, Get, Mutation, Row, RowMutation, Store, TableDescriptor};
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

/// Content table.
pub const CONTENT: &str = "weibo:content";
/// Relation table.
pub const RELATION: &str = "weibo:relation";
/// Inbox table.
pub const INBOX: &str = "weibo:inbox";
/// User table.
pub const USER: &str = "weibo:user";
/// Celebrity table.
pub const CELEBRITY: &str = "weibo:celebrity";
/// Qualifier of a celebrity's follower count.
pub const FOLLOWERS_QUALIFIER: &[u8] = b"followers";
/// Family of the content and user tables.
pub const INFO: &str = "info";
/// Followees family of the relation table.
pub const ATTENTION: &str = "attention";
/// Followers family of the relation table.
pub const FANS: &str = "fans";
/// Family of the inbox table.
pub const RECEIVE: &str = "receive";
/// Qualifier of a post's text.
pub const CONTENT_QUALIFIER: &[u8] = b"content";
/// Inbox cells written per store call when fanning out.
const FANOUT_BATCH: usize = 1000;
/// Relation cells read per store call when listing every follower.
const LIST_PAGE: usize = 1000;

/// A post.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Post {
    /// Author.
    pub uid: u64,
    /// Publication time (epoch ms).
    pub stamp: i64,
    /// Text.
    pub content: String,
}

/// A user's profile row.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct User {
    /// Id.
    pub uid: u64,
    /// Display name.
    pub name: String,
    /// The seed's `sex` column.
    pub sex: String,
}

/// Microblog settings.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Config {
    /// The inbox family's `VERSIONS`: posts kept per followee (the seed uses 2 or 3).
    pub inbox_versions: u32,
    /// Content row-key variant.
    pub keys: KeyOptions,
    /// Producers with more followers than this are celebrities; `None`: no one is.
    pub celebrity_threshold: Option<u64>,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            inbox_versions: 3,
            keys: KeyOptions::SEED,
            celebrity_threshold: None,
        }
    }
}

/// The microblog DAO.
#[derive(Clone)]
pub struct Microblog {
    store: Arc<dyn Store>,
    cfg: Config,
    celebrities: Arc<BTreeSet<u64>>,
}

/// The row key (and relation qualifier) of a user: its id in decimal.
pub fn uid_bytes(uid: u64) -> Vec<u8> {
    let mut out = Vec::with_capacity(20);
    weibo::uid_key(uid, &mut out);
    out
}

/// The content row mutation of a post under the key variant `opts` (no fan-out).
pub fn content_mutation(opts: KeyOptions, p: &Post) -> Result<RowMutation> {
    Ok(RowMutation::new(
        weibo::ContentKey {
            uid: p.uid,
            stamp: p.stamp,
        }
        .encode(opts)?,
        vec![Mutation::put(INFO, CONTENT_QUALIFIER, p.stamp, p.content.as_bytes())],
    ))
}

/// The profile row of a user, stamped `ts`.
pub fn user_mutation(u: &User, ts: i64) -> RowMutation {
    RowMutation::new(
        uid_bytes(u.uid),
        vec![
            Mutation::put(INFO, "name", ts, u.name.as_bytes()),
            Mutation::put(INFO, "sex", ts, u.sex.as_bytes()),
        ],
    )
}

/// The row that marks `uid` a celebrity with `followers` followers, stamped `ts`.
pub fn celebrity_mutation(uid: u64, followers: u64, ts: i64) -> RowMutation {
    RowMutation::new(
        uid_bytes(uid),
        vec![Mutation::put(INFO, FOLLOWERS_QUALIFIER, ts, followers.to_be_bytes())],
    )
}

/// The inbox cell that delivers `author`'s post (stamped `stamp`, row `content_key`).
pub fn inbox_cell(author: u64, stamp: i64, content_key: Vec<u8>) -> Mutation {
    Mutation::put(RECEIVE, uid_bytes(author), stamp, content_key)
}

impl Microblog {
    /// A DAO over `store`.
    pub fn new(store: Arc<dyn Store>, cfg: Config) -> Self {
        Microblog {
            store,
            cfg,
            celebrities: Arc::default(),
        }
    }

    /// The same DAO with `celebrities` as the set not fanned out on write.
    pub fn with_celebrities(mut self, celebrities: BTreeSet<u64>) -> Self {
        self.celebrities = Arc::new(celebrities);
        self
    }

    /// The celebrity set this DAO works with.
    pub fn celebrities(&self) -> &BTreeSet<u64> {
        &self.celebrities
    }

    /// Reads the celebrity set from `weibo:celebrity`.
    pub fn load_celebrities(&self) -> Result<BTreeSet<u64>> {
        let mut out = BTreeSet::new();
        let mut failed = None;
        let scan = crate::store::Scan::default().columns(vec![Column::qualifier(INFO, FOLLOWERS_QUALIFIER)]);
        crate::store::scan_each(&*self.store, CELEBRITY, &scan, 1000, |row| {
            match weibo::parse_uid(&row.key) {
                Ok(uid) => {
                    out.insert(uid);
                    true
                }
                Err(e) => {
                    failed = Some(e);
                    false
                }
            }
        })?;
        match failed {
            Some(e) => Err(e.into()),
            None => Ok(out),
        }
    }

    /// The settings.
    pub fn config(&self) -> Config {
        self.cfg
    }

    /// The four tables.
    pub fn tables(cfg: &Config) -> Vec<TableDescriptor> {
        vec![
            TableDescriptor::new(CONTENT, &[INFO], 1),
            TableDescriptor::new(RELATION, &[ATTENTION, FANS], 1),
            TableDescriptor::new(INBOX, &[RECEIVE], cfg.inbox_versions),
            TableDescriptor::new(USER, &[INFO], 1),
            TableDescriptor::new(CELEBRITY, &[INFO], 1),
        ]
    }

    /// Creates the tables unless they exist.
    pub fn create_tables(&self) -> Result<()> {
        super::create_tables(&*self.store, &Self::tables(&self.cfg))
    }

    /// The content row key of a post.
    pub fn content_key(&self, uid: u64, stamp: i64) -> Result<Vec<u8>> {
        Ok(weibo::ContentKey { uid, stamp }.encode(self.cfg.keys)?)
    }

    /// Stores a user's profile.
    pub fn put_user(&self, u: &User) -> Result<()> {
        let m = vec![
            Mutation::put_now(INFO, "name", u.name.as_bytes()),
            Mutation::put_now(INFO, "sex", u.sex.as_bytes()),
        ];
        Ok(self.store.mutate(USER, &[RowMutation::new(uid_bytes(u.uid), m)])?)
    }

    /// A user's profile.
    pub fn user(&self, uid: u64) -> Result<Option<User>> {
        let row = self.store.get(USER, &[Get::new(uid_bytes(uid))])?.pop().flatten();
        Ok(row.map(|r| User {
            uid,
            name: String::from_utf8_lossy(r.value(INFO, b"name").unwrap_or_default()).into_owned(),
            sex: String::from_utf8_lossy(r.value(INFO, b"sex").unwrap_or_default()).into_owned(),
        }))
    }

    /// The content row mutation of a post (no fan-out).
    pub fn content_mutation(&self, p: &Post) -> Result<RowMutation> {
        content_mutation(self.cfg.keys, p)
    }

    /// The inbox cell that delivers the post with `content_key` from `author` to `fan`.
    pub fn inbox_mutation(fan: u64, author: u64, stamp: i64, content_key: Vec<u8>) -> RowMutation {
        RowMutation::new(uid_bytes(fan), vec![inbox_cell(author, stamp, content_key)])
    }

    /// Publishes a post: its content row, then one inbox cell per follower, batched (none
    /// for a celebrity). Returns how many inbox cells were written.
    pub fn publish(&self, p: &Post) -> Result<usize> {
        let content = self.content_mutation(p)?;
        let key = content.row.clone();
        self.store.mutate(CONTENT, &[content])?;
        if self.celebrities.contains(&p.uid) {
            return Ok(0);
        }
        let mut sent = 0;
        let mut batch = Vec::with_capacity(FANOUT_BATCH);
        let mut failed = None;
        self.each_relation(p.uid, FANS, |fan| {
            batch.push(Self::inbox_mutation(fan, p.uid, p.stamp, key.clone()));
            if batch.len() == FANOUT_BATCH {
                if let Err(e) = self.store.mutate(INBOX, &batch) {
                    failed = Some(e);
                    return false;
                }
                sent += batch.len();
                batch.clear();
            }
            true
        })?;
        if let Some(e) = failed {
            return Err(e.into());
        }
        if !batch.is_empty() {
            self.store.mutate(INBOX, &batch)?;
            sent += batch.len();
        }
        Ok(sent)
    }

    /// The two relation cells of a follow, stamped `at`.
    pub fn follow_mutations(uid: u64, followee: u64, at: i64) -> [RowMutation; 2] {
        let (u, f) = (uid_bytes(uid), uid_bytes(followee));
        [
            RowMutation::new(u.clone(), vec![Mutation::put(ATTENTION, f.clone(), at, f.clone())]),
            RowMutation::new(f, vec![Mutation::put(FANS, u.clone(), at, u)]),
        ]
    }

    /// `uid` follows `followee` at time `at`: both relation cells, then the followee's N
    /// newest posts into `uid`'s inbox (none from a celebrity).
    pub fn follow(&self, uid: u64, followee: u64, at: i64) -> Result<()> {
        self.store
            .mutate(RELATION, &Self::follow_mutations(uid, followee, at))?;
        if self.celebrities.contains(&followee) {
            return Ok(());
        }
        let posts = self.newest_posts(followee, self.cfg.inbox_versions as usize)?;
        if posts.is_empty() {
            return Ok(());
        }
        let cells = posts
            .into_iter()
            .map(|(key, stamp)| Mutation::put(RECEIVE, uid_bytes(followee), stamp, key))
            .collect();
        Ok(self.store.mutate(INBOX, &[RowMutation::new(uid_bytes(uid), cells)])?)
    }

    /// `uid` stops following `followee`: both relation cells and every inbox version from the
    /// followee are removed (all versions, as the seed's `addColumns`).
    pub fn unfollow(&self, uid: u64, followee: u64) -> Result<()> {
        let (u, f) = (uid_bytes(uid), uid_bytes(followee));
        self.store.mutate(
            RELATION,
            &[
                RowMutation::new(u.clone(), vec![Mutation::delete_column(ATTENTION, f.clone())]),
                RowMutation::new(f.clone(), vec![Mutation::delete_column(FANS, u.clone())]),
            ],
        )?;
        Ok(self
            .store
            .mutate(INBOX, &[RowMutation::new(u, vec![Mutation::delete_column(RECEIVE, f)])])?)
    }

    /// The `(content key, stamp)` of an author's newest `n` posts, newest first.
    fn newest_posts(&self, author: u64, n: usize) -> Result<Vec<(Vec<u8>, i64)>> {
        let mut prefix = Vec::new();
        weibo::user_prefix(self.cfg.keys, author, &mut prefix);
        let scan = newest_first_in(self.cfg.keys.order, prefix)
            .columns(vec![Column::qualifier(INFO, CONTENT_QUALIFIER)])
            .limit(n);
        self.store
            .scan(CONTENT, &scan)?
            .into_iter()
            .map(|r| {
                let k = weibo::ContentKey::decode(self.cfg.keys, &r.key)?;
                Ok((r.key, k.stamp))
            })
            .collect()
    }

    /// An author's own posts, newest first, one page after `cursor`.
    pub fn posts(&self, author: u64, cursor: Option<&[u8]>, limit: usize) -> Result<Page<Post>> {
        let mut prefix = Vec::new();
        weibo::user_prefix(self.cfg.keys, author, &mut prefix);
        let mut scan = newest_first_in(self.cfg.keys.order, prefix)
            .columns(vec![Column::qualifier(INFO, CONTENT_QUALIFIER)])
            .limit(limit);
        if let Some(c) = cursor {
            scan = scan.after(c);
        }
        let rows = self.store.scan(CONTENT, &scan)?;
        let last = rows.last().map(|r| r.key.clone());
        let items = rows.iter().map(|r| self.decode_post(r)).collect::<Result<Vec<_>>>()?;
        Ok(Page::new(items, last, limit))
    }

    /// The push timeline: the inbox's versions and the newest posts of the celebrities `uid`
    /// follows, merged newest first, then a multi-get of their content rows. `before` (a post
    /// time) pages back: only posts strictly older than it.
    pub fn timeline(&self, uid: u64, limit: usize, before: Option<i64>) -> Result<Vec<Post>> {
        let mut get = Get::new(uid_bytes(uid))
            .columns(vec![Column::family(RECEIVE)])
            .versions(self.cfg.inbox_versions);
        if let Some(b) = before {
            get.select.time_range = Some((0, b.max(0)));
        }
        let row = self.store.get(INBOX, &[get])?.pop().flatten();
        let mut refs: Vec<(i64, Vec<u8>)> = row
            .map(|r| r.cells.into_iter().map(|c| (c.timestamp, c.value)).collect())
            .unwrap_or_default();
        if !self.celebrities.is_empty() {
            let mut stars = Vec::new();
            self.each_relation(uid, ATTENTION, |f| {
                if self.celebrities.contains(&f) {
                    stars.push(f);
                }
                true
            })?;
            for star in stars {
                for (key, stamp) in self.newest_posts(star, self.cfg.inbox_versions as usize)? {
                    if before.is_none_or(|b| stamp < b) {
                        refs.push((stamp, key));
                    }
                }
            }
        }
        refs.sort_by(|a, b| b.cmp(a));
        refs.dedup();
        refs.truncate(limit);
        self.fetch_posts(refs.into_iter().map(|(_, key)| key).collect())
    }

    /// The pull timeline: each followee's N newest posts (the window the inbox keeps, so the
    /// two timelines agree), merged newest first at read time.
    pub fn timeline_pull(&self, uid: u64, limit: usize, before: Option<i64>) -> Result<Vec<Post>> {
        let mut followees = Vec::new();
        self.each_relation(uid, ATTENTION, |f| {
            followees.push(f);
            true
        })?;
        let mut merged: Vec<(i64, Vec<u8>)> = Vec::new();
        for f in followees {
            for (key, stamp) in self.newest_posts(f, self.cfg.inbox_versions as usize)? {
                if before.is_none_or(|b| stamp < b) {
                    merged.push((stamp, key));
                }
            }
        }
        merged.sort_by(|a, b| b.cmp(a));
        merged.truncate(limit);
        self.fetch_posts(merged.into_iter().map(|(_, key)| key).collect())
    }

    fn fetch_posts(&self, keys: Vec<Vec<u8>>) -> Result<Vec<Post>> {
        if keys.is_empty() {
            return Ok(Vec::new());
        }
        let gets: Vec<Get> = keys
            .into_iter()
            .map(|k| Get::new(k).columns(vec![Column::qualifier(INFO, CONTENT_QUALIFIER)]))
            .collect();
        // A post deleted since it was delivered is skipped, not an error.
        self.store
            .get(CONTENT, &gets)?
            .into_iter()
            .flatten()
            .map(|r| self.decode_post(&r))
            .collect()
    }

    fn decode_post(&self, r: &Row) -> Result<Post> {
        let k = weibo::ContentKey::decode(self.cfg.keys, &r.key)?;
        let content = r
            .value(INFO, CONTENT_QUALIFIER)
            .ok_or_else(|| corrupt(CONTENT, &r.key, "no info:content cell"))?;
        Ok(Post {
            uid: k.uid,
            stamp: k.stamp,
            content: String::from_utf8_lossy(content).into_owned(),
        })
    }

    /// One page of `uid`'s followers, in the relation row's qualifier order, after `after`.
    pub fn followers(&self, uid: u64, after: Option<u64>, limit: usize) -> Result<Vec<u64>> {
        self.relation_page(uid, FANS, after, limit)
    }

    /// One page of the users `uid` follows, after `after`.
    pub fn followees(&self, uid: u64, after: Option<u64>, limit: usize) -> Result<Vec<u64>> {
        self.relation_page(uid, ATTENTION, after, limit)
    }

    fn relation_page(&self, uid: u64, family: &str, after: Option<u64>, limit: usize) -> Result<Vec<u64>> {
        if limit == 0 {
            return Ok(Vec::new());
        }
        let mut get = Get::new(uid_bytes(uid)).columns(vec![Column::family(family)]);
        get.select.qualifier_after = after.map(uid_bytes);
        get.select.cell_limit = Some(limit);
        let row = self.store.get(RELATION, &[get])?.pop().flatten();
        row.map(|r| r.cells)
            .unwrap_or_default()
            .iter()
            .map(|c| weibo::parse_uid(&c.qualifier).map_err(Error::from))
            .collect()
    }

    /// Visits every follower (`FANS`) or followee (`ATTENTION`) of `uid`, a page at a time.
    fn each_relation(&self, uid: u64, family: &str, mut visit: impl FnMut(u64) -> bool) -> Result<()> {
        let mut after = None;
        loop {
            let page = self.relation_page(uid, family, after, LIST_PAGE)?;
            for &f in &page {
                if !visit(f) {
                    return Ok(());
                }
            }
            if page.len() < LIST_PAGE {
                return Ok(());
            }
            after = page.last().copied();
        }
    }

    /// Counts of `uid`'s followers, by reading the whole relation family.
    pub fn follower_count(&self, uid: u64) -> Result<usize> {
        let mut n = 0;
        self.each_relation(uid, FANS, |_| {
            n += 1;
            true
        })?;
        Ok(n)
    }

    /// Every inbox cell of `uid`: followee -> content keys, newest first.
    pub fn inbox(&self, uid: u64) -> Result<BTreeMap<u64, Vec<Vec<u8>>>> {
        let get = Get::new(uid_bytes(uid))
            .columns(vec![Column::family(RECEIVE)])
            .versions(self.cfg.inbox_versions);
        let mut out: BTreeMap<u64, Vec<Vec<u8>>> = BTreeMap::new();
        if let Some(row) = self.store.get(INBOX, &[get])?.pop().flatten() {
            for c in row.cells {
                out.entry(weibo::parse_uid(&c.qualifier)?).or_default().push(c.value);
            }
        }
        Ok(out)
    }
}
