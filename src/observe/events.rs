//! Events from the master's successive answers. Procedures say what the master did, with its
//! own start and end times: splits, merges, region moves and assigns, a crashed server's
//! recovery, table creation (root procedures only: a split's own unassigns and assigns are
//! the split). Status reports say what the region servers did between two reports, stamped
//! with the report's end on the server's clock. A server that lists its tasks (HBase 2.5 on)
//! says when each flush and compaction started and ended, to the millisecond; for one that
//! does not, a region's flushed sequence id that moved is a flush, and a compaction state that
//! went from none to some and back is a compaction's start and end (HBase 2.6.1 leaves that
//! state at none while a compaction runs). A server that joined, or a master that changed, is
//! seen when it is first reported. A server the master's live list dropped is dead when a
//! crash procedure names it; where none does (the master drops an ended one within its
//! cleaner's 30 s, `hbase.procedure.cleaner.interval`: a server that held no regions can be
//! recovered between two reads), its going from the list is the event.
//! Nothing is an event that the first answers already held: they are where the run starts.

use hbase_client::status::{Acts, Compaction, Procedure, RegionRef, Status};
use hbase_client::zk::ServerName;
use std::collections::{BTreeMap, BTreeSet, HashMap};

/// What happened.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Kind {
    /// A stage of the run began.
    Stage,
    /// A region split.
    Split,
    /// Regions merged.
    Merge,
    /// A region moved from one server to another.
    Move,
    /// A region assigned, unassigned or reopened (the detail says which).
    Assign,
    /// A region server died, and its recovery (`ServerCrashProcedure`).
    ServerDead,
    /// A region server joined.
    ServerJoined,
    /// Another master became active.
    MasterChanged,
    /// A region flushed its memstore.
    Flush,
    /// A region compacted (major or minor in the detail).
    Compaction,
    /// A table created.
    CreateTable,
    /// A region server blocked updates (a memstore over its blocking limit), between two
    /// reads of its `/jmx`.
    WritesBlocked,
}

impl Kind {
    /// Its name in `events.csv` and `summary.json`.
    pub fn name(self) -> &'static str {
        match self {
            Kind::Stage => "stage",
            Kind::Split => "split",
            Kind::Merge => "merge",
            Kind::Move => "move",
            Kind::Assign => "assign",
            Kind::ServerDead => "server_dead",
            Kind::ServerJoined => "server_joined",
            Kind::MasterChanged => "master_changed",
            Kind::Flush => "flush",
            Kind::Compaction => "compaction",
            Kind::CreateTable => "create_table",
            Kind::WritesBlocked => "writes_blocked",
        }
    }
}

/// Whether an event is a moment, or the start or end of something that spans time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    /// A moment.
    At,
    /// The start of a span.
    Start,
    /// Its end.
    End,
}

/// One event.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Event {
    /// When, ms since the epoch, on the clock of whoever said (the master, a region server).
    pub at_ms: u64,
    /// What.
    pub kind: Kind,
    /// A moment, a start or an end.
    pub phase: Phase,
    /// The table, when one.
    pub table: String,
    /// The region (its encoded name), when one.
    pub region: String,
    /// The server (`host:port`), when one.
    pub server: String,
    /// The rest, in words.
    pub detail: String,
    /// Where it was read: `procedures` or `status`.
    pub source: &'static str,
}

#[derive(Debug, Clone, Copy)]
struct Seen {
    flushed: u64,
    compaction: Compaction,
    /// When the compaction running was first reported.
    since_ms: u64,
}

