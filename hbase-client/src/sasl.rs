//! Kerberos on HBase's own RPC: the SASL exchange that follows a preamble whose auth byte
//! is 81 (`AuthMethod.KERBEROS`), as `HBaseSaslRpcClient` and the server's
//! `ServerRpcConnection` speak it, and the security layer that then carries every byte.
//!
//! - The client speaks first: each token as a 4-byte big-endian length and its bytes (an
//!   empty token as a length of 0), its initial response right after the preamble.
//! - The server answers each with a 4-byte status: 0, then a challenge as a length and its
//!   bytes; 1, then an error as two Hadoop `WritableUtils` strings (the exception's class and
//!   message). A server that runs simple authentication only answers 0 and -88
//!   (`SaslUtil.SWITCH_TO_SIMPLE_AUTH`).
//! - The server says nothing once the client's last token is sent: the `ConnectionHeader`
//!   follows at once.
//! - With a security layer (QOP integrity or privacy), every later byte, the
//!   `ConnectionHeader` included, goes as frames of a 4-byte length and the wrapped bytes,
//!   and the unwrapped bytes of the server's frames are one stream of replies. With
//!   authentication alone there is no framing at all.
//!
//! The mechanism itself (GSSAPI) is the caller's: this crate links no Kerberos library.

use crate::error::{Error, Result};
use std::io::{self, Read, Write};
use std::sync::{Arc, Mutex};

/// The preamble's auth byte for Kerberos (`AuthMethod.KERBEROS`).
pub const AUTH_KERBEROS: u8 = 81;
/// A server's answer when it runs simple authentication only.
const SWITCH_TO_SIMPLE_AUTH: i32 = -88;
/// The longest challenge taken (as the Netty client's `SaslChallengeDecoder`).
const MAX_CHALLENGE: usize = 1 << 20;
/// The longest error text taken from a server.
const MAX_ERROR_TEXT: usize = 64 << 10;

/// A SASL mechanism, client side.
pub trait Mechanism: Send {
    /// Its name (`GSSAPI`).
    fn name(&self) -> &'static str;
    /// The initial response.
    fn initial(&mut self) -> std::result::Result<Vec<u8>, String>;
    /// The answer to a server's challenge.
    fn step(&mut self, challenge: &[u8]) -> std::result::Result<Vec<u8>, String>;
    /// Whether the exchange is done on this side.
    fn complete(&self) -> bool;
    /// The security layer negotiated, once complete: `None` when it is authentication only.
    fn layer(self: Box<Self>) -> Option<Box<dyn Layer>>;
}

/// A negotiated security layer: integrity or privacy on every frame.
pub trait Layer: Send {
    /// Protects one frame's bytes.
    fn wrap(&mut self, data: &[u8]) -> io::Result<Vec<u8>>;
    /// Checks (and decrypts) one frame's bytes.
    fn unwrap(&mut self, data: &[u8]) -> io::Result<Vec<u8>>;
}

/// Makes the mechanism of each new connection.
pub trait Authenticator: Send + Sync + std::fmt::Debug {
    /// The mechanism for a connection to `addr` (`host:port`), whose host names the server's
    /// principal (`hbase/_HOST`).
    fn mechanism(&self, addr: &str) -> std::result::Result<Box<dyn Mechanism>, String>;
}

/// A negotiated layer shared by a connection's two halves.
pub type Shared = Arc<Mutex<Box<dyn Layer>>>;

fn auth_error(addr: &str, why: String) -> Error {
    Error::Auth {
        addr: addr.to_string(),
        why,
    }
}

fn send(w: &mut impl Write, token: &[u8]) -> io::Result<()> {
    let mut m = Vec::with_capacity(4 + token.len());
    m.extend_from_slice(&(token.len() as u32).to_be_bytes());
    m.extend_from_slice(token);
    w.write_all(&m)
}

fn read_i32(r: &mut impl Read) -> io::Result<i32> {
    let mut b = [0u8; 4];
    r.read_exact(&mut b)?;
    Ok(i32::from_be_bytes(b))
}

/// A Hadoop `WritableUtils` string: a length (-1 for none) and UTF-8 bytes.
fn read_string(r: &mut impl Read) -> io::Result<String> {
    let n = read_i32(r)?;
    if n < 0 {
        return Ok(String::new());
    }
    let n = n as usize;
    if n > MAX_ERROR_TEXT {
        return Err(io::Error::new(
            io::ErrorKind::InvalidData,
            format!("an error text of {n} bytes"),
        ));
    }
    let mut b = vec![0u8; n];
    r.read_exact(&mut b)?;
    Ok(String::from_utf8_lossy(&b).into_owned())
}

