//! The time a run is measured in: the machine's ([`Real`]), or a simulated one ([`Virtual`])
//! that the `delay:` store can carry (`delay:20ms,clock=virtual:INNER`), so that a run's
//! figures follow from its settings alone, whatever else the machine is doing.
//!
//! A virtual clock moves only when every thread that takes part in it (a run's workers)
//! waits on it: it then jumps to the earliest time one of them waits for. Work between waits
//! takes no virtual time. A thread that does not take part (a loader before the run) moves
//! the clock forward to what it waits for, at once.

use std::cell::Cell;
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

/// A source of time that threads can wait on.
pub trait Clock: Send + Sync {
    /// Now.
    fn now(&self) -> Instant;
    /// Returns at `t` or later.
    fn sleep_until(&self, t: Instant);
    /// `n` threads will take part in the clock until each calls [`Clock::leave`].
    fn join(&self, n: usize) {
        let _ = n;
    }
    /// The calling thread, one of those joined, takes part from now on.
    fn enter(&self) {}
    /// The calling thread takes part no more.
    fn leave(&self) {}
    /// Whether this clock is simulated, for reports.
    fn is_virtual(&self) -> bool {
        false
    }
}

/// The machine's monotonic clock.
#[derive(Debug, Default, Clone, Copy)]
pub struct Real;

impl Clock for Real {
    fn now(&self) -> Instant {
        Instant::now()
    }

    fn sleep_until(&self, t: Instant) {
        let now = Instant::now();
        if t > now {
            std::thread::sleep(t - now);
        }
    }
}

/// The machine's clock, shared.
pub fn real() -> Arc<dyn Clock> {
    Arc::new(Real)
}

/// A simulated clock (see the module's documentation).
pub struct Virtual {
    base: Instant,
    state: Mutex<State>,
    moved: Condvar,
}

struct State {
    /// Nanoseconds since `base`.
    now: u64,
    /// Threads taking part that are not waiting.
    running: usize,
    /// What the waiting threads that take part wait for.
    waits: Vec<u64>,
}

thread_local! {
    /// The virtual clock the current thread takes part in (its address), if any.
    static TAKES_PART: Cell<usize> = const { Cell::new(0) };
}

impl Default for Virtual {
    fn default() -> Self {
        Self::new()
    }
}

impl Virtual {
    /// A clock at zero.
    pub fn new() -> Virtual {
        Virtual {
            base: Instant::now(),
            state: Mutex::new(State {
                now: 0,
                running: 0,
                waits: Vec::new(),
            }),
            moved: Condvar::new(),
        }
    }

    fn id(&self) -> usize {
        self as *const Virtual as usize
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn nanos(&self, t: Instant) -> u64 {
        u64::try_from(t.saturating_duration_since(self.base).as_nanos()).unwrap_or(u64::MAX)
    }

    /// When nothing that takes part runs, moves to the earliest wait and wakes its waiters.
    fn advance(&self, s: &mut State) {
        if s.running > 0 || s.waits.is_empty() {
            return;
        }
        let next = s.waits.iter().copied().min().unwrap_or(s.now);
        s.now = s.now.max(next);
        let now = s.now;
        let before = s.waits.len();
        s.waits.retain(|&w| w > now);
        // The woken count as running from here, so that the clock cannot move past them
        // before they wake.
        s.running += before - s.waits.len();
        self.moved.notify_all();
    }
}

impl Clock for Virtual {
    fn now(&self) -> Instant {
        self.base + Duration::from_nanos(self.lock().now)
    }

    fn sleep_until(&self, t: Instant) {
        let t = self.nanos(t);
        let mut s = self.lock();
        if t <= s.now {
            return;
        }
        if TAKES_PART.get() != self.id() {
            s.now = t;
            self.moved.notify_all();
            return;
        }
        s.waits.push(t);
        s.running -= 1;
        self.advance(&mut s);
        while s.now < t {
            s = self.moved.wait(s).unwrap_or_else(|e| e.into_inner());
        }
    }

    fn join(&self, n: usize) {
        self.lock().running += n;
    }

    fn enter(&self) {
        TAKES_PART.set(self.id());
    }

    fn leave(&self) {
        if TAKES_PART.get() == self.id() {
            TAKES_PART.set(0);
        }
        let mut s = self.lock();
        s.running = s.running.saturating_sub(1);
        self.advance(&mut s);
    }

    fn is_virtual(&self) -> bool {
        true
    }
}

/// Takes part in `clock` for as long as it lives (a worker's whole run), and leaves it when
/// dropped, even by a panic, so that the others' time goes on.
pub struct Part<'a>(&'a dyn Clock);

impl<'a> Part<'a> {
    /// The calling thread takes part in `clock`, which was joined for it.
    pub fn enter(clock: &'a dyn Clock) -> Part<'a> {
        clock.enter();
        Part(clock)
    }
}

impl Drop for Part<'_> {
    fn drop(&mut self) {
        self.0.leave();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_virtual_clock_moves_when_every_part_waits() {
        let clock = Arc::new(Virtual::new());
        let t0 = clock.now();
        clock.join(2);
        let ends: Vec<Duration> = std::thread::scope(|s| {
            let hs: Vec<_> = [3u64, 5]
                .into_iter()
                .map(|step| {
                    let clock = clock.clone();
                    s.spawn(move || {
                        let _part = Part::enter(clock.as_ref());
                        for _ in 0..4 {
                            clock.sleep_until(clock.now() + Duration::from_millis(step));
                        }
                        clock.now() - t0
                    })
                })
                .collect();
            hs.into_iter().map(|h| h.join().unwrap()).collect()
        });
        // Each thread's waits add up exactly; neither got ahead of the other's time.
        assert_eq!(ends, [Duration::from_millis(12), Duration::from_millis(20)]);
        assert_eq!(clock.now() - t0, Duration::from_millis(20));
    }

    #[test]
    fn a_thread_that_takes_no_part_moves_the_clock_at_once() {
        let clock = Virtual::new();
        let t0 = clock.now();
        clock.sleep_until(t0 + Duration::from_secs(3600));
        assert_eq!(clock.now() - t0, Duration::from_secs(3600));
        clock.sleep_until(t0);
        assert_eq!(clock.now() - t0, Duration::from_secs(3600), "never back");
    }
}
