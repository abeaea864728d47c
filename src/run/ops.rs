//! The operations of a run: each is prepared from the generator (which user, which existing
//! row, which cursor), untimed, then executed as one DAO call, timed.
//!
//! Reads always target data the load wrote: a user is redrawn (up to 8 times) until it has
//! what the operation reads; page depths are clamped to the user's last page. Cursors are the
//! row keys a client paging through would hold, computed from the generator.

use super::pick::Users;
use crate::generate::rng::Stream;
use crate::generate::{Follow, Generator, geometric, words};
use crate::keys::Order;
use crate::schema::actions::{Action, Actions};
use crate::schema::blog::{Article, Blog};
use crate::schema::microblog::{Microblog, Post};
use crate::schema::series::Series;
use crate::schema::{self, Result};
use crate::store::{Store, now_millis};
use crate::workload::Op;
use rustc_hash::FxHashMap;
use std::rc::Rc;
use std::sync::Arc;

/// Rows per page for timelines, posts, actions and articles.
pub const PAGE: usize = 10;
/// Ids per page of follower and followee lists.
pub const LIST_PAGE: usize = 20;
/// Most rows a time-range read returns.
pub const RANGE_LIMIT: usize = 100;
/// Probability of page 1 in the geometric page depth (then page 2 with 0.4 × 0.6, ...).
const PAGE_DEPTH_P: f64 = 0.4;
/// Deepest page asked for.
const MAX_DEPTH: u64 = 100;
/// Width of an action-range read.
const ACTIONS_WINDOW_MS: i64 = 7 * 86_400_000;
/// Width of a series-range read.
const SERIES_WINDOW_MS: i64 = 86_400_000;
/// Users whose action keys a worker keeps.
const CACHE_USERS: usize = 4096;

/// The DAOs of a workload over one store, with its generator.
pub struct Ctx {
    g: Arc<Generator>,
    users: Users,
    microblog: Microblog,
    actions: Actions,
    blog: Blog,
    series: Series,
    own: Option<super::own::Own>,
    /// Each seed operation's description's operation (by [`Op::seed_index`]), where the
    /// seed designs' operations run through their descriptions, as they do but for the
    /// reference the descriptions are measured against ([`Ctx::by_code`]).
    described: Option<[crate::workload::OwnOp; 18]>,
}

/// One prepared DAO call.
#[derive(Debug, Clone, PartialEq)]
pub enum Call {
    /// Home timeline page (before `None`: page 1).
    Timeline(u64, Option<i64>),
    /// Pulled home timeline, page 1.
    TimelinePull(u64),
    /// A user's own posts, page 1.
    OwnPosts(u64),
    /// An action page by offset.
    ActionsOffset(i32, usize),
    /// An action page after a cursor.
    ActionsCursor(i32, Option<Vec<u8>>),
    /// Actions in `[from, to]`.
    ActionsRange(i32, i64, i64),
    /// Series points in `[from, to]`.
    SeriesRange(i32, i64, i64),
    /// Followers page after an id.
    Followers(u64, Option<u64>),
    /// Followees page after an id.
    Followees(u64, Option<u64>),
    /// A category's articles, page 1.
    Category(i64, i32),
    /// Publish with fan-out.
    Publish(Post),
    /// Store an action.
    ActionWrite(Action),
    /// `uid` follows `target` at `at`.
    Follow(u64, u64, i64),
    /// `uid` unfollows `target`.
    Unfollow(u64, u64),
    /// Post an article.
    ArticlePost(Article),
    /// Update an article's title and content at a time.
    ArticleUpdate(Article, String, String, i64),
    /// Delete an article at a time.
    ArticleDelete(Article, i64),
    /// An operation of the workload's own design.
    Own(super::own::OwnCall),
}

/// A worker's scratch space and caches.
pub struct Scratch {
    worker: u64,
    seq: u64,
    follows: Vec<Follow>,
    seen: crate::generate::Seen,
    stamps: Vec<i64>,
    actions: Vec<Action>,
    articles: Vec<Article>,
    action_keys: FxHashMap<u64, Rc<[Vec<u8>]>>,
    own: super::own::Scratch,
    /// Users' instances of an entity, for an own design's operations (as many users' as
    /// the seeds' action keys keep).
    instances: FxHashMap<(u64, crate::design::Entity), Rc<[Vec<crate::design::key::Owned>]>>,
}

