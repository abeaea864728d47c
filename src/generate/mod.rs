//! Deterministic synthetic data. Every generated value is a pure function of
//! `(seed, entity kind, id, field, index)`, so the same workload gives the same bytes whatever
//! the thread count or shard split, and a verifier regenerates instead of remembering.
//!
//! Users are `1..=users`, processed in blocks of [`BLOCK`]; every other id is arithmetic
//! (an action's id is its index for the user, an article's is `uid * 1_000_000 + index`).

pub mod digest;
pub mod dist;
mod emit;
mod plan;
pub mod rng;
pub mod text;

pub use digest::Digest;
pub use dist::{Scramble, Zipf, geometric};
pub use emit::{MAX_TABLES, Scratch, Sink, Table, Visit, digest_row};
pub use plan::Plan;
pub use text::{Texture, deflate_ratio, texture_for, words};

use crate::schema::{actions::Action, blog::Article, microblog, series::Point};
use crate::workload::Workload;
use rng::{Kind, Rng};
use std::ops::Range;
use std::sync::Arc;

/// Users per block: the unit of parallel work and of sharding.
pub const BLOCK: u64 = 256;
/// Most posts, actions, articles or points one user gets.
pub const PER_USER_CAP: u64 = 999_999;
const DAYS_PER_MONTH: f64 = 30.436_875;

// Field ids, per entity kind.
const F_SEX: u64 = 1;
const F_DEGREE: u64 = 1;
const F_CHOICE: u64 = 2;
const F_TARGET: u64 = 3;
const F_TIME: u64 = 4;
const F_COUNT: u64 = 1;
const F_STAMP: u64 = 2;
const F_LENGTH: u64 = 3;
const F_TEXT: u64 = 4;
const F_ITEM: u64 = 5;
const F_VALUE: u64 = 6;

/// Scratch space of [`Generator::followees`]: the users drawn so far. Only asked whether it
/// holds a user, never walked, so its hash need not resist collisions.
pub type Seen = rustc_hash::FxHashSet<u64>;

/// A follow edge: whom, and when.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Follow {
    /// The followee.
    pub target: u64,
    /// When the follow happened (epoch ms).
    pub at: i64,
}

/// The generator of one workload.
#[derive(Debug, Clone)]
pub struct Generator {
    w: Workload,
    rng: Rng,
    popularity: Scramble,
    follow_zipf: Zipf,
    category_zipf: Zipf,
    plan: Arc<Plan>,
    plan_time: std::time::Duration,
    plan_read: bool,
    texture: Texture,
    emitter: Arc<crate::design::emit::Emitter>,
    /// The workload's own design, when it has one.
    own: Option<Arc<crate::design::Design>>,
    /// The design the rows are made by: the workload's own, or the seed designs as one.
    design: Arc<crate::design::Design>,
    /// Every table of the design, in its order: [`Table::SEEDS`] for the seed designs.
    all: Arc<[Table]>,
    /// The seed designs' rows made by the hand-written codecs, the reference their
    /// descriptions are measured against, not by the descriptions.
    codecs: bool,
}

/// The texture of `data.compressibility`, found once per ratio.
fn texture(ratio: Option<f64>) -> Texture {
    use std::sync::{Mutex, OnceLock};
    static FOUND: OnceLock<Mutex<Vec<(u64, Texture)>>> = OnceLock::new();
    let Some(ratio) = ratio else { return Texture::default() };
    let found = FOUND.get_or_init(Mutex::default);
    if let Some((_, t)) = found.lock().expect("lock").iter().find(|(r, _)| *r == ratio.to_bits()) {
        return *t;
    }
    // Validation found it within reach.
    let t = texture_for(ratio).unwrap_or_default();
    found.lock().expect("lock").push((ratio.to_bits(), t));
    t
}

impl Generator {
    /// The generator of `w`.
    pub fn new(w: &Workload) -> Self {
        let mut g = Generator::unplanned(w);
        let started = std::time::Instant::now();
        g.plan = Arc::new(Plan::build(&g));
        g.plan_time = started.elapsed();
        g
    }

