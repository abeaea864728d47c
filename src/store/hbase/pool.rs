//! Connections: opening them (failing fast with one line when nothing listens), the pool
//! of one per concurrent caller, retries on a fresh connection when repeating is safe, what
//! a failure means for a retry, and the tables' descriptors the calls are checked against.

use super::*;

pub(super) type ThriftClient = HbaseSyncClient<wire::Input<Box<dyn wire::Source>>, Box<dyn TOutputProtocol + Send>>;

/// A connection: the generated client of its service, and the hold on its outgoing bytes
/// that lets a pipeline send a whole window in one write.
pub(super) struct Connected<T> {
    pub(super) thrift: T,
    pub(super) held: wire::Held,
}

impl<T> std::ops::Deref for Connected<T> {
    type Target = T;
    fn deref(&self) -> &T {
        &self.thrift
    }
}

impl<T> std::ops::DerefMut for Connected<T> {
    fn deref_mut(&mut self) -> &mut T {
        &mut self.thrift
    }
}

/// A Thrift1 connection.
pub(super) type Client = Connected<ThriftClient>;

/// What a failure means for a retry.
#[derive(Debug)]
pub(super) enum Failure {
    /// Nothing was sent: always safe to retry, with the same error if it persists.
    NotSent(Error),
    /// The connection broke or timed out during the call.
    Broken(Error),
    /// The server answered with an error.
    Answered(Error),
}

impl Failure {
    pub(super) fn error(self) -> Error {
        match self {
            Failure::NotSent(e) | Failure::Broken(e) | Failure::Answered(e) => e,
        }
    }
}

impl Hbase {
    /// A backend for `spec`; connects on first use.
    pub fn open(spec: &Spec) -> Result<Hbase> {
        let connect_timeout = Duration::from_secs(5);
        let read_timeout = Duration::from_secs(60);
        let store = Hbase {
            spec: spec.clone(),
            dialer: Dialer::new(spec, connect_timeout, read_timeout)?,
            pool: Pool::new(),
            families: Descriptors::default(),
            connect_timeout,
            read_timeout,
            attempts: 4,
            round_trips: Default::default(),
        };
        // Fail fast with one line when nothing listens there, or it wants SASL.
        store.dialer.check_plain(store.connect_timeout, |(input, output, _)| {
            HbaseSyncClient::new(input, output).get_cluster_id().map(|_| ())
        })?;
        let client = store.connect().map_err(Failure::error)?;
        store.pool.put(client);
        Ok(store)
    }

    pub(super) fn connect(&self) -> std::result::Result<Client, Failure> {
        let (input, output, held) = self.dialer.open(self.connect_timeout, self.read_timeout)?;
        Ok(Connected {
            thrift: HbaseSyncClient::new(input, output),
            held: held.counting(self.round_trips.clone()),
        })
    }

    /// Round trips to the server so far, all connections together: each write of requests
    /// (one call, or a pipelined window of them) that a reply answers.
    pub fn round_trips(&self) -> u64 {
        self.round_trips.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// Runs `f` on a pooled connection, retrying on a fresh one when `f` fails in transit
    /// and `repeatable` says repeating it is safe.
    pub(super) fn call<T>(
        &self,
        repeatable: bool,
        f: impl FnMut(&mut Client) -> std::result::Result<T, Failure>,
    ) -> Result<T> {
        retrying(self.attempts, repeatable, &self.pool, || self.connect(), f)
    }

    pub(super) fn descriptor(&self, table: &str) -> Result<TableDescriptor> {
        self.families.get(table, |name| self.describe_table(name))
    }

    pub(super) fn forget(&self, table: &str) {
        self.families.forget(table);
    }
}

/// The server's address.
pub(super) fn resolve(spec: &Spec) -> Result<SocketAddr> {
    (spec.host.as_str(), spec.port)
        .to_socket_addrs()
        .map_err(|e| Error::Io(format!("cannot resolve {}: {e}", spec.authority())))?
        .next()
        .ok_or_else(|| Error::Io(format!("cannot resolve {}: no address", spec.authority())))
}

/// Tables' descriptors by canonical name, which calls are checked against; a table's entry
/// is forgotten whenever this client changes it.
#[derive(Default)]
pub(super) struct Descriptors(RwLock<HashMap<String, TableDescriptor>>);

impl Descriptors {
    /// `table`'s descriptor, described once.
    pub(super) fn get(
        &self,
        table: &str,
        describe: impl FnOnce(&str) -> Result<TableDescriptor>,
    ) -> Result<TableDescriptor> {
        let name = canonical_table_name(table)?;
        if let Some(d) = self.0.read().expect("lock").get(&name) {
            return Ok(d.clone());
        }
        let d = describe(&name)?;
        self.0.write().expect("lock").insert(name, d.clone());
        Ok(d)
    }

