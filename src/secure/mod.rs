//! What secured Thrift gateways ask of a client: Kerberos, as SASL's GSSAPI mechanism on
//! the socket (RFC 4752) and as SPNEGO tokens over HTTP, through the system's GSSAPI
//! library (MIT Kerberos: the ticket cache `kinit` fills, or a keytab named by
//! `KRB5_CLIENT_KTNAME`); and the TLS roots an HTTPS gateway's certificate is checked
//! against.
//!
//! Kerberos is the cargo feature `kerberos` (it links the system's libgssapi_krb5 and
//! builds its bindings with libclang); without it, a URL that asks for it is refused with
//! one line that says how to build it.

#[cfg(feature = "kerberos")]
mod kerberos;

use crate::wire::sasl::Mechanism;

/// Whether this build speaks Kerberos.
pub const KERBEROS: bool = cfg!(feature = "kerberos");

/// What a URL asking for Kerberos is told by a build without it.
pub const NO_KERBEROS: &str = "this tallrow was built without Kerberos: build it with `cargo build --release --features kerberos` (needs the packages libkrb5-dev and libclang-dev)";

/// SASL's quality of protection, as HBase's `hbase.thrift.security.qop` names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Qop {
    /// Authentication only.
    Auth,
    /// Authentication and integrity on every frame.
    AuthInt,
    /// Authentication, integrity and privacy (encryption) on every frame.
    AuthConf,
}

named_values!(Qop, "qop");

impl Qop {
    /// Its bit in RFC 4752's security-layer mask.
    pub fn layer_bit(self) -> u8 {
        match self {
            Qop::Auth => 1,
            Qop::AuthInt => 2,
            Qop::AuthConf => 4,
        }
    }

    /// The strongest protection a security-layer mask offers.
    pub fn strongest(mask: u8) -> Option<Qop> {
        [Qop::AuthConf, Qop::AuthInt, Qop::Auth]
            .into_iter()
            .find(|q| mask & q.layer_bit() != 0)
    }

    /// The protections a security-layer mask offers, by name.
    pub fn offered(mask: u8) -> String {
        let names: Vec<String> = [Qop::Auth, Qop::AuthInt, Qop::AuthConf]
            .into_iter()
            .filter(|q| mask & q.layer_bit() != 0)
            .map(|q| q.to_string())
            .collect();
        if names.is_empty() {
            "none".to_string()
        } else {
            names.join(", ")
        }
    }
}

/// SASL's GSSAPI mechanism towards `service/host`, asking for `qop` (without one, the
/// strongest protection the server offers).
pub fn gssapi(service: &str, host: &str, qop: Option<Qop>) -> Result<Box<dyn Mechanism>, String> {
    #[cfg(feature = "kerberos")]
    {
        kerberos::Gssapi::new(service, host, qop).map(|m| Box::new(m) as Box<dyn Mechanism>)
    }
    #[cfg(not(feature = "kerberos"))]
    {
        let _ = (service, host, qop);
        Err(NO_KERBEROS.to_string())
    }
}

/// Keeps the ticket cache's ticket renewed while this process lives (see
/// `kerberos::keep_renewed`); called by whatever opens a Kerberos connection.
pub fn keep_renewed() {
    #[cfg(feature = "kerberos")]
    kerberos::keep_renewed();
}

/// Ends Kerberos work in the background (the ticket renewal) before the process exits; the
/// binary calls it last.
pub fn quiesce() {
    #[cfg(feature = "kerberos")]
    kerberos::quiesce();
}

/// Why the ticket cache's ticket is no longer valid, once the renewal (see [`keep_renewed`])
/// found it expired with nothing to renew it: the run stops there, as it would on its next
/// new connection.
pub fn expired() -> Option<&'static str> {
    #[cfg(feature = "kerberos")]
    {
        kerberos::expired()
    }
    #[cfg(not(feature = "kerberos"))]
    {
        None
    }
}

/// A fresh SPNEGO token for `service/host`, base64, for an `Authorization: Negotiate`
/// header (a server may refuse a token it has seen, so each request gets its own).
pub fn negotiate(service: &str, host: &str) -> Result<String, String> {
    #[cfg(feature = "kerberos")]
    {
        kerberos::negotiate(service, host)
    }
    #[cfg(not(feature = "kerberos"))]
    {
        let _ = (service, host);
        Err(NO_KERBEROS.to_string())
    }
}

/// A one-line account of a GSSAPI failure towards `target` (`service/host`): the causes a
/// user meets first get their remedy; anything else the library's own words.
pub fn explain(target: &str, message: &str) -> String {
    let flat = message.split_whitespace().collect::<Vec<_>>().join(" ");
    let lower = flat.to_lowercase();
    let cache = std::env::var("KRB5CCNAME").unwrap_or_else(|_| "the default ticket cache".to_string());
    if lower.contains("no kerberos credentials available")
        || lower.contains("no credentials cache found")
        || lower.contains("credentials cache file")
        || lower.contains("no credentials were supplied")
    {
        format!(
            "no Kerberos ticket in {cache}: run kinit (or point KRB5_CLIENT_KTNAME at a keytab); GSSAPI says: {flat}"
        )
    } else if lower.contains("not found in kerberos database") || lower.contains("server not found") {
        format!(
            "the KDC knows no principal for {target}: check service= and the URL's host, which name the server's principal; GSSAPI says: {flat}"
        )
    } else if lower.contains("clock skew") {
        format!(
            "the clocks of this machine and the KDC or server differ by more than Kerberos allows (5 minutes by default): sync them; GSSAPI says: {flat}"
        )
    } else if lower.contains("ticket expired")
        || lower.contains("credentials have expired")
        || lower.contains("credential has expired")
    {
        format!(
            "the Kerberos ticket in {cache} expired: renew it (kinit -R) or get a new one (kinit), or point KRB5_CLIENT_KTNAME at a keytab; GSSAPI says: {flat}"
        )
    } else if lower.contains("cannot contact any kdc") || lower.contains("cannot find kdc") {
        format!("no KDC answers for the realm (KRB5_CONFIG names it); GSSAPI says: {flat}")
    } else {
        format!("Kerberos towards {target}: {flat}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn qop_names_are_hbase_s() {
        assert_eq!("auth-int".parse::<Qop>().unwrap(), Qop::AuthInt);
        assert_eq!(Qop::AuthConf.to_string(), "auth-conf");
        assert_eq!(Qop::offered(4), "auth-conf");
        assert_eq!(Qop::offered(7), "auth, auth-int, auth-conf");
        assert_eq!(Qop::strongest(3), Some(Qop::AuthInt));
        assert_eq!(Qop::strongest(0), None);
        assert!("privacy".parse::<Qop>().unwrap_err().contains("auth-conf"));
    }

    #[test]
    fn the_first_failures_are_named_on_one_line() {
        let empty = explain(
            "hbase/localhost",
            "No credentials were supplied, or the credentials were unavailable or inaccessible\n(No Kerberos credentials available (default cache: FILE:/tmp/x))",
        );
        assert!(empty.starts_with("no Kerberos ticket in "), "{empty}");
        assert!(!empty.contains('\n'));
        let unknown = explain(
            "nosuch/localhost",
            "Unspecified GSS failure. (Server nosuch/localhost@R not found in Kerberos database)",
        );
        assert!(unknown.contains("knows no principal for nosuch/localhost"), "{unknown}");
        assert!(explain("x", "(Clock skew too great)").contains("clocks"));
        assert!(explain("x", "(Ticket expired)").contains("kinit -R"));
        assert_eq!(explain("x", "odd"), "Kerberos towards x: odd");
    }
}