    /// The generator of `w` with the plan [`Plan::write`] kept in `path`, when it is `w`'s
    /// and whole; otherwise counted as [`Generator::new`] does.
    pub fn with_plan_from(w: &Workload, path: &std::path::Path) -> Self {
        let mut g = Generator::unplanned(w);
        let started = std::time::Instant::now();
        let read = std::fs::File::open(path)
            .ok()
            .and_then(|f| Plan::read(&g, &mut std::io::BufReader::with_capacity(1 << 16, f)));
        g.plan_read = read.is_some();
        g.plan = Arc::new(read.unwrap_or_else(|| Plan::build(&g)));
        g.plan_time = started.elapsed();
        g
    }

    /// The generator of `w` without its plan.
    fn unplanned(w: &Workload) -> Self {
        let rng = Rng::new(w.seed);
        let users = w.data.users;
        let exponent = w.data.follows.as_ref().map_or(0.7, |f| f.zipf_exponent);
        let (categories, cat_s) = w
            .data
            .articles
            .as_ref()
            .map_or((1, 1.0), |a| (u64::from(a.categories), a.category_zipf));
        let own = w.design.as_ref().map(|d| Arc::new(d.design()));
        let design = match &own {
            Some(d) => d.clone(),
            None => Arc::new(crate::design::seeds::combined(
                w.keys.seeds(),
                w.microblog.inbox_versions,
            )),
        };
        let all: Arc<[Table]> = match &own {
            Some(d) => d
                .tables
                .iter()
                .enumerate()
                .map(|(i, t)| Table::new(i, &t.name))
                .collect(),
            None => Table::SEEDS.into(),
        };
        Generator {
            w: w.clone(),
            rng,
            popularity: Scramble::new(users, rng.stream(Kind::User, 0, 0).u64(0)),
            follow_zipf: Zipf::new(users, exponent),
            category_zipf: Zipf::new(categories, cat_s),
            plan: Arc::new(Plan::empty()),
            plan_time: std::time::Duration::ZERO,
            plan_read: false,
            texture: texture(w.data.compressibility),
            emitter: Arc::new(crate::design::emit::Emitter::new(
                &design,
                w.seed,
                texture(w.data.compressibility),
            )),
            own,
            design,
            all,
            codecs: false,
        }
    }

    /// The same generator making the seed designs' rows by the hand-written codecs
    /// ([`Generator::emit_user`]) instead of their descriptions: the same rows, the
    /// reference for measuring what the general path costs.
    pub fn through_codecs(mut self) -> Self {
        self.codecs = true;
        self
    }

    /// Whether the seed designs' rows are made by the hand-written codecs.
    pub fn by_codecs(&self) -> bool {
        self.codecs && self.own.is_none()
    }

    /// Every table of the workload's design, in its order, whether the workload writes it
    /// or not ([`Generator::writes`]).
    pub fn all_tables(&self) -> &[Table] {
        &self.all
    }

    /// The tables the workload writes, in its design's order.
    pub fn written_tables(&self) -> Vec<Table> {
        self.all.iter().copied().filter(|&t| self.writes(t)).collect()
    }

    /// The workload's own design; `None` for the seed designs.
    pub fn own_design(&self) -> Option<&crate::design::Design> {
        self.own.as_deref()
    }

    /// The design the workload's rows are made by: its own, or the seed designs as one
    /// (with the workload's key options).
    pub fn design(&self) -> &crate::design::Design {
        &self.design
    }

    /// Follower counts, follower caps and celebrities.
    pub fn plan(&self) -> &Plan {
        &self.plan
    }

    /// How long counting followers (or reading what they were) took when the generator was
    /// made.
    pub fn plan_time(&self) -> std::time::Duration {
        self.plan_time
    }

    /// Whether the plan was read from a file ([`Generator::with_plan_from`]).
    pub fn plan_read(&self) -> bool {
        self.plan_read
    }

    /// The workload.
    pub fn workload(&self) -> &Workload {
        &self.w
    }

    /// Number of blocks.
    pub fn blocks(&self) -> u64 {
        self.w.data.users.div_ceil(BLOCK)
    }

    /// The users of block `b`.
    pub fn block_users(&self, b: u64) -> Range<u64> {
        let start = b * BLOCK + 1;
        start..(start + BLOCK).min(self.w.data.users + 1)
    }

