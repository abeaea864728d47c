//! TLS on HBase's own RPC, as HBase 2.6's Netty client speaks it
//! (`hbase.client.netty.tls.enabled`): the handshake comes first on the socket, and the
//! `HBas` preamble, any SASL exchange and every call then go inside it. A server with
//! `hbase.server.netty.tls.enabled` takes it (beside plain connections while
//! `hbase.server.netty.tls.supportplaintext` is on, its default).
//!
//! The server's certificate is verified against the roots given and its name against the
//! host the client reached; nothing here skips either. TLS 1.2 is offered beside 1.3, since a
//! server enables only TLSv1.2 unless `hbase.rpc.tls.enabledProtocols` says more.
//!
//! A connection's reader (whichever caller's turn it is) and its writers share one TLS
//! session: the reader waits on the socket holding no lock, and records leave the socket in
//! the order they were sealed. A read that times out leaves the session as it was.

use crate::error::{Error, Result};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, ServerName};
use std::io::{self, Read, Write};
use std::net::TcpStream;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

/// How connections verify the servers they reach.
#[derive(Clone)]
pub struct Tls {
    config: Arc<rustls::ClientConfig>,
    /// Where the roots came from, for errors.
    roots: String,
}

impl std::fmt::Debug for Tls {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Tls").field("roots", &self.roots).finish()
    }
}

impl Tls {
    /// Trusts the CA certificates of a PEM file (`ca=PATH`).
    pub fn with_ca_file(path: &std::path::Path) -> std::result::Result<Tls, String> {
        let pem = std::fs::read(path).map_err(|e| format!("ca={}: {e}", path.display()))?;
        let mut roots = rustls::RootCertStore::empty();
        for cert in CertificateDer::pem_slice_iter(&pem) {
            let cert = cert.map_err(|e| format!("ca={}: not a PEM file of certificates: {e}", path.display()))?;
            roots
                .add(cert)
                .map_err(|e| format!("ca={}: a certificate that is not a CA's: {e}", path.display()))?;
        }
        if roots.is_empty() {
            return Err(format!("ca={}: no certificate in it", path.display()));
        }
        Tls::with_roots(roots, format!("the CA in ca={}", path.display()))
    }

    /// Trusts the public web's CAs (Mozilla's list, as webpki-roots ships it).
    pub fn with_public_roots() -> std::result::Result<Tls, String> {
        let roots = rustls::RootCertStore {
            roots: webpki_roots::TLS_SERVER_ROOTS.to_vec(),
        };
        Tls::with_roots(roots, "the public CAs (no ca= given)".into())
    }

    fn with_roots(roots: rustls::RootCertStore, named: String) -> std::result::Result<Tls, String> {
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let config = rustls::ClientConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .map_err(|e| format!("TLS: {e}"))?
            .with_root_certificates(roots)
            .with_no_client_auth();
        Ok(Tls {
            config: Arc::new(config),
            roots: named,
        })
    }

    /// Runs the handshake on `stream`, connected to `addr` (`host:port`), within `timeout`;
    /// the verified session's two halves.
    pub fn handshake(&self, stream: TcpStream, addr: &str, timeout: Duration) -> Result<(TlsReader, TlsWriter)> {
        let host = crate::conn::host_of(addr);
        let name = ServerName::try_from(host.to_string())
            .map_err(|e| auth(addr, format!("{host:?} cannot name a TLS server: {e}")))?;
        let mut session =
            rustls::ClientConnection::new(self.config.clone(), name).map_err(|e| auth(addr, format!("TLS: {e}")))?;
        let conn_err = |e: io::Error| Error::Connection {
            addr: addr.to_string(),
            why: e.to_string(),
        };
        stream.set_read_timeout(Some(timeout)).map_err(conn_err)?;
        stream.set_write_timeout(Some(timeout)).map_err(conn_err)?;
        let mut s = &stream;
        while session.is_handshaking() {
            if let Err(e) = session.complete_io(&mut s) {
                return Err(self.failed(addr, host, e));
            }
        }
        stream.set_read_timeout(None).map_err(conn_err)?;
        stream.set_write_timeout(None).map_err(conn_err)?;
        // Whole calls are sealed at once: no plaintext limit that would split a write.
        session.set_buffer_limit(None);
        let shared = Arc::new(Session {
            tls: Mutex::new(session),
            out: Mutex::new(stream.try_clone().map_err(conn_err)?),
        });
        Ok((
            TlsReader {
                socket: stream,
                shared: shared.clone(),
                buf: vec![0; 32 << 10].into_boxed_slice(),
                start: 0,
                end: 0,
            },
            TlsWriter { shared },
        ))
    }

