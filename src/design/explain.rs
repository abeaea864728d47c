//! `tallrow design explain`: a workload's tables as its design lays them out, shown on rows
//! the generator makes for it: keys read segment by segment, key and row sizes, rows per
//! region, and keys that send every new write to one end of a table.

use super::key::{Form, Key, Owned, SaltSize, Segment};
use super::{Design, Rows};
use crate::generate::{Generator, Scratch, Table};
use crate::keys::{Order, to_string_binary};
use crate::report::thousands;
use crate::schema;
use crate::store::RowMutation;
use std::fmt::Write;

/// Users whose rows are shown and counted, evenly spaced over the workload's.
pub const SAMPLE_USERS: u64 = 2048;

/// The explanation of `design`'s tables, as `g`'s workload fills them: `examples` rows of
/// each, and rows per region where the tables are split into `regions`.
pub fn explain(g: &Generator, design: &Design, regions: usize, examples: usize) -> schema::Result<String> {
    let w = g.workload();
    let users = w.data.users;
    let n = users.min(SAMPLE_USERS);
    let mut sample: Vec<(Table, RowMutation)> = Vec::new();
    let mut scratch = Scratch::default();
    for i in 0..n {
        g.emit_user_described(1 + i * users / n, &mut scratch, &mut sample)?;
    }
    let scale = users as f64 / n as f64;
    let splits = crate::regions::split_points(g, regions)?;
    let mut o = String::new();
    let _ = writeln!(
        o,
        "{}: {} users; the rows of {} of them, evenly spaced, counted and scaled by {:.2}",
        w.name,
        thousands(users),
        thousands(n),
        scale
    );
    for t in g.written_tables() {
        let table = &design.tables[t.index()];
        let rows: Vec<&RowMutation> = sample.iter().filter(|(x, _)| *x == t).map(|(_, r)| r).collect();
        let _ = writeln!(
            o,
            "\n{} (tables.{}), families {}",
            table.name,
            table.id,
            table.families.join(", ")
        );
        for r in &table.rows {
            let kind = if table.rows.len() > 1 {
                format!(" ({})", r.name)
            } else {
                String::new()
            };
            let _ = writeln!(o, "  key{kind}: {}", layout(&r.key));
            if let Some(warning) = one_end(r) {
                let _ = writeln!(o, "  warning: {warning}");
            }
        }
        let mut keys: Vec<&[u8]> = rows.iter().map(|r| r.row.as_slice()).collect();
        keys.sort_unstable();
        keys.dedup();
        let sizes: Vec<(u64, u64)> = rows.iter().map(|r| r.size()).collect();
        let cells: u64 = sizes.iter().map(|s| s.0).sum();
        let bytes: u64 = sizes.iter().map(|s| s.1).sum();
        let est = |v: u64| thousands((v as f64 * scale).round() as u64);
        let _ = writeln!(
            o,
            "  about {} rows, {} cells, {} bytes",
            est(keys.len() as u64),
            est(cells),
            est(bytes)
        );
        let mut key_len: Vec<u64> = keys.iter().map(|k| k.len() as u64).collect();
        let mut row_len: Vec<u64> = sizes.iter().map(|s| s.1).collect();
        let _ = writeln!(
            o,
            "  key bytes: {}; row bytes written at once: {}",
            spread(&mut key_len),
            spread(&mut row_len)
        );
        if let Some((_, points)) = splits.iter().find(|(x, _)| *x == t)
            && !points.is_empty()
        {
            let mut per = vec![0u64; points.len() + 1];
            for k in &keys {
                per[points.partition_point(|p| p.as_slice() <= *k)] += 1;
            }
            let busiest = per.iter().max().copied().unwrap_or(0);
            let total: u64 = per.iter().sum();
            let mut scaled: Vec<u64> = per.iter().map(|&c| (c as f64 * scale).round() as u64).collect();
            let _ = writeln!(
                o,
                "  rows per region ({} regions): {}; the fullest holds {:.0}%",
                per.len(),
                spread(&mut scaled),
                100.0 * busiest as f64 / total.max(1) as f64
            );
            let at: Vec<String> = points.iter().map(|p| to_string_binary(p)).collect();
            let _ = writeln!(o, "  split at: {}", at.join(" · "));
        }
        for key in keys.iter().take(examples) {
            let _ = writeln!(o, "  row {} ({})", crate::keys::hex(key), to_string_binary(key));
            match read(table.rows.as_slice(), key) {
                Some(lines) => {
                    for line in lines {
                        let _ = writeln!(o, "    {line}");
                    }
                }
                None => {
                    let _ = writeln!(o, "    (no kind of rows of the table reads this key)");
                }
            }
        }
    }
    operations(&mut o, design, &w.run.mix);
    Ok(o)
}