    pub(super) fn forget(&self, table: &str) {
        if let Ok(name) = canonical_table_name(table) {
            self.0.write().expect("lock").remove(&name);
        }
    }
}

/// A connection's reading protocol, writing protocol and the hold on its outgoing bytes.
pub(super) type Connection = (
    wire::Input<Box<dyn wire::Source>>,
    Box<dyn TOutputProtocol + Send>,
    wire::Held,
);

/// A connection over `reader` and `held`, messages delimited by `transport`.
fn connection(
    reader: impl std::io::Read + Send + 'static,
    held: wire::Held,
    transport: Transport,
    spec: &Spec,
) -> Connection {
    let input = wire::input(reader, transport, spec.protocol, MAX_REPLY);
    let output = wire::output(Outbox::new(held.clone(), transport), spec.protocol);
    (input, output, held)
}

/// How connections to one server are opened: its address, the HTTP endpoint when the URL
/// asks for HTTP, and the timeouts.
pub(super) struct Dialer {
    pub(super) spec: Spec,
    pub(super) addr: SocketAddr,
    http: Option<std::sync::Arc<http::Http>>,
}

impl Dialer {
    /// Where `spec` points; checks its TLS roots now, so that a bad `ca=` fails at once.
    pub(super) fn new(spec: &Spec, connect: Duration, read: Duration) -> Result<Dialer> {
        if spec.sasl.is_some() {
            crate::secure::keep_renewed();
        }
        let http = if spec.http {
            Some(std::sync::Arc::new(http::Http::new(spec, connect, read, MAX_REPLY)?))
        } else {
            None
        };
        Ok(Dialer {
            spec: spec.clone(),
            addr: resolve(spec)?,
            http,
        })
    }

    /// Checks that a plain server answers a plain call within `timeout`: a Kerberized
    /// (SASL) gateway of HBase answers a plain client with silence, neither replying nor
    /// closing, so without this the first call would wait out the read timeout. `call`
    /// makes one cheap call on the connection it is given; any answer, an exception too,
    /// will do. Secured URLs prove themselves in their handshake instead.
    pub(super) fn check_plain(
        &self,
        timeout: Duration,
        call: impl FnOnce(Connection) -> thrift::Result<()>,
    ) -> Result<()> {
        if self.spec.sasl.is_some() || self.spec.http {
            return Ok(());
        }
        let connection = self.open(timeout, timeout).map_err(Failure::error)?;
        let started = Instant::now();
        match call(connection) {
            Err(thrift::Error::Transport(_)) if started.elapsed() >= timeout => Err(Error::Io(format!(
                "no answer from {} within {} s to a plain Thrift call: a Kerberized gateway (SASL) ignores plain clients; add sasl=gssapi to the URL, or check the server",
                self.spec.authority(),
                timeout.as_secs_f64()
            ))),
            Err(thrift::Error::Transport(t)) => {
                // Not a Thrift gateway at all? Ask it in the other protocols it may speak.
                let who = self.spec.authority();
                let other = match hbase_client::probe::what_answers(&who, timeout) {
                    hbase_client::probe::Answer::ZooKeeper => Some(format!(
                        "a ZooKeeper server answered, not a Thrift gateway: reach the cluster through its quorum with hbase://{who}?api=native"
                    )),
                    hbase_client::probe::Answer::HBaseRpc => Some(format!(
                        "an HBase master or region server answered, not a Thrift gateway: reach it with hbase://{who}?api=native&registry=rpc"
                    )),
                    _ => None,
                };
                Err(Error::Io(match other {
                    Some(what) => format!("{who} closed the connection on a plain Thrift call: {what}"),
                    None => format!(
                        "{who} closed the connection on a plain Thrift call ({}): a Kerberized gateway (SASL)? add sasl=gssapi; a framed server? add transport=framed",
                        t.message
                    ),
                }))
            }
            _ => Ok(()),
        }
    }