    /// The user at popularity rank `rank` (1 is the most popular).
    pub fn by_popularity(&self, rank: u64) -> u64 {
        self.popularity.apply(rank)
    }

    fn span(&self) -> (i64, i64) {
        (self.w.data.start_ms, self.w.data.span_ms)
    }

    /// A user's profile; its row is stamped with the start of the span.
    pub fn user(&self, uid: u64) -> microblog::User {
        let sex = if self.rng.stream(Kind::User, uid, F_SEX).below(0, 2) == 0 {
            "f"
        } else {
            "m"
        };
        microblog::User {
            uid,
            name: format!("user{uid}"),
            sex: sex.to_string(),
        }
    }

    /// How many followees `uid` aims for (a lognormal draw around the mean, capped).
    pub fn out_degree(&self, uid: u64) -> u64 {
        let Some(f) = &self.w.data.follows else { return 0 };
        if f.mean <= 0.0 {
            return 0;
        }
        let mu = f.mean.ln() - f.degree_sigma * f.degree_sigma / 2.0;
        let d = self
            .rng
            .stream(Kind::Follow, uid, F_DEGREE)
            .lognormal(0, mu, f.degree_sigma);
        (d.round() as u64)
            .min(u64::from(f.max_followees))
            .min(self.w.data.users - 1)
    }

    /// The users `uid` follows, in follow order, with follow times. `seen` is scratch space.
    /// A user takes followers in id order up to the cap: a follow of a user whose cap was
    /// reached by lower ids is dropped.
    pub fn followees(&self, uid: u64, out: &mut Vec<Follow>, seen: &mut Seen) {
        self.followees_drawn(uid, out, seen);
        if self.plan.has_cutoffs() {
            out.retain(|f| self.plan.cutoff(f.target).is_none_or(|last| uid <= last));
        }
    }

    /// The follows `uid` draws, before follower caps.
    pub(crate) fn followees_drawn(&self, uid: u64, out: &mut Vec<Follow>, seen: &mut Seen) {
        out.clear();
        seen.clear();
        let Some(f) = &self.w.data.follows else { return };
        let want = self.out_degree(uid) as usize;
        if want == 0 {
            return;
        }
        let n = self.w.data.users;
        let (start, span) = self.span();
        let choice = self.rng.stream(Kind::Follow, uid, F_CHOICE);
        let target = self.rng.stream(Kind::Follow, uid, F_TARGET);
        let time = self.rng.stream(Kind::Follow, uid, F_TIME);
        let attempts = 8 * want as u64 + 64;
        for k in 0..attempts {
            if out.len() == want {
                break;
            }
            let r = choice.unit(k);
            let v = if r < f.community_share {
                let w = f.community_window.min(n / 2).max(1);
                let mut delta = target.below(k, 2 * w) as i64 - w as i64;
                if delta >= 0 {
                    delta += 1;
                }
                (uid as i64 - 1 + delta).rem_euclid(n as i64) as u64 + 1
            } else if r < f.community_share + f.uniform_share {
                target.below(k, n) + 1
            } else {
                self.popularity.apply(self.follow_zipf.sample(&target, k))
            };
            if v == uid || !seen.insert(v) {
                continue;
            }
            let at = start + time.below(out.len() as u64, span as u64) as i64;
            out.push(Follow { target: v, at });
        }
    }

    /// How many posts `uid` publishes over the span: Poisson around the per-month rate,
    /// scaled by the user's degree.
    pub fn post_count(&self, uid: u64) -> u64 {
        let Some(p) = &self.w.data.posts else { return 0 };
        let months = self.w.data.span_ms as f64 / 86_400_000.0 / DAYS_PER_MONTH;
        let mut mean = p.per_month * months;
        if let Some(f) = &self.w.data.follows {
            mean *= (self.out_degree(uid) as f64 + 1.0) / (f.mean + 1.0);
        }
        dist::poisson(&self.rng.stream(Kind::Post, uid, F_COUNT), 0, mean).min(PER_USER_CAP)
    }

