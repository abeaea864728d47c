//! Finding the cluster through ZooKeeper, as `ZKConnectionRegistry` does: the cluster id,
//! the active master and the server holding `hbase:meta`, read from the znodes under
//! `zookeeper.znode.parent` (`/hbase` by default).
//!
//! Each znode's data may start with the metadata HBase's `RecoverableZooKeeper` writes (a
//! `0xFF` byte, a 4-byte length and that many bytes of the writer's id), then the protobuf
//! magic `PBUF`, then the message (`ZKMetadata.removeMetaData`, `ProtobufUtil.PB_MAGIC`).
//!
//! A [`Quorum`] keeps the session as HBase's `ReadOnlyZKClient` does: one per client, opened
//! at the first read, kept while reads come and for `zookeeper.keep-alive.time` after the
//! last, closed (with ZooKeeper's CloseSession) then and when the client goes; a read whose
//! connection was lost, whose session expired or that timed out is tried again,
//! `zookeeper.recovery.retry` times, `zookeeper.recovery.retry.intervalmill` apart. A stalled
//! server is waited for as the Java client waits, while an address where nothing listens, or
//! where something other than ZooKeeper answers, is named at once.
//!
//! The ZooKeeper protocol is the `zookeeper-client` crate's, on a small runtime of the
//! quorum's own thread.

use crate::error::{Error, Result};
use crate::pb;
use crate::probe::Answer;
use prost::Message;
use std::time::{Duration, Instant};

/// `ProtobufMagic.PB_MAGIC`.
pub const PB_MAGIC: &[u8] = b"PBUF";

/// A server of the cluster: where it listens and when it started.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
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

/// How the client waits on ZooKeeper: HBase's `ReadOnlyZKClient` settings, at their
/// defaults in HBase 2.6.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ZkSettings {
    /// The session asked for (`zookeeper.session.timeout`, 90 s); the quorum grants at most
    /// its `maxSessionTimeout`. A new connection waits up to 3/5 of it for a silent server.
    pub session_timeout: Duration,
    /// How many times a read is tried again after its connection was lost, its session
    /// expired or it timed out (`zookeeper.recovery.retry`, 30).
    pub retries: u32,
    /// The pause before each (`zookeeper.recovery.retry.intervalmill`, 1 s).
    pub retry_interval: Duration,
    /// How long an idle session is kept open (`zookeeper.keep-alive.time`, 60 s).
    pub keep_alive: Duration,
}

impl Default for ZkSettings {
    fn default() -> Self {
        ZkSettings {
            session_timeout: Duration::from_secs(90),
            retries: 30,
            retry_interval: Duration::from_secs(1),
            keep_alive: Duration::from_secs(60),
        }
    }
}

/// A request to the quorum's thread: where to send the cluster read.
type Job = std::sync::mpsc::SyncSender<Result<Cluster>>;

/// A cluster's ZooKeeper quorum, read as HBase's client reads it (see the module's doc).
pub struct Quorum {
    jobs: Option<tokio::sync::mpsc::UnboundedSender<Job>>,
    worker: Option<std::thread::JoinHandle<()>>,
}

impl Quorum {
    /// Checks within `connect_timeout` that `quorum` (`host:port,...`) is ZooKeeper, or may
    /// be one (a server that took the connection and said nothing yet: a ZooKeeper stalled
    /// on its disk, or stopped), and starts the quorum's thread. Reads are under `parent`;
    /// with `sasl`, authenticated by SASL GSSAPI to the servers' principals of that first
    /// part (`zookeeper`, as in `zookeeper/HOST`).
    pub fn open(
        quorum: &str,
        parent: &str,
        settings: ZkSettings,
        connect_timeout: Duration,
        sasl: Option<String>,
    ) -> Result<Quorum> {
        identify(quorum, connect_timeout)?;
        let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
        let session = Session {
            quorum: quorum.to_string(),
            parent: parent.trim_end_matches('/').to_string(),
            settings,
            sasl,
        };
        let worker = std::thread::Builder::new()
            .name("zookeeper".into())
            .spawn(move || session.serve(rx))
            .map_err(|e| Error::Bootstrap(format!("cannot start ZooKeeper's thread: {e}")))?;
        Ok(Quorum {
            jobs: Some(tx),
            worker: Some(worker),
        })
    }

