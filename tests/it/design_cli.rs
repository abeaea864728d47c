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
