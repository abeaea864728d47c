//! The query checks of `verify`: sampled users' pages, ranges, timelines and lists, read
//! through the DAOs and compared with what the generator says each user holds.

use crate::generate::{Generator, Plan};
use crate::keys::{self, Order};
use crate::schema::{
    self,
    actions::{self, Action, Actions},
    blog::{self, Article, Blog},
    microblog::{self, Microblog, Post},
    series::{self, Point, Series},
};
use crate::store::Store;
use std::collections::{BTreeMap, BTreeSet, HashSet};
use std::sync::Arc;

/// Up to `n` users: the most popular quarter first (celebrities, long follower lists), the
/// rest spread evenly over the ids.
pub fn sample_users(g: &Generator, n: u64) -> Vec<u64> {
    let users = g.workload().data.users;
    if n >= users {
        return (1..=users).collect();
    }
    let mut out = Vec::with_capacity(n as usize);
    let mut seen = HashSet::new();
    for rank in 1..=n.div_ceil(4) {
        let u = g.by_popularity(rank);
        if seen.insert(u) {
            out.push(u);
        }
    }
    let mut i = 0;
    while (out.len() as u64) < n {
        let u = 1 + (i * users / n + i / n) % users;
        if seen.insert(u) {
            out.push(u);
        }
        i += 1;
    }
    out
}

/// Items in the order a DAO lists them: key order when time is reversed in the key, reversed
/// key order when it is not.
fn dao_order<T>(mut items: Vec<(Vec<u8>, T)>, order: Order) -> Vec<T> {
    items.sort_by(|a, b| a.0.cmp(&b.0));
    if order == Order::Forward {
        items.reverse();
    }
    items.into_iter().map(|(_, t)| t).collect()
}

struct Check {
    name: &'static str,
    passed: u64,
    failed: u64,
}

struct Checker<'a> {
    g: &'a Generator,
    plan: &'a Plan,
    actions: Actions,
    blog: Blog,
    series: Series,
    microblog: Microblog,
    checks: Vec<Check>,
    note: &'a mut dyn FnMut(String),
    followers: BTreeMap<u64, Vec<u64>>,
}

/// The first position where two lists differ, in words.
fn first_difference<T: PartialEq + std::fmt::Debug>(expected: &[T], got: &[T]) -> Option<String> {
    if expected == got {
        return None;
    }
    let i = expected.iter().zip(got).take_while(|(a, b)| a == b).count();
    Some(format!(
        "expected {} items, got {}; first difference at {i}: expected {:?}, got {:?}",
        expected.len(),
        got.len(),
        expected.get(i),
        got.get(i)
    ))
}

/// Follows cursors from the first page to the last (or past the expected count) and compares
/// everything read with `expected`.
fn walk_pages<T: PartialEq + std::fmt::Debug>(
    expected: &[T],
    mut fetch: impl FnMut(Option<&[u8]>) -> schema::Result<schema::Page<T>>,
) -> schema::Result<Option<String>> {
    let mut walked = Vec::new();
    let mut cursor: Option<Vec<u8>> = None;
    loop {
        let page = fetch(cursor.as_deref())?;
        walked.extend(page.items);
        match page.next {
            Some(next) if walked.len() <= expected.len() => cursor = Some(next),
            _ => return Ok(first_difference(expected, &walked)),
        }
    }
}

