//! The data model every backend speaks: HBase's tables, families, cells, mutations, gets and
//! scans (see "Store semantics" in the design).

use super::{Error, Result};

/// HBase's limit on a row key's length (`Short.MAX_VALUE`).
pub const MAX_ROW_LEN: usize = 32_767;

/// A column family and how many versions of a cell it keeps.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FamilyDescriptor {
    /// Family name (printable, no `:`).
    pub name: String,
    /// Most versions a read returns per column (HBase `VERSIONS`), at least 1.
    pub max_versions: u32,
    /// Codec, encoding, bloom filter, block size and TTL.
    pub storage: super::Storage,
}

impl FamilyDescriptor {
    /// A family keeping `versions` versions, with HBase's default storage settings.
    pub fn new(name: &str, versions: u32) -> Self {
        FamilyDescriptor {
            name: name.to_string(),
            max_versions: versions,
            storage: super::Storage::default(),
        }
    }
}

/// A table: its name (`namespace:table` or `table`) and its families.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TableDescriptor {
    /// Table name; the `default:` namespace is implied when none is given.
    pub name: String,
    /// Column families, at least one.
    pub families: Vec<FamilyDescriptor>,
    /// Split keys to create the table with, one region per gap: N keys give N + 1 regions.
    /// A backend that keeps descriptors itself (embedded, memory) reports them back; a remote
    /// one leaves them empty, and [`Store::regions`](super::Store::regions) reads where its
    /// regions actually begin.
    pub splits: Vec<Vec<u8>>,
    /// tallrow's own attributes of the table (keys starting `tallrow.`, as HBase keeps them
    /// among a table descriptor's `METADATA`), sorted by key: its mark ([`MARK_WORKLOAD`],
    /// [`MARK_DATA`]). A backend that keeps table attributes reports these back; attributes
    /// of other keys are left out.
    pub attributes: Vec<(String, String)>,
    /// Copies of each region HBase keeps (`REGION_REPLICATION`): 1, the primary alone, by
    /// default; more adds read-only secondaries on other servers. Only HBase keeps more
    /// than one ([`one_copy`]); a backend reading a table back reports what it keeps.
    pub region_replication: u32,
}

/// HBase's table attribute for [`TableDescriptor::region_replication`].
pub const REGION_REPLICATION: &str = "REGION_REPLICATION";

/// Refuses, in one line, a table of more than one copy per region on a backend that cannot
/// create it, saying `why`.
pub fn one_copy(table: &TableDescriptor, why: &str) -> Result<()> {
    if table.region_replication <= 1 {
        return Ok(());
    }
    Err(Error::BadArgument(format!(
        "table {}: storage.region_replication = {}: {why}; region replicas are HBase's, through api=native or api=thrift2",
        table.name, table.region_replication
    )))
}

/// What tallrow's own table attributes' keys start with.
pub const MARK_KEYS: &str = "tallrow.";
/// The attribute naming the workload that created a table.
pub const MARK_WORKLOAD: &str = "tallrow.workload";
/// The attribute holding the data digest of the workload that created a table.
pub const MARK_DATA: &str = "tallrow.data";

/// tallrow's mark of a table that workload `workload`, of data digest `data`, creates.
pub fn mark(workload: &str, data: &str) -> Vec<(String, String)> {
    vec![
        (MARK_DATA.to_string(), data.to_string()),
        (MARK_WORKLOAD.to_string(), workload.to_string()),
    ]
}

/// Most attributes a table descriptor takes.
const MAX_ATTRIBUTES: usize = 16;

/// Longest attribute key or value a table descriptor takes.
const MAX_ATTRIBUTE: usize = 1024;

impl TableDescriptor {
    /// A table with the given families, each keeping `versions` versions.
    pub fn new(name: &str, families: &[&str], versions: u32) -> Self {
        TableDescriptor {
            name: name.to_string(),
            families: families.iter().map(|f| FamilyDescriptor::new(f, versions)).collect(),
            splits: Vec::new(),
            attributes: Vec::new(),
            region_replication: 1,
        }
    }