/// The master's answers so far, to tell what is new in the next.
#[derive(Debug, Default)]
pub struct Events {
    since_ms: u64,
    /// Procedures reported, and whether their end was.
    procedures: HashMap<u64, bool>,
    master: Option<ServerName>,
    /// The live servers of the last status, by `host,port,startcode`.
    live: BTreeMap<String, ServerName>,
    /// Servers a crash procedure named.
    crashed: BTreeSet<String>,
    /// Servers the live list dropped, and when that was read, until the procedures listed
    /// after say whether the master is recovering them.
    left: Vec<(ServerName, u64)>,
    /// Servers counted dead from the live list alone: a crash procedure listed for one later
    /// is the same death.
    lost: BTreeSet<String>,
    regions: HashMap<String, Seen>,
    /// Where each region was reported, from when (the report's end): a move's region is named
    /// on the server it left, though the next status may already show it on the other.
    servers: HashMap<String, Vec<(u64, String)>>,
    /// Flushes and compactions a server reported as tasks (server, what, start), and whether
    /// their end was.
    tasks: HashMap<(String, String, u64), bool>,
    primed: bool,
}

fn addr(s: &ServerName) -> String {
    s.addr()
}

fn secs(ms: u64) -> String {
    format!("{:.1} s", ms as f64 / 1000.0)
}

fn compaction_name(c: Compaction) -> &'static str {
    match c {
        Compaction::None => "none",
        Compaction::Minor => "minor",
        Compaction::Major => "major",
        Compaction::MajorAndMinor => "major and minor",
    }
}

impl Events {
    /// Events from now on: a procedure that ended before `since_ms` (ms since the epoch) is
    /// not one.
    pub fn new(since_ms: u64) -> Events {
        Events {
            since_ms,
            ..Default::default()
        }
    }

    /// What the procedures now listed add: each root procedure of a known kind starts when it
    /// was submitted and ends at its last update once it has ended. A server the live list
    /// dropped by `settled_ms` (ms since the epoch) that no crash procedure names is dead
    /// from when the list dropped it: the master submits the procedure as it drops the
    /// server, so one read a second later would have listed it, had it not ended and been
    /// cleaned away.
    pub fn procedures(&mut self, listed: &[Procedure], settled_ms: u64) -> Vec<Event> {
        let mut out = Vec::new();
        let mut listed: Vec<&Procedure> = listed.iter().filter(|p| p.parent.is_none()).collect();
        listed.sort_by_key(|p| (p.submitted_ms, p.id));
        for p in listed {
            let Some(e) = self.describe(p) else {
                continue;
            };
            if let Acts::ServerCrash { server, .. } = &p.what {
                let name = server.to_string();
                if self.lost.contains(&name) {
                    // Already counted from the live list.
                    self.procedures.insert(p.id, true);
                    continue;
                }
                self.crashed.insert(name);
            }
            // A split's daughters (a merge's result) open where their parent was: known
            // before any report names them, for a move that follows at once.
            let born: Vec<&RegionRef> = match &p.what {
                Acts::Split { children, .. } => children.iter().collect(),
                Acts::Merge { merged: Some(m), .. } => vec![m],
                _ => Vec::new(),
            };
            if !e.server.is_empty() {
                for r in born {
                    let places = self.servers.entry(r.encoded.clone()).or_default();
                    if places.is_empty() {
                        places.push((p.submitted_ms, e.server.clone()));
                    }
                }
            }
            let ended = p.ended();
            let end = Event {
                at_ms: p.updated_ms,
                phase: Phase::End,
                detail: format!(
                    "{}, {}",
                    p.state.to_lowercase(),
                    secs(p.updated_ms.saturating_sub(p.submitted_ms))
                ),
                ..e.clone()
            };
            match self.procedures.get(&p.id) {
                None if ended && p.updated_ms < self.since_ms => {
                    self.procedures.insert(p.id, true);
                }
                None => {
                    out.push(e);
                    if ended {
                        out.push(end);
                    }
                    self.procedures.insert(p.id, ended);
                }
                Some(false) if ended => {
                    out.push(end);
                    self.procedures.insert(p.id, true);
                }
                Some(_) => {}
            }
        }
        let (settled, pending): (Vec<_>, Vec<_>) = std::mem::take(&mut self.left)
            .into_iter()
            .partition(|(_, seen)| *seen <= settled_ms);
        self.left = pending;
        for (server, seen) in settled {
            let name = server.to_string();
            if !self.crashed.contains(&name) {
                out.push(Event {
                    at_ms: seen,
                    kind: Kind::ServerDead,
                    phase: Phase::At,
                    table: String::new(),
                    region: String::new(),
                    server: addr(&server),
                    detail: "gone from the live servers; no recovery listed".into(),
                    source: "status",
                });
                self.lost.insert(name);
            }
        }
        out
    }

