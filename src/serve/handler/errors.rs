//! Errors as HBase's Thrift server words them: the Java exception a store error matches,
//! and the call being served, which some of HBase's answers name.

use super::*;

pub(super) fn io_error(message: impl Into<String>) -> thrift::Error {
    thrift::Error::User(Box::new(IOError::new(message.into(), false)))
}

pub(super) fn illegal(message: impl Into<String>) -> thrift::Error {
    thrift::Error::User(Box::new(IllegalArgument::new(message.into())))
}

/// A store error as HBase's Thrift server reports the matching Java exception.
pub fn store_error(e: store::Error) -> thrift::Error {
    match e {
        store::Error::TableNotFound(t) => io_error(format!("{TABLE_NOT_FOUND}: {t}")),
        store::Error::TableExists(_) => {
            thrift::Error::User(Box::new(AlreadyExists::new("table name already in use".to_string())))
        }
        store::Error::FamilyNotFound { table, family } => io_error(format!(
            "{NO_SUCH_FAMILY}: Column family {family} does not exist in table {table}"
        )),
        store::Error::BadArgument(m) => illegal(m),
        // serve's store behind it refused serve's own credentials: an IOError, as HBase's
        // AccessDeniedException reaches a Thrift client.
        store::Error::Io(m) | store::Error::Denied(m) => io_error(m),
        store::Error::Unavailable(m) => thrift::Error::User(Box::new(IOError::new(m, true))),
    }
}

thread_local! {
    /// The call this connection's thread is serving, for errors that HBase words by it.
    static CALL: std::cell::RefCell<String> = const { std::cell::RefCell::new(String::new()) };
}

/// Notes the call about to be served on this thread (one thread serves one connection).
pub fn serving(method: &str) {
    CALL.with(|c| {
        let mut c = c.borrow_mut();
        c.clear();
        c.push_str(method);
    });
}

/// A table name HBase refuses: `TableName.valueOf` throws IllegalArgumentException. The
/// calls that catch it answer IllegalArgument; elsewhere it escapes the handler and the
/// Thrift server answers "Internal error processing CALL".
pub(super) fn bad_table_name(message: String) -> thrift::Error {
    CALL.with(|c| {
        let call = c.borrow();
        match call.as_str() {
            "mutateRow" | "mutateRowTs" | "mutateRows" | "mutateRowsTs" | "checkAndPut" => illegal(message),
            _ => thrift::Error::Application(thrift::ApplicationError::new(
                thrift::ApplicationErrorKind::InternalError,
                format!("Internal error processing {call}"),
            )),
        }
    })
}

/// What a client gets when an unchecked exception escapes HBase's handler.
pub(super) fn internal_error() -> thrift::Error {
    CALL.with(|c| {
        thrift::Error::Application(thrift::ApplicationError::new(
            thrift::ApplicationErrorKind::InternalError,
            format!("Internal error processing {}", c.borrow()),
        ))
    })
}
