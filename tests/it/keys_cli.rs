//! `tallrow keys` through the real binary.

use std::process::Command;

fn tallrow(args: &[&str]) -> (bool, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_tallrow")).args(args).output().unwrap();
    (
        out.status.success(),
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
}

#[test]
fn encode_prints_hex_binary_and_fields() {
    let (ok, out, _) = tallrow(&[
        "keys",
        "encode",
        "actions",
        "userid=1",
        "stamp=1600000000000",
        "actionid=7",
    ]);
    assert!(ok);
    assert_eq!(
        out,
        "hex: 000000017ffffe8b78917fff00000007\n\
         binary: \\x00\\x00\\x00\\x01\\x7F\\xFF\\xFE\\x8Bx\\x91\\x7F\\xFF\\x00\\x00\\x00\\x07\n\
         userid: 1\nstamp: 1600000000000\nactionid: 7\n"
    );
}

#[test]
fn every_layout_round_trips_through_the_binary() {
    let cases: [(&str, &[&str]); 5] = [
        ("actions", &["userid=-3", "stamp=1700000000123", "actionid=2147483647"]),
        ("weibo-content", &["uid=1001", "stamp=1600000000000"]),
        ("blog", &["uid=123456789012", "post_at=1600000000000", "article_id=42"]),
        (
            "blog-index",
            &[
                "uid=123456789012",
                "category=5",
                "post_at=1600000000000",
                "article_id=42",
            ],
        ),
        ("series", &["userid=352", "time=1400657685457", "nanos=81234567890"]),
    ];
    for (layout, fields) in cases {
        for variant in [
            &[][..],
            &["--order", "forward", "--salt", "16"][..],
            &["--salt", "hash"][..],
        ] {
            let mut args = vec!["keys", "encode", layout];
            args.extend_from_slice(fields);
            args.extend_from_slice(variant);
            let (ok, out, err) = tallrow(&args);
            assert!(ok, "{layout}: {err}");
            let hex = out.lines().next().unwrap().strip_prefix("hex: ").unwrap().to_string();
            let mut dargs = vec!["keys", "decode", layout, hex.as_str()];
            dargs.extend_from_slice(variant);
            let (ok, decoded, err) = tallrow(&dargs);
            assert!(ok, "{layout}: {err}");
            assert_eq!(decoded, out, "{layout} {variant:?}");
            let printed: Vec<String> = decoded.lines().skip(2).map(|l| l.replace(": ", "=")).collect();
            assert_eq!(printed, fields.iter().map(|f| f.to_string()).collect::<Vec<_>>());
        }
    }
    let (_, out, _) = tallrow(&[
        "keys",
        "encode",
        "blog-index",
        "uid=123456789012",
        "category=5",
        "post_at=1600000000000",
        "article_id=42",
    ]);
    assert!(out.starts_with("hex: be991a080000001cbe991a1401000000057ffffe8b78917fff000000000000002a\n"));
}

#[test]
fn bad_input_gets_one_line_naming_the_field() {
    let cases: [(&[&str], &str); 7] = [
        (&["keys", "encode", "nope", "a=1"], "unknown layout"),
        (
            &[
                "keys",
                "encode",
                "actions",
                "userid=1",
                "stamp=1",
                "actionid=1",
                "color=2",
            ],
            "unknown field \"color\"",
        ),
        (
            &[
                "keys",
                "encode",
                "actions",
                "userid=99999999999",
                "stamp=1",
                "actionid=1",
            ],
            "userid: 99999999999 is out of range",
        ),
        (
            &["keys", "encode", "actions", "userid=1", "stamp=1"],
            "field actionid is missing",
        ),
        (&["keys", "decode", "actions", "abc"], "odd number of digits"),
        (&["keys", "decode", "blog", "00ff"], "blog keys are 29 bytes, got 2"),
        (
            &[
                "keys", "encode", "series", "userid=1", "time=1", "nanos=1", "--salt", "0",
            ],
            "--salt",
        ),
    ];
    for (args, expected) in cases {
        let (ok, out, err) = tallrow(args);
        assert!(!ok, "{args:?} succeeded");
        assert!(out.is_empty(), "{args:?} printed {out:?}");
        assert!(err.contains(expected), "{args:?}: {err:?} lacks {expected:?}");
        assert_eq!(err.trim_end().lines().count(), 1, "{args:?}: {err:?}");
        assert!(!err.contains("panicked"));
    }
}

/// A design file of the user's own: `--design` encodes and decodes any of its tables' keys,
/// text and salts included, with `--order` and `--salt` over what it declares.
#[test]
fn keys_of_a_design_files_tables_encode_and_decode() {
    let dir = tempfile::tempdir().unwrap();
    let design = dir.path().join("messages.toml");
    std::fs::write(
        &design,
        r#"
[tables.messages]
name = "chat:messages"
key = [
  { salt = "user", buckets = 16 },
  { int = "user", bytes = 8, signed = false },
  { text = "conversation", width = 4 },
  { stamp = "sent" },
]

[tables.index.rows.by_conversation]
key = [{ text = "conversation" }, { literal = "|" }, { decimal = "user", type = "u64" }]

[tables.index.rows.by_user]
key = [{ decimal = "user", type = "u64" }, { literal = "|" }, { text = "conversation" }]
"#,
    )
    .unwrap();
    let d = design.to_str().unwrap();
    let (ok, out, err) = tallrow(&[
        "keys",
        "encode",
        "messages",
        "--design",
        d,
        "user=7",
        "conversation=c\\x00\\x01z",
        "sent=1600000000000",
    ]);
    assert!(ok, "{err}");
    let bucket = tallrow::keys::seed_hash(7) as u32 % 16;
    let hex = format!("{bucket:02x}0000000000000007630001 7a7ffffe8b78917fff").replace(' ', "");
    assert_eq!(
        out,
        format!(
            "hex: {hex}\nbinary: {}\nuser: 7\nconversation: c\\x00\\x01z\nsent: 1600000000000\n",
            tallrow::keys::to_string_binary(&tallrow::keys::parse_hex(&hex).unwrap())
        )
    );
    let (ok, back, err) = tallrow(&["keys", "decode", "messages", "--design", d, &hex]);
    assert!(ok, "{err}");
    assert_eq!(back, out);
    // The salt off and the stamp forward, as a workload's [keys] variant would have it.
    let (ok, out, err) = tallrow(&[
        "keys",
        "encode",
        "messages",
        "--design",
        d,
        "--salt",
        "none",
        "--order",
        "forward",
        "user=7",
        "conversation=abcd",
        "sent=1",
    ]);
    assert!(ok, "{err}");
    assert!(out.starts_with("hex: 00000000000000076162636400000000000000"), "{out}");
    let (ok, out, err) = tallrow(&[
        "keys",
        "encode",
        "index.by_conversation",
        "--design",
        d,
        "conversation=team",
        "user=18446744073709551615",
    ]);
    assert!(ok, "{err}");
    assert!(out.contains("binary: team|18446744073709551615\n"), "{out}");
    // Errors: one line naming what is wrong and where.
    let bad = dir.path().join("bad.toml");
    std::fs::write(
        &bad,
        "[tables.t]\nkey = [\n  { int = \"a\" },\n  { int = \"b\", bytes = 12 },\n]\n",
    )
    .unwrap();
    let b = bad.to_str().unwrap();
    let cases: [(Vec<&str>, String); 5] = [
        (
            vec!["keys", "encode", "t", "--design", b, "a=1", "b=2"],
            format!("{b}:4:24: tables.t.key[2].bytes: an int is 1 to 8 bytes, got 12"),
        ),
        (
            vec!["keys", "encode", "nope", "--design", d, "a=1"],
            format!("{d}: no table \"nope\" in the design (tables: messages, index)"),
        ),
        (
            vec!["keys", "encode", "index", "--design", d, "a=1"],
            format!("{d}: table index holds several kinds of rows: name one (index.by_conversation, index.by_user)"),
        ),
        (
            vec!["keys", "decode", "messages", "--design", d, "00"],
            "messages keys are 21 bytes, got 1".to_string(),
        ),
        (
            vec![
                "keys",
                "encode",
                "messages",
                "--design",
                d,
                "user=-1",
                "conversation=abcd",
                "sent=1",
            ],
            "user: -1 is out of range (0 to 18446744073709551615)".to_string(),
        ),
    ];
    for (args, expected) in cases {
        let (ok, out, err) = tallrow(&args);
        assert!(!ok && out.is_empty(), "{args:?}: {out}");
        assert_eq!(err.trim_end().lines().count(), 1, "{args:?}: {err:?}");
        assert!(err.contains(&expected), "{args:?}: {err:?} lacks {expected:?}");
    }
}
