//! A design's operations: what `run` measures of its tables, each named in the design and
//! weighed by that name in `[run.mix]`. A get of one row, a page of the rows that share a
//! key prefix (newest first where the key's stamp is reversed, over every salt bucket where
//! the prefix holds a salt of another field), an index lookup (a page of an index table,
//! then the gets its cells name), a time range, a page of a wide row's cells, a home
//! timeline, and the write, update and delete of an entity's instance in every table it
//! feeds.

use super::key::{SaltSize, Segment};
use super::{Design, Entity, Invalid, Part, bad};
use serde::Deserialize;

/// The most rows one page of an operation reads.
pub const MAX_PAGE_ROWS: usize = 1000;

/// An operation as written: exactly one of its kinds, with that kind's settings.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawOperation {
    get: Option<String>,
    page: Option<String>,
    lookup: Option<String>,
    write: Option<String>,
    update: Option<String>,
    delete: Option<String>,
    timeline: Option<String>,
    range: Option<String>,
    cells: Option<String>,
    by: Option<Vec<String>>,
    span: Option<String>,
    resume: Option<String>,
    family: Option<String>,
    rows: Option<i64>,
    buckets: Option<String>,
    then: Option<String>,
    sources: Option<String>,
    inbox: Option<String>,
    versions: Option<i64>,
    per_source: Option<i64>,
    later: Option<bool>,
    follows: Option<String>,
    fanout: Option<String>,
    backfill: Option<String>,
    recall: Option<bool>,
}

/// A named operation of a design.
#[derive(Debug, Clone, PartialEq)]
pub struct Operation {
    /// Its name, in `[run.mix]` and the reports.
    pub name: String,
    /// What it does.
    pub does: Does,
    /// How a write or delete reaches readers' inboxes besides (seed 001's fan-out).
    pub deliver: Option<Deliver>,
}

/// How a write of a post or a follow, or a follow's delete, reaches the readers' inboxes:
/// the `delivery` rows of the design, as seed 001's publish, follow and unfollow do.
#[derive(Debug, Clone, PartialEq)]
pub enum Deliver {
    /// A post's write: one delivery to each follower the author's row of `list` names, by
    /// the follower's id in the qualifier of each cell of `family` (read a page at a time);
    /// none where the author is a celebrity, whose posts are read at read time.
    Fanout {
        /// The rows listing a user's followers, keyed by the followee.
        list: Target,
        /// The family whose cells name them.
        family: String,
    },
    /// A follow's write: the followee's newest posts (the first page of `posts`,
    /// `[microblog] inbox_versions` rows) delivered to the new follower; none where the
    /// followee is a celebrity.
    Backfill {
        /// The page of the followee's posts, by `uid`.
        posts: Page,
    },
    /// A follow's delete: every version of each cell a delivery from the followee wrote
    /// into the reader's rows.
    Recall,
}

/// What an operation does.
#[derive(Debug, Clone, PartialEq)]
pub enum Does {
    /// Reads one row a user's instance made, by its whole key.
    Get(Target),
    /// Reads a page of rows sharing a prefix.
    Page(Page),
    /// Reads the rows sharing a prefix whose stamp, the segment after it, lies in a window
    /// of time: newest first, up to the page's rows.
    Range(Range),
    /// Reads a page of one wide row's cells of a family, in qualifier order, resumed after
    /// a qualifier (a follower list: seed 001's `fans` family).
    Cells(Cells),
    /// Reads a page of an index, then gets the rows its cells' values name.
    Lookup {
        /// The index's page.
        index: Page,
        /// The family whose cells hold the keys.
        family: String,
        /// The qualifier of the cell holding the key, where it is the same in every row;
        /// none: every cell of the family holds one.
        qualifier: Option<Vec<u8>>,
        /// The rows the keys name.
        then: Target,
    },
    /// Writes a new instance of an entity (a user's instance made again at the time of the
    /// write) into every table it feeds.
    Write(Entity),
    /// Rewrites one of a user's instances of an entity as of now ([`Entity::updated`]): its
    /// rows written anew, and in the same write the cells of its old rows that the new
    /// ones do not overwrite deleted (an index row whose key held the old time goes).
    Update(Entity),
    /// Deletes one of a user's instances of an entity: each cell it wrote, in every table.
    Delete(Entity),
    /// A home timeline: the newest `rows` of what the user's followees wrote, merged newest
    /// first by the key's stamp from each source's first page, and from the reader's inbox
    /// where the design keeps one (a lookup whose cells hold the rows' keys), then the rows
    /// the inbox named fetched with one multi-get.
    Timeline(Timeline),
}