    /// A connection, opened (and authenticated) within `connect` and reading within `read`.
    pub(super) fn open(&self, connect: Duration, read: Duration) -> std::result::Result<Connection, Failure> {
        let spec = &self.spec;
        if let Some(http) = &self.http {
            let (replies, poster) = http.exchange();
            return Ok(connection(
                replies,
                wire::Held::new(poster).per_message(),
                Transport::Buffered,
                spec,
            ));
        }
        let who = spec.authority();
        let cannot = |why: String| Failure::NotSent(Error::Io(format!("cannot connect to {who}: {why}")));
        let mut stream = TcpStream::connect_timeout(&self.addr, connect).map_err(|e| {
            cannot(match e.kind() {
                std::io::ErrorKind::ConnectionRefused => "connection refused".to_string(),
                std::io::ErrorKind::TimedOut | std::io::ErrorKind::WouldBlock => "timed out".to_string(),
                _ => e.to_string(),
            })
        })?;
        let setup = |s: &TcpStream, timeout: Duration| -> std::io::Result<()> {
            s.set_nodelay(true)?;
            s.set_read_timeout(Some(timeout))?;
            s.set_write_timeout(Some(timeout))
        };
        let Some(sasl) = &spec.sasl else {
            setup(&stream, read).map_err(|e| cannot(e.to_string()))?;
            let reader = stream.try_clone().map_err(|e| cannot(e.to_string()))?;
            return Ok(connection(reader, wire::Held::new(stream), spec.transport, spec));
        };
        // The negotiation answers within the connect timeout, or the server is no SASL one.
        setup(&stream, connect).map_err(|e| cannot(e.to_string()))?;
        let service = sasl.service.as_deref().unwrap_or("hbase");
        let denied = |why: String| Failure::NotSent(Error::Denied(format!("{}{who}: {why}", http::DENIED)));
        let mech = crate::secure::gssapi(service, &spec.host, sasl.qop).map_err(denied)?;
        let layer = wire::sasl::negotiate(&mut stream, mech).map_err(|r| {
            denied(match r {
                wire::sasl::Refused::Mechanism(m) => m,
                wire::sasl::Refused::Server(why) => format!("the server refused SASL GSSAPI: {why}"),
                wire::sasl::Refused::NotSasl(what) => {
                    format!("{what}: a plain Thrift server? (drop sasl=gssapi)")
                }
                wire::sasl::Refused::Io(e) => match e.kind() {
                    std::io::ErrorKind::TimedOut | std::io::ErrorKind::WouldBlock => format!(
                        "no SASL answer within {} s: a plain Thrift server? (drop sasl=gssapi)",
                        connect.as_secs_f64()
                    ),
                    std::io::ErrorKind::UnexpectedEof
                    | std::io::ErrorKind::ConnectionReset
                    | std::io::ErrorKind::ConnectionAborted
                    | std::io::ErrorKind::BrokenPipe => {
                        "the server closed the connection during SASL negotiation: a plain (or framed) Thrift server? (drop sasl=gssapi)".to_string()
                    }
                    _ => format!("SASL negotiation: {e}"),
                },
            })
        })?;
        setup(&stream, read).map_err(|e| cannot(e.to_string()))?;
        let layer = layer.map(|l| std::sync::Arc::new(Mutex::new(l)));
        let reader = stream.try_clone().map_err(|e| cannot(e.to_string()))?;
        let frames = wire::sasl::FrameReader::new(reader, layer.clone(), MAX_REPLY);
        // SASL frames the messages itself: inside them they go unframed.
        let held = wire::Held::new(wire::sasl::FrameWriter::new(stream, layer));
        Ok(connection(frames, held, Transport::Buffered, spec))
    }
}

/// Runs `f` on a connection from `pool` (or a new one), retrying on a fresh one when `f`
/// fails in transit and `repeatable` says repeating it is safe.
/// Idle connections, one per caller that has finished with one. A connection idle longer
/// than [`Pool::STALE`] is closed instead of reused: HBase's Thrift servers (and `tallrow
/// serve`) close connections that send nothing for 60 s (`hbase.thrift.server.socket.read.timeout`),
/// and a write sent on such a connection may be lost without an answer.
pub(super) struct Pool<C>(Mutex<Vec<(C, Instant)>>);

impl<C> Pool<C> {
    /// Less than the servers' 60 s idle timeout.
    pub(super) const STALE: Duration = Duration::from_secs(30);

    pub(super) fn new() -> Self {
        Pool(Mutex::new(Vec::new()))
    }

    /// The most recently used connection that is not stale.
    pub(super) fn take(&self) -> Option<C> {
        let mut idle = self.0.lock().expect("lock");
        // The oldest are at the front: stale ones go first.
        idle.retain(|(_, since)| since.elapsed() < Self::STALE);
        idle.pop().map(|(c, _)| c)
    }