    /// [`Self::region_replication`] as a table's attributes (HBase's own, by name) give it.
    pub fn replication_in<'a>(all: impl IntoIterator<Item = (&'a str, &'a str)>) -> u32 {
        all.into_iter()
            .find(|(k, _)| *k == REGION_REPLICATION)
            .and_then(|(_, v)| v.trim().parse().ok())
            .filter(|&n| n >= 1)
            .unwrap_or(1)
    }

    /// The attributes HBase creates the table with: tallrow's mark, and
    /// `REGION_REPLICATION` where more than one copy is asked for.
    pub fn hbase_attributes(&self) -> Vec<(String, String)> {
        let mut all = self.attributes.clone();
        if self.region_replication > 1 {
            all.push((REGION_REPLICATION.to_string(), self.region_replication.to_string()));
        }
        all
    }

    /// The value of tallrow's attribute `key`.
    pub fn attribute(&self, key: &str) -> Option<&str> {
        self.attributes.iter().find(|(k, _)| k == key).map(|(_, v)| v.as_str())
    }

    /// tallrow's attributes among `all`, sorted by key: what a backend reports back.
    pub fn own_attributes(all: impl IntoIterator<Item = (String, String)>) -> Vec<(String, String)> {
        let mut out: Vec<(String, String)> = all.into_iter().filter(|(k, _)| k.starts_with(MARK_KEYS)).collect();
        out.sort();
        out
    }

    /// The same table created with `splits`.
    pub fn with_splits(mut self, splits: Vec<Vec<u8>>) -> Self {
        self.splits = splits;
        self
    }

    /// The family named `name`.
    pub fn family(&self, name: &str) -> Option<&FamilyDescriptor> {
        self.families.iter().find(|f| f.name == name)
    }

    /// Checks names and limits and returns the canonical form: namespace `default` dropped,
    /// families sorted by name.
    pub fn validated(&self) -> Result<TableDescriptor> {
        let name = canonical_table_name(&self.name)?;
        if self.families.is_empty() {
            return Err(Error::BadArgument(format!(
                "table {name} needs at least one column family"
            )));
        }
        if self.families.len() > 255 {
            return Err(Error::BadArgument(format!(
                "table {name} has more than 255 column families"
            )));
        }
        let mut families = self.families.clone();
        families.sort_by(|a, b| a.name.cmp(&b.name));
        for pair in families.windows(2) {
            if pair[0].name == pair[1].name {
                return Err(Error::BadArgument(format!(
                    "table {name}: family {} is given twice",
                    pair[0].name
                )));
            }
        }
        for f in &families {
            validate_family_name(&f.name)?;
            if f.max_versions == 0 {
                return Err(Error::BadArgument(format!(
                    "family {}: VERSIONS must be at least 1",
                    f.name
                )));
            }
            f.storage
                .validate()
                .map_err(|e| Error::BadArgument(format!("table {name}, family {}: {e}", f.name)))?;
        }
        let mut splits = self.splits.clone();
        splits.sort();
        if splits.iter().any(Vec::is_empty) {
            return Err(Error::BadArgument(format!("table {name}: a split key is empty")));
        }
        if let Some(w) = splits.windows(2).find(|w| w[0] == w[1]) {
            return Err(Error::BadArgument(format!(
                "table {name}: split key {} is given twice",
                crate::keys::to_string_binary(&w[0])
            )));
        }
        if splits.len() > MAX_SPLITS {
            return Err(Error::BadArgument(format!(
                "table {name}: {} split keys, at most {MAX_SPLITS}",
                splits.len()
            )));
        }
        if let Some(k) = splits.iter().find(|k| k.len() > MAX_ROW_LEN) {
            return Err(Error::BadArgument(format!(
                "table {name}: a split key of {} bytes is longer than a row key may be",
                k.len()
            )));
        }
        let attributes = Self::own_attributes(self.attributes.iter().cloned());
        if attributes.len() != self.attributes.len() {
            return Err(Error::BadArgument(format!(
                "table {name}: an attribute's key does not start with {MARK_KEYS:?}"
            )));
        }
        if attributes.len() > MAX_ATTRIBUTES {
            return Err(Error::BadArgument(format!(
                "table {name}: {} attributes, at most {MAX_ATTRIBUTES}",
                attributes.len()
            )));
        }
        if let Some(w) = attributes.windows(2).find(|w| w[0].0 == w[1].0) {
            return Err(Error::BadArgument(format!(
                "table {name}: attribute {} is given twice",
                w[0].0
            )));
        }
        if let Some((k, _)) = attributes
            .iter()
            .find(|(k, v)| k.len() > MAX_ATTRIBUTE || v.len() > MAX_ATTRIBUTE)
        {
            return Err(Error::BadArgument(format!(
                "table {name}: attribute {k} is longer than {MAX_ATTRIBUTE} bytes"
            )));
        }
        if self.region_replication == 0 {
            return Err(Error::BadArgument(format!(
                "table {name}: a region replication of 0: at least 1 (the primary) is kept"
            )));
        }
        Ok(TableDescriptor {
            name,
            families,
            splits,
            attributes,
            region_replication: self.region_replication,
        })
    }
}

