//! One connection to one HBase server for one service, as `NettyRpcConnection` makes it:
//!
//! - the preamble `HBas`, version 0 and the auth method (80: simple), then the
//!   `ConnectionHeader` behind its 4-byte length: the user, the service, the cell block codec
//!   (`KeyValueCodec`), the client's version;
//! - a call: a 4-byte length, then the `RequestHeader` (its call id, method, the cell block's
//!   length) and the request, each behind its varint length, then the cell block;
//! - a reply: a 4-byte length, the `ResponseHeader` (its call id, an exception or the cell
//!   block's length), the response unless an exception, the cell block.
//!
//! Calls are written whole under a lock, so that many threads share the connection, and many
//! are in flight at once. There is no reader thread: the callers waiting take turns reading,
//! and whoever reads hands each reply to the call whose id it carries, until its own comes.
//! A caller alone on a connection (a page read, one call at a time) reads its reply itself,
//! with no thread to wake in between. Each waits up to its timeout: the one reading sets the
//! socket's read timeout to what it has left, and a frame cut short by it is kept for the next
//! reader.

use crate::error::{Error, Result};
use crate::pb;
use bytes::{Buf, Bytes};
use prost::Message;
use std::collections::HashMap;
use std::io::{IoSlice, Read, Write};
use std::net::{SocketAddr, TcpStream, ToSocketAddrs};
use std::sync::atomic::{AtomicI32, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::Thread;
use std::time::{Duration, Instant};

/// The services a client calls.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Service {
    /// Region servers' data calls: get, mutate, multi, scan.
    Client,
    /// The master's admin calls.
    Master,
    /// The registry masters (and region servers) serve to clients that bootstrap over RPC.
    ClientMeta,
}

impl Service {
    /// The name in the connection header.
    pub fn name(self) -> &'static str {
        match self {
            Service::Client => "ClientService",
            Service::Master => "MasterService",
            Service::ClientMeta => "ClientMetaService",
        }
    }
}

/// What a connection is opened with.
#[derive(Debug, Clone)]
pub struct Options {
    /// The user the calls run as (`UserInformation.effective_user`).
    pub user: String,
    /// How long connecting may take.
    pub connect_timeout: Duration,
    /// Counts every call sent on the connection (shared by a client's connections).
    pub calls: Arc<AtomicU64>,
    /// Kerberos: the SASL mechanism of each connection; `None` for simple authentication.
    pub sasl: Option<Arc<dyn crate::sasl::Authenticator>>,
    /// TLS on the RPC (`hbase.client.netty.tls.enabled`); `None` for plain TCP.
    pub tls: Option<crate::tls::Tls>,
    /// HBase's AES in place of SASL's privacy wrap (`hbase.rpc.crypto.encryption.aes.enabled`):
    /// asked for in the connection header, and waited for within the connect timeout.
    pub crypto_aes: bool,
    /// The address dialled in place of the server's own (see `Options::connect_to` of the
    /// client); `None` dials the server's.
    pub dial: Option<String>,
}

/// A connection's two halves as one stream, for the SASL exchange.
struct Duplex<'a, R, W>(&'a mut R, &'a mut W);

impl<R: Read, W: Write> Read for Duplex<'_, R, W> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        self.0.read(buf)
    }
}

impl<R: Read, W: Write> Write for Duplex<'_, R, W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.1.write(buf)
    }
    fn flush(&mut self) -> std::io::Result<()> {
        self.1.flush()
    }
}

/// The user calls run as, found as `UserGroupInformation` finds it under simple
/// authentication: `HADOOP_USER_NAME`, else the operating system's name for this process's
/// user (its entry in /etc/passwd), else `$USER`.
pub fn login_user() -> String {
    let named = |v: &str| std::env::var(v).ok().filter(|u| !u.is_empty());
    named("HADOOP_USER_NAME")
        .or_else(os_user)
        .or_else(|| named("USER"))
        .unwrap_or_else(|| "tallrow".to_string())
}

/// The name /etc/passwd gives this process's user (the owner of `/proc/self`).
fn os_user() -> Option<String> {
    use std::os::unix::fs::MetadataExt;
    let uid = std::fs::metadata("/proc/self").ok()?.uid();
    let passwd = std::fs::read_to_string("/etc/passwd").ok()?;
    passwd.lines().find_map(|l| {
        let mut f = l.split(':');
        let name = f.next()?;
        (f.nth(1)?.parse::<u32>().ok()? == uid).then(|| name.to_string())
    })
}

impl Default for Options {
    fn default() -> Self {
        Options {
            user: login_user(),
            connect_timeout: Duration::from_secs(10),
            calls: Arc::default(),
            sasl: None,
            tls: None,
            crypto_aes: false,
            dial: None,
        }
    }
}

/// The codec the client asks cell blocks to be written in.
pub const CODEC: &str = "org.apache.hadoop.hbase.codec.KeyValueCodec";
/// Auth method byte of the preamble: simple.
pub const AUTH_SIMPLE: u8 = 80;
/// The largest reply taken: a length beyond it is another protocol's bytes.
pub const MAX_REPLY: usize = 512 << 20;

/// A reply: its header, its response message (empty after an exception), its cell block.
#[derive(Debug, Clone)]
pub struct Reply {
    /// The header.
    pub header: pb::ResponseHeader,
    /// The response message's bytes.
    pub body: Bytes,
    /// The cell block's bytes.
    pub cells: Bytes,
}

impl Reply {
    /// The response decoded as `M`.
    pub fn decode<M: Message + Default>(&self, addr: &str) -> Result<M> {
        M::decode(self.body.clone()).map_err(|e| Error::Protocol(format!("{addr}: a reply that does not decode: {e}")))
    }
}

/// A call waiting: its reply once read, and its thread, woken when the reply comes or when
/// its turn to read does.
struct Slot {
    reply: Option<Reply>,
    thread: Thread,
    /// Whether its thread is parked in [`Shared::wait_for`] on this connection: the only
    /// thread the turn to read may pass to. A call's sender may be waiting on another
    /// connection (a read hedged over two servers) or not waiting yet; a turn passed to it
    /// would be lost, and whoever is parked here would sleep to its deadline with its reply
    /// unread in the socket.
    parked: bool,
}

struct Shared {
    addr: String,
    calls: Mutex<Calls>,
    /// The reading half, used by the caller whose turn it is.
    reader: Mutex<Reader>,
    /// The socket, for its read timeout, to peek at when idle and to shut it down.
    socket: TcpStream,
}

#[derive(Default)]
struct Calls {
    waiting: HashMap<i32, Slot>,
    /// Why the connection is unusable, once it is.
    broken: Option<Error>,
    /// Whether a caller is reading for everyone.
    reading: bool,
}

/// The reading half and the frame it has part of.
struct Reader {
    stream: Box<dyn Read + Send>,
    frames: Frames,
    /// The socket's read timeout now.
    timeout: Option<Duration>,
}

