//! Where each region of a table is: `hbase:meta`'s rows, read as HBase's client reads them,
//! and the cache of what was read.
//!
//! A region's row in `hbase:meta` is keyed by its region name, `<table>,<start key>,<region
//! id>.<encoded name>.`, and holds `info:regioninfo` (the protobuf magic `PBUF`, then a
//! `RegionInfo`), `info:server` (`host:port`) and `info:serverstartcode`. The region that
//! holds a row is found with a reversed scan of `hbase:meta` from
//! `<table>,<row>,99999999999999` (`AsyncNonMetaRegionLocator`), which reads that region
//! first and its neighbours before it after, all of which are cached.

use crate::cells::Cell;
use crate::pb;
use crate::zk::ServerName;
use bytes::Bytes;
use md5::Digest;
use prost::Message;
use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex, RwLock};

/// The region name of the first (and only) `hbase:meta` region.
pub const META_REGION: &[u8] = b"hbase:meta,,1";
/// The family of `hbase:meta` that locations are read from.
pub const CATALOG_FAMILY: &[u8] = b"info";

/// A table name as meta's row keys spell it: `ns:name`, or `name` in the default namespace.
pub fn canonical(table: &str) -> &str {
    table.strip_prefix("default:").unwrap_or(table)
}

/// A table name's protobuf form.
pub fn table_name(table: &str) -> pb::TableName {
    let (ns, q) = canonical(table)
        .split_once(':')
        .unwrap_or(("default", canonical(table)));
    pb::TableName {
        namespace: Bytes::copy_from_slice(ns.as_bytes()),
        qualifier: Bytes::copy_from_slice(q.as_bytes()),
    }
}

/// `ns:name` (`name` for the default namespace) of a protobuf table name.
pub fn table_string(t: &pb::TableName) -> String {
    let q = String::from_utf8_lossy(&t.qualifier);
    match &t.namespace[..] {
        b"default" | b"" => q.into_owned(),
        ns => format!("{}:{q}", String::from_utf8_lossy(ns)),
    }
}

/// The meta row key a lookup of `row` in `table` starts its reversed scan at.
pub fn meta_key(table: &str, row: &[u8], id: &[u8]) -> Vec<u8> {
    let t = canonical(table).as_bytes();
    let mut k = Vec::with_capacity(t.len() + row.len() + id.len() + 2);
    k.extend_from_slice(t);
    k.push(b',');
    k.extend_from_slice(row);
    k.push(b',');
    k.extend_from_slice(id);
    k
}

/// `HConstants.NINES`: the region id that sorts after every real one.
pub const NINES: &[u8] = b"99999999999999";

/// One region and where it is served.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Region {
    /// The table, as meta spells it.
    pub table: String,
    /// The region's name (its meta row key).
    pub name: Bytes,
    /// First row (empty: the table's start).
    pub start: Bytes,
    /// Row after the last (empty: the table's end).
    pub end: Bytes,
    /// The server holding it (none while it is unassigned).
    pub server: Option<ServerName>,
    /// Its secondary replicas, by replica id from 1, where the table keeps more than one
    /// (`REGION_REPLICATION`); empty where it keeps one.
    pub replicas: Vec<Replica>,
}

/// A secondary replica of a region: a read-only copy another server holds, which answers
/// TIMELINE reads with `stale` set.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Replica {
    /// Its replica id, from 1.
    pub id: u32,
    /// Its own region name, which calls to it specify ([`region_name`]).
    pub name: Bytes,
    /// The server holding it (none while it is unassigned).
    pub server: Option<ServerName>,
}

impl Region {
    /// Whether `row` falls in the region.
    pub fn holds(&self, row: &[u8]) -> bool {
        row >= &self.start[..] && (self.end.is_empty() || row < &self.end[..])
    }

    /// The region specifier of calls to it.
    pub fn specifier(&self) -> pb::RegionSpecifier {
        specifier(self.name.clone())
    }

    /// Its secondaries that are open somewhere, each as a region of its own: its replica's
    /// name and server, the primary's bounds. What TIMELINE reads go to.
    pub fn secondaries(&self) -> impl Iterator<Item = Region> + '_ {
        self.replicas.iter().filter(|r| r.server.is_some()).map(|r| Region {
            table: self.table.clone(),
            name: r.name.clone(),
            start: self.start.clone(),
            end: self.end.clone(),
            server: r.server.clone(),
            replicas: Vec::new(),
        })
    }
}

/// A region specifier by region name.
pub fn specifier(name: Bytes) -> pb::RegionSpecifier {
    pb::RegionSpecifier {
        r#type: pb::region_specifier::RegionSpecifierType::RegionName as i32,
        value: name,
    }
}

