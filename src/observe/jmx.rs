//! A region server's own figures from its web UI's `/jmx` (HBase's JMX JSON servlet), for
//! what only the server has: its compaction, flush and RPC queues, the updates it blocked
//! (a memstore over its limit), its GC time and JVM pauses. HTTP to the info port the server
//! reports in its load (with SPNEGO where it asks for it), three beans a read (names as HBase
//! 2.6.1 serves them).
//! Counters are kept as deltas between reads: the servers' own percentiles reset on every
//! snapshot, so none is used.

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
/// Hadoop's servlet answers no bean while the server's metrics system re-registers its
/// sources (HBase does when tables come and go: `{"beans" : [ ]}` for a few hundred ms, as
/// the info server's request log shows), so such a read is made again, twice at most.
fn bean(host: &str, port: u16, name: &str, timeout: Duration) -> Result<serde_json::Value, String> {
    for attempt in 0..3 {
        let body = get(host, port, &format!("/jmx?qry={name}"), timeout)?;
        let doc: serde_json::Value =
            serde_json::from_slice(&body).map_err(|e| format!("{host}:{port}/jmx {name}: not JSON: {e}"))?;
        if let Some(bean) = doc.get("beans").and_then(|b| b.as_array()).and_then(|b| b.first()) {
            return Ok(bean.clone());
        }
        if attempt < 2 {
            std::thread::sleep(Duration::from_millis(500));
        }
    }
    Err(format!("{host}:{port}/jmx has no bean {name}"))
}

/// `GET path` on the info server, its body when the answer is 200. A server that asks for
/// Kerberos (`401` with `WWW-Authenticate: Negotiate`, `hbase.security.authentication.ui`
/// kerberos) is asked again with a SPNEGO token for `HTTP/host`, from the process's
/// credentials, as the backend's own calls are made.
fn get(host: &str, port: u16, path: &str, timeout: Duration) -> Result<Vec<u8>, String> {
    let url = format!("http://{host}:{port}{path}");
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .http_status_as_error(false)
        .max_redirects(0)
        .timeout_global(Some(timeout))
        .user_agent("tallrow")
        .build()
        .into();
    let at = |e: String| format!("{host}:{port}{path}: {e}");
    let mut answer = agent.get(&url).call().map_err(|e| at(e.to_string()))?;
    if answer.status().as_u16() == 401 && asks_negotiate(&answer) {
        let token = crate::secure::negotiate("HTTP", host)
            .map_err(|e| at(format!("the info server asks for SPNEGO (Kerberos over HTTP): {e}")))?;
        answer = agent
            .get(&url)
            .header("Authorization", format!("Negotiate {token}"))
            .call()
            .map_err(|e| at(e.to_string()))?;
        if answer.status().as_u16() == 401 {
            return Err(at("the info server refused the SPNEGO token (401)".into()));
        }
    }
    let status = answer.status().as_u16();
    if status != 200 {
        return Err(at(match status {
            401 => "401: the info server asks for a login tallrow does not make".to_string(),
            s => format!("HTTP {s}"),
        }));
    }
    answer
        .into_body()
        .with_config()
        .limit(MAX_ANSWER)
        .read_to_vec()
        .map_err(|e| at(e.to_string()))
}

fn asks_negotiate(answer: &ureq::http::Response<ureq::Body>) -> bool {
    answer.headers().get_all("WWW-Authenticate").iter().any(|v| {
        v.to_str()
            .is_ok_and(|v| v.trim().to_ascii_lowercase().starts_with("negotiate"))
    })
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
}
