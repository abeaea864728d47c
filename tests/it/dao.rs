//! The DAOs of the four seed designs through a real store: order, paging, ranges, fan-out,
//! deletes, and that users never leak into each other's ranges. Each runs with the seed's
//! key layout and with the forward-stamp and salted variants.

use crate::common::Harness;
use std::sync::Arc;
use tallrow::keys::{KeyOptions, Order, Salt};
use tallrow::schema::actions::{Action, Actions};
use tallrow::schema::blog::{self, Article, Blog};
use tallrow::schema::microblog::{self, Config, Microblog, Post};
use tallrow::schema::series::{Point, Series};
use tallrow::store::{Scan, Store};

macro_rules! dao_suite {
    ($backend:ident, $harness:expr) => {
        dao_suite!($backend, $harness; when (|| true));
    };
    // `when` names a check that the backend is there to test.
    ($backend:ident, $harness:expr; when $guard:expr) => {
        mod $backend {
            dao_suite!(@tests $harness, $guard; actions_paging_and_ranges, microblog_fanout_timelines_and_unfollow,
                microblog_relation_paging, microblog_celebrities_merge_at_read,
                blog_post_update_delete_and_categories, series_latest_and_inclusive_ranges);
        }
    };
    (@tests $harness:expr, $guard:expr; $($name:ident),*) => {
        $(#[test]
        fn $name() {
            if ($guard)() {
                super::each_variant($harness, super::$name);
            }
        })*
    };
}

dao_suite!(embedded, crate::common::EmbeddedHarness::new);
dao_suite!(memory, crate::common::MemoryHarness::new);
dao_suite!(thrift_buffered_binary, crate::common::ThriftHarness::buffered_binary);
dao_suite!(thrift_framed_compact, crate::common::ThriftHarness::framed_compact);
dao_suite!(thrift2_buffered_binary, crate::common::ThriftHarness::thrift2);
dao_suite!(bigtable, crate::common::BigtableHarness::new; when crate::common::bigtable_emulator);
// Real HBase through its Thrift1 servers (scripts/hbase.sh), both wire formats.
dao_suite!(hbase_buffered_binary, crate::common::RealHBaseDaoHarness::buffered_binary; when crate::common::real_hbase_there);
dao_suite!(hbase_framed_compact, crate::common::RealHBaseDaoHarness::framed_compact; when crate::common::real_hbase_there);
dao_suite!(hbase_thrift2, crate::common::RealHBaseDaoHarness::thrift2; when crate::common::real_hbase_there);
dao_suite!(hbase_native, crate::common::RealHBaseDaoHarness::native; when crate::common::real_hbase_there);

const T0: i64 = 1_700_000_000_000;

/// Runs `test` on a fresh backend for each key variant: the seed's, forward stamps, salted.
fn each_variant<H: Harness>(make: impl Fn() -> H, test: fn(Arc<dyn Store>, KeyOptions, bool)) {
    for (order, salt) in [
        (Order::Reverse, None),
        (Order::Forward, Some(Salt::None)),
        (Order::Reverse, Some(Salt::Buckets(4))),
    ] {
        let h = make();
        // `None` keeps each design's seed salt (the blog's hash prefix).
        let seed = salt.is_none();
        let opts = KeyOptions {
            order,
            salt: salt.unwrap_or(Salt::None),
        };
        if order == Order::Forward && !h.reversed_scans() {
            // Newest first over forward stamps is a reversed scan: refused, in one clear line.
            forward_stamps_need_reversed_scans(h.store(), opts);
            continue;
        }
        test(h.store(), opts, seed);
    }
}

fn forward_stamps_need_reversed_scans(store: Arc<dyn Store>, opts: KeyOptions) {
    let dao = Actions::new(store, opts);
    dao.create_tables().unwrap();
    let a = Action {
        userid: 1,
        stamp: T0,
        actionid: 1,
        name: "a".into(),
    };
    dao.put(&a).unwrap();
    let err = dao.page_by_offset(1, 0, 10).unwrap_err().to_string();
    assert!(err.contains("does not support reversed scans"), "{err}");
    assert!(!err.contains('\n'), "{err:?}");
}

