//! A store whose tables carry a prefix (`storage.table_prefix`), so that workloads sharing one
//! cluster keep apart: above it every name is the schema's (`weibo:inbox`, `useractions`),
//! below it the prefix leads the table's qualifier, after any namespace (`weibo:t1_inbox`,
//! `t1_useractions`). Tables without the prefix are not listed through it. Errors and the
//! store's own events name the tables as the cluster does.

use super::{BulkLoad, Error, Get, HFileRegion, Result, Row, RowMutation, Scan, Store, TableDescriptor};
use std::sync::Arc;

/// Longest prefix: HBase allows longer names, Bigtable's table ids stop at 50 characters.
pub const MAX_PREFIX: usize = 20;

/// Why `prefix` cannot lead a table's name, if it cannot: HBase's and Bigtable's rules for a
/// table's qualifier, of which the prefix is the start.
pub fn check_prefix(prefix: &str) -> std::result::Result<(), String> {
    if prefix.len() > MAX_PREFIX {
        return Err(format!(
            "{prefix:?} is {} characters: at most {MAX_PREFIX}",
            prefix.len()
        ));
    }
    if prefix.starts_with('.') || prefix.starts_with('-') {
        return Err(format!("{prefix:?}: a table's name cannot start with '.' or '-'"));
    }
    if !prefix
        .bytes()
        .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-' || b == b'.')
    {
        return Err(format!(
            "{prefix:?}: a table's name holds letters, digits, '_', '-' and '.' only"
        ));
    }
    Ok(())
}

/// `table` as the cluster names it under `prefix`: the prefix before the qualifier.
pub fn physical(prefix: &str, table: &str) -> String {
    match table.split_once(':') {
        Some(("default", q)) => format!("{prefix}{q}"),
        Some((ns, q)) => format!("{ns}:{prefix}{q}"),
        None => format!("{prefix}{table}"),
    }
}

/// The schema's name of a table the cluster names `table`, if it carries `prefix`.
pub fn logical(prefix: &str, table: &str) -> Option<String> {
    match table.split_once(':') {
        Some(("default", q)) => q.strip_prefix(prefix).map(str::to_string),
        Some((ns, q)) => q.strip_prefix(prefix).map(|q| format!("{ns}:{q}")),
        None => table.strip_prefix(prefix).map(str::to_string),
    }
    .filter(|q| !q.is_empty() && !q.ends_with(':'))
}

/// `inner` with its tables under `prefix`; `inner` itself when the prefix is empty.
pub fn over(inner: Arc<dyn Store>, prefix: &str) -> Arc<dyn Store> {
    if prefix.is_empty() {
        inner
    } else {
        Arc::new(Prefixed {
            inner,
            prefix: prefix.to_string(),
        })
    }
}

/// A store with its tables' names prefixed.
pub struct Prefixed {
    inner: Arc<dyn Store>,
    prefix: String,
}

impl Prefixed {
    fn name(&self, table: &str) -> String {
        physical(&self.prefix, table)
    }

    /// A descriptor the inner store returned, named as the schema names it.
    fn unnamed(&self, mut d: TableDescriptor) -> TableDescriptor {
        if let Some(l) = logical(&self.prefix, &d.name) {
            d.name = l;
        }
        d
    }
}

impl Store for Prefixed {
    fn identity(&self) -> String {
        format!("{}, tables prefixed {:?}", self.inner.identity(), self.prefix)
    }

    fn target(&self) -> String {
        format!("{}, tables prefixed {:?}", self.inner.target(), self.prefix)
    }

    fn version(&self) -> String {
        self.inner.version()
    }

    fn retries(&self) -> Vec<(String, u64)> {
        self.inner.retries()
    }

    fn take_events(&self) -> Vec<crate::observe::events::Event> {
        self.inner.take_events()
    }

    fn in_flight(&self) -> usize {
        self.inner.in_flight()
    }

    fn clock(&self) -> Option<Arc<dyn crate::clock::Clock>> {
        self.inner.clock()
    }

    fn set_consistency(&self, consistency: crate::store::Consistency) -> Result<()> {
        self.inner.set_consistency(consistency)
    }

