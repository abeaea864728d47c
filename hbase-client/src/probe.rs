//! Naming what listens at an address when it is not what a client expected there: a
//! ZooKeeper server, an HBase RPC server (a master or a region server), a Thrift gateway (in
//! its binary, framed or HTTP mode), or something else. Each guess is one short exchange on
//! a connection of its own, in the other server's protocol, bounded by a timeout.

use crate::conn;
use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::Duration;

/// What answered at an address.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Answer {
    /// Nothing listens.
    Refused(String),
    /// A ZooKeeper server: it answered ZooKeeper's handshake.
    ZooKeeper,
    /// An HBase master or region server: it answered an HBase RPC call.
    HBaseRpc,
    /// A Thrift server, in the transport named.
    Thrift(&'static str),
    /// An HTTP server (such as a Thrift gateway in HTTP mode).
    Http,
    /// It took the connection but answered none of the above.
    Unknown,
    /// It took the connection and said nothing, nor closed it, within the time given each
    /// exchange: a server stalled (a stopped process, one waiting on its disk) or one that
    /// waits for more than any of these protocols sends first.
    Silent(Duration),
    /// It answered ZooKeeper's `srvr` command (ZooKeeper's own, with no session).
    ZooKeeperSrvr,
}

impl Answer {
    /// What to do instead, when a client expected something else there.
    pub fn hint(&self) -> &'static str {
        match self {
            Answer::Thrift(_) | Answer::Http => {
                " (a Thrift gateway is reached as hbase://HOST:PORT?api=thrift1 or api=thrift2, with transport=http for HTTP mode)"
            }
            Answer::HBaseRpc => " (to bootstrap from masters or region servers, add registry=rpc)",
            _ => "",
        }
    }
}

impl std::fmt::Display for Answer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Answer::Refused(why) => write!(f, "nothing answered ({why})"),
            Answer::ZooKeeper => f.write_str("a ZooKeeper server answered"),
            Answer::HBaseRpc => f.write_str("an HBase RPC server (a master or region server) answered"),
            Answer::Thrift(t) => write!(f, "a Thrift server ({t}) answered"),
            Answer::Http => f.write_str("an HTTP server answered"),
            Answer::Unknown => {
                f.write_str("a server that speaks neither ZooKeeper, HBase RPC, Thrift nor HTTP answered")
            }
            Answer::Silent(t) => write!(f, "a server took the connection but answered nothing within {t:?}"),
            Answer::ZooKeeperSrvr => f.write_str("a ZooKeeper server answered srvr"),
        }
    }
}