    /// The start event of a procedure of a known kind.
    fn describe(&self, p: &Procedure) -> Option<Event> {
        let at = p.submitted_ms;
        let on = |r: &RegionRef| {
            let Some(places) = self.servers.get(&r.encoded) else {
                return String::new();
            };
            let before = places.iter().rev().find(|(since, _)| *since <= at);
            before.or(places.first()).map(|(_, s)| s.clone()).unwrap_or_default()
        };
        let (kind, table, region, server, detail) = match &p.what {
            Acts::Split { parent, children } => (
                Kind::Split,
                parent.table.clone(),
                parent.encoded.clone(),
                on(parent),
                format!(
                    "into {}",
                    children
                        .iter()
                        .map(|c| c.encoded.as_str())
                        .collect::<Vec<_>>()
                        .join(" and ")
                ),
            ),
            Acts::Merge { parents, merged } => (
                Kind::Merge,
                parents.first().map(|r| r.table.clone()).unwrap_or_default(),
                parents
                    .iter()
                    .map(|r| r.encoded.as_str())
                    .collect::<Vec<_>>()
                    .join(" + "),
                parents.first().map(on).unwrap_or_default(),
                merged
                    .as_ref()
                    .map(|m| format!("into {}", m.encoded))
                    .unwrap_or_default(),
            ),
            Acts::Transit { region, kind, to } => {
                let to = to.as_ref().map(addr);
                let detail = match (*kind, &to) {
                    ("move", Some(to)) => format!("to {to}"),
                    ("move", None) => String::new(),
                    (k, Some(to)) => format!("{k} on {to}"),
                    (k, None) => k.to_string(),
                };
                let kind = if *kind == "move" { Kind::Move } else { Kind::Assign };
                (kind, region.table.clone(), region.encoded.clone(), on(region), detail)
            }
            Acts::ServerCrash { server, carrying_meta } => (
                Kind::ServerDead,
                String::new(),
                String::new(),
                addr(server),
                if *carrying_meta {
                    "it held hbase:meta".into()
                } else {
                    String::new()
                },
            ),
            Acts::CreateTable { table } => (
                Kind::CreateTable,
                table.clone(),
                String::new(),
                String::new(),
                String::new(),
            ),
            Acts::Other => return None,
        };
        Some(Event {
            at_ms: p.submitted_ms,
            kind,
            phase: Phase::Start,
            table,
            region,
            server,
            detail,
            source: "procedures",
        })
    }

