//! User actions (seeds 000 and 003): table `useractions`, one row per action keyed
//! `userid` `MAX-stamp` `actionid`, one column `content:name`. Paging by offset is the seed's
//! own (scan the user's rows and skip `offset`); paging by cursor resumes after the last row,
//! so a deep page costs what page 1 does.

use super::{Page, Result, corrupt, newest_first, newest_first_in};
use crate::keys::{self, KeyOptions, actions::Key};
use crate::store::{Column, Mutation, RowMutation, Store, TableDescriptor};
use std::sync::Arc;

/// Table name.
pub const TABLE: &str = "useractions";
/// Column family.
pub const FAMILY: &str = "content";
/// Qualifier of the action's name.
pub const QUALIFIER: &[u8] = b"name";

/// One action.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Action {
    /// The user.
    pub userid: i32,
    /// When it happened (epoch ms).
    pub stamp: i64,
    /// The action's id.
    pub actionid: i32,
    /// What was done.
    pub name: String,
}

/// The row mutation that stores `a` under the key variant `opts`, stamped with the action's
/// time.
pub fn mutation(opts: KeyOptions, a: &Action) -> Result<RowMutation> {
    let row = Key {
        userid: a.userid,
        stamp: a.stamp,
        actionid: a.actionid,
    }
    .encode(opts)?;
    Ok(RowMutation::new(
        row,
        vec![Mutation::put(FAMILY, QUALIFIER, a.stamp, a.name.as_bytes())],
    ))
}

/// The `useractions` DAO.
#[derive(Clone)]
pub struct Actions {
    store: Arc<dyn Store>,
    opts: KeyOptions,
}

impl Actions {
    /// A DAO over `store` with the key variant `opts`.
    pub fn new(store: Arc<dyn Store>, opts: KeyOptions) -> Self {
        Actions { store, opts }
    }

    /// The table layout.
    pub fn tables() -> Vec<TableDescriptor> {
        vec![TableDescriptor::new(TABLE, &[FAMILY], 1)]
    }

    /// Creates the table unless it exists.
    pub fn create_tables(&self) -> Result<()> {
        super::create_tables(&*self.store, &Self::tables())
    }

    /// The row mutation that stores `a`; the cell's timestamp is the action's stamp, so a
    /// reload writes the same cell again.
    pub fn mutation(&self, a: &Action) -> Result<RowMutation> {
        mutation(self.opts, a)
    }

    /// Stores one action.
    pub fn put(&self, a: &Action) -> Result<()> {
        self.put_batch(std::slice::from_ref(a))
    }

    /// Stores actions in one batch.
    pub fn put_batch(&self, actions: &[Action]) -> Result<()> {
        let batch = actions.iter().map(|a| self.mutation(a)).collect::<Result<Vec<_>>>()?;
        Ok(self.store.mutate(TABLE, &batch)?)
    }

    fn user_scan(&self, userid: i32) -> crate::store::Scan {
        let mut prefix = Vec::with_capacity(8);
        keys::actions::user_prefix(self.opts, userid, &mut prefix);
        newest_first_in(self.opts.order, prefix).columns(vec![Column::qualifier(FAMILY, QUALIFIER)])
    }

    /// Page `limit` actions after skipping `offset`, newest first, as the seed does it.
    pub fn page_by_offset(&self, userid: i32, offset: usize, limit: usize) -> Result<Vec<Action>> {
        let scan = self.user_scan(userid).limit(offset.saturating_add(limit));
        let rows = self.store.scan(TABLE, &scan)?;
        rows.into_iter().skip(offset).map(|r| self.decode(&r)).collect()
    }

    /// Page `limit` actions after the cursor (`None`: from the newest), newest first.
    pub fn page_after(&self, userid: i32, cursor: Option<&[u8]>, limit: usize) -> Result<Page<Action>> {
        let mut scan = self.user_scan(userid).limit(limit);
        if let Some(c) = cursor {
            scan = scan.after(c);
        }
        let rows = self.store.scan(TABLE, &scan)?;
        let last = rows.last().map(|r| r.key.clone());
        let items = rows.iter().map(|r| self.decode(r)).collect::<Result<Vec<_>>>()?;
        Ok(Page::new(items, last, limit))
    }

    /// Up to `limit` actions with `from <= stamp <= to`, newest first.
    pub fn range(&self, userid: i32, from: i64, to: i64, limit: usize) -> Result<Vec<Action>> {
        if from > to {
            return Ok(Vec::new());
        }
        let (mut lo_stamp, mut hi_stamp) = (to, from);
        if self.opts.order == keys::Order::Forward {
            std::mem::swap(&mut lo_stamp, &mut hi_stamp);
        }
        let mut low = Vec::with_capacity(12);
        keys::actions::stamp_prefix(self.opts, userid, lo_stamp, &mut low)?;
        let mut high = Vec::with_capacity(12);
        keys::actions::stamp_prefix(self.opts, userid, hi_stamp, &mut high)?;
        let high = keys::next_prefix(&high);
        let scan = newest_first(self.opts.order, low, high)
            .columns(vec![Column::qualifier(FAMILY, QUALIFIER)])
            .limit(limit);
        let rows = self.store.scan(TABLE, &scan)?;
        rows.iter().map(|r| self.decode(r)).collect()
    }

    fn decode(&self, row: &crate::store::Row) -> Result<Action> {
        let k = Key::decode(self.opts, &row.key)?;
        let name = row
            .value(FAMILY, QUALIFIER)
            .ok_or_else(|| corrupt(TABLE, &row.key, "no content:name cell"))?;
        Ok(Action {
            userid: k.userid,
            stamp: k.stamp,
            actionid: k.actionid,
            name: String::from_utf8_lossy(name).into_owned(),
        })
    }
}