    /// A failed handshake in one line: the certificate, or a server that is not TLS.
    fn failed(&self, addr: &str, host: &str, e: io::Error) -> Error {
        let Some(tls) = e.get_ref().and_then(|i| i.downcast_ref::<rustls::Error>()) else {
            return match e.kind() {
                io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut => {
                    auth(addr, "no TLS handshake within the connect timeout".into())
                }
                io::ErrorKind::UnexpectedEof | io::ErrorKind::ConnectionReset => auth(
                    addr,
                    "the server closed the connection during the TLS handshake (does its RPC take TLS? hbase.server.netty.tls.enabled)".into(),
                ),
                _ => Error::Connection {
                    addr: addr.to_string(),
                    why: format!("TLS handshake: {e}"),
                },
            };
        };
        auth(addr, explain(tls, host, &self.roots))
    }
}

/// What a handshake's failure means to the user.
fn explain(e: &rustls::Error, host: &str, roots: &str) -> String {
    use rustls::CertificateError as C;
    match e {
        rustls::Error::InvalidCertificate(C::UnknownIssuer | C::BadSignature) => format!(
            "the server's TLS certificate is not signed by {roots}: give ca= the CA that signed it"
        ),
        rustls::Error::InvalidCertificate(C::NotValidForName | C::NotValidForNameContext { .. }) => format!(
            "the server's TLS certificate is not for {host:?}, the host this connection reached: reach the server by a name its certificate carries"
        ),
        rustls::Error::InvalidCertificate(C::Expired | C::ExpiredContext { .. }) => {
            "the server's TLS certificate has expired".into()
        }
        rustls::Error::InvalidCertificate(c) => format!("the server's TLS certificate is refused: {c:?}"),
        rustls::Error::InvalidMessage(_) | rustls::Error::InappropriateHandshakeMessage { .. } | rustls::Error::InappropriateMessage { .. } => {
            "the server answered TLS with something else: its RPC does not take TLS (hbase.server.netty.tls.enabled); leave tls= out of the URL".into()
        }
        rustls::Error::AlertReceived(a) => format!("the server refused the TLS handshake ({a:?})"),
        other => format!("TLS handshake: {other}"),
    }
}

fn auth(addr: &str, why: String) -> Error {
    Error::Auth {
        addr: addr.to_string(),
        why,
    }
}

