//! Delete markers: what a delete leaves behind so that, as in HBase by default
//! (`NEW_VERSION_BEHAVIOR => false`), a put written later at or below the delete's timestamp
//! stays hidden. The delete itself removes the cells it covers; the marker only decides
//! whether a later put is kept, so reads never look at markers.
//!
//! One keyspace holds the markers of every table, one entry per scope with the highest
//! timestamp deleted there (8 bytes, big-endian):
//!
//! `table keyspace name 00 | row prefix (cellkey) | 00` for the whole row,
//! `... | 01 family index` for a family, `... | 02 family index escape(qualifier) 00 01` for
//! a column. A one-version delete hides puts at exactly its timestamp, so its marker holds
//! the timestamp in its key (its value is empty): `... | 03 family index escape(qualifier)
//! 00 01 | ts` for a column's version, `... | 04 family index | ts` for a family's.
//!
//! A table's keyspace name is never reused, so a dropped table's markers cannot hide a new
//! table's puts; `delete_table` removes them all the same.

use super::cellkey;
use fjall::{Keyspace, OwnedWriteBatch, UserKey};
use std::collections::{BTreeMap, BTreeSet, HashSet};
use std::sync::RwLock;

/// The keyspace of the markers.
pub const KEYSPACE: &str = "tallrow_markers";