/// Whose pages a timeline reads at read time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sources {
    /// Every user the reader follows (the pull timeline).
    Followees,
    /// The followees above `[microblog] celebrity_threshold` followers, whose writes are not
    /// fanned out (seed 001's celebrities); the rest come by the inbox.
    Celebrities,
}

/// A timeline's parts.
#[derive(Debug, Clone, PartialEq)]
pub struct Timeline {
    /// A source's first page: by the one field its id fills.
    pub page: Page,
    /// The field of the page's key a source's id fills.
    pub by: usize,
    /// The key's stamp segment: what orders the merge.
    pub stamp: usize,
    /// Whose pages are read.
    pub sources: Sources,
    /// The lookup (its place among the operations) whose index holds the reader's inbox.
    pub inbox: Option<usize>,
    /// Rows of each source's first page that enter the merge.
    pub per_source: usize,
    /// A later page: what came before the time of one of a followee's newest rows, as the
    /// last row of an earlier page would be.
    pub later: bool,
    /// Where the reader's followees are read when it runs, as seed 001's client reads its
    /// `attention` cells: the list's rows (of entity follow, keyed by the reader's uid) and
    /// the family whose qualifiers name the followees. None: the followees the generator
    /// made, known ahead.
    pub follows: Option<(Target, String)>,
}

/// A time range's parts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Range {
    /// The rows and their prefix; `rows` is the most the range returns.
    pub page: Page,
    /// The stamp segment that follows the prefix.
    pub stamp: usize,
    /// The window's width, in milliseconds.
    pub span_ms: i64,
}

/// A page of a wide row's cells.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cells {
    /// The rows: the drawn user's where they are a user's list, else by an instance's
    /// whole key (`run::own`).
    pub target: Target,
    /// The family paged.
    pub family: String,
    /// Cells per page.
    pub rows: usize,
}

/// A kind of rows of a table: the table's place in the design and the kind's place in it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Target {
    /// The table's place in [`Design::tables`].
    pub table: usize,
    /// The kind's place in its rows.
    pub rows: usize,
}

/// A page: the rows of a kind that share the key's first `prefix` segments with a user's
/// instance, `rows` of them, in key order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Page {
    /// What it reads.
    pub target: Target,
    /// How many of the key's segments the page's rows share.
    pub prefix: usize,
    /// A salt among them of a field the page is not by: its segment and bucket count. The
    /// page reads each bucket's rows and merges them by what follows the salt.
    pub spread: Option<(usize, u32)>,
    /// Rows per page.
    pub rows: usize,
    /// Deeper pages skip the rows before them (seed 003's page by offset: a scan of every
    /// row up to the page's end) rather than resume after a cursor.
    pub offset: bool,
    /// Versions read of each cell (a lookup of an inbox that keeps several).
    pub versions: u32,
}

impl Operation {
    /// Whether it writes.
    pub fn writes(&self) -> bool {
        matches!(self.does, Does::Write(_) | Does::Update(_) | Does::Delete(_))
    }

    /// The same operation in a design whose tables and operations begin `tables` and `ops`
    /// places later (the seed designs made one, [`super::seeds::combined`]).
    pub fn moved(&self, tables: usize, ops: usize) -> Operation {
        let t = |t: Target| Target {
            table: t.table + tables,
            ..t
        };
        let p = |p: Page| Page {
            target: t(p.target),
            ..p
        };
        let does = match &self.does {
            Does::Get(x) => Does::Get(t(*x)),
            Does::Page(x) => Does::Page(p(*x)),
            Does::Range(r) => Does::Range(Range { page: p(r.page), ..*r }),
            Does::Cells(c) => Does::Cells(Cells {
                target: t(c.target),
                ..c.clone()
            }),
            Does::Lookup {
                index,
                family,
                qualifier,
                then,
            } => Does::Lookup {
                index: p(*index),
                family: family.clone(),
                qualifier: qualifier.clone(),
                then: t(*then),
            },
            Does::Write(e) => Does::Write(*e),
            Does::Update(e) => Does::Update(*e),
            Does::Delete(e) => Does::Delete(*e),
            Does::Timeline(x) => Does::Timeline(Timeline {
                page: p(x.page),
                inbox: x.inbox.map(|i| i + ops),
                follows: x.follows.as_ref().map(|(l, f)| (t(*l), f.clone())),
                ..x.clone()
            }),
        };
        let deliver = self.deliver.as_ref().map(|d| match d {
            Deliver::Fanout { list, family } => Deliver::Fanout {
                list: t(*list),
                family: family.clone(),
            },
            Deliver::Backfill { posts } => Deliver::Backfill { posts: p(*posts) },
            Deliver::Recall => Deliver::Recall,
        });
        Operation {
            name: self.name.clone(),
            does,
            deliver,
        }
    }