/// Most split keys a table is created with (regions less one).
pub const MAX_SPLITS: usize = 9_999;

/// Checks a table name as HBase's `TableName` does and drops an explicit `default:` namespace.
pub fn canonical_table_name(name: &str) -> Result<String> {
    let bad = |why: &str| Err(Error::BadArgument(format!("illegal table name {name:?}: {why}")));
    let (ns, qualifier) = match name.split_once(':') {
        Some((ns, q)) => (Some(ns), q),
        None => (None, name),
    };
    if let Some(ns) = ns
        && (ns.is_empty() || !ns.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_'))
    {
        return bad("namespaces are letters, digits and '_'");
    }
    if qualifier.is_empty() || qualifier.starts_with('.') || qualifier.starts_with('-') {
        return bad("a table name is not empty and does not start with '.' or '-'");
    }
    if !qualifier
        .bytes()
        .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-' || b == b'.')
    {
        return bad("table names are letters, digits, '_', '-' and '.'");
    }
    Ok(match ns {
        Some("default") | None => qualifier.to_string(),
        Some(ns) => format!("{ns}:{qualifier}"),
    })
}

fn validate_family_name(name: &str) -> Result<()> {
    if name.is_empty() || name.starts_with('.') || name.contains(':') || name.chars().any(char::is_control) {
        return Err(Error::BadArgument(format!(
            "illegal column family name {name:?}: not empty, no ':', no control characters, not starting with '.'"
        )));
    }
    Ok(())
}

/// One change to a row. A missing timestamp means the store's current time.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Mutation {
    /// Writes a cell; a cell with the same coordinates and timestamp is overwritten.
    Put {
        /// Family.
        family: String,
        /// Qualifier.
        qualifier: Vec<u8>,
        /// Version timestamp in ms.
        timestamp: Option<i64>,
        /// Value.
        value: Vec<u8>,
    },
    /// Removes every version of a column at or below the timestamp (HBase `addColumns`).
    DeleteColumn {
        /// Family.
        family: String,
        /// Qualifier.
        qualifier: Vec<u8>,
        /// Upper bound, inclusive.
        timestamp: Option<i64>,
    },
    /// Removes one version of a column: the cell at exactly the timestamp (HBase
    /// `addColumn` with a timestamp, Thrift2 `DELETE_COLUMN`).
    DeleteVersion {
        /// Family.
        family: String,
        /// Qualifier.
        qualifier: Vec<u8>,
        /// The version removed.
        timestamp: i64,
    },
    /// Removes every cell of a family at or below the timestamp.
    DeleteFamily {
        /// Family.
        family: String,
        /// Upper bound, inclusive.
        timestamp: Option<i64>,
    },
    /// Removes the cells of every column of a family at exactly the timestamp (HBase
    /// `addFamilyVersion`, Thrift2 `DELETE_FAMILY_VERSION`).
    DeleteFamilyVersion {
        /// Family.
        family: String,
        /// The version removed.
        timestamp: i64,
    },
    /// Removes every cell of the row at or below the timestamp.
    DeleteRow {
        /// Upper bound, inclusive.
        timestamp: Option<i64>,
    },
}

impl Mutation {
    /// A put with an explicit timestamp.
    pub fn put(family: &str, qualifier: impl Into<Vec<u8>>, timestamp: i64, value: impl Into<Vec<u8>>) -> Self {
        Mutation::Put {
            family: family.to_string(),
            qualifier: qualifier.into(),
            timestamp: Some(timestamp),
            value: value.into(),
        }
    }