    /// What a status read at `now_ms` adds: flushes and compactions per region (at the end
    /// of the report that showed them), servers that joined and a master that changed (now).
    pub fn status(&mut self, s: &Status, now_ms: u64) -> Vec<Event> {
        let mut out = Vec::new();
        let event = |at_ms, kind, phase, table: &str, region: &str, server: &str, detail: String| Event {
            at_ms,
            kind,
            phase,
            table: table.to_string(),
            region: region.to_string(),
            server: server.to_string(),
            detail,
            source: "status",
        };
        let mut master_changed = false;
        if let Some(m) = &s.master {
            if let Some(before) = &self.master
                && before != m
            {
                master_changed = true;
                out.push(event(
                    now_ms,
                    Kind::MasterChanged,
                    Phase::At,
                    "",
                    "",
                    &addr(m),
                    format!("from {}", addr(before)),
                ));
            }
            self.master = Some(m.clone());
        }
        let live: BTreeMap<String, ServerName> = s.live.iter().map(|l| (l.name.to_string(), l.name.clone())).collect();
        // Servers gone from the list the same master gave before (a master that just took
        // over may not list every server yet; it recovers one that died meanwhile itself).
        if self.primed && !master_changed {
            for (name, server) in &self.live {
                if !live.contains_key(name) {
                    self.left.push((server.clone(), now_ms));
                }
            }
        }
        if self.primed {
            for l in &s.live {
                if !self.live.contains_key(&l.name.to_string()) {
                    out.push(event(
                        now_ms,
                        Kind::ServerJoined,
                        Phase::At,
                        "",
                        "",
                        &addr(&l.name),
                        String::new(),
                    ));
                }
            }
        }
        self.live = live;
        let mut regions = HashMap::new();
        for l in &s.live {
            let server = addr(&l.name);
            let at = if l.report_end_ms > 0 { l.report_end_ms } else { now_ms };
            // A server that lists its tasks (HBase 2.5 on: its RPC handlers at least) says
            // when each flush and compaction started and ended; one that does not is read
            // from its regions' flushed sequence ids and compaction states.
            let tasks = !l.tasks.is_empty();
            if tasks {
                self.tasks_of(l, &server, &mut out);
            }
            for r in &l.regions {
                let before = self.regions.get(&r.encoded).copied();
                let mut seen = Seen {
                    flushed: r.flushed_sequence_id,
                    compaction: r.compaction,
                    since_ms: at,
                };
                match before {
                    _ if tasks => {}
                    Some(b) => {
                        if r.flushed_sequence_id > b.flushed {
                            out.push(event(
                                at,
                                Kind::Flush,
                                Phase::At,
                                &r.table,
                                &r.encoded,
                                &server,
                                format!("sequence id {}", r.flushed_sequence_id),
                            ));
                        }
                        match (b.compaction, r.compaction) {
                            (Compaction::None, Compaction::None) => {}
                            (Compaction::None, now) => out.push(event(
                                at,
                                Kind::Compaction,
                                Phase::Start,
                                &r.table,
                                &r.encoded,
                                &server,
                                compaction_name(now).to_string(),
                            )),
                            (was, Compaction::None) => out.push(event(
                                at,
                                Kind::Compaction,
                                Phase::End,
                                &r.table,
                                &r.encoded,
                                &server,
                                format!("{}, {}", compaction_name(was), secs(at.saturating_sub(b.since_ms))),
                            )),
                            // Still compacting: it started when first reported.
                            (_, _) => seen.since_ms = b.since_ms,
                        }
                    }
                    // A region first reported compacting, after the first answer: it began.
                    None if self.primed && !tasks && r.compaction != Compaction::None => out.push(event(
                        at,
                        Kind::Compaction,
                        Phase::Start,
                        &r.table,
                        &r.encoded,
                        &server,
                        compaction_name(r.compaction).to_string(),
                    )),
                    None => {}
                }
                regions.insert(r.encoded.clone(), seen);
                let places = self.servers.entry(r.encoded.clone()).or_default();
                if places.last().is_none_or(|(_, s)| *s != server) {
                    places.push((at, server.clone()));
                }
            }
        }
        self.regions = regions;
        self.primed = true;
        out
    }