    /// The cluster's id, master and `hbase:meta` server, as the quorum holds them now.
    pub fn cluster(&self) -> Result<Cluster> {
        let (tx, rx) = std::sync::mpsc::sync_channel(1);
        let gone = || Error::Bootstrap("ZooKeeper's thread has stopped".into());
        self.jobs.as_ref().ok_or_else(gone)?.send(tx).map_err(|_| gone())?;
        rx.recv().map_err(|_| gone())?
    }
}

impl Drop for Quorum {
    /// Closes the session: the thread sends CloseSession and ends.
    fn drop(&mut self) {
        self.jobs.take();
        if let Some(w) = self.worker.take() {
            let _ = w.join();
        }
    }
}

/// Checks each server of `quorum`: an error when none is, or may be, ZooKeeper.
fn identify(quorum: &str, timeout: Duration) -> Result<()> {
    let hosts: Vec<&str> = quorum.split(',').collect();
    let started = Instant::now();
    let mut answers = Vec::new();
    for h in &hosts {
        let left = timeout
            .saturating_sub(started.elapsed())
            .max(Duration::from_millis(500));
        // A stalled ZooKeeper answers srvr when it resumes: wait for it most of the time
        // there is; what stays silent is then asked in the other protocols it may speak.
        let each = left / hosts.len() as u32;
        let answer = match crate::probe::zookeeper_srvr(h, each * 3 / 5) {
            Answer::Silent(_) => crate::probe::what_answers(h, (each / 10).max(Duration::from_millis(200))),
            a => a,
        };
        if matches!(answer, Answer::ZooKeeperSrvr | Answer::ZooKeeper | Answer::Silent(_)) {
            return Ok(());
        }
        answers.push((h.to_string(), answer));
    }
    if answers.iter().all(|(_, a)| matches!(a, Answer::Refused(_))) {
        return Err(Error::Bootstrap(format!(
            "no ZooKeeper server of the quorum {quorum} could be reached: {}",
            answers
                .iter()
                .map(|(h, a)| match a {
                    Answer::Refused(why) => format!("{h}: {why}"),
                    a => format!("{h}: {a}"),
                })
                .collect::<Vec<_>>()
                .join("; ")
        )));
    }
    let first = answers
        .iter()
        .map(|(_, a)| a)
        .find(|a| !matches!(a, Answer::Refused(_)))
        .map_or("", |a| a.hint());
    Err(Error::Bootstrap(format!(
        "{quorum} is not a ZooKeeper quorum: {}{first}",
        answers
            .iter()
            .map(|(h, a)| format!("at {h} {a}"))
            .collect::<Vec<_>>()
            .join("; ")
    )))
}

/// What the quorum's thread reads with.
struct Session {
    quorum: String,
    parent: String,
    settings: ZkSettings,
    sasl: Option<String>,
}

/// A failed read: ZooKeeper's error, or one already said in the client's terms.
enum Failure {
    Zk(zookeeper_client::Error),
    Said(Error),
}

