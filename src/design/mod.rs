//! Table designs as data: a design's row keys declared as segments ([`key`]), parsed from
//! TOML with every error naming the dotted path of the field at fault, and the seed designs'
//! keys as the first descriptions ([`seeds`]).

pub mod emit;
mod entity;
pub mod explain;
pub mod key;
pub mod ops;
pub mod seeds;

use crate::tomlfile::{Error, locate};
pub use entity::{Entity, FieldKind};
use key::{Field, Form, Key, Kind, Owned, SaltSize, Segment};
use serde::Deserialize;
use std::path::Path;

/// An error: the dotted path of the field at fault, and what is wrong with it.
pub type Invalid = (String, String);

/// The most tables one design declares (a table's place in the loader is a byte).
pub const MAX_TABLES: usize = 64;

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
    length: Option<i64>,
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
    tables: Ordered<RawTable>,
    operations: Option<Ordered<ops::RawOperation>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawTable {
    name: Option<String>,
    families: Option<Vec<toml::Value>>,
    entity: Option<String>,
    key: Option<Vec<RawSegment>>,
    cells: Option<Vec<RawCell>>,
    rows: Option<Ordered<RawRows>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawRows {
    entity: Option<String>,
    key: Vec<RawSegment>,
    cells: Option<Vec<RawCell>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawCell {
    family: String,
    qualifier: toml::Value,
    value: toml::Value,
    timestamp: Option<String>,
}

/// A TOML table's entries in the file's order (a design's tables are made in that order).
struct Ordered<T>(Vec<(String, T)>);

impl<'de, T: Deserialize<'de>> Deserialize<'de> for Ordered<T> {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Entries<T>(std::marker::PhantomData<T>);
        impl<'de, T: Deserialize<'de>> serde::de::Visitor<'de> for Entries<T> {
            type Value = Ordered<T>;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a table")
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(self, mut m: A) -> Result<Ordered<T>, A::Error> {
                let mut out = Vec::new();
                while let Some(entry) = m.next_entry::<String, T>()? {
                    out.push(entry);
                }
                Ok(Ordered(out))
            }
        }
        d.deserialize_map(Entries(std::marker::PhantomData))
    }
}

/// A design: its tables.
#[derive(Debug, Clone, PartialEq)]
pub struct Design {
    /// The tables, in the file's order.
    pub tables: Vec<Table>,
    /// What `run` measures of them, in the file's order.
    pub operations: Vec<ops::Operation>,
}

/// A table of a design: its HBase name, its families and the kinds of rows it holds.
#[derive(Debug, Clone, PartialEq)]
pub struct Table {
    /// Its id in the design (`tables.<id>`).
    pub id: String,
    /// Its name in HBase, namespace included (`weibo:content`).
    pub name: String,
    /// Its column families, in the file's order.
    pub families: Vec<String>,
    /// Each family's `VERSIONS` (the versions of a cell a read returns), 1 unless declared.
    pub versions: Vec<u32>,
    /// Its kinds of rows: one named after the table, or those of `rows`.
    pub rows: Vec<Rows>,
}

/// One kind of rows of a table: its key, and what makes its rows.
#[derive(Debug, Clone, PartialEq)]
pub struct Rows {
    /// Its name: the table's id, or its name under `rows`.
    pub name: String,
    /// Its row key.
    pub key: Key,
    /// The entity each of whose instances makes one row; none for a key declared alone.
    pub entity: Option<Entity>,
    /// The cells of each row.
    pub cells: Vec<Cell>,
}

/// A cell of a row: where it goes, and what it holds.
#[derive(Debug, Clone, PartialEq)]
pub struct Cell {
    /// Its family.
    pub family: String,
    /// Its qualifier.
    pub qualifier: Part,
    /// Its value.
    pub value: Part,
    /// The entity's field that stamps it; none for the time of the write.
    pub timestamp: Option<usize>,
}

/// A qualifier or a value: bytes made of the entity's fields, another row's key, or (a value
/// alone) generated bytes of a size drawn per cell.
#[derive(Debug, Clone, PartialEq)]
pub enum Part {
    /// Segments over the entity's fields, as a key's are (literals alone give fixed bytes).
    Segments(Key),
    /// The key the entity's row of another kind has (`{ key = "TABLE" }` or `"TABLE.ROWS"`).
    Row {
        /// The table's id.
        table: String,
        /// Its kind of rows.
        rows: String,
    },
    /// Bytes of a size drawn from a distribution (`{ size = ... }`), the same for an instance
    /// whenever it is made, so that `verify` makes them again.
    Sized(Sized),
}

/// Generated bytes: how many, and what they look like.
#[derive(Debug, Clone, PartialEq)]
pub struct Sized {
    /// The distribution of their length.
    pub size: Size,
    /// What fills them.
    pub fill: Fill,
}