    /// The flushes and compactions a server's tasks add: a start when one is first listed
    /// (after the first answer), an end when it is listed complete or aborted. A compaction
    /// is major when the region's last major compaction is that one.
    fn tasks_of(&mut self, l: &hbase_client::status::Server, server: &str, out: &mut Vec<Event>) {
        for t in &l.tasks {
            let Some((kind, table, encoded, family)) = task_of(&t.description) else {
                continue;
            };
            let key = (server.to_string(), t.description.clone(), t.start_ms);
            let ended = matches!(t.state.as_str(), "COMPLETE" | "ABORTED") && t.end_ms > 0;
            let known = self.tasks.get(&key).copied();
            if known == Some(true) || (known == Some(false) && !ended) {
                continue;
            }
            self.tasks.insert(key, ended);
            let event = |at_ms, phase, detail: String| Event {
                at_ms,
                kind,
                phase,
                table: table.clone(),
                region: encoded.clone(),
                server: server.to_string(),
                detail,
                source: "status",
            };
            let what = match &family {
                Some(f) => format!("family {f}"),
                None => String::new(),
            };
            if known.is_none() {
                // Listed in the first answer: it was there before the run; only its end is.
                if !self.primed {
                    continue;
                }
                out.push(event(t.start_ms, Phase::Start, what.clone()));
            }
            if ended {
                let took = secs(t.end_ms.saturating_sub(t.start_ms));
                let mut detail = match kind {
                    Kind::Compaction => {
                        let major = l
                            .regions
                            .iter()
                            .find(|r| r.encoded == encoded)
                            .is_some_and(|r| r.last_major_compaction_ms >= t.start_ms);
                        format!("{}, {took}", if major { "major" } else { "minor" })
                    }
                    _ => took,
                };
                if t.state == "ABORTED" {
                    detail.push_str(", aborted");
                }
                if !what.is_empty() {
                    detail = format!("{detail}, {what}");
                }
                out.push(event(t.end_ms, Phase::End, detail));
            }
        }
    }
}

/// A flush's or compaction's task, as a region server describes it: `Flushing REGION` or
/// `Compacting ENCODED/FAMILY in REGION`, REGION a full region name. Its kind, table,
/// encoded name and family; None for any other task.
fn task_of(description: &str) -> Option<(Kind, String, String, Option<String>)> {
    // `table,start,id.ENCODED.`: the table ends at the first comma (no table name has one).
    let region = |name: &str| -> Option<(String, String)> {
        let table = name.split_once(',')?.0.to_string();
        let encoded = name.strip_suffix('.')?.rsplit('.').next()?.to_string();
        Some((table, encoded))
    };
    if let Some(name) = description.strip_prefix("Flushing ") {
        let (table, encoded) = region(name)?;
        return Some((Kind::Flush, table, encoded, None));
    }
    let rest = description.strip_prefix("Compacting ")?;
    let (store, name) = rest.split_once(" in ")?;
    let (encoded, family) = store.split_once('/')?;
    let (table, _) = region(name)?;
    Some((Kind::Compaction, table, encoded.to_string(), Some(family.to_string())))
}

#[cfg(test)]
mod tests {
    use super::*;
    use hbase_client::status::{RegionLoad, Server};

    fn server(host: &str, start: u64) -> ServerName {
        ServerName {
            host: host.into(),
            port: 16020,
            start_code: start,
        }
    }

    fn region(encoded: &str, flushed: u64, compaction: Compaction) -> RegionLoad {
        RegionLoad {
            table: "t".into(),
            encoded: encoded.into(),
            flushed_sequence_id: flushed,
            compaction,
            ..Default::default()
        }
    }

    fn status(master: &str, servers: Vec<(ServerName, u64, Vec<RegionLoad>)>) -> Status {
        Status {
            master: Some(server(master, 1)),
            live: servers
                .into_iter()
                .map(|(name, end, regions)| Server {
                    name,
                    report_start_ms: end.saturating_sub(3000),
                    report_end_ms: end,
                    regions,
                    ..Default::default()
                })
                .collect(),
            ..Default::default()
        }
    }

    fn kinds(events: &[Event]) -> Vec<(Kind, Phase, &str, &str, u64)> {
        events
            .iter()
            .map(|e| (e.kind, e.phase, e.region.as_str(), e.detail.as_str(), e.at_ms))
            .collect()
    }