fn actions_paging_and_ranges(store: Arc<dyn Store>, opts: KeyOptions, _seed: bool) {
    let dao = Actions::new(store, opts);
    dao.create_tables().unwrap();
    // Neighbouring users, including the ends of the i32 range.
    let users = [i32::MIN, -1, 0, 1, 2, i32::MAX];
    let mut all = Vec::new();
    for &u in &users {
        let acts: Vec<Action> = (0..23)
            .map(|i| Action {
                userid: u,
                stamp: T0 + (i as i64 % 7) * 1000 + i as i64,
                actionid: i * 3 - 30,
                name: format!("{u}:{i}"),
            })
            .collect();
        dao.put_batch(&acts).unwrap();
        all.push(acts);
    }
    for (u, acts) in users.iter().zip(&all) {
        let mut expected = acts.clone();
        // Stamps are distinct per user, so newest first is one order in every key variant.
        expected.sort_by_key(|a| std::cmp::Reverse(a.stamp));
        let first = dao.page_by_offset(*u, 0, 100).unwrap();
        assert_eq!(first, expected, "user {u}: all of it, newest first, nobody else's");
        // Offset paging and cursor paging agree, without gaps or duplicates.
        let mut by_cursor = Vec::new();
        let mut cursor = None;
        for page in 0.. {
            let p = dao.page_after(*u, cursor.as_deref(), 5).unwrap();
            assert_eq!(
                p.items,
                dao.page_by_offset(*u, page * 5, 5).unwrap(),
                "user {u} page {page}"
            );
            by_cursor.extend(p.items);
            match p.next {
                Some(n) => cursor = Some(n),
                None => break,
            }
        }
        assert_eq!(by_cursor, expected);
        assert!(dao.page_by_offset(*u, 23, 5).unwrap().is_empty());
        // Time ranges are inclusive at both ends.
        let (from, to) = (T0 + 1000 + 1, T0 + 3000 + 3);
        let want: Vec<Action> = expected
            .iter()
            .filter(|a| a.stamp >= from && a.stamp <= to)
            .cloned()
            .collect();
        assert!(!want.is_empty());
        assert_eq!(want.first().unwrap().stamp, to, "the upper bound itself is included");
        assert_eq!(want.last().unwrap().stamp, from, "the lower bound itself is included");
        assert_eq!(dao.range(*u, from, to, 100).unwrap(), want);
        assert_eq!(dao.range(*u, from, to, 2).unwrap(), want[..2]);
        assert!(dao.range(*u, to, from, 10).unwrap().is_empty());
        assert_eq!(dao.range(*u, 0, i64::MAX, 1000).unwrap(), expected);
    }
    assert!(dao.page_by_offset(3, 0, 10).unwrap().is_empty());
}

fn post(uid: u64, stamp: i64) -> Post {
    Post {
        uid,
        stamp,
        content: format!("post by {uid} at {stamp}"),
    }
}

