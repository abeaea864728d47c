//! A backend that keeps table definitions and discards data: it validates every write and
//! returns nothing on reads. What a load or run costs without a store, for benchmarks.

use super::{
    Error, Get, Result, Row, RowMutation, Scan, Store, TableDescriptor, canonical_table_name, validate_mutations,
};
use std::collections::BTreeMap;
use std::sync::RwLock;

/// The discarding store.
#[derive(Default)]
pub struct Null {
    tables: RwLock<BTreeMap<String, TableDescriptor>>,
}

impl Null {
    /// A store without tables.
    pub fn new() -> Self {
        Self::default()
    }

    fn table(&self, table: &str) -> Result<TableDescriptor> {
        let name = canonical_table_name(table)?;
        let tables = self.tables.read().expect("lock");
        tables.get(&name).cloned().ok_or(Error::TableNotFound(name))
    }
}

impl Store for Null {
    fn identity(&self) -> String {
        "null (discards every write)".into()
    }

    fn create_table(&self, table: &TableDescriptor) -> Result<()> {
        let desc = table.validated()?;
        crate::store::one_copy(&desc, "null: keeps nothing to copy")?;
        let mut tables = self.tables.write().expect("lock");
        if tables.contains_key(&desc.name) {
            return Err(Error::TableExists(desc.name));
        }
        tables.insert(desc.name.clone(), desc);
        Ok(())
    }

    fn delete_table(&self, table: &str) -> Result<()> {
        let name = canonical_table_name(table)?;
        match self.tables.write().expect("lock").remove(&name) {
            Some(_) => Ok(()),
            None => Err(Error::TableNotFound(name)),
        }
    }

    fn list_tables(&self) -> Result<Vec<TableDescriptor>> {
        Ok(self.tables.read().expect("lock").values().cloned().collect())
    }

    fn describe_table(&self, table: &str) -> Result<TableDescriptor> {
        self.table(table)
    }

    fn mutate(&self, table: &str, rows: &[RowMutation]) -> Result<()> {
        validate_mutations(&self.table(table)?, rows)
    }

    fn get(&self, table: &str, gets: &[Get]) -> Result<Vec<Option<Row>>> {
        self.table(table)?;
        Ok(vec![None; gets.len()])
    }

    fn scan(&self, table: &str, _scan: &Scan) -> Result<Vec<Row>> {
        self.table(table)?;
        Ok(Vec::new())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::Mutation;

    #[test]
    fn validates_writes_and_keeps_nothing() {
        let s = Null::new();
        s.create_table(&TableDescriptor::new("t", &["f"], 1)).unwrap();
        let put = RowMutation::new(b"r".to_vec(), vec![Mutation::put("f", "q", 1, "v")]);
        s.mutate("t", std::slice::from_ref(&put)).unwrap();
        assert_eq!(s.get("t", &[Get::new(b"r".to_vec())]).unwrap(), vec![None]);
        assert!(s.scan("t", &Scan::default()).unwrap().is_empty());
        let bad = RowMutation::new(b"r".to_vec(), vec![Mutation::put("nope", "q", 1, "v")]);
        assert!(matches!(s.mutate("t", &[bad]), Err(Error::FamilyNotFound { .. })));
        assert!(matches!(s.mutate("u", &[put]), Err(Error::TableNotFound(_))));
    }
}
