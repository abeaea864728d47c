//! Table designs as data: a design's row keys declared as segments ([`key`]), parsed from
//! TOML with every error naming the dotted path of the field at fault, and the seed designs'
//! keys as the first descriptions ([`seeds`]).

pub mod key;
pub mod seeds;

use crate::workload::Error;
use crate::workload::locate;
use key::{Field, Form, Key, Kind, Owned, SaltSize, Segment};
use serde::Deserialize;
use std::path::Path;

/// An error: the dotted path of the field at fault, and what is wrong with it.
pub type Invalid = (String, String);

/// HBase's longest row key (`HConstants.MAX_ROW_LENGTH`, `Short.MAX_VALUE`).
pub const MAX_ROW_LENGTH: usize = 32_767;

/// One segment as written: exactly one of its kinds names its field (or its bytes).
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawSegment {
    salt: Option<String>,
    int: Option<String>,
    stamp: Option<String>,
    decimal: Option<String>,
    text: Option<String>,
    literal: Option<String>,
    hex: Option<String>,
    hash: Option<String>,
    buckets: Option<i64>,
    off: Option<bool>,
    form: Option<String>,
    separator: Option<String>,
    bytes: Option<i64>,
    signed: Option<bool>,
    order: Option<String>,
    width: Option<i64>,
    #[serde(rename = "type")]
    kind: Option<String>,
    min: Option<i64>,
    max: Option<i64>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct KeyOnly {
    key: Vec<RawSegment>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawDesign {
    tables: std::collections::BTreeMap<String, RawTable>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawTable {
    name: Option<String>,
    key: Option<Vec<RawSegment>>,
    rows: Option<std::collections::BTreeMap<String, RawRows>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawRows {
    key: Vec<RawSegment>,
}

/// A design: its tables.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Design {
    /// The tables, by their ids in the file.
    pub tables: Vec<Table>,
}

/// A table of a design: its HBase name and the kinds of rows it holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Table {
    /// Its id in the design (`tables.<id>`).
    pub id: String,
    /// Its name in HBase, namespace included (`weibo:content`).
    pub name: String,
    /// Its kinds of rows, each with its key: one named after the table, or those of `rows`.
    pub rows: Vec<(String, Key)>,
}

impl Design {
    /// A design from its TOML text; an error names the dotted path at fault.
    pub fn parse(src: &str) -> Result<Design, Invalid> {
        let raw: RawDesign = toml::from_str(src).map_err(|e| (String::new(), e.message().trim().replace('\n', " ")))?;
        Design::from_raw(&raw)
    }

    fn from_raw(raw: &RawDesign) -> Result<Design, Invalid> {
        let mut tables = Vec::new();
        for (id, t) in &raw.tables {
            let path = format!("tables.{id}");
            let name = t.name.clone().unwrap_or_else(|| id.clone());
            let rows = match (&t.key, &t.rows) {
                (Some(key), None) => vec![(id.clone(), parse_key(id, &format!("{path}.key"), key)?)],
                (None, Some(rows)) if !rows.is_empty() => rows
                    .iter()
                    .map(|(r, raw)| Ok((r.clone(), parse_key(r, &format!("{path}.rows.{r}.key"), &raw.key)?)))
                    .collect::<Result<_, Invalid>>()?,
                (Some(_), Some(_)) => {
                    return bad(
                        &format!("{path}.rows"),
                        "a table has one key, or rows each with its own, not both",
                    );
                }
                (None, _) => return bad(&path, "a table needs a key, or rows each with its own"),
            };
            tables.push(Table {
                id: id.clone(),
                name,
                rows,
            });
        }
        Ok(Design { tables })
    }

    /// Reads a design file: an error is one line naming the file, line, column and field.
    pub fn from_file(path: &Path) -> Result<Design, Error> {
        let text = Error::read_toml(path)?;
        let src = text.as_str();
        let raw: RawDesign = toml::from_str(src).map_err(|e| {
            let offset = e.span().map_or(0, |s| s.start);
            Error::at(
                path,
                src,
                offset,
                locate::path_at(src, offset),
                e.message().trim().replace('\n', " "),
            )
        })?;
        Design::from_raw(&raw).map_err(|(field, message)| {
            let offset = locate::span_of(src, &field).map_or(0, |s| s.start);
            Error::at(path, src, offset, Some(field), message)
        })
    }

    /// The key a name gives: `TABLE` (a table's one kind of rows) or `TABLE.ROWS`.
    pub fn named_key(&self, name: &str) -> Result<&Key, String> {
        let (table, rows) = name.split_once('.').unwrap_or((name, name));
        let tables = || self.tables.iter().map(|t| t.id.as_str()).collect::<Vec<_>>().join(", ");
        let Some(t) = self.tables.iter().find(|t| t.id == table) else {
            return Err(format!("no table {table:?} in the design (tables: {})", tables()));
        };
        let kinds = || {
            t.rows
                .iter()
                .map(|(r, _)| format!("{table}.{r}"))
                .collect::<Vec<_>>()
                .join(", ")
        };
        if !name.contains('.') {
            return match &t.rows[..] {
                [(_, k)] => Ok(k),
                _ => Err(format!(
                    "table {table} holds several kinds of rows: name one ({})",
                    kinds()
                )),
            };
        }
        t.rows
            .iter()
            .find(|(r, _)| r == rows)
            .map(|(_, k)| k)
            .ok_or_else(|| format!("table {table} has no rows {rows:?} ({})", kinds()))
    }

    /// The key of row kind `rows` of table `table`.
    pub fn key(&self, table: &str, rows: &str) -> Option<&Key> {
        let t = self.tables.iter().find(|t| t.id == table)?;
        t.rows.iter().find(|(r, _)| r == rows).map(|(_, k)| k)
    }
}

fn bad<T>(path: &str, message: impl Into<String>) -> Result<T, Invalid> {
    Err((path.to_string(), message.into()))
}

fn field_name(path: &str, name: &str) -> Result<String, Invalid> {
    let ok = name.len() <= 64
        && name.starts_with(|c: char| c.is_ascii_lowercase() || c == '_')
        && name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_');
    if !ok {
        return bad(
            path,
            format!("field name {name:?} must be lowercase letters, digits and '_', starting with a letter or '_'"),
        );
    }
    Ok(name.to_string())
}

/// The range of an integer type by name.
fn int_type(path: &str, name: &str) -> Result<(i128, i128), Invalid> {
    Ok(match name {
        "i8" => (i8::MIN.into(), i8::MAX.into()),
        "i16" => (i16::MIN.into(), i16::MAX.into()),
        "i32" => (i32::MIN.into(), i32::MAX.into()),
        "i64" => (i64::MIN.into(), i64::MAX.into()),
        "u8" => (0, u8::MAX.into()),
        "u16" => (0, u16::MAX.into()),
        "u32" => (0, u32::MAX.into()),
        "u64" => (0, u64::MAX.into()),
        _ => {
            return bad(
                path,
                format!("{name:?} is not a type (i8, i16, i32, i64, u8, u16, u32, u64)"),
            );
        }
    })
}

fn form(path: &str, v: Option<&str>) -> Result<Form, Invalid> {
    match v {
        None | Some("bytes") => Ok(Form::Bytes),
        Some("digits") => Ok(Form::Digits),
        Some(o) => bad(path, format!("{o:?} is not a form (bytes, digits)")),
    }
}

/// What each kind of segment takes besides its own name.
const ATTRIBUTES: [(&str, &[&str]); 7] = [
    ("salt", &["hash", "buckets", "off", "form", "separator"]),
    ("int", &["bytes", "signed"]),
    ("stamp", &["order", "form"]),
    ("decimal", &["width", "type", "min", "max"]),
    ("text", &["width"]),
    ("literal", &[]),
    ("hex", &[]),
];

impl RawSegment {
    /// The kinds named, and the attributes given.
    fn named(&self) -> (Vec<&'static str>, Vec<&'static str>) {
        let kinds = [
            ("salt", self.salt.is_some()),
            ("int", self.int.is_some()),
            ("stamp", self.stamp.is_some()),
            ("decimal", self.decimal.is_some()),
            ("text", self.text.is_some()),
            ("literal", self.literal.is_some()),
            ("hex", self.hex.is_some()),
        ];
        let attributes = [
            ("hash", self.hash.is_some()),
            ("buckets", self.buckets.is_some()),
            ("off", self.off.is_some()),
            ("form", self.form.is_some()),
            ("separator", self.separator.is_some()),
            ("bytes", self.bytes.is_some()),
            ("signed", self.signed.is_some()),
            ("order", self.order.is_some()),
            ("width", self.width.is_some()),
            ("type", self.kind.is_some()),
            ("min", self.min.is_some()),
            ("max", self.max.is_some()),
        ];
        let pick = |v: &[(&'static str, bool)]| v.iter().filter(|(_, on)| *on).map(|(n, _)| *n).collect();
        (pick(&kinds), pick(&attributes))
    }
}

/// A key from its segments as written; `path` is where they are (`tables.inbox.key`), and
/// errors name `path[N].field`, N from 1.
pub fn parse_key(name: &str, path: &str, raw: &[RawSegment]) -> Result<Key, Invalid> {
    if raw.is_empty() {
        return bad(path, "a key needs at least one segment");
    }
    let mut fields: Vec<Field> = Vec::new();
    // The segment that writes each field (salts aside), for the error naming a second one.
    let mut written: Vec<Option<usize>> = Vec::new();
    let mut segments = Vec::new();
    let mut salted: Vec<(usize, usize)> = Vec::new();
    for (i, r) in raw.iter().enumerate() {
        let at = format!("{path}[{}]", i + 1);
        let (kinds, attributes) = r.named();
        let kind = match kinds[..] {
            [k] => k,
            [] => {
                return bad(
                    &at,
                    "a segment names one of salt, int, stamp, decimal, text (with its field), literal or hex",
                );
            }
            [a, b, ..] => {
                return bad(
                    &format!("{at}.{b}"),
                    format!("a segment is one thing: {a} or {b}, not both"),
                );
            }
        };
        let allowed = ATTRIBUTES
            .iter()
            .find(|(k, _)| *k == kind)
            .expect("every kind listed")
            .1;
        if let Some(a) = attributes.iter().find(|a| !allowed.contains(a)) {
            let takes = if allowed.is_empty() {
                "nothing else".to_string()
            } else {
                allowed.join(", ")
            };
            let article = if kind == "int" { "an" } else { "a" };
            return bad(&format!("{at}.{a}"), format!("{article} {kind} segment takes {takes}"));
        }
        let mut field_of = |name: &str, kind: Option<Kind>, writes: bool| -> Result<usize, Invalid> {
            let n = field_name(&format!("{at}.{}", kinds[0]), name)?;
            let f = match fields.iter().position(|f| f.name == n) {
                Some(f) => f,
                None => {
                    fields.push(Field {
                        name: n,
                        kind: Kind::Bytes,
                    });
                    written.push(None);
                    fields.len() - 1
                }
            };
            if writes {
                if let Some(before) = written[f] {
                    return bad(
                        &format!("{at}.{}", kinds[0]),
                        format!("field {name} is already written by segment {}", before + 1),
                    );
                }
                written[f] = Some(i);
                if let Some(k) = kind {
                    fields[f].kind = k;
                }
            }
            Ok(f)
        };
        let segment = match kind {
            "salt" => {
                let field = field_of(r.salt.as_deref().unwrap_or_default(), None, false)?;
                salted.push((i, field));
                if let Some(h) = &r.hash
                    && h != "seed"
                {
                    return bad(
                        &format!("{at}.hash"),
                        format!("{h:?} is not a hash (seed: seed 002's (int)(v ^ (v >>> 32)))"),
                    );
                }
                let size = match (r.off, r.buckets) {
                    (Some(true), Some(_)) => {
                        return bad(&format!("{at}.buckets"), "a salt that is off has no buckets");
                    }
                    (Some(true), None) => SaltSize::Off,
                    (_, None) => SaltSize::Hash,
                    (_, Some(n)) if (1..=65_536).contains(&n) => SaltSize::Buckets(n as u32),
                    (_, Some(n)) => {
                        return bad(
                            &format!("{at}.buckets"),
                            format!("a salt has 1 to 65536 buckets, got {n}"),
                        );
                    }
                };
                Segment::Salt {
                    field,
                    size,
                    form: form(&format!("{at}.form"), r.form.as_deref())?,
                    separator: r.separator.clone().unwrap_or_default().into_bytes(),
                }
            }
            "int" => {
                let bytes = r.bytes.unwrap_or(8);
                if !(1..=8).contains(&bytes) {
                    return bad(&format!("{at}.bytes"), format!("an int is 1 to 8 bytes, got {bytes}"));
                }
                let bits = 8 * bytes as u32;
                let range = if r.signed.unwrap_or(true) {
                    (-(1i128 << (bits - 1)), (1i128 << (bits - 1)) - 1)
                } else {
                    (0, (1i128 << bits) - 1)
                };
                let field = field_of(
                    r.int.as_deref().unwrap_or_default(),
                    Some(Kind::Int {
                        min: range.0,
                        max: range.1,
                    }),
                    true,
                )?;
                Segment::Int {
                    field,
                    bytes: bytes as u8,
                }
            }
            "stamp" => {
                let order = match r.order.as_deref() {
                    None | Some("reverse") => crate::keys::Order::Reverse,
                    Some("forward") => crate::keys::Order::Forward,
                    Some(o) => {
                        return bad(
                            &format!("{at}.order"),
                            format!("{o:?} is not an order (reverse, forward)"),
                        );
                    }
                };
                let field = field_of(
                    r.stamp.as_deref().unwrap_or_default(),
                    Some(Kind::Int {
                        min: 0,
                        max: i64::MAX.into(),
                    }),
                    true,
                )?;
                Segment::Stamp {
                    field,
                    order,
                    form: form(&format!("{at}.form"), r.form.as_deref())?,
                }
            }
            "decimal" => {
                let (mut min, mut max) = int_type(&format!("{at}.type"), r.kind.as_deref().unwrap_or("i64"))?;
                let width = match r.width {
                    None => None,
                    Some(w) if (1..=20).contains(&w) => {
                        min = min.max(0);
                        max = max.min(10i128.pow(w as u32) - 1);
                        Some(w as u8)
                    }
                    Some(w) => {
                        return bad(
                            &format!("{at}.width"),
                            format!("a decimal is 1 to 20 digits wide, got {w}"),
                        );
                    }
                };
                for (name, v) in [("min", r.min), ("max", r.max)] {
                    let Some(v) = v else { continue };
                    let v = i128::from(v);
                    if v < min || v > max {
                        return bad(
                            &format!("{at}.{name}"),
                            format!("{v} is outside what the segment can write ({min} to {max})"),
                        );
                    }
                }
                let (lo, hi) = (r.min.map_or(min, i128::from), r.max.map_or(max, i128::from));
                if lo > hi {
                    return bad(&format!("{at}.min"), format!("min {lo} is above max {hi}"));
                }
                let field = field_of(
                    r.decimal.as_deref().unwrap_or_default(),
                    Some(Kind::Int { min: lo, max: hi }),
                    true,
                )?;
                Segment::Decimal { field, width }
            }
            "text" => {
                let width = match r.width {
                    None => None,
                    Some(w) if (1..=MAX_ROW_LENGTH as i64).contains(&w) => Some(w as u16),
                    Some(w) => {
                        return bad(
                            &format!("{at}.width"),
                            format!("a text is 1 to {MAX_ROW_LENGTH} bytes wide, got {w}"),
                        );
                    }
                };
                let field = field_of(r.text.as_deref().unwrap_or_default(), Some(Kind::Bytes), true)?;
                Segment::Text { field, width }
            }
            "literal" | "hex" => {
                let bytes = match (&r.literal, &r.hex) {
                    (Some(s), _) => s.clone().into_bytes(),
                    (_, Some(h)) => crate::keys::parse_hex(h).map_err(|e| (format!("{at}.hex"), e))?,
                    _ => unreachable!("one of them named"),
                };
                if bytes.is_empty() {
                    return bad(&format!("{at}.{kind}"), "a literal needs at least one byte");
                }
                Segment::Literal(bytes)
            }
            _ => unreachable!("every kind handled"),
        };
        segments.push(segment);
    }
    for &(i, f) in &salted {
        let at = format!("{path}[{}].salt", i + 1);
        match (written[f], fields[f].kind) {
            (None, _) => {
                return bad(
                    &at,
                    format!(
                        "field {} is salted but no segment writes it (a key is read back from its segments)",
                        fields[f].name
                    ),
                );
            }
            (Some(_), Kind::Bytes) => {
                return bad(
                    &at,
                    format!("a salt hashes an integer field; {} is text", fields[f].name),
                );
            }
            _ => {}
        }
    }
    // A segment without a width ends where the literal after it starts, or at the key's end.
    for (i, s) in segments.iter().enumerate() {
        if s.width().is_some() {
            continue;
        }
        let at = format!("{path}[{}]", i + 1);
        match segments.get(i + 1) {
            None => {}
            Some(Segment::Literal(b))
                if matches!(s, Segment::Decimal { .. }) && (b[0].is_ascii_digit() || b[0] == b'-') =>
            {
                return bad(
                    &format!("{path}[{}]", i + 2),
                    format!(
                        "the literal after a decimal without a width cannot start with {:?}, which a decimal holds",
                        b[0] as char
                    ),
                );
            }
            Some(Segment::Literal(_)) => {}
            Some(_) => {
                return bad(
                    &format!("{at}.width"),
                    "a segment without a width must end the key or be followed by a literal, which ends it",
                );
            }
        }
    }
    let key = Key {
        name: name.to_string(),
        fields,
        segments,
    };
    let least: usize = key.segments.iter().map(|s| s.width().unwrap_or(1)).sum();
    if least > MAX_ROW_LENGTH {
        return bad(
            path,
            format!("keys of at least {least} bytes: HBase's rows are at most {MAX_ROW_LENGTH}"),
        );
    }
    Ok(key)
}

impl Key {
    /// The values of `field=value` assignments, one per field, in field order: integers in
    /// decimal, text and bytes as HBase's `Bytes.toStringBinary` writes them (`\xHH`).
    pub fn values_of(&self, assignments: &[(&str, &str)]) -> key::Result<Vec<Owned>> {
        let malformed = |reason: String| key::Error::Malformed {
            layout: self.name.clone(),
            reason,
        };
        let list = || {
            self.fields
                .iter()
                .map(|f| f.name.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        };
        let mut values: Vec<Option<Owned>> = vec![None; self.fields.len()];
        for &(name, text) in assignments {
            let Some(i) = self.field(name) else {
                return Err(malformed(format!("unknown field {name:?} (fields: {})", list())));
            };
            if values[i].is_some() {
                return Err(malformed(format!("field {name} is given twice")));
            }
            values[i] = Some(match self.fields[i].kind {
                Kind::Int { .. } => Owned::Int(
                    text.trim()
                        .parse()
                        .map_err(|_| malformed(format!("{name}: {text:?} is not an integer")))?,
                ),
                Kind::Bytes => Owned::Bytes(crate::keys::from_string_binary(text)),
            });
        }
        if let Some(i) = values.iter().position(Option::is_none) {
            return Err(malformed(format!(
                "field {} is missing (fields: {})",
                self.fields[i].name,
                list()
            )));
        }
        Ok(values.into_iter().flatten().collect())
    }

    /// A key from TOML text holding `key = [...]` (a table's key alone, as in the docs).
    pub fn parse(name: &str, src: &str) -> Result<Key, Invalid> {
        let k: KeyOnly = toml::from_str(src).map_err(|e| ("key".to_string(), e.message().to_string()))?;
        parse_key(name, "key", &k.key)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_table_has_one_key_or_rows_each_with_its_own() {
        let d = Design::parse(
            r#"
            [tables.blog.rows.a]
            key = [{ int = "x" }]
            [tables.blog.rows.b]
            key = [{ hex = "01" }, { int = "y" }]
            [tables.t]
            name = "ns:t"
            key = [{ int = "z", bytes = 2 }]
            "#,
        )
        .unwrap();
        assert_eq!(d.tables.len(), 2);
        assert_eq!(d.tables[0].name, "blog");
        assert_eq!(d.key("blog", "b").unwrap().fixed_len(), Some(9));
        assert_eq!(d.tables[1].name, "ns:t");
        assert_eq!(d.key("t", "t").unwrap().fields[0].name, "z");
        let err = |src: &str| Design::parse(src).unwrap_err();
        assert_eq!(err("[tables.t]\nname = \"t\"\n").0, "tables.t", "a table without a key");
        assert_eq!(
            err("[tables.t]\nkey = [{ int = \"a\" }]\n[tables.t.rows.r]\nkey = [{ int = \"a\" }]\n").0,
            "tables.t.rows"
        );
        assert_eq!(
            err("[tables.t.rows.r]\nkey = [{ int = \"a\", bytes = 12 }]\n"),
            (
                "tables.t.rows.r.key[1].bytes".to_string(),
                "an int is 1 to 8 bytes, got 12".to_string()
            )
        );
    }
}
