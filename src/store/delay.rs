//! A layer that adds known latency to another store: a fixed delay on every data call (each
//! page of a long scan is a call), and optionally one stall window during which every call
//! waits until the window ends.
//! It proves what the runner records (a 2 ms store must report about 2 ms) and shows how a
//! stall reaches response and service times.
//!
//! URL: `delay:DELAY[,stall=LENGTH@AT][,clock=virtual]:INNER`, e.g. `delay:2ms:memory:` or
//! `delay:0ms,stall=1s@3s:embedded:data/x` (AT is counted from when the store is opened).
//! With `clock=virtual` the delays, the stall and a run over the store are timed by a
//! simulated clock ([`crate::clock::Virtual`]): the figures are the settings' own, exactly,
//! however busy the machine is, and a data call costs at least a microsecond of it.

use super::Store;
use super::layer::{Layer, Layered};
use crate::clock::{self, Clock};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The delaying layer.
pub struct Delay {
    delay: Duration,
    stall: Option<(Instant, Instant)>,
    spec: String,
    clock: Arc<dyn Clock>,
}

/// The settings of a delay URL.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Spec {
    /// Added to every data call.
    pub delay: Duration,
    /// A stall of `.0` starting `.1` after opening.
    pub stall: Option<(Duration, Duration)>,
    /// The wrapped store's URL.
    pub inner: String,
    /// Whether the delays are timed by a simulated clock (`clock=virtual`).
    pub virtual_clock: bool,
}

impl Spec {
    /// Parses what follows `delay:`.
    pub fn parse(rest: &str) -> std::result::Result<Spec, String> {
        let (settings, inner) = rest
            .split_once(':')
            .ok_or_else(|| format!("delay:{rest}: expected delay:DELAY[,stall=LENGTH@AT]:INNER"))?;
        let mut parts = settings.split(',');
        let delay = parse_duration(parts.next().unwrap_or(""))?;
        let mut stall = None;
        let mut virtual_clock = false;
        for p in parts {
            if let Some(v) = p.strip_prefix("clock=") {
                virtual_clock = match v {
                    "virtual" => true,
                    "real" => false,
                    _ => return Err(format!("delay: {p:?}: expected clock=virtual or clock=real")),
                };
                continue;
            }
            let Some(v) = p.strip_prefix("stall=") else {
                return Err(format!(
                    "delay: unknown setting {p:?}; expected stall=LENGTH@AT or clock=virtual"
                ));
            };
            let (len, at) = v
                .split_once('@')
                .ok_or_else(|| format!("delay: {p:?} is not stall=LENGTH@AT"))?;
            stall = Some((parse_duration(len)?, parse_duration(at)?));
        }
        if inner.is_empty() {
            return Err("delay: the wrapped store's URL is missing".into());
        }
        Ok(Spec {
            delay,
            stall,
            inner: inner.to_string(),
            virtual_clock,
        })
    }
}

/// `250us`, `2ms`, `1s`.
fn parse_duration(text: &str) -> std::result::Result<Duration, String> {
    humantime::parse_duration(text).map_err(|_| format!("delay: {text:?} is not a duration like 250us, 2ms or 1s"))
}

impl Delay {
    /// `inner` under the settings of `spec` (its `inner` URL is not used here); a stall is
    /// timed from now.
    pub fn over(inner: Arc<dyn Store>, spec: &Spec) -> Layered<Delay> {
        let clock: Arc<dyn Clock> = if spec.virtual_clock {
            Arc::new(clock::Virtual::new())
        } else {
            clock::real()
        };
        let now = clock.now();
        let layer = Delay {
            // Under a simulated clock a call that cost nothing would let a closed loop run
            // forever at one instant.
            delay: if spec.virtual_clock {
                spec.delay.max(Duration::from_micros(1))
            } else {
                spec.delay
            },
            stall: spec.stall.map(|(len, at)| (now + at, now + at + len)),
            spec: format!(
                "{:?}{}{}",
                spec.delay,
                spec.stall
                    .map(|(len, at)| format!(", stall {len:?} at {at:?}"))
                    .unwrap_or_default(),
                if spec.virtual_clock { ", virtual clock" } else { "" }
            ),
            clock,
        };
        Layered::new(inner, layer)
    }

    fn wait(&self) {
        let now = self.clock.now();
        let mut until = now + self.delay;
        if let Some((from, to)) = self.stall
            && now >= from
            && now < to
        {
            until = until.max(to);
        }
        if self.clock.is_virtual() {
            self.clock.sleep_until(until);
        } else {
            wait_until(until);
        }
    }
}

/// Sleeps until shortly before `until`, then spins: sleeps alone overshoot by tens of
/// microseconds, which would blur the figures this store exists to pin down.
fn wait_until(until: Instant) {
    const SPIN: Duration = Duration::from_micros(200);
    loop {
        let now = Instant::now();
        if now >= until {
            return;
        }
        let left = until - now;
        if left > SPIN {
            std::thread::sleep(left - SPIN);
        } else {
            std::thread::yield_now();
        }
    }
}

impl Layer for Delay {
    fn identity(&self, inner: String) -> String {
        format!("delay ({}) over {inner}", self.spec)
    }

    fn clock(&self) -> Option<Arc<dyn Clock>> {
        Some(self.clock.clone())
    }

    fn before(&self) {
        self.wait();
    }

    fn per_page(&self) -> bool {
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::memory::Memory;
    use crate::store::{Get, Scan, TableDescriptor};

    #[test]
    fn parses_urls() {
        let s = Spec::parse("2ms:memory:").unwrap();
        assert_eq!(s.delay, Duration::from_millis(2));
        assert_eq!(s.stall, None);
        assert_eq!(s.inner, "memory:");
        let s = Spec::parse("0ms,stall=1s@250ms:embedded:data/x").unwrap();
        assert_eq!(s.stall, Some((Duration::from_secs(1), Duration::from_millis(250))));
        assert_eq!(s.inner, "embedded:data/x");
        assert!(Spec::parse("2ms").unwrap_err().contains("expected delay:"));
        assert!(Spec::parse("2 mss:memory:").unwrap_err().contains("not a duration"));
        assert!(Spec::parse("fast:memory:").unwrap_err().contains("not a duration"));
        assert!(
            Spec::parse("2ms,stal=1s@1s:memory:")
                .unwrap_err()
                .contains("unknown setting")
        );
        assert!(Spec::parse("2ms:").unwrap_err().contains("missing"));
        assert!(Spec::parse("2ms,clock=virtual:memory:").unwrap().virtual_clock);
        assert!(
            Spec::parse("2ms,clock=fake:memory:")
                .unwrap_err()
                .contains("clock=virtual")
        );
    }

    #[test]
    fn delays_data_calls_and_stalls_in_the_window() {
        let spec = Spec::parse("3ms,stall=300ms@50ms:memory:").unwrap();
        let d = Delay::over(Arc::new(Memory::new()), &spec);
        d.create_table(&TableDescriptor::new("t", &["f"], 1)).unwrap();
        let t = Instant::now();
        d.scan("t", &Scan::default()).unwrap();
        assert!(t.elapsed() >= Duration::from_millis(3));
        std::thread::sleep(Duration::from_millis(60));
        let t = Instant::now();
        d.get("t", &[Get::new(b"r".to_vec())]).unwrap();
        // Called inside the window: waits for its end, about 290 ms from here.
        assert!(t.elapsed() >= Duration::from_millis(200), "{:?}", t.elapsed());
        assert!(d.identity().starts_with("delay (3ms, stall 300ms at 50ms) over memory"));
    }
}
