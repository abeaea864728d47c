//! Per-user time series (seed 004): table `series`, family `d`, row
//! `userid_(MAX-dataTime)_insertNanos`, one column `d:v` holding the point's value. The two
//! queries of the seed: a user's newest N points, and the points of a time range with N.

use super::{Result, corrupt, newest_first};
use crate::keys::{self, KeyOptions, Order, series::Key};
use crate::store::{Column, Mutation, Row, RowMutation, Store, TableDescriptor};
use std::sync::Arc;

/// Table name.
pub const TABLE: &str = "series";
/// Column family.
pub const FAMILY: &str = "d";
/// Qualifier of the value.
pub const QUALIFIER: &[u8] = b"v";

/// One point.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Point {
    /// The user.
    pub userid: i32,
    /// The time the data belongs to (epoch ms).
    pub time: i64,
    /// Insert time (ns); tells apart points of one user at one time.
    pub nanos: i64,
    /// The value.
    pub value: Vec<u8>,
}

/// The row mutation that stores `p` under the key variant `opts`, stamped with the point's
/// time.
pub fn mutation(opts: KeyOptions, p: &Point) -> Result<RowMutation> {
    let key = Key {
        userid: p.userid,
        time: p.time,
        nanos: p.nanos,
    }
    .encode(opts)?;
    Ok(RowMutation::new(
        key,
        vec![Mutation::put(FAMILY, QUALIFIER, p.time, p.value.clone())],
    ))
}

/// The series DAO.
#[derive(Clone)]
pub struct Series {
    store: Arc<dyn Store>,
    opts: KeyOptions,
}

impl Series {
    /// A DAO over `store` with the key variant `opts`.
    pub fn new(store: Arc<dyn Store>, opts: KeyOptions) -> Self {
        Series { store, opts }
    }

    /// The table layout.
    pub fn tables() -> Vec<TableDescriptor> {
        vec![TableDescriptor::new(TABLE, &[FAMILY], 1)]
    }

    /// Creates the table unless it exists.
    pub fn create_tables(&self) -> Result<()> {
        super::create_tables(&*self.store, &Self::tables())
    }

    /// The row mutation that stores `p`, stamped with the point's time.
    pub fn mutation(&self, p: &Point) -> Result<RowMutation> {
        mutation(self.opts, p)
    }

    /// Stores points in one batch.
    pub fn put_batch(&self, points: &[Point]) -> Result<()> {
        let batch = points.iter().map(|p| self.mutation(p)).collect::<Result<Vec<_>>>()?;
        Ok(self.store.mutate(TABLE, &batch)?)
    }

    /// A user's newest `n` points, newest first.
    pub fn latest(&self, userid: i32, n: usize) -> Result<Vec<Point>> {
        let mut prefix = Vec::new();
        keys::series::user_prefix(self.opts, userid, &mut prefix);
        let high = keys::next_prefix(&prefix);
        self.read(newest_first(self.opts.order, prefix, high), n)
    }

    /// Up to `n` points with `t1 <= time <= t2`, newest first.
    pub fn range(&self, userid: i32, t1: i64, t2: i64, n: usize) -> Result<Vec<Point>> {
        if t1 > t2 {
            return Ok(Vec::new());
        }
        // Rows of one time share the prefix `userid_TIME_`, so the range is from the first
        // prefix to past the last.
        let (first, last) = match self.opts.order {
            Order::Reverse => (t2, t1),
            Order::Forward => (t1, t2),
        };
        let mut low = Vec::new();
        keys::series::time_prefix(self.opts, userid, first, &mut low)?;
        let mut high = Vec::new();
        keys::series::time_prefix(self.opts, userid, last, &mut high)?;
        self.read(newest_first(self.opts.order, low, keys::next_prefix(&high)), n)
    }

    fn read(&self, scan: crate::store::Scan, n: usize) -> Result<Vec<Point>> {
        let scan = scan.columns(vec![Column::qualifier(FAMILY, QUALIFIER)]).limit(n);
        self.store.scan(TABLE, &scan)?.iter().map(|r| self.decode(r)).collect()
    }

    fn decode(&self, row: &Row) -> Result<Point> {
        let k = Key::decode(self.opts, &row.key)?;
        let value = row
            .value(FAMILY, QUALIFIER)
            .ok_or_else(|| corrupt(TABLE, &row.key, "no d:v cell"))?;
        Ok(Point {
            userid: k.userid,
            time: k.time,
            nanos: k.nanos,
            value: value.to_vec(),
        })
    }
}