fn microblog_fanout_timelines_and_unfollow(store: Arc<dyn Store>, opts: KeyOptions, _seed: bool) {
    let cfg = Config {
        inbox_versions: 3,
        keys: opts,
        ..Config::default()
    };
    let dao = Microblog::new(store.clone(), cfg);
    dao.create_tables().unwrap();
    // 1 and 12 and 123: text prefixes of each other, the seed's key must keep them apart.
    let (reader, a, b, c) = (5u64, 1u64, 12u64, 123u64);
    dao.follow(reader, a, T0).unwrap();
    dao.follow(reader, b, T0).unwrap();
    dao.follow(99, a, T0).unwrap();
    for i in 0..5 {
        assert_eq!(
            dao.publish(&post(a, T0 + 10 * i)).unwrap(),
            2,
            "fan-out to both followers of {a}"
        );
        dao.publish(&post(b, T0 + 10 * i + 5)).unwrap();
        assert_eq!(dao.publish(&post(c, T0 + 10 * i + 7)).unwrap(), 0);
    }
    // The inbox keeps exactly the N newest per followee.
    let inbox = dao.inbox(reader).unwrap();
    assert_eq!(inbox.keys().copied().collect::<Vec<_>>(), [a, b]);
    let expect_keys =
        |u: u64, stamps: &[i64]| -> Vec<Vec<u8>> { stamps.iter().map(|s| dao.content_key(u, *s).unwrap()).collect() };
    assert_eq!(inbox[&a], expect_keys(a, &[T0 + 40, T0 + 30, T0 + 20]));
    assert_eq!(inbox[&b], expect_keys(b, &[T0 + 45, T0 + 35, T0 + 25]));
    let timeline = dao.timeline(reader, 10, None).unwrap();
    let stamps: Vec<(u64, i64)> = timeline.iter().map(|p| (p.uid, p.stamp)).collect();
    assert_eq!(
        stamps,
        [
            (b, T0 + 45),
            (a, T0 + 40),
            (b, T0 + 35),
            (a, T0 + 30),
            (b, T0 + 25),
            (a, T0 + 20)
        ]
    );
    assert_eq!(timeline[0], post(b, T0 + 45));
    assert_eq!(
        dao.timeline_pull(reader, 10, None).unwrap(),
        timeline,
        "push and pull agree"
    );
    assert_eq!(dao.timeline(reader, 3, None).unwrap(), timeline[..3]);
    // Paging back by post time.
    assert_eq!(dao.timeline(reader, 2, Some(T0 + 35)).unwrap(), timeline[3..5]);
    assert_eq!(dao.timeline_pull(reader, 2, Some(T0 + 35)).unwrap(), timeline[3..5]);
    // The author's own posts, newest first, never another user's.
    let own = dao.posts(a, None, 10).unwrap().items;
    assert_eq!(
        own.iter().map(|p| p.stamp).collect::<Vec<_>>(),
        [T0 + 40, T0 + 30, T0 + 20, T0 + 10, T0]
    );
    assert!(own.iter().all(|p| p.uid == a));
    let page1 = dao.posts(c, None, 2).unwrap();
    let page2 = dao.posts(c, page1.next.as_deref(), 10).unwrap();
    assert_eq!(page1.items.len() + page2.items.len(), 5);
    assert_eq!(page2.items[0].stamp, T0 + 27);
    // Following backfills the followee's N newest posts.
    dao.follow(reader, c, T0 + 100).unwrap();
    assert_eq!(
        dao.inbox(reader).unwrap()[&c],
        expect_keys(c, &[T0 + 47, T0 + 37, T0 + 27])
    );
    assert_eq!(
        dao.timeline(reader, 100, None).unwrap(),
        dao.timeline_pull(reader, 100, None).unwrap()
    );
    assert_eq!(dao.timeline(reader, 100, None).unwrap().len(), 9);
    // Unfollowing leaves nothing of the followee behind, in the relation or the inbox.
    dao.unfollow(reader, a).unwrap();
    assert_eq!(dao.followees(reader, None, 10).unwrap(), [b, c]);
    assert_eq!(dao.followers(a, None, 10).unwrap(), [99]);
    let inbox = dao.inbox(reader).unwrap();
    assert!(!inbox.contains_key(&a), "no version of {a}'s posts is left");
    assert!(dao.timeline(reader, 100, None).unwrap().iter().all(|p| p.uid != a));
    assert_eq!(
        dao.timeline(reader, 100, None).unwrap(),
        dao.timeline_pull(reader, 100, None).unwrap()
    );
    // The other follower of `a` is untouched.
    assert_eq!(dao.timeline(99, 100, None).unwrap().len(), 3);
    // New posts after an unfollow reach only the remaining followers.
    dao.publish(&post(a, T0 + 200)).unwrap();
    assert!(!dao.inbox(reader).unwrap().contains_key(&a));
    assert_eq!(dao.timeline(99, 1, None).unwrap()[0].stamp, T0 + 200);
    // A user with neither follows nor posts has an empty timeline.
    assert!(dao.timeline(7, 10, None).unwrap().is_empty());
    assert!(dao.timeline_pull(7, 10, None).unwrap().is_empty());
    let raw = store.scan(microblog::INBOX, &Scan::default()).unwrap();
    assert!(raw.iter().all(|r| r.key == b"5" || r.key == b"99"));
}