/// A distribution of value sizes, in bytes.
#[derive(Debug, Clone, PartialEq)]
pub enum Size {
    /// Always `n`.
    Fixed(u32),
    /// Every size from `min` to `max` alike.
    Uniform {
        /// Smallest.
        min: u32,
        /// Largest.
        max: u32,
    },
    /// `mean` plus `sd` times a standard normal draw, rounded, within `min..=max`.
    Normal {
        /// Mean.
        mean: f64,
        /// Standard deviation.
        sd: f64,
        /// Smallest (0 by default).
        min: u32,
        /// Largest ([`MAX_VALUE`] by default).
        max: u32,
    },
    /// `min` plus a Zipf rank less one: `min` most often, then fewer of each larger size.
    Zipf {
        /// Smallest, and most common.
        min: u32,
        /// Largest.
        max: u32,
        /// The power law's exponent.
        exponent: f64,
    },
    /// Sizes with weights: each `(size, share of draws up to and including it)`.
    Histogram(Vec<(u32, f64)>),
}

/// What fills generated bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fill {
    /// Words, as posts are, with the workload's `data.compressibility`.
    Text,
    /// Uniform random bytes, which no codec compresses.
    Random,
}

/// The largest generated value: HBase's `hbase.client.keyvalue.maxsize` by default (10 MiB), a
/// cell's limit on the client.
pub const MAX_VALUE: u32 = 10_485_760;

impl Part {
    /// The bytes every cell gets, when the part is literals alone.
    pub fn fixed(&self) -> Option<Vec<u8>> {
        let Part::Segments(k) = self else { return None };
        k.segments
            .iter()
            .map(|s| match s {
                Segment::Literal(b) => Some(b.clone()),
                _ => None,
            })
            .collect::<Option<Vec<_>>>()
            .map(|parts| parts.concat())
    }
}

impl Design {
    /// A design from its TOML text; an error names the dotted path at fault.
    pub fn parse(src: &str) -> Result<Design, Invalid> {
        let raw: RawDesign = toml::from_str(src).map_err(|e| (String::new(), e.message().trim().replace('\n', " ")))?;
        Design::from_raw(&raw)
    }

    fn from_raw(raw: &RawDesign) -> Result<Design, Invalid> {
        let mut tables: Vec<Table> = Vec::new();
        let mut names: Vec<(&str, String)> = Vec::new();
        let mut cells_at: Vec<Vec<String>> = Vec::new();
        for (id, t) in &raw.tables.0 {
            let path = format!("tables.{id}");
            field_name(&path, id)?;
            let name = t.name.clone().unwrap_or_else(|| id.clone());
            table_name(&format!("{path}.name"), &name)?;
            if let Some((other, _)) = names.iter().find(|(_, n)| *n == name) {
                return bad(
                    &format!("{path}.name"),
                    format!("table {name:?} is also tables.{other}'s name"),
                );
            }
            names.push((id, name.clone()));
            if tables.len() == MAX_TABLES {
                return bad(&path, format!("a design has at most {} tables", MAX_TABLES));
            }
            let (families, versions) = families(&format!("{path}.families"), t.families.as_deref())?;
            let rows = match (&t.key, &t.rows) {
                (Some(key), None) => vec![rows_of(
                    id,
                    &path,
                    &families,
                    t.entity.as_deref(),
                    key,
                    t.cells.as_deref(),
                    ("", ""),
                )?],
                (None, Some(rows)) if !rows.0.is_empty() => rows
                    .0
                    .iter()
                    .map(|(r, raw)| {
                        let at = format!("{path}.rows.{r}");
                        field_name(&at, r)?;
                        // The table's entity and cells are every kind's, unless it has its own.
                        let (entity, inherited_entity) = match &raw.entity {
                            Some(e) => (Some(e.as_str()), false),
                            None => (t.entity.as_deref(), t.entity.is_some()),
                        };
                        let (cells, inherited_cells) = match &raw.cells {
                            Some(c) => (Some(c.as_slice()), false),
                            None => (t.cells.as_deref(), t.cells.is_some()),
                        };
                        rows_of(
                            r,
                            &at,
                            &families,
                            entity,
                            &raw.key,
                            cells,
                            (
                                if inherited_entity { path.as_str() } else { at.as_str() },
                                if inherited_cells { path.as_str() } else { at.as_str() },
                            ),
                        )
                    })
                    .collect::<Result<_, Invalid>>()?,
                (Some(_), Some(_)) => {
                    return bad(
                        &format!("{path}.rows"),
                        "a table has one key, or rows each with its own, not both",
                    );
                }
                (None, _) => return bad(&path, "a table needs a key, or rows each with its own"),
            };
            if let Some(f) = families
                .iter()
                .find(|f| !rows.iter().any(|r| r.cells.iter().any(|c| &c.family == *f)))
                && rows.iter().any(|r| r.entity.is_some())
            {
                return bad(
                    &format!("{path}.families"),
                    format!("family {f} is declared but no cell is written into it"),
                );
            }
            cells_at.push(match &t.rows {
                Some(rs) if t.key.is_none() => {
                    rs.0.iter()
                        .map(|(r, raw)| match raw.cells {
                            Some(_) => format!("{path}.rows.{r}.cells"),
                            None => format!("{path}.cells"),
                        })
                        .collect()
                }
                _ => vec![format!("{path}.cells")],
            });
            tables.push(Table {
                id: id.clone(),
                name,
                families,
                versions,
                rows,
            });
        }
        let mut design = Design {
            tables,
            operations: Vec::new(),
        };
        design.check_references(&cells_at)?;
        if let Some(raw) = &raw.operations {
            design.operations = ops::operations(&design, &raw.0)?;
        }
        Ok(design)
    }