/// The design's operations, each with what it reads or writes and its share of the run's
/// mix.
fn operations(o: &mut String, design: &Design, mix: &[(crate::workload::Op, f64)]) {
    use super::ops::{Deliver, Does};
    if design.operations.is_empty() {
        return;
    }
    let total: f64 = mix.iter().map(|(_, w)| w).sum();
    let table = |t: &super::ops::Target| {
        let table = &design.tables[t.table];
        match table.rows.get(t.rows) {
            Some(r) if table.rows.len() > 1 => format!("{} ({})", table.name, r.name),
            _ => table.name.clone(),
        }
    };
    let page = |p: &super::ops::Page| {
        let mut s = format!(
            "{} row{} of {} sharing the key's first {} segment{}",
            p.rows,
            if p.rows == 1 { "" } else { "s" },
            table(&p.target),
            p.prefix,
            if p.prefix == 1 { "" } else { "s" }
        );
        if let Some((_, buckets)) = p.spread {
            s.push_str(&format!(", over its {buckets} salt buckets"));
        }
        s.push_str(if p.offset {
            ", deeper pages by offset"
        } else {
            ", resumed from a cursor"
        });
        s
    };
    let feeds = |e: super::entity::Entity, into: &str| {
        let names: Vec<String> = design
            .tables
            .iter()
            .filter(|t| t.rows.iter().any(|r| r.entity == Some(e)))
            .map(|t| t.name.clone())
            .collect();
        format!("a {} ({into} {})", e.name(), names.join(", "))
    };
    let _ = writeln!(o, "\noperations (share of [run.mix])");
    for (i, op) in design.operations.iter().enumerate() {
        let does = match &op.does {
            Does::Get(t) => format!("gets a row of {}", table(t)),
            Does::Page(p) => format!("reads a page: {}", page(p)),
            Does::Range(r) => format!(
                "reads a time range: up to {} within {} s of a stamp, newest first",
                page(&r.page),
                r.span_ms / 1000
            ),
            Does::Cells(c) => format!(
                "reads {} cells of family {} of a row of {}",
                c.rows,
                c.family,
                table(&c.target)
            ),
            Does::Lookup {
                index, family, then, ..
            } => format!(
                "looks up an index: {}, then gets the rows of {} its {family} cells name",
                page(index),
                table(then)
            ),
            Does::Write(e) => format!("writes {}", feeds(*e, "into")),
            Does::Update(e) => format!(
                "updates {}, its old index rows deleted in the same batch",
                feeds(*e, "in")
            ),
            Does::Delete(e) => format!("deletes {}", feeds(*e, "from")),
            Does::Timeline(t) => format!(
                "a home timeline: the first pages ({} rows each) of {} of {}, merged newest first{}{}",
                t.per_source,
                table(&t.page.target),
                match t.sources {
                    super::ops::Sources::Followees => "every followee",
                    super::ops::Sources::Celebrities => "each celebrity followed",
                },
                t.inbox
                    .and_then(|k| design.operations.get(k))
                    .map_or(String::new(), |l| format!(", with the reader's inbox ({})", l.name)),
                if t.later { ", a later page" } else { "" }
            ),
        };
        let deliver = match &op.deliver {
            Some(Deliver::Fanout { list, .. }) => format!("; delivered to each follower {} lists", table(list)),
            Some(Deliver::Backfill { .. }) => "; the followee's newest posts delivered to the new follower".into(),
            Some(Deliver::Recall) => "; the followee's deliveries taken back from the reader's inbox".into(),
            None => String::new(),
        };
        let share = mix
            .iter()
            .find(|(m, _)| {
                matches!(m, crate::workload::Op::Own(own) if usize::from(own.index) == i) || m.name() == op.name
            })
            .map_or("not in the mix".to_string(), |(_, w)| {
                format!("{:.1}%", 100.0 * w / total.max(1e-300))
            });
        let _ = writeln!(o, "  {} ({share}): {does}{deliver}", op.name);
    }
}