impl Checker<'_> {
    fn record(&mut self, name: &'static str, what: String, outcome: schema::Result<Option<String>>) {
        let idx = match self.checks.iter().position(|c| c.name == name) {
            Some(i) => i,
            None => {
                self.checks.push(Check {
                    name,
                    passed: 0,
                    failed: 0,
                });
                self.checks.len() - 1
            }
        };
        let failure = match outcome {
            Ok(None) => None,
            Ok(Some(why)) => Some(why),
            Err(e) => Some(format!("failed: {e}")),
        };
        match failure {
            None => self.checks[idx].passed += 1,
            Some(why) => {
                self.checks[idx].failed += 1;
                (self.note)(format!("query {name}, {what}: {why}"));
            }
        }
    }

    fn expected_actions(&mut self, uid: u64) -> schema::Result<Vec<Action>> {
        let mut followees = Vec::new();
        let mut seen = crate::generate::Seen::default();
        self.g.followees(uid, &mut followees, &mut seen);
        let (mut stamps, mut list) = (Vec::new(), Vec::new());
        self.g.actions(uid, &followees, &mut stamps, &mut list);
        let opts = self.g.workload().keys.actions;
        let keyed = list
            .into_iter()
            .map(|a| Ok((actions::mutation(opts, &a)?.row, a)))
            .collect::<schema::Result<Vec<_>>>()?;
        Ok(dao_order(keyed, opts.order))
    }

    fn check_actions(&mut self, uid: u64) -> schema::Result<()> {
        let expected = self.expected_actions(uid)?;
        let userid = uid as i32;
        for offset in [0usize, 10, 50] {
            let got = self.actions.page_by_offset(userid, offset, 10);
            let want: Vec<Action> = expected.iter().skip(offset).take(10).cloned().collect();
            let outcome = got.map(|g| first_difference(&want, &g));
            self.record(
                "action pages by offset",
                format!("userid={uid} offset={offset}"),
                outcome,
            );
        }
        let actions = &self.actions;
        let outcome = walk_pages(&expected, |cursor| actions.page_after(userid, cursor, 7));
        self.record("action pages by cursor", format!("userid={uid}"), outcome);
        let (from, to) = self.window();
        let want: Vec<Action> = expected
            .iter()
            .filter(|a| (from..=to).contains(&a.stamp))
            .take(1000)
            .cloned()
            .collect();
        let outcome = self
            .actions
            .range(userid, from, to, 1000)
            .map(|g| first_difference(&want, &g));
        self.record(
            "action time ranges",
            format!("userid={uid} from={from} to={to}"),
            outcome,
        );
        Ok(())
    }

    /// The middle third of the span.
    fn window(&self) -> (i64, i64) {
        let d = &self.g.workload().data;
        (d.start_ms + d.span_ms / 3, d.start_ms + 2 * d.span_ms / 3)
    }

    /// A followee's newest posts as the inbox keeps them: (stamp, content key, post).
    fn newest_posts(&self, author: u64, n: u64, out: &mut Vec<(i64, Vec<u8>, Post)>) -> schema::Result<()> {
        let count = self.g.post_count(author);
        let mut stamps = Vec::new();
        self.g.post_stamps(author, count, n, &mut stamps);
        for (i, &stamp) in stamps.iter().enumerate() {
            let mut content = String::new();
            self.g.post_content(author, i as u64, &mut content);
            let key = keys::weibo::ContentKey { uid: author, stamp }.encode(self.g.workload().keys.weibo)?;
            out.push((
                stamp,
                key,
                Post {
                    uid: author,
                    stamp,
                    content,
                },
            ));
        }
        Ok(())
    }

    fn check_posts(&mut self, uid: u64) -> schema::Result<()> {
        let mut all = Vec::new();
        self.newest_posts(uid, u64::MAX, &mut all)?;
        let keyed = all.into_iter().map(|(_, k, p)| (k, p)).collect();
        let expected = dao_order(keyed, self.g.workload().keys.weibo.order);
        let microblog = &self.microblog;
        let outcome = walk_pages(&expected, |cursor| microblog.posts(uid, cursor, 5));
        self.record("own posts", format!("uid={uid}"), outcome);
        Ok(())
    }

    fn check_timelines(&mut self, uid: u64) -> schema::Result<()> {
        let mut followees = Vec::new();
        let mut seen = crate::generate::Seen::default();
        self.g.followees(uid, &mut followees, &mut seen);
        let n = u64::from(self.g.workload().microblog.inbox_versions);
        let mut merged = Vec::new();
        for f in &followees {
            self.newest_posts(f.target, n, &mut merged)?;
        }
        merged.sort_by(|a, b| (b.0, &b.1).cmp(&(a.0, &a.1)));
        let mut before = None;
        for page in 0..2 {
            let want: Vec<Post> = merged
                .iter()
                .filter(|(s, _, _)| before.is_none_or(|b| *s < b))
                .take(20)
                .map(|(_, _, p)| p.clone())
                .collect();
            let what = format!("uid={uid} page={}", page + 1);
            let push = self.microblog.timeline(uid, 20, before);
            let pull = self.microblog.timeline_pull(uid, 20, before);
            let outcome = match (push, pull) {
                (Ok(push), Ok(pull)) => Ok(first_difference(&want, &push)
                    .map(|d| format!("push timeline: {d}"))
                    .or_else(|| first_difference(&want, &pull).map(|d| format!("pull timeline: {d}")))),
                (Err(e), _) | (_, Err(e)) => Err(e),
            };
            self.record("timelines (push = pull = expected)", what, outcome);
            match want.last() {
                Some(last) if want.len() == 20 => before = Some(last.stamp),
                _ => break,
            }
        }
        Ok(())
    }

    fn check_relations(&mut self, uid: u64) -> schema::Result<()> {
        let by_text = |mut ids: Vec<u64>| {
            ids.sort_by_key(|&u| microblog::uid_bytes(u));
            ids
        };
        let mut followees = Vec::new();
        let mut seen = crate::generate::Seen::default();
        self.g.followees(uid, &mut followees, &mut seen);
        let want_followees = by_text(followees.iter().map(|f| f.target).collect());
        let want_followers = by_text(self.followers.get(&uid).cloned().unwrap_or_default());
        for (name, want, fans) in [
            ("follower lists", want_followers, true),
            ("followee lists", want_followees, false),
        ] {
            let mut got = Vec::new();
            let outcome = loop {
                let after = got.last().copied();
                let page = if fans {
                    self.microblog.followers(uid, after, 100)
                } else {
                    self.microblog.followees(uid, after, 100)
                };
                match page {
                    Err(e) => break Err(e),
                    Ok(p) => {
                        let short = p.len() < 100;
                        got.extend(p);
                        if short || got.len() > want.len() {
                            break Ok(first_difference(&want, &got));
                        }
                    }
                }
            };
            self.record(name, format!("uid={uid}"), outcome);
        }
        let count = self.microblog.follower_count(uid);
        let want = self.plan.followers(uid) as usize;
        self.record(
            "follower counts",
            format!("uid={uid}"),
            count.map(|c| (c != want).then(|| format!("expected {want}, got {c}"))),
        );
        Ok(())
    }

    fn check_articles(&mut self, uid: u64) -> schema::Result<()> {
        let mut list = Vec::new();
        self.g.articles(uid, &mut list);
        let opts = self.g.workload().keys.blog;
        let keyed = list
            .iter()
            .map(|a| Ok((blog::row_keys(opts, a)?.1, a.clone())))
            .collect::<schema::Result<Vec<_>>>()?;
        let by_index = dao_order(keyed, opts.order);
        let categories: BTreeSet<i32> = list.iter().map(|a| a.category).take(3).collect();
        for c in categories.iter().copied().chain([0]) {
            let want: Vec<Article> = by_index.iter().filter(|a| a.category == c).cloned().collect();
            let got = self.blog.list_category(uid as i64, c, None, 1000);
            let outcome = got.map(|p| first_difference(&want, &p.items));
            self.record("category listings", format!("uid={uid} category={c}"), outcome);
        }
        let keyed = list
            .into_iter()
            .map(|a| Ok((blog::row_keys(opts, &a)?.0, a)))
            .collect::<schema::Result<Vec<_>>>()?;
        let want = dao_order(keyed, opts.order);
        let outcome = self
            .blog
            .list(uid as i64, None, 1000)
            .map(|p| first_difference(&want, &p.items));
        self.record("article listings", format!("uid={uid}"), outcome);
        Ok(())
    }

    fn check_series(&mut self, uid: u64) -> schema::Result<()> {
        let mut list = Vec::new();
        self.g.points(uid, &mut list);
        let opts = self.g.workload().keys.series;
        let keyed = list
            .into_iter()
            .map(|p| Ok((series::mutation(opts, &p)?.row, p)))
            .collect::<schema::Result<Vec<_>>>()?;
        let all: Vec<Point> = dao_order(keyed, opts.order);
        let (from, to) = self.window();
        let want: Vec<Point> = all
            .iter()
            .filter(|p| (from..=to).contains(&p.time))
            .take(1000)
            .cloned()
            .collect();
        let outcome = self
            .series
            .range(uid as i32, from, to, 1000)
            .map(|g| first_difference(&want, &g));
        self.record("series ranges", format!("userid={uid} from={from} to={to}"), outcome);
        let want: Vec<Point> = all.iter().take(10).cloned().collect();
        let outcome = self.series.latest(uid as i32, 10).map(|g| first_difference(&want, &g));
        self.record("series latest", format!("userid={uid}"), outcome);
        Ok(())
    }
}

