//! Gets: selections from column lists and time bounds, cells and row results.

use super::*;

impl State {
    pub(super) fn read(&self, table: &[u8], gets: Vec<Get>) -> R<Vec<Option<Row>>> {
        let (desc, state) = self.tables.data_table(table)?;
        let ttls = Tables::ttls(&state);
        let rows = self.store.get(&desc.name, &gets).map_err(store_error)?;
        Ok(rows
            .into_iter()
            .map(|r| {
                r.and_then(|mut r| {
                    Tables::expire(&ttls, &mut r.cells);
                    (!r.cells.is_empty()).then_some(r)
                })
            })
            .collect())
    }

    pub(super) fn selection(columns: Option<&[Text]>, timestamp: i64, versions: u32) -> R<Selection> {
        Ok(Selection {
            columns: match columns {
                Some(c) => self::columns(c)?,
                None => Vec::new(),
            },
            max_versions: versions,
            time_range: (timestamp != LATEST).then_some((0, timestamp.max(0))),
            ..Selection::default()
        })
    }

    pub(super) fn cells(&self, table: &[u8], row: Text, column: &[u8], timestamp: i64, versions: i32) -> R<Vec<TCell>> {
        if versions <= 0 {
            return Err(io_error(format!("{DO_NOT_RETRY}: maxVersions must be positive")));
        }
        let select = Self::selection(Some(&[column.to_vec()]), timestamp, versions as u32)?;
        let row = self.read(table, vec![Get { row, select }])?.pop().flatten();
        Ok(row.map_or_else(Vec::new, |r| r.cells.into_iter().map(tcell).collect()))
    }

    pub(super) fn rows(
        &self,
        table: &[u8],
        rows: Vec<Text>,
        columns: Option<Vec<Text>>,
        timestamp: i64,
    ) -> R<Vec<TRowResult>> {
        let select = Self::selection(columns.as_deref(), timestamp, 1)?;
        let gets = rows
            .into_iter()
            .map(|row| Get {
                row,
                select: select.clone(),
            })
            .collect();
        Ok(self
            .read(table, gets)?
            .into_iter()
            .flatten()
            .map(|r| row_result(r, false))
            .collect())
    }
}