    /// A put stamped with the store's current time.
    pub fn put_now(family: &str, qualifier: impl Into<Vec<u8>>, value: impl Into<Vec<u8>>) -> Self {
        Mutation::Put {
            family: family.to_string(),
            qualifier: qualifier.into(),
            timestamp: None,
            value: value.into(),
        }
    }

    /// Deletes all versions of a column (at or below now).
    pub fn delete_column(family: &str, qualifier: impl Into<Vec<u8>>) -> Self {
        Mutation::DeleteColumn {
            family: family.to_string(),
            qualifier: qualifier.into(),
            timestamp: None,
        }
    }

    /// Deletes the version of a column at exactly `timestamp`.
    pub fn delete_version(family: &str, qualifier: impl Into<Vec<u8>>, timestamp: i64) -> Self {
        Mutation::DeleteVersion {
            family: family.to_string(),
            qualifier: qualifier.into(),
            timestamp,
        }
    }

    /// Whether this removes versions at exactly its timestamp, not at or below it.
    pub fn is_version_delete(&self) -> bool {
        matches!(
            self,
            Mutation::DeleteVersion { .. } | Mutation::DeleteFamilyVersion { .. }
        )
    }

    /// The family this mutation names, if any.
    pub fn family(&self) -> Option<&str> {
        match self {
            Mutation::Put { family, .. }
            | Mutation::DeleteColumn { family, .. }
            | Mutation::DeleteVersion { family, .. }
            | Mutation::DeleteFamily { family, .. }
            | Mutation::DeleteFamilyVersion { family, .. } => Some(family),
            Mutation::DeleteRow { .. } => None,
        }
    }

    /// The explicit timestamp, if any.
    pub fn timestamp(&self) -> Option<i64> {
        match self {
            Mutation::Put { timestamp, .. }
            | Mutation::DeleteColumn { timestamp, .. }
            | Mutation::DeleteFamily { timestamp, .. }
            | Mutation::DeleteRow { timestamp } => *timestamp,
            Mutation::DeleteVersion { timestamp, .. } | Mutation::DeleteFamilyVersion { timestamp, .. } => {
                Some(*timestamp)
            }
        }
    }
}

/// The mutations of one row, applied in order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RowMutation {
    /// Row key.
    pub row: Vec<u8>,
    /// Changes, applied in order.
    pub mutations: Vec<Mutation>,
}

impl RowMutation {
    /// Cells and bytes: the key, and per mutation its family, qualifier, value and an 8-byte
    /// timestamp.
    pub fn size(&self) -> (u64, u64) {
        let mut bytes = self.row.len() as u64;
        for m in &self.mutations {
            bytes += 8 + match m {
                Mutation::Put {
                    family,
                    qualifier,
                    value,
                    ..
                } => family.len() + qualifier.len() + value.len(),
                Mutation::DeleteColumn { family, qualifier, .. }
                | Mutation::DeleteVersion { family, qualifier, .. } => family.len() + qualifier.len(),
                Mutation::DeleteFamily { family, .. } | Mutation::DeleteFamilyVersion { family, .. } => family.len(),
                Mutation::DeleteRow { .. } => 0,
            } as u64;
        }
        (self.mutations.len() as u64, bytes)
    }

    /// Mutations of `row`.
    pub fn new(row: impl Into<Vec<u8>>, mutations: Vec<Mutation>) -> Self {
        RowMutation {
            row: row.into(),
            mutations,
        }
    }
}

/// Checks a batch against a table before anything is applied, so that a bad batch changes nothing.
pub fn validate_mutations(table: &TableDescriptor, rows: &[RowMutation]) -> Result<()> {
    for rm in rows {
        validate_row_key(&rm.row)?;
        for m in &rm.mutations {
            if let Some(family) = m.family()
                && table.family(family).is_none()
            {
                return Err(Error::FamilyNotFound {
                    table: table.name.clone(),
                    family: family.to_string(),
                });
            }
            if let Some(ts) = m.timestamp()
                && ts < 0
            {
                return Err(Error::BadArgument(format!("timestamp {ts} is negative")));
            }
        }
    }
    Ok(())
}

/// Checks a row key's length.
pub fn validate_row_key(row: &[u8]) -> Result<()> {
    if row.is_empty() {
        return Err(Error::BadArgument("row key is empty".into()));
    }
    if row.len() > MAX_ROW_LEN {
        return Err(Error::BadArgument(format!(
            "row key is {} bytes, the limit is {MAX_ROW_LEN}",
            row.len()
        )));
    }
    Ok(())
}

