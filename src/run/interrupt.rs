//! A run or a load stopped early by the user (Ctrl-C, SIGINT; or SIGTERM, as a scheduler
//! stops a pod): the first signal while a run measures ends it where it is, and it reports
//! what it measured; the first while a load writes sends no more batches and waits for those
//! in flight, its journal kept for `--resume`. A signal before that, or a second one, ends the process as
//! the signal would.

use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};

static MEASURING: AtomicBool = AtomicBool::new(false);
static REQUESTED: AtomicBool = AtomicBool::new(false);
/// What the first signal does, in words, while one is taken.
static WHAT: Mutex<&str> = Mutex::new("the run stops now and reports what it measured");

/// Whether the run was asked to stop.
pub fn requested() -> bool {
    REQUESTED.load(Ordering::Relaxed)
}

/// Asks the running run to stop (what the first signal does).
pub fn request() {
    REQUESTED.store(true, Ordering::Relaxed);
}

/// While the returned guard lives, a signal stops the run instead of the process.
pub(crate) fn measuring() -> impl Drop {
    stoppable("the run stops now and reports what it measured")
}

/// While the returned guard lives, a signal asks the work to stop ([`requested`]) instead
/// of ending the process; `what` says, in the message, what the work then does.
pub fn stoppable(what: &'static str) -> impl Drop {
    struct Guard;
    impl Drop for Guard {
        fn drop(&mut self) {
            MEASURING.store(false, Ordering::SeqCst);
        }
    }
    *WHAT.lock().unwrap_or_else(|e| e.into_inner()) = what;
    MEASURING.store(true, Ordering::SeqCst);
    Guard
}

/// Takes SIGINT and SIGTERM for this process from now on: call it before any thread is
/// started, so that every thread leaves them to the one that waits for them.
#[cfg(target_os = "linux")]
pub fn take_signals() {
    use nix::sys::signal::{SigSet, Signal};
    let mut set = SigSet::empty();
    set.add(Signal::SIGINT);
    set.add(Signal::SIGTERM);
    if set.thread_block().is_err() {
        return;
    }
    std::thread::Builder::new()
        .name("signals".into())
        .spawn(move || {
            while let Ok(signal) = set.wait() {
                if MEASURING.load(Ordering::SeqCst) && !requested() {
                    request();
                    let what = *WHAT.lock().unwrap_or_else(|e| e.into_inner());
                    eprintln!("tallrow: {signal}: {what} ({signal} again ends it at once)");
                    continue;
                }
                // As the signal would have: unblocked here, raised, its default action.
                let _ = set.thread_unblock();
                let _ = nix::sys::signal::raise(signal);
            }
        })
        .expect("spawning the signal thread");
}

/// Elsewhere signals keep their default action.
#[cfg(not(target_os = "linux"))]
pub fn take_signals() {}
