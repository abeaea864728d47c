//! Scans, as HBase's scanner drives them (`AsyncClientScanner`,
//! `AsyncScanSingleRegionRpcRetryingCaller`): a scanner is opened on the region holding the
//! start, read with numbered `next` calls until the region says it has no more, then the
//! next region (the one after, or before for a reversed scan) is opened, until the stop row,
//! the limit or the table's end.
//!
//! The client says it handles partial rows and heartbeats: a row the server cut at its size
//! limit arrives in pieces, which are joined here, and a call the server answers empty to
//! keep a slow scan alive is simply followed by the next. A scanner the server lost (its
//! region moved, its lease expired, the server restarted) is opened again after the last
//! row returned, so no row is returned twice or skipped.
//!
//! With TIMELINE consistency a call the primary has not answered within the replica timeout
//! (or could not take) is made on every open secondary too, from where the scan stands, and
//! the first answer wins ([`crate::timeline`]); a secondary that won serves the rest of its
//! region, and the next region starts on its primary again.

use crate::client::{Client, Row, scan_results};
use crate::conn::{Conn, Pending, Service};
use crate::error::{Error, Result, Retry};
use crate::locate::Region;
use crate::pb;
use crate::timeline::Race;
use bytes::Bytes;
use std::collections::VecDeque;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// What to scan.
#[derive(Debug, Clone, Default)]
pub struct ScanSpec {
    /// First row (inclusive unless `exclude_start`); for a reversed scan, the highest.
    pub start: Bytes,
    /// Whether the start row itself is left out.
    pub exclude_start: bool,
    /// Row to stop before (empty: the table's end); for a reversed scan, the lowest,
    /// excluded.
    pub stop: Bytes,
    /// Newest row keys first.
    pub reversed: bool,
    /// Rows at most.
    pub limit: Option<u64>,
    /// Rows per call (HBase's caching).
    pub caching: u32,
    /// The rest of the scan: columns, versions, time range, filter.
    pub template: pb::Scan,
    /// TIMELINE consistency: how long the primary has before the secondaries are asked too
    /// (HBase's `hbase.client.replicaCallTimeout.scan`, 1 s). `None`: STRONG, the primary
    /// alone.
    pub timeline: Option<Duration>,
}

/// An open scan: rows in order, one region after another.
pub struct Scanner<'a> {
    client: &'a Client,
    table: String,
    spec: ScanSpec,
    /// Where the next region's scanner starts, and whether that row is excluded.
    start: Bytes,
    exclude_start: bool,
    remaining: Option<u64>,
    open: Option<Open>,
    rows: VecDeque<Row>,
    /// A row whose cells are still arriving.
    partial: Option<Row>,
    /// The last complete row handed out.
    last: Option<Bytes>,
    done: bool,
    /// Whether a secondary gave a row.
    stale: bool,
}

struct Open {
    region: Arc<Region>,
    conn: Arc<Conn>,
    id: u64,
    seq: u64,
    /// Whether it is a secondary's.
    stale: bool,
}

impl Client {
    /// Opens a scan of `table`.
    pub fn scan(&self, table: &str, spec: ScanSpec) -> Scanner<'_> {
        Scanner {
            client: self,
            table: table.to_string(),
            start: spec.start.clone(),
            exclude_start: spec.exclude_start,
            remaining: spec.limit,
            done: spec.limit == Some(0),
            spec,
            open: None,
            rows: VecDeque::new(),
            partial: None,
            last: None,
            stale: false,
        }
    }
}