    /// The entity whose instances pick what it reads or writes.
    pub fn entity(&self, design: &Design) -> Entity {
        let of = |t: Target| {
            design.tables[t.table].rows[t.rows]
                .entity
                .expect("checked: made by an entity")
        };
        match &self.does {
            Does::Get(t) => of(*t),
            Does::Page(p) | Does::Lookup { index: p, .. } | Does::Range(Range { page: p, .. }) => of(p.target),
            Does::Cells(c) => of(c.target),
            Does::Write(e) | Does::Update(e) | Does::Delete(e) => *e,
            // A timeline's user is a reader, its instances the follows that name its sources.
            Does::Timeline(_) => Entity::Follow,
        }
    }
}

/// The operations of a design, in the file's order; `at` is where each is declared.
pub(super) fn operations(design: &Design, raw: &[(String, RawOperation)]) -> Result<Vec<Operation>, Invalid> {
    let mut out: Vec<Operation> = Vec::new();
    for (name, r) in raw {
        let path = format!("operations.{name}");
        super::field_name(&path, name)?;
        let kinds = [
            ("get", &r.get),
            ("page", &r.page),
            ("lookup", &r.lookup),
            ("write", &r.write),
            ("update", &r.update),
            ("delete", &r.delete),
            ("timeline", &r.timeline),
            ("range", &r.range),
            ("cells", &r.cells),
        ];
        let named: Vec<(&str, &String)> = kinds.iter().filter_map(|(k, v)| v.as_ref().map(|v| (*k, v))).collect();
        let (kind, what) = match named[..] {
            [one] => one,
            [] => {
                return bad(
                    &path,
                    "an operation is one of get, page, lookup, range, cells, write, update, delete or timeline",
                );
            }
            _ => {
                return bad(
                    &path,
                    format!(
                        "an operation is one of get, page, lookup, range, cells, write, update, delete or timeline, not {}",
                        named.iter().map(|(k, _)| *k).collect::<Vec<_>>().join(" and ")
                    ),
                );
            }
        };
        let at = format!("{path}.{kind}");
        let unused = |field: &str, set: bool| -> Result<(), Invalid> {
            if set {
                return bad(&format!("{path}.{field}"), format!("{kind} takes no {field}"));
            }
            Ok(())
        };
        if kind != "timeline" {
            unused("sources", r.sources.is_some())?;
            unused("inbox", r.inbox.is_some())?;
        }
        if kind != "range" {
            unused("span", r.span.is_some())?;
        }
        if kind != "page" {
            unused("resume", r.resume.is_some())?;
        }
        if kind != "cells" {
            unused("family", r.family.is_some())?;
        }
        if kind != "lookup" {
            unused("versions", r.versions.is_some())?;
        }
        if kind != "timeline" {
            unused("per_source", r.per_source.is_some())?;
            unused("later", r.later.is_some())?;
            unused("follows", r.follows.is_some())?;
        }
        let does = match kind {
            "range" => {
                unused("then", r.then.is_some())?;
                Does::Range(range(design, &path, &at, what, r)?)
            }
            "cells" => {
                unused("by", r.by.is_some())?;
                unused("buckets", r.buckets.is_some())?;
                unused("then", r.then.is_some())?;
                Does::Cells(cells(design, &path, &at, what, r)?)
            }
            "timeline" => {
                unused("then", r.then.is_some())?;
                Does::Timeline(timeline(design, &out, &path, &at, what, r)?)
            }
            "get" => {
                unused("by", r.by.is_some())?;
                unused("rows", r.rows.is_some())?;
                unused("buckets", r.buckets.is_some())?;
                unused("then", r.then.is_some())?;
                Does::Get(target(design, &at, what)?)
            }
            "page" => {
                unused("then", r.then.is_some())?;
                let mut p = page(design, &path, &at, what, r)?;
                p.offset = match r.resume.as_deref() {
                    None | Some("cursor") => false,
                    Some("offset") => true,
                    Some(other) => {
                        return bad(
                            &format!("{path}.resume"),
                            format!("{other:?} is not \"cursor\" or \"offset\""),
                        );
                    }
                };
                Does::Page(p)
            }
            "lookup" => {
                let mut index = page(design, &path, &at, what, r)?;
                index.versions = match r.versions {
                    None => 1,
                    Some(n) if (1..=i64::from(super::MAX_VERSIONS)).contains(&n) => n as u32,
                    Some(n) => {
                        return bad(
                            &format!("{path}.versions"),
                            format!("versions are a number from 1 to {}, got {n}", super::MAX_VERSIONS),
                        );
                    }
                };
                let Some(then) = &r.then else {
                    return bad(
                        &path,
                        "a lookup needs then: the table (or TABLE.ROWS) its cells name rows of",
                    );
                };
                let then_at = format!("{path}.then");
                let then_target = target(design, &then_at, then)?;
                let t = &design.tables[then_target.table];
                let (then_table, then_rows) = (&t.id, &t.rows[then_target.rows].name);
                let index_rows = &design.tables[index.target.table].rows[index.target.rows];
                let Some(cell) = index_rows.cells.iter().find(
                    |c| matches!(&c.value, Part::Row { table, rows } if table == then_table && rows == then_rows),
                ) else {
                    return bad(
                        &then_at,
                        format!(
                            "no cell of {what} holds a key of {then}: a lookup reads the keys an index's cells hold ({{ key = \"{then}\" }})"
                        ),
                    );
                };
                let qualifier = cell.qualifier.fixed();
                // With a qualifier made of fields, every cell of the family is read as a key.
                if qualifier.is_none()
                    && let Some(other) = index_rows.cells.iter().find(|c| {
                        c.family == cell.family && !matches!(&c.value, Part::Row { table, .. } if table == then_table)
                    })
                {
                    return bad(
                        &then_at,
                        format!(
                            "the cells holding keys of {then} are named by fields, and family {} holds other cells too ({}): a lookup could not tell them apart",
                            cell.family,
                            describe_qualifier(&other.qualifier)
                        ),
                    );
                }
                Does::Lookup {
                    index,
                    family: cell.family.clone(),
                    qualifier,
                    then: then_target,
                }
            }
            _ => {
                unused("by", r.by.is_some())?;
                unused("rows", r.rows.is_some())?;
                unused("buckets", r.buckets.is_some())?;
                unused("then", r.then.is_some())?;
                let Some(entity) = Entity::parse(what) else {
                    return bad(
                        &at,
                        format!("no entity {what:?}; {kind} names one of {}", Entity::names()),
                    );
                };
                if !design.entities().contains(&entity) {
                    return bad(&at, format!("no table of the design takes rows of entity {what}"));
                }
                match kind {
                    "write" => Does::Write(entity),
                    "update" => Does::Update(entity),
                    _ => Does::Delete(entity),
                }
            }
        };
        let deliver = deliver(design, &path, kind, &does, r)?;
        out.push(Operation {
            name: name.clone(),
            does,
            deliver,
        });
    }
    Ok(out)
}

