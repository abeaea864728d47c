//! Thrift's SASL transport, client side, as HBase's Thrift servers speak it
//! (`TSaslServerTransport` of libthrift): the negotiation, then every write as one frame of
//! a 4-byte big-endian length and its bytes, wrapped by the mechanism's security layer when
//! the negotiated quality of protection asks for integrity or privacy.
//!
//! Negotiation messages are a status byte, a 4-byte length and a payload: the client sends
//! `START` with the mechanism's name, then `OK` with its initial response; each `OK` the
//! server sends is a challenge to answer, `COMPLETE` ends it, and `BAD` or `ERROR` carry the
//! server's reason as text.

use std::io::{self, Read, Write};

const START: u8 = 1;
const OK: u8 = 2;
const BAD: u8 = 3;
const ERROR: u8 = 4;
const COMPLETE: u8 = 5;

/// The longest negotiation message accepted from a server (a Kerberos token is a few KB).
const MAX_NEGOTIATION: usize = 1 << 16;

// The mechanism, its layer and the frames that carry it are HBase's native RPC's too.
pub use hbase_client::sasl::{FrameReader, FrameWriter, Layer, Mechanism, Shared};

/// Why a negotiation failed, worded for one line.
#[derive(Debug)]
pub enum Refused {
    /// The mechanism could not go on (no ticket, unknown principal, QOP mismatch, ...).
    Mechanism(String),
    /// The server said no, with its reason.
    Server(String),
    /// The connection broke or went quiet.
    Io(io::Error),
    /// The server sent something that is no SASL negotiation.
    NotSasl(String),
}

fn send(w: &mut impl Write, status: u8, payload: &[u8]) -> io::Result<()> {
    let mut m = Vec::with_capacity(5 + payload.len());
    m.push(status);
    m.extend_from_slice(&(payload.len() as u32).to_be_bytes());
    m.extend_from_slice(payload);
    w.write_all(&m)
}

fn receive(r: &mut impl Read) -> Result<(u8, Vec<u8>), Refused> {
    let mut header = [0u8; 5];
    r.read_exact(&mut header).map_err(Refused::Io)?;
    let status = header[0];
    let len = u32::from_be_bytes([header[1], header[2], header[3], header[4]]) as usize;
    if !(START..=COMPLETE).contains(&status) || len > MAX_NEGOTIATION {
        return Err(Refused::NotSasl(format!(
            "the server answered bytes {:02x?} where a SASL status and length belong",
            header
        )));
    }
    let mut payload = vec![0u8; len];
    r.read_exact(&mut payload).map_err(Refused::Io)?;
    if status == BAD || status == ERROR {
        let why = String::from_utf8_lossy(&payload);
        return Err(Refused::Server(why.lines().next().unwrap_or("").trim().to_string()));
    }
    Ok((status, payload))
}

/// Runs the negotiation of `mech` on `stream`; the security layer it settles on.
pub fn negotiate<S: Read + Write>(
    stream: &mut S,
    mut mech: Box<dyn Mechanism>,
) -> Result<Option<Box<dyn Layer>>, Refused> {
    let initial = mech.initial().map_err(Refused::Mechanism)?;
    let mut opening = Vec::new();
    send(&mut opening, START, mech.name().as_bytes()).map_err(Refused::Io)?;
    send(&mut opening, if mech.complete() { COMPLETE } else { OK }, &initial).map_err(Refused::Io)?;
    stream.write_all(&opening).map_err(Refused::Io)?;
    let mut last = OK;
    while !mech.complete() {
        let (status, challenge) = receive(stream)?;
        if status != OK && status != COMPLETE {
            return Err(Refused::NotSasl(format!(
                "expected SASL OK or COMPLETE, got status {status}"
            )));
        }
        let response = mech.step(&challenge).map_err(Refused::Mechanism)?;
        last = status;
        if status == COMPLETE {
            continue;
        }
        send(stream, if mech.complete() { COMPLETE } else { OK }, &response).map_err(Refused::Io)?;
    }
    // Complete here while the server still has to say so.
    if last == OK {
        let (status, _) = receive(stream)?;
        if status != COMPLETE {
            return Err(Refused::NotSasl(format!("expected SASL COMPLETE, got status {status}")));
        }
    }
    Ok(mech.layer())
}

impl<R: Read + Send> super::Source for FrameReader<R> {}

#[cfg(test)]
mod tests {
    use super::*;

    /// A mechanism of two steps whose layer XORs every byte, for the framing alone.
    struct Toy {
        steps: u8,
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
        fn initial(&mut self) -> Result<Vec<u8>, String> {
            Ok(b"hello".to_vec())
        }
        fn step(&mut self, challenge: &[u8]) -> Result<Vec<u8>, String> {
            self.steps += 1;
            Ok([b"re:", challenge].concat())
        }
        fn complete(&self) -> bool {
            self.steps == 2
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

    fn message(status: u8, payload: &[u8]) -> Vec<u8> {
        let mut m = Vec::new();
        send(&mut m, status, payload).unwrap();
        m
    }

    #[test]
    fn negotiates_as_libthrift_does() {
        let server = [message(OK, b"c1"), message(OK, b"c2"), message(COMPLETE, b"")].concat();
        let mut d = Duplex {
            input: io::Cursor::new(server),
            output: Vec::new(),
        };
        let layer = negotiate(&mut d, Box::new(Toy { steps: 0 })).unwrap();
        assert!(layer.is_some());
        let expected = [
            message(START, b"TOY"),
            message(OK, b"hello"),
            message(OK, b"re:c1"),
            message(COMPLETE, b"re:c2"),
        ]
        .concat();
        assert_eq!(d.output, expected);
    }

    #[test]
    fn a_server_refusal_is_its_reason() {
        let mut d = Duplex {
            input: io::Cursor::new(message(BAD, b"GSS initiate failed\nmore")),
            output: Vec::new(),
        };
        match negotiate(&mut d, Box::new(Toy { steps: 0 })) {
            Err(Refused::Server(why)) => assert_eq!(why, "GSS initiate failed"),
            other => panic!("{:?}", other.map(|_| ())),
        }
    }

    #[test]
    fn a_plain_reply_is_not_sasl() {
        // A Thrift binary reply where the negotiation expects a status.
        let mut d = Duplex {
            input: io::Cursor::new(vec![0x80, 0x01, 0x00, 0x02, 0, 0, 0, 4]),
            output: Vec::new(),
        };
        assert!(matches!(
            negotiate(&mut d, Box::new(Toy { steps: 0 })),
            Err(Refused::NotSasl(_))
        ));
    }
}
