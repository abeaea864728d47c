//! Thrift over HTTP, as HBase's HTTP mode serves it (`hbase.regionserver.thrift.http`):
//! every message is one POST whose response body is its reply. HBase's servlet reads one
//! message per request, so a pipelined window costs a round trip per call here. Requests
//! go over kept-alive connections (ureq's pool), through TLS when the URL says so (rustls,
//! the certificate and its host name verified against `ca=` or Mozilla's roots), each with
//! a fresh SPNEGO token when Kerberos is asked for: HBase authenticates every request.

use super::{Error, Spec};
use std::collections::VecDeque;
use std::io::{self, Read, Write};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// The endpoint and the agent whose pool holds its connections.
pub(super) struct Http {
    agent: ureq::Agent,
    url: String,
    who: String,
    /// The SPNEGO target (`service`, `host`), when Kerberos is asked for.
    negotiate: Option<(String, String)>,
    limit: usize,
    tls: bool,
    /// What the certificate is checked against, for errors.
    roots: String,
}

/// The TLS roots the URL names: its `ca=` file's certificates, or Mozilla's.
fn roots(ca: Option<&std::path::Path>) -> Result<ureq::tls::RootCerts, Error> {
    let Some(path) = ca else {
        return Ok(ureq::tls::RootCerts::WebPki);
    };
    let pem = std::fs::read(path).map_err(|e| Error::BadArgument(format!("ca={}: {e}", path.display())))?;
    let mut certs = Vec::new();
    for item in ureq::tls::parse_pem(&pem) {
        match item {
            Ok(ureq::tls::PemItem::Certificate(c)) => certs.push(c),
            Ok(_) => {}
            Err(e) => return Err(Error::BadArgument(format!("ca={}: {e}", path.display()))),
        }
    }
    if certs.is_empty() {
        return Err(Error::BadArgument(format!(
            "ca={}: no PEM certificate (-----BEGIN CERTIFICATE-----) in it",
            path.display()
        )));
    }
    Ok(ureq::tls::RootCerts::Specific(Arc::new(certs)))
}

impl Http {
    /// The endpoint of `spec`, which asks for HTTP.
    pub(super) fn new(spec: &Spec, connect: Duration, read: Duration, limit: usize) -> Result<Http, Error> {
        let tls = spec.tls.as_ref();
        let tls_config = ureq::tls::TlsConfig::builder()
            .provider(ureq::tls::TlsProvider::Rustls)
            .root_certs(roots(tls.and_then(|t| t.ca.as_deref()))?)
            .build();
        let config = ureq::Agent::config_builder()
            .tls_config(tls_config)
            .http_status_as_error(false)
            .max_redirects(0)
            .timeout_connect(Some(connect))
            .timeout_per_call(Some(read))
            .max_idle_connections(4096)
            .max_idle_connections_per_host(4096)
            // Less than the servers' idle timeout, as the socket pool's.
            .max_idle_age(super::Pool::<()>::STALE)
            .user_agent("tallrow")
            .build();
        let scheme = if tls.is_some() { "https" } else { "http" };
        Ok(Http {
            agent: config.into(),
            url: format!("{scheme}://{}/", spec.authority()),
            who: spec.authority(),
            negotiate: spec.sasl.as_ref().map(|s| {
                (
                    s.service.clone().unwrap_or_else(|| "HTTP".to_string()),
                    spec.host.clone(),
                )
            }),
            limit,
            tls: tls.is_some(),
            roots: match tls.and_then(|t| t.ca.as_deref()) {
                Some(ca) => format!("ca={}", ca.display()),
                None => "Mozilla's roots (no ca= given)".to_string(),
            },
        })
    }

    /// A connection's two halves: messages written are POSTed, replies read in order.
    pub(super) fn exchange(self: &Arc<Self>) -> (Replies, Poster) {
        let replies = Arc::new(Mutex::new(VecDeque::new()));
        (
            Replies(replies.clone()),
            Poster {
                http: self.clone(),
                replies,
            },
        )
    }

