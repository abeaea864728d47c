//! What can go wrong, and what HBase's client does about each: an exception the server
//! names is classified by its class as `ClientExceptionsUtil` and the retrying callers
//! classify it.

use std::time::Duration;

/// A client error.
#[derive(Debug, Clone, thiserror::Error)]
pub enum Error {
    /// The server at an address could not be reached, or the connection broke.
    #[error("{addr}: {why}")]
    Connection {
        /// `host:port`.
        addr: String,
        /// What happened.
        why: String,
    },
    /// Kerberos (SASL) failed: no ticket, an unknown principal, a protection the server does
    /// not offer, a server that refused, or one that runs simple authentication.
    #[error("{addr}: {why}")]
    Auth {
        /// `host:port`.
        addr: String,
        /// What happened, in one line.
        why: String,
    },
    /// No answer within the call's timeout.
    #[error("{addr}: no answer to {method} within {timeout:?}")]
    Timeout {
        /// `host:port`.
        addr: String,
        /// The RPC method.
        method: String,
        /// How long the call waited.
        timeout: Duration,
    },
    /// The server answered with an exception.
    #[error("{}", remote_text(.class, .message))]
    Remote {
        /// The exception's Java class.
        class: String,
        /// Its message (the first line of its stack trace).
        message: String,
        /// Whether the server said not to retry.
        do_not_retry: bool,
    },
    /// What answered is not an HBase server, or said something that does not parse.
    #[error("{0}")]
    Protocol(String),
    /// The cluster could not be found (ZooKeeper, the RPC registry, `hbase:meta`).
    #[error("{0}")]
    Bootstrap(String),
    /// A table that does not exist.
    #[error("table {0} does not exist")]
    TableNotFound(String),
    /// A request the client refuses before sending it.
    #[error("{0}")]
    BadRequest(String),
    /// Retries ran out.
    #[error("{last} (after {tries} tries in {elapsed:?})")]
    Exhausted {
        /// The last error.
        last: Box<Error>,
        /// Attempts made.
        tries: u32,
        /// Time spent.
        elapsed: Duration,
    },
}

fn remote_text(class: &str, message: &str) -> String {
    let short = class.rsplit('.').next().unwrap_or(class);
    let first = message.lines().next().unwrap_or("").trim();
    // A message often repeats the class name first.
    let first = first
        .strip_prefix(class)
        .map_or(first, |m| m.trim_start_matches(':').trim());
    if first.is_empty() {
        short.to_string()
    } else {
        format!("{short}: {first}")
    }
}

/// A client result.
pub type Result<T> = std::result::Result<T, Error>;

/// What the retrying caller does after an error.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Retry {
    /// Fail at once.
    Never,
    /// Try again at the same location, after the usual backoff.
    Same,
    /// Back off and try the same location again: the server is busy, or the region is
    /// opening there.
    Busy,
    /// The region is elsewhere: forget its location, find it again, retry.
    Relocate,
}

impl Error {
    /// The short class name of a remote exception.
    pub fn class(&self) -> Option<&str> {
        match self {
            Error::Remote { class, .. } => Some(class.rsplit('.').next().unwrap_or(class)),
            Error::Exhausted { last, .. } => last.class(),
            _ => None,
        }
    }

    /// How HBase's client treats this error.
    pub fn retry(&self) -> Retry {
        match self {
            // A broken or silent connection: the server may be gone, and its regions with it.
            Error::Connection { .. } | Error::Timeout { .. } => Retry::Relocate,
            Error::Remote {
                class, do_not_retry, ..
            } => classify(class.rsplit('.').next().unwrap_or(class), *do_not_retry),
            _ => Retry::Never,
        }
    }

    /// The kind of error, short, for counting errors by kind.
    pub fn kind(&self) -> String {
        match self {
            Error::Connection { .. } => "connection".into(),
            Error::Timeout { .. } => "timeout".into(),
            Error::Remote { .. } => self.class().unwrap_or("remote").to_string(),
            Error::Protocol(_) => "protocol".into(),
            Error::Auth { .. } => "auth".into(),
            Error::Bootstrap(_) => "bootstrap".into(),
            Error::TableNotFound(_) => "TableNotFoundException".into(),
            Error::BadRequest(_) => "bad_request".into(),
            Error::Exhausted { last, .. } => last.kind(),
        }
    }
}