/// A cell as reads return it.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Cell {
    /// Family.
    pub family: String,
    /// Qualifier.
    pub qualifier: Vec<u8>,
    /// Version timestamp in ms.
    pub timestamp: i64,
    /// Value.
    pub value: Vec<u8>,
}

/// Sorts cells in the store's order: by family and qualifier, newest version first. (As
/// family names, "a" comes before "a1", though "a1:" sorts before "a:" as bytes.)
pub fn sort_cells(cells: &mut [Cell]) {
    cells.sort_by(|a, b| (&a.family, &a.qualifier, b.timestamp).cmp(&(&b.family, &b.qualifier, a.timestamp)));
}

/// A row as reads return it: cells by family, then qualifier, then newest version first.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Row {
    /// Row key.
    pub key: Vec<u8>,
    /// Selected cells.
    pub cells: Vec<Cell>,
}

impl Row {
    /// Bytes of the key and of every cell's family, qualifier, value and timestamp: what a
    /// read carried, counted as [`RowMutation::size`] counts a write.
    pub fn bytes(&self) -> u64 {
        let cells: usize = self
            .cells
            .iter()
            .map(|c| 8 + c.family.len() + c.qualifier.len() + c.value.len())
            .sum();
        (self.key.len() + cells) as u64
    }

    /// The newest value of a column.
    pub fn value(&self, family: &str, qualifier: &[u8]) -> Option<&[u8]> {
        self.cells
            .iter()
            .find(|c| c.family == family && c.qualifier == qualifier)
            .map(|c| c.value.as_slice())
    }
}

/// A column selection: a whole family, or one column of it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Column {
    /// Family.
    pub family: String,
    /// Qualifier; `None` selects the whole family.
    pub qualifier: Option<Vec<u8>>,
}

impl Column {
    /// A whole family.
    pub fn family(family: &str) -> Self {
        Column {
            family: family.to_string(),
            qualifier: None,
        }
    }

    /// One column.
    pub fn qualifier(family: &str, qualifier: impl Into<Vec<u8>>) -> Self {
        Column {
            family: family.to_string(),
            qualifier: Some(qualifier.into()),
        }
    }
}

/// What a read returns of each row it reaches.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Selection {
    /// Columns to return (their union); empty returns every family.
    pub columns: Vec<Column>,
    /// Versions per column, newest first; capped by each family's `VERSIONS`.
    pub max_versions: u32,
    /// Only versions with `min <= timestamp < max`.
    pub time_range: Option<(i64, i64)>,
    /// Only qualifiers strictly greater than this, in every family: a cursor for wide rows.
    pub qualifier_after: Option<Vec<u8>>,
    /// At most this many cells per row, after every other rule: a page of a wide row.
    pub cell_limit: Option<usize>,
}

impl Default for Selection {
    fn default() -> Self {
        Selection {
            columns: Vec::new(),
            max_versions: 1,
            time_range: None,
            qualifier_after: None,
            cell_limit: None,
        }
    }
}

impl Selection {
    /// Checks the selection against a table.
    pub fn validate(&self, table: &TableDescriptor) -> Result<()> {
        for c in &self.columns {
            if table.family(&c.family).is_none() {
                return Err(Error::FamilyNotFound {
                    table: table.name.clone(),
                    family: c.family.clone(),
                });
            }
        }
        if self.max_versions == 0 {
            return Err(Error::BadArgument("max versions must be at least 1".into()));
        }
        if let Some((min, max)) = self.time_range
            && (min < 0 || max < min)
        {
            return Err(Error::BadArgument(format!("time range [{min}, {max}) is invalid")));
        }
        Ok(())
    }

    /// Whether the selection asks for `family` at all.
    pub fn wants_family(&self, family: &str) -> bool {
        self.columns.is_empty() || self.columns.iter().any(|c| c.family == family)
    }

    /// Whether the selection names `family` as a whole (which covers any of its columns
    /// it also names).
    pub fn wants_whole_family(&self, family: &str) -> bool {
        self.columns.iter().any(|c| c.family == family && c.qualifier.is_none())
    }