/// A region's name as HBase spells it (`RegionInfo.createRegionName`, new format): `<table>,
/// <start key>,<region id>[_<replica id as 4 hex digits>].<MD5 of what precedes, hex>.`
pub fn region_name(info: &pb::RegionInfo) -> Bytes {
    let table = table_string(&info.table_name);
    let start = info.start_key.as_deref().unwrap_or_default();
    let mut name = Vec::with_capacity(table.len() + start.len() + 60);
    name.extend_from_slice(table.as_bytes());
    name.push(b',');
    name.extend_from_slice(start);
    name.push(b',');
    name.extend_from_slice(info.region_id.to_string().as_bytes());
    if let Some(r) = info.replica_id.filter(|&r| r > 0) {
        name.extend_from_slice(format!("_{r:04X}").as_bytes());
    }
    let md5: String = md5::Md5::digest(&name).iter().map(|x| format!("{x:02x}")).collect();
    name.push(b'.');
    name.extend_from_slice(md5.as_bytes());
    name.push(b'.');
    Bytes::from(name)
}

/// The encoded name of a new-format region name: the MD5 between its last two dots.
pub fn encoded_name(name: &[u8]) -> &[u8] {
    match name.len().checked_sub(34) {
        Some(at) if name[at] == b'.' && name.ends_with(b".") => &name[at + 1..name.len() - 1],
        _ => name,
    }
}

/// What a meta row says, when it names a region that serves reads (not offline, not a split
/// parent, the default replica), with its secondary replicas' locations: `info:server_0001`
/// and `info:serverstartcode_0001` for replica 1, and so on (`MetaTableAccessor`, `%04X`),
/// written empty at the table's creation until the replica opens.
pub fn parse_meta_row(row: &Bytes, cells: &[Cell]) -> Option<Region> {
    let cell = |q: &[u8]| {
        cells
            .iter()
            .find(|c| &c.family[..] == CATALOG_FAMILY && &c.qualifier[..] == q)
    };
    let info = cell(b"regioninfo")?;
    let body = info.value.strip_prefix(crate::zk::PB_MAGIC)?;
    let ri = pb::RegionInfo::decode(body).ok()?;
    if ri.offline.unwrap_or(false) || ri.split.unwrap_or(false) || ri.replica_id.unwrap_or(0) != 0 {
        return None;
    }
    let located = |server: &Cell, start_code: Option<&Cell>| {
        let text = std::str::from_utf8(&server.value).ok()?;
        let (host, port) = text.rsplit_once(':')?;
        let start_code = start_code
            .and_then(|s| <[u8; 8]>::try_from(&s.value[..]).ok())
            .map_or(0, u64::from_be_bytes);
        Some(ServerName {
            host: host.to_string(),
            port: port.parse().ok()?,
            start_code,
        })
    };
    let server = cell(b"server").and_then(|c| located(c, cell(b"serverstartcode")));
    let mut replicas: Vec<Replica> = cells
        .iter()
        .filter(|c| &c.family[..] == CATALOG_FAMILY)
        .filter_map(|c| {
            let suffix = c.qualifier.strip_prefix(b"server_")?;
            let id = std::str::from_utf8(suffix).ok().filter(|s| s.len() == 4)?;
            let id = u32::from_str_radix(id, 16).ok().filter(|&id| id > 0)?;
            let start_code = cell(format!("serverstartcode_{id:04X}").as_bytes());
            let replica = pb::RegionInfo {
                replica_id: Some(id as i32),
                ..ri.clone()
            };
            Some(Replica {
                id,
                name: region_name(&replica),
                server: located(c, start_code),
            })
        })
        .collect();
    replicas.sort_by_key(|r| r.id);
    Some(Region {
        table: table_string(&ri.table_name),
        name: row.clone(),
        start: ri.start_key.unwrap_or_default(),
        end: ri.end_key.unwrap_or_default(),
        server,
        replicas,
    })
}

/// The regions known of each table, by start key.
#[derive(Default)]
pub struct Cache {
    tables: RwLock<HashMap<String, BTreeMap<Bytes, Arc<Region>>>>,
    /// One meta lookup at a time per table: a second caller waits and finds the first's.
    lookups: Mutex<HashMap<String, Arc<Mutex<()>>>>,
}

impl Cache {
    /// The cached region of `table` holding `row`.
    pub fn find(&self, table: &str, row: &[u8]) -> Option<Arc<Region>> {
        let tables = self.tables.read().unwrap_or_else(|e| e.into_inner());
        let regions = tables.get(canonical(table))?;
        let (_, r) = regions.range(..=Bytes::copy_from_slice(row)).next_back()?;
        r.holds(row).then(|| r.clone())
    }

