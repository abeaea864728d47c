//! `tallrow serve`: an HBase-compatible Thrift server over a store, speaking Thrift1 (the
//! `Hbase` service) or Thrift2 (`THBaseService`), one of them per server as HBase's own.
//!
//! One thread per connection, so a slow client never holds up another; TCP_NODELAY on
//! every accepted socket, so small paged replies are not held back by Nagle's algorithm.
//! Requests are read through the bounded protocols of [`crate::wire`]: a frame, string or
//! list larger than the message limit is refused before anything is allocated for it, a
//! claimed length reserves only what arrives, and a call that cannot be read is answered
//! with a protocol error and its connection closed. A connection silent for the idle
//! timeout is closed; at the connection limit the one idle longest is closed for a new
//! one ([`slots`]), and new ones wait only while every connection is in a call. Scanners idle
//! longer than their lease are closed by a reaper, and a connection's scanners when it
//! closes; one connection holds at most its own share of them.
//!
//! Replies are held while more requests are already buffered and sent in one write before
//! the connection would wait for input; the mutations they acknowledge are applied in one
//! store batch just before (see [`handler::Handler::for_connection`]).

pub mod args;
pub mod args2;
pub mod eval;
mod fast;
pub mod filter;
pub mod handler;
#[cfg(test)]
mod hostile;
pub mod slots;

use crate::idl::thrift1::HbaseSyncProcessor;
use crate::idl::thrift2::THBaseServiceSyncProcessor;
use crate::store::Store;
use crate::wire::{self, Api, Outbox, Protocol, Transport};
use handler::{Handler, Thrift2};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;
use thrift::server::TProcessor;

/// The wire bytes a request's structs must average (see [`wire::Input::struct_bytes`]).
const STRUCT_BYTES: usize = 4;

/// How the server listens and talks.
#[derive(Debug, Clone)]
pub struct Options {
    /// Address to listen on.
    pub bind: SocketAddr,
    /// The Thrift service spoken.
    pub api: Api,
    /// Message delimiting.
    pub transport: Transport,
    /// Encoding.
    pub protocol: Protocol,
    /// Largest request accepted, in bytes.
    pub max_message: usize,
    /// Most connections served at once. At the limit a new one closes the connection idle
    /// longest; while every connection is in a call, new ones wait to be accepted.
    pub max_connections: usize,
    /// How long a connection may send nothing while the server waits for it (for its next
    /// call, or for the rest of one) before it is closed; also how long a reply may wait
    /// for a client that does not read. `None`: forever.
    pub idle_timeout: Option<Duration>,
    /// Idle time after which a scanner is closed.
    pub scanner_lease: Duration,
    /// Most scanners one connection may hold open; a connection's scanners are closed
    /// when it closes.
    pub max_scanners_per_connection: usize,
    /// Where calls and connections are counted, when live metrics are served.
    pub metrics: Option<Arc<crate::metrics::Metrics>>,
    /// Whether Thrift1 mutation calls in the binary protocol that have arrived whole are
    /// read in place (`fast`); off, every call takes the bounded reader, as tests compare.
    pub in_place: bool,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            bind: SocketAddr::from(([127, 0, 0, 1], 9090)),
            api: Api::Thrift1,
            transport: Transport::Buffered,
            protocol: Protocol::Binary,
            max_message: wire::DEFAULT_MAX_MESSAGE,
            max_connections: 1024,
            idle_timeout: Some(Duration::from_secs(60)),
            scanner_lease: Duration::from_secs(60),
            max_scanners_per_connection: handler::DEFAULT_SCANNERS_PER_CONNECTION,
            metrics: None,
            in_place: true,
        }
    }
}

/// Why a server could not start, in one line.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct StartError(pub String);

/// A running server.
pub struct Server {
    addr: SocketAddr,
    stop: Arc<AtomicBool>,
    handler: Handler,
    accept: Option<std::thread::JoinHandle<()>>,
}

