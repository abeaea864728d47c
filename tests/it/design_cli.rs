//! `tallrow design explain` through the real binary.

use std::process::Command;

fn tallrow(args: &[&str]) -> (Option<i32>, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_tallrow")).args(args).output().unwrap();
    (
        out.status.code(),
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
}

/// Every table of the quickstart, its key in words, rows per region, and example rows read
/// segment by segment that `keys decode` reads the same.
#[test]
fn explain_shows_each_table_its_keys_sizes_and_regions() {
    let workload = concat!(env!("CARGO_MANIFEST_DIR"), "/workloads/quickstart.toml");
    let (code, out, err) = tallrow(&[
        "design",
        "explain",
        workload,
        "--set",
        "data.users=600",
        "--regions",
        "4",
        "--examples",
        "2",
    ]);
    assert_eq!(code, Some(0), "{err}");
    assert!(
        out.starts_with("quickstart: 600 users; the rows of 600 of them"),
        "{out}"
    );
    for table in [
        "weibo:user (tables.user)",
        "weibo:relation (tables.relation)",
        "weibo:content (tables.content)",
        "weibo:inbox (tables.inbox)",
        "useractions (tables.useractions)",
        "blog (tables.blog)",
        "series (tables.series)",
    ] {
        assert!(out.contains(&format!("\n{table}, families ")), "{table}:\n{out}");
    }
    assert!(
        out.contains(
            "  key: no salt (of uid) · decimal uid, as long as it is · \"_\" · stamp stamp reversed (Long.MAX_VALUE minus it), 19 digits\n"
        ),
        "{out}"
    );
    assert!(
        out.contains(
            "  key (attention): decimal uid, as long as it is\n  key (fans): decimal followee, as long as it is\n"
        ),
        "{out}"
    );
    for table in ["\nweibo:content", "\nuseractions", "\nseries"] {
        let section = &out[out.find(table).unwrap()..];
        let section = &section[..section[1..].find("\n\n").map_or(section.len(), |e| e + 1)];
        assert!(section.contains("  rows per region (4 regions): "), "{section}");
    }
    // The seed layouts put the user before time: no table sends new writes to one end.
    assert!(!out.contains("warning:"), "{out}");
    // An example row of useractions, read by the binary's own `keys decode`.
    let actions = &out[out.find("\nuseractions").unwrap()..];
    let row = actions.lines().find(|l| l.starts_with("  row ")).unwrap();
    let hex = row.split_whitespace().nth(1).unwrap();
    let userid = actions.lines().find_map(|l| l.split("userid = ").nth(1)).unwrap();
    let (code, decoded, _) = tallrow(&["keys", "decode", "actions", hex]);
    assert_eq!(code, Some(0));
    assert!(decoded.contains(&format!("userid: {userid}\n")), "{decoded}\n{actions}");
}

#[test]
fn explain_of_a_bad_workload_says_where_in_one_line() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("bad.toml");
    std::fs::write(&file, "name = \"bad\"\nseed = 1\n[data]\nusers = -4\n").unwrap();
    let (code, out, err) = tallrow(&["design", "explain", file.to_str().unwrap()]);
    assert_eq!(code, Some(1), "{err}");
    assert!(out.is_empty());
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("bad.toml") && err.contains("data.users"), "{err}");
}

/// The messaging example's workload and design, copied into `dir` (the workload names its
/// design from its own folder) with `users` users; returns the workload's path.
fn messaging_in(dir: &std::path::Path, users: u64, design: Option<&str>) -> std::path::PathBuf {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("workloads");
    let workload = std::fs::read_to_string(root.join("messaging.toml"))
        .unwrap()
        .replace("users = 2000", &format!("users = {users}"));
    std::fs::create_dir_all(dir.join("designs")).unwrap();
    std::fs::write(dir.join("messaging.toml"), workload).unwrap();
    let text = match design {
        Some(t) => t.to_string(),
        None => std::fs::read_to_string(root.join("designs/messaging.toml")).unwrap(),
    };
    std::fs::write(dir.join("designs/messaging.toml"), text).unwrap();
    dir.join("messaging.toml")
}