    #[test]
    fn flushes_and_compactions_are_read_from_successive_reports() {
        use Compaction::*;
        let mut ev = Events::new(0);
        let rs1 = server("rs1", 7);
        // The first answer is where the run starts: a compaction already running is no event.
        let first = status(
            "m1",
            vec![(rs1.clone(), 10_000, vec![region("a", 5, None), region("b", 9, Major)])],
        );
        assert_eq!(ev.status(&first, 10_500), vec![]);
        let next = status(
            "m1",
            vec![(rs1.clone(), 13_000, vec![region("a", 8, Minor), region("b", 9, Major)])],
        );
        assert_eq!(
            kinds(&ev.status(&next, 13_500)),
            vec![
                (Kind::Flush, Phase::At, "a", "sequence id 8", 13_000),
                (Kind::Compaction, Phase::Start, "a", "minor", 13_000),
            ]
        );
        let later = status(
            "m1",
            vec![(rs1.clone(), 19_000, vec![region("a", 8, None), region("b", 9, None)])],
        );
        let e = ev.status(&later, 19_500);
        assert_eq!(
            kinds(&e),
            vec![
                (Kind::Compaction, Phase::End, "a", "minor, 6.0 s", 19_000),
                (Kind::Compaction, Phase::End, "b", "major, 9.0 s", 19_000),
            ]
        );
        assert!(
            e.iter()
                .all(|e| e.server == "rs1:16020" && e.table == "t" && e.source == "status")
        );
        // The same answer again adds nothing.
        assert_eq!(ev.status(&later, 20_000), vec![]);
    }

    fn task(description: &str, state: &str, start_ms: u64, end_ms: u64) -> hbase_client::status::Task {
        hbase_client::status::Task {
            description: description.into(),
            status: String::new(),
            state: state.into(),
            start_ms,
            end_ms,
        }
    }

    /// As HBase 2.6.1's region servers list them (`scripts/hbase.sh chaos flush` and
    /// `compact` on a table of one region).
    #[test]
    fn flushes_and_compactions_are_read_from_the_servers_tasks() {
        let name = "useractions,,1795964693898.c79cd67fabe8bcb1759aa25027d787c1.";
        let enc = "c79cd67fabe8bcb1759aa25027d787c1";
        let handler = task(
            "RpcServer.default.FPBQ.Fifo.handler=28,queue=1,port=55147",
            "WAITING",
            1,
            0,
        );
        let with = |end: u64, last_major: u64, tasks: Vec<hbase_client::status::Task>| {
            let mut s = status(
                "m1",
                vec![(server("rs1", 7), end, vec![region(enc, 0, Compaction::None)])],
            );
            s.live[0].regions[0].table = "useractions".into();
            s.live[0].regions[0].last_major_compaction_ms = last_major;
            s.live[0].tasks = tasks;
            s
        };
        let old_flush = task(&format!("Flushing {name}"), "COMPLETE", 500, 600);
        let mut ev = Events::new(0);
        // Listed before the run: not an event.
        assert_eq!(
            ev.status(&with(1_000, 0, vec![handler.clone(), old_flush.clone()]), 1_000),
            vec![]
        );
        let flush = task(&format!("Flushing {name}"), "COMPLETE", 15_540, 15_811);
        let compacting = format!("Compacting {enc}/content in {name}");
        let e = ev.status(
            &with(
                25_594,
                0,
                vec![
                    handler.clone(),
                    old_flush.clone(),
                    flush.clone(),
                    task(&compacting, "RUNNING", 23_640, 0),
                ],
            ),
            26_000,
        );
        assert_eq!(
            kinds(&e),
            vec![
                (Kind::Flush, Phase::Start, enc, "", 15_540),
                (Kind::Flush, Phase::End, enc, "0.3 s", 15_811),
                (Kind::Compaction, Phase::Start, enc, "family content", 23_640),
            ]
        );
        assert!(e.iter().all(|e| e.table == "useractions" && e.server == "rs1:16020"));
        // Its region's last major compaction is this one: a major compaction.
        let e = ev.status(
            &with(
                28_614,
                23_703,
                vec![handler, old_flush, flush, task(&compacting, "COMPLETE", 23_640, 28_191)],
            ),
            29_000,
        );
        assert_eq!(
            kinds(&e),
            vec![(
                Kind::Compaction,
                Phase::End,
                enc,
                "major, 4.6 s, family content",
                28_191
            )]
        );
        assert_eq!(task_of("Closing region x"), None);
        assert_eq!(
            task_of("Compacting e/f in ns:t,a\x00,1.e."),
            Some((Kind::Compaction, "ns:t".into(), "e".into(), Some("f".into())))
        );
    }