/// The server's answer to a token: its challenge, or why it will not go on.
fn receive(r: &mut impl Read, addr: &str) -> Result<Vec<u8>> {
    let io = |e: io::Error| {
        auth_error(
            addr,
            match e.kind() {
                io::ErrorKind::UnexpectedEof => {
                    "the server closed the connection during SASL negotiation (Kerberos refused, or not HBase's RPC)"
                        .into()
                }
                io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut => {
                    "no answer to SASL negotiation within the connect timeout".into()
                }
                _ => format!("SASL negotiation: {e}"),
            },
        )
    };
    let status = read_i32(r).map_err(io)?;
    match status {
        0 => {}
        1 => {
            let class = read_string(r).map_err(io)?;
            let message = read_string(r).map_err(io)?;
            let short = class.rsplit('.').next().unwrap_or(&class);
            let first = message.lines().next().unwrap_or("").trim();
            return Err(auth_error(
                addr,
                format!("the server refused SASL GSSAPI: {short}: {first}"),
            ));
        }
        s => {
            return Err(Error::Protocol(format!(
                "{addr}: answered {:02x?} where a SASL status belongs: not HBase's RPC with Kerberos",
                s.to_be_bytes()
            )));
        }
    }
    let len = read_i32(r).map_err(io)?;
    if len == SWITCH_TO_SIMPLE_AUTH {
        return Err(auth_error(
            addr,
            "the server runs simple authentication, not Kerberos: leave sasl= out of the URL".into(),
        ));
    }
    if len < 0 || len as usize > MAX_CHALLENGE {
        return Err(Error::Protocol(format!(
            "{addr}: a SASL challenge of {len} bytes: not HBase's RPC with Kerberos"
        )));
    }
    let mut challenge = vec![0u8; len as usize];
    r.read_exact(&mut challenge).map_err(io)?;
    Ok(challenge)
}

/// Runs `mech`'s exchange on `stream`, right after the preamble: the security layer it
/// settles on, `None` for authentication alone.
pub fn negotiate<S: Read + Write>(
    stream: &mut S,
    mut mech: Box<dyn Mechanism>,
    addr: &str,
) -> Result<Option<Box<dyn Layer>>> {
    let written = |e: io::Error| auth_error(addr, format!("SASL negotiation: {e}"));
    let initial = mech.initial().map_err(|m| auth_error(addr, m))?;
    send(stream, &initial).map_err(written)?;
    while !mech.complete() {
        let challenge = receive(stream, addr)?;
        let answer = mech.step(&challenge).map_err(|m| auth_error(addr, m))?;
        // An empty answer goes too: the server waits for it.
        send(stream, &answer).map_err(written)?;
    }
    Ok(mech.layer())
}

/// The writing half of a connection with a layer: every write is one frame.
pub struct FrameWriter<W> {
    inner: W,
    layer: Option<Shared>,
}

impl<W: Write> FrameWriter<W> {
    /// Frames to `inner`, wrapped by `layer` when there is one.
    pub fn new(inner: W, layer: Option<Shared>) -> Self {
        FrameWriter { inner, layer }
    }
}

impl<W: Write> Write for FrameWriter<W> {
    fn write(&mut self, data: &[u8]) -> io::Result<usize> {
        if data.is_empty() {
            return Ok(0);
        }
        let wrapped;
        let body = match &self.layer {
            Some(l) => {
                wrapped = l.lock().unwrap_or_else(|p| p.into_inner()).wrap(data)?;
                &wrapped[..]
            }
            None => data,
        };
        let mut frame = Vec::with_capacity(4 + body.len());
        frame.extend_from_slice(&(body.len() as u32).to_be_bytes());
        frame.extend_from_slice(body);
        self.inner.write_all(&frame)?;
        Ok(data.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        self.inner.flush()
    }
}

/// The reading half: frames undone (and unwrapped), each at most `limit` bytes.
///
/// A read that fails part way through a frame (a socket's read timeout) loses nothing: the
/// frame's bytes so far are kept, and the next read goes on from them.
pub struct FrameReader<R> {
    inner: R,
    layer: Option<Shared>,
    frame: Vec<u8>,
    at: usize,
    limit: usize,
    /// The next frame's length prefix, and how much of it has come.
    head: [u8; 4],
    head_got: usize,
    /// The next frame's bytes so far.
    raw: Vec<u8>,
}

impl<R: Read> FrameReader<R> {
    /// Frames from `inner`, unwrapped by `layer` when there is one.
    pub fn new(inner: R, layer: Option<Shared>, limit: usize) -> Self {
        FrameReader {
            inner,
            layer,
            frame: Vec::new(),
            at: 0,
            limit,
            head: [0; 4],
            head_got: 0,
            raw: Vec::new(),
        }
    }