/// A workload of its own design weighs the design's operations alone: a seed design's
/// operation in its mix is named with the design's; a design's operation may take a seed
/// operation's name only where it writes as that one does. Each a one-line error, exit 1, nothing made.
#[test]
fn a_mix_names_the_designs_own_operations() {
    let good =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/workloads/designs/messaging.toml")).unwrap();
    let cases = [
        (
            None,
            "--set run.mix.timeline=1",
            "run.mix.timeline: the workload's own design has no such operation; its operations: account, conversation, inbox, send",
        ),
        (
            Some(good.replace("[operations.send]", "[operations.timeline]")),
            "",
            "design: the design's operation timeline writes, and the seed operation of that name reads: name it otherwise",
        ),
    ];
    for (design, set, words) in cases {
        let dir = tempfile::tempdir().unwrap();
        let workload = messaging_in(dir.path(), 50, design.as_deref());
        let data = dir.path().join("data");
        let url = format!("embedded:{}", data.display());
        let mut args = vec!["run", workload.to_str().unwrap(), "--backend", &url];
        args.extend(set.split_whitespace());
        let out = crate::common::tallrow(dir.path(), &args);
        let err = out.stderr.trim();
        assert_eq!((out.code, err.lines().count()), (1, 1), "{err}");
        assert!(err.contains(words), "{words:?}: {err}");
        assert!(!data.exists(), "nothing made: {err}");
    }
}