struct Session {
    tls: Mutex<rustls::ClientConnection>,
    /// Held from sealing records to writing them, so that they leave in order.
    out: Mutex<TcpStream>,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

impl Session {
    /// Writes what the session has sealed; `tls` is released before the socket is written.
    fn flush(&self, mut tls: MutexGuard<'_, rustls::ClientConnection>) -> io::Result<()> {
        if !tls.wants_write() {
            return Ok(());
        }
        let mut sealed = Vec::new();
        while tls.wants_write() {
            tls.write_tls(&mut sealed)?;
        }
        let mut out = lock(&self.out);
        drop(tls);
        out.write_all(&sealed)
    }
}

/// The reading half: the server's bytes, decrypted.
pub struct TlsReader {
    socket: TcpStream,
    shared: Arc<Session>,
    buf: Box<[u8]>,
    /// Bytes read from the socket and not yet handed to the session: `buf[start..end]`.
    start: usize,
    end: usize,
}

impl Read for TlsReader {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        if out.is_empty() {
            return Ok(0);
        }
        loop {
            {
                let mut tls = lock(&self.shared.tls);
                match tls.reader().read(out) {
                    Ok(n) => return Ok(n),
                    Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
                    Err(e) => return Err(e),
                }
                // Nothing decrypted is waiting: hand the session what the socket gave.
                if self.start < self.end {
                    let mut rest = &self.buf[self.start..self.end];
                    let n = tls.read_tls(&mut rest)?;
                    self.start += n;
                    let state = tls.process_new_packets();
                    // Alerts, or answers to the server's key updates.
                    let sent = self.shared.flush(tls);
                    state.map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))?;
                    sent?;
                    continue;
                }
            }
            // Wait for the socket holding no lock: writers go on meanwhile.
            let n = self.socket.read(&mut self.buf)?;
            (self.start, self.end) = (0, n);
            if n == 0 {
                let mut tls = lock(&self.shared.tls);
                tls.read_tls(&mut io::empty())?;
                tls.process_new_packets()
                    .map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))?;
                return match tls.reader().read(out) {
                    Err(e) if e.kind() == io::ErrorKind::WouldBlock => Ok(0),
                    r => r,
                };
            }
        }
    }
}

/// The writing half: each write sealed and sent whole.
pub struct TlsWriter {
    shared: Arc<Session>,
}

impl Write for TlsWriter {
    fn write(&mut self, data: &[u8]) -> io::Result<usize> {
        let mut tls = lock(&self.shared.tls);
        let n = tls.writer().write(data)?;
        self.shared.flush(tls)?;
        Ok(n)
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_ca_file_without_certificates_is_named() {
        let dir = std::env::temp_dir().join(format!("hbase-client-tls-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let empty = dir.join("empty.pem");
        std::fs::write(&empty, "not a certificate\n").unwrap();
        let e = Tls::with_ca_file(&empty).unwrap_err();
        assert!(e.contains("no certificate in it"), "{e}");
        let missing = dir.join("missing.pem");
        let e = Tls::with_ca_file(&missing).unwrap_err();
        assert!(e.starts_with(&format!("ca={}: ", missing.display())), "{e}");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_server_that_answers_plain_rpc_is_named() {
        // HBase's answer to a preamble it cannot read: an error frame, then the close.
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = format!("localhost:{}", l.local_addr().unwrap().port());
        let server = std::thread::spawn(move || {
            let (mut s, _) = l.accept().unwrap();
            let mut hello = [0u8; 6];
            s.read_exact(&mut hello).unwrap();
            let _ = s.write_all(&[0, 0, 0, 0x40, 0x0a, 0x3e, 0x08, 0xff, 0xff, 0xff, 0xff]);
        });
        let tls = Tls::with_public_roots().unwrap();
        let stream = crate::conn::connect(&addr, Duration::from_secs(5)).unwrap();
        let e = tls.handshake(stream, &addr, Duration::from_secs(5)).err().unwrap();
        server.join().unwrap();
        let text = e.to_string();
        assert!(text.contains("its RPC does not take TLS"), "{text}");
        assert!(matches!(e, Error::Auth { .. }), "{e:?}");
    }

    #[test]
    fn a_silent_server_fails_the_handshake_within_the_timeout() {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = format!("127.0.0.1:{}", l.local_addr().unwrap().port());
        let tls = Tls::with_public_roots().unwrap();
        let stream = crate::conn::connect(&addr, Duration::from_secs(5)).unwrap();
        let e = tls
            .handshake(stream, &addr, Duration::from_millis(200))
            .err()
            .unwrap()
            .to_string();
        assert!(e.contains("no TLS handshake within the connect timeout"), "{e}");
        drop(l);
    }
}