    /// Every `{ key = ... }` names rows of this design whose key the entity can make;
    /// `cells_at[t][r]` is where rows `r` of table `t` declare their cells.
    fn check_references(&self, cells_at: &[Vec<String>]) -> Result<(), Invalid> {
        for (t, at_t) in self.tables.iter().zip(cells_at) {
            for (r, cells_at) in t.rows.iter().zip(at_t) {
                let Some(entity) = r.entity else { continue };
                for (ci, c) in r.cells.iter().enumerate() {
                    for (what, part) in [("qualifier", &c.qualifier), ("value", &c.value)] {
                        let Part::Row { table, rows } = part else { continue };
                        let at = format!("{cells_at}[{}].{what}.key", ci + 1);
                        let named = if table == rows {
                            table.clone()
                        } else {
                            format!("{table}.{rows}")
                        };
                        let key = self.named_key(&named).map_err(|e| (at.clone(), e))?;
                        if let Some(f) = key.fields.iter().find(|f| entity.field(&f.name).is_none()) {
                            return bad(
                                &at,
                                format!(
                                    "the key of {named} needs field {}, which entity {} does not have ({})",
                                    f.name,
                                    entity.name(),
                                    entity.field_names()
                                ),
                            );
                        }
                    }
                }
            }
        }
        Ok(())
    }

    /// Reads a design file: an error is one line naming the file, line, column and field.
    pub fn from_file(path: &Path) -> Result<Design, Error> {
        let text = Error::read_toml(path)?;
        Design::from_text(path, &text)
    }

    /// A design from the text of `path`: an error is one line naming the file, line, column
    /// and field.
    pub fn from_text(path: &Path, src: &str) -> Result<Design, Error> {
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
                .map(|r| format!("{table}.{}", r.name))
                .collect::<Vec<_>>()
                .join(", ")
        };
        if !name.contains('.') {
            return match &t.rows[..] {
                [r] => Ok(&r.key),
                _ => Err(format!(
                    "table {table} holds several kinds of rows: name one ({})",
                    kinds()
                )),
            };
        }
        t.rows
            .iter()
            .find(|r| r.name == rows)
            .map(|r| &r.key)
            .ok_or_else(|| format!("table {table} has no rows {rows:?} ({})", kinds()))
    }

    /// The key of row kind `rows` of table `table`.
    pub fn key(&self, table: &str, rows: &str) -> Option<&Key> {
        let t = self.tables.iter().find(|t| t.id == table)?;
        t.rows.iter().find(|r| r.name == rows).map(|r| &r.key)
    }

    /// Its tables as a store creates them: each family with its versions and HBase's
    /// default storage settings.
    pub fn descriptors(&self) -> Vec<crate::store::TableDescriptor> {
        self.tables
            .iter()
            .map(|t| crate::store::TableDescriptor {
                families: t
                    .families
                    .iter()
                    .zip(&t.versions)
                    .map(|(f, &n)| crate::store::FamilyDescriptor::new(f, n))
                    .collect(),
                ..crate::store::TableDescriptor::new(&t.name, &[], 1)
            })
            .collect()
    }

    /// The entities whose instances make rows of its tables, each once, in
    /// [`Entity::ALL`] order.
    pub fn entities(&self) -> Vec<Entity> {
        Entity::ALL
            .into_iter()
            .filter(|e| self.tables.iter().any(|t| t.rows.iter().any(|r| r.entity == Some(*e))))
            .collect()
    }
}

/// One `&'static str` per name a process meets (a design's tables and operations): they are
/// few, and what names them (a `generate::Table`, a `workload::Op`) stays `Copy`.
pub fn intern(name: &str) -> &'static str {
    use std::collections::BTreeSet;
    use std::sync::Mutex;
    static NAMES: Mutex<BTreeSet<&'static str>> = Mutex::new(BTreeSet::new());
    let mut names = NAMES.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    if let Some(n) = names.get(name) {
        return n;
    }
    let n: &'static str = Box::leak(name.to_string().into_boxed_str());
    names.insert(n);
    n
}

fn bad<T>(path: &str, message: impl Into<String>) -> Result<T, Invalid> {
    Err((path.to_string(), message.into()))
}

/// The word a segment is written with.
fn kind_name(s: &Segment) -> &'static str {
    match s {
        Segment::Salt { .. } => "salt",
        Segment::Int { .. } => "int",
        Segment::Stamp { .. } => "stamp",
        Segment::Decimal { .. } => "decimal",
        Segment::Text { .. } | Segment::Counted { .. } => "text",
        Segment::Literal(_) => "literal",
    }
}

/// Every field `key` (at `path`) writes is one of `entity`'s, of the kind its segment writes.
fn bound_to(key: &Key, path: &str, entity: Entity) -> Result<(), Invalid> {
    for (i, s) in key.segments.iter().enumerate() {
        let Some(f) = s.field() else { continue };
        let field = &key.fields[f];
        let at = format!("{path}[{}].{}", i + 1, kind_name(s));
        let Some(e) = entity.field(&field.name) else {
            return bad(
                &at,
                format!(
                    "entity {} has no field {} (fields: {})",
                    entity.name(),
                    field.name,
                    entity.field_names()
                ),
            );
        };
        let has = entity.fields()[e].1;
        match (field.kind, has) {
            (Kind::Int { .. }, FieldKind::Bytes) if !matches!(s, Segment::Salt { .. }) => {
                return bad(
                    &at,
                    format!(
                        "field {} of entity {} is text: a {} segment writes integers (text writes bytes)",
                        field.name,
                        entity.name(),
                        kind_name(s)
                    ),
                );
            }
            (Kind::Bytes, FieldKind::Int) => {
                return bad(
                    &at,
                    format!(
                        "field {} of entity {} is an integer: a text segment writes bytes (int, decimal or stamp write integers)",
                        field.name,
                        entity.name()
                    ),
                );
            }
            _ => {}
        }
    }
    Ok(())
}