/// Asks `addr` in each protocol in turn, each exchange within `timeout`. Where no exchange
/// got a byte or a close, [`Answer::Silent`].
pub fn what_answers(addr: &str, timeout: Duration) -> Answer {
    let open = || -> Result<TcpStream, String> {
        let s = conn::connect(addr, timeout).map_err(|e| match e {
            crate::Error::Connection { why, .. } => why,
            e => e.to_string(),
        })?;
        s.set_read_timeout(Some(timeout)).map_err(|e| e.to_string())?;
        s.set_write_timeout(Some(timeout)).map_err(|e| e.to_string())?;
        Ok(s)
    };
    let mut s = match open() {
        Ok(s) => s,
        Err(why) => return Answer::Refused(why),
    };
    let mut heard = false;
    // ZooKeeper's ConnectRequest: protocol version, last zxid, timeout, session id, password,
    // read-only.
    let mut zk = Vec::new();
    zk.extend_from_slice(&0i32.to_be_bytes());
    zk.extend_from_slice(&0i64.to_be_bytes());
    zk.extend_from_slice(&10_000i32.to_be_bytes());
    zk.extend_from_slice(&0i64.to_be_bytes());
    zk.extend_from_slice(&16i32.to_be_bytes());
    zk.extend_from_slice(&[0u8; 16]);
    zk.push(0);
    match exchange(&mut s, &[&(zk.len() as u32).to_be_bytes()[..], &zk].concat()) {
        Heard::Bytes(first) => {
            heard = true;
            let len = u32::from_be_bytes(first);
            if (36..=37).contains(&len) {
                return Answer::ZooKeeper;
            }
            if let Some(a) = by_bytes(&first) {
                return a;
            }
        }
        Heard::Closed => heard = true,
        Heard::Nothing => {}
    }
    // An HBase call: any reply whose header parses is HBase's.
    if let Ok(c) = conn::Conn::open(addr, conn::Service::Client, &conn::Options::default()) {
        match c.call("Get", &crate::pb::GetRequest::default(), b"", timeout) {
            Ok(_) | Err(crate::Error::Remote { .. }) => return Answer::HBaseRpc,
            Err(crate::Error::Protocol(why)) if why.contains("HTTP") => return Answer::Http,
            Err(crate::Error::Protocol(why)) if why.contains("Thrift") => return Answer::Thrift("binary"),
            Err(crate::Error::Timeout { .. }) => {}
            Err(_) => heard = true,
        }
    }
    // Thrift1's getTableNames, in the binary and compact protocols, buffered and framed.
    let mut binary = Vec::new();
    binary.extend_from_slice(&0x8001_0001u32.to_be_bytes());
    binary.extend_from_slice(&13u32.to_be_bytes());
    binary.extend_from_slice(b"getTableNames");
    binary.extend_from_slice(&0u32.to_be_bytes());
    binary.push(0);
    let mut compact = vec![0x82, 0x21, 0, 13];
    compact.extend_from_slice(b"getTableNames");
    compact.push(0);
    let framed = |b: &[u8]| [&(b.len() as u32).to_be_bytes()[..], b].concat();
    for (bytes, kind, frames) in [
        (binary.clone(), "binary", false),
        (framed(&binary), "binary, framed", true),
        (compact.clone(), "compact", false),
        (framed(&compact), "compact, framed", true),
    ] {
        let Ok(mut s) = open() else { break };
        match exchange(&mut s, &bytes) {
            Heard::Bytes(first) => {
                heard = true;
                let thrift = match frames {
                    false => first[..2] == [0x80, 0x01] || first[0] == 0x82,
                    true => u32::from_be_bytes(first) < 1 << 20,
                };
                if thrift {
                    return Answer::Thrift(kind);
                }
                if let Some(a) = by_bytes(&first) {
                    return a;
                }
            }
            Heard::Closed => heard = true,
            Heard::Nothing => {}
        }
    }
    if heard {
        Answer::Unknown
    } else {
        Answer::Silent(timeout)
    }
}

/// Sends ZooKeeper's `srvr` four-letter command, which a ZooKeeper server answers (or, where
/// it is not allowed, refuses) in text, with no session: [`Answer::ZooKeeperSrvr`] where
/// the answer is ZooKeeper's; [`Answer::Silent`] where nothing came within `timeout`;
/// otherwise what [`what_answers`] finds there.
pub fn zookeeper_srvr(addr: &str, timeout: Duration) -> Answer {
    let mut s = match conn::connect(addr, timeout) {
        Ok(s) => s,
        Err(crate::Error::Connection { why, .. }) => return Answer::Refused(why),
        Err(e) => return Answer::Refused(e.to_string()),
    };
    let _ = s.set_read_timeout(Some(timeout));
    let _ = s.set_write_timeout(Some(timeout));
    let mut text = Vec::new();
    let heard = s.write_all(b"srvr").is_ok() && {
        let mut buf = [0u8; 256];
        loop {
            match s.read(&mut buf) {
                Ok(0) => break true,
                Ok(n) => {
                    text.extend_from_slice(&buf[..n]);
                    if text.len() >= 64 {
                        break true;
                    }
                }
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(_) => break !text.is_empty(),
            }
        }
    };
    let text = String::from_utf8_lossy(&text);
    if text.starts_with("Zookeeper version") || text.contains("is not executed because it is not in the whitelist") {
        return Answer::ZooKeeperSrvr;
    }
    if !heard {
        return Answer::Silent(timeout);
    }
    what_answers(addr, timeout)
}

/// What one exchange heard back.
enum Heard {
    /// The first four bytes of an answer.
    Bytes([u8; 4]),
    /// The server closed the connection (or reset it) without them.
    Closed,
    /// Nothing within the timeout.
    Nothing,
}

/// Writes `bytes` and reads the first four bytes of an answer, if any comes.
fn exchange(s: &mut TcpStream, bytes: &[u8]) -> Heard {
    if s.write_all(bytes).is_err() {
        return Heard::Closed;
    }
    let mut first = [0u8; 4];
    match s.read_exact(&mut first) {
        Ok(()) => Heard::Bytes(first),
        Err(e) if matches!(e.kind(), std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut) => Heard::Nothing,
        Err(_) => Heard::Closed,
    }
}

fn by_bytes(first: &[u8; 4]) -> Option<Answer> {
    match first {
        b"HTTP" => Some(Answer::Http),
        [0x80, 0x01, ..] => Some(Answer::Thrift("binary")),
        _ => None,
    }
}