/// HBase's classification of a remote exception by its class (`ClientExceptionsUtil`,
/// `ConnectionUtils`, the retrying callers).
pub fn classify(short_class: &str, do_not_retry: bool) -> Retry {
    match short_class {
        // The region is not (or no longer) where the cache says.
        "NotServingRegionException"
        | "RegionMovedException"
        | "RegionServerStoppedException"
        | "RegionServerAbortedException"
        | "ServerNotRunningYetException"
        | "ConnectionClosingException"
        | "ConnectionClosedException"
        | "FailedServerException"
        | "CallTimeoutException"
        | "StoppedRpcClientException" => Retry::Relocate,
        // Overloaded, or the region is opening where the cache says: back off, the location
        // is right (`ClientExceptionsUtil.isMetaClearingException` clears the cached location
        // of these special exceptions only for RegionMoved and NotServingRegion).
        "RegionOpeningException"
        | "RegionTooBusyException"
        | "CallQueueTooBigException"
        | "ServerTooBusyException"
        | "RpcThrottlingException"
        | "PleaseHoldException"
        | "MultiActionResultTooLarge"
        | "RetryImmediatelyException"
        | "CallDroppedException" => Retry::Busy,
        // A scanner the server no longer has is restarted by the scan, not retried as is.
        "UnknownScannerException" | "OutOfOrderScannerNextException" | "ScannerResetException" => Retry::Never,
        _ if do_not_retry => Retry::Never,
        "DoNotRetryIOException"
        | "TableNotFoundException"
        | "TableNotEnabledException"
        | "TableNotDisabledException"
        | "TableExistsException"
        | "NamespaceExistException"
        | "NamespaceNotFoundException"
        | "NoSuchColumnFamilyException"
        | "FailedSanityCheckException"
        | "InvalidFamilyOperationException"
        | "AccessDeniedException"
        | "UnsupportedOperationException"
        | "IllegalArgumentException"
        | "FatalConnectionException"
        | "UnknownProtocolException"
        | "CorruptHFileException"
        | "LeaseException"
        | "WrongRowIOException" => Retry::Never,
        _ => Retry::Same,
    }
}

/// HBase's backoff multipliers (`HConstants.RETRY_BACKOFF`), applied to the pause.
pub const RETRY_BACKOFF: [u32; 13] = [1, 2, 3, 5, 10, 20, 40, 100, 100, 100, 100, 200, 200];

/// The pause before retry `tries` (from 0), as `ConnectionUtils.getPauseTime` computes it
/// without its jitter.
pub fn pause(base: Duration, tries: u32) -> Duration {
    let i = (tries as usize).min(RETRY_BACKOFF.len() - 1);
    base * RETRY_BACKOFF[i]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn remote(class: &str, dnr: bool) -> Error {
        Error::Remote {
            class: format!("org.apache.hadoop.hbase.{class}"),
            message: format!("org.apache.hadoop.hbase.{class}: region x is not online\n\tat y"),
            do_not_retry: dnr,
        }
    }

    #[test]
    fn exceptions_classify_as_hbase_does() {
        assert_eq!(remote("NotServingRegionException", false).retry(), Retry::Relocate);
        assert_eq!(
            remote("exceptions.RegionMovedException", false).retry(),
            Retry::Relocate
        );
        assert_eq!(remote("RegionTooBusyException", false).retry(), Retry::Busy);
        assert_eq!(remote("CallQueueTooBigException", false).retry(), Retry::Busy);
        assert_eq!(remote("exceptions.RegionOpeningException", false).retry(), Retry::Busy);
        assert_eq!(remote("TableNotFoundException", true).retry(), Retry::Never);
        assert_eq!(
            remote("regionserver.NoSuchColumnFamilyException", true).retry(),
            Retry::Never
        );
        assert_eq!(remote("SomethingNew", true).retry(), Retry::Never);
        assert_eq!(remote("SomethingNew", false).retry(), Retry::Same);
        assert_eq!(
            remote("NotServingRegionException", false).to_string(),
            "NotServingRegionException: region x is not online"
        );
        assert_eq!(remote("RegionTooBusyException", false).kind(), "RegionTooBusyException");
    }

    #[test]
    fn pauses_follow_hbases_backoff() {
        let base = Duration::from_millis(100);
        assert_eq!(pause(base, 0), base);
        assert_eq!(pause(base, 4), base * 10);
        assert_eq!(pause(base, 99), base * 200);
    }
}
