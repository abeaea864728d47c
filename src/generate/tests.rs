//! The generator's promises: graph consistency, bounds, and order independence.

use super::*;
use crate::workload::Workload;
use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::Path;

fn small() -> Generator {
    let src = include_str!("../../tests/fixtures/small.toml");
    Generator::new(&Workload::from_str(Path::new("small.toml"), src).unwrap())
}

#[test]
fn follows_are_distinct_existing_users_within_the_caps() {
    let g = small();
    let w = g.workload();
    let f = w.data.follows.as_ref().unwrap();
    let (mut list, mut seen) = (Vec::new(), super::Seen::default());
    let mut followers: HashMap<u64, u64> = HashMap::new();
    let mut edges = 0u64;
    for uid in 1..=w.data.users {
        g.followees(uid, &mut list, &mut seen);
        assert!(list.len() as u64 <= g.out_degree(uid));
        assert!(list.len() <= f.max_followees as usize);
        let targets: HashSet<u64> = list.iter().map(|x| x.target).collect();
        assert_eq!(targets.len(), list.len(), "no duplicate follows of {uid}");
        for x in &list {
            assert!(x.target != uid && (1..=w.data.users).contains(&x.target));
            assert!((w.data.start_ms..g.workload().end_ms()).contains(&x.at));
            *followers.entry(x.target).or_default() += 1;
        }
        edges += list.len() as u64;
    }
    let mean = edges as f64 / w.data.users as f64;
    assert!(
        (mean - f.mean).abs() < f.mean * 0.2,
        "mean followees {mean}, configured {}",
        f.mean
    );
    assert!(followers.values().all(|&n| n <= f.max_followers), "follower cap");
    // The plan counts the same followers.
    let plan = g.plan();
    for uid in 1..=w.data.users {
        assert_eq!(plan.followers(uid), followers.get(&uid).copied().unwrap_or(0));
        let star = plan.followers(uid) > w.microblog.celebrity_threshold.unwrap();
        assert_eq!(plan.is_celebrity(uid), star);
    }
    assert!(!plan.celebrities().is_empty(), "the fixture has celebrities");
}

#[test]
fn post_stamps_are_distinct_newest_first_and_prefix_stable() {
    let g = small();
    let w = g.workload();
    let (mut all, mut head) = (Vec::new(), Vec::new());
    let mut total = 0;
    for uid in 1..=w.data.users {
        let n = g.post_count(uid);
        total += n;
        g.post_stamps(uid, n, n, &mut all);
        assert_eq!(all.len() as u64, n);
        assert!(all.windows(2).all(|p| p[0] > p[1]), "strictly newest first");
        assert!(all.iter().all(|s| (w.data.start_ms - 1000..w.end_ms()).contains(s)));
        g.post_stamps(uid, n, 2, &mut head);
        assert_eq!(head[..], all[..head.len()]);
        // Walked deeper in steps, as a user's actions walk a followee's posts: the same.
        let mut walk = super::StampWalk::new(&g, uid, n);
        let mut stepped = Vec::new();
        for depth in [1, 3, 2, n + 1] {
            walk.extend(&g, depth, &mut stepped);
            assert!(stepped.len() as u64 >= depth.min(n));
            assert_eq!(stepped[..], all[..stepped.len()]);
        }
        let mut text = String::new();
        for i in 0..n {
            g.post_content(uid, i, &mut text);
            let p = w.data.posts.as_ref().unwrap();
            assert!((p.min_chars as usize..=p.long_max_chars as usize).contains(&text.len()));
        }
    }
    assert!(total > 0);
}

#[test]
fn actions_target_posts_that_exist() {
    let g = small();
    let w = g.workload();
    let (mut list, mut seen, mut stamps, mut actions) = (Vec::new(), super::Seen::default(), Vec::new(), Vec::new());
    let mut posts: BTreeMap<u64, Vec<i64>> = BTreeMap::new();
    let mut n = 0;
    for uid in 1..=w.data.users {
        g.followees(uid, &mut list, &mut seen);
        g.actions(uid, &list, &mut stamps, &mut actions);
        for a in &actions {
            let (verb, target) = a.name.split_once(' ').unwrap();
            assert!(w.data.actions.as_ref().unwrap().verbs.iter().any(|v| v == verb));
            let (author, stamp) = target.split_once('@').unwrap();
            let (author, stamp): (u64, i64) = (author.parse().unwrap(), stamp.parse().unwrap());
            let theirs = posts.entry(author).or_insert_with(|| {
                let mut s = Vec::new();
                let c = g.post_count(author);
                g.post_stamps(author, c, c, &mut s);
                s
            });
            assert!(theirs.contains(&stamp), "{} targets a post that exists", a.name);
            assert!(a.stamp >= stamp && a.stamp < w.end_ms());
            n += 1;
        }
        let ids: Vec<i32> = actions.iter().map(|a| a.actionid).collect();
        assert!(ids.windows(2).all(|p| p[0] < p[1]));
    }
    assert!(n > 1000);
}