    /// The stamps of `uid`'s `count` posts, newest first, the first `n` of them: descending
    /// order statistics of uniform times over the span, so the newest come without the rest.
    /// Stamps are distinct (a post's row key is its author and stamp).
    pub fn post_stamps(&self, uid: u64, count: u64, n: u64, out: &mut Vec<i64>) {
        out.clear();
        let mut walk = StampWalk::new(self, uid, count);
        walk.extend(self, n, out);
    }

    /// The text of `uid`'s post `index` (0 is the newest).
    pub fn post_content(&self, uid: u64, index: u64, out: &mut String) {
        out.clear();
        let Some(p) = &self.w.data.posts else { return };
        let s = self.rng.stream(Kind::Post, uid, F_LENGTH);
        let len = if s.unit(2 * index) < p.long_share && p.long_max_chars > p.max_chars {
            p.max_chars as u64 + 1 + s.below(2 * index + 1, u64::from(p.long_max_chars - p.max_chars))
        } else {
            u64::from(p.min_chars) + s.below(2 * index + 1, u64::from(p.max_chars - p.min_chars) + 1)
        };
        text::words_with(
            &self.rng.stream(Kind::Post, uid, F_TEXT).child(index),
            len as usize,
            out,
            self.texture,
        );
    }

    /// `uid`'s actions, in action-id order. Each targets a post that exists, preferring the
    /// followees' newest ("latest" skew); an action that finds no post is not generated.
    pub fn actions(&self, uid: u64, followees: &[Follow], stamps: &mut Vec<i64>, out: &mut Vec<Action>) {
        out.clear();
        let Some(a) = &self.w.data.actions else { return };
        let (start, span) = self.span();
        let end = start + span;
        let n = self.w.data.users;
        let count = dist::poisson(&self.rng.stream(Kind::Action, uid, F_COUNT), 0, a.per_user).min(PER_USER_CAP);
        let base = self.rng.stream(Kind::Action, uid, F_ITEM);
        // A user acts mostly on the few they follow: each followee's post count and newest
        // stamps are worked out once per user, not once per action.
        let mut known: Vec<Option<(StampWalk, Vec<i64>)>> = (0..followees.len()).map(|_| None).collect();
        for j in 0..count {
            let s = base.child(j);
            let mut target = None;
            for t in 0..8u64 {
                let (author, followee) = if t < 4 && !followees.is_empty() {
                    let k = s.below(t, followees.len() as u64) as usize;
                    (followees[k].target, Some(k))
                } else {
                    (s.below(t, n) + 1, None)
                };
                let posts = match followee {
                    Some(k) => {
                        let (walk, _) = known[k]
                            .get_or_insert_with(|| (StampWalk::new(self, author, self.post_count(author)), Vec::new()));
                        walk.count
                    }
                    None => self.post_count(author),
                };
                if posts > 0 {
                    target = Some((author, posts, followee));
                    break;
                }
            }
            let Some((author, posts, followee)) = target else {
                continue;
            };
            let depth = dist::geometric(&s, 8, a.latest).min(posts - 1);
            let post_stamp = match followee {
                Some(k) => {
                    let (walk, newest) = known[k].as_mut().expect("counted above");
                    walk.extend(self, depth + 1, newest);
                    newest[depth as usize]
                }
                None => {
                    self.post_stamps(author, posts, depth + 1, stamps);
                    stamps[depth as usize]
                }
            };
            let delay = s.exponential(9, a.delay_hours * 3_600_000.0) as i64;
            let stamp = post_stamp.saturating_add(delay).min(end - 1);
            let verb = &a.verbs[s.below(10, a.verbs.len() as u64) as usize];
            // `{verb} {author}@{post_stamp}`, without the formatting machinery (per action).
            let mut name = Vec::with_capacity(verb.len() + 26);
            name.extend_from_slice(verb.as_bytes());
            name.push(b' ');
            crate::keys::push_decimal(author, &mut name);
            name.push(b'@');
            crate::keys::push_decimal(post_stamp, &mut name);
            out.push(Action {
                userid: uid as i32,
                stamp,
                actionid: j as i32,
                name: String::from_utf8(name).expect("a UTF-8 verb and ASCII digits"),
            });
        }
    }