    /// The cached region of `table` holding the rows just below `row` (the table's last
    /// region for an empty `row`): what a reversed scan moves to (`lowerEntry`).
    pub fn find_before(&self, table: &str, row: &[u8]) -> Option<Arc<Region>> {
        let tables = self.tables.read().unwrap_or_else(|e| e.into_inner());
        let regions = tables.get(canonical(table))?;
        let r = match row.is_empty() {
            true => regions.values().next_back()?,
            false => regions.range(..Bytes::copy_from_slice(row)).next_back()?.1,
        };
        (r.end.is_empty() || (!row.is_empty() && &r.end[..] >= row)).then(|| r.clone())
    }

    /// Caches `region`, replacing the regions it overlaps (a split or merge seen).
    pub fn put(&self, region: Region) -> Arc<Region> {
        let region = Arc::new(region);
        let mut tables = self.tables.write().unwrap_or_else(|e| e.into_inner());
        let regions = tables.entry(region.table.clone()).or_default();
        let overlapping: Vec<Bytes> = regions
            .iter()
            .filter(|(_, r)| {
                (region.end.is_empty() || r.start < region.end) && (r.end.is_empty() || r.end > region.start)
            })
            .map(|(k, _)| k.clone())
            .collect();
        for k in overlapping {
            regions.remove(&k);
        }
        regions.insert(region.start.clone(), region.clone());
        region
    }

    /// Forgets the cached region named `name` of `table`.
    pub fn forget(&self, table: &str, name: &[u8]) {
        let mut tables = self.tables.write().unwrap_or_else(|e| e.into_inner());
        if let Some(regions) = tables.get_mut(canonical(table)) {
            regions.retain(|_, r| &r.name[..] != name);
        }
    }

    /// Forgets every region of `table`.
    pub fn forget_table(&self, table: &str) {
        let mut tables = self.tables.write().unwrap_or_else(|e| e.into_inner());
        tables.remove(canonical(table));
    }

    /// Forgets every region served by `server` (a server that went away).
    pub fn forget_server(&self, server: &ServerName) {
        let mut tables = self.tables.write().unwrap_or_else(|e| e.into_inner());
        for regions in tables.values_mut() {
            regions.retain(|_, r| r.server.as_ref() != Some(server));
        }
    }

    /// The lock a lookup in `table` holds.
    pub fn lookup_lock(&self, table: &str) -> Arc<Mutex<()>> {
        let mut l = self.lookups.lock().unwrap_or_else(|e| e.into_inner());
        l.entry(canonical(table).to_string()).or_default().clone()
    }
}