/// `min`, median and `max` (and p99 where there are 100 or more), sorting `v`.
fn spread(v: &mut [u64]) -> String {
    if v.is_empty() {
        return "none".into();
    }
    v.sort_unstable();
    let at = |q: f64| v[((v.len() - 1) as f64 * q).round() as usize];
    let p99 = if v.len() >= 100 {
        format!(", p99 {}", thousands(at(0.99)))
    } else {
        String::new()
    };
    format!(
        "min {}, median {}{p99}, max {}",
        thousands(v[0]),
        thousands(at(0.5)),
        thousands(v[v.len() - 1])
    )
}

/// A key's segments in words, in key order.
pub fn layout(key: &Key) -> String {
    key.segments
        .iter()
        .map(|s| segment(key, s))
        .collect::<Vec<_>>()
        .join(" · ")
}

/// One segment in words.
fn segment(key: &Key, s: &Segment) -> String {
    let name = |f: usize| key.fields[f].name.as_str();
    let digits = |f: &Form| if *f == Form::Digits { "digits" } else { "bytes" };
    match s {
        Segment::Salt {
            field,
            size,
            form,
            separator,
        } => {
            let sep = if separator.is_empty() {
                String::new()
            } else {
                format!(" then {:?}", to_string_binary(separator))
            };
            match size {
                SaltSize::Off => format!("no salt (of {})", name(*field)),
                SaltSize::Hash => format!("hash({}) as {}{sep}", name(*field), digits(form)),
                SaltSize::Buckets(n) => format!("hash({}) mod {n} as {}{sep}", name(*field), digits(form)),
            }
        }
        Segment::Int { field, bytes } => format!("int {}, {bytes} bytes", name(*field)),
        Segment::Stamp { field, order, form } => format!(
            "stamp {}{}, {}",
            name(*field),
            if *order == Order::Reverse {
                " reversed (Long.MAX_VALUE minus it)"
            } else {
                ""
            },
            if *form == Form::Digits { "19 digits" } else { "8 bytes" }
        ),
        Segment::Decimal { field, width: Some(w) } => format!("decimal {}, {w} digits", name(*field)),
        Segment::Decimal { field, width: None } => format!("decimal {}, as long as it is", name(*field)),
        Segment::Text { field, width: Some(w) } => format!("text {}, {w} bytes", name(*field)),
        Segment::Text { field, width: None } => format!("text {}, as long as it is", name(*field)),
        Segment::Counted { field, length } => format!("text {} after its {length}-byte length", name(*field)),
        Segment::Literal(b) => format!("{:?}", to_string_binary(b)),
    }
}

/// Why a kind of rows sends every new write to one end of its table, when its key begins
/// (salt, literals aside) with time: a stamp, or a field its cells are stamped with.
pub fn one_end(rows: &Rows) -> Option<String> {
    let key = &rows.key;
    let first = key.segments.iter().find(|s| match s {
        Segment::Literal(_) => false,
        Segment::Salt { size, .. } => *size != SaltSize::Off,
        _ => true,
    })?;
    let (field, reverse) = match first {
        Segment::Stamp { field, order, .. } => (*field, *order == Order::Reverse),
        Segment::Int { field, .. } | Segment::Decimal { field, .. } => {
            let name = &key.fields[*field].name;
            let entity = rows.entity?;
            let f = entity.field(name)?;
            rows.cells.iter().find(|c| c.timestamp == Some(f))?;
            (*field, false)
        }
        _ => return None,
    };
    let name = &key.fields[field].name;
    Some(if reverse {
        format!(
            "keys begin with {name} reversed: every new row sorts before the rest, so all new writes go to the table's first region (put a salt or an id before it)"
        )
    } else {
        format!(
            "keys begin with {name}: every new row sorts after the rest, so all new writes go to the table's last region (put a salt or an id before it)"
        )
    })
}