impl Scratch {
    /// Scratch space of worker `worker`.
    pub fn new(worker: usize) -> Self {
        Scratch {
            worker: worker as u64,
            seq: 0,
            follows: Vec::new(),
            seen: crate::generate::Seen::default(),
            stamps: Vec::new(),
            actions: Vec::new(),
            articles: Vec::new(),
            action_keys: FxHashMap::default(),
            own: Default::default(),
            instances: FxHashMap::default(),
        }
    }
}

impl Ctx {
    /// The operations of `g`'s workload over `store`, the seed designs' through their
    /// descriptions; reads the celebrity set once, as a timeline service would. Users are
    /// picked by `r`'s skew.
    pub fn new(store: Arc<dyn Store>, g: Arc<Generator>, r: &crate::workload::Run) -> Result<Ctx> {
        Ctx::make(store, g, r, false)
    }

    /// [`Ctx::new`], the seed designs' operations by the seeds' hand-written DAOs: the
    /// oracle the descriptions' operations are held to, and the reference of their cost.
    pub fn by_code(store: Arc<dyn Store>, g: Arc<Generator>, r: &crate::workload::Run) -> Result<Ctx> {
        Ctx::make(store, g, r, true)
    }

    fn make(store: Arc<dyn Store>, g: Arc<Generator>, r: &crate::workload::Run, code: bool) -> Result<Ctx> {
        let w = g.workload();
        let users = Users::new(r.skew, r.skew_exponent, w.data.users);
        let seeds = g.own_design().is_none();
        let own = match seeds && code {
            true => None,
            false => Some(super::own::Own::new(&g, store.clone(), users.clone())?),
        };
        let described = match (&own, seeds) {
            (Some(own), true) => Some(Op::ALL.map(|op| {
                let index = own
                    .index_of(op.name())
                    .unwrap_or_else(|| panic!("the seed descriptions declare {}", op.name()));
                crate::workload::OwnOp::new(index, op.name(), op.writes())
            })),
            _ => None,
        };
        let mut microblog = Microblog::new(store.clone(), g.microblog_config());
        if own.is_none() && w.data.follows.is_some() && w.data.posts.is_some() {
            let stars = microblog.load_celebrities()?;
            microblog = microblog.with_celebrities(stars);
        }
        Ok(Ctx {
            users,
            microblog,
            actions: Actions::new(store.clone(), w.keys.actions),
            blog: Blog::new(store.clone(), w.keys.blog),
            series: Series::new(store, w.keys.series),
            own,
            described,
            g,
        })
    }

    /// The operation `op` runs as: a seed operation's description's, where they run.
    #[inline]
    fn described(&self, op: Op) -> Op {
        match (&self.described, op.seed_index()) {
            (Some(ops), Some(i)) => Op::Own(ops[i]),
            _ => op,
        }
    }

    /// The generator.
    pub fn generator(&self) -> &Generator {
        &self.g
    }