/// How an operation reaches the readers' inboxes: `fanout` on a post's write, `backfill` on
/// a follow's, `recall` on a follow's delete.
fn deliver(design: &Design, path: &str, kind: &str, does: &Does, r: &RawOperation) -> Result<Option<Deliver>, Invalid> {
    let asked = [
        (
            "fanout",
            r.fanout.is_some(),
            Does::Write(Entity::Post),
            "write = \"post\"",
        ),
        (
            "backfill",
            r.backfill.is_some(),
            Does::Write(Entity::Follow),
            "write = \"follow\"",
        ),
        (
            "recall",
            r.recall.is_some(),
            Does::Delete(Entity::Follow),
            "delete = \"follow\"",
        ),
    ];
    let Some((field, _, on, said)) = asked.into_iter().find(|(_, set, _, _)| *set) else {
        return Ok(None);
    };
    let at = format!("{path}.{field}");
    if *does != on {
        return bad(&at, format!("{field} goes with {said}, not {kind}"));
    }
    if let Some(other) = other_delivery(r, field) {
        return bad(
            &format!("{path}.{other}"),
            format!("{other} and {field} do not go together"),
        );
    }
    // Every row a delivery writes, by the fields of its key and qualifier.
    let delivered: Vec<(&super::Table, &super::Rows)> = design
        .tables
        .iter()
        .flat_map(|t| t.rows.iter().map(move |r| (t, r)))
        .filter(|(_, r)| r.entity == Some(Entity::Delivery))
        .collect();
    if delivered.is_empty() {
        return bad(
            &at,
            "no table of the design takes rows of entity delivery: there is no inbox to write",
        );
    }
    Ok(Some(match field {
        "fanout" => {
            let name = r.fanout.as_deref().expect("asked");
            let (list, family) = follow_list(design, &at, name, Whose::Followers)?;
            Deliver::Fanout { list, family }
        }
        "backfill" => {
            let name = r.backfill.as_deref().expect("asked");
            let raw = RawOperation {
                by: Some(vec!["uid".into()]),
                ..RawOperation::default()
            };
            let posts = page(design, path, &at, name, &raw).map_err(|(_, why)| (at.clone(), why))?;
            let rows = &design.tables[posts.target.table].rows[posts.target.rows];
            if rows.entity != Some(Entity::Post) || rows.key.field("stamp").is_none() {
                return bad(
                    &at,
                    format!(
                        "the rows of {name} are not posts keyed by their stamp: a backfill delivers a followee's newest posts"
                    ),
                );
            }
            Deliver::Backfill { posts }
        }
        _ => {
            if r.recall == Some(false) {
                return Ok(None);
            }
            // A recall names each cell by the reader and the followee alone.
            for (t, rows) in delivered {
                let qualifier = match &rows.cells[..] {
                    [] => Vec::new(),
                    cells => cells
                        .iter()
                        .flat_map(|c| match &c.qualifier {
                            Part::Segments(q) => q.fields.iter().map(|f| f.name.clone()).collect(),
                            _ => Vec::new(),
                        })
                        .collect(),
                };
                if let Some(f) = rows
                    .key
                    .fields
                    .iter()
                    .map(|f| &f.name)
                    .chain(&qualifier)
                    .find(|f| !["reader", "uid"].contains(&f.as_str()))
                {
                    return bad(
                        &at,
                        format!(
                            "the deliveries in {} are named by their {f}: a recall deletes a followee's cells by the reader and the followee alone",
                            t.id
                        ),
                    );
                }
            }
            Deliver::Recall
        }
    }))
}