/// A key read segment by segment by the first kind of rows whose key reads it.
fn read(kinds: &[Rows], bytes: &[u8]) -> Option<Vec<String>> {
    kinds.iter().find_map(|r| {
        let spans = r.key.spans(bytes).ok()?;
        let values = r.key.decode(bytes).ok()?;
        let value = |f: usize| -> String {
            let name = r.key.fields[f].name.as_str();
            match values.iter().find(|(n, _)| *n == name) {
                Some((_, Owned::Bytes(b))) if b.len() > 40 => {
                    format!("{name} = {}…", to_string_binary(&b[..40]))
                }
                Some((_, v)) => format!("{name} = {v}"),
                None => String::new(),
            }
        };
        let kind = if kinds.len() > 1 {
            format!(" ({})", r.name)
        } else {
            String::new()
        };
        let mut lines = Vec::new();
        for (i, (s, span)) in r.key.segments.iter().zip(spans).enumerate() {
            if span.is_empty() {
                continue;
            }
            let shown = match s {
                Segment::Literal(_) => String::new(),
                Segment::Salt { field, .. } => format!("the salt of {}", r.key.fields[*field].name),
                s => s.field().map(value).unwrap_or_default(),
            };
            lines.push(format!(
                "[{}]{kind} {:<28} {}",
                i + 1,
                to_string_binary(&bytes[span]),
                shown
            ));
        }
        Some(lines)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn warning(key: &str, timestamp: &str) -> Option<String> {
        let d = Design::parse(&format!(
            r#"
            [tables.t]
            families = ["f"]
            entity = "post"
            key = {key}
            cells = [{{ family = "f", qualifier = "q", value = "v", timestamp = "{timestamp}" }}]
            "#
        ))
        .unwrap();
        one_end(&d.tables[0].rows[0])
    }

    #[test]
    fn keys_led_by_time_send_new_writes_to_one_end() {
        let last = warning(r#"[{ stamp = "stamp", order = "forward" }, { int = "uid" }]"#, "stamp").unwrap();
        assert!(
            last.contains("begin with stamp") && last.contains("last region"),
            "{last}"
        );
        let first = warning(r#"[{ literal = "p" }, { stamp = "stamp" }, { int = "uid" }]"#, "stamp").unwrap();
        assert!(first.contains("first region"), "{first}");
        // A decimal of the field the cells are stamped with is time too; of another, not.
        assert!(
            warning(r#"[{ decimal = "stamp" }]"#, "stamp")
                .unwrap()
                .contains("last region")
        );
        assert_eq!(warning(r#"[{ decimal = "stamp" }]"#, "uid"), None);
        // A salt or an id first spreads them.
        assert_eq!(
            warning(
                r#"[{ salt = "uid", buckets = 8 }, { stamp = "stamp" }, { int = "uid" }]"#,
                "stamp"
            ),
            None
        );
        assert_eq!(
            warning(r#"[{ int = "uid" }, { stamp = "stamp", order = "forward" }]"#, "stamp"),
            None
        );
        // A salt that is off does not.
        let off = warning(
            r#"[{ salt = "uid", off = true }, { stamp = "stamp", order = "forward" }, { int = "uid" }]"#,
            "stamp",
        );
        assert!(off.unwrap().contains("last region"));
    }

    #[test]
    fn a_key_is_read_segment_by_segment() {
        let d = Design::parse(
            r#"
            [tables.t]
            key = [{ salt = "uid", buckets = 16 }, { decimal = "uid" }, { literal = "_" }, { text = "name", length = 1 }, { stamp = "at", order = "forward" }]
            "#,
        )
        .unwrap();
        let rows = &d.tables[0].rows;
        let key = rows[0]
            .key
            .encode(&[
                crate::design::key::Value::Int(42),
                crate::design::key::Value::Bytes(b"ab"),
                crate::design::key::Value::Int(7),
            ])
            .unwrap();
        let lines = read(rows, &key).unwrap();
        let salt = format!("{:02x}", crate::keys::seed_hash(42) as u32 % 16);
        assert_eq!(lines.len(), 5, "{lines:?}");
        assert!(
            lines[0].starts_with(&format!("[1] \\x{}", salt.to_uppercase())) && lines[0].ends_with("the salt of uid"),
            "{lines:?}"
        );
        assert!(
            lines[1].starts_with("[2] 42 ") && lines[1].ends_with("uid = 42"),
            "{lines:?}"
        );
        assert!(lines[2].starts_with("[3] _"), "{lines:?}");
        assert!(
            lines[3].starts_with("[4] \\x02ab") && lines[3].ends_with("name = ab"),
            "{lines:?}"
        );
        assert!(lines[4].ends_with("at = 7"), "{lines:?}");
        assert_eq!(
            layout(&rows[0].key),
            "hash(uid) mod 16 as bytes · decimal uid, as long as it is · \"_\" · text name after its 1-byte length · stamp at, 8 bytes"
        );
    }
}
