//! What the master says of the cluster, read as HBase's own tools read it (`Admin
//! .getClusterMetrics`, `Admin.getProcedures`):
//!
//! - the cluster's status (`MasterService.GetClusterStatus`), asking only for the live and
//!   dead servers, the master and the regions in transition: per live server its last
//!   report (its own clock's start and end, every `hbase.regionserver.msginterval`, 3 s by
//!   default), its info port, its tasks and per region its request counts, store files,
//!   memstore, compaction counters and state, and flushed sequence id;
//! - the master's procedures (`MasterService.GetProcedures`), running and recently finished
//!   (kept `hbase.procedure.cleaner.evict.ttl`, 15 min by default): splits, merges, region
//!   assigns, unassigns, moves and reopens, crashed servers' recovery, table creation, each
//!   with when it was submitted and last updated, and what it acts on, read from its state
//!   messages (`MasterProcedure.proto`).

use crate::client::Client;
use crate::error::Result;
use crate::locate::table_string;
use crate::pb;
use crate::zk::ServerName;
use prost::Message;

/// The cluster as its master reported it.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Status {
    /// The active master.
    pub master: Option<ServerName>,
    /// The region servers that report, with their last report.
    pub live: Vec<Server>,
    /// The region servers the master holds dead (not yet recovered or restarted).
    pub dead: Vec<ServerName>,
    /// Regions in transition: their encoded names, tables and states.
    pub in_transition: Vec<Transition>,
}

/// One region server's last report.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Server {
    /// The server.
    pub name: ServerName,
    /// Its web UI's port (`/jmx` is there), when it says.
    pub info_port: Option<u16>,
    /// What the report covers, ms since the epoch on the server's clock.
    pub report_start_ms: u64,
    /// The report's end: when its figures were taken.
    pub report_end_ms: u64,
    /// Requests since the server started.
    pub total_requests: u64,
    /// Its regions.
    pub regions: Vec<RegionLoad>,
    /// Its monitored tasks (flushes and compactions among them), as its report lists them.
    pub tasks: Vec<Task>,
}

/// One region's figures in its server's report.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RegionLoad {
    /// Its table, `ns:name` or `name` in the default namespace.
    pub table: String,
    /// Its encoded name (the hex MD5 that its full name ends with).
    pub encoded: String,
    /// Reads served since it opened.
    pub read_requests: u64,
    /// Writes served since it opened.
    pub write_requests: u64,
    /// Its store files.
    pub store_files: u32,
    /// Its memstore, MiB.
    pub memstore_mib: u32,
    /// Cells the compaction running (or last run) has to write, and has written.
    pub compacting_cells: u64,
    /// See `compacting_cells`.
    pub compacted_cells: u64,
    /// The highest sequence id flushed: it moves at every flush (0: never flushed).
    pub flushed_sequence_id: u64,
    /// When its last major compaction ended, ms since the epoch (0: never).
    pub last_major_compaction_ms: u64,
    /// The compaction running now.
    pub compaction: Compaction,
}

/// A region's compaction now (`CompactionState`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Compaction {
    /// None.
    #[default]
    None,
    /// A minor one.
    Minor,
    /// A major one.
    Major,
    /// Both, in different stores.
    MajorAndMinor,
}

/// A task a server monitors (`MonitoredTask`): "Compacting f in r", "Flushing r", ...
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Task {
    /// What it is.
    pub description: String,
    /// Where it stands, in the server's words.
    pub status: String,
    /// `RUNNING`, `WAITING`, `COMPLETE` or `ABORTED`.
    pub state: String,
    /// When it started and ended, ms since the epoch (0: not said).
    pub start_ms: u64,
    /// See `start_ms`.
    pub end_ms: u64,
}

/// A region in transition.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Transition {
    /// Its table.
    pub table: String,
    /// Its encoded name.
    pub encoded: String,
    /// Its state (`OPENING`, `CLOSING`, `SPLITTING`, ...).
    pub state: String,
    /// Since when, ms since the epoch.
    pub since_ms: u64,
}

/// One of the master's procedures.
#[derive(Debug, Clone, PartialEq)]
pub struct Procedure {
    /// Its id.
    pub id: u64,
    /// The procedure that started it, if any.
    pub parent: Option<u64>,
    /// Its class's short name (`SplitTableRegionProcedure`, ...).
    pub class: String,
    /// `RUNNABLE`, `WAITING`, `SUCCESS`, `FAILED`, ...
    pub state: String,
    /// When it was submitted and last updated, ms since the epoch on the master's clock.
    pub submitted_ms: u64,
    /// See `submitted_ms`.
    pub updated_ms: u64,
    /// What it acts on.
    pub what: Acts,
}