    /// Bytes of the current frame not yet read.
    pub fn buffered(&self) -> usize {
        self.frame.len() - self.at
    }

    fn next_frame(&mut self) -> io::Result<()> {
        while self.head_got < 4 {
            match self.inner.read(&mut self.head[self.head_got..])? {
                0 => return Err(io::ErrorKind::UnexpectedEof.into()),
                n => self.head_got += n,
            }
        }
        let len = u32::from_be_bytes(self.head) as usize;
        if len > self.limit {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                format!("SASL frame of {len} bytes exceeds the limit of {} bytes", self.limit),
            ));
        }
        // Read as it arrives: a claimed length is not allocated up front. What a failed read
        // had read stays in `raw` (`read_to_end` keeps it).
        let want = (len - self.raw.len()) as u64;
        (&mut self.inner).take(want).read_to_end(&mut self.raw)?;
        if self.raw.len() < len {
            return Err(io::ErrorKind::UnexpectedEof.into());
        }
        self.head_got = 0;
        let raw = std::mem::take(&mut self.raw);
        self.frame = match &self.layer {
            Some(l) => l.lock().unwrap_or_else(|p| p.into_inner()).unwrap(&raw)?,
            None => raw,
        };
        self.at = 0;
        Ok(())
    }
}

impl<R: Read> Read for FrameReader<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if buf.is_empty() {
            return Ok(0);
        }
        while self.at == self.frame.len() {
            self.next_frame()?;
        }
        let n = buf.len().min(self.frame.len() - self.at);
        buf[..n].copy_from_slice(&self.frame[self.at..self.at + n]);
        self.at += n;
        Ok(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A mechanism of `steps` challenges whose layer XORs every byte.
    struct Toy {
        steps: u8,
        answered: u8,
    }

    struct Xor;

    impl Layer for Xor {
        fn wrap(&mut self, data: &[u8]) -> io::Result<Vec<u8>> {
            Ok(data.iter().map(|b| b ^ 0x5a).collect())
        }
        fn unwrap(&mut self, data: &[u8]) -> io::Result<Vec<u8>> {
            self.wrap(data)
        }
    }

    impl Mechanism for Toy {
        fn name(&self) -> &'static str {
            "TOY"
        }
        fn initial(&mut self) -> std::result::Result<Vec<u8>, String> {
            Ok(b"hello".to_vec())
        }
        fn step(&mut self, challenge: &[u8]) -> std::result::Result<Vec<u8>, String> {
            self.answered += 1;
            // The second answer is empty, as GSSAPI's once its context is established.
            Ok(if self.answered == 2 {
                Vec::new()
            } else {
                [b"re:", challenge].concat()
            })
        }
        fn complete(&self) -> bool {
            self.answered == self.steps
        }
        fn layer(self: Box<Self>) -> Option<Box<dyn Layer>> {
            Some(Box::new(Xor))
        }
    }

    /// A duplex of scripted input and captured output.
    struct Duplex {
        input: io::Cursor<Vec<u8>>,
        output: Vec<u8>,
    }

    impl Read for Duplex {
        fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
            self.input.read(buf)
        }
    }

    impl Write for Duplex {
        fn write(&mut self, data: &[u8]) -> io::Result<usize> {
            self.output.extend_from_slice(data);
            Ok(data.len())
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    fn token(t: &[u8]) -> Vec<u8> {
        let mut m = Vec::new();
        send(&mut m, t).unwrap();
        m
    }

    fn challenge(t: &[u8]) -> Vec<u8> {
        [&0i32.to_be_bytes()[..], &token(t)].concat()
    }

    fn string(s: &str) -> Vec<u8> {
        [&(s.len() as i32).to_be_bytes()[..], s.as_bytes()].concat()
    }

    fn run(server: Vec<u8>, steps: u8) -> (Result<Option<Box<dyn Layer>>>, Vec<u8>) {
        let mut d = Duplex {
            input: io::Cursor::new(server),
            output: Vec::new(),
        };
        let r = negotiate(&mut d, Box::new(Toy { steps, answered: 0 }), "rs1:16020");
        (r, d.output)
    }

    #[test]
    fn negotiates_as_hbase_sasl_rpc_client_does() {
        // AP-REQ, AP-REP, an empty token, the layer offer and its answer; nothing after.
        let (r, out) = run([challenge(b"c1"), challenge(b"c2"), challenge(b"c3")].concat(), 3);
        assert!(r.unwrap().is_some());
        assert_eq!(
            out,
            [token(b"hello"), token(b"re:c1"), token(b""), token(b"re:c3")].concat()
        );
    }

    #[test]
    fn a_server_error_is_its_class_and_first_line() {
        let refusal = [
            &1i32.to_be_bytes()[..],
            &string("javax.security.sasl.SaslException"),
            &string("GSS initiate failed\n\tat somewhere"),
        ]
        .concat();
        let (r, _) = run(refusal, 3);
        let e = r.err().unwrap().to_string();
        assert_eq!(
            e,
            "rs1:16020: the server refused SASL GSSAPI: SaslException: GSS initiate failed"
        );
    }

    #[test]
    fn a_simple_server_says_so() {
        let (r, _) = run([0i32.to_be_bytes(), SWITCH_TO_SIMPLE_AUTH.to_be_bytes()].concat(), 3);
        let e = r.err().unwrap().to_string();
        assert!(e.contains("runs simple authentication"), "{e}");
    }

    #[test]
    fn what_is_not_sasl_is_named_and_nothing_huge_is_allocated() {
        // A plain RPC reply (a length, then protobuf) where a status belongs.
        let (r, _) = run(vec![0, 0, 0, 9, 8, 1], 3);
        assert!(r.err().unwrap().to_string().contains("not HBase's RPC with Kerberos"));
        let (r, _) = run([0i32.to_be_bytes(), i32::MAX.to_be_bytes()].concat(), 3);
        assert!(r.err().unwrap().to_string().contains("a SASL challenge of"));
        let (r, _) = run([&1i32.to_be_bytes()[..], &i32::MAX.to_be_bytes()].concat(), 3);
        assert!(r.err().unwrap().to_string().contains("error text of"));
        let (r, _) = run(challenge(b"c1")[..6].to_vec(), 3);
        assert!(r.err().unwrap().to_string().contains("closed the connection"));
    }

    #[test]
    fn frames_round_trip_through_the_layer() {
        let layer: Shared = Arc::new(Mutex::new(Box::new(Xor)));
        let mut w = FrameWriter::new(Vec::new(), Some(layer.clone()));
        w.write_all(b"first message").unwrap();
        w.write_all(b"second").unwrap();
        let wire = w.inner.clone();
        assert_eq!(&wire[..4], &13u32.to_be_bytes());
        assert_ne!(&wire[4..17], b"first message");
        let mut r = FrameReader::new(&wire[..], Some(layer), 1 << 20);
        let mut back = Vec::new();
        r.read_to_end(&mut back).unwrap_err();
        assert_eq!(back, b"first messagesecond");
    }

    /// Bytes given a few at a time, with a timeout (`WouldBlock`) between every two reads.
    struct Stutter {
        data: Vec<u8>,
        at: usize,
        stalled: bool,
    }

    impl Read for Stutter {
        fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
            self.stalled = !self.stalled;
            if self.stalled {
                return Err(io::ErrorKind::WouldBlock.into());
            }
            let n = buf.len().min(3).min(self.data.len() - self.at);
            buf[..n].copy_from_slice(&self.data[self.at..self.at + n]);
            self.at += n;
            Ok(n)
        }
    }

    #[test]
    fn a_read_that_times_out_inside_a_frame_loses_nothing() {
        let layer: Shared = Arc::new(Mutex::new(Box::new(Xor)));
        let mut w = FrameWriter::new(Vec::new(), Some(layer.clone()));
        w.write_all(b"first message").unwrap();
        w.write_all(b"second").unwrap();
        let stutter = Stutter {
            data: w.inner.clone(),
            at: 0,
            stalled: false,
        };
        let mut r = FrameReader::new(stutter, Some(layer), 1 << 20);
        let (mut back, mut timeouts) = (Vec::new(), 0);
        let mut buf = [0u8; 5];
        while back.len() < 19 {
            match r.read(&mut buf) {
                Ok(n) => back.extend_from_slice(&buf[..n]),
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => timeouts += 1,
                Err(e) => panic!("{e}"),
            }
        }
        assert_eq!(back, b"first messagesecond");
        assert!(timeouts > 4, "{timeouts} timeouts");
    }

    #[test]
    fn a_frame_above_the_limit_is_refused_before_it_is_read() {
        let wire = [&(1u32 << 30).to_be_bytes()[..], b"abc"].concat();
        let mut r = FrameReader::new(&wire[..], None, 1 << 20);
        let e = r.read(&mut [0u8; 8]).unwrap_err();
        assert!(e.to_string().contains("exceeds the limit"), "{e}");
    }
}