    fn create_table(&self, table: &TableDescriptor) -> Result<()> {
        let mut t = table.clone();
        t.name = self.name(&table.name);
        self.inner.create_table(&t)
    }

    fn delete_table(&self, table: &str) -> Result<()> {
        self.inner.delete_table(&self.name(table))
    }

    fn list_tables(&self) -> Result<Vec<TableDescriptor>> {
        let mut out: Vec<TableDescriptor> = self
            .inner
            .list_tables()?
            .into_iter()
            .filter(|d| logical(&self.prefix, &d.name).is_some())
            .map(|d| self.unnamed(d))
            .collect();
        out.sort_by(|a, b| a.name.cmp(&b.name));
        Ok(out)
    }

    fn describe_table(&self, table: &str) -> Result<TableDescriptor> {
        Ok(self.unnamed(self.inner.describe_table(&self.name(table))?))
    }

    fn regions(&self, table: &str) -> Result<Vec<Vec<u8>>> {
        self.inner.regions(&self.name(table))
    }

    fn mutate(&self, table: &str, rows: &[RowMutation]) -> Result<()> {
        self.inner.mutate(&self.name(table), rows)
    }

    fn get(&self, table: &str, gets: &[Get]) -> Result<Vec<Option<Row>>> {
        self.inner.get(&self.name(table), gets)
    }

    fn scan(&self, table: &str, scan: &Scan) -> Result<Vec<Row>> {
        self.inner.scan(&self.name(table), scan)
    }

    fn scan_each(&self, table: &str, scan: &Scan, page: usize, visit: &mut dyn FnMut(Row) -> bool) -> Result<()> {
        self.inner.scan_each(&self.name(table), scan, page, visit)
    }

    fn row_count(&self, table: &str) -> Result<u64> {
        self.inner.row_count(&self.name(table))
    }

    fn bulk_load(&self, tables: &[&str]) -> Result<Option<Box<dyn BulkLoad>>> {
        let names: Vec<String> = tables.iter().map(|t| self.name(t)).collect();
        let names: Vec<&str> = names.iter().map(String::as_str).collect();
        Ok(self.inner.bulk_load(&names)?.map(|inner| {
            Box::new(PrefixedBulk {
                inner,
                prefix: self.prefix.clone(),
            }) as Box<dyn BulkLoad>
        }))
    }

    fn flush(&self, tables: &[&str]) -> Result<()> {
        let names: Vec<String> = tables.iter().map(|t| self.name(t)).collect();
        self.inner.flush(&names.iter().map(String::as_str).collect::<Vec<_>>())
    }

    fn loads_hfiles(&self) -> bool {
        self.inner.loads_hfiles()
    }

    fn load_hfiles(&self, table: &str, regions: &[HFileRegion]) -> Result<()> {
        self.inner.load_hfiles(&self.name(table), regions)
    }

    fn resume_bulk_load(&self, tables: &[&str], state: &serde_json::Value) -> Result<Box<dyn BulkLoad>> {
        let names: Vec<String> = tables.iter().map(|t| self.name(t)).collect();
        let names: Vec<&str> = names.iter().map(String::as_str).collect();
        Ok(Box::new(PrefixedBulk {
            inner: self.inner.resume_bulk_load(&names, state)?,
            prefix: self.prefix.clone(),
        }))
    }
}

/// A bulk load of prefixed tables.
struct PrefixedBulk {
    inner: Box<dyn BulkLoad>,
    prefix: String,
}

impl BulkLoad for PrefixedBulk {
    fn covers(&self, table: &str) -> bool {
        self.inner.covers(&physical(&self.prefix, table))
    }

    fn add(&self, table: &str, rows: &[RowMutation]) -> Result<()> {
        self.inner.add(&physical(&self.prefix, table), rows)
    }

    fn finish(&self) -> Result<Vec<(String, u64)>> {
        self.inner
            .finish()?
            .into_iter()
            .map(|(t, n)| match logical(&self.prefix, &t) {
                Some(l) => Ok((l, n)),
                None => Err(Error::Io(format!(
                    "the bulk load wrote table {t}, which lacks the prefix {:?}",
                    self.prefix
                ))),
            })
            .collect()
    }

