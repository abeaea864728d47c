//! Finding the cluster without ZooKeeper, as `RpcConnectionRegistry` does (HBase 2.5 and
//! later): masters and region servers serve `ClientMetaService`, whose `GetClusterId`,
//! `GetActiveMaster` and `GetMetaRegionLocations` tell a client what ZooKeeper would.
//! Each bootstrap server is asked in turn until one answers all three.

use crate::client::Options;
use crate::conn::{Conn, Options as ConnOptions, Service};
use crate::error::{Error, Result};
use crate::pb;
use crate::zk::{Cluster, ServerName};
use std::time::Instant;

/// Asks `servers` (`host:port` each) for the cluster, within the connect timeout.
pub fn bootstrap(servers: &[String], opts: &Options) -> Result<Cluster> {
    let started = Instant::now();
    let mut why = Vec::new();
    for addr in servers {
        let left = opts.connect_timeout.saturating_sub(started.elapsed());
        if left.is_zero() {
            why.push(format!("{addr}: not tried within {:?}", opts.connect_timeout));
            continue;
        }
        match ask(addr, opts, left) {
            Ok(c) => return Ok(c),
            Err(e) => why.push(match e {
                // A connection the server closed at once: name what listens there.
                Error::Connection { .. } | Error::Timeout { .. } | Error::Protocol(_) => {
                    let answer = crate::probe::what_answers(addr, left / 4);
                    match answer {
                        crate::probe::Answer::HBaseRpc => e.to_string(),
                        a => format!("{addr}: {a}, not an HBase master or region server{}", a.hint()),
                    }
                }
                e => e.to_string(),
            }),
        }
    }
    Err(Error::Bootstrap(format!(
        "no bootstrap server of {} answered as HBase's ClientMetaService: {}",
        servers.join(","),
        why.join("; ")
    )))
}

fn ask(addr: &str, opts: &Options, timeout: std::time::Duration) -> Result<Cluster> {
    let conn = Conn::open(
        addr,
        Service::ClientMeta,
        &ConnOptions {
            user: opts.user.clone(),
            connect_timeout: timeout,
            sasl: opts.sasl.clone(),
            tls: opts.tls.clone(),
            crypto_aes: opts.crypto_aes,
            dial: opts
                .connect_to
                .iter()
                .find(|(named, _)| named == addr)
                .map(|(_, to)| to.clone()),
            ..Default::default()
        },
    )?;
    let id: pb::GetClusterIdResponse = conn
        .call("GetClusterId", &pb::GetClusterIdRequest {}, b"", timeout)?
        .decode(addr)?;
    let master: pb::GetActiveMasterResponse = conn
        .call("GetActiveMaster", &pb::GetActiveMasterRequest {}, b"", timeout)?
        .decode(addr)?;
    let meta: pb::GetMetaRegionLocationsResponse = conn
        .call(
            "GetMetaRegionLocations",
            &pb::GetMetaRegionLocationsRequest {},
            b"",
            timeout,
        )?
        .decode(addr)?;
    let missing = |what: &str| Error::Bootstrap(format!("{addr}: ClientMetaService answered without {what}"));
    let meta = meta
        .meta_locations
        .iter()
        .filter(|l| l.region_info.replica_id.unwrap_or(0) == 0)
        .find_map(|l| l.server_name.as_ref())
        .ok_or_else(|| missing("a location of hbase:meta"))?;
    Ok(Cluster {
        id: id.cluster_id.ok_or_else(|| missing("a cluster id"))?,
        master: ServerName::from_pb(&master.server_name.ok_or_else(|| missing("an active master"))?),
        meta: ServerName::from_pb(meta),
    })
}
