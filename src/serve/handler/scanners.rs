//! Scanners: opening, reading in steps under a filter, leases and limits.

use super::*;

impl State {
    pub(super) fn open_scanner(&self, table: &[u8], scan: Scan, how: ScanOptions) -> R<i32> {
        let (desc, state) = self.tables.data_table(table)?;
        scan.select.validate(&desc).map_err(store_error)?;
        let mut scanners = self.scanners.map.lock().expect("lock");
        if scanners.len() >= self.scanners.max {
            return Err(io_error(format!(
                "too many open scanners ({}); close scanners when done",
                self.scanners.max
            )));
        }
        let id = loop {
            let id = self.scanners.next.fetch_add(1, Ordering::Relaxed) & i32::MAX;
            if !scanners.contains_key(&id) {
                break id;
            }
        };
        scanners.insert(
            id,
            Arc::new(Mutex::new(Scanner {
                table: desc.name,
                scan,
                left: how.limit,
                done: how.limit == Some(0),
                how,
                ttls: Tables::ttls(&state),
                pending: VecDeque::new(),
                filtered_step: 0,
                failure: None,
                used: Instant::now(),
            })),
        );
        Ok(id)
    }

    pub(super) fn scanner(&self, id: i32) -> R<Arc<Mutex<Scanner>>> {
        self.scanners
            .map
            .lock()
            .expect("lock")
            .get(&id)
            .cloned()
            .ok_or_else(|| illegal("scanner ID is invalid"))
    }

    /// Closes scanners idle for longer than the lease; returns how many.
    pub fn expire_scanners(&self) -> usize {
        let mut scanners = self.scanners.map.lock().expect("lock");
        let before = scanners.len();
        scanners.retain(|_, s| match s.try_lock() {
            Ok(s) => s.used.elapsed() < self.scanners.lease,
            Err(_) => true, // in use right now
        });
        before - scanners.len()
    }

    /// Open scanners.
    pub fn open_scanners(&self) -> usize {
        self.scanners.map.lock().expect("lock").len()
    }

    /// Up to `n` rows (or parts of rows), each passed through `out` with whether more of
    /// its row follows and whether the scanner sorts columns.
    pub(super) fn next_rows<T>(&self, id: i32, n: i32, out_of: impl Fn(Row, bool, bool) -> T) -> R<Vec<T>> {
        let scanner = self.scanner(id)?;
        let mut s = scanner.lock().expect("lock");
        s.used = Instant::now();
        if let Some(why) = s.failure {
            return Err(io_error(why));
        }
        let want = n.max(0) as usize;
        let mut out = Vec::with_capacity(want.min(1024));
        while out.len() < want {
            if let Some((r, partial)) = s.pending.pop_front() {
                out.push(out_of(r, partial, s.how.sorted));
                continue;
            }
            if s.done {
                break;
            }
            let mut step = s.scan.clone();
            let asked = (want - out.len()).min(SCAN_STEP * 4);
            step.limit = Some(if s.how.filter.is_some() {
                // A page of 10 reads 10 rows, not a whole step, when the filter keeps them.
                s.filtered_step = (s.filtered_step * 4).clamp(asked, SCAN_STEP * 4);
                s.filtered_step
            } else {
                asked
            });
            let rows = self.store.scan(&s.table, &step).map_err(store_error)?;
            if rows.len() < step.limit.unwrap_or(0) {
                s.done = true;
            }
            if let Some(last) = rows.last() {
                let resume = std::mem::take(&mut s.scan).after(last.key.clone());
                s.scan = resume;
            }
            for mut row in rows {
                Tables::expire(&s.ttls, &mut row.cells);
                if !s.how.family_ranges.is_empty() {
                    let ranges = &s.how.family_ranges;
                    row.cells.retain(|c| {
                        ranges
                            .get(&c.family)
                            .is_none_or(|&(min, max)| c.timestamp >= min && c.timestamp < max)
                    });
                    if s.how.filter.is_none() {
                        keep_versions(&mut row.cells, s.how.versions);
                    }
                }
                if row.cells.is_empty() {
                    continue;
                }
                let reversed = s.scan.reversed;
                let versions = s.how.versions;
                let row = match &mut s.how.filter {
                    None => row,
                    Some(f) => match f.row(row, versions, reversed) {
                        Verdict::Keep(r) => r,
                        Verdict::Drop => continue,
                        Verdict::Stop => {
                            s.done = true;
                            break;
                        }
                    },
                };
                match s.how.batch {
                    Some(b) if row.cells.len() > b => {
                        let key = row.key;
                        let mut cells = row.cells;
                        while !cells.is_empty() {
                            let rest = cells.split_off(b.min(cells.len()));
                            let more = !rest.is_empty();
                            s.pending.push_back((
                                Row {
                                    key: key.clone(),
                                    cells,
                                },
                                more,
                            ));
                            cells = rest;
                        }
                    }
                    _ => s.pending.push_back((row, false)),
                }
                if let Some(left) = &mut s.left {
                    *left -= 1;
                    if *left == 0 {
                        s.done = true;
                        break;
                    }
                }
            }
        }
        Ok(out)
    }
}

/// Keeps the newest `n` versions of each column (cells in the store's order).
pub(super) fn keep_versions(cells: &mut Vec<Cell>, n: u32) {
    let mut kept = 0u32;
    let mut last: Option<(String, Vec<u8>)> = None;
    cells.retain(|c| {
        let same = last.as_ref().is_some_and(|(f, q)| *f == c.family && *q == c.qualifier);
        if !same {
            last = Some((c.family.clone(), c.qualifier.clone()));
            kept = 0;
        }
        kept += 1;
        kept <= n
    });
}
