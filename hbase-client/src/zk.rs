//! Finding the cluster through ZooKeeper, as `ZKConnectionRegistry` does: the cluster id,
//! the active master and the server holding `hbase:meta`, read from the znodes under
//! `zookeeper.znode.parent` (`/hbase` by default).
//!
//! Each znode's data may start with the metadata HBase's `RecoverableZooKeeper` writes (a
//! `0xFF` byte, a 4-byte length and that many bytes of the writer's id), then the protobuf
//! magic `PBUF`, then the message (`ZKMetadata.removeMetaData`, `ProtobufUtil.PB_MAGIC`).
//!
//! The ZooKeeper protocol is the `zookeeper-client` crate's, run on a small runtime of its
//! own for the few reads a bootstrap makes.

use crate::error::{Error, Result};
use crate::pb;
use prost::Message;
use std::time::Duration;

/// `ProtobufMagic.PB_MAGIC`.
pub const PB_MAGIC: &[u8] = b"PBUF";

/// A server of the cluster: where it listens and when it started.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ServerName {
    /// Host name.
    pub host: String,
    /// RPC port.
    pub port: u16,
    /// Start code (ms since the epoch), which tells a restarted server from the one before.
    pub start_code: u64,
}

impl ServerName {
    /// `host:port`.
    pub fn addr(&self) -> String {
        format!("{}:{}", self.host, self.port)
    }

    /// From its protobuf form.
    pub fn from_pb(s: &pb::ServerName) -> ServerName {
        ServerName {
            host: s.host_name.clone(),
            port: s.port.unwrap_or(16020) as u16,
            start_code: s.start_code.unwrap_or(0),
        }
    }
}

impl std::fmt::Display for ServerName {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{},{},{}", self.host, self.port, self.start_code)
    }
}

/// What a client needs to start: the cluster's id, its master, where `hbase:meta` is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cluster {
    /// The cluster id (`hbaseid`).
    pub id: String,
    /// The active master.
    pub master: ServerName,
    /// The server holding `hbase:meta`.
    pub meta: ServerName,
}

/// The data of a znode without HBase's metadata and protobuf magic: the message's bytes.
pub fn strip(data: &[u8]) -> Option<&[u8]> {
    let mut d = data;
    if d.first() == Some(&0xFF) {
        let len = i32::from_be_bytes(d.get(1..5)?.try_into().ok()?);
        if len < 0 {
            return None;
        }
        d = d.get(5 + len as usize..)?;
    }
    d.strip_prefix(PB_MAGIC)
}

/// Parses `meta-region-server`'s data.
pub fn meta_server(data: &[u8]) -> Option<ServerName> {
    let m = pb::MetaRegionServer::decode(strip(data)?).ok()?;
    Some(ServerName::from_pb(&m.server))
}

/// Parses `master`'s data.
pub fn master(data: &[u8]) -> Option<ServerName> {
    let m = pb::Master::decode(strip(data)?).ok()?;
    Some(ServerName::from_pb(&m.master))
}

/// Parses `hbaseid`'s data.
pub fn cluster_id(data: &[u8]) -> Option<String> {
    Some(pb::ClusterId::decode(strip(data)?).ok()?.cluster_id)
}

/// Reads the cluster's id, master and meta location from `quorum` (`host:port,...`) under
/// `parent`, within `timeout`; with `sasl`, authenticated by SASL GSSAPI to the servers'
/// principals of that first part (`zookeeper`, as in `zookeeper/HOST`).
pub fn bootstrap(quorum: &str, parent: &str, timeout: Duration, sasl: Option<&str>) -> Result<Cluster> {
    let started = std::time::Instant::now();
    let hosts: Vec<&str> = quorum.split(',').collect();
    // Nothing listening is known at once, and said plainly.
    let refused: Vec<String> = hosts
        .iter()
        .filter_map(|h| match crate::conn::connect(h, timeout / 3) {
            Ok(_) => None,
            Err(e) => Some(e.to_string()),
        })
        .collect();
    if refused.len() == hosts.len() {
        return Err(Error::Bootstrap(format!(
            "no ZooKeeper server of the quorum {quorum} could be reached: {}",
            refused.join("; ")
        )));
    }
    let session = timeout.saturating_sub(started.elapsed()) * 2 / 3;
    match session_reads(quorum, parent, session, sasl) {
        Err(Error::Bootstrap(why)) if !why.contains(" has no ") && !why.contains(" does not hold ") => {
            // Name what answered instead, within what is left of the timeout.
            let left = timeout
                .saturating_sub(started.elapsed())
                .max(Duration::from_millis(500));
            let each = left / (hosts.len() as u32 * 4).max(1);
            let answers: Vec<(String, crate::probe::Answer)> = hosts
                .iter()
                .map(|h| (h.to_string(), crate::probe::what_answers(h, each)))
                .filter(|(_, a)| *a != crate::probe::Answer::ZooKeeper)
                .collect();
            match answers.first() {
                None => Err(Error::Bootstrap(why)),
                Some((_, first)) => Err(Error::Bootstrap(format!(
                    "{quorum} is not a ZooKeeper quorum: {}{}",
                    answers
                        .iter()
                        .map(|(h, a)| format!("at {h} {a}"))
                        .collect::<Vec<_>>()
                        .join("; "),
                    first.hint()
                ))),
            }
        }
        other => other,
    }
}

