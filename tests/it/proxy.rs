//! A TCP proxy of the tests' own, on loopback, in front of one server (ZooKeeper, a master,
//! a region server), that holds, delays, cuts or resets the bytes on command. While held it
//! takes connections and reads nothing from either side, so what was sent waits in the
//! kernel's buffers, as with a stopped server (SIGSTOP) or one waiting on its disk;
//! released, it passes them on. Only the client that goes through it sees the fault, so a
//! test of one needs no turn on the cluster. A client reaches a master or a region server
//! through it with the native URL's `connect_to=`.

use std::io::{Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

/// What the pumps obey.
#[derive(Default)]
struct Faults {
    /// Bytes pass neither way before this instant.
    hold: Mutex<Option<Instant>>,
    released: Condvar,
    /// Each chunk waits this long before it passes (milliseconds).
    delay_ms: AtomicU64,
    /// The next bytes the server sends are dropped and the connection reset.
    reset_next_reply: AtomicBool,
    /// Replies dropped by a reset.
    resets: AtomicU64,
    /// Bytes whose sight in a request starts a hold until [`FaultProxy::release`].
    hold_at: Mutex<Option<Vec<u8>>>,
    /// Whether a request held at them was seen.
    caught: AtomicBool,
    /// The client's side of every connection, to cut.
    clients: Mutex<Vec<TcpStream>>,
}

/// The proxy; it serves until the test's process ends.
pub struct FaultProxy {
    addr: String,
    faults: Arc<Faults>,
}

impl FaultProxy {
    /// A proxy to `target` (`host:port`).
    pub fn start(target: &str) -> FaultProxy {
        let l = TcpListener::bind("127.0.0.1:0").expect("a loopback port");
        let addr = l.local_addr().unwrap().to_string();
        let faults: Arc<Faults> = Arc::default();
        let (target, f) = (target.to_string(), faults.clone());
        std::thread::spawn(move || {
            for client in l.incoming().flatten() {
                let Ok(server) = TcpStream::connect(&target) else {
                    continue;
                };
                let _ = (client.set_nodelay(true), server.set_nodelay(true));
                f.clients.lock().unwrap().push(client.try_clone().unwrap());
                for (from, to, replies) in [
                    (client.try_clone().unwrap(), server.try_clone().unwrap(), false),
                    (server, client, true),
                ] {
                    let f = f.clone();
                    std::thread::spawn(move || pump(from, to, replies, &f));
                }
            }
        });
        FaultProxy { addr, faults }
    }

    /// `host:port` to reach the server through the proxy at.
    pub fn addr(&self) -> &str {
        &self.addr
    }

    /// Holds every byte, both ways, for `d` from now.
    pub fn hold_for(&self, d: Duration) {
        *self.faults.hold.lock().unwrap() = Some(Instant::now() + d);
        self.faults.released.notify_all();
    }

    /// Holds every byte, both ways, from the first request that carries `bytes` (a method's
    /// name: `CreateTable`) until [`FaultProxy::release`]; that request is held too.
    pub fn hold_at(&self, bytes: &[u8]) {
        self.faults.caught.store(false, Ordering::SeqCst);
        *self.faults.hold_at.lock().unwrap() = Some(bytes.to_vec());
    }

    /// Whether a request [`FaultProxy::hold_at`] waits for came and is held.
    pub fn caught(&self) -> bool {
        self.faults.caught.load(Ordering::SeqCst)
    }

    /// Ends a hold now.
    pub fn release(&self) {
        *self.faults.hold.lock().unwrap() = None;
        self.faults.released.notify_all();
    }

    /// Delays every chunk of bytes, both ways, by `d` (zero: no delay).
    pub fn delay(&self, d: Duration) {
        self.faults.delay_ms.store(d.as_millis() as u64, Ordering::SeqCst);
    }

    /// The server's next reply, on whichever connection, is dropped and that connection
    /// reset (RST) towards the client: the request got there, its answer never comes back.
    pub fn reset_next_reply(&self) {
        self.faults.reset_next_reply.store(true, Ordering::SeqCst);
    }

    /// Replies dropped by [`FaultProxy::reset_next_reply`] so far.
    pub fn resets(&self) -> u64 {
        self.faults.resets.load(Ordering::SeqCst)
    }

    /// Cuts every connection open now (an orderly close towards the client).
    pub fn cut(&self) {
        for c in self.faults.clients.lock().unwrap().drain(..) {
            let _ = c.shutdown(Shutdown::Both);
        }
    }
}

/// Waits while the bytes are held.
fn wait_released(f: &Faults) {
    let mut u = f.hold.lock().unwrap();
    while let Some(t) = *u {
        let now = Instant::now();
        if now >= t {
            *u = None;
            break;
        }
        u = f.released.wait_timeout(u, t - now).unwrap().0;
    }
}

/// Passes bytes from `from` to `to` (`replies`: the server's way), never while held; the
/// end of one is the end of both.
fn pump(mut from: TcpStream, mut to: TcpStream, replies: bool, f: &Faults) {
    let mut buf = [0u8; 64 * 1024];
    loop {
        wait_released(f);
        let n = match from.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => n,
        };
        if replies && f.reset_next_reply.swap(false, Ordering::SeqCst) {
            f.resets.fetch_add(1, Ordering::SeqCst);
            // Linger 0: the last close of the client's socket sends RST, as a peer that
            // crashed or a middlebox would. The other pump's copy goes as its read ends.
            let _ = socket2::SockRef::from(&to).set_linger(Some(Duration::ZERO));
            let peer = to.peer_addr().ok();
            f.clients.lock().unwrap().retain(|c| c.peer_addr().ok() != peer);
            let _ = to.shutdown(Shutdown::Read);
            let _ = from.shutdown(Shutdown::Both);
            return;
        }
        if !replies {
            let mut at = f.hold_at.lock().unwrap();
            if at
                .as_ref()
                .is_some_and(|p| buf[..n].windows(p.len()).any(|w| w == &p[..]))
            {
                *at = None;
                // An hour: in effect until released.
                *f.hold.lock().unwrap() = Some(Instant::now() + Duration::from_secs(3600));
                f.caught.store(true, Ordering::SeqCst);
            }
        }
        let delay = f.delay_ms.load(Ordering::SeqCst);
        if delay > 0 {
            std::thread::sleep(Duration::from_millis(delay));
        }
        // Bytes read as the hold began are held too.
        wait_released(f);
        if to.write_all(&buf[..n]).is_err() {
            break;
        }
    }
    let _ = to.shutdown(Shutdown::Write);
    let _ = from.shutdown(Shutdown::Read);
}