/// Runs every query check for `users`; each failure goes to `note`. Returns per check its
/// name, passes and failures.
pub fn run(
    store: &Arc<dyn Store>,
    g: &Generator,
    plan: &Plan,
    users: &[u64],
    note: &mut dyn FnMut(String),
) -> schema::Result<Vec<(&'static str, u64, u64)>> {
    let w = g.workload();
    let microblog = Microblog::new(store.clone(), g.microblog_config()).with_celebrities(plan.celebrities().clone());
    let mut c = Checker {
        g,
        plan,
        actions: Actions::new(store.clone(), w.keys.actions),
        blog: Blog::new(store.clone(), w.keys.blog),
        series: Series::new(store.clone(), w.keys.series),
        microblog,
        checks: Vec::new(),
        note,
        followers: BTreeMap::new(),
    };
    if w.data.follows.is_some() && !users.is_empty() {
        // Followers of the sampled users: one pass over every user's follows.
        let wanted: HashSet<u64> = users.iter().copied().collect();
        let (mut list, mut seen) = (Vec::new(), crate::generate::Seen::default());
        for u in 1..=w.data.users {
            g.followees(u, &mut list, &mut seen);
            for f in &list {
                if wanted.contains(&f.target) {
                    c.followers.entry(f.target).or_default().push(u);
                }
            }
        }
    }
    for &uid in users {
        if w.data.actions.is_some() {
            c.check_actions(uid)?;
        }
        if w.data.posts.is_some() {
            c.check_posts(uid)?;
        }
        if w.data.follows.is_some() {
            c.check_relations(uid)?;
            if w.data.posts.is_some() {
                c.check_timelines(uid)?;
            }
        }
        if w.data.articles.is_some() {
            c.check_articles(uid)?;
        }
        if w.data.series.is_some() {
            c.check_series(uid)?;
        }
    }
    Ok(c.checks.into_iter().map(|k| (k.name, k.passed, k.failed)).collect())
}