fn microblog_relation_paging(store: Arc<dyn Store>, opts: KeyOptions, _seed: bool) {
    let dao = Microblog::new(
        store.clone(),
        Config {
            inbox_versions: 2,
            keys: opts,
            ..Config::default()
        },
    );
    dao.create_tables().unwrap();
    let celebrity = 1u64;
    // Four pages of 333, and a fan-out in two batches (`FANOUT_BATCH`, 1,000).
    let fans: Vec<u64> = (2..1202).collect();
    // The first fan through `follow`; the rest as the same relation cells written in batches
    // of 400 follows (the celebrity's row once in each), not 1,199 calls and reads.
    dao.follow(fans[0], celebrity, T0).unwrap();
    for chunk in fans[1..].chunks(400) {
        let mut batch = Vec::with_capacity(chunk.len() + 1);
        let mut fans_row: Option<tallrow::store::RowMutation> = None;
        for &f in chunk {
            let [attention, fan] = Microblog::follow_mutations(f, celebrity, T0);
            batch.push(attention);
            match &mut fans_row {
                Some(row) => row.mutations.extend(fan.mutations),
                None => fans_row = Some(fan),
            }
        }
        batch.extend(fans_row);
        store.mutate(microblog::RELATION, &batch).unwrap();
    }
    dao.follow(celebrity, 2, T0).unwrap();
    assert_eq!(dao.follower_count(celebrity).unwrap(), fans.len());
    let mut seen = Vec::new();
    let mut after = None;
    loop {
        let page = dao.followers(celebrity, after, 333).unwrap();
        if page.is_empty() {
            break;
        }
        assert!(page.len() <= 333);
        after = page.last().copied();
        seen.extend(page);
    }
    let mut expected = fans.clone();
    // Qualifiers are text uids, so pages come in text order.
    expected.sort_by_key(|u| u.to_string());
    assert_eq!(seen, expected, "no gaps, no duplicates across pages");
    assert_eq!(dao.followees(celebrity, None, 10).unwrap(), [2]);
    assert_eq!(dao.followers(2, None, 10).unwrap(), [celebrity]);
    // Publishing fans out to every follower, in batches.
    assert_eq!(dao.publish(&post(celebrity, T0 + 1)).unwrap(), fans.len());
    assert_eq!(dao.timeline(1201, 5, None).unwrap(), [post(celebrity, T0 + 1)]);
    dao.put_user(&microblog::User {
        uid: 2,
        name: "Two".into(),
        sex: "f".into(),
    })
    .unwrap();
    assert_eq!(dao.user(2).unwrap().unwrap().name, "Two");
    assert_eq!(dao.user(3).unwrap(), None);
}

fn microblog_celebrities_merge_at_read(store: Arc<dyn Store>, opts: KeyOptions, _seed: bool) {
    let cfg = Config {
        inbox_versions: 2,
        keys: opts,
        celebrity_threshold: Some(1),
    };
    let plain = Microblog::new(store.clone(), cfg);
    plain.create_tables().unwrap();
    let star = 7u64;
    store
        .mutate(microblog::CELEBRITY, &[microblog::celebrity_mutation(star, 2, T0)])
        .unwrap();
    let dao = plain.clone().with_celebrities(plain.load_celebrities().unwrap());
    assert_eq!(dao.celebrities().iter().copied().collect::<Vec<_>>(), [star]);
    for stamp in [T0 + 1, T0 + 2, T0 + 3] {
        dao.publish(&post(star, stamp)).unwrap();
    }
    // Following a celebrity backfills nothing, and its posts are not fanned out.
    dao.follow(1, star, T0 + 4).unwrap();
    dao.follow(1, 8, T0 + 4).unwrap();
    dao.follow(2, 8, T0 + 4).unwrap();
    assert_eq!(dao.publish(&post(star, T0 + 5)).unwrap(), 0);
    assert_eq!(dao.publish(&post(8, T0 + 6)).unwrap(), 2);
    assert_eq!(dao.inbox(1).unwrap().keys().copied().collect::<Vec<_>>(), [8]);
    // The push timeline merges the celebrity's newest N posts at read time, like the pull one.
    let want = vec![post(8, T0 + 6), post(star, T0 + 5), post(star, T0 + 3)];
    assert_eq!(dao.timeline(1, 10, None).unwrap(), want);
    assert_eq!(dao.timeline_pull(1, 10, None).unwrap(), want);
    assert_eq!(dao.timeline(1, 10, Some(T0 + 5)).unwrap(), want[2..]);
    assert_eq!(dao.timeline(2, 10, None).unwrap(), [post(8, T0 + 6)]);
    // Without the set, the DAO does not know the celebrity and shows only the inbox.
    assert_eq!(plain.timeline(1, 10, None).unwrap(), [post(8, T0 + 6)]);
}

