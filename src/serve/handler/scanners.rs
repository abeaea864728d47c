//! Scanners: opening, reading in steps under a filter, leases and limits.

use super::*;

impl State {
    pub(super) fn open_scanner(
        &self,
        table: &[u8],
        scan: Scan,
        filter: Option<Evaluator>,
        batch: Option<usize>,
        sorted: bool,
    ) -> R<i32> {
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
                filter,
                batch,
                sorted,
                ttls: Tables::ttls(&state),
                pending: VecDeque::new(),
                filtered_step: 0,
                done: false,
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

    pub(super) fn next_rows(&self, id: i32, n: i32) -> R<Vec<TRowResult>> {
        let scanner = self.scanner(id)?;
        let mut s = scanner.lock().expect("lock");
        s.used = Instant::now();
        if let Some(why) = s.failure {
            return Err(io_error(why));
        }
        let want = n.max(0) as usize;
        let mut out = Vec::with_capacity(want.min(1024));
        while out.len() < want {
            if let Some(r) = s.pending.pop_front() {
                out.push(r);
                continue;
            }
            if s.done {
                break;
            }
            let mut step = s.scan.clone();
            let asked = (want - out.len()).min(SCAN_STEP * 4);
            step.limit = Some(if s.filter.is_some() {
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
                if row.cells.is_empty() {
                    continue;
                }
                let reversed = s.scan.reversed;
                let row = match &mut s.filter {
                    None => row,
                    Some(f) => match f.row(row, 1, reversed) {
                        Verdict::Keep(r) => r,
                        Verdict::Drop => continue,
                        Verdict::Stop => {
                            s.done = true;
                            break;
                        }
                    },
                };
                let (sorted, batch) = (s.sorted, s.batch);
                match batch {
                    Some(b) if row.cells.len() > b => {
                        let key = row.key;
                        let mut cells = row.cells;
                        while !cells.is_empty() {
                            let rest = cells.split_off(b.min(cells.len()));
                            s.pending.push_back(row_result(
                                Row {
                                    key: key.clone(),
                                    cells,
                                },
                                sorted,
                            ));
                            cells = rest;
                        }
                    }
                    _ => s.pending.push_back(row_result(row, sorted)),
                }
            }
        }
        Ok(out)
    }
}
