//! Scanners: opening, reading in steps under a filter, leases and limits.

use super::*;

/// Open scanners by id, each with the connection that last used it, and how many each
/// connection holds.
#[derive(Default)]
pub(super) struct ScannerMap {
    by_id: HashMap<i32, (u64, Arc<Mutex<Scanner>>)>,
    held: HashMap<u64, usize>,
}

impl ScannerMap {
    pub(super) fn len(&self) -> usize {
        self.by_id.len()
    }

    fn held_by(&self, conn: u64) -> usize {
        self.held.get(&conn).copied().unwrap_or(0)
    }

    fn release(&mut self, conn: u64) {
        if let Some(n) = self.held.get_mut(&conn) {
            *n -= 1;
            if *n == 0 {
                self.held.remove(&conn);
            }
        }
    }

    fn insert(&mut self, id: i32, conn: u64, scanner: Arc<Mutex<Scanner>>) {
        *self.held.entry(conn).or_default() += 1;
        self.by_id.insert(id, (conn, scanner));
    }

    /// The scanner `id`, now held by `conn`.
    fn get(&mut self, id: i32, conn: u64) -> Option<Arc<Mutex<Scanner>>> {
        let (holder, scanner) = self.by_id.get_mut(&id)?;
        let scanner = scanner.clone();
        if *holder != conn {
            let before = std::mem::replace(holder, conn);
            self.release(before);
            *self.held.entry(conn).or_default() += 1;
        }
        Some(scanner)
    }

    pub(super) fn remove(&mut self, id: i32) -> Option<Arc<Mutex<Scanner>>> {
        let (conn, scanner) = self.by_id.remove(&id)?;
        self.release(conn);
        Some(scanner)
    }

    fn retain(&mut self, mut keep: impl FnMut(&Arc<Mutex<Scanner>>) -> bool) {
        let held = &mut self.held;
        self.by_id.retain(|_, (conn, s)| {
            let kept = keep(s);
            if !kept && let Some(n) = held.get_mut(conn) {
                *n -= 1;
            }
            kept
        });
        held.retain(|_, n| *n > 0);
    }

    /// Closes the scanners `conn` holds; how many.
    pub(super) fn close_connection(&mut self, conn: u64) -> usize {
        let before = self.by_id.len();
        self.by_id.retain(|_, (holder, _)| *holder != conn);
        self.held.remove(&conn);
        before - self.by_id.len()
    }
}

impl State {
    pub(super) fn open_scanner(&self, conn: u64, table: &[u8], scan: Scan, how: ScanOptions) -> R<i32> {
        let (desc, state) = self.tables.data_table(table)?;
        scan.select.validate(&desc).map_err(store_error)?;
        let mut scanners = self.scanners.map.lock().expect("lock");
        let per_connection = self.scanners.per_connection.load(Ordering::Relaxed);
        if conn != 0 && scanners.held_by(conn) >= per_connection {
            return Err(io_error(format!(
                "too many open scanners on this connection ({per_connection}, the server's --max-scanners-per-connection); close scanners when done"
            )));
        }
        if scanners.len() >= self.scanners.max {
            return Err(io_error(format!(
                "too many open scanners ({}); close scanners when done",
                self.scanners.max
            )));
        }
        let id = loop {
            let id = self.scanners.next.fetch_add(1, Ordering::Relaxed) & i32::MAX;
            if !scanners.by_id.contains_key(&id) {
                break id;
            }
        };
        scanners.insert(
            id,
            conn,
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

    /// The scanner `id`, now held by connection `conn`.
    pub(super) fn scanner(&self, conn: u64, id: i32) -> R<Arc<Mutex<Scanner>>> {
        self.scanners
            .map
            .lock()
            .expect("lock")
            .get(id, conn)
            .ok_or_else(|| illegal("scanner ID is invalid"))
    }

    /// Closes scanners idle for longer than the lease; returns how many.
    pub fn expire_scanners(&self) -> usize {
        let mut scanners = self.scanners.map.lock().expect("lock");
        let before = scanners.len();
        scanners.retain(|s| match s.try_lock() {
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
    pub(super) fn next_rows<T>(&self, conn: u64, id: i32, n: i32, out_of: impl Fn(Row, bool, bool) -> T) -> R<Vec<T>> {
        let scanner = self.scanner(conn, id)?;
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
