//! TIMELINE reads, over a table's region replicas, as HBase's client makes them
//! (`RpcRetryingCallerWithReadReplicas` for gets, `ScannerCallableWithReplicas` for scans): a
//! read goes to the region's primary first; when the primary has not answered within the
//! primary timeout, or failed, the same read goes to every secondary that is open, and the
//! first answer wins. An answer from a secondary is stale: the copy may lag the primary (by
//! its store file refresh, or its WAL replication). The calls that lost are given up: their
//! threads stop and a reply that comes later is dropped.
//!
//! A server never says which replica answered except by `stale`, which it sets for every
//! secondary (`RSRpcServices`: `replicaId != 0`); the client knows it by where it sent.

use crate::cells::Cell;
use crate::client::{Action, Actions, Client, RegionGroup};
use crate::conn::{Conn, Pending, Reply};
use crate::error::{Error, Result, Retry};
use crate::locate::Region;
use crate::pb;
use crate::zk::ServerName;
use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, mpsc};
use std::time::{Duration, Instant};

/// How often a call waited for on a thread of its own looks whether its race is over.
const SLICE: Duration = Duration::from_millis(2);

/// Calls raced against each other: each waited for on a thread of its own, their answers
/// taken in the order they come; dropping the race gives up those still out.
pub(crate) struct Race {
    tx: mpsc::Sender<(usize, Result<Reply>)>,
    rx: mpsc::Receiver<(usize, Result<Reply>)>,
    over: Arc<AtomicBool>,
    out: usize,
}

impl Race {
    pub(crate) fn new() -> Race {
        let (tx, rx) = mpsc::channel();
        Race {
            tx,
            rx,
            over: Arc::default(),
            out: 0,
        }
    }

    /// Waits for `call` on a thread of its own until `deadline`; its answer comes back as
    /// `tag`.
    pub(crate) fn enter(&mut self, tag: usize, call: Pending, deadline: Instant) {
        let (tx, over) = (self.tx.clone(), self.over.clone());
        self.out += 1;
        let addr = call.addr().to_string();
        let waited = move || {
            let started = Instant::now();
            loop {
                if over.load(Ordering::Relaxed) {
                    return;
                }
                let now = Instant::now();
                if now >= deadline {
                    let _ = tx.send((
                        tag,
                        Err(Error::Timeout {
                            addr: call.addr().to_string(),
                            method: "a replica read".into(),
                            timeout: deadline - started,
                        }),
                    ));
                    return;
                }
                match call.wait_until((now + SLICE).min(deadline)) {
                    Ok(None) => {}
                    Ok(Some(reply)) => {
                        let _ = tx.send((tag, Ok(reply)));
                        return;
                    }
                    Err(e) => {
                        let _ = tx.send((tag, Err(e)));
                        return;
                    }
                }
            }
        };
        let spawned = std::thread::Builder::new()
            .name("hbase-replica-read".into())
            .stack_size(256 << 10)
            .spawn(waited);
        if let Err(e) = spawned {
            let _ = self.tx.send((
                tag,
                Err(Error::Connection {
                    addr,
                    why: format!("no thread to wait on: {e}"),
                }),
            ));
        }
    }

    /// The next answer, by `deadline`; `None` when every call has answered or the deadline
    /// passed.
    pub(crate) fn next(&mut self, deadline: Instant) -> Option<(usize, Result<Reply>)> {
        if self.out == 0 {
            return None;
        }
        let got = self
            .rx
            .recv_timeout(deadline.saturating_duration_since(Instant::now()))
            .ok()?;
        self.out -= 1;
        Some(got)
    }
}

impl Drop for Race {
    fn drop(&mut self) {
        self.over.store(true, Ordering::Relaxed);
    }
}

/// A `Multi` in a race: where it went, its regions' actions, and whether it went to
/// secondaries.
struct Entrant {
    conn: Arc<Conn>,
    regions: Vec<RegionGroup>,
    primaries: Vec<Arc<Region>>,
    secondary: bool,
}