    #[test]
    fn a_server_that_joins_and_a_master_that_changes_are_seen_when_reported() {
        let mut ev = Events::new(0);
        ev.status(&status("m1", vec![(server("rs1", 7), 10_000, vec![])]), 10_000);
        let e = ev.status(
            &status(
                "m2",
                vec![(server("rs1", 7), 13_000, vec![]), (server("rs2", 8), 13_000, vec![])],
            ),
            13_200,
        );
        assert_eq!(
            e.iter()
                .map(|e| (e.kind, e.server.as_str(), e.detail.as_str(), e.at_ms))
                .collect::<Vec<_>>(),
            vec![
                (Kind::MasterChanged, "m2:16020", "from m1:16020", 13_200),
                (Kind::ServerJoined, "rs2:16020", "", 13_200),
            ]
        );
        // A server restarted is a new one (its start code).
        let e = ev.status(
            &status(
                "m2",
                vec![(server("rs1", 9), 16_000, vec![]), (server("rs2", 8), 16_000, vec![])],
            ),
            16_100,
        );
        assert_eq!(kinds(&e), vec![(Kind::ServerJoined, Phase::At, "", "", 16_100)]);
    }

    fn reg(encoded: &str) -> RegionRef {
        RegionRef {
            table: "t".into(),
            encoded: encoded.into(),
        }
    }

    fn procedure(id: u64, parent: Option<u64>, state: &str, times: (u64, u64), what: Acts) -> Procedure {
        Procedure {
            id,
            parent,
            class: String::new(),
            state: state.into(),
            submitted_ms: times.0,
            updated_ms: times.1,
            what,
        }
    }