/// Another of the delivery settings than `field`, if one is set.
fn other_delivery(r: &RawOperation, field: &str) -> Option<&'static str> {
    [
        ("fanout", r.fanout.is_some()),
        ("backfill", r.backfill.is_some()),
        ("recall", r.recall.is_some()),
    ]
    .into_iter()
    .find(|(f, set)| *set && *f != field)
    .map(|(f, _)| f)
}

/// A timeline over `name`'s rows, its pages by the one field a source's id fills.
fn timeline(
    design: &Design,
    before: &[Operation],
    path: &str,
    at: &str,
    name: &str,
    r: &RawOperation,
) -> Result<Timeline, Invalid> {
    let page = page(design, path, at, name, r)?;
    if page.spread.is_some() {
        return bad(
            &format!("{path}.buckets"),
            "a timeline reads the first page of each source: its pages lie in one bucket",
        );
    }
    let rows = &design.tables[page.target.table].rows[page.target.rows];
    let key = &rows.key;
    let by = match r.by.as_deref() {
        Some([one]) => key.field(one).expect("page checked it"),
        _ => {
            return bad(
                &format!("{path}.by"),
                "a timeline's pages are by one field, which each source's id fills",
            );
        }
    };
    if !matches!(key.fields[by].kind, super::key::Kind::Int { .. }) {
        return bad(
            &format!("{path}.by"),
            format!(
                "{} is not an integer: a source's id does not fill it",
                key.fields[by].name
            ),
        );
    }
    let Some(stamp) = key.segments.iter().position(|s| matches!(s, Segment::Stamp { .. })) else {
        return bad(
            at,
            format!("the key of {name} holds no stamp: a timeline merges its sources' rows by one"),
        );
    };
    let sources = match r.sources.as_deref() {
        None | Some("followees") => Sources::Followees,
        Some("celebrities") => Sources::Celebrities,
        Some(other) => {
            return bad(
                &format!("{path}.sources"),
                format!("{other:?} is not \"followees\" or \"celebrities\""),
            );
        }
    };
    let inbox = match &r.inbox {
        None => None,
        Some(op) => {
            let inbox_at = format!("{path}.inbox");
            let Some(i) = before.iter().position(|o| &o.name == op) else {
                return bad(
                    &inbox_at,
                    format!("no operation {op:?} declared before it: an inbox names a lookup"),
                );
            };
            match &before[i].does {
                Does::Lookup { then, .. } if *then == page.target => Some(i),
                _ => {
                    return bad(
                        &inbox_at,
                        format!("operation {op} is not a lookup of {name}: an inbox's cells hold the timeline's keys"),
                    );
                }
            }
        }
    };
    if sources == Sources::Celebrities && inbox.is_none() {
        return bad(
            &format!("{path}.sources"),
            "celebrities alone are pulled where the rest come by an inbox: name the inbox lookup",
        );
    }
    let per_source = count(&format!("{path}.per_source"), r.per_source, page.rows)?;
    let follows = match &r.follows {
        None => None,
        Some(name) => Some(follow_list(design, &format!("{path}.follows"), name, Whose::Followees)?),
    };
    Ok(Timeline {
        follows,
        page,
        by,
        stamp,
        sources,
        inbox,
        per_source,
        later: r.later.unwrap_or(false),
    })
}