fn session_reads(quorum: &str, parent: &str, timeout: Duration, sasl: Option<&str>) -> Result<Cluster> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| Error::Bootstrap(format!("cannot start ZooKeeper's runtime: {e}")))?;
    let parent = parent.trim_end_matches('/').to_string();
    runtime.block_on(async {
        match tokio::time::timeout(timeout, read(quorum, &parent, timeout, sasl)).await {
            Ok(r) => r,
            Err(_) => Err(Error::Bootstrap(format!(
                "ZooKeeper at {quorum}: no session within {timeout:?}"
            ))),
        }
    })
}

async fn read(quorum: &str, parent: &str, timeout: Duration, sasl: Option<&str>) -> Result<Cluster> {
    let connector = zookeeper_client::Client::connector()
        .with_session_timeout(timeout.max(Duration::from_secs(4)))
        .with_connection_timeout(timeout);
    let connector = match sasl {
        None => connector,
        #[cfg(feature = "zk-sasl")]
        Some(service) => {
            connector.with_sasl(zookeeper_client::SaslOptions::gssapi().with_username(service.to_string()))
        }
        #[cfg(not(feature = "zk-sasl"))]
        Some(_) => {
            return Err(Error::Bootstrap(
                "this build has no SASL to ZooKeeper (hbase-client's feature zk-sasl)".into(),
            ));
        }
    };
    let refused = |e: zookeeper_client::Error| {
        Error::Bootstrap(match (&e, sasl) {
            // A quorum that requires SASL closes an anonymous session at its first request
            // (`zookeeper.enforce.auth.enabled`, or `sessionRequireClientSASLAuth`).
            (zookeeper_client::Error::AuthFailed, None) => {
                format!("ZooKeeper at {quorum} requires SASL authentication: add zk_sasl=gssapi to the URL")
            }
            (zookeeper_client::Error::AuthFailed, Some(service)) => format!(
                "ZooKeeper at {quorum} refused SASL GSSAPI as {service}/HOST's client (is the ticket's realm its?)"
            ),
            _ => format!("ZooKeeper at {quorum}: {e}"),
        })
    };
    let client = connector.connect(quorum).await.map_err(refused)?;
    let get = |name: &'static str| {
        let path = format!("{parent}/{name}");
        let client = &client;
        async move {
            match client.get_data(&path).await {
                Ok((data, _)) => Ok(data),
                Err(zookeeper_client::Error::NoNode) => Err(Error::Bootstrap(format!(
                    "ZooKeeper at {quorum} has no {path}: is {parent} the cluster's zookeeper.znode.parent{}?",
                    if parent == "/hbase" {
                        ""
                    } else {
                        " (the default is /hbase)"
                    }
                ))),
                Err(zookeeper_client::Error::AuthFailed) => Err(refused(zookeeper_client::Error::AuthFailed)),
                Err(e) => Err(Error::Bootstrap(format!("ZooKeeper at {quorum}: reading {path}: {e}"))),
            }
        }
    };
    let bad = |name: &str| {
        Error::Bootstrap(format!(
            "ZooKeeper at {quorum}: {parent}/{name} does not hold what HBase writes there"
        ))
    };
    let id = cluster_id(&get("hbaseid").await?).ok_or_else(|| bad("hbaseid"))?;
    let master = master(&get("master").await?).ok_or_else(|| bad("master"))?;
    let meta = meta_server(&get("meta-region-server").await?).ok_or_else(|| bad("meta-region-server"))?;
    Ok(Cluster { id, master, meta })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn znode_data_parses_with_and_without_metadata() {
        let msg = pb::MetaRegionServer {
            server: pb::ServerName {
                host_name: "rs1.example".into(),
                port: Some(16020),
                start_code: Some(1700000000000),
            },
            rpc_version: Some(0),
            state: None,
        };
        let mut plain = PB_MAGIC.to_vec();
        plain.extend(msg.encode_to_vec());
        let mut with_meta = vec![0xFF, 0, 0, 0, 5];
        with_meta.extend(b"12345");
        with_meta.extend(&plain);
        for data in [&plain, &with_meta] {
            let s = meta_server(data).unwrap();
            assert_eq!(s.addr(), "rs1.example:16020");
            assert_eq!(s.to_string(), "rs1.example,16020,1700000000000");
        }
        assert_eq!(meta_server(b"nonsense"), None);
        assert_eq!(strip(&[0xFF, 0, 0, 0, 9, 1]), None);
        let mut id = PB_MAGIC.to_vec();
        id.extend(
            pb::ClusterId {
                cluster_id: "abc-123".into(),
            }
            .encode_to_vec(),
        );
        assert_eq!(cluster_id(&id).as_deref(), Some("abc-123"));
    }
}