/// A table's HBase name: `[namespace:]qualifier`, of the characters HBase allows.
fn table_name(path: &str, name: &str) -> Result<(), Invalid> {
    let legal = |part: &str| {
        !part.is_empty()
            && !part.starts_with(['.', '-'])
            && part
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-' || b == b'.')
    };
    let ok = match name.split_once(':') {
        Some((ns, q)) => legal(ns) && legal(q) && !ns.contains(['.', '-']),
        None => legal(name),
    };
    if !ok || name.len() > 255 {
        return bad(
            path,
            format!(
                "{name:?} is not an HBase table name ([namespace:]name of letters, digits, '_', '-' and '.', not starting with '.' or '-')"
            ),
        );
    }
    Ok(())
}

/// A table's families: names HBase accepts, each once.
fn families(path: &str, raw: Option<&[toml::Value]>) -> Result<(Vec<String>, Vec<u32>), Invalid> {
    let raw = raw.unwrap_or_default();
    let mut out: Vec<String> = Vec::new();
    let mut versions = Vec::new();
    for (i, v) in raw.iter().enumerate() {
        let at = format!("{path}[{}]", i + 1);
        // `"f"`, or `{ name = "f", versions = N }` for a family that keeps N versions a cell.
        let (f, n) = match v {
            toml::Value::String(f) => (f.clone(), 1),
            toml::Value::Table(t) => {
                if let Some(k) = t.keys().find(|k| !["name", "versions"].contains(&k.as_str())) {
                    return bad(&format!("{at}.{k}"), "a family has a name and versions, nothing else");
                }
                let Some(toml::Value::String(f)) = t.get("name") else {
                    return bad(&format!("{at}.name"), "a family needs its name, a string");
                };
                let n = match t.get("versions") {
                    None => 1,
                    Some(toml::Value::Integer(n)) if (1..=i64::from(MAX_VERSIONS)).contains(n) => *n as u32,
                    Some(other) => {
                        let got = match other {
                            toml::Value::Integer(n) => n.to_string(),
                            v => format!("a {}", v.type_str()),
                        };
                        return bad(
                            &format!("{at}.versions"),
                            format!("versions are a number from 1 to {MAX_VERSIONS}, got {got}"),
                        );
                    }
                };
                (f.clone(), n)
            }
            other => {
                return bad(
                    &at,
                    format!(
                        "a {} is not a family: a name, or {{ name = \"f\", versions = N }}",
                        other.type_str()
                    ),
                );
            }
        };
        let legal = !f.is_empty()
            && !f.starts_with('.')
            && f.bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-' || b == b'.');
        if !legal {
            return bad(
                &at,
                format!("{f:?} is not a family name (letters, digits, '_', '-' and '.', not starting with '.')"),
            );
        }
        if out.contains(&f) {
            return bad(&at, format!("family {f} is declared twice"));
        }
        out.push(f);
        versions.push(n);
    }
    Ok((out, versions))
}

/// Most versions a design's family may keep: a guard against a slip of the keyboard.
pub const MAX_VERSIONS: u32 = 10_000;