impl Procedure {
    /// Whether it has ended (succeeded, failed or rolled back).
    pub fn ended(&self) -> bool {
        matches!(self.state.as_str(), "SUCCESS" | "FAILED" | "ROLLEDBACK")
    }
}

/// A region a procedure names.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RegionRef {
    /// Its table.
    pub table: String,
    /// Its encoded name.
    pub encoded: String,
}

/// What a procedure acts on, where its state says.
#[derive(Debug, Clone, PartialEq)]
pub enum Acts {
    /// A region split in two.
    Split {
        /// The region split.
        parent: RegionRef,
        /// The two it became.
        children: Vec<RegionRef>,
    },
    /// Regions merged into one.
    Merge {
        /// The regions merged.
        parents: Vec<RegionRef>,
        /// The one they became.
        merged: Option<RegionRef>,
    },
    /// A region assigned, unassigned, moved or reopened (`TransitRegionStateProcedure`).
    Transit {
        /// The region.
        region: RegionRef,
        /// `assign`, `unassign`, `move` or `reopen`.
        kind: &'static str,
        /// The server it is to go to, when one was chosen.
        to: Option<ServerName>,
    },
    /// A crashed region server's recovery.
    ServerCrash {
        /// The server.
        server: ServerName,
        /// Whether it held `hbase:meta`.
        carrying_meta: bool,
    },
    /// A table created.
    CreateTable {
        /// The table.
        table: String,
    },
    /// Anything else: its class says what.
    Other,
}

impl Client {
    /// The cluster's status as its master has it now.
    pub fn cluster_status(&self) -> Result<Status> {
        use pb::Option as O;
        let req = pb::GetClusterStatusRequest {
            options: [O::LiveServers, O::DeadServers, O::Master, O::RegionsInTransition]
                .map(|o| o as i32)
                .to_vec(),
        };
        let resp: pb::GetClusterStatusResponse = self.master_call("GetClusterStatus", &req)?;
        Ok(status_of(resp.cluster_status))
    }

    /// The master's procedures, running and recently ended.
    pub fn procedures(&self) -> Result<Vec<Procedure>> {
        let resp: pb::GetProceduresResponse = self.master_call("GetProcedures", &pb::GetProceduresRequest {})?;
        Ok(resp.procedure.iter().map(procedure_of).collect())
    }
}

/// The status of a `ClusterStatus` message.
pub fn status_of(s: pb::ClusterStatus) -> Status {
    Status {
        master: s.master.as_ref().map(ServerName::from_pb),
        live: s
            .live_servers
            .into_iter()
            .map(|l| {
                let load = l.server_load;
                Server {
                    name: ServerName::from_pb(&l.server),
                    info_port: load.info_server_port.and_then(|p| u16::try_from(p).ok()),
                    report_start_ms: load.report_start_time.unwrap_or(0),
                    report_end_ms: load.report_end_time.unwrap_or(0),
                    total_requests: load.total_number_of_requests.unwrap_or(0),
                    regions: load.region_loads.iter().map(region_load).collect(),
                    tasks: load
                        .tasks
                        .into_iter()
                        .map(|t| Task {
                            state: t.state().as_str_name().to_string(),
                            description: t.description,
                            status: t.status,
                            start_ms: t.start_time.unwrap_or(0),
                            // -1 while it runs.
                            end_ms: t.completion_time.filter(|&v| v != u64::MAX).unwrap_or(0),
                        })
                        .collect(),
                }
            })
            .collect(),
        dead: s.dead_servers.iter().map(ServerName::from_pb).collect(),
        in_transition: s
            .regions_in_transition
            .iter()
            .map(|t| {
                let r = region_ref(&t.region_state.region_info);
                Transition {
                    table: r.table,
                    encoded: r.encoded,
                    state: t.region_state.state().as_str_name().to_string(),
                    since_ms: t.region_state.stamp.unwrap_or(0),
                }
            })
            .collect(),
    }
}

fn region_load(r: &pb::RegionLoad) -> RegionLoad {
    use pb::region_load::CompactionState as C;
    let (table, encoded) = split_region_name(&r.region_specifier.value);
    RegionLoad {
        table,
        encoded,
        read_requests: r.read_requests_count.unwrap_or(0),
        write_requests: r.write_requests_count.unwrap_or(0),
        store_files: r.storefiles.unwrap_or(0),
        memstore_mib: r.mem_store_size_mb.unwrap_or(0),
        compacting_cells: r.total_compacting_k_vs.unwrap_or(0),
        compacted_cells: r.current_compacted_k_vs.unwrap_or(0),
        // -1 (as uint64) for a region never flushed.
        flushed_sequence_id: r.complete_sequence_id.filter(|&v| v != u64::MAX).unwrap_or(0),
        last_major_compaction_ms: r.last_major_compaction_ts.unwrap_or(0),
        compaction: match r.compaction_state.and_then(|c| C::try_from(c).ok()) {
            Some(C::Minor) => Compaction::Minor,
            Some(C::Major) => Compaction::Major,
            Some(C::MajorAndMinor) => Compaction::MajorAndMinor,
            _ => Compaction::None,
        },
    }
}

