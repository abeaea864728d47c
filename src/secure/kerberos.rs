//! The GSSAPI calls: RFC 4752's SASL mechanism and SPNEGO tokens, over libgssapi.

use super::{Qop, explain};
use crate::wire::sasl::{Layer, Mechanism};
use libgssapi::context::{ClientCtx, CtxFlags, SecurityContext};
use libgssapi::name::Name;
use libgssapi::oid::{GSS_MECH_KRB5, GSS_MECH_SPNEGO, GSS_NT_HOSTBASED_SERVICE};
use std::io;

/// The largest frame this client takes, offered to the server (RFC 4752: 3 bytes).
const MAX_RECEIVE: [u8; 3] = [0xff, 0xff, 0xff];

fn target(service: &str, host: &str) -> Result<Name, String> {
    Name::new(format!("{service}@{host}").as_bytes(), Some(GSS_NT_HOSTBASED_SERVICE))
        .map_err(|e| explain(&format!("{service}/{host}"), &e.to_string()))
}

enum State {
    /// Establishing the Kerberos context.
    Context,
    /// Context established: next comes the server's security-layer offer.
    Layer,
    /// The layer is chosen.
    Done,
}

/// SASL GSSAPI, client side.
pub(super) struct Gssapi {
    ctx: ClientCtx,
    /// As asked; once the layer is chosen, as chosen.
    qop: Option<Qop>,
    state: State,
    who: String,
}

impl Gssapi {
    pub(super) fn new(service: &str, host: &str, qop: Option<Qop>) -> Result<Gssapi, String> {
        let flags = CtxFlags::GSS_C_MUTUAL_FLAG | CtxFlags::GSS_C_INTEG_FLAG | CtxFlags::GSS_C_CONF_FLAG;
        Ok(Gssapi {
            ctx: ClientCtx::new(None, target(service, host)?, flags, Some(GSS_MECH_KRB5)),
            qop,
            state: State::Context,
            who: format!("{service}/{host}"),
        })
    }

    fn failed(&self, e: libgssapi::error::Error) -> String {
        explain(&self.who, &e.to_string())
    }
}

impl Mechanism for Gssapi {
    fn name(&self) -> &'static str {
        "GSSAPI"
    }

    fn initial(&mut self) -> Result<Vec<u8>, String> {
        let token = self.ctx.step(None, None).map_err(|e| self.failed(e))?;
        if self.ctx.is_complete() {
            self.state = State::Layer;
        }
        Ok(token.map(|t| t.to_vec()).unwrap_or_default())
    }

    fn step(&mut self, challenge: &[u8]) -> Result<Vec<u8>, String> {
        match self.state {
            State::Context => {
                let token = self.ctx.step(Some(challenge), None).map_err(|e| self.failed(e))?;
                if self.ctx.is_complete() {
                    self.state = State::Layer;
                }
                Ok(token.map(|t| t.to_vec()).unwrap_or_default())
            }
            State::Layer => {
                let offer = self.ctx.unwrap(challenge).map_err(|e| self.failed(e))?;
                if offer.len() != 4 {
                    return Err(format!(
                        "the server's SASL security-layer offer is {} bytes, not 4",
                        offer.len()
                    ));
                }
                let mask = offer[0];
                let chosen = match self.qop {
                    Some(q) if mask & q.layer_bit() != 0 => q,
                    Some(q) => {
                        return Err(format!(
                            "quality of protection mismatch: the server offers qop {} and the URL asks qop={q} (the server's hbase.thrift.security.qop, or hbase.rpc.protection on api=native)",
                            Qop::offered(mask)
                        ));
                    }
                    None => {
                        Qop::strongest(mask).ok_or_else(|| "the server offers no SASL security layer".to_string())?
                    }
                };
                self.qop = Some(chosen);
                // No authorization id: the server then takes the authenticated principal.
                let answer = [chosen.layer_bit(), MAX_RECEIVE[0], MAX_RECEIVE[1], MAX_RECEIVE[2]];
                let wrapped = self.ctx.wrap(false, &answer).map_err(|e| self.failed(e))?;
                self.state = State::Done;
                Ok(wrapped.to_vec())
            }
            State::Done => Err("SASL GSSAPI: a challenge after the exchange ended".to_string()),
        }
    }

    fn complete(&self) -> bool {
        matches!(self.state, State::Done)
    }

    fn layer(self: Box<Self>) -> Option<Box<dyn Layer>> {
        match self.qop {
            None | Some(Qop::Auth) => None,
            Some(q) => Some(Box::new(GssLayer {
                encrypt: q == Qop::AuthConf,
                ctx: self.ctx,
            })),
        }
    }
}