/// One kind of rows: `key` at `{path}.key`; its entity and cells, where `at` (entity's,
/// cells') says they were written.
fn rows_of(
    name: &str,
    path: &str,
    families: &[String],
    entity: Option<&str>,
    key: &[RawSegment],
    cells: Option<&[RawCell]>,
    at: (&str, &str),
) -> Result<Rows, Invalid> {
    let key_at = format!("{path}.key");
    let key = parse_key(name, &key_at, key)?;
    let (entity_at, cells_at) = (
        if at.0.is_empty() { path } else { at.0 },
        if at.1.is_empty() { path } else { at.1 },
    );
    let Some(entity) = entity else {
        if cells.is_some() {
            return bad(
                &format!("{cells_at}.cells"),
                format!(
                    "cells need the entity that makes the rows (entity = one of {})",
                    Entity::names()
                ),
            );
        }
        return Ok(Rows {
            name: name.to_string(),
            key,
            entity: None,
            cells: Vec::new(),
        });
    };
    let Some(entity) = Entity::parse(entity) else {
        return bad(
            &format!("{entity_at}.entity"),
            format!("{entity:?} is not an entity ({})", Entity::names()),
        );
    };
    bound_to(&key, &key_at, entity)?;
    let cells = match cells {
        Some(c) if !c.is_empty() => c,
        _ => {
            return bad(
                &format!("{cells_at}.cells"),
                format!("rows of entity {} need at least one cell", entity.name()),
            );
        }
    };
    let mut out: Vec<Cell> = Vec::new();
    for (i, c) in cells.iter().enumerate() {
        let at = format!("{cells_at}.cells[{}]", i + 1);
        if !families.contains(&c.family) {
            let declared = if families.is_empty() {
                "the table declares none (families = [...])".to_string()
            } else {
                format!("declared: {}", families.join(", "))
            };
            return bad(
                &format!("{at}.family"),
                format!("family {:?} is not one of the table's families ({declared})", c.family),
            );
        }
        let qualifier = part(&format!("{at}.qualifier"), "qualifier", &c.qualifier, entity)?;
        let value = part(&format!("{at}.value"), "value", &c.value, entity)?;
        let timestamp = match &c.timestamp {
            None => None,
            Some(f) => match entity.field(f) {
                Some(i) if entity.fields()[i].1 == FieldKind::Int => Some(i),
                Some(_) => {
                    return bad(
                        &format!("{at}.timestamp"),
                        format!("field {f} of entity {} is text, not epoch milliseconds", entity.name()),
                    );
                }
                None => {
                    return bad(
                        &format!("{at}.timestamp"),
                        format!(
                            "entity {} has no field {f} (fields: {})",
                            entity.name(),
                            entity.field_names()
                        ),
                    );
                }
            },
        };
        if let Some(q) = qualifier.fixed()
            && let Some(j) = out
                .iter()
                .position(|o| o.family == c.family && o.qualifier.fixed().as_ref() == Some(&q))
        {
            return bad(
                &format!("{at}.qualifier"),
                format!(
                    "cell {} already writes {}:{}",
                    j + 1,
                    c.family,
                    crate::keys::to_string_binary(&q)
                ),
            );
        }
        out.push(Cell {
            family: c.family.clone(),
            qualifier,
            value,
            timestamp,
        });
    }
    Ok(Rows {
        name: name.to_string(),
        key,
        entity: Some(entity),
        cells: out,
    })
}

/// A qualifier or a value as written at `path`: a string (its bytes), segments over the
/// entity's fields, or `{ key = "TABLE[.ROWS]" }`.
fn part(path: &str, what: &str, raw: &toml::Value, entity: Entity) -> Result<Part, Invalid> {
    let shapes = if what == "value" {
        "a value is a string, a list of segments over the entity's fields, { key = \"TABLE\" } (the key of another table's row), or { size = ... } (generated bytes)".to_string()
    } else {
        format!(
            "a {what} is a string, a list of segments over the entity's fields, or {{ key = \"TABLE\" }} (the key of another table's row)"
        )
    };
    match raw {
        toml::Value::String(s) => Ok(Part::Segments(Key {
            name: path.to_string(),
            fields: Vec::new(),
            segments: if s.is_empty() {
                Vec::new()
            } else {
                vec![Segment::Literal(s.clone().into_bytes())]
            },
        })),
        toml::Value::Array(_) => {
            let segments: Vec<RawSegment> = raw
                .clone()
                .try_into()
                .map_err(|e: toml::de::Error| (path.to_string(), e.message().trim().replace('\n', " ")))?;
            let key = parse_key(path, path, &segments)?;
            bound_to(&key, path, entity)?;
            Ok(Part::Segments(key))
        }
        toml::Value::Table(t) if what == "value" && t.contains_key("size") => Ok(Part::Sized(sized(path, t)?)),
        toml::Value::Table(t) => {
            if let Some(other) = t.keys().find(|k| *k != "key") {
                return bad(&format!("{path}.{other}"), shapes);
            }
            let Some(toml::Value::String(named)) = t.get("key") else {
                return bad(path, shapes);
            };
            let (table, rows) = named.split_once('.').unwrap_or((named, named));
            Ok(Part::Row {
                table: table.to_string(),
                rows: rows.to_string(),
            })
        }
        _ => bad(path, shapes),
    }
}