/// A design of the workload's own, none of the seeds' (the messaging example), on the
/// embedded store: loaded into its own tables, verified whole, a missing message named by
/// its key's segments; `design explain` reads its tables.
#[test]
fn a_design_of_its_own_loads_verifies_and_names_a_missing_row_by_its_segments() {
    let dir = tempfile::tempdir().unwrap();
    let url = format!("embedded:{}", dir.path().join("data").display());
    crate::common::own_design_loads_verifies_and_misses_a_row(&[], &url, "embedded (fjall");
    let workload = concat!(env!("CARGO_MANIFEST_DIR"), "/workloads/messaging.toml");
    let out = crate::common::tallrow(
        dir.path(),
        &["design", "explain", workload, "--examples", "1", "--regions", "4"],
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    // Keys that begin with sixteen salt buckets split at whole buckets.
    let messages = &out.stdout[out.stdout.find("\nchat:messages").unwrap()..];
    assert!(messages.contains("\n  split at: \\x04 · \\x08 · \\x0C\n"), "{messages}");
    assert!(!out.stdout.contains("weibo:"), "no seed table: {}", out.stdout);
    assert!(
        out.stdout
            .contains("\nchat:conversations (tables.conversations), families c\n"),
        "{}",
        out.stdout
    );
    // Its operations, each with what it reads or writes and its share of the mix.
    let ops = &out.stdout[out
        .stdout
        .find("\noperations (share of [run.mix])\n")
        .expect("operations listed")..];
    for line in [
        "  account (14.3%): gets a row of chat:accounts\n",
        "  inbox (47.6%): looks up an index: 20 rows of chat:conversations sharing the key's first 2 segments, resumed from a cursor, then gets the rows of chat:messages its c cells name\n",
        "  send (9.5%): writes a delivery (into chat:messages, chat:conversations)\n",
    ] {
        assert!(ops.contains(line), "{line}{ops}");
    }
}

/// Malformed designs, each through `tallrow load`: one line naming the design file, its
/// line and the field at fault; exit 1; no table made.
#[test]
fn malformed_designs_of_a_workload_say_where_in_one_line_and_create_nothing() {
    let good =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/workloads/designs/messaging.toml")).unwrap();
    // (what is replaced, by what, the field named, words of the message)
    let cases: &[(&str, &str, &str, &str)] = &[
        (
            "{ int = \"reader\", bytes = 8 },\n  { int = \"uid\"",
            "{ int = \"reader\", bytes = 8 },\n  { int = \"sender\"",
            "tables.messages.key[3].int",
            "has no field sender",
        ),
        (
            "{ salt = \"reader\", buckets = 16 },\n  { int = \"reader\"",
            "{ salt = \"reader\", buckets = 0 },\n  { int = \"reader\"",
            "tables.messages.key[1].buckets",
            "buckets",
        ),
        (
            "{ int = \"uid\", bytes = 8 },\n  { stamp",
            "{ int = \"uid\", bytes = 9 },\n  { stamp",
            "tables.messages.key[3].bytes",
            "1 to 8 bytes",
        ),
        (
            "mean = 120, sd = 60",
            "mean = -5, sd = 60",
            "tables.messages.cells[2].value.mean",
            "a mean size is 0 to",
        ),
        (
            "sd = 60",
            "sd = -1",
            "tables.messages.cells[2].value.sd",
            "a standard deviation is 0 to",
        ),
        (
            "[[0, 4], [2048, 3], [16384, 1]]",
            "[[0, 4], [-2048, 3]]",
            "tables.accounts.cells[2].value.buckets[2]",
            "a size is 0 to 10485760 bytes",
        ),
        (
            "max = 2000",
            "max = 20000000",
            "tables.messages.cells[2].value.max",
            "got 20000000",
        ),
        (
            "qualifier = \"body\"",
            "qualifier = \"from\"",
            "tables.messages.cells[2].qualifier",
            "cell 1 already writes m:from",
        ),
        (
            "family = \"m\", qualifier = \"body\"",
            "family = \"x\", qualifier = \"body\"",
            "tables.messages.cells[2].family",
            "not one of the table's families",
        ),
        (
            "families = [\"m\"]",
            "families = [\"m\", \"m\"]",
            "tables.messages.families[2]",
            "declared twice",
        ),
        (
            "families = [\"m\"]",
            "families = [\"m\", \"n\"]",
            "tables.messages.families",
            "no cell is written into it",
        ),
        (
            "families = [\"m\"]",
            "families = [\".m\"]",
            "tables.messages.families[1]",
            "not a family name",
        ),
        (
            "versions = 1 }",
            "versions = 0 }",
            "tables.conversations.families[1].versions",
            "a number from 1 to",
        ),
        (
            "entity = \"delivery\"\nkey = [\n",
            "entity = \"message\"\nkey = [\n",
            "tables.messages.entity",
            "is not an entity",
        ),
        (
            "value = { key = \"messages\" }",
            "value = { key = \"letters\" }",
            "tables.conversations.cells[1].value.key",
            "no table \"letters\"",
        ),
        (
            "timestamp = \"stamp\" },\n  { family = \"m\", qualifier = \"body\"",
            "timestamp = \"when\" },\n  { family = \"m\", qualifier = \"body\"",
            "tables.messages.cells[1].timestamp",
            "has no field when",
        ),
        (
            "value = [{ decimal = \"uid\" }]",
            "value = [{ text = \"uid\" }]",
            "tables.messages.cells[1].value[1].text",
            "is an integer",
        ),
        (
            "value = [{ text = \"name\" }]",
            "value = [{ int = \"name\" }]",
            "tables.accounts.cells[1].value[1].int",
            "is text",
        ),
        (
            "name = \"chat:messages\"",
            "name = \"chat:accounts\"",
            "tables.messages.name",
            "also tables.accounts's name",
        ),
        (
            "name = \"chat:messages\"",
            "name = \"chat:mess ages\"",
            "tables.messages.name",
            "table name",
        ),
        (
            "{ stamp = \"stamp\", order = \"reverse\" }",
            "{ stamp = \"stamp\", order = \"backwards\" }",
            "tables.messages.key[4].order",
            "reverse",
        ),
        (
            "{ stamp = \"stamp\", order = \"reverse\" }",
            "{ stamp = \"stamp\", int = \"uid\" }",
            "tables.messages.key[4].stamp",
            "a segment is one thing",
        ),
        (
            "{ stamp = \"stamp\", order = \"reverse\" }",
            "{ stamp = \"stamp\", colour = \"red\" }",
            "tables.messages.key[4].colour",
            "unknown field `colour`",
        ),
        (
            "key = [{ salt = \"uid\", buckets = 16 }, { int = \"uid\", bytes = 8 }]",
            "key = []",
            "tables.accounts.key",
            "segment",
        ),
        (
            "size = \"histogram\"",
            "size = \"bimodal\"",
            "tables.accounts.cells[2].value.size",
            "\"bimodal\" is not a size",
        ),
        (
            "fill = \"random\"",
            "fill = \"noise\"",
            "tables.accounts.cells[2].value.fill",
            "fill is \"text\"",
        ),
        ("name = \"chat:accounts\"", "name = 5", "tables.accounts.name", "string"),
        // Operations.
        (
            "by = [\"reader\", \"uid\"]",
            "by = [\"uid\"]",
            "operations.conversation.by",
            "a page reads each of its 16 buckets; say buckets = \"all\"",
        ),
        (
            "by = [\"reader\", \"uid\"]",
            "by = [\"reader\", \"stamp\"]",
            "operations.conversation.by[2]",
            "field stamp is not among the key's leading fields",
        ),
        (
            "by = [\"reader\", \"uid\"]",
            "by = [\"reader\", \"sender\"]",
            "operations.conversation.by[2]",
            "has no field \"sender\"",
        ),
        (
            "by = [\"reader\", \"uid\"]\nrows = 20",
            "by = [\"reader\", \"uid\"]\nrows = 20\nbuckets = \"all\"",
            "operations.conversation.buckets",
            "there is one bucket to read",
        ),
        (
            "by = [\"reader\", \"uid\"]\nrows = 20",
            "by = [\"reader\", \"uid\"]\nrows = 0",
            "operations.conversation.rows",
            "must be 1 to 1000",
        ),
        (
            "then = \"messages\"",
            "then = \"accounts\"",
            "operations.inbox.then",
            "no cell of conversations holds a key of accounts",
        ),
        (
            "get = \"accounts\"",
            "get = \"contacts\"",
            "operations.account.get",
            "no table \"contacts\"",
        ),
        (
            "get = \"accounts\"",
            "get = \"accounts\"\nrows = 5",
            "operations.account.rows",
            "get takes no rows",
        ),
        (
            "[operations.account]\nget = \"accounts\"",
            "[operations.account]\nget = \"accounts\"\npage = \"accounts\"",
            "operations.account",
            "not get and page",
        ),
        (
            "write = \"delivery\"",
            "write = \"message\"",
            "operations.send.write",
            "no entity \"message\"",
        ),
        (
            "write = \"delivery\"",
            "timeline = \"accounts\"\nby = [\"uid\"]",
            "operations.send.timeline",
            "the key of accounts holds no stamp",
        ),
        (
            "write = \"delivery\"",
            "timeline = \"messages\"\nby = [\"reader\"]\nsources = \"celebrities\"",
            "operations.send.sources",
            "name the inbox lookup",
        ),
        (
            "write = \"delivery\"",
            "timeline = \"messages\"\nby = [\"reader\"]\ninbox = \"account\"",
            "operations.send.inbox",
            "operation account is not a lookup of messages",
        ),
        (
            "write = \"delivery\"",
            "timeline = \"messages\"\nby = [\"reader\", \"uid\"]",
            "operations.send.by",
            "a timeline's pages are by one field",
        ),
        (
            "write = \"delivery\"",
            "delete = \"message\"",
            "operations.send.delete",
            "no entity \"message\"; delete names one of",
        ),
        (
            "write = \"delivery\"",
            "update = \"delivery\"\nby = [\"reader\"]",
            "operations.send.by",
            "update takes no by",
        ),
        (
            "write = \"delivery\"",
            "write = \"post\"",
            "operations.send.write",
            "no table of the design takes rows of entity post",
        ),
        (
            "write = \"delivery\"",
            "range = \"messages\"\nby = [\"reader\"]\nspan = \"1d\"",
            "operations.send.by",
            "field uid follows what by names, not a stamp",
        ),
        (
            "write = \"delivery\"",
            "range = \"messages\"\nby = [\"reader\", \"uid\"]\nspan = \"soon\"",
            "operations.send.span",
            "\"soon\" is not a width of time",
        ),
        (
            "write = \"delivery\"",
            "cells = \"accounts\"\nfamily = \"p\"",
            "operations.send.family",
            "whose qualifiers are made of fields",
        ),
        (
            "write = \"delivery\"",
            "cells = \"accounts\"\nfamily = \"x\"",
            "operations.send.family",
            "the rows of accounts hold no cells of family \"x\"",
        ),
        (
            "by = [\"reader\", \"uid\"]\nrows = 20",
            "by = [\"reader\", \"uid\"]\nrows = 20\nresume = \"token\"",
            "operations.conversation.resume",
            "\"token\" is not \"cursor\" or \"offset\"",
        ),
        (
            "write = \"delivery\"",
            "write = \"delivery\"\nresume = \"offset\"",
            "operations.send.resume",
            "write takes no resume",
        ),
        (
            "write = \"delivery\"",
            "write = \"delivery\"\nfanout = \"accounts\"",
            "operations.send.fanout",
            "fanout goes with write = \"post\", not write",
        ),
        (
            "write = \"delivery\"",
            "timeline = \"messages\"\nby = [\"reader\"]\nfollows = \"accounts\"",
            "operations.send.follows",
            "the rows of accounts are not a user's followees",
        ),
        (
            "write = \"delivery\"",
            "write = \"delivery\"\nfollows = \"accounts\"",
            "operations.send.follows",
            "write takes no follows",
        ),
        (
            "then = \"messages\"",
            "versions = 0\nthen = \"messages\"",
            "operations.inbox.versions",
            "versions are a number from 1 to 10000, got 0",
        ),
        (
            "write = \"delivery\"",
            "timeline = \"messages\"\nby = [\"reader\"]\nper_source = 0",
            "operations.send.per_source",
            "must be 1 to 1000, got 0",
        ),
        (
            "name = \"chat:messages\"",
            "name = \"chat:messages\"\nname = \"chat:again\"",
            "tables.messages.name",
            "duplicate key",
        ),
    ];
    for (from, to, field, words) in cases {
        assert!(good.contains(from), "{from:?} is in the design");
        let dir = tempfile::tempdir().unwrap();
        let workload = messaging_in(dir.path(), 50, Some(&good.replacen(from, to, 1)));
        let data = dir.path().join("data");
        let url = format!("embedded:{}", data.display());
        let out = crate::common::tallrow(dir.path(), &["load", workload.to_str().unwrap(), "--backend", &url]);
        let err = out.stderr.trim();
        assert_eq!(out.code, 1, "{to}: {err}");
        assert_eq!(err.lines().count(), 1, "{to}: one line: {err}");
        assert!(
            err.contains("designs/messaging.toml:") && err.contains(&format!(": {field}: ")) && err.contains(words),
            "{to}: names the design file, its line, {field} and {words:?}: {err}"
        );
        let line: usize = err
            .split("messaging.toml:")
            .nth(1)
            .unwrap()
            .split(':')
            .next()
            .unwrap()
            .parse()
            .unwrap();
        let text = good.replacen(from, to, 1);
        let at = text.lines().nth(line - 1).unwrap_or_default();
        assert!(
            to.lines().any(|l| at.contains(l.trim())) || at.starts_with("[tables."),
            "{to}: line {line} is where the fault is: {at:?}"
        );
        assert!(
            !data.exists() || std::fs::read_dir(&data).unwrap().next().is_none(),
            "{to}: nothing made"
        );
    }
    // A workload naming a design it cannot read says so, on its own `design` field.
    let dir = tempfile::tempdir().unwrap();
    let workload = messaging_in(dir.path(), 50, None);
    std::fs::remove_file(dir.path().join("designs/messaging.toml")).unwrap();
    let out = crate::common::tallrow(dir.path(), &["load", workload.to_str().unwrap()]);
    assert_eq!(out.code, 1, "{}", out.stderr);
    assert!(
        out.stderr.contains("messaging.toml:5:") && out.stderr.contains("design: cannot read"),
        "{}",
        out.stderr
    );
}

/// An update and a delete of a design's own: articles in one table, and an index of each
/// user's articles by category, newest update first, whose key holds the update's time. An
/// update moves an article's index row (the old one deleted in the same write), a delete
/// takes both rows, a write adds an article of a new id: after a run of the three, every
/// article has exactly one index row and every index row its article, some updated since the
/// load, some gone and some new.
#[test]
fn an_update_moves_an_index_row_and_a_delete_takes_every_row() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("designs")).unwrap();
    std::fs::write(
        dir.path().join("designs/articles.toml"),
        r#"
[tables.articles]
name = "b:articles"
families = ["a"]
entity = "article"
key = [{ int = "uid", bytes = 8 }, { int = "article_id", bytes = 8 }]
cells = [{ family = "a", qualifier = "title", value = [{ text = "title" }], timestamp = "update_at" }]

[tables.by_category]
name = "b:by_category"
families = ["i"]
entity = "article"
key = [{ int = "uid", bytes = 8 }, { int = "category", bytes = 4 }, { stamp = "update_at" }, { int = "article_id", bytes = 8 }]
cells = [{ family = "i", qualifier = "a", value = { key = "articles" }, timestamp = "update_at" }]

[operations.edit]
update = "article"

[operations.remove]
delete = "article"

[operations.post]
write = "article"
"#,
    )
    .unwrap();
    let workload = dir.path().join("articles.toml");
    std::fs::write(
        &workload,
        "name = \"articles\"\nseed = 7\ndesign = \"designs/articles.toml\"\n[data]\nusers = 20\n\
         start = 2026-01-01T00:00:00Z\nspan_days = 30\n[data.articles]\nper_user = 6.0\ncategories = 4\n\
         [run.mix]\nedit = 3\nremove = 1\npost = 1\n",
    )
    .unwrap();
    let data = dir.path().join("data");
    let url = format!("embedded:{}", data.display());
    let w = workload.to_str().unwrap();
    let out = crate::common::tallrow(dir.path(), &["load", w, "--backend", &url]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let rows = |t: &str| -> Vec<Vec<u8>> {
        let store = tallrow::store::backend::Backend::parse(&url, dir.path())
            .unwrap()
            .open()
            .unwrap();
        store
            .scan(t, &tallrow::store::Scan::default())
            .unwrap()
            .into_iter()
            .map(|r| r.key)
            .collect()
    };
    let loaded = rows("b:articles");
    let loaded_at: Vec<Vec<u8>> = rows("b:by_category");
    let out = crate::common::tallrow(
        dir.path(),
        &[
            "run",
            w,
            "--backend",
            &url,
            "--set",
            "run.ops=60",
            "--set",
            "run.warmup=0s",
            "--set",
            "run.threads=1",
        ],
    );
    assert_eq!(out.code, 0, "{}\n{}", out.stdout, out.stderr);
    crate::common::ran_without_errors(&out.stdout, &["edit ", "remove ", "post "]);
    let articles = rows("b:articles");
    let index = rows("b:by_category");
    // (uid, article id) of each.
    let of_article = |k: &Vec<u8>| (k[..8].to_vec(), k[8..16].to_vec());
    let of_index = |k: &Vec<u8>| (k[..8].to_vec(), k[20..28].to_vec());
    let mut a: Vec<_> = articles.iter().map(of_article).collect();
    let mut i: Vec<_> = index.iter().map(of_index).collect();
    a.sort();
    i.sort();
    assert_eq!(a, i, "one index row per article, and none of a deleted one");
    let gone = loaded.iter().filter(|k| !articles.contains(k)).count();
    assert!(gone > 0, "some deleted");
    // A new article's id lies past its user's generated ones (below uid * 1,000,000 + 500,000).
    let new = articles
        .iter()
        .filter(|k| {
            let uid = i64::from_be_bytes(k[..8].try_into().unwrap());
            i64::from_be_bytes(k[8..16].try_into().unwrap()) >= uid * 1_000_000 + 500_000
        })
        .count();
    assert!(new > 0, "some written");
    let moved = index.iter().filter(|k| !loaded_at.contains(k)).count();
    assert!(
        moved > new,
        "some index rows moved by an update, besides the new articles'"
    );
}