/// Which of a user's follow lists a list's rows hold.
#[derive(Clone, Copy)]
enum Whose {
    /// Its followers, which a post's fan-out reads: rows keyed by `followee`, cells named
    /// by the follower's `uid`.
    Followers,
    /// Its followees, which a timeline reads: rows keyed by `uid`, cells named by
    /// `followee`.
    Followees,
}

/// The rows `name` of a user's follow list (of entity follow, keyed by the user alone,
/// with a cell named by the other user alone), and that cell's family.
fn follow_list(design: &Design, at: &str, name: &str, whose: Whose) -> Result<(Target, String), Invalid> {
    let (key, cell, list, reader, other) = match whose {
        Whose::Followers => ("followee", "uid", "followers", "a fan-out", "the follower's uid"),
        Whose::Followees => ("uid", "followee", "followees", "a timeline", "the followee"),
    };
    let target = target(design, at, name)?;
    let rows = &design.tables[target.table].rows[target.rows];
    let fields: Vec<&str> = rows.key.fields.iter().map(|f| f.name.as_str()).collect();
    if rows.entity != Some(Entity::Follow) || fields != [key] {
        return bad(
            at,
            format!(
                "the rows of {name} are not a user's {list}: {reader} reads rows of entity follow keyed by {key} alone"
            ),
        );
    }
    let Some(found) = rows.cells.iter().find(|c| match &c.qualifier {
        Part::Segments(q) => q.fields.iter().map(|f| f.name.as_str()).eq([cell]),
        _ => false,
    }) else {
        return bad(
            at,
            format!("no cell of {name} is named by {other} alone: {reader} finds the {list} by their cells"),
        );
    };
    Ok((target, found.family.clone()))
}

fn describe_qualifier(p: &Part) -> String {
    match p.fixed() {
        Some(q) => format!("qualifier {:?}", crate::keys::to_string_binary(&q)),
        None => "a qualifier made of fields".into(),
    }
}