/// What a marker covers; rows are `cellkey::row_prefix` encoded, families by index.
pub enum Scope<'a> {
    /// Every column of the row.
    Row(&'a [u8]),
    /// Every column of one family of the row.
    Family(&'a [u8], u8),
    /// One column.
    Column(&'a [u8], u8, &'a [u8]),
    /// One version of one column.
    Version(&'a [u8], u8, &'a [u8], i64),
    /// One version of every column of a family.
    FamilyVersion(&'a [u8], u8, i64),
}

fn table_prefix(table: &str) -> Vec<u8> {
    let mut out = table.as_bytes().to_vec();
    out.push(0);
    out
}

fn key(table: &str, scope: &Scope) -> Vec<u8> {
    let mut out = table_prefix(table);
    match scope {
        Scope::Row(row) => {
            out.extend_from_slice(row);
            out.push(0);
        }
        Scope::Family(row, family) => {
            out.extend_from_slice(row);
            out.extend_from_slice(&[1, *family]);
        }
        Scope::Column(row, family, qualifier) => {
            out.extend_from_slice(row);
            out.extend_from_slice(&[2, *family]);
            cellkey::push_escaped(qualifier, &mut out);
        }
        Scope::Version(row, family, qualifier, ts) => {
            out.extend_from_slice(row);
            out.extend_from_slice(&[3, *family]);
            cellkey::push_escaped(qualifier, &mut out);
            out.extend_from_slice(&ts.to_be_bytes());
        }
        Scope::FamilyVersion(row, family, ts) => {
            out.extend_from_slice(row);
            out.extend_from_slice(&[4, *family]);
            out.extend_from_slice(&ts.to_be_bytes());
        }
    }
    out
}

/// Whether `table` has any marker.
pub fn any(markers: &Keyspace, table: &str) -> fjall::Result<bool> {
    match markers.prefix(table_prefix(table)).next() {
        Some(guard) => guard.key().map(|_| true),
        None => Ok(false),
    }
}

/// Every marker key of `table`.
pub fn keys_of(markers: &Keyspace, table: &str) -> impl Iterator<Item = fjall::Result<UserKey>> {
    markers.prefix(table_prefix(table)).map(|g| g.key())
}

/// Fingerprints of the rows (table and row prefix) that have a marker: a put into a row
/// without one needs no read of the markers keyspace, where otherwise it made five point
/// reads (a third of the CPU of a publish into inboxes that unfollows had marked). Read
/// from the keyspace at open and added to before each batch that raises a marker commits;
/// a fingerprint shared by chance only costs those reads.
#[derive(Default)]
pub struct Rows(RwLock<HashSet<u64>>);

/// FNV-1a over the table's keyspace name and the row prefix.
fn fingerprint(table: &str, row: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in table.as_bytes().iter().chain([0u8].iter()).chain(row) {
        h = (h ^ b as u64).wrapping_mul(0x0100_0000_01b3);
    }
    h
}

impl Rows {
    /// The rows of every marker in `markers`.
    pub fn load(markers: &Keyspace) -> fjall::Result<Rows> {
        let mut set = HashSet::new();
        for guard in markers.iter() {
            let key = guard.key()?;
            // `table 00 | row prefix | ...`; a key that does not parse is skipped, which only
            // costs lookups if it is ever a real marker.
            let Some(end) = key.iter().position(|&b| b == 0) else {
                continue;
            };
            if let Some(row_end) = cellkey::escaped_end(&key, end + 1) {
                let table = String::from_utf8_lossy(&key[..end]);
                set.insert(fingerprint(&table, &key[end + 1..row_end]));
            }
        }
        Ok(Rows(RwLock::new(set)))
    }

    fn may_have(&self, table: &str, row: &[u8]) -> bool {
        self.0.read().expect("lock").contains(&fingerprint(table, row))
    }

    fn add(&self, table: &str, row: &[u8]) {
        self.0.write().expect("lock").insert(fingerprint(table, row));
    }
}

/// The markers one batch reads and raises: the committed ones, and those raised earlier in
/// the same batch.
pub struct Pending<'a> {
    markers: &'a Keyspace,
    rows: &'a Rows,
    table: &'a str,
    committed: bool,
    raised: BTreeMap<Vec<u8>, i64>,
    versions: BTreeSet<Vec<u8>>,
    /// Rows this batch raises markers in.
    marked: Vec<Vec<u8>>,
}

impl<'a> Pending<'a> {
    /// `committed` says whether the table may have markers on disk.
    pub fn new(markers: &'a Keyspace, rows: &'a Rows, table: &'a str, committed: bool) -> Self {
        Pending {
            markers,
            rows,
            table,
            committed,
            raised: BTreeMap::new(),
            versions: BTreeSet::new(),
            marked: Vec::new(),
        }
    }

    /// The marker at `key`, raised in this batch or, when `committed`, in the store.
    fn marker(&self, key: &[u8], committed: bool) -> fjall::Result<Option<i64>> {
        if let Some(ts) = self.raised.get(key) {
            return Ok(Some(*ts));
        }
        if !committed {
            return Ok(None);
        }
        Ok(self.markers.get(key)?.and_then(|v| {
            let bytes: [u8; 8] = v.as_ref().try_into().ok()?;
            Some(i64::from_be_bytes(bytes))
        }))
    }

    /// Whether a one-version marker exists at `key`.
    fn version_marker(&self, key: &[u8], committed: bool) -> fjall::Result<bool> {
        if self.versions.contains(key) {
            return Ok(true);
        }
        Ok(committed && self.markers.contains_key(key)?)
    }

    /// Whether a put of the column at `ts` is hidden by a marker of its row, family or
    /// column, or by a one-version marker of the column or family at `ts`.
    pub fn hides(&self, row: &[u8], family: u8, qualifier: &[u8], ts: i64) -> fjall::Result<bool> {
        let committed = self.committed && self.rows.may_have(self.table, row);
        if !committed && self.raised.is_empty() && self.versions.is_empty() {
            return Ok(false);
        }
        for scope in [
            Scope::Row(row),
            Scope::Family(row, family),
            Scope::Column(row, family, qualifier),
        ] {
            if self
                .marker(&key(self.table, &scope), committed)?
                .is_some_and(|m| ts <= m)
            {
                return Ok(true);
            }
        }
        for scope in [
            Scope::Version(row, family, qualifier, ts),
            Scope::FamilyVersion(row, family, ts),
        ] {
            if self.version_marker(&key(self.table, &scope), committed)? {
                return Ok(true);
            }
        }
        Ok(false)
    }

    /// Records a delete at `ts` over `scope`.
    pub fn raise(&mut self, scope: Scope, ts: i64) -> fjall::Result<()> {
        let key = key(self.table, &scope);
        let row = match scope {
            Scope::Row(r)
            | Scope::Family(r, _)
            | Scope::Column(r, ..)
            | Scope::Version(r, ..)
            | Scope::FamilyVersion(r, ..) => r,
        };
        self.marked.push(row.to_vec());
        if matches!(scope, Scope::Version(..) | Scope::FamilyVersion(..)) {
            self.versions.insert(key);
            return Ok(());
        }
        if self.marker(&key, self.committed)?.is_none_or(|m| ts > m) {
            self.raised.insert(key, ts);
        }
        Ok(())
    }

    /// Adds the raised markers to `batch`, and their rows to the rows with markers (before
    /// the batch commits, so that a put racing it looks its markers up); returns whether
    /// there were any.
    pub fn write_into(self, batch: &mut OwnedWriteBatch) -> bool {
        let any = !self.raised.is_empty() || !self.versions.is_empty();
        for row in &self.marked {
            self.rows.add(self.table, row);
        }
        for (key, ts) in self.raised {
            batch.insert(self.markers, key, ts.to_be_bytes().to_vec());
        }
        for key in self.versions {
            batch.insert(self.markers, key, Vec::new());
        }
        any
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exact_bytes() {
        let row = cellkey::row_prefix(b"r\x00");
        assert_eq!(key("t3", &Scope::Row(&row)), b"t3\x00r\x00\xff\x00\x01\x00");
        assert_eq!(key("t3", &Scope::Family(&row, 7)), b"t3\x00r\x00\xff\x00\x01\x01\x07");
        assert_eq!(
            key("t3", &Scope::Column(&row, 7, b"q")),
            b"t3\x00r\x00\xff\x00\x01\x02\x07q\x00\x01"
        );
        assert_eq!(
            key("t3", &Scope::Version(&row, 7, b"q", 258)),
            b"t3\x00r\x00\xff\x00\x01\x03\x07q\x00\x01\0\0\0\0\0\0\x01\x02"
        );
        assert_eq!(
            key("t3", &Scope::FamilyVersion(&row, 7, 258)),
            b"t3\x00r\x00\xff\x00\x01\x04\x07\0\0\0\0\0\0\x01\x02"
        );
    }

    /// Every kind of marker still hides a later, older put after the store is reopened (the
    /// rows with markers are read back), and only in its own row.
    #[test]
    fn markers_hide_later_puts_across_a_reopen() {
        use super::super::Embedded;
        use crate::store::{Get, Mutation, RowMutation, Store, TableDescriptor};
        let dir = tempfile::tempdir().unwrap();
        let deletes = [
            ("row\0", Mutation::DeleteRow { timestamp: Some(10) }),
            (
                "family\0\x01",
                Mutation::DeleteFamily {
                    family: "f".into(),
                    timestamp: Some(10),
                },
            ),
            (
                "column",
                Mutation::DeleteColumn {
                    family: "f".into(),
                    qualifier: b"q".to_vec(),
                    timestamp: Some(10),
                },
            ),
            (
                "version",
                Mutation::DeleteVersion {
                    family: "f".into(),
                    qualifier: b"q".to_vec(),
                    timestamp: 5,
                },
            ),
            (
                "famver",
                Mutation::DeleteFamilyVersion {
                    family: "f".into(),
                    timestamp: 5,
                },
            ),
        ];
        {
            let store = Embedded::open(dir.path()).unwrap();
            store.create_table(&TableDescriptor::new("t", &["f"], 3)).unwrap();
            for (row, d) in &deletes {
                store.mutate("t", &[RowMutation::new(*row, vec![d.clone()])]).unwrap();
            }
        }
        let store = Embedded::open(dir.path()).unwrap();
        for (row, _) in &deletes {
            // The same put in this row is hidden; in a row that is a prefix or an extension
            // of it, it is not.
            for (r, hidden) in [
                (row.to_string(), true),
                (format!("{row}x"), false),
                (row[..row.len() - 1].to_string(), false),
            ] {
                store
                    .mutate(
                        "t",
                        &[RowMutation::new(r.as_str(), vec![Mutation::put("f", "q", 5, "v")])],
                    )
                    .unwrap();
                let got = store.get("t", &[Get::new(r.as_str())]).unwrap().pop().unwrap();
                assert_eq!(got.is_none(), hidden, "{r:?}");
            }
        }
    }
}