impl Session {
    /// The thread: answers each job on one session, closed when idle for `keep_alive` and
    /// when the quorum is dropped.
    fn serve(self, mut jobs: tokio::sync::mpsc::UnboundedReceiver<Job>) {
        let runtime = match tokio::runtime::Builder::new_current_thread().enable_all().build() {
            Ok(r) => r,
            Err(e) => {
                let why = format!("cannot start ZooKeeper's runtime: {e}");
                while let Some(job) = jobs.blocking_recv() {
                    let _ = job.send(Err(Error::Bootstrap(why.clone())));
                }
                return;
            }
        };
        runtime.block_on(async {
            let mut session: Option<zookeeper_client::Client> = None;
            loop {
                let job = match &session {
                    None => jobs.recv().await,
                    Some(_) => match tokio::time::timeout(self.settings.keep_alive, jobs.recv()).await {
                        Ok(job) => job,
                        Err(_) => {
                            // Idle: the session's task sends CloseSession meanwhile.
                            session = None;
                            continue;
                        }
                    },
                };
                let Some(job) = job else { break };
                let answer = self.read(&mut session).await;
                let _ = job.send(answer);
            }
            drop(session);
            // The session's task sends CloseSession and ends; a server that does not answer
            // it is not waited for long.
            let handle = tokio::runtime::Handle::current();
            let until = Instant::now() + Duration::from_secs(2);
            while handle.metrics().num_alive_tasks() > 0 && Instant::now() < until {
                tokio::time::sleep(Duration::from_millis(5)).await;
            }
        });
    }

    /// Reads the cluster, trying again as HBase's client does.
    async fn read(&self, session: &mut Option<zookeeper_client::Client>) -> Result<Cluster> {
        let started = Instant::now();
        let mut retries = 0;
        loop {
            let attempt = async {
                if session.is_none() {
                    *session = Some(self.connect().await.map_err(Failure::Zk)?);
                }
                let client = session.as_ref().expect("connected");
                self.cluster(client).await
            }
            .await;
            let e = match attempt {
                Ok(c) => return Ok(c),
                Err(Failure::Said(e)) => return Err(e),
                Err(Failure::Zk(e)) => e,
            };
            use zookeeper_client::Error as Z;
            // HBase's client retries CONNECTIONLOSS, SESSIONEXPIRED and OPERATIONTIMEOUT; a
            // connection that heard nothing for its timeout is a connection lost.
            let again = match &e {
                Z::ConnectionLoss | Z::SessionExpired | Z::Timeout => true,
                Z::Custom(_) => e.to_string().contains("no response from connection"),
                _ => false,
            };
            if !again || retries >= self.settings.retries {
                return Err(self.said(e, started.elapsed(), retries));
            }
            if !matches!(e, Z::ConnectionLoss) {
                // A session that expired or never came is begun anew.
                *session = None;
            }
            retries += 1;
            tokio::time::sleep(self.settings.retry_interval).await;
        }
    }

    async fn connect(&self) -> std::result::Result<zookeeper_client::Client, zookeeper_client::Error> {
        let session = self.settings.session_timeout.max(Duration::from_secs(4));
        let connector = zookeeper_client::Client::connector()
            .with_session_timeout(session)
            .with_connection_timeout(session * 3 / 5);
        let connector = match &self.sasl {
            None => connector,
            #[cfg(feature = "zk-sasl")]
            Some(service) => {
                connector.with_sasl(zookeeper_client::SaslOptions::gssapi().with_username(service.to_string()))
            }
            #[cfg(not(feature = "zk-sasl"))]
            Some(_) => return Err(zookeeper_client::Error::UnexpectedError(NO_SASL.into())),
        };
        connector.connect(&self.quorum).await
    }