impl Client {
    /// Gets rows with TIMELINE consistency: each answer's cells, and whether a secondary
    /// gave it (stale). Rows whose regions keep one copy are read as [`Client::get`] reads
    /// them. A row no replica answered is read again from its primary, with retries.
    pub fn get_timeline(
        &self,
        table: &str,
        gets: Vec<pb::Get>,
        primary_timeout: Duration,
    ) -> Result<Vec<(Vec<Cell>, bool)>> {
        let actions: Vec<Action> = gets
            .into_iter()
            .map(|mut g| {
                g.consistency = Some(pb::Consistency::Timeline as i32);
                Action::Get(g)
            })
            .collect();
        let n = actions.len();
        let fresh = |r: Vec<Vec<Cell>>| r.into_iter().map(|c| (c, false)).collect();
        // Grouped by region, then by primary server, as a batch is.
        let mut regions: Vec<RegionGroup> = Vec::new();
        let mut by_name: HashMap<bytes::Bytes, usize> = HashMap::new();
        for i in 0..n {
            let Ok(r) = self.locate(table, actions.row(i)) else {
                return self.batch(table, &actions[..]).map(fresh);
            };
            let g = *by_name.entry(r.name.clone()).or_insert_with(|| {
                regions.push((r, Vec::new()));
                regions.len() - 1
            });
            regions[g].1.push(i);
        }
        let mut servers: BTreeMap<ServerName, Vec<RegionGroup>> = BTreeMap::new();
        for g in regions {
            let server = g.0.server.clone().expect("located regions have a server");
            servers.entry(server).or_default().push(g);
        }
        let started = Instant::now();
        let sent: Vec<_> = servers
            .into_iter()
            .map(|(server, regions)| {
                let s = self.send_multi(&server, &regions, &actions[..]);
                (regions, s)
            })
            .collect();
        let mut results: Vec<Option<Vec<Cell>>> = vec![None; n];
        let mut race = Race::new();
        let mut entrants: Vec<Entrant> = Vec::new();
        let rpc_deadline = started + self.options().rpc_timeout;
        // Regions whose primary has not answered all its actions: those are hedged.
        let mut hedged: Vec<RegionGroup> = Vec::new();
        for (regions, s) in sent {
            let (conn, call) = match s {
                Ok(x) => x,
                Err(e) => {
                    regions.iter().for_each(|(r, _)| self.learn(r, &e));
                    hedged.extend(regions);
                    continue;
                }
            };
            match call.wait_until(started + primary_timeout) {
                Ok(Some(reply)) => {
                    let mut failed = Vec::new();
                    if self
                        .read_multi(&conn, reply, &regions, &mut results, &mut failed)
                        .is_err()
                    {
                        hedged.extend(regions);
                        continue;
                    }
                    for (r, idx) in regions {
                        let left: Vec<usize> = idx.into_iter().filter(|&i| results[i].is_none()).collect();
                        if !left.is_empty() {
                            hedged.push((r, left));
                        }
                    }
                }
                Ok(None) => {
                    // Still out: it races the secondaries.
                    race.enter(entrants.len(), call, rpc_deadline);
                    let primaries = regions.iter().map(|(r, _)| r.clone()).collect();
                    hedged.extend(regions.iter().cloned());
                    entrants.push(Entrant {
                        conn,
                        regions,
                        primaries,
                        secondary: false,
                    });
                }
                Err(e) => {
                    regions.iter().for_each(|(r, _)| self.learn(r, &e));
                    hedged.extend(regions);
                }
            }
        }
        let mut stale = vec![false; n];
        if !hedged.is_empty() {
            // The same gets to every open secondary, grouped by its server.
            let mut servers: BTreeMap<ServerName, (Vec<RegionGroup>, Vec<Arc<Region>>)> = BTreeMap::new();
            for (primary, idx) in &hedged {
                for s in primary.secondaries() {
                    let e = servers.entry(s.server.clone().expect("open")).or_default();
                    e.0.push((Arc::new(s), idx.clone()));
                    e.1.push(primary.clone());
                }
            }
            for (server, (regions, primaries)) in servers {
                if let Ok((conn, call)) = self.send_multi(&server, &regions, &actions[..]) {
                    race.enter(entrants.len(), call, rpc_deadline);
                    entrants.push(Entrant {
                        conn,
                        regions,
                        primaries,
                        secondary: true,
                    });
                }
            }
            let mut left: usize = hedged.iter().map(|(_, idx)| idx.len()).sum();
            while left > 0 {
                let Some((tag, answer)) = race.next(rpc_deadline) else {
                    break;
                };
                let e = &entrants[tag];
                let mut got: Vec<Option<Vec<Cell>>> = vec![None; n];
                let mut failed = Vec::new();
                let read = answer.and_then(|reply| self.read_multi(&e.conn, reply, &e.regions, &mut got, &mut failed));
                if let Err(err) = &read {
                    match e.secondary {
                        // The primary's entry names its secondaries: looked up again.
                        true => e.primaries.iter().for_each(|r| self.forget_region(r)),
                        false => e.primaries.iter().for_each(|r| self.learn(r, err)),
                    }
                }
                // A secondary that moved or closed: its primary's entry, which names it, is
                // looked up again.
                if e.secondary {
                    for (_, err, _) in &failed {
                        if err.retry() == Retry::Relocate {
                            e.primaries.iter().for_each(|r| self.forget_region(r));
                        }
                    }
                }
                for (i, cells) in got.into_iter().enumerate() {
                    if let Some(cells) = cells
                        && results[i].is_none()
                    {
                        results[i] = Some(cells);
                        stale[i] = e.secondary;
                        left -= 1;
                    }
                }
            }
        }
        drop(race);
        // What no replica answered: from the primaries, with retries.
        let missing: Vec<usize> = (0..n).filter(|&i| results[i].is_none()).collect();
        if !missing.is_empty() {
            let again: Vec<Action> = missing.iter().map(|&i| actions[i].clone()).collect();
            for (&i, cells) in missing.iter().zip(self.batch(table, &again[..])?) {
                results[i] = Some(cells);
            }
        }
        Ok(results.into_iter().map(Option::unwrap_or_default).zip(stale).collect())
    }
}