/// The table and encoded name of a full region name (`table,start,id.ENCODED.`). A name of
/// the old format (`hbase:meta,,1`, whose encoded name HBase takes from a Jenkins hash) has
/// no encoded part: it stands for itself.
pub fn split_region_name(name: &[u8]) -> (String, String) {
    let table = match name.iter().position(|&b| b == b',') {
        Some(i) => String::from_utf8_lossy(&name[..i]).into_owned(),
        None => String::new(),
    };
    let encoded = crate::locate::encoded_name(name);
    (table, String::from_utf8_lossy(encoded).into_owned())
}

/// A region's table and encoded name from its `RegionInfo`, as `RegionInfo.createRegionName`
/// makes them: the MD5 of `table,start,id` (and `_REPLICA` in hex for a replica).
pub fn region_ref(info: &pb::RegionInfo) -> RegionRef {
    let name = crate::locate::region_name(info);
    RegionRef {
        table: table_string(&info.table_name),
        encoded: String::from_utf8_lossy(crate::locate::encoded_name(&name)).into_owned(),
    }
}

/// A procedure as this crate tells it.
pub fn procedure_of(p: &pb::Procedure) -> Procedure {
    let class = p.class_name.rsplit('.').next().unwrap_or(&p.class_name).to_string();
    Procedure {
        id: p.proc_id,
        parent: p.parent_id,
        state: p.state().as_str_name().to_string(),
        submitted_ms: p.submitted_time,
        updated_ms: p.last_update,
        what: acts(&class, &p.state_message),
        class,
    }
}

/// The message of `state` whose type is `name` (`hbase.pb.NAME`), decoded.
fn message<M: Message + Default>(state: &[prost_types::Any], name: &str) -> Option<M> {
    state
        .iter()
        .find(|a| a.type_url.rsplit('/').next() == Some(&format!("hbase.pb.{name}")[..]))
        .and_then(|a| M::decode(&a.value[..]).ok())
}