/// One connection.
pub struct Conn {
    shared: Arc<Shared>,
    writer: Mutex<Box<dyn Write + Send>>,
    next_id: AtomicI32,
    service: Service,
    calls: Arc<AtomicU64>,
}

/// A call sent and not yet answered.
pub struct Pending {
    id: i32,
    shared: Arc<Shared>,
    service: Service,
    method: &'static str,
}

impl Conn {
    /// Connects to `addr` (`host:port`) for `service`.
    pub fn open(addr: &str, service: Service, opts: &Options) -> Result<Conn> {
        let stream = connect(opts.dial.as_deref().unwrap_or(addr), opts.connect_timeout)?;
        let conn_err = |e: std::io::Error| Error::Connection {
            addr: addr.to_string(),
            why: e.to_string(),
        };
        stream.set_nodelay(true).map_err(conn_err)?;
        let header = pb::ConnectionHeader {
            // Under Kerberos the server takes the authenticated principal; a user named here
            // as well would make the connection a proxy user's, which a cluster with
            // authorization refuses.
            user_info: opts.sasl.is_none().then(|| pb::UserInformation {
                effective_user: opts.user.clone(),
                real_user: None,
            }),
            service_name: Some(service.name().to_string()),
            cell_block_codec_class: Some(CODEC.to_string()),
            cell_block_compressor_class: None,
            version_info: Some(pb::VersionInfo {
                version: "2.6.1".into(),
                url: "tallrow".into(),
                revision: env!("CARGO_PKG_VERSION").into(),
                user: opts.user.clone(),
                date: String::new(),
                src_checksum: String::new(),
                version_major: Some(2),
                version_minor: Some(6),
            }),
            // A server without SASL privacy ignores it, as it does HBase's client's.
            rpc_crypto_cipher_transformation: opts.crypto_aes.then(|| crate::crypto::TRANSFORMATION.to_string()),
            attribute: Vec::new(),
        };
        let h = header.encode_to_vec();
        let mut framed = Vec::with_capacity(4 + h.len());
        framed.extend_from_slice(&(h.len() as u32).to_be_bytes());
        framed.extend_from_slice(&h);
        let socket = stream.try_clone().map_err(conn_err)?;
        // TLS first, when asked: the preamble and all that follows go inside it.
        let (mut r, mut w): (Box<dyn Read + Send>, Box<dyn Write + Send>) = match &opts.tls {
            None => (Box::new(stream.try_clone().map_err(conn_err)?), Box::new(stream)),
            Some(tls) => {
                let (r, w) = tls.handshake(stream, addr, opts.connect_timeout)?;
                (Box::new(r), Box::new(w))
            }
        };
        let (reader, writer): (Box<dyn Read + Send>, Box<dyn Write + Send>) = match &opts.sasl {
            None => {
                let mut hello = Vec::with_capacity(6 + framed.len());
                hello.extend_from_slice(b"HBas");
                hello.push(0);
                hello.push(AUTH_SIMPLE);
                hello.extend_from_slice(&framed);
                w.write_all(&hello).map_err(conn_err)?;
                (r, w)
            }
            Some(auth) => {
                let mech = auth.mechanism(addr).map_err(|why| Error::Auth {
                    addr: addr.to_string(),
                    why,
                })?;
                w.write_all(&[b'H', b'B', b'a', b's', 0, crate::sasl::AUTH_KERBEROS])
                    .map_err(conn_err)?;
                // The negotiation answers within the connect timeout, or the connection fails.
                socket.set_read_timeout(Some(opts.connect_timeout)).map_err(conn_err)?;
                let layer = crate::sasl::negotiate(&mut Duplex(&mut r, &mut w), mech, addr)?;
                socket.set_read_timeout(None).map_err(conn_err)?;
                match layer {
                    // Authentication alone: the connection goes on unframed.
                    None => {
                        w.write_all(&framed).map_err(conn_err)?;
                        (r, w)
                    }
                    Some(layer) => {
                        let layer: crate::sasl::Shared = Arc::new(Mutex::new(layer));
                        let mut w = crate::sasl::FrameWriter::new(w, Some(layer.clone()));
                        w.write_all(&framed).map_err(conn_err)?;
                        let mut r = crate::sasl::FrameReader::new(r, Some(layer.clone()), MAX_REPLY + (1 << 16));
                        if opts.crypto_aes {
                            // The server's keys come back under GSSAPI; nothing is sent
                            // until the layer is swapped, as HBase's client waits too.
                            socket.set_read_timeout(Some(opts.connect_timeout)).map_err(conn_err)?;
                            let aes = crate::crypto::receive_keys(&mut r, addr)?;
                            socket.set_read_timeout(None).map_err(conn_err)?;
                            *layer.lock().unwrap_or_else(|p| p.into_inner()) = Box::new(aes);
                        }
                        (Box::new(r), Box::new(w))
                    }
                }
            }
        };
        let shared = Arc::new(Shared {
            addr: addr.to_string(),
            calls: Mutex::new(Calls::default()),
            reader: Mutex::new(Reader {
                stream: reader,
                frames: Frames::default(),
                timeout: None,
            }),
            socket,
        });
        Ok(Conn {
            shared,
            writer: Mutex::new(writer),
            next_id: AtomicI32::new(0),
            calls: opts.calls.clone(),
            service,
        })
    }

    /// `host:port` of the server.
    pub fn addr(&self) -> &str {
        &self.shared.addr
    }

    /// The service the connection calls.
    pub fn service(&self) -> Service {
        self.service
    }

    /// Whether the connection broke (a new one is needed). One that nobody is reading is
    /// peeked at: a server that closed it while it was idle is noticed before a call is sent.
    pub fn is_broken(&self) -> bool {
        let calls = self.shared.lock();
        if calls.broken.is_some() {
            return true;
        }
        if calls.reading || !calls.waiting.is_empty() {
            return false;
        }
        drop(calls);
        match peek(&self.shared.socket) {
            Some(why) => {
                self.shared.fail(Error::Connection {
                    addr: self.shared.addr.clone(),
                    why,
                });
                true
            }
            None => false,
        }
    }

    /// Sends a call: `method` with `request` and an optional cell block.
    pub fn send(
        &self,
        method: &'static str,
        request: &impl Message,
        cells: &[u8],
        timeout: Duration,
    ) -> Result<Pending> {
        self.send_with(
            method,
            request.encoded_len(),
            &|f| request.encode(f).expect("a Vec grows"),
            cells,
            timeout,
        )
    }

    /// [`Conn::send`] with the request message encoded already (its fields, no length).
    pub fn send_encoded(
        &self,
        method: &'static str,
        request: &[u8],
        cells: &[u8],
        timeout: Duration,
    ) -> Result<Pending> {
        self.send_with(method, request.len(), &|f| f.extend_from_slice(request), cells, timeout)
    }