    /// `uid`'s blog articles, in article-id order.
    pub fn articles(&self, uid: u64, out: &mut Vec<Article>) {
        self.article_heads(uid, out);
        let Some(a) = &self.w.data.articles else { return };
        let base = self.rng.stream(Kind::Article, uid, F_ITEM);
        for (j, article) in out.iter_mut().enumerate() {
            let s = base.child(j as u64);
            text::words_with(
                &s.child(100),
                20 + s.below(4, 60) as usize,
                &mut article.title,
                self.texture,
            );
            let size = s
                .lognormal(5, f64::from(a.size_median).ln(), a.size_sigma)
                .clamp(1.0, 1_000_000.0) as usize;
            text::words_with(&s.child(101), size, &mut article.content, self.texture);
        }
    }

    /// `uid`'s articles without their title and content text: ids, categories and times,
    /// for picking existing articles cheaply.
    pub fn article_heads(&self, uid: u64, out: &mut Vec<Article>) {
        out.clear();
        let Some(a) = &self.w.data.articles else { return };
        let (start, span) = self.span();
        let end = start + span;
        let count = dist::poisson(&self.rng.stream(Kind::Article, uid, F_COUNT), 0, a.per_user).min(PER_USER_CAP);
        let base = self.rng.stream(Kind::Article, uid, F_ITEM);
        for j in 0..count {
            let s = base.child(j);
            let category = self.category_zipf.sample(&s, 0) as i32;
            let post_at = start + s.below(1, span as u64) as i64;
            let update_at = if s.unit(2) < a.update_share {
                (post_at + s.exponential(3, 7.0 * 86_400_000.0) as i64).min(end - 1)
            } else {
                post_at
            };
            out.push(Article {
                article_id: uid as i64 * 1_000_000 + j as i64,
                uid: uid as i64,
                user_name: format!("user{uid}"),
                title: String::new(),
                content: String::new(),
                category,
                category_name: format!("category-{category}"),
                post_at,
                update_at,
            });
        }
    }

    /// How many series points `uid` has.
    pub fn point_count(&self, uid: u64) -> u64 {
        let Some(p) = &self.w.data.series else { return 0 };
        dist::poisson(&self.rng.stream(Kind::Point, uid, F_COUNT), 0, p.per_user).min(PER_USER_CAP)
    }

    /// `uid`'s series points, in index order. A point's insert nanos are its time in ns plus
    /// its index, so points at one millisecond stay apart.
    pub fn points(&self, uid: u64, out: &mut Vec<Point>) {
        out.clear();
        if self.w.data.series.is_none() {
            return;
        }
        let (start, span) = self.span();
        let count = self.point_count(uid);
        let times = self.rng.stream(Kind::Point, uid, F_STAMP);
        let values = self.rng.stream(Kind::Point, uid, F_VALUE);
        for j in 0..count {
            let time = start + times.below(j, span as u64) as i64;
            let value = 20.0 + 5.0 * values.normal(j);
            out.push(Point {
                userid: uid as i32,
                time,
                nanos: time * 1_000_000 + j as i64,
                value: value.to_be_bytes().to_vec(),
            });
        }
    }
}

/// [`Generator::post_stamps`]'s walk down one author's posts, newest first, kept where it
/// stopped so that it can go deeper without starting again: descending order statistics
/// of uniform times over the span (each the one before times a power of a uniform draw).
struct StampWalk {
    uid: u64,
    count: u64,
    x: f64,
    prev: i64,
}

impl StampWalk {
    fn new(g: &Generator, uid: u64, count: u64) -> StampWalk {
        StampWalk {
            uid,
            count,
            x: g.span().1 as f64,
            prev: i64::MAX,
        }
    }

    /// Extends `out`, the stamps walked so far, to the newest `n` (at most `count`).
    fn extend(&mut self, g: &Generator, n: u64, out: &mut Vec<i64>) {
        let want = n.min(self.count);
        if out.len() as u64 >= want {
            return;
        }
        let start = g.span().0;
        let s = g.rng.stream(Kind::Post, self.uid, F_STAMP);
        for i in out.len() as u64..want {
            self.x *= (1.0 - s.unit(i)).powf(1.0 / (self.count - i) as f64);
            let stamp = (start + self.x as i64).min(self.prev - 1);
            out.push(stamp);
            self.prev = stamp;
        }
    }
}

#[cfg(test)]
mod tests;
