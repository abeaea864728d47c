//! Held replies: a socket's outgoing messages kept and sent in one write.

use std::io::{self, Read, Write};

/// Held bytes beyond which a flush sends them anyway.
const HOLD_LIMIT: usize = 1 << 20;

type BeforeSend = Box<dyn FnMut() -> io::Result<()> + Send>;

/// A socket's outgoing messages, held and sent in one write: a client's pipelined calls
/// until the window is written, a server's replies until it would wait for the next
/// request. One syscall then carries many messages instead of one each.
///
/// Cloned handles share the buffer. A flush sends only when not holding or past
/// a hold limit (1 MiB); [`Held::send`] always sends, after the `before_send` hook has run (a
/// server commits the writes its held replies acknowledge there).
#[derive(Clone)]
pub struct Held(std::sync::Arc<std::sync::Mutex<HeldState>>);

struct HeldState {
    stream: Box<dyn Write + Send>,
    buf: Vec<u8>,
    holding: bool,
    /// Each message goes alone (a sink that takes one message per write, as HTTP's POST).
    per_message: bool,
    before_send: Option<BeforeSend>,
    sends: Option<std::sync::Arc<std::sync::atomic::AtomicU64>>,
}

impl HeldState {
    /// Sends and empties the buffer; on failure what was held is dropped, never resent.
    fn send(&mut self) -> io::Result<()> {
        if self.buf.is_empty() {
            return Ok(());
        }
        let result = match self.before_send.as_mut() {
            Some(hook) => hook(),
            None => Ok(()),
        }
        .and_then(|()| self.stream.write_all(&self.buf));
        if let Some(sends) = &self.sends {
            sends.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        }
        self.buf.clear();
        if self.buf.capacity() > HOLD_LIMIT {
            self.buf.shrink_to(64 << 10);
        }
        result
    }
}

impl Held {
    /// Holds nothing until [`Held::hold`] says so.
    pub fn new(stream: impl Write + Send + 'static) -> Self {
        Held(std::sync::Arc::new(std::sync::Mutex::new(HeldState {
            stream: Box::new(stream),
            buf: Vec::new(),
            holding: false,
            per_message: false,
            before_send: None,
            sends: None,
        })))
    }

    /// Counts every write of held bytes in `sends`: for a client, its round trips (a
    /// pipelined window is one write).
    pub fn counting(self, sends: std::sync::Arc<std::sync::atomic::AtomicU64>) -> Self {
        self.state().sends = Some(sends);
        self
    }

    /// Runs `hook` before every send of held bytes; an error from it fails the send and
    /// discards what was held.
    pub fn before_send(self, hook: impl FnMut() -> io::Result<()> + Send + 'static) -> Self {
        self.state().before_send = Some(Box::new(hook));
        self
    }

    fn state(&self) -> std::sync::MutexGuard<'_, HeldState> {
        // A panic while holding the lock leaves only bytes behind; keep using them.
        self.0.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Never holds: every flushed message is its own write, for a sink that takes one
    /// message per write.
    pub fn per_message(self) -> Self {
        self.state().per_message = true;
        self
    }

    /// Starts or stops holding flushed messages.
    pub fn hold(&self, on: bool) {
        let mut s = self.state();
        s.holding = on && !s.per_message;
    }

    /// Sends whatever is held.
    pub fn send(&self) -> io::Result<()> {
        self.state().send()
    }
}

impl Write for Held {
    fn write(&mut self, data: &[u8]) -> io::Result<usize> {
        self.state().buf.extend_from_slice(data);
        Ok(data.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        let mut s = self.state();
        if !s.holding || s.buf.len() > HOLD_LIMIT {
            return s.send();
        }
        Ok(())
    }
}

/// A connection's reading half that sends what `held` holds before it would wait for the
/// peer, since the peer may be waiting for those replies before it sends more. While
/// `gather` says so (a server with writes waiting for their commit), bytes that have
/// already arrived are read first, without waiting: the replies, and the commit on their
/// way out, then cover all of them. Otherwise the replies go at once, without the two
/// extra system calls that looking costs.
pub struct SendBeforeRead {
    stream: std::net::TcpStream,
    held: Held,
    gather: Box<dyn Fn() -> bool + Send>,
}

impl SendBeforeRead {
    /// Reads `stream`, releasing `held` before each read that would wait.
    pub fn new(stream: std::net::TcpStream, held: Held) -> Self {
        SendBeforeRead {
            stream,
            held,
            gather: Box::new(|| false),
        }
    }

    /// Reads what has arrived before sending while `gather` returns true.
    pub fn gathering(self, gather: impl Fn() -> bool + Send + 'static) -> Self {
        SendBeforeRead {
            gather: Box::new(gather),
            ..self
        }
    }

    /// What has arrived, without waiting; `None` when nothing has.
    fn arrived(&mut self, buf: &mut [u8]) -> io::Result<Option<usize>> {
        self.stream.set_nonblocking(true)?;
        let got = self.stream.read(buf);
        self.stream.set_nonblocking(false)?;
        match got {
            Ok(n) => Ok(Some(n)),
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => Ok(None),
            Err(e) => Err(e),
        }
    }
}

impl Read for SendBeforeRead {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if (self.gather)()
            && let Some(n) = self.arrived(buf)?
        {
            return Ok(n);
        }
        self.held.send()?;
        self.stream.read(buf)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::{TcpListener, TcpStream};
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::time::Duration;

    /// A server's reading half over a fresh connection, a reply held, the client, and a
    /// count of sends.
    fn connection(gather: bool) -> (SendBeforeRead, TcpStream, Arc<AtomicUsize>) {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let client = TcpStream::connect(listener.local_addr().unwrap()).unwrap();
        let (server, _) = listener.accept().unwrap();
        server.set_read_timeout(Some(Duration::from_millis(200))).unwrap();
        let sends = Arc::new(AtomicUsize::new(0));
        let counted = sends.clone();
        let mut held = Held::new(server.try_clone().unwrap()).before_send(move || {
            counted.fetch_add(1, Ordering::SeqCst);
            Ok(())
        });
        held.hold(true);
        held.write_all(b"reply").unwrap();
        held.flush().unwrap();
        let reader = SendBeforeRead::new(server.try_clone().unwrap(), held).gathering(move || gather);
        // The client's three bytes, arrived before the reads under test.
        (&client).write_all(b"abc").unwrap();
        let mut peeked = [0u8; 3];
        while server.peek(&mut peeked).unwrap() < 3 {}
        (reader, client, sends)
    }

    #[test]
    fn gathering_reads_what_has_arrived_before_it_sends() {
        let (mut reader, mut client, sends) = connection(true);
        let mut buf = [0u8; 16];
        assert_eq!(reader.read(&mut buf).unwrap(), 3);
        assert_eq!(sends.load(Ordering::SeqCst), 0, "held while bytes had arrived");
        // Nothing more has arrived: the reply goes before the read waits.
        assert!(reader.read(&mut buf).is_err(), "the read waits, then times out");
        assert_eq!(sends.load(Ordering::SeqCst), 1);
        let mut reply = [0u8; 5];
        client.read_exact(&mut reply).unwrap();
        assert_eq!(&reply, b"reply");
    }

    #[test]
    fn without_gathering_the_reply_goes_before_any_read() {
        let (mut reader, _client, sends) = connection(false);
        let mut buf = [0u8; 16];
        assert_eq!(reader.read(&mut buf).unwrap(), 3);
        assert_eq!(sends.load(Ordering::SeqCst), 1);
    }
}
