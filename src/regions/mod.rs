//! Regions: where a workload's tables are split before a load, and how a load or run spread
//! over the regions a backend reports.
//!
//! Split points follow the key design: a bucket-salted layout (a seed's, or a table of a
//! design's own whose every key begins with one salt's buckets) splits at bucket boundaries,
//! so each region takes whole buckets; every other layout (no salt, seed 002's `hash(id)`, the
//! text `uid` keys of the microblog) splits at quantiles of the keys the generator writes,
//! sampled deterministically from evenly spaced users. [`crate::store::counted`] tallies rows and bytes per
//! region while a load or run works.

pub mod report;

use crate::design::key::{Form, SaltSize, Segment, write_bucket};
use crate::generate::{Generator, Scratch, Sink, Table};
use crate::keys::Salt;
use crate::schema;
use crate::store::RowMutation;

pub use crate::workload::MAX_REGIONS;

/// Users whose rows the quantile split points are drawn from.
const SAMPLE_USERS: u64 = 2048;

/// Keys kept per table while sampling: past this, every other kept key is dropped and the
/// stride doubles, so a table of long per-user series stays small.
const SAMPLE_KEYS: usize = 1 << 17;

/// How `table`'s row keys begin: its salt, and whether the layout is binary.
fn salt_of(g: &Generator, table: Table) -> (Salt, bool) {
    let salt = table
        .design()
        .and_then(|d| g.workload().keys.design(d))
        .map_or(Salt::None, |o| o.salt);
    (salt, table.binary_keys())
}

/// The split points of every table the workload writes for `regions` regions each, in
/// their design's order. A table gets fewer regions when its sampled keys have fewer distinct
/// values than asked.
pub fn split_points(g: &Generator, regions: usize) -> schema::Result<Vec<(Table, Vec<Vec<u8>>)>> {
    let tables = g.written_tables();
    if regions <= 1 {
        return Ok(tables.into_iter().map(|t| (t, Vec::new())).collect());
    }
    let sampled = sample(g)?;
    Ok(tables
        .into_iter()
        .map(|t| {
            let own = g.own_design().and_then(|d| own_buckets(&d.tables[t.index()]));
            let splits = match (own, salt_of(g, t)) {
                (Some(b), _) if regions as u64 <= u64::from(b.buckets) => b.splits(regions),
                (None, (Salt::Buckets(n), binary)) if regions <= usize::from(n) => bucket_splits(n, binary, regions),
                _ => quantiles(sampled.keys[t.index()].clone(), regions),
            };
            (t, splits)
        })
        .collect())
}

/// The first key of each bucket group of a seed layout's salt: `regions` groups of `n`
/// buckets, as even as whole buckets allow; a byte, or zero-padded digits and `_`.
fn bucket_splits(n: u16, binary: bool, regions: usize) -> Vec<Vec<u8>> {
    let (form, separator) = match binary {
        true => (Form::Bytes, Vec::new()),
        false => (Form::Digits, b"_".to_vec()),
    };
    OwnBuckets {
        prefix: Vec::new(),
        buckets: u32::from(n),
        form,
        separator,
    }
    .splits(regions)
}

/// Where every kind of rows of a table of a design's own begins with the same literals and
/// then a salt of the same buckets: each region then takes whole buckets, as a seed's do.
#[derive(Debug, PartialEq)]
struct OwnBuckets {
    prefix: Vec<u8>,
    buckets: u32,
    form: Form,
    /// What follows the bucket in every key.
    separator: Vec<u8>,
}

impl OwnBuckets {
    /// The first key of each of `regions` groups of whole buckets, as even as they allow.
    fn splits(&self, regions: usize) -> Vec<Vec<u8>> {
        let n = u64::from(self.buckets);
        (1..regions as u64)
            .map(|i| {
                let mut key = self.prefix.clone();
                write_bucket(
                    self.buckets,
                    self.form,
                    (i * n).div_ceil(regions as u64) as u32,
                    &mut key,
                );
                key.extend_from_slice(&self.separator);
                key
            })
            .collect()
    }
}

/// The salt buckets every row of `table` begins with, if it has them.
fn own_buckets(table: &crate::design::Table) -> Option<OwnBuckets> {
    let mut found: Option<OwnBuckets> = None;
    for rows in &table.rows {
        let mut prefix = Vec::new();
        let mut segments = rows.key.segments.iter();
        let this = loop {
            match segments.next()? {
                Segment::Literal(b) => prefix.extend_from_slice(b),
                Segment::Salt {
                    size: SaltSize::Buckets(buckets),
                    form,
                    separator,
                    ..
                } => {
                    break OwnBuckets {
                        prefix,
                        buckets: *buckets,
                        form: *form,
                        separator: separator.clone(),
                    };
                }
                _ => return None,
            }
        };
        match &found {
            Some(f) if *f != this => return None,
            _ => found = Some(this),
        }
    }
    found
}

/// The keys at the `regions`-quantiles of `keys` (each key weighted by the row mutations
/// sampled for it), each once.
fn quantiles(mut keys: Vec<Vec<u8>>, regions: usize) -> Vec<Vec<u8>> {
    keys.sort_unstable();
    let mut out: Vec<Vec<u8>> = (1..regions)
        .filter_map(|i| keys.get(i * keys.len() / regions).cloned())
        .filter(|k| !k.is_empty())
        .collect();
    out.dedup();
    out
}

/// Row keys of evenly spaced users, per table.
struct Sampled {
    keys: Vec<Vec<Vec<u8>>>,
    stride: Vec<u64>,
    seen: Vec<u64>,
}