    /// Sends a call whose request of `rl` bytes `write` appends to the frame.
    fn send_with(
        &self,
        method: &'static str,
        rl: usize,
        write: &dyn Fn(&mut Vec<u8>),
        cells: &[u8],
        timeout: Duration,
    ) -> Result<Pending> {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed) & i32::MAX;
        self.calls.fetch_add(1, Ordering::Relaxed);
        let header = pb::RequestHeader {
            call_id: Some(id as u32),
            trace_info: None,
            method_name: Some(method.to_string()),
            request_param: Some(true),
            cell_block_meta: (!cells.is_empty()).then_some(pb::CellBlockMeta {
                length: Some(cells.len() as u32),
            }),
            priority: None,
            timeout: Some(timeout.as_millis().min(i32::MAX as u128) as u32),
            attribute: Vec::new(),
        };
        let hl = header.encoded_len();
        let total = prost::length_delimiter_len(hl) + hl + prost::length_delimiter_len(rl) + rl + cells.len();
        // A large cell block goes out beside the frame's head instead of being copied into it.
        let apart = cells.len() >= CELLS_APART;
        let mut frame = Vec::with_capacity(4 + total - if apart { cells.len() } else { 0 });
        frame.extend_from_slice(&(total as u32).to_be_bytes());
        header.encode_length_delimited(&mut frame).expect("a Vec grows");
        prost::encoding::encode_varint(rl as u64, &mut frame);
        let before = frame.len();
        write(&mut frame);
        debug_assert_eq!(frame.len() - before, rl, "a request of its stated length");
        if !apart {
            frame.extend_from_slice(cells);
        }
        {
            let mut calls = self.shared.lock();
            if let Some(e) = &calls.broken {
                return Err(e.clone());
            }
            calls.waiting.insert(
                id,
                Slot {
                    reply: None,
                    thread: std::thread::current(),
                    parked: false,
                },
            );
        }
        let written = {
            let mut w = self.writer.lock().unwrap_or_else(|e| e.into_inner());
            if apart {
                write_all_of(&mut **w, &mut [IoSlice::new(&frame), IoSlice::new(cells)])
            } else {
                w.write_all(&frame)
            }
        };
        if let Err(e) = written {
            self.shared.lock().waiting.remove(&id);
            let err = Error::Connection {
                addr: self.shared.addr.clone(),
                why: format!("sending {method}: {e}"),
            };
            self.shared.fail(err.clone());
            return Err(err);
        }
        Ok(Pending {
            id,
            shared: self.shared.clone(),
            service: self.service,
            method,
        })
    }

    /// Sends a call and waits for its reply.
    pub fn call(&self, method: &'static str, request: &impl Message, cells: &[u8], timeout: Duration) -> Result<Reply> {
        self.send(method, request, cells, timeout)?.wait(timeout)
    }

    /// Closes the connection: calls in flight fail.
    pub fn close(&self) {
        let _ = self.shared.socket.shutdown(std::net::Shutdown::Both);
    }
}

impl Drop for Conn {
    fn drop(&mut self) {
        // A caller still reading sees the connection end at once.
        self.close();
    }
}

impl Pending {
    /// Waits up to `timeout` for the reply, reading when it is this call's turn; a remote
    /// exception is an error.
    pub fn wait(self, timeout: Duration) -> Result<Reply> {
        self.wait_until(Instant::now() + timeout)?
            .ok_or_else(|| Error::Timeout {
                addr: self.shared.addr.clone(),
                method: self.method.to_string(),
                timeout,
            })
    }

    /// Waits until `deadline` for the reply, keeping the call in flight when it has not come
    /// (`Ok(None)`): a read hedged on another server goes on waiting for this one too.
    pub fn wait_until(&self, deadline: Instant) -> Result<Option<Reply>> {
        let reply = match self.shared.wait_for(self.id, deadline) {
            Ok(r) => r,
            Err(None) => return Ok(None),
            Err(Some(e)) => return Err(e),
        };
        match &reply.header.exception {
            Some(e) => {
                let class = e.exception_class_name.clone().unwrap_or_default();
                let message = e.stack_trace.clone().unwrap_or_default();
                // A method the server's release does not have: HBase answers
                // DoNotRetryIOException(UnsupportedOperationException(method))
                // (`ServerRpcConnection.processRequest`).
                let missing = format!("UnsupportedOperationException: {}", self.method);
                if class.ends_with("DoNotRetryIOException")
                    && message.lines().next().is_some_and(|l| l.trim_end().ends_with(&missing))
                {
                    return Err(Error::Protocol(unknown_to_server(
                        &self.shared.addr,
                        &format!("{}.{}", self.service.name(), self.method),
                    )));
                }
                Err(Error::Remote {
                    class,
                    message,
                    do_not_retry: e.do_not_retry.unwrap_or(false),
                })
            }
            None => Ok(Some(reply)),
        }
    }

    /// The server the call went to.
    pub fn addr(&self) -> &str {
        &self.shared.addr
    }
}

impl Drop for Pending {
    fn drop(&mut self) {
        // Answered, timed out or given up: a reply that comes later is dropped.
        self.shared.lock().waiting.remove(&self.id);
    }
}

impl Shared {
    fn lock(&self) -> std::sync::MutexGuard<'_, Calls> {
        self.calls.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Marks the connection broken and wakes every call in flight, to fail.
    fn fail(&self, why: Error) {
        let mut calls = self.lock();
        if calls.broken.is_none() {
            calls.broken = Some(why);
        }
        for slot in calls.waiting.values() {
            slot.thread.unpark();
        }
    }

    /// Call `id`'s reply, by `deadline`: read by another caller, or by this one when nobody
    /// else is reading. `Err(None)` when the deadline passed.
    fn wait_for(&self, id: i32, deadline: Instant) -> std::result::Result<Reply, Option<Error>> {
        let mut calls = self.lock();
        // The thread to wake is the one waiting, whichever sent the call.
        if let Some(slot) = calls.waiting.get_mut(&id) {
            slot.thread = std::thread::current();
        }
        let answer = loop {
            match calls.waiting.get_mut(&id) {
                Some(slot) => {
                    slot.parked = false;
                    if let Some(reply) = slot.reply.take() {
                        break Ok(reply);
                    }
                }
                None => break Err(calls.broken.clone()),
            }
            if let Some(e) = &calls.broken {
                break Err(Some(e.clone()));
            }
            let now = Instant::now();
            if now >= deadline {
                break Err(None);
            }
            if !calls.reading {
                calls.reading = true;
                drop(calls);
                let mine = self.read_until(id, deadline);
                calls = self.lock();
                calls.reading = false;
                if let Some(reply) = mine {
                    break Ok(reply);
                }
                continue;
            }
            if let Some(slot) = calls.waiting.get_mut(&id) {
                slot.parked = true;
            }
            drop(calls);
            std::thread::park_timeout(deadline - now);
            calls = self.lock();
        };
        // Leaving with nobody reading: the turn passes to a call parked here, if any. One
        // woken that finds its reply or its deadline passes it on in turn.
        if !calls.reading
            && let Some((_, next)) = calls
                .waiting
                .iter()
                .find(|(i, s)| **i != id && s.parked && s.reply.is_none())
        {
            next.thread.unpark();
        }
        answer
    }

