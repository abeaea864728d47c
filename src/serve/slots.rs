//! The server's open connections and what each is doing: in a call, or idle between calls
//! and since when. At the connection limit, the one idle longest is closed to admit a new
//! client, so that connections held open and silent never lock others out.
//!
//! A connection is busy from the moment bytes of a call arrive (so one that sent half a
//! request and stalled is in a call, and left to the idle timeout) until its reply is
//! written; idle after. Choosing and closing a connection is one compare-and-swap on its
//! state, so a call that begins at that instant either wins (and is served) or finds the
//! connection closing.

use std::io::{self, Read};
use std::net::{Shutdown, TcpStream};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// State: milliseconds since the table's epoch at which the connection went idle, or one
/// of these.
const BUSY: u64 = u64::MAX;
const CLOSING: u64 = u64::MAX - 1;

/// One open connection.
pub struct Slot {
    state: AtomicU64,
    stream: TcpStream,
    peer: String,
    epoch: Instant,
}

impl Slot {
    fn now(&self) -> u64 {
        self.epoch.elapsed().as_millis() as u64
    }

    /// A call is arriving: busy. `false` when the server is closing the connection.
    pub fn busy(&self) -> bool {
        let mut s = self.state.load(Ordering::Acquire);
        loop {
            match s {
                BUSY => return true,
                CLOSING => return false,
                _ => match self
                    .state
                    .compare_exchange_weak(s, BUSY, Ordering::AcqRel, Ordering::Acquire)
                {
                    Ok(_) => return true,
                    Err(now) => s = now,
                },
            }
        }
    }

    /// The call is answered: idle from now on (unless closing).
    pub fn idle(&self) {
        let _ = self
            .state
            .compare_exchange(BUSY, self.now(), Ordering::AcqRel, Ordering::Acquire);
    }
}

/// Every open connection.
pub struct Slots {
    open: Mutex<Vec<Arc<Slot>>>,
    epoch: Instant,
}

impl Default for Slots {
    fn default() -> Self {
        Slots {
            open: Mutex::new(Vec::new()),
            epoch: Instant::now(),
        }
    }
}

impl Slots {
    /// Adds a connection, idle from now; `stream` is a handle to close it by.
    pub fn add(&self, stream: TcpStream, peer: String) -> Arc<Slot> {
        let slot = Arc::new(Slot {
            state: AtomicU64::new(self.epoch.elapsed().as_millis() as u64),
            stream,
            peer,
            epoch: self.epoch,
        });
        self.open.lock().expect("slots lock").push(slot.clone());
        slot
    }

    /// Removes a connection that has closed.
    pub fn remove(&self, slot: &Arc<Slot>) {
        self.open.lock().expect("slots lock").retain(|s| !Arc::ptr_eq(s, slot));
    }

    /// Open connections.
    pub fn len(&self) -> usize {
        self.open.lock().expect("slots lock").len()
    }

    /// Whether none is open.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Closes the connection idle longest: its peer and how long it was idle; `None` when
    /// every connection is in a call (or already closing).
    pub fn close_longest_idle(&self) -> Option<(String, Duration)> {
        let open = self.open.lock().expect("slots lock");
        loop {
            let (slot, since) = open
                .iter()
                .map(|s| (s, s.state.load(Ordering::Acquire)))
                .filter(|(_, since)| *since < CLOSING)
                .min_by_key(|(_, since)| *since)?;
            if slot
                .state
                .compare_exchange(since, CLOSING, Ordering::AcqRel, Ordering::Acquire)
                .is_ok()
            {
                // Its thread's read returns at once, and the thread closes the connection.
                let _ = slot.stream.shutdown(Shutdown::Both);
                let idle = Duration::from_millis(slot.now().saturating_sub(since));
                return Some((slot.peer.clone(), idle));
            }
        }
    }
}

/// A connection's reading half that marks its slot busy whenever bytes arrive, and fails
/// once the server has chosen to close it.
pub struct Watch<R> {
    inner: R,
    slot: Arc<Slot>,
}

impl<R> Watch<R> {
    /// Watches reads of `inner` for `slot`.
    pub fn new(inner: R, slot: Arc<Slot>) -> Self {
        Watch { inner, slot }
    }
}

impl<R: Read> Read for Watch<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        if n > 0 && !self.slot.busy() {
            // Read as the end of the stream: the server closed it, nothing went wrong.
            return Err(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                "closed for a new connection at the limit",
            ));
        }
        Ok(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::TcpListener;

    /// `n` server-side streams of fresh loopback connections, with their clients.
    fn connections(n: usize) -> Vec<(TcpStream, TcpStream)> {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        (0..n)
            .map(|_| {
                let client = TcpStream::connect(listener.local_addr().unwrap()).unwrap();
                let (server, _) = listener.accept().unwrap();
                (server, client)
            })
            .collect()
    }

    #[test]
    fn the_connection_idle_longest_is_closed_and_busy_ones_never() {
        let slots = Slots::default();
        let conns = connections(3);
        let added: Vec<Arc<Slot>> = conns
            .iter()
            .enumerate()
            .map(|(i, (s, _))| slots.add(s.try_clone().unwrap(), format!("peer{i}")))
            .collect();
        // peer0 is in a call; peer1 went idle before peer2.
        assert!(added[0].busy());
        added[1].state.store(5, Ordering::Release);
        added[2].state.store(9, Ordering::Release);
        let (peer, _) = slots.close_longest_idle().unwrap();
        assert_eq!(peer, "peer1");
        // Its client sees the connection closed; the busy one cannot be chosen.
        let mut buf = [0u8; 1];
        assert_eq!((&conns[1].1).read(&mut buf).unwrap(), 0);
        assert!(!added[1].busy(), "a call arriving now finds it closing");
        assert_eq!(slots.close_longest_idle().unwrap().0, "peer2");
        assert!(slots.close_longest_idle().is_none(), "only a busy one is left");
        // Answered, it is idle and can be chosen.
        added[0].idle();
        assert_eq!(slots.close_longest_idle().unwrap().0, "peer0");
        for s in &added {
            slots.remove(s);
        }
        assert!(slots.is_empty());
    }

    #[test]
    fn bytes_arriving_make_a_connection_busy() {
        let slots = Slots::default();
        let conns = connections(1);
        let (server, client) = &conns[0];
        let slot = slots.add(server.try_clone().unwrap(), "peer".into());
        let mut watched = Watch::new(server.try_clone().unwrap(), slot.clone());
        use std::io::Write;
        (&*client).write_all(b"x").unwrap();
        let mut buf = [0u8; 4];
        assert_eq!(watched.read(&mut buf).unwrap(), 1);
        assert!(slots.close_longest_idle().is_none(), "half a call is a call");
        slot.idle();
        assert!(slots.close_longest_idle().is_some());
        // A call that arrives once it is chosen is not read.
        let mut late = Watch::new(std::io::Cursor::new(b"call".to_vec()), slot);
        let e = late.read(&mut buf).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::UnexpectedEof);
    }
}