impl Server {
    /// Binds and starts serving `store` in background threads.
    pub fn start(store: Arc<dyn Store>, opts: &Options) -> Result<Server, StartError> {
        let cannot = |e: std::io::Error| StartError(format!("cannot listen on {}: {e}", opts.bind));
        let listener = TcpListener::bind(opts.bind).map_err(cannot)?;
        let addr = listener.local_addr().map_err(cannot)?;
        let handler = Handler::new(store, &addr.ip().to_string(), addr.port(), opts.scanner_lease)
            .map_err(|e| StartError(format!("cannot prepare the store for serving: {e}")))?;
        let thread = |e: std::io::Error| StartError(format!("cannot start a server thread: {e}"));
        handler.limit_scanners_per_connection(opts.max_scanners_per_connection);
        let stop = Arc::new(AtomicBool::new(false));

        let reaper = {
            let (handler, stop) = (handler.clone(), stop.clone());
            let every = (opts.scanner_lease / 4).clamp(Duration::from_millis(10), Duration::from_secs(5));
            move || {
                let mut last = std::time::Instant::now();
                // Short naps, so that a stopped server lets go of its store promptly.
                while !stop.load(Ordering::Relaxed) {
                    std::thread::sleep(every.min(Duration::from_millis(100)));
                    if last.elapsed() >= every {
                        handler.expire_scanners();
                        last = std::time::Instant::now();
                    }
                }
            }
        };
        std::thread::Builder::new()
            .name("scanner-reaper".into())
            .spawn(reaper)
            .map_err(thread)?;

        let accept = {
            let (stop, opts) = (stop.clone(), opts.clone());
            std::thread::Builder::new()
                .name("accept".into())
                .spawn({
                    let handler = handler.clone();
                    move || accept_loop(listener, &handler, &opts, &stop)
                })
                .map_err(thread)?
        };
        Ok(Server {
            addr,
            stop,
            handler,
            accept: Some(accept),
        })
    }

    /// The address it listens on (with the port chosen when 0 was asked for).
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// Scanners open right now.
    pub fn open_scanners(&self) -> usize {
        self.handler.open_scanners()
    }

    /// Stops accepting connections. Connections already open are served until they close.
    pub fn stop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        // Wake the accept loop.
        let _ = TcpStream::connect(self.addr);
        if let Some(t) = self.accept.take() {
            let _ = t.join();
        }
    }

    /// Serves until the process is killed.
    pub fn wait(mut self) {
        if let Some(t) = self.accept.take() {
            let _ = t.join();
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        if self.accept.is_some() {
            self.stop();
        }
    }
}

fn accept_loop(listener: TcpListener, handler: &Handler, opts: &Options, stop: &AtomicBool) {
    let open = Arc::new(AtomicUsize::new(0));
    let slots = Arc::new(slots::Slots::default());
    let mut told_full: Option<std::time::Instant> = None;
    let mut told_closing: Option<std::time::Instant> = None;
    let once_a_minute = |last: &mut Option<std::time::Instant>| {
        let due = last.is_none_or(|t| t.elapsed() >= Duration::from_secs(60));
        if due {
            *last = Some(std::time::Instant::now());
        }
        due
    };
    loop {
        let Some(stream) = listener.incoming().next() else {
            return;
        };
        if stop.load(Ordering::Relaxed) {
            return;
        }
        let Ok(stream) = stream else {
            // Out of descriptors or a connection reset before accept: keep serving the rest.
            std::thread::sleep(Duration::from_millis(10));
            continue;
        };
        // At the limit, the connection idle longest makes room for this one. While every
        // connection is in a call, this one waits (and those behind it in the listen
        // queue, as HBase's server queues them for a worker) until one closes or goes idle.
        let mut closed_one: Option<std::time::Instant> = None;
        while open.load(Ordering::Relaxed) >= opts.max_connections {
            if stop.load(Ordering::Relaxed) {
                return;
            }
            // One closed for this connection leaves within moments; only one that does not
            // leave within a second is followed by another.
            if closed_one.is_none_or(|t| t.elapsed() >= Duration::from_secs(1)) {
                match slots.close_longest_idle() {
                    Some((peer, idle)) => {
                        closed_one = Some(std::time::Instant::now());
                        if once_a_minute(&mut told_closing) {
                            eprintln!("{}", closing_idle(opts, &peer, idle));
                        }
                    }
                    None if once_a_minute(&mut told_full) => eprintln!("{}", at_the_limit(opts)),
                    None => {}
                }
            }
            std::thread::sleep(Duration::from_millis(1));
        }
        let _ = stream.set_nodelay(true);
        let Ok(handle) = stream.try_clone() else {
            continue;
        };
        let peer = stream.peer_addr().map(|a| a.to_string()).unwrap_or_default();
        let slot = slots.add(handle, peer);
        open.fetch_add(1, Ordering::Relaxed);
        let (handler, open, opts, slots) = (handler.for_connection(), open.clone(), opts.clone(), slots.clone());
        let spawned = std::thread::Builder::new()
            .name("connection".into())
            .stack_size(512 << 10)
            .spawn(move || {
                if let Some(m) = &opts.metrics {
                    m.connection(true);
                }
                serve_connection(stream, handler, &opts, &slot);
                if let Some(m) = &opts.metrics {
                    m.connection(false);
                }
                slots.remove(&slot);
                open.fetch_sub(1, Ordering::Relaxed);
            });
        if spawned.is_err() {
            eprintln!("tallrow serve: cannot start a thread for a new connection");
        }
    }
}