    /// Prepares `op` from the draws of `s` (each call gets its own stream).
    pub fn prepare(&self, op: Op, s: &Stream, x: &mut Scratch) -> Call {
        x.seq += 1;
        let op = self.described(op);
        let g = &*self.g;
        let w = g.workload();
        let (start, span) = (w.data.start_ms, w.data.span_ms);
        let mut uid = self.users.pick(g, s, 0);
        for redraw in 1..=8 {
            if self.has_data(op, uid, x) {
                break;
            }
            uid = self.users.pick(g, s, redraw);
        }
        let depth = 1 + geometric(s, 20, PAGE_DEPTH_P).min(MAX_DEPTH - 1);
        match op {
            Op::Own(o) => {
                let own = self.own.as_ref().expect("an own design's operation has its design");
                let index = usize::from(o.index);
                let entity = own.entity(index);
                let prepare = |list: &[_], x: &mut super::own::Scratch| {
                    own.prepare(g, index, (uid, list), s, x).unwrap_or_else(|e| {
                        super::own::OwnCall::Refused(format!("user {uid}'s {}: {e}", entity.name()))
                    })
                };
                // An operation prepared from the user's id alone takes no instances.
                let call = match own.needs_instances(index) {
                    false => prepare(&[], &mut x.own),
                    true => match x.instances.get(&(uid, entity)).cloned() {
                        Some(list) if !list.is_empty() => prepare(&list, &mut x.own),
                        _ => super::own::OwnCall::Refused(format!(
                            "none of the 9 users drawn has a {} for {}",
                            entity.name(),
                            o.name
                        )),
                    },
                };
                Call::Own(call)
            }
            Op::Timeline => Call::Timeline(uid, None),
            Op::TimelineLater => Call::Timeline(uid, Some(self.later_page_start(uid, s, x))),
            Op::TimelinePull => Call::TimelinePull(uid),
            Op::OwnPosts => Call::OwnPosts(uid),
            Op::ActionsOffset | Op::ActionsCursor => {
                let keys = self.action_keys(uid, x);
                let pages = keys.len().div_ceil(PAGE).max(1) as u64;
                let depth = depth.min(pages) as usize;
                if op == Op::ActionsOffset {
                    Call::ActionsOffset(uid as i32, (depth - 1) * PAGE)
                } else {
                    let cursor = (depth > 1).then(|| keys[(depth - 1) * PAGE - 1].clone());
                    Call::ActionsCursor(uid as i32, cursor)
                }
            }
            Op::ActionsRange => {
                let (from, to) = window(start, span, ACTIONS_WINDOW_MS, s);
                Call::ActionsRange(uid as i32, from, to)
            }
            Op::SeriesRange => {
                let (from, to) = window(start, span, SERIES_WINDOW_MS, s);
                Call::SeriesRange(uid as i32, from, to)
            }
            Op::Followers | Op::Followees => {
                // Page 1 half the time, else the page after a random id: a cursor into the
                // middle of the list, as a client deep in it holds.
                let after = (s.unit(21) >= 0.5).then(|| s.below(22, w.data.users) + 1);
                if op == Op::Followers {
                    Call::Followers(uid, after)
                } else {
                    Call::Followees(uid, after)
                }
            }
            Op::Category => {
                g.article_heads(uid, &mut x.articles);
                let category = match x.articles.len() as u64 {
                    0 => 0,
                    n => x.articles[s.below(23, n) as usize].category,
                };
                Call::Category(uid as i64, category)
            }
            Op::Publish => {
                let mut content = String::new();
                words(&s.child(24), 40 + s.below(25, 100) as usize, &mut content);
                Call::Publish(Post {
                    uid,
                    stamp: now_millis(),
                    content,
                })
            }
            Op::ActionWrite => {
                let verbs = w.data.actions.as_ref().map_or(&[][..], |a| &a.verbs[..]);
                let verb = verbs.get(s.below(26, verbs.len().max(1) as u64) as usize);
                let author = self.users.pick(g, s, 27);
                g.post_stamps(author, g.post_count(author), 1, &mut x.stamps);
                let target = x.stamps.first().copied().unwrap_or(start);
                Call::ActionWrite(Action {
                    userid: uid as i32,
                    stamp: now_millis(),
                    // Above every generated id (an index below a million).
                    actionid: (1_000_000_000 + (x.worker * 1_000_003 + x.seq) % 1_000_000_000) as i32,
                    name: format!("{} {author}@{target}", verb.map_or("view", |v| v.as_str())),
                })
            }
            Op::Follow => Call::Follow(uid, self.users.followee(g, s, uid), now_millis()),
            Op::Unfollow => {
                g.followees(uid, &mut x.follows, &mut x.seen);
                let target = match x.follows.len() as u64 {
                    0 => uid % w.data.users + 1,
                    n => x.follows[s.below(29, n) as usize].target,
                };
                Call::Unfollow(uid, target)
            }
            Op::ArticlePost => {
                let categories = w.data.articles.as_ref().map_or(1, |a| a.categories);
                let category = s.below(30, u64::from(categories)) as i32;
                let (mut title, mut content) = (String::new(), String::new());
                words(&s.child(31), 20 + s.below(32, 60) as usize, &mut title);
                words(&s.child(33), article_size(w, s), &mut content);
                let now = now_millis();
                Call::ArticlePost(Article {
                    // Above every generated article of the user (indexes below 500,000).
                    article_id: uid as i64 * 1_000_000 + 500_000 + (x.seq % 500_000) as i64,
                    uid: uid as i64,
                    user_name: format!("user{uid}"),
                    title,
                    content,
                    category,
                    category_name: format!("category-{category}"),
                    post_at: now,
                    update_at: now,
                })
            }
            Op::ArticleUpdate | Op::ArticleDelete => {
                g.article_heads(uid, &mut x.articles);
                let n = x.articles.len().max(1) as u64;
                let article = x
                    .articles
                    .get(s.below(34, n) as usize)
                    .cloned()
                    .unwrap_or_else(|| Article {
                        article_id: uid as i64 * 1_000_000,
                        uid: uid as i64,
                        user_name: format!("user{uid}"),
                        title: String::new(),
                        content: String::new(),
                        category: 0,
                        category_name: "category-0".into(),
                        post_at: start,
                        update_at: start,
                    });
                if op == Op::ArticleDelete {
                    Call::ArticleDelete(article, now_millis())
                } else {
                    let (mut title, mut content) = (String::new(), String::new());
                    words(&s.child(35), 20 + s.below(36, 60) as usize, &mut title);
                    words(&s.child(37), article_size(w, s), &mut content);
                    Call::ArticleUpdate(article, title, content, now_millis())
                }
            }
        }
    }