    /// Reads replies, handing each to its call, until call `id`'s comes (returned), the
    /// deadline passes or the connection fails (`None`; a failure marks it broken).
    fn read_until(&self, id: i32, deadline: Instant) -> Option<Reply> {
        let mut r = self.reader.lock().unwrap_or_else(|e| e.into_inner());
        let r = &mut *r;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return None;
            }
            // The read timeout at most what is left: a read that times out early is tried
            // again with less. Rounded down, so that calls of one timeout share one setting.
            let timeout = round_down(left);
            if r.timeout != Some(timeout) {
                if let Err(e) = self.socket.set_read_timeout(Some(timeout)) {
                    self.fail(Error::Connection {
                        addr: self.addr.clone(),
                        why: e.to_string(),
                    });
                    return None;
                }
                r.timeout = Some(timeout);
            }
            let body = match r.frames.next(&mut r.stream) {
                Ok(body) => body,
                Err(FrameError::Io(e))
                    if matches!(
                        e.kind(),
                        std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut | std::io::ErrorKind::Interrupted
                    ) =>
                {
                    continue;
                }
                Err(e) => {
                    self.fail(e.into_error(&self.addr));
                    return None;
                }
            };
            match parse_reply(body, &self.addr) {
                Ok((got, reply)) if got == id => return Some(reply),
                // A reply to no call (id -1) is the server refusing the connection: a bad
                // preamble, or authentication it requires (`ServerRpcConnection.processPreamble`).
                Ok((-1, reply)) if reply.header.exception.is_some() => {
                    self.fail(refusal(reply, &self.addr));
                    return None;
                }
                Ok((got, reply)) => {
                    let mut calls = self.lock();
                    // A call that timed out is no longer waiting: its reply is dropped.
                    if let Some(slot) = calls.waiting.get_mut(&got) {
                        slot.reply = Some(reply);
                        slot.thread.unpark();
                    }
                }
                Err(e) => {
                    self.fail(e);
                    return None;
                }
            }
        }
    }
}

/// `d` rounded down to its first four bits of milliseconds (below 16 ms, as it is): 60 s less
/// a few ms is 57.3 s.
fn round_down(d: Duration) -> Duration {
    let ms = d.as_millis();
    if ms < 16 {
        return d;
    }
    let grid = 1u128 << (127 - ms.leading_zeros() - 4);
    Duration::from_millis((ms / grid * grid) as u64)
}

/// Where the releases the client was run against are listed.
pub const RELEASES_TESTED: &str = "docs/hbase.md#the-hbase-releases-it-speaks";

/// The one line for a call or service the server's release does not have.
fn unknown_to_server(addr: &str, what: &str) -> String {
    format!(
        "{addr}: the server does not know {what}: its HBase release predates the protocol tallrow speaks (HBase 2.6's; the releases it was run against are in {RELEASES_TESTED})"
    )
}

/// The error of a connection-level exception (call id -1).
fn refusal(reply: Reply, addr: &str) -> Error {
    let e = reply.header.exception.unwrap_or_default();
    let class = e.exception_class_name.unwrap_or_default();
    let message = e.stack_trace.unwrap_or_default();
    // A service the server does not have (`ServerRpcConnection.processConnectionHeader`).
    if class.ends_with("UnknownServiceException") {
        let service = message.lines().next().unwrap_or("").trim();
        let service = service.rsplit(": ").next().unwrap_or(service);
        return Error::Protocol(unknown_to_server(addr, service));
    }
    if class.ends_with("AccessDeniedException") && message.contains("Authentication is required") {
        Error::Protocol(format!(
            "{addr}: the server requires authentication (Kerberos) and this connection offered simple authentication: {}",
            message.lines().next().unwrap_or("").trim()
        ))
    } else {
        Error::Remote {
            class,
            message,
            do_not_retry: true,
        }
    }
}

/// Why an idle socket is unusable, if it is: the server closed or reset it. Peeks without
/// waiting and without taking a byte.
fn peek(socket: &TcpStream) -> Option<String> {
    let mut b = [std::mem::MaybeUninit::<u8>::uninit()];
    match socket2::SockRef::from(socket).recv_with_flags(&mut b, libc::MSG_PEEK | libc::MSG_DONTWAIT) {
        Ok(0) => Some("the server closed the connection".into()),
        Ok(_) => None,
        Err(e)
            if matches!(
                e.kind(),
                std::io::ErrorKind::WouldBlock | std::io::ErrorKind::Interrupted
            ) =>
        {
            None
        }
        Err(e) => Some(e.to_string()),
    }
}

/// The read-ahead that reply frames are cut from: most replies come whole in one read.
const READ_AHEAD: usize = 64 << 10;

/// Reply frames from a stream, each kept whole across reads that fail part way.
#[derive(Default)]
struct Frames {
    buf: Vec<u8>,
    start: usize,
    end: usize,
    /// A frame longer than the read-ahead, read into a buffer of its own: its length, and
    /// its bytes so far.
    long: Option<(usize, Vec<u8>)>,
}

/// Why no frame was read.
enum FrameError {
    /// The stream's error (a read timeout among them: the frame goes on at the next read).
    Io(std::io::Error),
    /// A length no HBase reply has: its four bytes.
    TooLong([u8; 4], usize),
}

impl FrameError {
    fn into_error(self, addr: &str) -> Error {
        match self {
            FrameError::Io(e) => Error::Connection {
                addr: addr.to_string(),
                why: if e.kind() == std::io::ErrorKind::UnexpectedEof {
                    "the server closed the connection".into()
                } else {
                    e.to_string()
                },
            },
            FrameError::TooLong(len, n) => Error::Protocol(format!(
                "{addr}: {} (a reply of {n} bytes): not an HBase RPC server",
                answered_by(&len)
            )),
        }
    }
}