/// The line logged when every connection the limit allows is in a call (at most once a
/// minute).
fn at_the_limit(opts: &Options) -> String {
    format!(
        "tallrow serve: {} connections open, the most --max-connections allows, each in a call; new ones wait to be accepted until one closes or goes idle",
        opts.max_connections
    )
}

/// The line logged when a connection idle at the limit is closed for a new one (at most
/// once a minute).
fn closing_idle(opts: &Options, peer: &str, idle: Duration) -> String {
    format!(
        "tallrow serve: {} connections open, the most --max-connections allows; closing the one idle longest for each new one (this time from {peer}, idle {})",
        opts.max_connections,
        humantime::format_duration(Duration::from_millis(idle.as_millis() as u64))
    )
}

/// Calls whose replies may wait for a commit; any other call commits first.
fn defers(api: Api, method: &str) -> bool {
    match api {
        Api::Thrift1 => matches!(method, "mutateRow" | "mutateRowTs" | "mutateRows" | "mutateRowsTs"),
        Api::Thrift2 => matches!(
            method,
            "put" | "putMultiple" | "deleteSingle" | "deleteMultiple" | "mutateRow"
        ),
    }
}

fn serve_connection(stream: TcpStream, handler: Handler, opts: &Options, slot: &Arc<slots::Slot>) {
    let peer = stream.peer_addr().map(|a| a.to_string()).unwrap_or_default();
    // Socket options, shared by both halves: a read waits at most the idle timeout for the
    // client, and so does a reply for a client that does not read.
    let _ = stream.set_read_timeout(opts.idle_timeout);
    let _ = stream.set_write_timeout(opts.idle_timeout);
    let Ok(reader) = stream.try_clone() else {
        return;
    };
    let held = wire::Held::new(stream).before_send({
        let handler = handler.clone();
        move || {
            handler
                .commit()
                .map_err(|e| std::io::Error::other(format!("cannot apply writes: {}", describe(&e))))
        }
    });
    held.hold(true);
    let mut input = wire::Watched::new(
        wire::input(
            slots::Watch::new(
                wire::SendBeforeRead::new(reader, held.clone()).gathering({
                    let handler = handler.clone();
                    move || handler.has_deferred()
                }),
                slot.clone(),
            ),
            opts.transport,
            opts.protocol,
            opts.max_message,
        )
        .with_defaults(match opts.api {
            Api::Thrift1 => args::of,
            Api::Thrift2 => args2::of,
        })
        .struct_bytes(STRUCT_BYTES),
    )
    .on_call({
        let (handler, api, metrics, slot) = (handler.clone(), opts.api, opts.metrics.clone(), slot.clone());
        move |method| {
            // A call already buffered is a call too.
            if !slot.busy() {
                return Err(thrift::Error::Transport(thrift::TransportError::new(
                    thrift::TransportErrorKind::EndOfFile,
                    "closed for a new connection at the limit",
                )));
            }
            handler::serving(method);
            if let Some(m) = &metrics {
                m.call(method);
            }
            if defers(api, method) { Ok(()) } else { handler.commit() }
        }
    });
    let mut output = wire::output(Outbox::new(held.clone(), opts.transport), opts.protocol);
    let processor: Box<dyn TProcessor> = match opts.api {
        Api::Thrift1 => Box::new(HbaseSyncProcessor::new(handler.clone())),
        Api::Thrift2 => Box::new(THBaseServiceSyncProcessor::new(Thrift2(handler.clone()))),
    };
    let in_place = opts.in_place && opts.api == Api::Thrift1 && opts.protocol == Protocol::Binary;
    let outcome = loop {
        let whole = match in_place {
            true => whole_call(input.inner_mut()),
            false => Ok(None),
        };
        let served = match whole {
            Err(e) => Err(e),
            Ok(Some((method, len))) => input.announce(method).and_then(|()| {
                let bytes = &input.inner().unread()[..len];
                let served = match fast::read(bytes, input.inner().limit()) {
                    Some(call) => fast::reply(output.as_mut(), &call, handler.mutate_in_place(&call)),
                    None => Err(wire::protocol_error(
                        thrift::ProtocolErrorKind::InvalidData,
                        "a call checked whole could not be read".into(),
                    )),
                };
                input.inner_mut().consume(len);
                served
            }),
            Ok(None) => processor.process(&mut input, output.as_mut()),
        };
        match served {
            Ok(()) => {
                if let Some(why) = input.failed() {
                    break Err(format!("a request could not be read: {why}"));
                }
                slot.idle();
            }
            Err(e) if is_disconnect_error(&e) => break Ok(()),
            // Nothing sent for the idle timeout between calls: closed, as HBase closes it.
            Err(e) if is_timeout(&e) && input.inner().waited_between_calls() => break Ok(()),
            Err(e) if is_timeout(&e) => {
                break Err(format!(
                    "nothing sent for {} in the middle of a request",
                    opts.idle_timeout
                        .map(humantime::format_duration)
                        .map(|d| d.to_string())
                        .unwrap_or_default()
                ));
            }
            Err(e) => break Err(describe(&e)),
        }
    };
    // Calls served before the one that failed are answered.
    let sent = held.send();
    handler.close_connection();
    match (outcome, sent) {
        (Err(why), _) => eprintln!("tallrow serve: closing connection from {peer}: {why}"),
        (Ok(()), Err(e)) if !is_disconnect_io(&e) => {
            eprintln!("tallrow serve: closing connection from {peer}: {e}")
        }
        _ => {}
    }
}