    #[test]
    fn procedures_start_when_submitted_and_end_at_their_last_update() {
        let mut ev = Events::new(5_000);
        // Where the regions are, from a status.
        ev.status(
            &status(
                "m1",
                vec![(server("rs1", 7), 4_000, vec![region("p", 1, Compaction::None)])],
            ),
            4_000,
        );
        let split = Acts::Split {
            parent: reg("p"),
            children: vec![reg("c1"), reg("c2")],
        };
        let listed = vec![
            // Ended before the run: not an event.
            procedure(
                1,
                None,
                "SUCCESS",
                (1_000, 2_000),
                Acts::CreateTable { table: "t".into() },
            ),
            procedure(2, None, "RUNNABLE", (6_000, 6_100), split.clone()),
            // The split's own assign: part of the split.
            procedure(
                3,
                Some(2),
                "RUNNABLE",
                (6_050, 6_060),
                Acts::Transit {
                    region: reg("c1"),
                    kind: "assign",
                    to: None,
                },
            ),
            procedure(
                4,
                None,
                "SUCCESS",
                (7_000, 7_400),
                Acts::Transit {
                    region: reg("p"),
                    kind: "move",
                    to: Some(server("rs2", 8)),
                },
            ),
            procedure(5, None, "SUCCESS", (7_000, 7_400), Acts::Other),
        ];
        // The next status already has the region on the server it moved to.
        ev.status(
            &status(
                "m1",
                vec![(server("rs2", 8), 7_600, vec![region("p", 1, Compaction::None)])],
            ),
            7_600,
        );
        let e = ev.procedures(&listed, 0);
        assert_eq!(
            e.iter()
                .map(|e| (
                    e.kind,
                    e.phase,
                    e.region.as_str(),
                    e.server.as_str(),
                    e.detail.as_str(),
                    e.at_ms
                ))
                .collect::<Vec<_>>(),
            vec![
                (Kind::Split, Phase::Start, "p", "rs1:16020", "into c1 and c2", 6_000),
                (Kind::Move, Phase::Start, "p", "rs1:16020", "to rs2:16020", 7_000),
                (Kind::Move, Phase::End, "p", "rs1:16020", "success, 0.4 s", 7_400),
            ]
        );
        // Listed again, the split now ended: only its end is new. A daughter moved before
        // any report named it is on the server its parent was on.
        let moved = procedure(
            6,
            None,
            "RUNNABLE",
            (8_600, 8_600),
            Acts::Transit {
                region: reg("c2"),
                kind: "move",
                to: Some(server("rs1", 7)),
            },
        );
        let again = vec![procedure(2, None, "SUCCESS", (6_000, 8_500), split), moved];
        assert_eq!(
            ev.procedures(&again, 0)
                .iter()
                .map(|e| (e.kind, e.phase, e.region.as_str(), e.server.as_str(), e.at_ms))
                .collect::<Vec<_>>(),
            vec![
                (Kind::Split, Phase::End, "p", "rs1:16020", 8_500),
                (Kind::Move, Phase::Start, "c2", "rs1:16020", 8_600),
            ]
        );
        assert_eq!(ev.procedures(&again, 0), vec![]);
    }

    #[test]
    fn a_server_gone_from_the_live_list_is_dead_once_whether_or_not_its_recovery_is_listed() {
        let mut ev = Events::new(0);
        let (a, b) = (server("rs1", 7), server("rs2", 8));
        let both =
            |a: &ServerName, b: &ServerName| status("m1", vec![(a.clone(), 1_000, vec![]), (b.clone(), 1_000, vec![])]);
        assert_eq!(ev.status(&both(&a, &b), 1_000), vec![]);
        // rs1 restarted (a new start code) and its recovery listed: one death, the procedure's.
        let a2 = server("rs1", 20);
        ev.status(&both(&a2, &b), 2_000);
        let crash = |id, who: &ServerName, times| {
            procedure(
                id,
                None,
                "SUCCESS",
                times,
                Acts::ServerCrash {
                    server: who.clone(),
                    carrying_meta: false,
                },
            )
        };
        let deaths = |e: &[Event]| {
            e.iter()
                .filter(|e| e.kind == Kind::ServerDead && e.phase != Phase::End)
                .map(|e| (e.source, e.at_ms))
                .collect::<Vec<_>>()
        };
        assert_eq!(
            deaths(&ev.procedures(&[crash(1, &a, (1_900, 2_100))], 3_000)),
            vec![("procedures", 1_900)]
        );
        // rs2 restarted, and its recovery ended and was cleaned away before the next read: its
        // going from the list is its death, once a read a second after finds no procedure.
        let b2 = server("rs2", 21);
        ev.status(&both(&a2, &b2), 4_000);
        assert_eq!(deaths(&ev.procedures(&[], 3_500)), vec![], "not yet settled");
        assert_eq!(deaths(&ev.procedures(&[], 5_000)), vec![("status", 4_000)]);
        // Its procedure listed after all is the same death.
        assert_eq!(deaths(&ev.procedures(&[crash(2, &b, (3_900, 4_100))], 9_000)), vec![]);
        // A master that took over and lists one server so far: no death from its list.
        ev.status(&status("m2", vec![(a2.clone(), 6_000, vec![])]), 6_000);
        assert_eq!(deaths(&ev.procedures(&[], u64::MAX)), vec![]);
    }
}
