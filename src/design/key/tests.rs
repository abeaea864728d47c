use super::*;
use crate::design::seeds;
use crate::keys::{KeyOptions, Layout, hex};
use proptest::prelude::*;

fn options() -> impl Strategy<Value = KeyOptions> {
    let order = prop_oneof![Just(Order::Reverse), Just(Order::Forward)];
    let salt = prop_oneof![Just(Salt::None), Just(Salt::Hash), (1u16..=256).prop_map(Salt::Buckets),];
    (order, salt).prop_map(|(order, salt)| KeyOptions { order, salt })
}

/// A value of each of the layout's fields: mostly anywhere in its range, sometimes at an edge.
fn values(layout: Layout) -> impl Strategy<Value = Vec<i128>> {
    let fields = layout.fields();
    let each: Vec<_> = fields
        .iter()
        .map(|f| {
            let (lo, hi) = (f.min, f.max);
            prop_oneof![
                3 => any::<u64>().prop_map(move |r| lo + (i128::from(r) % (hi - lo + 1))),
                1 => prop::sample::select(vec![lo, hi, 0.max(lo), 1.max(lo).min(hi), 9, 10, 99, 100]),
            ]
        })
        .collect();
    each
}

fn seed_layout() -> impl Strategy<Value = Layout> {
    prop::sample::select(Layout::ALL.to_vec())
}

#[test]
fn each_seed_descriptions_fields_are_the_layouts_in_its_order() {
    for layout in Layout::ALL {
        let k = seeds::key(layout, layout.seed_options());
        let names: Vec<&str> = k.fields.iter().map(|f| f.name.as_str()).collect();
        let theirs: Vec<&str> = layout.fields().iter().map(|f| f.name).collect();
        assert_eq!(names, theirs, "{}", layout.name());
        for (f, t) in k.fields.iter().zip(layout.fields()) {
            assert_eq!(
                f.kind,
                Kind::Int { min: t.min, max: t.max },
                "{}.{}",
                layout.name(),
                f.name
            );
        }
    }
}

