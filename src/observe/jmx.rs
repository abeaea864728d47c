//! A region server's own figures from its web UI's `/jmx` (HBase's JMX JSON servlet), for
//! what only the server has: its compaction, flush and RPC queues, the updates it blocked
//! (a memstore over its limit), its GC time and JVM pauses. Plain HTTP to the info port the
//! server reports in its load, three beans a read (names as HBase 2.6.1 serves them).
//! Counters are kept as deltas between reads: the servers' own percentiles reset on every
//! snapshot, so none is used.

use std::io::{Read, Write};
use std::net::{TcpStream, ToSocketAddrs};
use std::time::Duration;

/// The beans read, and what of each.
const SERVER: &str = "Hadoop:service=HBase,name=RegionServer,sub=Server";
const IPC: &str = "Hadoop:service=HBase,name=RegionServer,sub=IPC";
const JVM: &str = "Hadoop:service=HBase,name=JvmMetrics";

/// The RPC queues a region server has, summed into one.
const QUEUES: [&str; 8] = [
    "numCallsInGeneralQueue",
    "numCallsInPriorityQueue",
    "numCallsInReplicationQueue",
    "numCallsInMetaPriorityQueue",
    "numCallsInReadQueue",
    "numCallsInWriteQueue",
    "numCallsInScanQueue",
    "numCallsInBulkLoadQueue",
];

/// The most of an answer read: a bean is a few tens of KiB.
const MAX_ANSWER: u64 = 4 << 20;

/// One read of a region server's beans: gauges as they were, counters since it started.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Reading {
    /// Compactions queued (`compactionQueueLength`).
    pub compactions_queued: u64,
    /// Flushes queued (`flushQueueLength`).
    pub flushes_queued: u64,
    /// Calls waiting in its RPC queues.
    pub rpc_queued: u64,
    /// Milliseconds updates were blocked (`updatesBlockedTime`), a counter.
    pub blocked_updates_ms: u64,
    /// Requests refused because a memstore was over its limit (`blockedRequestCount`).
    pub blocked_requests: u64,
    /// GC time (`GcTimeMillis`), a counter.
    pub gc_ms: u64,
    /// JVM pauses over the warning threshold (`pauseWarnThresholdExceeded`), a counter.
    pub pauses: u64,
}

/// Reads `host:port`'s beans, waiting at most `timeout` for each answer.
pub fn read(host: &str, port: u16, timeout: Duration) -> Result<Reading, String> {
    let server = bean(host, port, SERVER, timeout)?;
    let ipc = bean(host, port, IPC, timeout)?;
    let jvm = bean(host, port, JVM, timeout)?;
    Ok(reading(&server, &ipc, &jvm))
}

/// The figures of the three beans (a missing attribute counts 0: older servers lack some).
pub fn reading(server: &serde_json::Value, ipc: &serde_json::Value, jvm: &serde_json::Value) -> Reading {
    let n = |v: &serde_json::Value, k: &str| v.get(k).and_then(serde_json::Value::as_u64).unwrap_or(0);
    Reading {
        compactions_queued: n(server, "compactionQueueLength"),
        flushes_queued: n(server, "flushQueueLength"),
        rpc_queued: QUEUES.iter().map(|q| n(ipc, q)).sum(),
        blocked_updates_ms: n(server, "updatesBlockedTime"),
        blocked_requests: n(server, "blockedRequestCount"),
        gc_ms: n(jvm, "GcTimeMillis"),
        pauses: n(server, "pauseWarnThresholdExceeded"),
    }
}

/// One bean by name: `{"beans": [ {...} ]}`'s first.
fn bean(host: &str, port: u16, name: &str, timeout: Duration) -> Result<serde_json::Value, String> {
    let body = get(host, port, &format!("/jmx?qry={name}"), timeout)?;
    let doc: serde_json::Value =
        serde_json::from_slice(&body).map_err(|e| format!("{host}:{port}/jmx {name}: not JSON: {e}"))?;
    doc.get("beans")
        .and_then(|b| b.as_array())
        .and_then(|b| b.first())
        .cloned()
        .ok_or_else(|| format!("{host}:{port}/jmx has no bean {name}"))
}

/// `GET path` over HTTP/1.0 (so the answer is not chunked), its body when the status is 200.
fn get(host: &str, port: u16, path: &str, timeout: Duration) -> Result<Vec<u8>, String> {
    let at = format!("{host}:{port}");
    let addr = at
        .to_socket_addrs()
        .map_err(|e| format!("{at}: {e}"))?
        .next()
        .ok_or_else(|| format!("{at}: no address"))?;
    let mut s = TcpStream::connect_timeout(&addr, timeout).map_err(|e| format!("{at}: {e}"))?;
    s.set_read_timeout(Some(timeout)).map_err(|e| format!("{at}: {e}"))?;
    s.set_write_timeout(Some(timeout)).map_err(|e| format!("{at}: {e}"))?;
    write!(
        s,
        "GET {path} HTTP/1.0\r\nHost: {at}\r\nAccept: application/json\r\n\r\n"
    )
    .map_err(|e| format!("{at}: {e}"))?;
    let mut answer = Vec::new();
    s.take(MAX_ANSWER)
        .read_to_end(&mut answer)
        .map_err(|e| format!("{at}{path}: {e}"))?;
    body(&answer).map_err(|e| format!("{at}{path}: {e}"))
}

/// The body of an HTTP answer whose status is 200.
fn body(answer: &[u8]) -> Result<Vec<u8>, String> {
    let end = answer
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .ok_or("the answer has no end of headers")?;
    let head = String::from_utf8_lossy(&answer[..end]);
    let status = head.lines().next().unwrap_or("");
    let code = status.split_whitespace().nth(1).unwrap_or("");
    if code != "200" {
        let negotiate = head
            .lines()
            .any(|l| l.to_ascii_lowercase().starts_with("www-authenticate: negotiate"));
        return Err(if negotiate {
            format!("{status}: the info server asks for SPNEGO (Kerberos over HTTP)")
        } else {
            status.to_string()
        });
    }
    Ok(answer[end + 4..].to_vec())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_beans_give_the_figures_and_missing_ones_count_nothing() {
        let server = json!({"compactionQueueLength": 3, "flushQueueLength": 1, "updatesBlockedTime": 1200,
            "blockedRequestCount": 35, "pauseWarnThresholdExceeded": 2, "smallCompactionQueueLength": 9});
        let ipc = json!({"numCallsInGeneralQueue": 4, "numCallsInWriteQueue": 5, "queueSize": 999});
        let jvm = json!({"GcTimeMillis": 366, "GcCount": 10});
        assert_eq!(
            reading(&server, &ipc, &jvm),
            Reading {
                compactions_queued: 3,
                flushes_queued: 1,
                rpc_queued: 9,
                blocked_updates_ms: 1200,
                blocked_requests: 35,
                gc_ms: 366,
                pauses: 2,
            }
        );
        assert_eq!(reading(&json!({}), &json!({}), &json!({})), Reading::default());
    }

    #[test]
    fn answers_other_than_200_say_why() {
        assert_eq!(body(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n{}").unwrap(), b"{}");
        assert_eq!(
            body(b"HTTP/1.1 404 Not Found\r\n\r\n").unwrap_err(),
            "HTTP/1.1 404 Not Found"
        );
        let e = body(b"HTTP/1.1 401 Unauthorized\r\nWWW-Authenticate: Negotiate\r\n\r\n").unwrap_err();
        assert!(e.contains("SPNEGO"), "{e}");
        assert!(body(b"HTTP/1.1 200 OK").is_err());
    }
}