    fn checkpoint(&self) -> Result<Option<serde_json::Value>> {
        self.inner.checkpoint()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::Mutation;
    use crate::store::memory::Memory;

    #[test]
    fn the_prefix_leads_the_qualifier_after_any_namespace() {
        assert_eq!(physical("t1_", "weibo:inbox"), "weibo:t1_inbox");
        assert_eq!(physical("t1_", "useractions"), "t1_useractions");
        assert_eq!(physical("t1_", "default:blog"), "t1_blog");
        assert_eq!(logical("t1_", "weibo:t1_inbox").as_deref(), Some("weibo:inbox"));
        assert_eq!(logical("t1_", "t1_useractions").as_deref(), Some("useractions"));
        assert_eq!(logical("t1_", "default:t1_blog").as_deref(), Some("blog"));
        for other in ["useractions", "weibo:inbox", "t2_series", "t1_", "weibo:t1_", "x:t1"] {
            assert_eq!(logical("t1_", other), None, "{other}");
        }
        assert!(check_prefix("t1_").is_ok() && check_prefix("a.b-c").is_ok() && check_prefix("").is_ok());
        assert!(check_prefix("-x").unwrap_err().contains("cannot start with"));
        assert!(check_prefix("a:b").unwrap_err().contains("letters, digits"));
        assert!(
            check_prefix(&"x".repeat(MAX_PREFIX + 1))
                .unwrap_err()
                .contains("at most 20")
        );
    }

    /// Two prefixes over one store see only their own tables, by the schema's names, and
    /// the store below holds them under the prefixed names.
    #[test]
    fn two_prefixes_on_one_store_keep_apart() {
        let below: Arc<dyn Store> = Arc::new(Memory::new());
        below
            .create_table(&TableDescriptor::new("weibo:inbox", &["f"], 1))
            .unwrap();
        let a = over(below.clone(), "a_");
        let b = over(below.clone(), "b_");
        assert!(Arc::ptr_eq(&over(below.clone(), ""), &below));
        for s in [&a, &b] {
            s.create_table(&TableDescriptor::new("weibo:inbox", &["f"], 3)).unwrap();
            s.create_table(&TableDescriptor::new("useractions", &["f"], 1)).unwrap();
        }
        let put = |v: &str| RowMutation::new(b"k".to_vec(), vec![Mutation::put("f", b"q", 1, v.as_bytes().to_vec())]);
        a.mutate("weibo:inbox", &[put("a")]).unwrap();
        b.mutate("weibo:inbox", &[put("b")]).unwrap();
        let names = |s: &Arc<dyn Store>| s.list_tables().unwrap().into_iter().map(|d| d.name).collect::<Vec<_>>();
        assert_eq!(names(&a), ["useractions", "weibo:inbox"]);
        assert_eq!(names(&b), ["useractions", "weibo:inbox"]);
        assert_eq!(
            names(&below),
            [
                "a_useractions",
                "b_useractions",
                "weibo:a_inbox",
                "weibo:b_inbox",
                "weibo:inbox"
            ]
        );
        let value = |s: &Arc<dyn Store>| s.get("weibo:inbox", &[Get::new(b"k".to_vec())]).unwrap()[0].clone();
        assert_eq!(value(&a).unwrap().cells[0].value, b"a");
        assert_eq!(value(&b).unwrap().cells[0].value, b"b");
        assert_eq!(value(&below), None);
        assert_eq!(a.describe_table("weibo:inbox").unwrap().name, "weibo:inbox");
        assert_eq!(a.describe_table("weibo:inbox").unwrap().families[0].max_versions, 3);
        a.delete_table("weibo:inbox").unwrap();
        assert_eq!(names(&a), ["useractions"]);
        assert_eq!(names(&b), ["useractions", "weibo:inbox"]);
        assert!(a.identity().ends_with("tables prefixed \"a_\""), "{}", a.identity());
        match a.scan("weibo:inbox", &Scan::default()) {
            Err(Error::TableNotFound(t)) => assert_eq!(t, "weibo:a_inbox"),
            other => panic!("{other:?}"),
        }
    }
}