#[test]
fn values_do_not_depend_on_visiting_order() {
    let g = small();
    let collect = |order: Vec<u64>| {
        let mut out = BTreeMap::new();
        let (mut list, mut seen, mut arts, mut pts) = (Vec::new(), super::Seen::default(), Vec::new(), Vec::new());
        for uid in order {
            g.followees(uid, &mut list, &mut seen);
            g.articles(uid, &mut arts);
            g.points(uid, &mut pts);
            out.insert(uid, (list.clone(), arts.clone(), pts.clone(), g.user(uid)));
        }
        out
    };
    let users = g.workload().data.users;
    assert_eq!(collect((1..=users).collect()), collect((1..=users).rev().collect()));
}

#[test]
fn a_tight_follower_cap_holds_without_starving_the_graph() {
    let src = "name = \"t\"\nseed = 3\n[data]\nusers = 2000\n[data.follows]\nmean = 20.0\nmax_followers = 0.02\n";
    let g = Generator::new(&Workload::from_str(Path::new("t.toml"), src).unwrap());
    let plan = g.plan();
    let cap = g.workload().data.follows.as_ref().unwrap().max_followers;
    assert_eq!(cap, 40);
    let counts: Vec<u64> = (1..=2000).map(|u| plan.followers(u)).collect();
    let max = counts.iter().copied().max().unwrap();
    assert!(
        max <= cap && max > cap / 2,
        "the head presses against the cap, none passes it: {max}"
    );
    let mean = counts.iter().sum::<u64>() as f64 / 2000.0;
    assert!(mean > 17.0, "mean followees {mean}");
}

#[test]
fn a_kept_plan_reads_back_only_for_its_own_data_and_whole() {
    // A cap tight enough to cut some users' followers, and celebrities above 25.
    let src = "name = \"t\"\nseed = 3\n[data]\nusers = 2000\n[data.follows]\nmean = 20.0\nmax_followers = 0.02\n[microblog]\ncelebrity_threshold = 25\n";
    let w = Workload::from_str(Path::new("t.toml"), src).unwrap();
    let g = Generator::new(&w);
    assert!(g.plan().has_cutoffs() && !g.plan().celebrities().is_empty());
    let mut bytes = Vec::new();
    g.plan().write(&w.data_digest(), &mut bytes).unwrap();
    assert_eq!(&bytes[..8], b"TRPLAN1\n");
    let read = Plan::read(&g, &mut bytes.as_slice()).expect("its own plan reads back");
    assert_eq!(&read, g.plan());

    // Through the file a resume reads, the generator is the counted one's.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("load.plan");
    std::fs::write(&path, &bytes).unwrap();
    let kept = Generator::with_plan_from(&w, &path);
    assert!(kept.plan_read());
    assert_eq!(kept.plan(), g.plan());
    let mut list = Vec::new();
    let mut seen = super::Seen::default();
    let mut again = Vec::new();
    for uid in [1, 2, 1000, 2000] {
        g.followees(uid, &mut list, &mut seen);
        kept.followees(uid, &mut again, &mut seen);
        assert_eq!(list, again, "user {uid}");
    }

    // Other data, a cut, a changed byte, bytes after the end: counted again.
    let other = Workload::from_str(Path::new("t.toml"), &src.replace("seed = 3", "seed = 4")).unwrap();
    assert!(Plan::read(&Generator::new(&other), &mut bytes.as_slice()).is_none());
    let more = Workload::from_str(Path::new("t.toml"), &src.replace("2000", "2001")).unwrap();
    assert!(Plan::read(&Generator::new(&more), &mut bytes.as_slice()).is_none());
    for cut in [0, 7, 8, 60, bytes.len() / 2, bytes.len() - 1] {
        assert!(Plan::read(&g, &mut &bytes[..cut]).is_none(), "cut at {cut}");
    }
    for at in [3, 20, bytes.len() / 2, bytes.len() - 2] {
        let mut bad = bytes.clone();
        bad[at] ^= 0x10;
        assert!(Plan::read(&g, &mut bad.as_slice()).is_none(), "byte {at} changed");
    }
    let mut longer = bytes.clone();
    longer.push(0);
    assert!(Plan::read(&g, &mut longer.as_slice()).is_none());
    std::fs::write(&path, &bytes[..bytes.len() - 1]).unwrap();
    let counted = Generator::with_plan_from(&w, &path);
    assert!(!counted.plan_read());
    assert_eq!(counted.plan(), g.plan());
}