impl Frames {
    /// The next frame's bytes, after its length.
    fn next(&mut self, stream: &mut impl Read) -> std::result::Result<Bytes, FrameError> {
        if self.buf.is_empty() {
            self.buf = vec![0; READ_AHEAD];
        }
        loop {
            if let Some((n, long)) = &mut self.long {
                let from_buf = (*n - long.len()).min(self.end - self.start);
                long.extend_from_slice(&self.buf[self.start..self.start + from_buf]);
                self.start += from_buf;
                if long.len() < *n {
                    // Straight from the stream, as it arrives (a claimed length is not
                    // allocated up front); what a failed read read is kept.
                    let want = (*n - long.len()) as u64;
                    (&mut *stream).take(want).read_to_end(long).map_err(FrameError::Io)?;
                    if long.len() < *n {
                        return Err(FrameError::Io(std::io::ErrorKind::UnexpectedEof.into()));
                    }
                }
                let (_, long) = self.long.take().expect("a long frame");
                return Ok(Bytes::from(long));
            }
            let have = self.end - self.start;
            if have >= 4 {
                let len: [u8; 4] = self.buf[self.start..self.start + 4].try_into().expect("4 bytes");
                let n = u32::from_be_bytes(len) as usize;
                if n > MAX_REPLY {
                    return Err(FrameError::TooLong(len, n));
                }
                if have >= 4 + n {
                    let body = Bytes::copy_from_slice(&self.buf[self.start + 4..self.start + 4 + n]);
                    self.start += 4 + n;
                    return Ok(body);
                }
                if 4 + n > READ_AHEAD {
                    self.start += 4;
                    self.long = Some((n, Vec::with_capacity(n.min(READ_AHEAD))));
                    continue;
                }
            }
            if self.start > 0 {
                self.buf.copy_within(self.start..self.end, 0);
                self.end -= self.start;
                self.start = 0;
            }
            match stream.read(&mut self.buf[self.end..]).map_err(FrameError::Io)? {
                0 => return Err(FrameError::Io(std::io::ErrorKind::UnexpectedEof.into())),
                got => self.end += got,
            }
        }
    }
}

/// The host of `host:port` (an IPv6 address unbracketed): the name a server's principal
/// and its certificate are checked against.
pub fn host_of(addr: &str) -> &str {
    let host = match addr.rsplit_once(':') {
        Some((h, _)) => h,
        None => addr,
    };
    host.trim_start_matches('[').trim_end_matches(']')
}

/// Connects to the first address of `addr` that answers.
pub fn connect(addr: &str, timeout: Duration) -> Result<TcpStream> {
    let err = |why: String| Error::Connection {
        addr: addr.to_string(),
        why,
    };
    let addrs: Vec<SocketAddr> = addr
        .to_socket_addrs()
        .map_err(|e| err(format!("cannot resolve: {e}")))?
        .collect();
    let mut last = None;
    for a in &addrs {
        match TcpStream::connect_timeout(a, timeout) {
            Ok(s) => return Ok(s),
            Err(e) => last = Some(e),
        }
    }
    Err(err(match last {
        Some(e) => format!("cannot connect: {e}"),
        None => "resolves to no address".into(),
    }))
}

/// One reply frame's bytes (after its length) as its call id and reply.
fn parse_reply(mut body: Bytes, addr: &str) -> Result<(i32, Reply)> {
    let bad = |what: &str| {
        Error::Protocol(format!(
            "{addr}: a reply whose {what} does not parse: not an HBase RPC server"
        ))
    };
    let header = pb::ResponseHeader::decode_length_delimited(&mut body).map_err(|_| bad("header"))?;
    let id = header.call_id.ok_or_else(|| bad("call id"))? as i32;
    let cell_len = header.cell_block_meta.as_ref().and_then(|m| m.length).unwrap_or(0) as usize;
    let message = if header.exception.is_some() {
        Bytes::new()
    } else {
        let len = prost::decode_length_delimiter(&mut body).map_err(|_| bad("response"))?;
        if len > body.remaining() {
            return Err(bad("response length"));
        }
        body.split_to(len)
    };
    if cell_len > body.len() {
        return Err(bad("cell block length"));
    }
    let cells = body.split_to(cell_len);
    Ok((
        id,
        Reply {
            header,
            body: message,
            cells,
        },
    ))
}

/// What a length that no HBase reply has says about who sent it.
pub fn answered_by(first: &[u8; 4]) -> String {
    match first {
        b"HTTP" => "an HTTP server answered".into(),
        [0x80, 0x01, ..] => "a Thrift server (binary protocol) answered".into(),
        [0x82, ..] => "a Thrift server (compact protocol) answered".into(),
        _ => format!("the server answered bytes {first:02x?}"),
    }
}

/// Cell blocks from this size on are written beside their call's head (one `writev` on a
/// plain socket) rather than copied after it: a loader's batch carries hundreds of KB.
const CELLS_APART: usize = 64 << 10;