/// Integrity (`auth-int`) or privacy (`auth-conf`) through `gss_wrap`/`gss_unwrap`.
struct GssLayer {
    ctx: ClientCtx,
    encrypt: bool,
}

fn layer_error(e: libgssapi::error::Error) -> io::Error {
    let line = e.to_string().split_whitespace().collect::<Vec<_>>().join(" ");
    io::Error::new(io::ErrorKind::InvalidData, format!("SASL security layer: {line}"))
}

impl Layer for GssLayer {
    fn wrap(&mut self, data: &[u8]) -> io::Result<Vec<u8>> {
        self.ctx
            .wrap(self.encrypt, data)
            .map(|b| b.to_vec())
            .map_err(layer_error)
    }

    fn unwrap(&mut self, data: &[u8]) -> io::Result<Vec<u8>> {
        self.ctx.unwrap(data).map(|b| b.to_vec()).map_err(layer_error)
    }
}

/// A SPNEGO token for `service/host`, base64.
pub(super) fn negotiate(service: &str, host: &str) -> Result<String, String> {
    use base64::Engine;
    let who = format!("{service}/{host}");
    let mut ctx = ClientCtx::new(None, target(service, host)?, CtxFlags::empty(), Some(GSS_MECH_SPNEGO));
    let token = ctx
        .step(None, None)
        .map_err(|e| explain(&who, &e.to_string()))?
        .ok_or_else(|| format!("Kerberos towards {who}: GSSAPI gave no SPNEGO token"))?;
    Ok(base64::engine::general_purpose::STANDARD.encode(&*token))
}

/// Renew when less than this is left of the cache's ticket.
const RENEW_BEFORE: std::time::Duration = std::time::Duration::from_secs(60);
/// How often the ticket's time left is looked at.
const RENEW_CHECK: std::time::Duration = std::time::Duration::from_secs(5);

/// Keeps a renewable ticket in the cache alive while this process lives, as `krenew`
/// does: every few seconds, when less than a minute is left, `kinit -R`. Each new
/// connection (and each HTTP request) reads the cache anew, so it sees the renewed ticket;
/// with `KRB5_CLIENT_KTNAME` set, MIT's GSSAPI gets new tickets from the keytab itself. A
/// ticket that cannot be renewed expires, and the next authentication fails with one line;
/// [`expired`] says so too, for connections that authenticated before the expiry and would
/// otherwise go on as if nothing happened.
pub(super) fn keep_renewed() {
    static STARTED: std::sync::Once = std::sync::Once::new();
    STARTED.call_once(|| {
        let _ = std::thread::Builder::new().name("krb5-renew".into()).spawn(|| {
            loop {
                std::thread::sleep(RENEW_CHECK);
                renew_if_due();
            }
        });
    });
}

/// Why the cache's ticket can no longer be used, once the renewal found it expired.
static EXPIRED: std::sync::OnceLock<String> = std::sync::OnceLock::new();

/// Why the ticket in the cache expired, once it has and nothing renewed it.
pub(super) fn expired() -> Option<&'static str> {
    EXPIRED.get().map(String::as_str)
}

/// Held by the renewal while it is inside GSSAPI, and for good once the process ends.
static RENEWAL: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// Stops the renewal for the rest of the process: MIT's library destroys its locks as the
/// process exits, and a renewal inside it then would abort the process.
pub(super) fn quiesce() {
    std::mem::forget(RENEWAL.lock().unwrap_or_else(|p| p.into_inner()));
}

fn renew_if_due() {
    use libgssapi::credential::{Cred, CredUsage};
    if std::env::var_os("KRB5_CLIENT_KTNAME").is_some() {
        return;
    }
    let _inside = RENEWAL.lock().unwrap_or_else(|p| p.into_inner());
    match Cred::acquire(None, None, CredUsage::Initiate, None).and_then(|c| c.lifetime()) {
        Ok(left) if left.is_zero() => {
            let _ = EXPIRED.set(explain("the ticket cache", "Ticket expired"));
        }
        Ok(left) if left <= RENEW_BEFORE => {
            let _ = std::process::Command::new("kinit")
                .arg("-R")
                .stdin(std::process::Stdio::null())
                .stdout(std::process::Stdio::null())
                .stderr(std::process::Stdio::null())
                .status();
        }
        Ok(_) => {}
        Err(e) => {
            let why = explain("the ticket cache", &e.to_string());
            if why.starts_with("the Kerberos ticket in ") {
                let _ = EXPIRED.set(why);
            }
        }
    }
}