    async fn cluster(&self, client: &zookeeper_client::Client) -> std::result::Result<Cluster, Failure> {
        let (quorum, parent) = (&self.quorum, &self.parent);
        let get = |name: &'static str| {
            let path = format!("{parent}/{name}");
            async move {
                match client.get_data(&path).await {
                    Ok((data, _)) => Ok(data),
                    Err(zookeeper_client::Error::NoNode) => Err(Failure::Said(Error::Bootstrap(format!(
                        "ZooKeeper at {quorum} has no {path}: is {parent} the cluster's zookeeper.znode.parent{}?",
                        if parent == "/hbase" {
                            ""
                        } else {
                            " (the default is /hbase)"
                        }
                    )))),
                    Err(e) => Err(Failure::Zk(e)),
                }
            }
        };
        let bad = |name: &str| {
            Failure::Said(Error::Bootstrap(format!(
                "ZooKeeper at {quorum}: {parent}/{name} does not hold what HBase writes there"
            )))
        };
        let id = cluster_id(&get("hbaseid").await?).ok_or_else(|| bad("hbaseid"))?;
        let master = master(&get("master").await?).ok_or_else(|| bad("master"))?;
        let meta = meta_server(&get("meta-region-server").await?).ok_or_else(|| bad("meta-region-server"))?;
        Ok(Cluster { id, master, meta })
    }

    /// ZooKeeper's error, said in one line.
    fn said(&self, e: zookeeper_client::Error, after: Duration, retries: u32) -> Error {
        let quorum = &self.quorum;
        Error::Bootstrap(match (&e, &self.sasl) {
            // A quorum that requires SASL closes an anonymous session at its first request
            // (`zookeeper.enforce.auth.enabled`, or `sessionRequireClientSASLAuth`).
            (zookeeper_client::Error::AuthFailed, None) => {
                format!("ZooKeeper at {quorum} requires SASL authentication: add zk_sasl=gssapi to the URL")
            }
            (zookeeper_client::Error::AuthFailed, Some(service)) => format!(
                "ZooKeeper at {quorum} refused SASL GSSAPI as {service}/HOST's client (is the ticket's realm its?)"
            ),
            (zookeeper_client::Error::UnexpectedError(m), _) if m == NO_SASL => m.clone(),
            _ if retries > 0 => format!(
                "ZooKeeper at {quorum}: {e}, after {retries} retries in {:.1} s (zookeeper.recovery.retry, zookeeper.session.timeout)",
                after.as_secs_f64()
            ),
            _ => format!("ZooKeeper at {quorum}: {e}"),
        })
    }
}

/// The error of a build without SASL to ZooKeeper.
const NO_SASL: &str = "this build has no SASL to ZooKeeper (hbase-client's feature zk-sasl)";

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{Read, Write};

    /// A loopback server whose every connection `each` handles; its address.
    fn serve(each: fn(std::net::TcpStream)) -> String {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = l.local_addr().unwrap().to_string();
        std::thread::spawn(move || {
            for s in l.incoming().flatten() {
                std::thread::spawn(move || each(s));
            }
        });
        addr
    }

    #[test]
    fn a_quorum_is_checked_before_a_session_is_opened() {
        let t = Duration::from_secs(2);
        // Nothing listens: said at once.
        let free = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let nothing = free.local_addr().unwrap().to_string();
        drop(free);
        let e = identify(&nothing, t).unwrap_err().to_string();
        assert!(
            e.contains(&format!("no ZooKeeper server of the quorum {nothing} could be reached")),
            "{e}"
        );
        // ZooKeeper answers srvr in text, with no session.
        let zk = serve(|mut s| {
            let mut cmd = [0u8; 4];
            s.read_exact(&mut cmd).unwrap();
            assert_eq!(&cmd, b"srvr");
            s.write_all(b"Zookeeper version: 3.8.4, built on 2024\nMode: standalone\n")
                .unwrap();
        });
        identify(&zk, t).unwrap();
        // With either server of a quorum a ZooKeeper, the quorum is.
        identify(&format!("{nothing},{zk}"), t).unwrap();
        // Something else closes the connection on every protocol's first bytes.
        let other = serve(drop);
        let e = identify(&other, t).unwrap_err().to_string();
        assert!(
            e.contains(&format!(
                "{other} is not a ZooKeeper quorum: at {other} a server that speaks neither"
            )),
            "{e}"
        );
        // A server that took the connection and says nothing may be a ZooKeeper stalled on
        // its disk, or stopped: it is waited for, as HBase's client waits.
        let stalled = serve(|s| {
            std::thread::sleep(Duration::from_secs(30));
            drop(s);
        });
        identify(&stalled, t).unwrap();
    }

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