fn article(uid: i64, id: i64, category: i32, post_at: i64) -> Article {
    Article {
        article_id: id,
        uid,
        user_name: format!("user{uid}"),
        title: format!("title {id}"),
        content: format!("content of {id}"),
        category,
        category_name: format!("cat{category}"),
        post_at,
        update_at: post_at,
    }
}

fn blog_post_update_delete_and_categories(store: Arc<dyn Store>, opts: KeyOptions, seed: bool) {
    let opts = if seed { KeyOptions::BLOG_SEED } else { opts };
    let dao = Blog::new(store.clone(), opts);
    dao.create_tables().unwrap();
    let users = [1i64, 2, 1 << 32, 123_456_789_012];
    let mut all = Vec::new();
    for &u in &users {
        let arts: Vec<Article> = (0..12)
            .map(|i| article(u, 100 + i, (i % 3) as i32, T0 + i * 1000))
            .collect();
        for a in &arts {
            dao.post(a).unwrap();
        }
        all.push(arts);
    }
    for (u, arts) in users.iter().zip(&all) {
        let mut newest: Vec<Article> = arts.clone();
        newest.reverse();
        let mut listed = Vec::new();
        let mut cursor = None;
        loop {
            let page = dao.list(*u, cursor.as_deref(), 5).unwrap();
            listed.extend(page.items);
            match page.next {
                Some(n) => cursor = Some(n),
                None => break,
            }
        }
        assert_eq!(listed, newest, "user {u}: newest first, nobody else's");
        for cat in 0..3 {
            let want: Vec<Article> = newest.iter().filter(|a| a.category == cat).cloned().collect();
            assert_eq!(
                dao.list_category(*u, cat, None, 100).unwrap().items,
                want,
                "user {u} category {cat}"
            );
        }
        assert!(dao.list_category(*u, 9, None, 10).unwrap().items.is_empty());
    }
    // Update rewrites both rows at updateAt.
    let target = all[0][4].clone();
    let updated = dao.update(&target, "new title", "new body", T0 + 50_000).unwrap();
    assert_eq!(
        dao.get(target.uid, target.post_at, target.article_id).unwrap(),
        Some(updated.clone())
    );
    let in_cat = dao.list_category(target.uid, target.category, None, 100).unwrap().items;
    assert!(in_cat.contains(&updated) && !in_cat.contains(&target));
    // Delete removes the article and its index row together.
    dao.delete(&updated, T0 + 60_000).unwrap();
    assert_eq!(dao.get(target.uid, target.post_at, target.article_id).unwrap(), None);
    assert!(
        !dao.list(target.uid, None, 100)
            .unwrap()
            .items
            .iter()
            .any(|a| a.article_id == target.article_id)
    );
    assert!(
        !dao.list_category(target.uid, target.category, None, 100)
            .unwrap()
            .items
            .iter()
            .any(|a| a.article_id == target.article_id)
    );
    let rows = store.scan(blog::TABLE, &Scan::default()).unwrap();
    assert_eq!(rows.len(), users.len() * 12 * 2 - 2, "exactly the two rows are gone");
    // A delete stamped before the last update leaves the article (cells newer than deleteAt stay).
    let other = all[1][0].clone();
    let newer = dao.update(&other, "t", "c", T0 + 90_000).unwrap();
    dao.delete(&other, T0 + 80_000).unwrap();
    assert_eq!(
        dao.get(other.uid, other.post_at, other.article_id).unwrap(),
        Some(newer)
    );
}

