//! Drops the versions of a column past its family's `VERSIONS` when fjall compacts a table,
//! as HBase drops them when it flushes and compacts a store. Until then every version is
//! kept, and reads count versions among the cells inside their time range (HBase before a
//! flush). Without it, a column that is written again and again (an inbox) keeps every
//! version it was ever given, and each read of it walks them all.
//!
//! A compaction sees the cells of the tables it merges, newest version of a column first;
//! tombstones are not shown to the filter, so a deleted cell is not counted. Versions in
//! tables outside the compaction are not counted either, so a compaction may keep more
//! than `VERSIONS`, never fewer.

use super::cellkey;
use fjall::compaction::filter::{CompactionFilter, Context, Factory, ItemAccessor, Verdict};
use std::collections::HashMap;
use std::sync::{Arc, RwLock};

/// `VERSIONS` of each family (by family index), per keyspace name.
pub(super) type Versions = Arc<RwLock<HashMap<String, Vec<u32>>>>;

/// Makes the filter of each compaction of one keyspace.
pub(super) struct Pruning {
    pub keyspace: String,
    pub versions: Versions,
}

impl Factory for Pruning {
    fn name(&self) -> &str {
        "tallrow-versions"
    }

    fn make_filter(&self, _: &Context) -> Box<dyn CompactionFilter> {
        let versions = self
            .versions
            .read()
            .map(|v| v.get(&self.keyspace).cloned())
            .unwrap_or(None);
        Box::new(Prune {
            versions,
            column: Vec::new(),
            seen: 0,
            last_key: Vec::new(),
            last_removed: false,
        })
    }
}

struct Prune {
    /// `None` for a keyspace that is not a table's (or one being dropped): keep everything.
    versions: Option<Vec<u32>>,
    /// The column (the key without its timestamp) being counted, and its versions so far.
    column: Vec<u8>,
    seen: usize,
    /// The last key decided: an older sequence number of the same cell (kept for a
    /// snapshot) gets the same verdict and does not count as another version.
    last_key: Vec<u8>,
    last_removed: bool,
}

impl CompactionFilter for Prune {
    fn filter_item(
        &mut self,
        item: ItemAccessor<'_>,
        _: &Context,
    ) -> fjall::compaction::filter::CompactionFilterResult {
        let Some(versions) = &self.versions else {
            return Ok(Verdict::Keep);
        };
        let key: &[u8] = item.key();
        if key == self.last_key.as_slice() {
            return Ok(if self.last_removed {
                Verdict::Remove
            } else {
                Verdict::Keep
            });
        }
        self.last_key.clear();
        self.last_key.extend_from_slice(key);
        self.last_removed = false;
        let Some(family) = cellkey::escaped_end(key, 0).filter(|&f| f < key.len().saturating_sub(8)) else {
            return Ok(Verdict::Keep);
        };
        let column = &key[..key.len() - 8];
        if column != self.column.as_slice() {
            self.column.clear();
            self.column.extend_from_slice(column);
            self.seen = 0;
        }
        self.seen += 1;
        let keep = versions
            .get(key[family] as usize)
            .is_none_or(|&v| self.seen <= v as usize);
        self.last_removed = !keep;
        Ok(if keep { Verdict::Keep } else { Verdict::Remove })
    }
}

#[cfg(test)]
mod tests {
    use super::super::Embedded;
    use super::*;
    use crate::store::{Get, Mutation, RowMutation, Store, TableDescriptor};

    fn versions(store: &Embedded, row: &str, range: (i64, i64)) -> Vec<(String, Vec<u8>, i64)> {
        let mut g = Get::new(row).versions(100);
        g.select.time_range = Some(range);
        let got = store.get("t", &[g]).unwrap().pop().unwrap();
        got.map(|r| {
            r.cells
                .into_iter()
                .map(|c| (c.family, c.qualifier, c.timestamp))
                .collect()
        })
        .unwrap_or_default()
    }

    #[test]
    fn family_byte_follows_the_escaped_row() {
        assert_eq!(cellkey::escaped_end(&[b'a', 0, 1, 7], 0), Some(3));
        assert_eq!(cellkey::escaped_end(&[0, 0xFF, 0, 1, 7], 0), Some(4));
        assert_eq!(cellkey::escaped_end(&[0, 0xFF, 0], 0), None);
        assert_eq!(cellkey::escaped_end(&[], 0), None);
    }

    #[test]
    fn a_compaction_drops_the_versions_past_versions() {
        let dir = tempfile::tempdir().unwrap();
        let cell = |f: &str, q: &str, ts: i64| (f.to_string(), q.as_bytes().to_vec(), ts);
        {
            let store = Embedded::open(dir.path()).unwrap();
            // b keeps one version.
            let mut desc = TableDescriptor::new("t", &["a", "b"], 2);
            desc.families[1].max_versions = 1;
            store.create_table(&desc).unwrap();
            for ts in 1..=5 {
                let row = |r: &str| {
                    RowMutation::new(
                        r,
                        vec![
                            Mutation::put("a", "q", ts, "v"),
                            Mutation::put("b", "q", ts, "v"),
                            Mutation::put("a", "\0", ts, "v"),
                        ],
                    )
                };
                store.mutate("t", &[row("r"), row("r\0")]).unwrap();
            }
            // Before a flush, a time-range read still finds the older versions.
            assert_eq!(
                versions(&store, "r", (0, 3)),
                [
                    cell("a", "\0", 2),
                    cell("a", "\0", 1),
                    cell("a", "q", 2),
                    cell("a", "q", 1),
                    cell("b", "q", 2)
                ]
            );
            store.compact("t").unwrap();
            for row in ["r", "r\0"] {
                assert_eq!(versions(&store, row, (0, 3)), [], "{row:?}");
                assert_eq!(
                    versions(&store, row, (0, 100)),
                    [
                        cell("a", "\0", 5),
                        cell("a", "\0", 4),
                        cell("a", "q", 5),
                        cell("a", "q", 4),
                        cell("b", "q", 5)
                    ]
                );
            }
        }
        // Reopened, the keyspace gets its filter again.
        let store = Embedded::open(dir.path()).unwrap();
        store
            .mutate("t", &[RowMutation::new("r", vec![Mutation::put("a", "q", 9, "v")])])
            .unwrap();
        store.compact("t").unwrap();
        assert_eq!(
            versions(&store, "r", (0, 100))[2..4],
            [cell("a", "q", 9), cell("a", "q", 5)]
        );
        assert_eq!(versions(&store, "r", (0, 100)).len(), 5);
    }
}