/// Every row of the seed descriptions is the row the hand-written codecs make, in the same
/// order, for every shipped workload and every key variant a workload may ask for: the
/// descriptions write what the seeds wrote, byte for byte.
#[test]
fn the_seed_descriptions_write_the_rows_of_the_hand_written_codecs() {
    use crate::workload::Set;
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files: Vec<_> = std::fs::read_dir(root.join("workloads"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "toml"))
        .collect();
    files.sort();
    files.push(root.join("benches/paging.toml"));
    assert!(files.len() >= 8, "{files:?}");
    let variants = [
        r#"{ order = "forward" }"#,
        r#"{ salt = "hash" }"#,
        r#"{ salt = 16 }"#,
        r#"{ order = "forward", salt = 256 }"#,
    ];
    let mut compared = 0;
    // Every workload with the keys it names, and the one that writes every design (capacity)
    // with each variant.
    let runs = files.iter().map(|f| (f, None)).chain(
        variants
            .into_iter()
            .map(|v| (files.iter().find(|f| f.ends_with("capacity.toml")).unwrap(), Some(v))),
    );
    for (file, keys) in runs {
        let mut sets: Vec<Set> = vec!["data.users=400".parse().unwrap()];
        if let Some(k) = keys {
            for design in ["weibo", "actions", "blog", "series"] {
                sets.push(format!("keys.{design}={k}").parse().unwrap());
            }
        }
        let w = Workload::from_file_with(file, &sets).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
        if w.design.is_some() {
            // A design of the workload's own has no hand-written codecs to agree with.
            continue;
        }
        let g = Generator::new(&w);
        assert_eq!(g.tables(), dao_tables(&g), "{}: the tables", file.display());
        let (mut a, mut b): (Vec<(Table, crate::store::RowMutation)>, Vec<_>) = (Vec::new(), Vec::new());
        let (mut sa, mut sb) = (Scratch::default(), Scratch::default());
        for uid in 1..=w.data.users {
            g.emit_user_described(uid, &mut sa, &mut a).unwrap();
            g.emit_user(uid, &mut sb, &mut b).unwrap();
        }
        let at = format!("{} with keys {keys:?}", file.display());
        for (i, (x, y)) in a.iter().zip(&b).enumerate() {
            assert!(
                x == y,
                "{at}: row {i} of the descriptions {} differs from the codecs' {}:\n{x:?}\n{y:?}",
                g.describe_row(x.0, &x.1.row),
                g.describe_row(y.0, &y.1.row)
            );
        }
        assert_eq!(a.len(), b.len(), "{at}: as many rows");
        assert!(!a.is_empty(), "{at}");
        compared += a.len();
    }
    assert!(compared > 50_000, "{compared} rows compared");
}

/// The tables the seeds' DAOs declare for `g`'s workload, with its storage settings and mark:
/// what [`Generator::tables`] makes of the descriptions.
fn dao_tables(g: &Generator) -> Vec<crate::store::TableDescriptor> {
    let w = g.workload();
    let mark = crate::store::mark(&w.name, &w.data_digest());
    g.seed_tables()
        .into_iter()
        .map(|t| crate::store::TableDescriptor {
            attributes: mark.clone(),
            ..w.storage.apply(t)
        })
        .collect()
}

/// An inbox keeping other than the descriptions' 3 versions keeps them in the tables made.
#[test]
fn the_seed_descriptions_tables_keep_the_workloads_inbox_versions() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("workloads/capacity.toml");
    for versions in [1, 5] {
        let sets = [format!("microblog.inbox_versions={versions}").parse().unwrap()];
        let w = Workload::from_file_with(&path, &sets).unwrap();
        let g = Generator::new(&w);
        let tables = g.tables();
        assert_eq!(tables, dao_tables(&g));
        let inbox = tables.iter().find(|t| t.name == Table::INBOX.name()).unwrap();
        assert_eq!(inbox.families[0].max_versions, versions);
    }
}