fn series_latest_and_inclusive_ranges(store: Arc<dyn Store>, opts: KeyOptions, _seed: bool) {
    let dao = Series::new(store, opts);
    dao.create_tables().unwrap();
    // 1 and 10 and -1: text prefixes of each other.
    for u in [1, 10, -1, 100] {
        let points: Vec<Point> = (0..30)
            .map(|i| Point {
                userid: u,
                time: T0 + (i / 2) * 60_000,
                nanos: 1_000 + i,
                value: format!("{u}/{i}").into_bytes(),
            })
            .collect();
        dao.put_batch(&points).unwrap();
    }
    for u in [1, 10, -1, 100] {
        let latest = dao.latest(u, 4).unwrap();
        assert_eq!(latest.len(), 4);
        assert!(latest.iter().all(|p| p.userid == u), "user {u} sees only its points");
        assert_eq!(latest[0].time, T0 + 14 * 60_000);
        assert!(latest.windows(2).all(|w| w[0].time >= w[1].time));
        assert_eq!(dao.latest(u, 100).unwrap().len(), 30);
        // Inclusive bounds at both ends, nothing just outside.
        let (t1, t2) = (T0 + 3 * 60_000, T0 + 6 * 60_000);
        let got = dao.range(u, t1, t2, 100).unwrap();
        let times: Vec<i64> = got.iter().map(|p| p.time).collect();
        assert_eq!(times.len(), 8, "4 minutes x 2 points");
        assert_eq!(*times.first().unwrap(), t2);
        assert_eq!(*times.last().unwrap(), t1);
        assert!(got.iter().all(|p| p.userid == u));
        assert_eq!(dao.range(u, t1 + 1, t2 - 1, 100).unwrap().len(), 4);
        assert_eq!(dao.range(u, t1, t1, 100).unwrap().len(), 2);
        assert_eq!(dao.range(u, t1, t2, 3).unwrap().len(), 3);
        assert!(dao.range(u, t2, t1, 100).unwrap().is_empty());
        assert_eq!(dao.range(u, 0, i64::MAX, 100).unwrap().len(), 30);
    }
    assert!(dao.latest(2, 5).unwrap().is_empty());
}

/// A home timeline's round trips through each Thrift API (counted by the backend, after a
/// first read has fetched the tables' descriptors): Thrift2 reads the inbox's versions in
/// one call and the posts in another; Thrift1 needs a `getVerTs` window between them.
#[test]
fn home_timeline_round_trips_per_api() {
    use tallrow::store::hbase::{Hbase, Hbase2, Spec};
    for (h, trips) in [
        (crate::common::ThriftHarness::buffered_binary(), 3),
        (crate::common::ThriftHarness::thrift2(), 2),
    ] {
        let cfg = Config {
            inbox_versions: 3,
            ..Config::default()
        };
        let writer = Microblog::new(h.store(), cfg);
        writer.create_tables().unwrap();
        for followee in 1..=5u64 {
            writer.follow(100, followee, T0).unwrap();
            for i in 0..4 {
                writer.publish(&post(followee, T0 + 10 * i + followee as i64)).unwrap();
            }
        }
        let url = h.url();
        let spec = Spec::parse(url.strip_prefix("hbase://").unwrap()).unwrap();
        let (store, counter): (Arc<dyn Store>, Box<dyn Fn() -> u64>) = if url.contains("api=thrift2") {
            let s = Arc::new(Hbase2::open(&spec).unwrap());
            (s.clone(), Box::new(move || s.round_trips()))
        } else {
            let s = Arc::new(Hbase::open(&spec).unwrap());
            (s.clone(), Box::new(move || s.round_trips()))
        };
        let reader = Microblog::new(store, cfg);
        assert_eq!(reader.timeline(100, 10, None).unwrap().len(), 10);
        let before = counter();
        let page = reader.timeline(100, 10, None).unwrap();
        assert_eq!(page.len(), 10);
        assert_eq!(counter() - before, trips, "{url}");
    }
}