/// A mutation call received whole, read in place: its method and length. One cut off by
/// the buffer's end is completed first.
fn whole_call(input: &mut wire::Input<Box<dyn wire::Source>>) -> thrift::Result<Option<(&'static str, usize)>> {
    loop {
        match fast::mutation_call(input.unread(), input.limit()) {
            fast::Found::Whole(method, len) => return Ok(Some((method, len))),
            fast::Found::Short if !input.unread().is_empty() => {
                if !input.fill_more()? {
                    return Ok(None);
                }
            }
            _ => return Ok(None),
        }
    }
}

/// A read that waited the idle timeout: the socket's timeout reports itself as "would block".
fn is_timeout(e: &thrift::Error) -> bool {
    match e {
        thrift::Error::Transport(t) => {
            t.kind == thrift::TransportErrorKind::TimedOut || t.message.contains("temporarily unavailable")
        }
        _ => false,
    }
}

fn is_disconnect(e: &thrift::TransportError) -> bool {
    matches!(
        e.kind,
        thrift::TransportErrorKind::EndOfFile | thrift::TransportErrorKind::NotOpen
    ) || e.message.contains("reset")
        || e.message.contains("Broken pipe")
}

fn is_disconnect_io(e: &std::io::Error) -> bool {
    use std::io::ErrorKind::*;
    matches!(
        e.kind(),
        BrokenPipe | ConnectionReset | ConnectionAborted | UnexpectedEof
    )
}

fn is_disconnect_error(e: &thrift::Error) -> bool {
    match e {
        thrift::Error::Transport(t) => is_disconnect(t),
        _ => false,
    }
}

/// One line for a connection-level error.
pub fn describe(e: &thrift::Error) -> String {
    match e {
        thrift::Error::Transport(t) => t.message.clone(),
        thrift::Error::Protocol(p) => p.message.clone(),
        thrift::Error::Application(a) => a.message.clone(),
        thrift::Error::User(u) => u.to_string(),
    }
}