    /// Runs a prepared call.
    pub fn execute(&self, call: &Call) -> Result<()> {
        match call {
            Call::Timeline(uid, before) => self.microblog.timeline(*uid, PAGE, *before).map(drop),
            Call::TimelinePull(uid) => self.microblog.timeline_pull(*uid, PAGE, None).map(drop),
            Call::OwnPosts(uid) => self.microblog.posts(*uid, None, PAGE).map(drop),
            Call::ActionsOffset(uid, offset) => self.actions.page_by_offset(*uid, *offset, PAGE).map(drop),
            Call::ActionsCursor(uid, cursor) => self.actions.page_after(*uid, cursor.as_deref(), PAGE).map(drop),
            Call::ActionsRange(uid, from, to) => self.actions.range(*uid, *from, *to, RANGE_LIMIT).map(drop),
            Call::SeriesRange(uid, from, to) => self.series.range(*uid, *from, *to, RANGE_LIMIT).map(drop),
            Call::Followers(uid, after) => self.microblog.followers(*uid, *after, LIST_PAGE).map(drop),
            Call::Followees(uid, after) => self.microblog.followees(*uid, *after, LIST_PAGE).map(drop),
            Call::Category(uid, category) => self.blog.list_category(*uid, *category, None, PAGE).map(drop),
            Call::Publish(post) => self.microblog.publish(post).map(drop),
            Call::ActionWrite(a) => self.actions.put(a),
            Call::Follow(uid, target, at) => self.microblog.follow(*uid, *target, *at),
            Call::Unfollow(uid, target) => self.microblog.unfollow(*uid, *target),
            Call::ArticlePost(a) => self.blog.post(a),
            Call::ArticleUpdate(a, title, content, at) => self.blog.update(a, title, content, *at).map(drop),
            Call::ArticleDelete(a, at) => self.blog.delete(a, *at),
            Call::Own(c) => self
                .own
                .as_ref()
                .expect("an own design's call has its design")
                .execute(&self.g, c),
        }
    }

    /// Whether `uid` has the data `op` reads.
    fn has_data(&self, op: Op, uid: u64, x: &mut Scratch) -> bool {
        let g = &*self.g;
        match op {
            Op::OwnPosts => g.post_count(uid) > 0,
            Op::Timeline | Op::TimelineLater | Op::TimelinePull | Op::Followees | Op::Unfollow => g.out_degree(uid) > 0,
            Op::Followers => g.plan().followers(uid) > 0,
            Op::ActionsOffset | Op::ActionsCursor | Op::ActionsRange => !self.action_keys(uid, x).is_empty(),
            Op::SeriesRange => g.point_count(uid) > 0,
            Op::Category | Op::ArticleUpdate | Op::ArticleDelete => {
                g.article_heads(uid, &mut x.articles);
                !x.articles.is_empty()
            }
            Op::Publish | Op::ActionWrite | Op::Follow | Op::ArticlePost => true,
            Op::Own(o) => {
                let own = self.own.as_ref().expect("an own design's operation has its design");
                let entity = own.entity(usize::from(o.index));
                if let Some(has) = own.has_row(g, usize::from(o.index), uid) {
                    return has;
                }
                if !x.instances.contains_key(&(uid, entity)) {
                    if x.instances.len() >= CACHE_USERS {
                        x.instances.clear();
                    }
                    let list = g.instances(uid, entity, &mut x.own.generated);
                    x.instances.insert((uid, entity), list.into());
                }
                !x.instances[&(uid, entity)].is_empty()
            }
        }
    }