    pub(super) fn put(&self, c: C) {
        self.0.lock().expect("lock").push((c, Instant::now()));
    }
}

pub(super) fn retrying<C, T>(
    attempts: u32,
    repeatable: bool,
    pool: &Pool<C>,
    connect: impl Fn() -> std::result::Result<C, Failure>,
    mut f: impl FnMut(&mut C) -> std::result::Result<T, Failure>,
) -> Result<T> {
    let mut delay = Duration::from_millis(20);
    for attempt in 1..=attempts {
        let pooled = pool.take();
        let mut client = match pooled {
            Some(c) => c,
            None => match connect() {
                Ok(c) => c,
                Err(Failure::NotSent(e)) if attempt == 1 => return Err(e),
                Err(f) => {
                    if attempt == attempts {
                        return Err(f.error());
                    }
                    std::thread::sleep(delay);
                    delay *= 4;
                    continue;
                }
            },
        };
        match f(&mut client) {
            Ok(v) => {
                pool.put(client);
                return Ok(v);
            }
            Err(Failure::Answered(e)) => {
                pool.put(client);
                return Err(e);
            }
            Err(Failure::NotSent(e)) | Err(Failure::Broken(e)) if !repeatable || attempt == attempts => {
                return Err(e);
            }
            Err(_) => {
                // The connection is dropped: its stream may hold half a message.
                std::thread::sleep(delay);
                delay *= 4;
            }
        }
    }
    unreachable!("the last attempt returns")
}

/// An IOError's message as the store's error for `table`.
pub(super) fn io_error(message: &str, can_retry: bool, table: &str) -> Error {
    let line = first_line(message);
    if line.contains("TableNotFoundException") {
        Error::TableNotFound(table.to_string())
    } else if line.contains("TableExistsException") {
        Error::TableExists(table.to_string())
    } else if line.contains("NoSuchColumnFamilyException") {
        let family = line
            .split("Column family ")
            .nth(1)
            .and_then(|r| r.split_whitespace().next())
            .unwrap_or("?")
            .to_string();
        Error::FamilyNotFound {
            table: table.to_string(),
            family,
        }
    } else if line.contains("IllegalArgumentException") {
        Error::BadArgument(line.to_string())
    } else if can_retry {
        Error::Unavailable(line.to_string())
    } else {
        Error::Io(format!("table {table}: {line}"))
    }
}

/// A thrift error, classified and worded for the table it concerns.
pub(super) fn failure(e: thrift::Error, table: &str) -> Failure {
    match e {
        thrift::Error::User(u) => {
            if let Some(io) = u.downcast_ref::<IOError>() {
                let message = io.message.clone().unwrap_or_default();
                Failure::Answered(io_error(&message, io.can_retry == Some(true), table))
            } else if let Some(ia) = u.downcast_ref::<IllegalArgument>() {
                Failure::Answered(Error::BadArgument(
                    first_line(ia.message.as_deref().unwrap_or("")).to_string(),
                ))
            } else if u.downcast_ref::<AlreadyExists>().is_some() {
                Failure::Answered(Error::TableExists(table.to_string()))
            } else {
                Failure::Answered(Error::Io(u.to_string()))
            }
        }
        // A call the gateway's release does not have ("Invalid method name: 'x'").
        thrift::Error::Application(a) if a.kind == thrift::ApplicationErrorKind::UnknownMethod => {
            Failure::Answered(Error::Io(format!(
                "table {table}: the Thrift server does not know the call ({}): its HBase release predates the calls tallrow makes (the releases it was run against are in {})",
                first_line(&a.message),
                hbase_client::conn::RELEASES_TESTED
            )))
        }
        thrift::Error::Application(a) => Failure::Answered(Error::Io(format!(
            "table {table}: server error: {}",
            first_line(&a.message)
        ))),
        thrift::Error::Transport(t) if t.message.starts_with(http::DENIED) => {
            Failure::Answered(Error::Denied(t.message))
        }
        thrift::Error::Transport(t) => Failure::Broken(Error::Unavailable(format!("connection lost: {}", t.message))),
        thrift::Error::Protocol(p) => Failure::Broken(Error::Io(format!("bad reply: {}", p.message))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_call_the_gateway_does_not_know_is_one_line_naming_it() {
        let e = thrift::Error::Application(thrift::ApplicationError::new(
            thrift::ApplicationErrorKind::UnknownMethod,
            "Invalid method name: 'getTableDescriptor'",
        ));
        let Failure::Answered(e) = failure(e, "t") else {
            panic!("answered")
        };
        let text = e.to_string();
        assert!(
            text.contains("table t: the Thrift server does not know the call (Invalid method name: 'getTableDescriptor'): its HBase release predates")
                && text.contains("docs/hbase.md#the-hbase-releases-it-speaks")
                && text.lines().count() == 1,
            "{text}"
        );
    }
}