#[test]
fn the_seed_descriptions_write_the_documented_bytes() {
    let cases: [(Layout, &[i128], &str); 5] = [
        (
            Layout::Actions,
            &[1, 1_600_000_000_000, 7],
            "000000017ffffe8b78917fff00000007",
        ),
        // "1001_" and MAX - stamp in 19 digits.
        (
            Layout::WeiboContent,
            &[1001, 1_600_000_000_000],
            "313030315f39323233333730343336383534373735383037",
        ),
        (
            Layout::Blog,
            &[5, 1_600_000_000_000, 42],
            "000000050000000000000005007ffffe8b78917fff000000000000002a",
        ),
        (
            Layout::BlogIndex,
            &[5, 3, 1_600_000_000_000, 42],
            "00000005000000000000000501000000037ffffe8b78917fff000000000000002a",
        ),
        // "352_9223370636197090350_81".
        (
            Layout::Series,
            &[352, 1_400_657_685_457, 81],
            "3335325f393232333337303633363139373039303335305f3831",
        ),
    ];
    for (layout, v, want) in cases {
        let values: Vec<Value> = v.iter().map(|&x| Value::Int(x)).collect();
        let ours = seeds::key(layout, layout.seed_options()).encode(&values).unwrap();
        let names: Vec<String> = v.iter().map(|x| x.to_string()).collect();
        let pairs: Vec<(&str, &str)> = layout
            .fields()
            .iter()
            .map(|f| f.name)
            .zip(names.iter().map(String::as_str))
            .collect();
        let theirs = layout.encode(layout.seed_options(), &pairs).unwrap();
        assert_eq!(hex(&theirs), want, "{}: the hand-written codec", layout.name());
        assert_eq!(hex(&ours), want, "{}: the description", layout.name());
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    /// The descriptions against the hand-written codecs, which they replace: the same bytes
    /// for every value and key variant, the same refusals, the same values read back.
    #[test]
    fn the_seed_descriptions_encode_and_decode_as_the_hand_written_codecs(
        (layout, v) in seed_layout().prop_flat_map(|l| (Just(l), values(l))),
        opts in options(),
    ) {
        let ours = seeds::key(layout, opts);
        let values: Vec<Value> = v.iter().map(|&x| Value::Int(x)).collect();
        let texts: Vec<String> = v.iter().map(|x| x.to_string()).collect();
        let pairs: Vec<(&str, &str)> = layout.fields().iter().map(|f| f.name).zip(texts.iter().map(String::as_str)).collect();
        let theirs = layout.encode(opts, &pairs);
        let mine = ours.encode(&values);
        match (&theirs, &mine) {
            (Ok(t), Ok(m)) => prop_assert_eq!(hex(t), hex(m)),
            (Err(t), Err(m)) => prop_assert_eq!(t.to_string(), m.to_string()),
            _ => prop_assert!(false, "{}: {:?} against {:?}", layout.name(), theirs, mine),
        }
        if let Ok(key) = theirs {
            let back: Vec<(String, String)> = ours.decode(&key).unwrap().into_iter().map(|(n, v)| (n.to_string(), v.to_string())).collect();
            let want: Vec<(String, String)> = layout.decode(opts, &key).unwrap().into_iter().map(|(n, v)| (n.to_string(), v)).collect();
            prop_assert_eq!(back, want);
        }
    }

    /// Any bytes, and a key with a byte changed, cut short or grown: the description reads
    /// what the codec reads, and refuses what it refuses.
    #[test]
    fn the_seed_descriptions_refuse_what_the_codecs_refuse(
        (layout, v) in seed_layout().prop_flat_map(|l| (Just(l), values(l))),
        opts in options(),
        change in (any::<prop::sample::Index>(), any::<u8>(), 0u8..4),
        noise in prop::collection::vec(any::<u8>(), 0..40),
    ) {
        let texts: Vec<String> = v.iter().map(|x| x.to_string()).collect();
        let pairs: Vec<(&str, &str)> = layout.fields().iter().map(|f| f.name).zip(texts.iter().map(String::as_str)).collect();
        let Ok(mut key) = layout.encode(opts, &pairs) else { return Ok(()) };
        let (at, byte, how) = change;
        match how {
            0 => { let i = at.index(key.len()); key[i] = byte; }
            1 => key.truncate(at.index(key.len())),
            2 => key.push(byte),
            _ => key = noise,
        }
        let ours = seeds::key(layout, opts);
        let mine = ours.decode(&key).map(|v| v.into_iter().map(|(n, v)| (n.to_string(), v.to_string())).collect::<Vec<_>>());
        let theirs = layout.decode(opts, &key).map(|v| v.into_iter().map(|(n, v)| (n.to_string(), v)).collect::<Vec<_>>());
        match (&theirs, &mine) {
            (Ok(t), Ok(m)) => prop_assert_eq!(t, m),
            (Err(_), Err(_)) => {}
            _ => prop_assert!(false, "{} {}: codec {:?}, description {:?}", layout.name(), hex(&key), theirs, mine),
        }
    }
}

fn key(src: &str) -> Key {
    Key::parse("k", &format!("key = [{src}]")).unwrap_or_else(|(at, why)| panic!("{at}: {why}"))
}

#[test]
fn every_kind_of_segment_writes_its_stated_bytes_and_reads_them_back() {
    let k = key(
        r##"{ salt = "id", buckets = 1000 }, { int = "id", bytes = 3, signed = false },
           { int = "delta", bytes = 2 }, { decimal = "seq", width = 6 }, { literal = "#" },
           { text = "kind", width = 2 }, { text = "name" }, { literal = "|" }, { stamp = "at", order = "forward" }"##,
    );
    let names: Vec<&str> = k.fields.iter().map(|f| f.name.as_str()).collect();
    assert_eq!(names, ["id", "delta", "seq", "kind", "name", "at"]);
    let v = [
        Value::Int(0x0a0b0c),
        Value::Int(-2),
        Value::Int(42),
        Value::Bytes(b"ms"),
        Value::Bytes(b"ann"),
        Value::Int(1),
    ];
    let row = k.encode(&v).unwrap();
    // hash(0x0a0b0c) mod 1000 in 2 bytes (over 256 buckets), the id in 3, -2 in 2, six digits.
    let salt = (crate::keys::seed_hash(0x0a0b0c) as u32 % 1000) as u16;
    let mut want = salt.to_be_bytes().to_vec();
    want.extend_from_slice(&[0x0a, 0x0b, 0x0c, 0xff, 0xfe]);
    want.extend_from_slice(b"000042#msann|");
    want.extend_from_slice(&1i64.to_be_bytes());
    assert_eq!(hex(&row), hex(&want));
    let back: Vec<Owned> = k.decode(&row).unwrap().into_iter().map(|(_, v)| v).collect();
    assert_eq!(back, v.iter().map(|v| v.owned()).collect::<Vec<_>>());
    // Digits: the whole hash as 8 hex digits, and buckets zero-padded to the width of n - 1.
    let k = key(r#"{ salt = "u", form = "digits", separator = "-" }, { decimal = "u" }"#);
    let h = crate::keys::seed_hash(77) as u32;
    assert_eq!(k.encode(&[Value::Int(77)]).unwrap(), format!("{h:08x}-77").into_bytes());
    let k = key(r#"{ salt = "u", buckets = 100, form = "digits" }, { decimal = "u", type = "i32" }"#);
    assert_eq!(
        k.encode(&[Value::Int(-3)]).unwrap(),
        format!("{:02}-3", crate::keys::seed_hash(-3) as u32 % 100).into_bytes()
    );
}

#[test]
fn values_a_segment_cannot_write_are_refused_naming_the_field() {
    let k = key(
        r#"{ int = "a", bytes = 1, signed = false }, { decimal = "b", width = 3 }, { text = "c", width = 2 }, { text = "d" }, { literal = "/" }"#,
    );
    let enc = |v: &[Value]| k.encode(v).unwrap_err().to_string();
    let ok = [
        Value::Int(255),
        Value::Int(999),
        Value::Bytes(b"xy"),
        Value::Bytes(b"z"),
    ];
    assert!(k.encode(&ok).is_ok());
    let mut v = ok;
    v[0] = Value::Int(256);
    assert_eq!(enc(&v), "a: 256 is out of range (0 to 255)");
    let mut v = ok;
    v[1] = Value::Int(1000);
    assert_eq!(enc(&v), "b: 1000 is out of range (0 to 999)");
    let mut v = ok;
    v[2] = Value::Bytes(b"xyz");
    assert_eq!(enc(&v), "c: \"xyz\" is out of range (exactly 2 bytes)");
    let mut v = ok;
    v[3] = Value::Bytes(b"a/b");
    assert_eq!(
        enc(&v),
        "d: \"a/b\" is out of range (bytes without \"/\", which ends it)"
    );
    assert_eq!(
        k.decode(b"\x01007xyab").unwrap_err().to_string(),
        "k: missing the \"/\" after the d"
    );
    assert_eq!(
        k.decode(b"\x01007xyab/!").unwrap_err().to_string(),
        "k: 1 bytes after the key's last field"
    );
    assert_eq!(
        k.decode(b"\x010a7xyab/").unwrap_err().to_string(),
        "k: b \"0a7\" is not a decimal number"
    );
}

#[test]
fn a_workloads_key_options_turn_a_salt_on_and_set_the_stamps_order() {
    let k = key(r#"{ salt = "u", off = true }, { int = "u", bytes = 4 }, { stamp = "t" }"#);
    assert_eq!(k.fixed_len(), Some(12));
    let v = [Value::Int(9), Value::Int(0)];
    let on = k.with_options(Some(Order::Forward), Some(Salt::Buckets(16)));
    let row = on.encode(&v).unwrap();
    let bucket = crate::keys::seed_hash(9) as u32 % 16;
    assert_eq!(hex(&row), format!("{bucket:02x}000000090000000000000000"));
    assert_eq!(on.fixed_len(), Some(13));
    assert_eq!(on.decode(&row).unwrap()[1].1, Owned::Int(0));
    let mut wrong = row.clone();
    wrong[0] ^= 1;
    assert!(
        on.decode(&wrong)
            .unwrap_err()
            .to_string()
            .contains("does not match the u 9")
    );
}

/// Each malformed key names the segment (from 1) and field at fault.
#[test]
fn malformed_keys_name_the_segment_and_field_at_fault() {
    let cases: &[(&str, &str, &str)] = &[
        ("", "key", "at least one segment"),
        ("{ bytes = 4 }", "key[1]", "names one of salt, int"),
        (r#"{ int = "a", text = "b" }"#, "key[1].text", "int or text, not both"),
        (
            r#"{ int = "a", width = 4 }"#,
            "key[1].width",
            "an int segment takes bytes, signed",
        ),
        (r#"{ literal = "x", bytes = 1 }"#, "key[1].bytes", "takes nothing else"),
        (r#"{ int = "a", bytes = 9 }"#, "key[1].bytes", "1 to 8 bytes, got 9"),
        (r#"{ int = "a", bytes = 0 }"#, "key[1].bytes", "1 to 8 bytes, got 0"),
        (r#"{ int = "A" }"#, "key[1].int", "lowercase letters"),
        (r#"{ int = "" }"#, "key[1].int", "lowercase letters"),
        (
            r#"{ int = "a" }, { int = "a" }"#,
            "key[2].int",
            "already written by segment 1",
        ),
        (
            r#"{ salt = "a", buckets = 0 }, { int = "a" }"#,
            "key[1].buckets",
            "1 to 65536 buckets, got 0",
        ),
        (
            r#"{ salt = "a", buckets = 70000 }, { int = "a" }"#,
            "key[1].buckets",
            "got 70000",
        ),
        (
            r#"{ salt = "a", off = true, buckets = 4 }, { int = "a" }"#,
            "key[1].buckets",
            "off has no buckets",
        ),
        (
            r#"{ salt = "a", hash = "md5" }, { int = "a" }"#,
            "key[1].hash",
            "not a hash",
        ),
        (
            r#"{ salt = "a" }, { int = "b" }"#,
            "key[1].salt",
            "no segment writes it",
        ),
        (
            r#"{ salt = "a" }, { text = "a" }"#,
            "key[1].salt",
            "a salt hashes an integer field",
        ),
        (
            r#"{ salt = "a", form = "base64" }, { int = "a" }"#,
            "key[1].form",
            "not a form",
        ),
        (r#"{ stamp = "t", order = "newest" }"#, "key[1].order", "not an order"),
        (r#"{ decimal = "d", type = "i128" }"#, "key[1].type", "not a type"),
        (r#"{ decimal = "d", width = 21 }"#, "key[1].width", "1 to 20 digits"),
        (
            r#"{ decimal = "d", width = 2, max = 100 }"#,
            "key[1].max",
            "outside what the segment can write (0 to 99)",
        ),
        (r#"{ decimal = "d", type = "u8", min = -1 }"#, "key[1].min", "outside"),
        (r#"{ decimal = "d", min = 5, max = 4 }"#, "key[1].min", "above max"),
        (r#"{ text = "s", width = 0 }"#, "key[1].width", "1 to 32767 bytes"),
        (
            r#"{ text = "s" }, { int = "n" }"#,
            "key[1].width",
            "followed by a literal",
        ),
        (
            r#"{ decimal = "d" }, { literal = "7" }"#,
            "key[2]",
            "cannot start with '7'",
        ),
        (
            r#"{ decimal = "d" }, { literal = "-" }"#,
            "key[2]",
            "cannot start with '-'",
        ),
        (r#"{ literal = "" }"#, "key[1].literal", "at least one byte"),
        (r#"{ hex = "0g" }"#, "key[1].hex", "not hex"),
        (r#"{ hex = "012" }"#, "key[1].hex", "odd number"),
        (
            r#"{ text = "a", width = 32767 }, { int = "b" }"#,
            "key",
            "HBase's rows are at most 32767",
        ),
        (r#"{ int = "a", colour = "red" }"#, "key", "unknown field `colour`"),
    ];
    for (segments, at, why) in cases {
        let (path, message) = Key::parse("k", &format!("key = [{segments}]")).unwrap_err();
        assert_eq!(&path, at, "{segments}: {message}");
        assert!(message.contains(why), "{segments}: {message}");
    }
}