/// Writes every byte of `parts`, in order, as `Write::write_all` writes one buffer.
fn write_all_of(w: &mut dyn Write, mut parts: &mut [IoSlice<'_>]) -> std::io::Result<()> {
    IoSlice::advance_slices(&mut parts, 0);
    while !parts.is_empty() {
        match w.write_vectored(parts) {
            Ok(0) => return Err(std::io::ErrorKind::WriteZero.into()),
            Ok(n) => IoSlice::advance_slices(&mut parts, n),
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::TcpListener;

    /// A server that reads the client's hello and one call, checks them, and answers with
    /// `reply(call id)`.
    fn serve_once(reply: impl FnOnce(u32) -> Vec<u8> + Send + 'static) -> (String, std::thread::JoinHandle<Vec<u8>>) {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = l.local_addr().unwrap().to_string();
        let h = std::thread::spawn(move || {
            let (mut s, _) = l.accept().unwrap();
            let mut pre = [0u8; 6];
            s.read_exact(&mut pre).unwrap();
            assert_eq!(&pre, b"HBas\x00\x50");
            let mut len = [0u8; 4];
            s.read_exact(&mut len).unwrap();
            let mut h = vec![0u8; u32::from_be_bytes(len) as usize];
            s.read_exact(&mut h).unwrap();
            let header = pb::ConnectionHeader::decode(&h[..]).unwrap();
            assert_eq!(header.service_name.as_deref(), Some("ClientService"));
            assert_eq!(header.cell_block_codec_class.as_deref(), Some(CODEC));
            s.read_exact(&mut len).unwrap();
            let mut call = vec![0u8; u32::from_be_bytes(len) as usize];
            s.read_exact(&mut call).unwrap();
            let mut b = Bytes::from(call.clone());
            let rh = pb::RequestHeader::decode_length_delimited(&mut b).unwrap();
            s.write_all(&reply(rh.call_id.unwrap())).unwrap();
            call
        });
        (addr, h)
    }

    /// A server that takes one connection and its hello, and hands the stream to `script`.
    fn serve_with<T: Send + 'static>(
        script: impl FnOnce(TcpStream) -> T + Send + 'static,
    ) -> (String, std::thread::JoinHandle<T>) {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = l.local_addr().unwrap().to_string();
        let h = std::thread::spawn(move || {
            let (mut s, _) = l.accept().unwrap();
            let mut pre = [0u8; 6];
            s.read_exact(&mut pre).unwrap();
            let mut len = [0u8; 4];
            s.read_exact(&mut len).unwrap();
            let mut h = vec![0u8; u32::from_be_bytes(len) as usize];
            s.read_exact(&mut h).unwrap();
            script(s)
        });
        (addr, h)
    }

    /// Reads one call: its id and its request's bytes.
    fn read_call(s: &mut TcpStream) -> (u32, Vec<u8>) {
        let mut len = [0u8; 4];
        s.read_exact(&mut len).unwrap();
        let mut call = vec![0u8; u32::from_be_bytes(len) as usize];
        s.read_exact(&mut call).unwrap();
        let mut b = Bytes::from(call);
        let rh = pb::RequestHeader::decode_length_delimited(&mut b).unwrap();
        let n = prost::decode_length_delimiter(&mut b).unwrap();
        (rh.call_id.unwrap(), b[..n].to_vec())
    }

    /// A reply to call `id` whose response is `body`.
    fn echo(id: u32, body: &[u8]) -> Vec<u8> {
        let header = pb::ResponseHeader {
            call_id: Some(id),
            ..Default::default()
        };
        frame(&header, Some(body), b"")
    }

    /// A request whose bytes are `b`.
    fn request(b: &[u8]) -> pb::BytesBytesPair {
        pb::BytesBytesPair {
            first: Bytes::copy_from_slice(b),
            second: Bytes::new(),
        }
    }

    fn first_of(r: &Reply) -> Vec<u8> {
        r.decode::<pb::BytesBytesPair>("test").unwrap().first.to_vec()
    }

    fn frame(header: &pb::ResponseHeader, body: Option<&[u8]>, cells: &[u8]) -> Vec<u8> {
        let mut inner = Vec::new();
        header.encode_length_delimited(&mut inner).unwrap();
        if let Some(b) = body {
            prost::encode_length_delimiter(b.len(), &mut inner).unwrap();
            inner.extend_from_slice(b);
        }
        inner.extend_from_slice(cells);
        let mut out = (inner.len() as u32).to_be_bytes().to_vec();
        out.extend(inner);
        out
    }

    #[test]
    fn a_call_goes_out_framed_and_its_reply_comes_back_with_its_cells() {
        let (addr, server) = serve_once(|id| {
            let header = pb::ResponseHeader {
                call_id: Some(id),
                cell_block_meta: Some(pb::CellBlockMeta { length: Some(3) }),
                ..Default::default()
            };
            let body = pb::GetResponse {
                result: Some(pb::Result {
                    associated_cell_count: Some(1),
                    ..Default::default()
                }),
            };
            frame(&header, Some(&body.encode_to_vec()), b"abc")
        });
        let conn = Conn::open(&addr, Service::Client, &Options::default()).unwrap();
        let req = pb::GetRequest {
            region: pb::RegionSpecifier {
                r#type: pb::region_specifier::RegionSpecifierType::RegionName as i32,
                value: Bytes::from_static(b"t,,1.abc."),
            },
            get: pb::Get {
                row: Bytes::from_static(b"r"),
                ..Default::default()
            },
        };
        let reply = conn.call("Get", &req, b"xyz", Duration::from_secs(10)).unwrap();
        let got: pb::GetResponse = reply.decode(&addr).unwrap();
        assert_eq!(got.result.unwrap().associated_cell_count, Some(1));
        assert_eq!(&reply.cells[..], b"abc");
        let call = server.join().unwrap();
        let mut b = Bytes::from(call);
        let rh = pb::RequestHeader::decode_length_delimited(&mut b).unwrap();
        assert_eq!(rh.method_name.as_deref(), Some("Get"));
        assert_eq!(rh.request_param, Some(true));
        assert_eq!(rh.cell_block_meta.unwrap().length, Some(3));
        let sent = pb::GetRequest::decode_length_delimited(&mut b).unwrap();
        assert_eq!(sent, req);
        assert_eq!(&b[..], b"xyz");
    }

    /// A reply to call `call_id` (`u32::MAX`: the connection) that is an exception.
    fn exception_frame(call_id: u32, class: &str, trace: &str, do_not_retry: bool) -> Vec<u8> {
        let header = pb::ResponseHeader {
            call_id: Some(call_id),
            exception: Some(pb::ExceptionResponse {
                exception_class_name: Some(class.into()),
                stack_trace: Some(trace.into()),
                do_not_retry: Some(do_not_retry),
                ..Default::default()
            }),
            ..Default::default()
        };
        frame(&header, None, b"")
    }

    #[test]
    fn an_exception_is_an_error_named_by_its_class() {
        let (addr, _server) = serve_once(|id| {
            exception_frame(
                id,
                "org.apache.hadoop.hbase.NotServingRegionException",
                "org.apache.hadoop.hbase.NotServingRegionException: t,,1 is not online\n\tat x",
                false,
            )
        });
        let conn = Conn::open(&addr, Service::Client, &Options::default()).unwrap();
        let e = conn
            .call("Get", &pb::GetRequest::default(), b"", Duration::from_secs(10))
            .unwrap_err();
        assert_eq!(e.to_string(), "NotServingRegionException: t,,1 is not online");
        assert_eq!(e.retry(), crate::error::Retry::Relocate);
    }

    /// A method the server's release lacks: HBase answers DoNotRetryIOException with the
    /// method's name (`ServerRpcConnection.processRequest`); a service it lacks, with
    /// UnknownServiceException for call id -1. Either is one line naming the call.
    #[test]
    fn a_call_or_service_the_server_does_not_know_is_named_in_one_line() {
        // The error of a PrepareBulkLoad call answered with an exception of `class` for
        // call `id` (-1: the connection), `trace` its text.
        let answered = |id: i32, class: &'static str, trace: &'static str| {
            let (addr, _server) =
                serve_once(move |call| exception_frame(if id < 0 { id as u32 } else { call }, class, trace, true));
            let conn = Conn::open(&addr, Service::Client, &Options::default()).unwrap();
            let e = conn
                .call(
                    "PrepareBulkLoad",
                    &pb::GetRequest::default(),
                    b"",
                    Duration::from_secs(10),
                )
                .unwrap_err();
            (addr, e)
        };
        let (addr, e) = answered(
            0,
            "org.apache.hadoop.hbase.DoNotRetryIOException",
            "127.0.0.1:16020 is unable to read call parameter from client 127.0.0.1; java.lang.UnsupportedOperationException: PrepareBulkLoad\n\tat x",
        );
        let text = e.to_string();
        assert_eq!(text.lines().count(), 1, "{text}");
        assert!(
            text.starts_with(&format!(
                "{addr}: the server does not know ClientService.PrepareBulkLoad: its HBase release predates"
            )) && text.contains(RELEASES_TESTED),
            "{text}"
        );
        assert_eq!(e.retry(), crate::error::Retry::Never);
        // The same class for another reason stays the server's own error.
        let (_, e) = answered(
            0,
            "org.apache.hadoop.hbase.DoNotRetryIOException",
            "Invalid request header: x",
        );
        assert_eq!(e.to_string(), "DoNotRetryIOException: Invalid request header: x");
        let (addr, e) = answered(
            -1,
            "org.apache.hadoop.hbase.ipc.UnknownServiceException",
            "ClientService",
        );
        assert!(
            e.to_string()
                .starts_with(&format!("{addr}: the server does not know ClientService: ")),
            "{e}"
        );
    }

    /// A secured server answering a simple-auth preamble (`ServerRpcConnection.processPreamble`):
    /// an error frame for call id -1, then the close.
    #[test]
    fn a_server_that_requires_authentication_says_so_for_every_call() {
        let (addr, _server) = serve_once(|_| {
            exception_frame(
                u32::MAX,
                "org.apache.hadoop.hbase.security.AccessDeniedException",
                "Authentication is required",
                true,
            )
        });
        let conn = Conn::open(&addr, Service::Client, &Options::default()).unwrap();
        let e = conn
            .call("Get", &pb::GetRequest::default(), b"", Duration::from_secs(10))
            .unwrap_err();
        assert!(e.to_string().contains("requires authentication (Kerberos)"), "{e}");
        assert_eq!(e.retry(), crate::error::Retry::Never);
    }

    const CAPTURED_OUT: &[u8] = include_bytes!("../tests/fixtures/rpc/client-to-server.bin");
    const CAPTURED_BACK: &[u8] = include_bytes!("../tests/fixtures/rpc/server-to-client.bin");

    fn cell_text(c: &crate::cells::Cell) -> (String, String, String, i64, Vec<u8>) {
        let s = |b: &Bytes| String::from_utf8_lossy(b).into_owned();
        (s(&c.row), s(&c.family), s(&c.qualifier), c.timestamp, c.value.to_vec())
    }

    /// The next reply of `r`, cut by `frames` as a connection cuts it.
    fn next_reply(frames: &mut Frames, r: &mut impl Read) -> (i32, Reply) {
        match frames.next(r) {
            Ok(body) => parse_reply(body, "recorded").unwrap(),
            Err(e) => panic!("{}", e.into_error("recorded")),
        }
    }

    /// What HBase 2.6.1 answered (tests/fixtures/rpc): each frame, header and cell block.
    #[test]
    fn replies_recorded_from_hbase_decode_with_their_cells() {
        let mut r = std::io::Cursor::new(CAPTURED_BACK);
        let mut frames = Frames::default();
        let (id, get) = next_reply(&mut frames, &mut r);
        assert_eq!(id, 0);
        let resp: pb::GetResponse = get.decode("recorded").unwrap();
        assert_eq!(resp.result.as_ref().unwrap().associated_cell_count, Some(3));
        let cells = crate::cells::decode_all(get.cells.clone()).unwrap();
        let t = 1_700_000_000_000;
        assert_eq!(
            cells.iter().map(cell_text).collect::<Vec<_>>(),
            [
                ("r1".into(), "f".into(), "a".into(), t + 1, b"v2".to_vec()),
                ("r1".into(), "f".into(), "a".into(), t, b"v1".to_vec()),
                ("r1".into(), "f".into(), "b".into(), t, vec![0, 0xff]),
            ]
        );
        let (id, scan) = next_reply(&mut frames, &mut r);
        assert_eq!(id, 1);
        let resp: pb::ScanResponse = scan.decode("recorded").unwrap();
        assert_eq!(resp.cells_per_result, [2, 1]);
        assert_eq!(resp.more_results_in_region, Some(false));
        let rows = crate::client::scan_results(&resp, scan.cells.clone()).unwrap();
        assert_eq!(
            rows.iter()
                .map(|(row, partial)| (row.key.to_vec(), row.cells.len(), *partial))
                .collect::<Vec<_>>(),
            [(b"r1".to_vec(), 2, false), (b"r2".to_vec(), 1, false)]
        );
        let (id, multi) = next_reply(&mut frames, &mut r);
        assert_eq!(id, 2);
        let resp: pb::MultiResponse = multi.decode("recorded").unwrap();
        // The server answers the get (action 1) before the put (action 0): results are
        // matched by index, and the cell block is read in the order the results come.
        let roes = &resp.region_action_result[0].result_or_exception;
        assert_eq!(roes.iter().map(|x| x.index).collect::<Vec<_>>(), [Some(1), Some(0)]);
        let mut block = multi.cells.clone();
        let got = crate::client::result_cells(roes[0].result.as_ref().unwrap(), &mut block).unwrap();
        assert_eq!(
            cell_text(&got[0]),
            ("r2".into(), "f".into(), "a".into(), t + 2, b"second row".to_vec())
        );
        assert!(
            crate::client::result_cells(roes[1].result.as_ref().unwrap(), &mut block)
                .unwrap()
                .is_empty()
        );
        assert!(block.is_empty());
        assert_eq!(r.position() as usize, CAPTURED_BACK.len(), "three frames, nothing else");
    }

    /// What this client sent and HBase accepted: the preamble, the connection header, and
    /// each call's frame, re-encoded from its parts to the same bytes.
    #[test]
    fn requests_hbase_accepted_reencode_to_the_same_bytes() {
        assert_eq!(&CAPTURED_OUT[..6], b"HBas\x00\x50");
        let hl = u32::from_be_bytes(CAPTURED_OUT[6..10].try_into().unwrap()) as usize;
        let header = pb::ConnectionHeader::decode(&CAPTURED_OUT[10..10 + hl]).unwrap();
        assert_eq!(header.service_name.as_deref(), Some("ClientService"));
        assert_eq!(header.cell_block_codec_class.as_deref(), Some(CODEC));
        let mut rest = &CAPTURED_OUT[10 + hl..];
        let mut methods = Vec::new();
        while !rest.is_empty() {
            let total = u32::from_be_bytes(rest[..4].try_into().unwrap()) as usize;
            let frame = &rest[4..4 + total];
            let mut b = Bytes::copy_from_slice(frame);
            let rh = pb::RequestHeader::decode_length_delimited(&mut b).unwrap();
            let param_len = prost::decode_length_delimiter(&mut b).unwrap();
            let param = b.split_to(param_len);
            let cells = rh.cell_block_meta.as_ref().and_then(|m| m.length).unwrap_or(0) as usize;
            assert_eq!(b.len(), cells, "the cell block is what is left of the frame");
            let mut again = Vec::new();
            rh.encode_length_delimited(&mut again).unwrap();
            prost::encode_length_delimiter(param.len(), &mut again).unwrap();
            again.extend_from_slice(&param);
            again.extend_from_slice(&b);
            assert_eq!(again, frame);
            if rh.method_name.as_deref() == Some("Multi") {
                let sent = crate::cells::decode_all(b.clone()).unwrap();
                assert_eq!(cell_text(&sent[0]).4, b"put by a multi");
            }
            methods.push(rh.method_name.unwrap());
            rest = &rest[4 + total..];
        }
        assert_eq!(methods, ["Get", "Scan", "Multi"]);
    }

    #[test]
    fn a_server_that_speaks_http_is_named() {
        let (addr, _server) = serve_once(|_| b"HTTP/1.1 400 Bad Request\r\n\r\n".to_vec());
        let conn = Conn::open(&addr, Service::Client, &Options::default()).unwrap();
        let e = conn
            .call("Get", &pb::GetRequest::default(), b"", Duration::from_secs(10))
            .unwrap_err();
        assert!(e.to_string().contains("an HTTP server answered"), "{e}");
        assert!(conn.is_broken());
    }

    #[test]
    fn replies_in_any_order_reach_their_callers_whoever_reads() {
        // Eight threads, a call each; the server answers them in reverse order, in one write,
        // once all eight are in.
        let (addr, server) = serve_with(|mut s| {
            let calls: Vec<_> = (0..8).map(|_| read_call(&mut s)).collect();
            let out: Vec<u8> = calls.iter().rev().flat_map(|(id, b)| echo(*id, b)).collect();
            s.write_all(&out).unwrap();
            // Held open until the client is done.
            let _ = s.read(&mut [0u8; 1]);
        });
        let conn = Arc::new(Conn::open(&addr, Service::Client, &Options::default()).unwrap());
        let threads: Vec<_> = (0..8u8)
            .map(|i| {
                let conn = conn.clone();
                std::thread::spawn(move || {
                    let p = conn
                        .send("Get", &request(&[i; 3]), b"", Duration::from_secs(30))
                        .unwrap();
                    first_of(&p.wait(Duration::from_secs(30)).unwrap())
                })
            })
            .collect();
        for (i, t) in threads.into_iter().enumerate() {
            assert_eq!(t.join().unwrap(), vec![i as u8; 3]);
        }
        conn.close();
        server.join().unwrap();
    }

    #[test]
    fn a_reply_cut_by_a_timeout_is_kept_for_the_next_reader() {
        let (addr, server) = serve_with(|mut s| {
            let (first, b) = read_call(&mut s);
            let late = echo(first, &b);
            // Half the first reply, then nothing until the second call came.
            s.write_all(&late[..late.len() / 2]).unwrap();
            let (second, b2) = read_call(&mut s);
            s.write_all(&late[late.len() / 2..]).unwrap();
            s.write_all(&echo(second, &b2)).unwrap();
            let _ = s.read(&mut [0u8; 1]);
        });
        let conn = Conn::open(&addr, Service::Client, &Options::default()).unwrap();
        let short = Duration::from_millis(200);
        let e = conn.call("Get", &request(b"first"), b"", short).unwrap_err();
        assert!(matches!(e, Error::Timeout { .. }), "{e}");
        // The first reply's rest comes before the second's: it is read, and dropped.
        let r = conn
            .call("Get", &request(b"second"), b"", Duration::from_secs(30))
            .unwrap();
        assert_eq!(first_of(&r), b"second");
        assert!(!conn.is_broken());
        conn.close();
        server.join().unwrap();
    }

    #[test]
    fn a_reply_longer_than_the_read_ahead_arrives_whole() {
        let big: Vec<u8> = (0..READ_AHEAD * 3 + 17).map(|i| (i % 251) as u8).collect();
        let (addr, server) = serve_with(|mut s| {
            for _ in 0..2 {
                let (id, b) = read_call(&mut s);
                // In pieces, as a slow network gives it.
                for piece in echo(id, &b).chunks(10_000) {
                    s.write_all(piece).unwrap();
                    s.flush().unwrap();
                }
            }
            let _ = s.read(&mut [0u8; 1]);
        });
        let conn = Conn::open(&addr, Service::Client, &Options::default()).unwrap();
        for want in [&big[..], b"small"] {
            let r = conn.call("Get", &request(want), b"", Duration::from_secs(30)).unwrap();
            assert_eq!(first_of(&r), want);
        }
        conn.close();
        server.join().unwrap();
    }

    #[test]
    fn a_connection_the_server_closed_while_idle_is_broken_before_a_call() {
        let (addr, server) = serve_with(|mut s| {
            let (id, b) = read_call(&mut s);
            s.write_all(&echo(id, &b)).unwrap();
            // Then closed, with no call in flight.
        });
        let conn = Conn::open(&addr, Service::Client, &Options::default()).unwrap();
        conn.call("Get", &request(b"one"), b"", Duration::from_secs(30))
            .unwrap();
        server.join().unwrap();
        let started = Instant::now();
        while !conn.is_broken() {
            assert!(started.elapsed() < Duration::from_secs(30), "the close is never seen");
            std::thread::sleep(Duration::from_millis(5));
        }
        let e = conn
            .send("Get", &request(b"two"), b"", Duration::from_secs(30))
            .err()
            .unwrap();
        assert!(e.to_string().contains("closed the connection"), "{e}");
    }

    /// A reader that leaves passes its turn to a caller parked on this connection, never to
    /// a call whose sender waits elsewhere (a read hedged over two servers holds a call on
    /// each): the parked caller's reply, read by nobody, would wait out its deadline.
    #[test]
    fn a_reader_passes_its_turn_to_a_caller_parked_here_not_to_a_call_nobody_waits_on() {
        let (go_a, a_may_answer) = std::sync::mpsc::channel::<()>();
        let (addr, server) = serve_with(move |mut s| {
            // Calls: a, then the five held, then b; a answered once told, b straight after.
            let mut ids = Vec::new();
            for _ in 0..7 {
                ids.push(read_call(&mut s).0);
            }
            a_may_answer.recv().unwrap();
            s.write_all(&echo(ids[0], &request(b"a").encode_to_vec())).unwrap();
            s.write_all(&echo(ids[6], &request(b"b").encode_to_vec())).unwrap();
            let mut rest = Vec::new();
            let _ = s.read_to_end(&mut rest);
        });
        let conn = Arc::new(Conn::open(&addr, Service::Client, &Options::default()).unwrap());
        let long = Duration::from_secs(60);
        let a = conn.send("Test", &request(b"a"), b"", long).unwrap();
        let shared = conn.shared.clone();
        let reader = std::thread::spawn(move || first_of(&a.wait(long).unwrap()));
        while !shared.lock().reading {
            std::thread::yield_now();
        }
        // Sent and held by this thread, which waits on none of them.
        let held: Vec<Pending> = (0..5)
            .map(|_| conn.send("Test", &request(b"x"), b"", long).unwrap())
            .collect();
        let b = conn.send("Test", &request(b"b"), b"", long).unwrap();
        let b_id = b.id;
        let parked = std::thread::spawn(move || b.wait_until(Instant::now() + long).unwrap().map(|r| first_of(&r)));
        while !shared.lock().waiting.get(&b_id).is_some_and(|s| s.parked) {
            std::thread::yield_now();
        }
        go_a.send(()).unwrap();
        assert_eq!(reader.join().unwrap(), b"a");
        assert_eq!(
            parked.join().unwrap().as_deref(),
            Some(&b"b"[..]),
            "b's reply, read by b"
        );
        drop(held);
        conn.close();
        server.join().unwrap();
    }
}