/// The new server a `RegionMovedException`'s message names: `Region moved to:
/// hostname=H port=P startCode=S. As of locationSeqNum=N.`
pub fn moved_to(message: &str) -> Option<ServerName> {
    let at = message.find("hostname=")?;
    let rest = &message[at..];
    let field = |name: &str| -> Option<&str> {
        let i = rest.find(name)? + name.len();
        let v = &rest[i..];
        let end = v
            .find(|c: char| c.is_whitespace() || c == '.' && name != "hostname=")
            .unwrap_or(v.len());
        Some(&v[..end])
    };
    Some(ServerName {
        host: field("hostname=")?.to_string(),
        port: field("port=")?.parse().ok()?,
        start_code: field("startCode=")?.parse().ok()?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cells::CellType;

    fn region(start: &str, end: &str) -> Region {
        Region {
            table: "t".into(),
            name: Bytes::from(format!("t,{start},1.x.")),
            start: Bytes::copy_from_slice(start.as_bytes()),
            end: Bytes::copy_from_slice(end.as_bytes()),
            server: None,
            replicas: Vec::new(),
        }
    }

    #[test]
    fn keys_and_names_are_spelled_as_meta_spells_them() {
        assert_eq!(meta_key("default:t", b"r1", NINES), b"t,r1,99999999999999");
        assert_eq!(meta_key("weibo:user", b"", b""), b"weibo:user,,");
        assert_eq!(table_string(&table_name("t")), "t");
        assert_eq!(table_string(&table_name("weibo:inbox")), "weibo:inbox");
        assert_eq!(&table_name("t").namespace[..], b"default");
    }

    #[test]
    fn the_cache_finds_the_region_holding_a_row_and_drops_what_a_split_replaced() {
        let c = Cache::default();
        c.put(region("", "m"));
        c.put(region("m", ""));
        assert_eq!(&c.find("t", b"a").unwrap().end[..], b"m");
        assert_eq!(&c.find("default:t", b"m").unwrap().start[..], b"m");
        assert_eq!(&c.find("t", b"zz").unwrap().start[..], b"m");
        assert_eq!(&c.find_before("t", b"m").unwrap().start[..], b"");
        assert_eq!(&c.find_before("t", b"n").unwrap().start[..], b"m");
        assert_eq!(&c.find_before("t", b"").unwrap().start[..], b"m");
        // m.. splits at s: the daughter replaces the parent's entry.
        c.put(region("m", "s"));
        assert_eq!(&c.find("t", b"n").unwrap().end[..], b"s");
        assert!(c.find("t", b"t").is_none());
        c.forget("t", b"t,m,1.x.");
        assert!(c.find("t", b"n").is_none());
        assert!(c.find("u", b"a").is_none());
    }

    #[test]
    fn a_meta_row_parses_and_split_parents_are_skipped() {
        let ri = pb::RegionInfo {
            region_id: 1,
            table_name: table_name("weibo:user"),
            start_key: Some(Bytes::from_static(b"a")),
            end_key: Some(Bytes::from_static(b"b")),
            offline: None,
            split: None,
            replica_id: None,
        };
        let row = Bytes::from_static(b"weibo:user,a,1.abc.");
        let cell = |q: &'static [u8], v: Vec<u8>| Cell {
            row: row.clone(),
            family: Bytes::from_static(CATALOG_FAMILY),
            qualifier: Bytes::from_static(q),
            timestamp: 1,
            kind: CellType::Put,
            value: Bytes::from(v),
        };
        let info = [crate::zk::PB_MAGIC, &ri.encode_to_vec()].concat();
        let cells = vec![
            cell(b"regioninfo", info),
            cell(b"server", b"rs1:16020".to_vec()),
            cell(b"serverstartcode", 42u64.to_be_bytes().to_vec()),
        ];
        let r = parse_meta_row(&row, &cells).unwrap();
        assert_eq!(r.table, "weibo:user");
        assert_eq!((&r.start[..], &r.end[..]), (&b"a"[..], &b"b"[..]));
        assert_eq!(r.server.unwrap().to_string(), "rs1,16020,42");
        assert!(r.replicas.is_empty());
        // A table of three replicas: replica 1 open on rs2, replica 2 not yet (its columns
        // written empty at the table's creation).
        let mut replicated = cells.clone();
        replicated.push(cell(b"server_0001", b"rs2:16020".to_vec()));
        replicated.push(cell(b"serverstartcode_0001", 7u64.to_be_bytes().to_vec()));
        replicated.push(cell(b"server_0002", Vec::new()));
        replicated.push(cell(b"serverstartcode_0002", Vec::new()));
        replicated.push(cell(b"seqnumDuringOpen_0001", 9u64.to_be_bytes().to_vec()));
        let r = parse_meta_row(&row, &replicated).unwrap();
        assert_eq!(r.server.as_ref().unwrap().to_string(), "rs1,16020,42");
        let md5 = |s: &str| -> String {
            md5::Md5::digest(s.as_bytes())
                .iter()
                .map(|x| format!("{x:02x}"))
                .collect()
        };
        let names: Vec<_> = r
            .replicas
            .iter()
            .map(|x| (x.id, x.name.clone(), x.server.as_ref().map(|s| s.to_string())))
            .collect();
        assert_eq!(
            names,
            [
                (
                    1,
                    Bytes::from(format!("weibo:user,a,1_0001.{}.", md5("weibo:user,a,1_0001"))),
                    Some("rs2,16020,7".to_string())
                ),
                (
                    2,
                    Bytes::from(format!("weibo:user,a,1_0002.{}.", md5("weibo:user,a,1_0002"))),
                    None
                ),
            ]
        );
        // The primary's own name, as HBase spells it, and its encoded part.
        let primary = region_name(&ri);
        assert_eq!(
            primary,
            Bytes::from(format!("weibo:user,a,1.{}.", md5("weibo:user,a,1")))
        );
        assert_eq!(encoded_name(&primary), md5("weibo:user,a,1").as_bytes());
        assert_eq!(encoded_name(META_REGION), META_REGION);
        let split = pb::RegionInfo {
            split: Some(true),
            ..ri
        };
        let mut cells = cells;
        cells[0] = cell(b"regioninfo", [crate::zk::PB_MAGIC, &split.encode_to_vec()].concat());
        assert!(parse_meta_row(&row, &cells).is_none());
    }

    #[test]
    fn a_moved_regions_new_server_is_read_from_its_message() {
        let m = "org.apache.hadoop.hbase.exceptions.RegionMovedException: Region moved to: hostname=rs2.example port=16020 startCode=1700000000001. As of locationSeqNum=12.";
        assert_eq!(
            moved_to(m),
            Some(ServerName {
                host: "rs2.example".into(),
                port: 16020,
                start_code: 1700000000001
            })
        );
        assert_eq!(moved_to("no location here"), None);
    }
}