impl Scanner<'_> {
    /// The next row, or `None` at the end.
    pub fn next_row(&mut self) -> Result<Option<Row>> {
        loop {
            if let Some(r) = self.rows.pop_front() {
                self.last = Some(r.key.clone());
                return Ok(Some(r));
            }
            if self.done {
                return Ok(None);
            }
            self.fetch()?;
        }
    }

    /// Whether a row so far came from a secondary replica (TIMELINE reads only).
    pub fn stale(&self) -> bool {
        self.stale
    }

    /// Every remaining row.
    pub fn collect_rows(mut self) -> Result<Vec<Row>> {
        let mut out = Vec::new();
        while let Some(r) = self.next_row()? {
            out.push(r);
        }
        Ok(out)
    }

    fn caching(&self) -> u32 {
        let c = self.spec.caching.max(1);
        match self.remaining {
            Some(r) => c.min(r.min(u32::MAX as u64) as u32),
            None => c,
        }
    }

    /// One call: opens the scanner where the scan stands, or reads on; retries as HBase's
    /// scanner does.
    fn fetch(&mut self) -> Result<()> {
        let started = Instant::now();
        let mut tries = 0;
        loop {
            tries += 1;
            let r = match &self.open {
                None => self.open_and_read(),
                Some(_) => self.read_next(),
            };
            match r {
                Ok(()) => return Ok(()),
                Err(e) => {
                    if let Some(o) = self.open.take() {
                        // The scanner is gone or unusable: close it if the server may still
                        // hold it, and open again after the last row handed out.
                        if !gone(&e) {
                            self.close_quietly(&o);
                        }
                        self.client.learn(&o.region, &e);
                        self.restart_after_last();
                        if gone(&e) {
                            continue;
                        }
                    }
                    // A scanner the server reset or lost as it opened (a region closing
                    // under the open's first read) is opened again, as HBase's
                    // `ClientScanner.handleScanError` does, not handed to the caller.
                    let retry = if gone(&e) { Retry::Same } else { e.retry() };
                    if retry == Retry::Never {
                        return Err(e);
                    }
                    self.client.backoff_as(e, retry, tries, started, 1)?;
                }
            }
        }
    }

    /// The next scanner starts after the last row handed out (or where the scan started).
    fn restart_after_last(&mut self) {
        self.partial = None;
        self.rows.clear();
        if let Some(last) = &self.last {
            self.start = last.clone();
            self.exclude_start = true;
        }
    }

    fn open_and_read(&mut self) -> Result<()> {
        let region = match (self.spec.reversed, self.exclude_start || self.start.is_empty()) {
            (false, false) => self.client.locate(&self.table, &self.start)?,
            (false, true) => {
                let mut after = self.start.to_vec();
                after.push(0);
                self.client.locate(&self.table, &after)?
            }
            (true, true) => self.client.locate_before(&self.table, &self.start)?,
            (true, false) => self.client.locate(&self.table, &self.start)?,
        };
        // A failed open teaches the cache as a failed read does: a region that is not
        // served there (split, moved, closing) is found again before the next try.
        self.open_at(region.clone())
            .inspect_err(|e| self.client.learn(&region, e))
    }

    fn open_at(&mut self, region: Arc<Region>) -> Result<()> {
        let hedge = self.hedge_after(&region);
        let server = region.server.clone().expect("located regions have a server");
        let timeout = self.client.options().rpc_timeout;
        let req = self.open_request(region.specifier(), &self.start, self.exclude_start);
        let sent = self
            .client
            .conn(&server.addr(), Service::Client)
            .and_then(|conn| Ok((conn.send("Scan", &req, b"", timeout)?, conn)));
        let reply = match (sent, hedge) {
            (Ok((call, conn)), None) => (call.wait(timeout)?, conn),
            (Err(e), None) => return Err(e),
            (Ok((call, conn)), Some(after)) => match call.wait_until(Instant::now() + after) {
                Ok(Some(reply)) => (reply, conn),
                Ok(None) => return self.race(region, Ok((conn, call)), None),
                Err(e) => return self.race(region, Err(e), None),
            },
            (Err(e), Some(_)) => return self.race(region, Err(e), None),
        };
        let (reply, conn) = reply;
        let resp: pb::ScanResponse = reply.decode(conn.addr())?;
        let open = resp.scanner_id.map(|id| Open {
            region,
            conn,
            id,
            seq: 0,
            stale: false,
        });
        self.take(open, resp, reply.cells, false)
    }

    /// With TIMELINE reads, how long `region`'s primary has before its secondaries are asked
    /// too; `None` when the scan is STRONG or the region has no open secondary.
    fn hedge_after(&self, region: &Region) -> Option<Duration> {
        self.spec.timeline.filter(|_| region.secondaries().next().is_some())
    }

    /// The call that opens a scanner on the region `spec` names, from `start`.
    fn open_request(&self, spec: pb::RegionSpecifier, start: &Bytes, exclude_start: bool) -> pb::ScanRequest {
        let mut scan = self.spec.template.clone();
        scan.start_row = (!start.is_empty()).then(|| start.clone());
        scan.include_start_row = exclude_start.then_some(false);
        scan.stop_row = (!self.spec.stop.is_empty()).then(|| self.spec.stop.clone());
        scan.include_stop_row = Some(false);
        scan.reversed = self.spec.reversed.then_some(true);
        scan.caching = Some(self.caching());
        scan.max_result_size.get_or_insert(2 << 20);
        if self.spec.timeline.is_some() {
            scan.consistency = Some(pb::Consistency::Timeline as i32);
        }
        pb::ScanRequest {
            region: Some(spec),
            scan: Some(scan),
            number_of_rows: Some(self.caching()),
            close_scanner: Some(false),
            client_handles_partials: Some(true),
            client_handles_heartbeats: Some(true),
            track_scan_metrics: Some(false),
            limit_of_rows: self.remaining.map(|r| r.min(u32::MAX as u64) as u32),
            ..Default::default()
        }
    }

    /// The primary did not answer within the replica timeout, or could not take the call:
    /// a scanner is opened on every open secondary from where the scan stands, and the first
    /// answer, the primary's included, wins. `next` is the primary's scanner when the call
    /// out is a `next` on it; otherwise the call opens one.
    fn race(&mut self, primary: Arc<Region>, call: Result<(Arc<Conn>, Pending)>, next: Option<Open>) -> Result<()> {
        let timeout = self.client.options().rpc_timeout;
        let deadline = Instant::now() + timeout;
        let mut race = Race::new();
        let mut entrants: Vec<(Arc<Region>, Arc<Conn>)> = Vec::new();
        let mut failed = None;
        match call {
            Ok((conn, call)) => {
                race.enter(0, call, deadline);
                entrants.push((primary.clone(), conn));
            }
            Err(e) => {
                self.client.learn(&primary, &e);
                failed = Some(e);
            }
        }
        let first = entrants.len();
        // Secondaries start after the last row handed out when the primary's scanner is
        // part-way through the region.
        let (start, exclude) = match (&next, &self.last) {
            (Some(_), Some(last)) => (last.clone(), true),
            _ => (self.start.clone(), self.exclude_start),
        };
        for s in primary.secondaries() {
            let s = Arc::new(s);
            let server = s.server.clone().expect("open");
            let req = self.open_request(s.specifier(), &start, exclude);
            let Ok(conn) = self.client.conn(&server.addr(), Service::Client) else {
                continue;
            };
            if let Ok(call) = conn.send("Scan", &req, b"", timeout) {
                race.enter(entrants.len(), call, deadline);
                entrants.push((s, conn));
            }
        }
        while let Some((tag, answer)) = race.next(deadline) {
            let (region, conn) = entrants[tag].clone();
            let resp = answer.and_then(|reply| Ok((reply.decode::<pb::ScanResponse>(conn.addr())?, reply.cells)));
            let (resp, cells) = match resp {
                Ok(r) => r,
                Err(e) => {
                    if tag < first {
                        self.client.learn(&region, &e);
                    }
                    failed.get_or_insert(e);
                    continue;
                }
            };
            drop(race);
            if tag < first {
                let open = match next {
                    Some(o) => Some(Open { seq: o.seq + 1, ..o }),
                    None => resp.scanner_id.map(|id| Open {
                        region,
                        conn,
                        id,
                        seq: 0,
                        stale: false,
                    }),
                };
                return self.take(open, resp, cells, false);
            }
            // A secondary's scanner stands where the scan stands now.
            if let Some(o) = &next {
                self.close_quietly(o);
            }
            self.partial = None;
            self.start = start;
            self.exclude_start = exclude;
            let open = resp.scanner_id.map(|id| Open {
                region,
                conn,
                id,
                seq: 0,
                stale: true,
            });
            return self.take(open, resp, cells, true);
        }
        // No replica answered: the scan goes on as after any failed call.
        self.open = next;
        Err(failed.unwrap_or(Error::Timeout {
            addr: primary.server.as_ref().map(|s| s.addr()).unwrap_or_default(),
            method: "Scan".into(),
            timeout,
        }))
    }

    fn read_next(&mut self) -> Result<()> {
        let o = self.open.take().expect("an open scanner");
        let req = pb::ScanRequest {
            scanner_id: Some(o.id),
            number_of_rows: Some(self.caching()),
            close_scanner: Some(false),
            next_call_seq: Some(o.seq),
            client_handles_partials: Some(true),
            client_handles_heartbeats: Some(true),
            track_scan_metrics: Some(false),
            renew: Some(false),
            limit_of_rows: self.remaining.map(|r| r.min(u32::MAX as u64) as u32),
            ..Default::default()
        };
        let timeout = self.client.options().rpc_timeout;
        let call = match o.conn.send("Scan", &req, b"", timeout) {
            Ok(c) => c,
            Err(e) => {
                self.open = Some(o);
                return Err(e);
            }
        };
        let hedge = if o.stale { None } else { self.hedge_after(&o.region) };
        let answer = match hedge {
            None => call.wait(timeout),
            Some(after) => match call.wait_until(Instant::now() + after) {
                Ok(Some(reply)) => Ok(reply),
                Ok(None) => return self.race(o.region.clone(), Ok((o.conn.clone(), call)), Some(o)),
                Err(e) => Err(e),
            },
        };
        let reply = match answer {
            Ok(r) => r,
            Err(e) => {
                self.open = Some(o);
                return Err(e);
            }
        };
        let resp: pb::ScanResponse = match reply.decode(o.conn.addr()) {
            Ok(r) => r,
            Err(e) => {
                self.open = Some(o);
                return Err(e);
            }
        };
        let stale = o.stale;
        let next = Open { seq: o.seq + 1, ..o };
        self.take(Some(next), resp, reply.cells, stale)
    }

    /// Takes a response's rows and decides what comes next.
    fn take(&mut self, open: Option<Open>, resp: pb::ScanResponse, cells: Bytes, stale: bool) -> Result<()> {
        let region = open.as_ref().map(|o| o.region.clone());
        for (row, partial) in scan_results(&resp, cells)? {
            self.stale |= stale;
            let row = match self.partial.take() {
                Some(mut p) if p.key == row.key => {
                    p.cells.extend(row.cells);
                    p
                }
                Some(p) => {
                    self.complete(p);
                    row
                }
                None => row,
            };
            if partial {
                self.partial = Some(row);
            } else {
                self.complete(row);
            }
        }
        if self.remaining == Some(0) {
            // The server closed the scanner itself where it said there is nothing more, as
            // it does once the call's `limit_of_rows` is reached (`RSRpcServices.scan`).
            if let Some(o) = &open
                && resp.more_results != Some(false)
                && resp.more_results_in_region.unwrap_or(false)
            {
                self.close_quietly(o);
            }
            self.finish();
            return Ok(());
        }
        if resp.more_results == Some(false) {
            // The whole scan is over; the server closed its scanner.
            self.finish();
            return Ok(());
        }
        if resp.more_results_in_region.unwrap_or(false) {
            match open {
                Some(o) => self.open = Some(o),
                None => {
                    return Err(Error::Protocol(
                        "a scan response with more in its region but no scanner id".into(),
                    ));
                }
            }
            return Ok(());
        }
        // The region is done (its scanner closed on the server): on to the next.
        let Some(region) = region else {
            self.finish();
            return Ok(());
        };
        if let Some(p) = self.partial.take() {
            self.complete(p);
        }
        let stop = &self.spec.stop;
        if self.spec.reversed {
            if region.start.is_empty() || (!stop.is_empty() && region.start[..] <= stop[..]) {
                self.finish();
            } else {
                self.start = region.start.clone();
                self.exclude_start = true;
            }
        } else if region.end.is_empty() || (!stop.is_empty() && region.end[..] >= stop[..]) {
            self.finish();
        } else {
            self.start = region.end.clone();
            self.exclude_start = false;
        }
        Ok(())
    }

    fn complete(&mut self, row: Row) {
        if self.remaining == Some(0) {
            return;
        }
        if let Some(r) = &mut self.remaining {
            *r -= 1;
        }
        self.rows.push_back(row);
    }

    fn finish(&mut self) {
        if let Some(p) = self.partial.take() {
            self.complete(p);
        }
        self.done = true;
        self.open = None;
    }

    fn close_quietly(&self, o: &Open) {
        let req = pb::ScanRequest {
            scanner_id: Some(o.id),
            number_of_rows: Some(0),
            close_scanner: Some(true),
            client_handles_partials: Some(true),
            client_handles_heartbeats: Some(true),
            ..Default::default()
        };
        let _ = o.conn.send("Scan", &req, b"", self.client.options().rpc_timeout);
    }
}

impl Drop for Scanner<'_> {
    fn drop(&mut self) {
        // Stopped early: the server would hold the scanner until its lease ends.
        if let Some(o) = self.open.take() {
            self.close_quietly(&o);
        }
    }
}

/// Whether `e` means the server no longer has the scanner (it is opened again, not
/// retried as it is).
fn gone(e: &Error) -> bool {
    matches!(
        e.class(),
        Some(
            "UnknownScannerException"
                | "ScannerResetException"
                | "OutOfOrderScannerNextException"
                | "NotServingRegionException"
                | "RegionMovedException"
                | "RegionServerStoppedException"
                | "LeaseException"
        )
    ) || matches!(e, Error::Connection { .. } | Error::Timeout { .. })
}