/// The rows a `TABLE` or `TABLE.ROWS` names, which an entity must make.
fn target(design: &Design, at: &str, name: &str) -> Result<Target, Invalid> {
    design.named_key(name).map_err(|e| (at.to_string(), e))?;
    let (table, rows) = name.split_once('.').unwrap_or((name, name));
    let t = design
        .tables
        .iter()
        .position(|t| t.id == table)
        .expect("named_key found it");
    let r = match name.contains('.') {
        true => design.tables[t]
            .rows
            .iter()
            .position(|r| r.name == rows)
            .expect("found"),
        false => 0,
    };
    if design.tables[t].rows[r].entity.is_none() {
        return bad(
            at,
            format!("no entity makes the rows of {name}: there is nothing to read"),
        );
    }
    Ok(Target { table: t, rows: r })
}

/// A page over `name` by the fields `r.by` names.
fn page(design: &Design, path: &str, at: &str, name: &str, r: &RawOperation) -> Result<Page, Invalid> {
    let target = target(design, at, name)?;
    let key = &design.tables[target.table].rows[target.rows].key;
    let by_at = format!("{path}.by");
    let Some(by) = &r.by else {
        return bad(
            path,
            format!(
                "a page needs by: the key's leading fields its rows share (of {})",
                names(key)
            ),
        );
    };
    if by.is_empty() {
        return bad(
            &by_at,
            format!(
                "names no field: name the key's leading fields a page shares (of {})",
                names(key)
            ),
        );
    }
    let mut fields = Vec::new();
    for (i, f) in by.iter().enumerate() {
        let Some(at) = key.field(f) else {
            return bad(
                &format!("{by_at}[{}]", i + 1),
                format!("the key of {name} has no field {f:?} ({})", names(key)),
            );
        };
        if fields.contains(&at) {
            return bad(&format!("{by_at}[{}]", i + 1), format!("field {f} is named twice"));
        }
        fields.push(at);
    }
    let all_buckets = match r.buckets.as_deref() {
        None => false,
        Some("all") => true,
        Some(other) => {
            return bad(
                &format!("{path}.buckets"),
                format!("{other:?}: the one choice is \"all\""),
            );
        }
    };
    let rows = count(&format!("{path}.rows"), r.rows, 10)?;
    // The prefix: the leading segments each of which is a literal, a salt, or one of the
    // fields named; a salt of another field is read bucket by bucket.
    let mut prefix = 0;
    let mut spread = None;
    for (i, s) in key.segments.iter().enumerate() {
        let inside = match s {
            Segment::Literal(_) => true,
            Segment::Salt {
                size: SaltSize::Off, ..
            } => true,
            Segment::Salt { field, size, .. } if !fields.contains(field) => {
                let f = &key.fields[*field].name;
                match size {
                    SaltSize::Buckets(n) if all_buckets => {
                        spread = Some((i, *n));
                        true
                    }
                    SaltSize::Buckets(n) => {
                        return bad(
                            &by_at,
                            format!(
                                "the key of {name} begins with a salt of {f}, which by does not name: a page reads each of its {n} buckets; say buckets = \"all\", or page by {f}"
                            ),
                        );
                    }
                    _ => {
                        return bad(
                            &by_at,
                            format!(
                                "the key of {name} begins with the whole hash of {f}, which by does not name: no page of rows sharing other fields lies together"
                            ),
                        );
                    }
                }
            }
            s => s.field().is_some_and(|f| fields.contains(&f)),
        };
        if !inside {
            break;
        }
        prefix = i + 1;
    }
    let covered: Vec<usize> = key.segments[..prefix].iter().filter_map(Segment::field).collect();
    if let Some(i) = fields.iter().position(|f| !covered.contains(f)) {
        let lead = key.segments[..=prefix.min(key.segments.len() - 1)]
            .iter()
            .filter_map(|s| s.field().map(|f| key.fields[f].name.clone()))
            .collect::<Vec<_>>();
        return bad(
            &format!("{by_at}[{}]", i + 1),
            format!(
                "field {} is not among the key's leading fields (its key begins {}): a page's rows share a prefix",
                key.fields[fields[i]].name,
                lead.join(", ")
            ),
        );
    }
    if all_buckets && spread.is_none() {
        return bad(
            &format!("{path}.buckets"),
            format!(
                "the page's prefix of {name} holds no salt of a field by does not name: there is one bucket to read"
            ),
        );
    }
    // A prefix that ends in a field of no fixed width would take longer values' rows too.
    let last = &key.segments[prefix - 1];
    if last.delimited() && prefix < key.segments.len() {
        let f = key.fields[last.field().expect("a delimited segment has a field")]
            .name
            .clone();
        return bad(
            &by_at,
            format!(
                "field {f} ends the page's prefix and has no width, and no literal follows it: a page by it would take rows of longer values of {f} too"
            ),
        );
    }
    Ok(Page {
        target,
        prefix,
        spread,
        rows,
        offset: false,
        versions: 1,
    })
}