    /// `uid`'s generated action row keys in the order its pages read them (key `k * PAGE - 1`
    /// is the cursor of page `k + 1`).
    pub fn action_keys(&self, uid: u64, x: &mut Scratch) -> Rc<[Vec<u8>]> {
        if let Some(k) = x.action_keys.get(&uid) {
            return k.clone();
        }
        let opts = self.g.workload().keys.actions;
        self.g.followees(uid, &mut x.follows, &mut x.seen);
        self.g.actions(uid, &x.follows, &mut x.stamps, &mut x.actions);
        let mut list: Vec<Vec<u8>> = x
            .actions
            .iter()
            .filter_map(|a| schema::actions::mutation(opts, a).ok().map(|m| m.row))
            .collect();
        list.sort();
        if opts.order == Order::Forward {
            // Forward keys are read newest first by a reversed scan.
            list.reverse();
        }
        if x.action_keys.len() >= CACHE_USERS {
            x.action_keys.clear();
        }
        let keys: Rc<[Vec<u8>]> = list.into();
        x.action_keys.insert(uid, keys.clone());
        keys
    }

    /// Where a later timeline page starts: the time of one of the newest posts of one of
    /// `uid`'s followees, as the last post of an earlier page would be.
    fn later_page_start(&self, uid: u64, s: &Stream, x: &mut Scratch) -> i64 {
        let g = &*self.g;
        let w = g.workload();
        g.followees(uid, &mut x.follows, &mut x.seen);
        for t in 0..4 {
            let Some(f) = x.follows.get(s.below(40 + t, x.follows.len().max(1) as u64) as usize) else {
                break;
            };
            let count = g.post_count(f.target);
            if count > 0 {
                let k = s.below(44, u64::from(w.microblog.inbox_versions)) + 1;
                g.post_stamps(f.target, count, k, &mut x.stamps);
                return *x.stamps.last().expect("count > 0");
            }
        }
        w.data.start_ms + w.data.span_ms / 2
    }
}

/// A window of `width` ms inside the span (the whole span when it is narrower).
fn window(start: i64, span: i64, width: i64, s: &Stream) -> (i64, i64) {
    if span <= width {
        return (start, start + span - 1);
    }
    let from = start + s.below(45, (span - width) as u64) as i64;
    (from, from + width - 1)
}

/// An article body size drawn like the generator's.
fn article_size(w: &crate::workload::Workload, s: &Stream) -> usize {
    w.data.articles.as_ref().map_or(200, |a| {
        s.lognormal(46, f64::from(a.size_median).ln(), a.size_sigma)
            .clamp(1.0, 1_000_000.0) as usize
    })
}

/// The error kind a failure is counted under.
pub fn error_kind(e: &schema::Error) -> &'static str {
    use crate::store::Error as S;
    match e {
        schema::Error::Store(S::TableNotFound(_)) => "table_not_found",
        schema::Error::Store(S::TableExists(_)) => "table_exists",
        schema::Error::Store(S::FamilyNotFound { .. }) => "family_not_found",
        schema::Error::Store(S::BadArgument(_)) => "bad_argument",
        schema::Error::Store(S::Io(_)) => "io",
        schema::Error::Store(S::Unavailable(_)) => "unavailable",
        schema::Error::Store(S::Denied(_)) => "denied",
        schema::Error::Key(_) | schema::Error::Design(_) => "key",
        schema::Error::Corrupt { .. } => "corrupt",
    }
}