impl Sink for Sampled {
    fn row(&mut self, t: Table, row: RowMutation) -> schema::Result<()> {
        let i = t.index();
        self.seen[i] += 1;
        if !self.seen[i].is_multiple_of(self.stride[i]) {
            return Ok(());
        }
        self.keys[i].push(row.row);
        if self.keys[i].len() >= SAMPLE_KEYS {
            let mut n = 0u64;
            self.keys[i].retain(|_| {
                n += 1;
                n.is_multiple_of(2)
            });
            self.stride[i] *= 2;
        }
        Ok(())
    }
}

fn sample(g: &Generator) -> schema::Result<Sampled> {
    let users = g.workload().data.users;
    let picks = users.min(SAMPLE_USERS);
    let mut s = Sampled {
        keys: vec![Vec::new(); g.all_tables().len()],
        stride: vec![1; g.all_tables().len()],
        seen: vec![0; g.all_tables().len()],
    };
    let mut scratch = Scratch::default();
    for i in 0..picks {
        // Evenly spaced over 1..=users, the first and the last included.
        let uid = 1 + if picks > 1 { i * (users - 1) / (picks - 1) } else { 0 };
        g.emit_user_rows(uid, &mut scratch, &mut s)?;
    }
    Ok(s)
}

/// A table's regions as a backend reports them: the start keys of all but the first.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Bounds {
    /// The table's name.
    pub table: String,
    /// Sorted split keys; N keys make N + 1 regions.
    pub splits: Vec<Vec<u8>>,
}

impl Bounds {
    /// Regions in the table.
    pub fn len(&self) -> usize {
        self.splits.len() + 1
    }

    /// Always false: a table has at least one region.
    pub fn is_empty(&self) -> bool {
        false
    }

    /// The region (0-based) that holds `key`.
    pub fn locate(&self, key: &[u8]) -> usize {
        self.splits.partition_point(|s| s.as_slice() <= key)
    }

    /// Region `i`'s start and end keys (empty for the table's first start and last end).
    pub fn range(&self, i: usize) -> (&[u8], &[u8]) {
        let start = if i == 0 { &[][..] } else { &self.splits[i - 1][..] };
        let end = self.splits.get(i).map_or(&[][..], |k| &k[..]);
        (start, end)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bucket_splits_take_whole_buckets() {
        assert_eq!(bucket_splits(16, true, 4), vec![vec![4], vec![8], vec![12]]);
        assert_eq!(bucket_splits(10, true, 3), vec![vec![4], vec![7]]);
        assert_eq!(bucket_splits(16, false, 2), vec![b"08_".to_vec()]);
        assert_eq!(bucket_splits(8, false, 8).len(), 7);
        assert_eq!(bucket_splits(8, false, 8)[0], b"1_".to_vec());
    }

    #[test]
    fn a_design_of_its_own_whose_keys_begin_with_one_salt_splits_at_whole_buckets() {
        let d = crate::design::Design::parse(
            r#"
            [tables.m]
            families = ["m"]
            key = [{ literal = "m" }, { salt = "uid", buckets = 16 }, { int = "uid", bytes = 8 }, { stamp = "stamp" }]
            [tables.d]
            families = ["d"]
            key = [{ salt = "uid", buckets = 100, form = "digits", separator = "_" }, { decimal = "uid" }]
            [tables.two]
            families = ["f"]
            [tables.two.rows.a]
            key = [{ salt = "uid", buckets = 8 }, { int = "uid", bytes = 8 }]
            [tables.two.rows.b]
            key = [{ salt = "followee", buckets = 4 }, { int = "followee", bytes = 8 }]
            [tables.plain]
            families = ["f"]
            key = [{ int = "uid", bytes = 8 }, { salt = "uid", buckets = 4 }]
            "#,
        )
        .unwrap();
        let b = own_buckets(&d.tables[0]).unwrap();
        assert_eq!(
            b.splits(4),
            vec![b"m\x04".to_vec(), b"m\x08".to_vec(), b"m\x0c".to_vec()]
        );
        let b = own_buckets(&d.tables[1]).unwrap();
        // The separator after the digits, as every key of the bucket begins.
        assert_eq!(b.splits(3), vec![b"34_".to_vec(), b"67_".to_vec()]);
        // Kinds of rows salted differently, or a salt after the key's start: quantiles.
        assert_eq!(own_buckets(&d.tables[2]), None);
        assert_eq!(own_buckets(&d.tables[3]), None);
    }

    #[test]
    fn quantiles_split_evenly_and_once() {
        let keys: Vec<Vec<u8>> = (0u8..100).map(|b| vec![b]).collect();
        assert_eq!(quantiles(keys.clone(), 4), vec![vec![25], vec![50], vec![75]]);
        assert_eq!(quantiles(vec![vec![7]; 50], 4), vec![vec![7]]);
        assert!(quantiles(Vec::new(), 4).is_empty());
    }

    #[test]
    fn bounds_locate_keys_in_their_regions() {
        let b = Bounds {
            table: "t".into(),
            splits: vec![b"g".to_vec(), b"m".to_vec()],
        };
        assert_eq!(b.len(), 3);
        assert_eq!(b.locate(b""), 0);
        assert_eq!(b.locate(b"f\xff"), 0);
        assert_eq!(b.locate(b"g"), 1);
        assert_eq!(b.locate(b"m"), 2);
        assert_eq!(b.locate(b"\xff"), 2);
        assert_eq!(b.range(0), (&b""[..], &b"g"[..]));
        assert_eq!(b.range(2), (&b"m"[..], &b""[..]));
    }
}
