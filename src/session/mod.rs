//! The work behind the commands, from their one typed plan: the validated
//! [`Workload`](crate::workload::Workload) (its `[load]` and `[run]` with every flag already
//! lowered to a `--set`), a backend, a shard and a reporting interval. It runs loads
//! ([`load`]), measured runs ([`measure`]), find-max searches ([`findmax`]), sweeps
//! ([`sweep`]) and key-design comparisons ([`variants`]), writes their reports, and prints
//! progress lines to the writer it is given. `cli` parses arguments into these calls and
//! prints their results; nothing here knows a flag.

pub mod findmax;
pub mod load;
pub mod measure;
pub mod sweep;
pub mod variants;

use crate::workload::MAX_THREADS;
use std::fmt::Display;
use std::time::{Duration, SystemTime};

/// What went wrong, with what was being done when it did (outermost first).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct Error(pub String);

/// A session's result.
pub type Result<T> = std::result::Result<T, Error>;

macro_rules! from_display {
    ($($t:ty),*) => {$(
        impl From<$t> for Error {
            fn from(e: $t) -> Error {
                Error(e.to_string())
            }
        }
    )*};
}
from_display!(
    std::io::Error,
    crate::workload::Error,
    crate::store::Error,
    crate::schema::Error,
    crate::report::Error
);

/// Says what was being done when an error happened.
pub trait Context<T> {
    /// `what: the error`.
    fn context(self, what: impl Display) -> Result<T>;
    /// [`Context::context`], the words made only on failure.
    fn with_context<D: Display>(self, what: impl FnOnce() -> D) -> Result<T>;
}

impl<T, E: Display> Context<T> for std::result::Result<T, E> {
    fn context(self, what: impl Display) -> Result<T> {
        self.map_err(|e| Error(format!("{what}: {e}")))
    }

    fn with_context<D: Display>(self, what: impl FnOnce() -> D) -> Result<T> {
        self.map_err(|e| Error(format!("{}: {e}", what())))
    }
}

impl<T> Context<T> for Option<T> {
    fn context(self, what: impl Display) -> Result<T> {
        self.ok_or_else(|| Error(what.to_string()))
    }

    fn with_context<D: Display>(self, what: impl FnOnce() -> D) -> Result<T> {
        self.ok_or_else(|| Error(what().to_string()))
    }
}

/// Returns an [`Error`] made as `format!` makes a string.
macro_rules! bail {
    ($($arg:tt)*) => {
        return Err($crate::session::Error(format!($($arg)*)))
    };
}
pub(crate) use bail;

/// Worker threads per core above which a count must be forced.
pub const PER_CORE: usize = 64;

/// The worker threads a count of `n` starts (0: every core), refused above
/// [`MAX_THREADS`] and, unless `force`, above 64 per core: a machine check, beside the
/// workload's own; `what` names where `n` came from.
pub fn checked_threads(n: usize, force: bool, what: &str) -> Result<usize> {
    let t = crate::workload::workers(n);
    if t > MAX_THREADS {
        bail!("{what} {t}: at most {MAX_THREADS} worker threads");
    }
    let cores = crate::workload::workers(0);
    if t > PER_CORE * cores && !force {
        bail!(
            "{what} {t}: more than {PER_CORE} worker threads per core on this machine's {cores} cores; pass --force-threads to start them anyway"
        );
    }
    Ok(t)
}

/// Refuses a rate that leaves one of the run's workers without an operation to schedule in
/// its duration, or that would take longer than a week for its `ops`; `what` names where the
/// rate came from.
pub fn check_rate(r: &crate::workload::Run, what: &str) -> Result<()> {
    let Some(rate) = r.rate else { return Ok(()) };
    let workers = r.workers();
    match r.ops {
        None => {
            let secs = r.duration.as_secs_f64();
            let scheduled = rate * secs;
            if scheduled < workers as f64 {
                bail!(
                    "{what} {rate:?}: schedules {scheduled:.3} operations in the run's {:?}, fewer than one for each of its {workers} workers; at least {:.4} operations/s gives each one",
                    r.duration,
                    workers as f64 / secs
                );
            }
        }
        Some(n) => {
            let secs = n as f64 / rate;
            if secs > 7.0 * 24.0 * 3600.0 {
                bail!("{what} {rate:?}: {n} operations at that rate take {secs:.0} s, longer than a week");
            }
        }
    }
    Ok(())
}

/// The exit code of a run that found its `--start-at` passed: it measured nothing, and a
/// scheduler (Kubernetes' pod failure policy among them) can tell it from other failures.
pub const EXIT_LATE: u8 = 3;

/// Why a `--start-at` cannot be waited for.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum StartAt {
    /// Over a week away: a typing error more likely than a plan.
    #[error("--start-at {0}: more than a week away")]
    TooFar(String),
    /// Passed: the run would measure another period than its other shards, so it stops
    /// before measuring anything.
    #[error(
        "--start-at {at}: passed {ago_s:.1} s ago{when}; a run that starts late would not measure the same period as its other shards"
    )]
    Late {
        /// The time, as RFC 3339.
        at: String,
        /// Seconds since.
        ago_s: f64,
        /// During what it passed (` while loading`, or empty).
        when: String,
    },
}

/// How long until `at`: refused when it has passed (`when` says during what) or is more
/// than a week away.
pub fn until(at: SystemTime, when: &str) -> std::result::Result<Duration, StartAt> {
    let shown = humantime::format_rfc3339_millis(at).to_string();
    match at.duration_since(SystemTime::now()) {
        Ok(wait) if wait > Duration::from_secs(7 * 24 * 3600) => Err(StartAt::TooFar(shown)),
        Ok(wait) => Ok(wait),
        Err(past) => Err(StartAt::Late {
            at: shown,
            ago_s: past.duration().as_secs_f64(),
            when: when.to_string(),
        }),
    }
}

/// Starts watching the cluster `url` names (one that `observe::choose` took), from now; None,
/// with a line on stderr, when it cannot be reached: what it watches goes on without it.
pub fn observe(url: &str) -> Option<(crate::observe::watch::Observer, u64)> {
    let since = crate::store::now_millis().max(0) as u64;
    match crate::observe::open(url) {
        Ok(source) => Some((
            crate::observe::watch::Observer::start(source, since, crate::observe::watch::Every::default()),
            since,
        )),
        Err(e) => {
            eprintln!("observer: {}; going on unobserved", crate::store::first_line(&e));
            None
        }
    }
}