/// What a procedure of `class` acts on, from its state messages (the order its class
/// serializes them in: a region procedure's `RegionInfo` first, then its own).
fn acts(class: &str, state: &[prost_types::Any]) -> Acts {
    match class {
        "SplitTableRegionProcedure" => {
            match message::<pb::SplitTableRegionStateData>(state, "SplitTableRegionStateData") {
                Some(d) => Acts::Split {
                    parent: region_ref(&d.parent_region_info),
                    children: d.child_region_info.iter().map(region_ref).collect(),
                },
                None => Acts::Other,
            }
        }
        "MergeTableRegionsProcedure" => {
            match message::<pb::MergeTableRegionsStateData>(state, "MergeTableRegionsStateData") {
                Some(d) => Acts::Merge {
                    parents: d.region_info.iter().map(region_ref).collect(),
                    merged: d.merged_region_info.as_ref().map(region_ref),
                },
                None => Acts::Other,
            }
        }
        "TransitRegionStateProcedure" => {
            let region = message::<pb::RegionInfo>(state, "RegionInfo");
            let data = message::<pb::RegionStateTransitionStateData>(state, "RegionStateTransitionStateData");
            match (region, data) {
                (Some(r), Some(d)) => {
                    use pb::RegionTransitionType as T;
                    Acts::Transit {
                        region: region_ref(&r),
                        kind: match d.r#type() {
                            T::Assign => "assign",
                            T::Unassign => "unassign",
                            T::Move => "move",
                            T::Reopen => "reopen",
                        },
                        to: d.assign_candidate.as_ref().map(ServerName::from_pb),
                    }
                }
                _ => Acts::Other,
            }
        }
        "ServerCrashProcedure" => match message::<pb::ServerCrashStateData>(state, "ServerCrashStateData") {
            Some(d) => Acts::ServerCrash {
                server: ServerName::from_pb(&d.server_name),
                carrying_meta: d.carrying_meta.unwrap_or(false),
            },
            None => Acts::Other,
        },
        "CreateTableProcedure" => match message::<pb::CreateTableStateData>(state, "CreateTableStateData") {
            Some(d) => Acts::CreateTable {
                table: d.table_schema.table_name.as_ref().map(table_string).unwrap_or_default(),
            },
            None => Acts::Other,
        },
        _ => Acts::Other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use bytes::Bytes;

    fn info(table: &str, start: &[u8], id: u64) -> pb::RegionInfo {
        pb::RegionInfo {
            region_id: id,
            table_name: crate::locate::table_name(table),
            start_key: Some(Bytes::copy_from_slice(start)),
            ..Default::default()
        }
    }

    fn md5_hex(b: &[u8]) -> String {
        use md5::{Digest, Md5};
        Md5::digest(b).iter().map(|x| format!("{x:02x}")).collect()
    }

    #[test]
    fn a_region_is_named_as_hbase_names_it() {
        // `RegionInfo.createRegionName(TableName.valueOf("t1"), "b", 1700000000000L, true)`
        // is `t1,b,1700000000000.` + MD5("t1,b,1700000000000") + `.`.
        let r = region_ref(&info("t1", b"b", 1_700_000_000_000));
        assert_eq!(r.table, "t1");
        assert_eq!(r.encoded, md5_hex(b"t1,b,1700000000000"));
        assert_eq!(r.encoded.len(), 32);
        let full = format!("t1,b,1700000000000.{}.", r.encoded);
        assert_eq!(
            split_region_name(full.as_bytes()),
            ("t1".to_string(), r.encoded.clone())
        );
        assert_eq!(split_region_name(b"hbase:meta,,1").1, "hbase:meta,,1");
        // A namespaced table, a binary start key, a replica.
        let mut ns = info("weibo:inbox", b"\x00\xff", 5);
        ns.replica_id = Some(1);
        let r = region_ref(&ns);
        assert_eq!(r.table, "weibo:inbox");
        assert_eq!(r.encoded, md5_hex(b"weibo:inbox,\x00\xff,5_0001"));
    }

    fn any<M: Message>(name: &str, m: &M) -> prost_types::Any {
        prost_types::Any {
            type_url: format!("type.googleapis.com/hbase.pb.{name}"),
            value: m.encode_to_vec(),
        }
    }

    #[test]
    fn a_procedures_state_says_what_it_acts_on() {
        let parent = info("t", b"", 1);
        let split = pb::Procedure {
            class_name: "org.apache.hadoop.hbase.master.assignment.SplitTableRegionProcedure".into(),
            proc_id: 7,
            submitted_time: 1000,
            last_update: 1500,
            state: pb::ProcedureState::Success as i32,
            state_message: vec![any(
                "SplitTableRegionStateData",
                &pb::SplitTableRegionStateData {
                    parent_region_info: parent.clone(),
                    child_region_info: vec![info("t", b"", 2), info("t", b"m", 2)],
                    ..Default::default()
                },
            )],
            ..Default::default()
        };
        let p = procedure_of(&split);
        assert_eq!(
            (p.id, p.class.as_str(), p.state.as_str()),
            (7, "SplitTableRegionProcedure", "SUCCESS")
        );
        assert!(p.ended());
        assert_eq!(
            p.what,
            Acts::Split {
                parent: region_ref(&parent),
                children: vec![region_ref(&info("t", b"", 2)), region_ref(&info("t", b"m", 2))],
            }
        );
        let to = pb::ServerName {
            host_name: "rs2".into(),
            port: Some(16020),
            start_code: Some(9),
        };
        let moved = pb::Procedure {
            class_name: "org.apache.hadoop.hbase.master.assignment.TransitRegionStateProcedure".into(),
            proc_id: 8,
            state: pb::ProcedureState::Runnable as i32,
            state_message: vec![
                any("RegionInfo", &parent),
                any(
                    "RegionStateTransitionStateData",
                    &pb::RegionStateTransitionStateData {
                        r#type: pb::RegionTransitionType::Move as i32,
                        assign_candidate: Some(to.clone()),
                        ..Default::default()
                    },
                ),
            ],
            ..Default::default()
        };
        let p = procedure_of(&moved);
        assert!(!p.ended());
        assert_eq!(
            p.what,
            Acts::Transit {
                region: region_ref(&parent),
                kind: "move",
                to: Some(ServerName::from_pb(&to)),
            }
        );
        // A class it does not know, or a state it cannot read, is named by its class alone.
        let odd = pb::Procedure {
            class_name: "org.apache.hadoop.hbase.master.procedure.ModifyTableProcedure".into(),
            state_message: vec![any("SplitTableRegionStateData", &pb::RegionInfo::default())],
            ..Default::default()
        };
        assert_eq!(procedure_of(&odd).what, Acts::Other);
    }
}