/// The most a range's window spans: ten years.
const MAX_SPAN_MS: i64 = 3650 * 86_400_000;

/// A time range over `name`'s rows by the fields `r.by` names, whose key's next segment is
/// a stamp.
fn range(design: &Design, path: &str, at: &str, name: &str, r: &RawOperation) -> Result<Range, Invalid> {
    let r2 = RawOperation {
        by: r.by.clone(),
        buckets: r.buckets.clone(),
        rows: Some(r.rows.unwrap_or(100)),
        ..RawOperation::default()
    };
    let page = page(design, path, at, name, &r2)?;
    let key = &design.tables[page.target.table].rows[page.target.rows].key;
    let stamp = page.prefix;
    if !matches!(key.segments.get(stamp), Some(Segment::Stamp { .. })) {
        let next = key
            .segments
            .get(stamp)
            .and_then(Segment::field)
            .map_or_else(|| "nothing".to_string(), |f| format!("field {}", key.fields[f].name));
        return bad(
            &format!("{path}.by"),
            format!(
                "a range reads the rows whose stamp lies in a window, and in the key of {name} {next} follows what by names, not a stamp: by names the fields before the key's stamp"
            ),
        );
    }
    let Some(span) = &r.span else {
        return bad(path, "a range needs span: its window's width, such as \"7d\" or \"1h\"");
    };
    let span_at = format!("{path}.span");
    let span_ms = match humantime::parse_duration(span) {
        Ok(d) => i64::try_from(d.as_millis()).unwrap_or(i64::MAX),
        Err(_) => {
            return bad(&span_at, format!("{span:?} is not a width of time like 1h, 1d or 7d"));
        }
    };
    if !(1..=MAX_SPAN_MS).contains(&span_ms) {
        return bad(&span_at, format!("{span:?}: a window is 1 ms to 3650 days"));
    }
    Ok(Range { page, stamp, span_ms })
}

/// A page of the cells of `name`'s family `r.family`, one row by an instance's whole key.
fn cells(design: &Design, path: &str, at: &str, name: &str, r: &RawOperation) -> Result<Cells, Invalid> {
    let target = target(design, at, name)?;
    let rows = &design.tables[target.table].rows[target.rows];
    let Some(family) = &r.family else {
        return bad(path, "a page of cells needs family: the family whose cells it pages");
    };
    let ours: Vec<&super::Cell> = rows.cells.iter().filter(|c| &c.family == family).collect();
    if ours.is_empty() {
        let mut have: Vec<&str> = rows.cells.iter().map(|c| c.family.as_str()).collect();
        have.dedup();
        return bad(
            &format!("{path}.family"),
            format!(
                "the rows of {name} hold no cells of family {family:?} ({})",
                have.join(", ")
            ),
        );
    }
    if let Some(c) = ours.iter().find(|c| c.qualifier.fixed().is_some()) {
        return bad(
            &format!("{path}.family"),
            format!(
                "family {family} of {name} holds {}: a page of cells pages a wide row, whose qualifiers are made of fields",
                describe_qualifier(&c.qualifier)
            ),
        );
    }
    let n = count(&format!("{path}.rows"), r.rows, 20)?;
    Ok(Cells {
        target,
        family: family.clone(),
        rows: n,
    })
}

/// A count of rows or cells a read takes, 1 to [`MAX_PAGE_ROWS`]; `default` where unset.
fn count(at: &str, n: Option<i64>, default: usize) -> Result<usize, Invalid> {
    match n {
        None => Ok(default),
        Some(n) if (1..=MAX_PAGE_ROWS as i64).contains(&n) => Ok(n as usize),
        Some(n) => bad(at, format!("must be 1 to {MAX_PAGE_ROWS}, got {n}")),
    }
}

fn names(key: &super::key::Key) -> String {
    key.fields
        .iter()
        .map(|f| f.name.as_str())
        .collect::<Vec<_>>()
        .join(", ")
}