    /// Whether the selection asks for this column (by family and qualifier alone).
    pub fn wants_column(&self, family: &str, qualifier: &[u8]) -> bool {
        let by_columns = self.columns.is_empty()
            || self
                .columns
                .iter()
                .any(|c| c.family == family && c.qualifier.as_deref().is_none_or(|q| q == qualifier));
        by_columns && self.qualifier_after.as_deref().is_none_or(|after| qualifier > after)
    }

    /// Whether a version's timestamp is inside the time range.
    pub fn wants_timestamp(&self, ts: i64) -> bool {
        self.time_range.is_none_or(|(min, max)| ts >= min && ts < max)
    }
}

/// A read of one row.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Get {
    /// Row key.
    pub row: Vec<u8>,
    /// What to return.
    pub select: Selection,
}

impl Get {
    /// The newest version of every column of `row`.
    pub fn new(row: impl Into<Vec<u8>>) -> Self {
        Get {
            row: row.into(),
            select: Selection::default(),
        }
    }

    /// Restricts the read to `columns`.
    pub fn columns(mut self, columns: Vec<Column>) -> Self {
        self.select.columns = columns;
        self
    }

    /// Returns up to `n` versions per column.
    pub fn versions(mut self, n: u32) -> Self {
        self.select.max_versions = n;
        self
    }
}

/// A range read. In a forward scan `start` is the low bound and `stop` the high; in a reversed
/// scan, as in HBase, `start` is the high bound and `stop` the low. An empty bound is open.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Scan {
    /// First row (inclusive unless `start_exclusive`); empty for the table's edge.
    pub start: Vec<u8>,
    /// Excludes `start` itself: resuming after the last row of a page.
    pub start_exclusive: bool,
    /// Row where the scan stops, exclusive; empty for the table's edge.
    pub stop: Vec<u8>,
    /// Only rows that start with this.
    pub prefix: Vec<u8>,
    /// Newest-last order: from `start` down to `stop`.
    pub reversed: bool,
    /// At most this many rows.
    pub limit: Option<usize>,
    /// What to return of each row.
    pub select: Selection,
}

impl Scan {
    /// Every row starting with `prefix`.
    pub fn prefix(prefix: impl Into<Vec<u8>>) -> Self {
        Scan {
            prefix: prefix.into(),
            ..Scan::default()
        }
    }

    /// Rows from `start` (inclusive) to `stop` (exclusive).
    pub fn range(start: impl Into<Vec<u8>>, stop: impl Into<Vec<u8>>) -> Self {
        Scan {
            start: start.into(),
            stop: stop.into(),
            ..Scan::default()
        }
    }

    /// At most `n` rows.
    pub fn limit(mut self, n: usize) -> Self {
        self.limit = Some(n);
        self
    }

    /// Resumes after `row` (exclusive), in the scan's direction.
    pub fn after(mut self, row: impl Into<Vec<u8>>) -> Self {
        self.start = row.into();
        self.start_exclusive = true;
        self
    }

    /// Restricts the read to `columns`.
    pub fn columns(mut self, columns: Vec<Column>) -> Self {
        self.select.columns = columns;
        self
    }

    /// Returns up to `n` versions per column.
    pub fn versions(mut self, n: u32) -> Self {
        self.select.max_versions = n;
        self
    }

    /// Scans from high to low keys.
    pub fn reversed(mut self) -> Self {
        self.reversed = true;
        self
    }

    /// Whether `row` lies inside the scan's bounds and prefix.
    pub fn contains(&self, row: &[u8]) -> bool {
        if !row.starts_with(&self.prefix) {
            return false;
        }
        let (low, high) = if self.reversed {
            (&self.stop, &self.start)
        } else {
            (&self.start, &self.stop)
        };
        let low_ok = if self.reversed {
            low.is_empty() || row > low.as_slice()
        } else {
            low.is_empty() || row > low.as_slice() || (row == low.as_slice() && !self.start_exclusive)
        };
        let high_ok = if self.reversed {
            high.is_empty() || row < high.as_slice() || (row == high.as_slice() && !self.start_exclusive)
        } else {
            high.is_empty() || row < high.as_slice()
        };
        low_ok && high_ok
    }
}

/// Milliseconds since the epoch: the timestamp of a mutation that gives none.
pub fn now_millis() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or(0)
}