/// The seed descriptions' tables come in [`Table::SEEDS`]' order, which the emitter's table
/// positions stand for (and which the rows digest counts).
#[test]
fn the_seed_descriptions_tables_are_in_the_order_of_the_table_list() {
    let d = crate::design::seeds::combined(crate::workload::Keys::SEED.seeds(), 3);
    let names: Vec<&str> = d.tables.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(names, Table::SEEDS.map(Table::name));
}

#[test]
fn the_newest_of_an_entitys_field_is_its_instances_greatest() {
    use crate::design::Entity;
    use crate::design::key::Owned;
    let g = small();
    let mut s = Scratch::default();
    let mut posted = 0;
    for uid in 1..=g.workload().data.users {
        for (entity, field) in [(Entity::Post, "stamp"), (Entity::Follow, "at")] {
            let at = entity.field(field).unwrap();
            let mut all: Vec<i128> = g
                .instances(uid, entity, &mut s)
                .iter()
                .map(|v| match v[at] {
                    Owned::Int(t) => t,
                    Owned::Bytes(_) => unreachable!(),
                })
                .collect();
            all.sort_unstable_by(|a, b| b.cmp(a));
            for n in [1, 3, 1000] {
                let want: Vec<i128> = all.iter().copied().take(n).collect();
                assert_eq!(
                    g.newest_of(uid, entity, at, n, &mut s),
                    want,
                    "user {uid}'s {field}s, {n}"
                );
            }
            posted += usize::from(entity == Entity::Post && all.len() > 3);
        }
    }
    assert!(posted > 10, "{posted} users with posts to take from");
}

#[test]
fn an_instances_cells_are_its_rows_without_their_values() {
    use crate::design::Entity;
    use crate::store::Mutation;
    let g = small();
    let mut s = Scratch::default();
    let mut compared = 0;
    for uid in 1..=20 {
        for entity in Entity::ALL {
            for v in g.instances(uid, entity, &mut s) {
                let values: Vec<_> = v.iter().map(|o| o.as_value()).collect();
                let mut rows = g.instance_rows(entity, &values).unwrap();
                for (_, r) in &mut rows {
                    for m in &mut r.mutations {
                        if let Mutation::Put { value, .. } = m {
                            compared += usize::from(!value.is_empty());
                            value.clear();
                        }
                    }
                }
                assert_eq!(
                    g.instance_cells(entity, &values).unwrap(),
                    rows,
                    "user {uid}'s {entity:?}"
                );
            }
        }
    }
    assert!(compared > 1000, "{compared} values left out");
}

/// Rows are named by the descriptions' keys, field by field; of a table of several kinds of
/// rows, by the kind that reads the key (a relation row, both a user's followees and
/// followers, by none); a key no kind reads, by its bytes.
#[test]
fn rows_are_named_by_their_descriptions_fields() {
    let g = small();
    let mut s = Scratch::default();
    let mut rows: Vec<(Table, crate::store::RowMutation)> = Vec::new();
    g.emit_user_rows(1, &mut s, &mut rows).unwrap();
    let mut named: Vec<String> = Vec::new();
    for (t, r) in &rows {
        let line = format!("{} {}", t.name(), g.describe_row(*t, &r.row));
        // The first row of each table and kind.
        let kind = |l: &str| l.split(['=', ' ']).take(2).collect::<Vec<_>>().join(" ");
        if named.iter().all(|n| kind(n) != kind(&line)) {
            named.push(line);
        }
    }
    assert_eq!(
        named,
        [
            "weibo:user uid=1",
            "weibo:relation uid=1",
            "weibo:inbox reader=1",
            "weibo:content uid=1 stamp=1743272998587",
            "useractions userid=1 stamp=1742023698422 actionid=0",
            "blog article uid=1 post_at=1741451326989 article_id=1000000",
            "blog category uid=1 category=1 post_at=1741451326989 article_id=1000000",
            "series userid=1 time=1741727167967 nanos=1741727167967000000",
        ]
    );
    assert_eq!(g.describe_row(Table::ACTIONS, b"\xff"), "key \\xFF");
}
