//! The `/metrics` endpoint: a small HTTP/1.1 server that answers `GET /metrics` with the
//! text exposition and closes the connection. It reads at most a few KiB of a request,
//! waits at most a few seconds for it, and serves a few scrapers at a time, so that a
//! hostile client costs it nothing but its own connection.

use super::Metrics;
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream, ToSocketAddrs};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;

/// Longest request head read.
const MAX_HEAD: usize = 8 << 10;
/// How long a scraper may take to send its request and read the answer.
const TIMEOUT: Duration = Duration::from_secs(5);
/// Scrapes served at once; more connections are closed unanswered.
const MAX_SCRAPERS: usize = 8;

/// Why the endpoint could not start, in one line.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct StartError(pub String);

/// The running endpoint; stops when dropped.
pub struct Exporter {
    addr: SocketAddr,
    stop: Arc<AtomicBool>,
    accept: Option<std::thread::JoinHandle<()>>,
}

impl Exporter {
    /// Serves `metrics` on `addr` (`--metrics`): a loopback address unless `allow_remote`.
    pub fn start(addr: &str, allow_remote: bool, metrics: Arc<Metrics>) -> Result<Exporter, StartError> {
        let bind = addr
            .to_socket_addrs()
            .ok()
            .and_then(|mut a| a.next())
            .ok_or_else(|| StartError(format!("--metrics {addr}: not a HOST:PORT address")))?;
        if !bind.ip().is_loopback() && !allow_remote {
            return Err(StartError(format!(
                "--metrics {addr}: not a loopback address; the metrics have no authentication, so pass --allow-remote to serve other hosts"
            )));
        }
        let cannot = |e: std::io::Error| StartError(format!("--metrics {addr}: cannot listen: {e}"));
        let listener = TcpListener::bind(bind).map_err(cannot)?;
        let addr = listener.local_addr().map_err(cannot)?;
        let stop = Arc::new(AtomicBool::new(false));
        let busy = Arc::new(AtomicUsize::new(0));
        let accept = std::thread::Builder::new()
            .name("metrics".into())
            .spawn({
                let stop = stop.clone();
                move || {
                    for stream in listener.incoming() {
                        if stop.load(Ordering::Relaxed) {
                            return;
                        }
                        let Ok(stream) = stream else {
                            std::thread::sleep(Duration::from_millis(10));
                            continue;
                        };
                        if busy.fetch_add(1, Ordering::Relaxed) >= MAX_SCRAPERS {
                            busy.fetch_sub(1, Ordering::Relaxed);
                            continue;
                        }
                        let (metrics, busy) = (metrics.clone(), busy.clone());
                        let spawned = std::thread::Builder::new()
                            .name("metrics-scrape".into())
                            .stack_size(256 << 10)
                            .spawn(move || {
                                let _ = answer(stream, &metrics);
                                busy.fetch_sub(1, Ordering::Relaxed);
                            });
                        if spawned.is_err() {
                            std::thread::sleep(Duration::from_millis(10));
                        }
                    }
                }
            })
            .map_err(|e| StartError(format!("--metrics {addr}: cannot start its thread: {e}")))?;
        Ok(Exporter {
            addr,
            stop,
            accept: Some(accept),
        })
    }

    /// The address served (with the port chosen when 0 was asked for).
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }
}

impl Drop for Exporter {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        // Wake the accept loop.
        let _ = TcpStream::connect_timeout(&self.addr, Duration::from_secs(1));
        if let Some(t) = self.accept.take() {
            let _ = t.join();
        }
    }
}