/// `{ size = ..., fill = ... }`: generated bytes of a size distribution.
fn sized(path: &str, t: &toml::Table) -> Result<Sized, Invalid> {
    const KINDS: &str = "a size in bytes, \"uniform\", \"normal\", \"zipf\" or \"histogram\"";
    let kind_at = format!("{path}.size");
    let at = |k: &str| format!("{path}.{k}");
    let allowed: &[&str] = match t.get("size") {
        Some(toml::Value::Integer(_)) => &[],
        Some(toml::Value::String(k)) => match k.as_str() {
            "uniform" => &["min", "max"],
            "normal" => &["mean", "sd", "min", "max"],
            "zipf" => &["min", "max", "exponent"],
            "histogram" => &["buckets"],
            other => return bad(&kind_at, format!("{other:?} is not a size ({KINDS})")),
        },
        _ => return bad(&kind_at, format!("a size is {KINDS}")),
    };
    if let Some(other) = t
        .keys()
        .find(|k| !["size", "fill"].contains(&k.as_str()) && !allowed.contains(&k.as_str()))
    {
        let takes = if allowed.is_empty() {
            "a fixed size takes fill alone".to_string()
        } else {
            format!("this size takes {} and fill", allowed.join(", "))
        };
        return bad(&at(other), takes);
    }
    let bytes = |k: &str| -> Result<Option<u32>, Invalid> {
        match t.get(k) {
            None => Ok(None),
            Some(toml::Value::Integer(n)) if (0..=i64::from(MAX_VALUE)).contains(n) => Ok(Some(*n as u32)),
            Some(toml::Value::Integer(n)) => bad(
                &at(k),
                format!("a size is 0 to {MAX_VALUE} bytes (HBase's hbase.client.keyvalue.maxsize), got {n}"),
            ),
            Some(_) => bad(&at(k), "a size is a whole number of bytes"),
        }
    };
    let number = |k: &str| -> Result<Option<f64>, Invalid> {
        match t.get(k) {
            None => Ok(None),
            Some(toml::Value::Integer(n)) => Ok(Some(*n as f64)),
            Some(toml::Value::Float(x)) if x.is_finite() => Ok(Some(*x)),
            Some(_) => bad(&at(k), "expected a number"),
        }
    };
    let need = |k: &str, v: Option<u32>| v.map_or_else(|| bad(&at(k), "required by this size"), Ok);
    let range = |min: u32, max: u32| -> Result<(), Invalid> {
        if min > max {
            return bad(&at("max"), format!("max {max} is below min {min}"));
        }
        Ok(())
    };
    let size = match t.get("size") {
        Some(toml::Value::Integer(_)) => Size::Fixed(bytes("size")?.expect("present")),
        Some(toml::Value::String(k)) if k == "uniform" => {
            let (min, max) = (need("min", bytes("min")?)?, need("max", bytes("max")?)?);
            range(min, max)?;
            Size::Uniform { min, max }
        }
        Some(toml::Value::String(k)) if k == "normal" => {
            let Some(mean) = number("mean")? else {
                return bad(&at("mean"), "required by this size");
            };
            let Some(sd) = number("sd")? else {
                return bad(&at("sd"), "required by this size");
            };
            if !(0.0..=f64::from(MAX_VALUE)).contains(&mean) {
                return bad(
                    &at("mean"),
                    format!("a mean size is 0 to {MAX_VALUE} bytes, got {mean}"),
                );
            }
            if !(0.0..=f64::from(MAX_VALUE)).contains(&sd) {
                return bad(
                    &at("sd"),
                    format!("a standard deviation is 0 to {MAX_VALUE} bytes, got {sd}"),
                );
            }
            let (min, max) = (bytes("min")?.unwrap_or(0), bytes("max")?.unwrap_or(MAX_VALUE));
            range(min, max)?;
            Size::Normal { mean, sd, min, max }
        }
        Some(toml::Value::String(k)) if k == "zipf" => {
            let (min, max) = (need("min", bytes("min")?)?, need("max", bytes("max")?)?);
            range(min, max)?;
            let exponent = number("exponent")?.unwrap_or(1.0);
            if !(0.0..=10.0).contains(&exponent) {
                return bad(&at("exponent"), format!("an exponent is 0 to 10, got {exponent}"));
            }
            Size::Zipf { min, max, exponent }
        }
        _ => {
            let buckets_at = at("buckets");
            let shape = "buckets are [[size, weight], ...]: a size in bytes and a weight above 0";
            let Some(toml::Value::Array(buckets)) = t.get("buckets") else {
                return bad(&buckets_at, shape);
            };
            if buckets.is_empty() {
                return bad(&buckets_at, shape);
            }
            let mut out: Vec<(u32, f64)> = Vec::with_capacity(buckets.len());
            for (i, b) in buckets.iter().enumerate() {
                let b_at = format!("{buckets_at}[{}]", i + 1);
                let pair = match b.as_array().map(Vec::as_slice) {
                    Some([toml::Value::Integer(n), w]) => {
                        (*n, w.as_float().or_else(|| w.as_integer().map(|i| i as f64)))
                    }
                    _ => return bad(&b_at, shape),
                };
                let (n, Some(w)) = pair else { return bad(&b_at, shape) };
                if !(0..=i64::from(MAX_VALUE)).contains(&n) {
                    return bad(
                        &b_at,
                        format!("a size is 0 to {MAX_VALUE} bytes (HBase's hbase.client.keyvalue.maxsize), got {n}"),
                    );
                }
                if !(w.is_finite() && w > 0.0) {
                    return bad(&b_at, format!("a weight is above 0, got {w}"));
                }
                if out.iter().any(|(m, _)| i64::from(*m) == n) {
                    return bad(&b_at, format!("size {n} is in another bucket already"));
                }
                out.push((n as u32, w));
            }
            let total: f64 = out.iter().map(|(_, w)| w).sum();
            let mut acc = 0.0;
            for (_, w) in &mut out {
                acc += *w;
                *w = acc / total;
            }
            Size::Histogram(out)
        }
    };
    let fill = match t.get("fill") {
        None => Fill::Text,
        Some(toml::Value::String(f)) if f == "text" => Fill::Text,
        Some(toml::Value::String(f)) if f == "random" => Fill::Random,
        Some(_) => {
            return bad(
                &at("fill"),
                "fill is \"text\" (words, as compressible as data.compressibility says) or \"random\"",
            );
        }
    };
    Ok(Sized { size, fill })
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
    ("text", &["width", "length"]),
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
            ("length", self.length.is_some()),
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
                match r.length {
                    None => Segment::Text { field, width },
                    Some(_) if width.is_some() => {
                        return bad(
                            &format!("{at}.length"),
                            "a text has a width or a length before it, not both",
                        );
                    }
                    Some(n @ (1 | 2 | 4)) => Segment::Counted { field, length: n as u8 },
                    Some(n) => {
                        return bad(
                            &format!("{at}.length"),
                            format!("a text's length is written in 1, 2 or 4 bytes, got {n}"),
                        );
                    }
                }
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
        if !s.delimited() {
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

    /// Every error of families, entities and cells names the field at fault and says what
    /// is allowed.
    #[test]
    fn malformed_cells_name_the_field_at_fault() {
        let ok = r#"
            [tables.t]
            families = ["f"]
            entity = "post"
            key = [{ int = "uid" }, { stamp = "stamp" }]
            cells = [{ family = "f", qualifier = "q", value = [{ text = "content" }], timestamp = "stamp" }]
        "#;
        Design::parse(ok).unwrap();
        let cases: &[(&str, &str, &str, &str)] = &[
            (
                "entity = \"post\"",
                "entity = \"tweet\"",
                "tables.t.entity",
                "is not an entity",
            ),
            (
                "families = [\"f\"]",
                "families = [\"f\", \"f\"]",
                "tables.t.families[2]",
                "declared twice",
            ),
            (
                "families = [\"f\"]",
                "families = [\".f\"]",
                "tables.t.families[1]",
                "not a family name",
            ),
            (
                "families = [\"f\"]",
                "families = [\"f\", \"g\"]",
                "tables.t.families",
                "family g is declared but no cell",
            ),
            (
                "family = \"f\"",
                "family = \"g\"",
                "tables.t.cells[1].family",
                "not one of the table's families",
            ),
            (
                "{ int = \"uid\" }",
                "{ int = \"userid\" }",
                "tables.t.key[1].int",
                "entity post has no field userid",
            ),
            (
                "{ int = \"uid\" }",
                "{ int = \"content\" }",
                "tables.t.key[1].int",
                "is text",
            ),
            (
                "{ text = \"content\" }",
                "{ text = \"stamp\" }",
                "tables.t.cells[1].value[1].text",
                "is an integer",
            ),
            (
                "timestamp = \"stamp\"",
                "timestamp = \"content\"",
                "tables.t.cells[1].timestamp",
                "is text",
            ),
            (
                "timestamp = \"stamp\"",
                "timestamp = \"when\"",
                "tables.t.cells[1].timestamp",
                "has no field when",
            ),
            (
                "value = [{ text = \"content\" }]",
                "value = 7",
                "tables.t.cells[1].value",
                "a value is a string",
            ),
            (
                "value = [{ text = \"content\" }]",
                "value = { key = \"nope\" }",
                "tables.t.cells[1].value.key",
                "no table \"nope\"",
            ),
            (
                "value = [{ text = \"content\" }]",
                "value = { row = \"t\" }",
                "tables.t.cells[1].value.row",
                "a value is a string",
            ),
            (
                "value = [{ text = \"content\" }]",
                "value = [{ text = \"content\", length = 3 }]",
                "tables.t.cells[1].value[1].length",
                "1, 2 or 4 bytes",
            ),
            (
                "value = [{ text = \"content\" }]",
                "value = [{ text = \"content\", length = 4, width = 2 }]",
                "tables.t.cells[1].value[1].length",
                "not both",
            ),
            (
                "value = [{ text = \"content\" }]",
                "value = [{ txt = \"content\" }]",
                "tables.t.cells[1].value",
                "unknown field `txt`",
            ),
            (
                "cells = [{",
                "cells = [{ family = \"f\", qualifier = \"q\", value = \"v\" }, {",
                "tables.t.cells[2].qualifier",
                "cell 1 already writes f:q",
            ),
            ("entity = \"post\"\n", "", "tables.t.cells", "cells need the entity"),
            (
                "cells = [{ family = \"f\", qualifier = \"q\", value = [{ text = \"content\" }], timestamp = \"stamp\" }]",
                "cells = []",
                "tables.t.cells",
                "at least one cell",
            ),
            (
                "[tables.t]",
                "[tables.t]\nname = \"a:b:c\"",
                "tables.t.name",
                "not an HBase table name",
            ),
        ];
        let v = "value = [{ text = \"content\" }]";
        let sizes: &[(&str, &str, &str, &str)] = &[
            (
                v,
                "value = { size = -5 }",
                "tables.t.cells[1].value.size",
                "0 to 10485760 bytes",
            ),
            (
                v,
                "value = { size = 10485761 }",
                "tables.t.cells[1].value.size",
                "hbase.client.keyvalue.maxsize",
            ),
            (
                v,
                "value = { size = \"poisson\" }",
                "tables.t.cells[1].value.size",
                "is not a size",
            ),
            (
                v,
                "value = { size = 1.5 }",
                "tables.t.cells[1].value.size",
                "a size is a size in bytes",
            ),
            (
                v,
                "value = { size = \"uniform\", min = 1 }",
                "tables.t.cells[1].value.max",
                "required",
            ),
            (
                v,
                "value = { size = \"uniform\", min = 9, max = 3 }",
                "tables.t.cells[1].value.max",
                "below min 9",
            ),
            (
                v,
                "value = { size = 10, min = 3 }",
                "tables.t.cells[1].value.min",
                "fill alone",
            ),
            (
                v,
                "value = { size = \"uniform\", min = 1, max = 2, mean = 3 }",
                "tables.t.cells[1].value.mean",
                "takes min, max and fill",
            ),
            (
                v,
                "value = { size = \"normal\", mean = -100, sd = 5 }",
                "tables.t.cells[1].value.mean",
                "0 to 10485760",
            ),
            (
                v,
                "value = { size = \"normal\", mean = 100, sd = -1 }",
                "tables.t.cells[1].value.sd",
                "standard deviation",
            ),
            (
                v,
                "value = { size = \"normal\", sd = 1 }",
                "tables.t.cells[1].value.mean",
                "required",
            ),
            (
                v,
                "value = { size = \"zipf\", min = 1, max = 9, exponent = -1 }",
                "tables.t.cells[1].value.exponent",
                "0 to 10",
            ),
            (
                v,
                "value = { size = \"histogram\", buckets = [] }",
                "tables.t.cells[1].value.buckets",
                "[[size, weight]",
            ),
            (
                v,
                "value = { size = \"histogram\", buckets = [[10, 0]] }",
                "tables.t.cells[1].value.buckets[1]",
                "above 0",
            ),
            (
                v,
                "value = { size = \"histogram\", buckets = [[10, 1], [-1, 1]] }",
                "tables.t.cells[1].value.buckets[2]",
                "got -1",
            ),
            (
                v,
                "value = { size = \"histogram\", buckets = [[10, 1], [10, 2]] }",
                "tables.t.cells[1].value.buckets[2]",
                "another bucket",
            ),
            (
                v,
                "value = { size = \"histogram\", buckets = [10, 20] }",
                "tables.t.cells[1].value.buckets[1]",
                "[[size, weight]",
            ),
            (
                v,
                "value = { size = 10, fill = \"zeros\" }",
                "tables.t.cells[1].value.fill",
                "\"random\"",
            ),
            (
                "qualifier = \"q\"",
                "qualifier = { size = 4 }",
                "tables.t.cells[1].qualifier.size",
                "a qualifier is a string",
            ),
        ];
        for (from, to, at, says) in cases.iter().chain(sizes) {
            assert!(ok.contains(from), "{from}");
            let (path, message) = Design::parse(&ok.replacen(from, to, 1)).unwrap_err();
            assert_eq!((path.as_str(), message.contains(says)), (*at, true), "{to}: {message}");
        }
        // A key another table's cells name must be one the entity can make.
        let (path, message) = Design::parse(
            r#"
            [tables.a]
            families = ["f"]
            entity = "post"
            key = [{ int = "uid" }]
            cells = [{ family = "f", qualifier = "k", value = { key = "b" } }]
            [tables.b]
            key = [{ int = "reader" }]
            "#,
        )
        .unwrap_err();
        assert_eq!(path, "tables.a.cells[1].value.key");
        assert!(
            message.contains("needs field reader, which entity post does not have"),
            "{message}"
        );
        // Two tables of one name.
        let (path, _) =
            Design::parse("[tables.a]\nkey = [{ int = \"x\" }]\n[tables.b]\nname = \"a\"\nkey = [{ int = \"x\" }]\n")
                .unwrap_err();
        assert_eq!(path, "tables.b.name");
    }

    /// A family keeps 1 version unless it says how many; a design holds at most
    /// [`MAX_TABLES`] tables, whose descriptors carry each family's versions.
    #[test]
    fn families_keep_the_versions_they_declare_and_a_design_its_tables() {
        let d = Design::parse(
            r#"
            [tables.t]
            name = "ns:t"
            families = ["a", { name = "b", versions = 3 }]
            entity = "post"
            key = [{ int = "uid" }, { stamp = "stamp" }]
            cells = [
              { family = "a", qualifier = "x", value = [{ text = "content" }] },
              { family = "b", qualifier = "y", value = [{ text = "content" }] },
            ]
            "#,
        )
        .unwrap();
        assert_eq!(d.tables[0].versions, [1, 3]);
        let desc = &d.descriptors()[0];
        assert_eq!(desc.name, "ns:t");
        let families: Vec<(&str, u32)> = desc
            .families
            .iter()
            .map(|f| (f.name.as_str(), f.max_versions))
            .collect();
        assert_eq!(families, [("a", 1), ("b", 3)]);
        assert_eq!(d.entities(), [Entity::Post]);
        let err = |families: &str| {
            Design::parse(&format!(
                "[tables.t]\nfamilies = {families}\nkey = [{{ int = \"a\" }}]\n"
            ))
            .unwrap_err()
        };
        assert_eq!(
            err("[{ name = \"b\", versions = 0 }]").0,
            "tables.t.families[1].versions"
        );
        assert_eq!(err("[{ versions = 2 }]").0, "tables.t.families[1].name");
        assert_eq!(err("[{ name = \"b\", ttl = 2 }]").0, "tables.t.families[1].ttl");
        assert_eq!(err("[7]").0, "tables.t.families[1]");
        let many: String = (0..=MAX_TABLES)
            .map(|i| format!("[tables.t{i}]\nkey = [{{ int = \"a\" }}]\n"))
            .collect();
        let (at, why) = Design::parse(&many).unwrap_err();
        assert_eq!(at, format!("tables.t{}", MAX_TABLES));
        assert!(why.contains("at most 64 tables"), "{why}");
    }
}