/// Each shipped seed description, as a workload's own design, loads and runs every one of
/// its operations through the binary on the embedded store: the seeds' eighteen operations
/// (and the inbox lookup) under their names, none failing, the writes marked as writes.
#[test]
fn the_seed_descriptions_run_the_seed_operations_through_the_binary() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("workloads/designs");
    let designs: [(&str, &str, &[&str]); 4] = [
        (
            "actions",
            "[data.follows]\n[data.posts]\nper_month = 6.0\n[data.actions]\nper_user = 40.0\n",
            &["actions_offset", "actions_cursor", "actions_range", "action_write"],
        ),
        ("series", "[data.series]\nper_user = 100.0\n", &["series_range"]),
        (
            "blog",
            "[data.articles]\nper_user = 6.0\ncategories = 4\n",
            &["category", "article_post", "article_update", "article_delete"],
        ),
        (
            "microblog",
            "[data.follows]\nmean = 8.0\n[data.posts]\nper_month = 6.0\n\
             [microblog]\ninbox_versions = 3\ncelebrity_threshold = 10\n",
            &[
                "own_posts",
                "inbox",
                "timeline",
                "timeline_later",
                "timeline_pull",
                "followers",
                "followees",
                "publish",
                "follow",
                "unfollow",
            ],
        ),
    ];
    let mut seen = Vec::new();
    for (file, data, names) in designs {
        let dir = tempfile::tempdir().unwrap();
        let workload = dir.path().join("w.toml");
        std::fs::write(
            &workload,
            format!(
                "name = \"{file}\"\nseed = 5\ndesign = {:?}\n[data]\nusers = 120\nspan_days = 30\n{data}",
                root.join(format!("{file}.toml"))
            ),
        )
        .unwrap();
        let url = format!("embedded:{}", dir.path().join("data").display());
        let w = workload.to_str().unwrap();
        let out = crate::common::tallrow(dir.path(), &["load", w, "--backend", &url]);
        assert_eq!(out.code, 0, "{file}: {}", out.stderr);
        let out = crate::common::tallrow(
            dir.path(),
            &[
                "run",
                w,
                "--backend",
                &url,
                "--ops",
                "600",
                "--warmup",
                "0s",
                "--threads",
                "2",
            ],
        );
        assert_eq!(out.code, 0, "{file}: {}\n{}", out.stdout, out.stderr);
        let mut ran = crate::common::run_ops(dir.path(), &out.stdout);
        ran.sort_by(|a, b| a.name.cmp(&b.name));
        let mut want: Vec<&str> = names.to_vec();
        want.sort_unstable();
        assert_eq!(
            ran.iter().map(|o| o.name.as_str()).collect::<Vec<_>>(),
            want,
            "{file}: every operation of the description ran"
        );
        for o in &ran {
            assert!(
                o.count > 0 && o.errors == 0,
                "{file}: {}: {} operations, {} errors: {}",
                o.name,
                o.count,
                o.errors,
                out.stdout
            );
            let seed = tallrow::workload::Op::from_name(&o.name).is_some_and(|s| s.writes());
            assert_eq!(o.writes, seed, "{file}: {} writes as the seed's", o.name);
            seen.push(o.name.clone());
        }
    }
    seen.retain(|n| n != "inbox");
    seen.sort();
    let mut all: Vec<&str> = tallrow::workload::Op::ALL.iter().map(|o| o.name()).collect();
    all.sort_unstable();
    assert_eq!(seen, all, "the seeds' eighteen operations");
}
