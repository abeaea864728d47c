//! Events from the master's successive answers. Procedures say what the master did, with its
//! own start and end times: splits, merges, region moves and assigns, a crashed server's
//! recovery, table creation (root procedures only: a split's own unassigns and assigns are
//! the split). Status reports say what the region servers did between two reports, stamped
//! with the report's end on the server's clock: a region's flushed sequence id that moved is a
//! flush, a compaction state that went from none to some and back is a compaction's start and
//! end; a server that joined, or a master that changed, is seen when it is first reported.
//! Nothing is an event that the first answers already held: they are where the run starts.

use hbase_client::status::{Acts, Compaction, Procedure, RegionRef, Status};
use hbase_client::zk::ServerName;
use std::collections::{BTreeSet, HashMap};

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
    live: BTreeSet<String>,
    regions: HashMap<String, Seen>,
    /// Where each region was reported, from when (the report's end): a move's region is named
    /// on the server it left, though the next status may already show it on the other.
    servers: HashMap<String, Vec<(u64, String)>>,
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
    /// was submitted and ends at its last update once it has ended.
    pub fn procedures(&mut self, listed: &[Procedure]) -> Vec<Event> {
        let mut out = Vec::new();
        let mut listed: Vec<&Procedure> = listed.iter().filter(|p| p.parent.is_none()).collect();
        listed.sort_by_key(|p| (p.submitted_ms, p.id));
        for p in listed {
            let Some(e) = self.describe(p) else {
                continue;
            };
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
        if let Some(m) = &s.master {
            if let Some(before) = &self.master
                && before != m
            {
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
        let live: BTreeSet<String> = s.live.iter().map(|l| l.name.to_string()).collect();
        if self.primed {
            for l in &s.live {
                if !self.live.contains(&l.name.to_string()) {
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
            for r in &l.regions {
                let before = self.regions.get(&r.encoded).copied();
                let mut seen = Seen {
                    flushed: r.flushed_sequence_id,
                    compaction: r.compaction,
                    since_ms: at,
                };
                match before {
                    Some(b) => {
                        if b.flushed > 0 && r.flushed_sequence_id > b.flushed {
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
                    None if self.primed && r.compaction != Compaction::None => out.push(event(
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
                    report_start_ms: end - 3000,
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
        let e = ev.procedures(&listed);
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
        // Listed again, the split now ended: only its end is new.
        let again = vec![procedure(2, None, "SUCCESS", (6_000, 8_500), split)];
        assert_eq!(
            kinds(&ev.procedures(&again)),
            vec![(Kind::Split, Phase::End, "p", "success, 2.5 s", 8_500)]
        );
        assert_eq!(ev.procedures(&again), vec![]);
    }
}