/// Reads one request head and answers it.
fn answer(mut stream: TcpStream, metrics: &Metrics) -> std::io::Result<()> {
    stream.set_read_timeout(Some(TIMEOUT))?;
    stream.set_write_timeout(Some(TIMEOUT))?;
    let mut head = Vec::with_capacity(1024);
    let mut buf = [0u8; 1024];
    let complete = loop {
        if head.windows(4).any(|w| w == b"\r\n\r\n") || head.windows(2).any(|w| w == b"\n\n") {
            break true;
        }
        if head.len() >= MAX_HEAD {
            break false;
        }
        let n = stream.read(&mut buf)?;
        if n == 0 {
            break false;
        }
        head.extend_from_slice(&buf[..n.min(MAX_HEAD - head.len())]);
    };
    let line = head.split(|&b| b == b'\n').next().unwrap_or_default();
    let line = String::from_utf8_lossy(line);
    let mut words = line.split_whitespace();
    let (method, target, version) = (words.next(), words.next(), words.next());
    let (status, body) = if !complete && head.len() >= MAX_HEAD {
        (
            "431 Request Header Fields Too Large",
            "request head too large\n".to_string(),
        )
    } else if !complete || !version.is_some_and(|v| v.starts_with("HTTP/1.")) {
        ("400 Bad Request", "not an HTTP/1.x request\n".to_string())
    } else if !matches!(method, Some("GET" | "HEAD")) {
        ("405 Method Not Allowed", "only GET /metrics\n".to_string())
    } else if target.map(|t| t.split('?').next().unwrap_or(t)) != Some("/metrics") {
        ("404 Not Found", "metrics are at /metrics\n".to_string())
    } else {
        ("200 OK", metrics.render())
    };
    let kind = if status.starts_with("200") {
        "text/plain; version=0.0.4; charset=utf-8"
    } else {
        "text/plain; charset=utf-8"
    };
    let mut reply = format!(
        "HTTP/1.1 {status}\r\nContent-Type: {kind}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    )
    .into_bytes();
    if method != Some("HEAD") {
        reply.extend_from_slice(body.as_bytes());
    }
    stream.write_all(&reply)?;
    stream.flush()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ask(addr: SocketAddr, request: &[u8]) -> String {
        let mut s = TcpStream::connect(addr).unwrap();
        s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
        s.write_all(request).unwrap();
        let mut reply = String::new();
        let _ = s.read_to_string(&mut reply);
        reply
    }

    #[test]
    fn answers_metrics_and_refuses_the_rest() {
        let m = Arc::new(Metrics::new("serve", &[]));
        m.call("getRow");
        let e = Exporter::start("127.0.0.1:0", false, m).unwrap();
        let ok = ask(e.addr(), b"GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n");
        assert!(ok.starts_with("HTTP/1.1 200 OK\r\n"), "{ok}");
        assert!(ok.contains("text/plain; version=0.0.4"), "{ok}");
        assert!(ok.contains("tallrow_serve_calls_total{method=\"getRow\"} 1\n"), "{ok}");
        let head = ask(e.addr(), b"HEAD /metrics HTTP/1.0\r\n\r\n");
        assert!(
            head.starts_with("HTTP/1.1 200 OK\r\n") && head.ends_with("\r\n\r\n"),
            "{head}"
        );
        for (request, status) in [
            (&b"GET / HTTP/1.1\r\n\r\n"[..], "404"),
            (b"POST /metrics HTTP/1.1\r\n\r\n", "405"),
            (b"\x00\x01garbage\r\n\r\n", "400"),
        ] {
            let reply = ask(e.addr(), request);
            assert!(reply.starts_with(&format!("HTTP/1.1 {status}")), "{reply}");
        }
        let huge = [b"GET /metrics HTTP/1.1\r\nX: ".to_vec(), vec![b'a'; 100_000]].concat();
        let mut s = TcpStream::connect(e.addr()).unwrap();
        let _ = s.write_all(&huge);
        let mut reply = String::new();
        let _ = s.read_to_string(&mut reply);
        // The answer may be lost to the reset that closing on unread bytes sends.
        assert!(reply.is_empty() || reply.starts_with("HTTP/1.1 431"), "{reply}");
        // Still serving after all that.
        assert!(ask(e.addr(), b"GET /metrics HTTP/1.1\r\n\r\n").starts_with("HTTP/1.1 200"));
    }

    #[test]
    fn remote_addresses_need_allowing() {
        let m = Arc::new(Metrics::default());
        let err = Exporter::start("0.0.0.0:0", false, m.clone())
            .err()
            .unwrap()
            .to_string();
        assert!(
            err.contains("not a loopback address") && err.contains("--allow-remote"),
            "{err}"
        );
        let err = Exporter::start("nowhere", false, m).err().unwrap().to_string();
        assert!(err.contains("--metrics nowhere: not a HOST:PORT address"), "{err}");
    }
}