    fn post(&self, body: &[u8]) -> Result<Vec<u8>, io::Error> {
        let mut request = self
            .agent
            .post(&self.url)
            .header("Content-Type", "application/x-thrift")
            .header("Accept", "application/x-thrift");
        if let Some((service, host)) = &self.negotiate {
            let token = crate::secure::negotiate(service, host).map_err(|e| denied(&self.who, &e))?;
            request = request.header("Authorization", format!("Negotiate {token}"));
        }
        let response = request.send(body).map_err(|e| self.failed(e))?;
        let status = response.status().as_u16();
        if status == 401 {
            let asks = response
                .headers()
                .get("WWW-Authenticate")
                .and_then(|v| v.to_str().ok())
                .unwrap_or("")
                .to_string();
            let why = if self.negotiate.is_some() {
                format!("the server refused the SPNEGO token (401, WWW-Authenticate: {asks})")
            } else {
                format!("the server asks for Kerberos (401, WWW-Authenticate: {asks}): add sasl=gssapi to the URL")
            };
            return Err(denied(&self.who, &why));
        }
        if status != 200 {
            let text = response
                .into_body()
                .with_config()
                .limit(4096)
                .read_to_string()
                .unwrap_or_default();
            let line = text.lines().find(|l| !l.trim().is_empty()).unwrap_or("").trim();
            return Err(io::Error::other(format!(
                "HTTP {status} from {}: {}",
                self.who,
                crate::store::first_line(line)
            )));
        }
        response
            .into_body()
            .with_config()
            .limit(self.limit as u64)
            .read_to_vec()
            .map_err(|e| self.failed(e))
    }

    /// A TLS failure, with the roots the certificate was checked against.
    fn tls_failure(&self, r: &rustls::Error) -> String {
        match r {
            rustls::Error::InvalidCertificate(c) => format!(
                "TLS: the server's certificate does not verify against {} ({c:?})",
                self.roots
            ),
            other => format!("TLS: {other}"),
        }
    }

    /// A ureq error as one line, TLS failures named as such.
    fn failed(&self, e: ureq::Error) -> io::Error {
        match e {
            ureq::Error::Rustls(r) => denied(&self.who, &self.tls_failure(&r)),
            ureq::Error::Tls(t) => denied(&self.who, &format!("TLS: {t}")),
            ureq::Error::Io(io) => match io.get_ref().and_then(|i| i.downcast_ref::<rustls::Error>()) {
                Some(r) => denied(&self.who, &self.tls_failure(r)),
                None => io,
            },
            ureq::Error::Protocol(p) => denied(
                &self.who,
                &format!(
                    "the answer is no HTTP ({p}){}",
                    if self.tls {
                        ""
                    } else {
                        ": an HTTPS server? add tls=true"
                    }
                ),
            ),
            ureq::Error::Timeout(t) => io::Error::new(io::ErrorKind::TimedOut, format!("{} timed out ({t})", self.who)),
            ureq::Error::ConnectionFailed => io::Error::new(
                io::ErrorKind::ConnectionRefused,
                format!("cannot connect to {}", self.who),
            ),
            other => io::Error::other(format!("HTTP to {}: {other}", self.who)),
        }
    }
}

/// The message of an error that retrying cannot cure: authentication or TLS.
pub(super) const DENIED: &str = "cannot authenticate to ";

fn denied(who: &str, why: &str) -> io::Error {
    io::Error::new(io::ErrorKind::PermissionDenied, format!("{DENIED}{who}: {why}"))
}

/// A connection's reading half: the replies POSTs brought back, in order.
pub(super) struct Replies(Arc<Mutex<VecDeque<u8>>>);

impl Read for Replies {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let mut q = self.0.lock().unwrap_or_else(|p| p.into_inner());
        if q.is_empty() {
            return Err(io::Error::new(io::ErrorKind::UnexpectedEof, "no HTTP reply is pending"));
        }
        let n = q.read(buf)?;
        Ok(n)
    }
}

impl crate::wire::Source for Replies {}

/// A connection's writing half: each write is one message, POSTed.
pub(super) struct Poster {
    http: Arc<Http>,
    replies: Arc<Mutex<VecDeque<u8>>>,
}

impl Write for Poster {
    fn write(&mut self, data: &[u8]) -> io::Result<usize> {
        if data.is_empty() {
            return Ok(0);
        }
        let body = self.http.post(data)?;
        self.replies.lock().unwrap_or_else(|p| p.into_inner()).extend(body);
        Ok(data.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_ca_file_must_hold_a_certificate() {
        let dir = tempfile::tempdir().unwrap();
        let missing = dir.path().join("missing.pem");
        let e = roots(Some(&missing)).unwrap_err().to_string();
        assert!(e.starts_with(&format!("ca={}: ", missing.display())), "{e}");
        let empty = dir.path().join("empty.pem");
        std::fs::write(&empty, "not a certificate\n").unwrap();
        let e = roots(Some(&empty)).unwrap_err().to_string();
        assert!(e.contains("no PEM certificate"), "{e}");
        assert!(matches!(roots(None).unwrap(), ureq::tls::RootCerts::WebPki));
    }
}
