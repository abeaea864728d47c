//! A TCP proxy of the tests' own, on loopback, in front of one server (ZooKeeper, a master,
//! a region server), that holds the bytes on command: while held it takes connections and
//! reads nothing from either side, so what was sent waits in the kernel's buffers, as with a
//! stopped server (SIGSTOP) or one waiting on its disk; released, it passes them on. Only
//! the client that goes through it sees the fault, so a test of one needs no turn on the
//! cluster.

use std::io::{Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

/// The proxy; it serves until the test's process ends.
pub struct FaultProxy {
    addr: String,
    hold: Arc<(Mutex<Option<Instant>>, Condvar)>,
}

impl FaultProxy {
    /// A proxy to `target` (`host:port`).
    pub fn start(target: &str) -> FaultProxy {
        let l = TcpListener::bind("127.0.0.1:0").expect("a loopback port");
        let addr = l.local_addr().unwrap().to_string();
        let hold: Arc<(Mutex<Option<Instant>>, Condvar)> = Arc::default();
        let (target, h) = (target.to_string(), hold.clone());
        std::thread::spawn(move || {
            for client in l.incoming().flatten() {
                let Ok(server) = TcpStream::connect(&target) else {
                    continue;
                };
                for (from, to) in [
                    (client.try_clone().unwrap(), server.try_clone().unwrap()),
                    (server, client),
                ] {
                    let h = h.clone();
                    std::thread::spawn(move || pump(from, to, &h));
                }
            }
        });
        FaultProxy { addr, hold }
    }

    /// `host:port` to reach the server through the proxy at.
    pub fn addr(&self) -> &str {
        &self.addr
    }

    /// Holds every byte, both ways, for `d` from now.
    pub fn hold_for(&self, d: Duration) {
        let (until, released) = &*self.hold;
        *until.lock().unwrap() = Some(Instant::now() + d);
        released.notify_all();
    }
}

/// Waits while the bytes are held.
fn wait_released(hold: &(Mutex<Option<Instant>>, Condvar)) {
    let (until, released) = hold;
    let mut u = until.lock().unwrap();
    while let Some(t) = *u {
        let now = Instant::now();
        if now >= t {
            *u = None;
            break;
        }
        u = released.wait_timeout(u, t - now).unwrap().0;
    }
}

/// Passes bytes from `from` to `to`, never while held; the end of one is the end of both.
fn pump(mut from: TcpStream, mut to: TcpStream, hold: &(Mutex<Option<Instant>>, Condvar)) {
    let mut buf = [0u8; 64 * 1024];
    loop {
        wait_released(hold);
        let n = match from.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => n,
        };
        // Bytes read as the hold began are held too.
        wait_released(hold);
        if to.write_all(&buf[..n]).is_err() {
            break;
        }
    }
    let _ = to.shutdown(Shutdown::Write);
    let _ = from.shutdown(Shutdown::Read);
}
