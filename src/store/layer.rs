//! Stores over stores: a [`Layer`] sees the data calls of the store it wraps (before each
//! goes in, the rows a write wrote, the rows a read returned) and [`Layered`] forwards every
//! call as it is otherwise, so that a layer writes only what it changes. The run's region
//! counts ([`super::counted::RegionCounts`]) and `delay:` ([`super::delay::Delay`])
//! are layers.

use super::{BulkLoad, Get, Result, Row, RowMutation, Scan, Store, TableDescriptor, scan_pages};
use std::sync::Arc;

/// What a layer adds to the calls of the store under it; every hook does nothing unless
/// the layer says otherwise.
pub trait Layer: Send + Sync {
    /// The identity of the layered store, given the inner one's.
    fn identity(&self, inner: String) -> String {
        inner
    }

    /// The clock the layer's store is timed by, if the layer has its own.
    fn clock(&self) -> Option<Arc<dyn crate::clock::Clock>> {
        None
    }

    /// Before each data call (`mutate`, `get`, `scan`) goes to the inner store.
    fn before(&self) {}

    /// After the inner store acknowledged `rows`: a failed batch wrote nothing.
    fn wrote(&self, table: &str, rows: &[RowMutation]) {
        let _ = (table, rows);
    }

    /// The rows a read returned, as it returned them.
    fn read(&self, table: &str, rows: &mut dyn Iterator<Item = &Row>) {
        let _ = (table, rows);
    }

    /// Whether `scan_each` goes to the inner store as pages of `scan` calls, each one seen by
    /// [`Layer::before`] (a layer that stands for a cost per call), rather than as the
    /// inner store's own `scan_each`, whose rows [`Layer::read`] sees one at a time.
    fn per_page(&self) -> bool {
        false
    }
}

/// A store with a layer over it.
pub struct Layered<L> {
    /// The store under the layer.
    pub inner: Arc<dyn Store>,
    /// The layer.
    pub layer: L,
}

impl<L: Layer> Layered<L> {
    /// `layer` over `inner`.
    pub fn new(inner: Arc<dyn Store>, layer: L) -> Self {
        Layered { inner, layer }
    }
}

impl<L: Layer> Store for Layered<L> {
    fn identity(&self) -> String {
        self.layer.identity(self.inner.identity())
    }

    fn target(&self) -> String {
        self.inner.target()
    }

    fn version(&self) -> String {
        self.inner.version()
    }

    fn clock(&self) -> Option<Arc<dyn crate::clock::Clock>> {
        self.layer.clock().or_else(|| self.inner.clock())
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

    fn set_consistency(&self, consistency: crate::store::Consistency) -> Result<()> {
        self.inner.set_consistency(consistency)
    }

    fn create_table(&self, table: &TableDescriptor) -> Result<()> {
        self.inner.create_table(table)
    }

    fn delete_table(&self, table: &str) -> Result<()> {
        self.inner.delete_table(table)
    }

    fn list_tables(&self) -> Result<Vec<TableDescriptor>> {
        self.inner.list_tables()
    }

    fn describe_table(&self, table: &str) -> Result<TableDescriptor> {
        self.inner.describe_table(table)
    }

    fn regions(&self, table: &str) -> Result<Vec<Vec<u8>>> {
        self.inner.regions(table)
    }

    fn mutate(&self, table: &str, rows: &[RowMutation]) -> Result<()> {
        self.layer.before();
        self.inner.mutate(table, rows)?;
        self.layer.wrote(table, rows);
        Ok(())
    }

    fn get(&self, table: &str, gets: &[Get]) -> Result<Vec<Option<Row>>> {
        self.layer.before();
        let rows = self.inner.get(table, gets)?;
        self.layer.read(table, &mut rows.iter().flatten());
        Ok(rows)
    }

    fn scan(&self, table: &str, scan: &Scan) -> Result<Vec<Row>> {
        self.layer.before();
        let rows = self.inner.scan(table, scan)?;
        self.layer.read(table, &mut rows.iter());
        Ok(rows)
    }

    fn scan_each(&self, table: &str, scan: &Scan, page: usize, visit: &mut dyn FnMut(Row) -> bool) -> Result<()> {
        if self.layer.per_page() {
            return scan_pages(self, table, scan, page, visit);
        }
        self.inner.scan_each(table, scan, page, &mut |row| {
            self.layer.read(table, &mut std::iter::once(&row));
            visit(row)
        })
    }

    fn loads_hfiles(&self) -> bool {
        self.inner.loads_hfiles()
    }

    fn load_hfiles(&self, table: &str, regions: &[crate::store::HFileRegion]) -> Result<()> {
        self.layer.before();
        self.inner.load_hfiles(table, regions)
    }

    /// A bulk load goes around the layer, as it always has: what it writes is acknowledged
    /// only as a whole, at its end.
    fn bulk_load(&self, tables: &[&str]) -> Result<Option<Box<dyn BulkLoad>>> {
        let _ = tables;
        Ok(None)
    }
    fn flush(&self, tables: &[&str]) -> Result<()> {
        self.inner.flush(tables)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::memory::Memory;
    use crate::store::{Mutation, TableDescriptor};
    use std::sync::Mutex;

    /// A layer that records what it sees.
    #[derive(Default)]
    struct Seen(Mutex<Vec<String>>);

    impl Layer for Seen {
        fn before(&self) {
            self.0.lock().unwrap().push("before".into());
        }

        fn wrote(&self, table: &str, rows: &[RowMutation]) {
            self.0.lock().unwrap().push(format!("wrote {table} {}", rows.len()));
        }

        fn read(&self, table: &str, rows: &mut dyn Iterator<Item = &Row>) {
            let keys: Vec<String> = rows.map(|r| String::from_utf8_lossy(&r.key).into_owned()).collect();
            self.0.lock().unwrap().push(format!("read {table} {}", keys.join(",")));
        }
    }

    #[test]
    fn a_layer_sees_each_data_call_and_everything_else_passes_through() {
        let inner: Arc<dyn Store> = Arc::new(Memory::new());
        let s = Layered::new(inner.clone(), Seen::default());
        s.create_table(&TableDescriptor::new("t", &["f"], 1)).unwrap();
        let put = |k: &str| RowMutation::new(k.as_bytes().to_vec(), vec![Mutation::put("f", b"q", 1, b"v".to_vec())]);
        s.mutate("t", &[put("a"), put("b")]).unwrap();
        assert!(s.mutate("missing", &[put("c")]).is_err());
        s.get("t", &[Get::new(b"a".to_vec()), Get::new(b"z".to_vec())]).unwrap();
        s.scan("t", &Scan::default()).unwrap();
        let mut visited = 0;
        s.scan_each("t", &Scan::default(), 1, &mut |_| {
            visited += 1;
            true
        })
        .unwrap();
        assert_eq!(visited, 2);
        assert_eq!(s.identity(), inner.identity());
        assert_eq!(s.list_tables().unwrap(), inner.list_tables().unwrap());
        assert_eq!(
            *s.layer.0.lock().unwrap(),
            [
                "before",
                "wrote t 2",
                "before",
                "before",
                "read t a",
                "before",
                "read t a,b",
                "read t a",
                "read t b"
            ]
        );
    }
}
