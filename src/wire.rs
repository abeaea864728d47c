//! Thrift on the wire, for the `hbase` backend and `tallrow serve` alike: the transport and
//! protocol choices, framing, and input protocols that bound what a peer can make us allocate.
//!
//! The `thrift` crate's own input protocols allocate whatever length a string, list or frame
//! header claims, so one hostile 5-byte message could ask for gigabytes. The readers here
//! check every claimed length against what is left of the message's byte budget before they
//! allocate, and never panic on malformed input. Output goes through the crate's protocols.

use std::io::{self, Read, Write};
use thrift::protocol::{
    TBinaryOutputProtocol, TCompactOutputProtocol, TFieldIdentifier, TInputProtocol, TListIdentifier, TMapIdentifier,
    TMessageIdentifier, TMessageType, TOutputProtocol, TSetIdentifier, TStructIdentifier, TType,
};
use thrift::{ProtocolError, ProtocolErrorKind};

/// The default limit on one message (framed or not): large batches fit, hostile lengths do not.
pub const DEFAULT_MAX_MESSAGE: usize = 64 << 20;

/// How messages are delimited on the connection.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Transport {
    /// Messages back to back (`hbase thrift start`'s default).
    Buffered,
    /// Each message preceded by its 4-byte big-endian length.
    Framed,
}

/// How values are encoded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Protocol {
    /// TBinaryProtocol, strict (versioned) messages; unversioned ones are read too.
    Binary,
    /// TCompactProtocol.
    Compact,
}

impl std::str::FromStr for Transport {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "buffered" => Ok(Transport::Buffered),
            "framed" => Ok(Transport::Framed),
            _ => Err(format!("unknown transport {s:?}: expected buffered or framed")),
        }
    }
}

impl std::str::FromStr for Protocol {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "binary" => Ok(Protocol::Binary),
            "compact" => Ok(Protocol::Compact),
            _ => Err(format!("unknown protocol {s:?}: expected binary or compact")),
        }
    }
}

impl std::fmt::Display for Transport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Transport::Buffered => "buffered",
            Transport::Framed => "framed",
        })
    }
}

impl std::fmt::Display for Protocol {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Protocol::Binary => "binary",
            Protocol::Compact => "compact",
        })
    }
}

fn protocol_error(kind: ProtocolErrorKind, message: String) -> thrift::Error {
    thrift::Error::Protocol(ProtocolError { kind, message })
}

fn too_large(what: &str, claimed: u64, left: usize) -> thrift::Error {
    protocol_error(
        ProtocolErrorKind::SizeLimit,
        format!("{what} of {claimed} bytes exceeds the {left} bytes left of the message limit"),
    )
}

/// Reads framed messages: each `read` serves bytes of the current frame and reads the next
/// frame's header when one is used up. A header above `limit` is an error, and a frame's
/// bytes are read as they arrive rather than allocated up front.
pub struct FramedReader<R> {
    inner: R,
    left: usize,
    limit: usize,
}

impl<R: Read> FramedReader<R> {
    /// Frames from `inner`, each at most `limit` bytes.
    pub fn new(inner: R, limit: usize) -> Self {
        FramedReader { inner, left: 0, limit }
    }
}

impl<R: Read> Read for FramedReader<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if buf.is_empty() {
            return Ok(0);
        }
        while self.left == 0 {
            let mut header = [0u8; 4];
            self.inner.read_exact(&mut header)?;
            let len = i32::from_be_bytes(header);
            if len < 0 || len as usize > self.limit {
                return Err(io::Error::new(
                    io::ErrorKind::InvalidData,
                    format!("frame of {len} bytes exceeds the limit of {} bytes", self.limit),
                ));
            }
            self.left = len as usize;
        }
        let n = buf.len().min(self.left);
        let got = self.inner.read(&mut buf[..n])?;
        if got == 0 {
            return Err(io::ErrorKind::UnexpectedEof.into());
        }
        self.left -= got;
        Ok(got)
    }
}

/// The arguments of a call, by field id and type, that a reader fills with empty values
/// when the caller left them out.
pub type ArgDefaults = fn(&str) -> &'static [(i16, TType)];

/// An input protocol (binary or compact) that holds each message to a byte budget.
///
/// With [`Input::with_defaults`], a call's top-level arguments that the caller omitted (as
/// Python and Java clients do for null arguments) are read as empty values instead of
/// failing the generated code's presence checks.
pub struct Input<R> {
    r: R,
    defaults: Option<ArgDefaults>,
    args: &'static [(i16, TType)],
    depth: usize,
    seen: u64,
    stopped: bool,
    synthetic: Option<TType>,
    synthetic_struct: Option<usize>,
    protocol: Protocol,
    limit: usize,
    left: usize,
    // Compact protocol state: field ids are deltas within a struct, and a bool field's value
    // travels in its header.
    last_field: i16,
    field_stack: Vec<i16>,
    pending_bool: Option<bool>,
}

impl<R: Read> Input<R> {
    /// Reads `protocol` from `r`, each message at most `limit` bytes.
    pub fn new(r: R, protocol: Protocol, limit: usize) -> Self {
        Input {
            r,
            defaults: None,
            args: &[],
            depth: 0,
            seen: 0,
            stopped: false,
            synthetic: None,
            synthetic_struct: None,
            protocol,
            limit,
            left: limit,
            last_field: 0,
            field_stack: Vec::new(),
            pending_bool: None,
        }
    }

    /// Fills omitted call arguments as `defaults` lists them.
    pub fn with_defaults(mut self, defaults: ArgDefaults) -> Self {
        self.defaults = Some(defaults);
        self
    }

    /// Takes a pending synthetic value of type `t`.
    fn synthetic(&mut self, t: TType) -> bool {
        if self.synthetic == Some(t) {
            self.synthetic = None;
            true
        } else {
            false
        }
    }

    /// The next field of a call's argument struct: a real one, or one the caller omitted.
    fn args_field(
        &mut self,
        real: impl FnOnce(&mut Self) -> thrift::Result<TFieldIdentifier>,
    ) -> thrift::Result<TFieldIdentifier> {
        if !self.stopped {
            let f = real(self)?;
            if f.field_type != TType::Stop {
                if let Some(id) = f.id.filter(|id| (0..64).contains(id)) {
                    self.seen |= 1 << id;
                }
                return Ok(f);
            }
            self.stopped = true;
        }
        let missing = self.args.iter().find(|(id, _)| self.seen & (1 << id) == 0).copied();
        match missing {
            Some((id, t)) => {
                self.seen |= 1 << id;
                self.synthetic = Some(t);
                Ok(TFieldIdentifier::new::<Option<String>, String, i16>(None, t, id))
            }
            None => Ok(TFieldIdentifier::new::<Option<String>, String, Option<i16>>(
                None,
                TType::Stop,
                None,
            )),
        }
    }

    fn take(&mut self, n: usize) -> thrift::Result<()> {
        if n > self.left {
            return Err(protocol_error(
                ProtocolErrorKind::SizeLimit,
                format!("message exceeds the limit of {} bytes", self.limit),
            ));
        }
        self.left -= n;
        Ok(())
    }

    fn fill(&mut self, buf: &mut [u8]) -> thrift::Result<()> {
        self.take(buf.len())?;
        self.r.read_exact(buf).map_err(thrift::Error::from)
    }

    fn array<const N: usize>(&mut self) -> thrift::Result<[u8; N]> {
        let mut buf = [0u8; N];
        self.fill(&mut buf)?;
        Ok(buf)
    }

    fn varint(&mut self) -> thrift::Result<u64> {
        let mut value = 0u64;
        for i in 0..10 {
            let [b] = self.array::<1>()?;
            value |= u64::from(b & 0x7f) << (7 * i);
            if b & 0x80 == 0 {
                return Ok(value);
            }
        }
        Err(protocol_error(
            ProtocolErrorKind::InvalidData,
            "varint longer than 10 bytes".into(),
        ))
    }

    fn zigzag(&mut self) -> thrift::Result<i64> {
        let v = self.varint()?;
        Ok((v >> 1) as i64 ^ -((v & 1) as i64))
    }

    /// A length-prefixed byte string, refused before allocation when it cannot fit.
    fn blob(&mut self) -> thrift::Result<Vec<u8>> {
        let len = match self.protocol {
            Protocol::Binary => i64::from(i32::from_be_bytes(self.array()?)),
            Protocol::Compact => self.varint()? as i64,
        };
        if len < 0 {
            return Err(protocol_error(
                ProtocolErrorKind::NegativeSize,
                format!("string length {len}"),
            ));
        }
        if len as u64 > self.left as u64 {
            return Err(too_large("string", len as u64, self.left));
        }
        let mut buf = vec![0u8; len as usize];
        self.fill(&mut buf)?;
        Ok(buf)
    }

    /// Checks a collection's element count: every element takes at least one byte.
    fn count(&self, n: i64) -> thrift::Result<i32> {
        if n < 0 {
            return Err(protocol_error(
                ProtocolErrorKind::NegativeSize,
                format!("collection size {n}"),
            ));
        }
        if n as u64 > self.left as u64 {
            return Err(too_large("collection", n as u64, self.left));
        }
        Ok(n as i32)
    }

    fn binary_type(b: u8) -> thrift::Result<TType> {
        Ok(match b {
            0 => TType::Stop,
            1 => TType::Void,
            2 => TType::Bool,
            3 => TType::I08,
            4 => TType::Double,
            6 => TType::I16,
            8 => TType::I32,
            10 => TType::I64,
            11 => TType::String,
            12 => TType::Struct,
            13 => TType::Map,
            14 => TType::Set,
            15 => TType::List,
            16 => TType::Utf8,
            17 => TType::Utf16,
            _ => {
                return Err(protocol_error(
                    ProtocolErrorKind::InvalidData,
                    format!("unknown type {b}"),
                ));
            }
        })
    }

    fn compact_type(b: u8) -> thrift::Result<TType> {
        Ok(match b {
            0 => TType::Stop,
            1 | 2 => TType::Bool,
            3 => TType::I08,
            4 => TType::I16,
            5 => TType::I32,
            6 => TType::I64,
            7 => TType::Double,
            8 => TType::String,
            9 => TType::List,
            10 => TType::Set,
            11 => TType::Map,
            12 => TType::Struct,
            _ => {
                return Err(protocol_error(
                    ProtocolErrorKind::InvalidData,
                    format!("unknown type {b}"),
                ));
            }
        })
    }

    fn read_message_head(&mut self) -> thrift::Result<TMessageIdentifier> {
        match self.protocol {
            Protocol::Binary => {
                let head: [u8; 4] = self.array()?;
                if head[0] & 0x80 != 0 {
                    if head[..2] != [0x80, 0x01] {
                        return Err(protocol_error(
                            ProtocolErrorKind::BadVersion,
                            format!("bad binary protocol version {:02x}{:02x}", head[0], head[1]),
                        ));
                    }
                    let kind = TMessageType::try_from(head[3])?;
                    let name = self.read_string()?;
                    let seq = self.read_i32()?;
                    Ok(TMessageIdentifier::new(name, kind, seq))
                } else {
                    // Unversioned: the four bytes were the name's length.
                    let len = i32::from_be_bytes(head);
                    if len as usize > self.left {
                        return Err(too_large("method name", len as u64, self.left));
                    }
                    let mut name = vec![0u8; len as usize];
                    self.fill(&mut name)?;
                    let name = String::from_utf8(name)?;
                    let [kind] = self.array::<1>()?;
                    let kind = TMessageType::try_from(kind)?;
                    let seq = self.read_i32()?;
                    Ok(TMessageIdentifier::new(name, kind, seq))
                }
            }
            Protocol::Compact => {
                let [id, version] = self.array::<2>()?;
                if id != 0x82 || version & 0x1f != 1 {
                    return Err(protocol_error(
                        ProtocolErrorKind::BadVersion,
                        format!("bad compact protocol header {id:02x}{version:02x}"),
                    ));
                }
                let kind = TMessageType::try_from(version >> 5)?;
                let seq = self.varint()? as u32 as i32;
                let name = self.read_string()?;
                Ok(TMessageIdentifier::new(name, kind, seq))
            }
        }
    }

    fn read_field(&mut self) -> thrift::Result<TFieldIdentifier> {
        match self.protocol {
            Protocol::Binary => {
                let [b] = self.array::<1>()?;
                let kind = Self::binary_type(b)?;
                let id = if kind == TType::Stop { 0 } else { self.read_i16()? };
                Ok(TFieldIdentifier::new::<Option<String>, String, i16>(None, kind, id))
            }
            Protocol::Compact => {
                let [b] = self.array::<1>()?;
                let kind = Self::compact_type(b & 0x0f)?;
                if kind == TType::Stop {
                    return Ok(TFieldIdentifier::new::<Option<String>, String, Option<i16>>(
                        None,
                        TType::Stop,
                        None,
                    ));
                }
                if kind == TType::Bool {
                    self.pending_bool = Some(b & 0x0f == 1);
                }
                let delta = i16::from(b >> 4);
                self.last_field = if delta != 0 {
                    self.last_field.wrapping_add(delta)
                } else {
                    self.read_i16()?
                };
                Ok(TFieldIdentifier::new::<Option<String>, String, i16>(
                    None,
                    kind,
                    self.last_field,
                ))
            }
        }
    }

    fn compact_collection(&mut self) -> thrift::Result<(TType, i32)> {
        let [header] = self.array::<1>()?;
        let element = Self::compact_type(header & 0x0f)?;
        let short = header >> 4;
        let n = if short == 15 {
            self.varint()? as i64
        } else {
            i64::from(short)
        };
        Ok((element, self.count(n)?))
    }
}

impl<R: Read> TInputProtocol for Input<R> {
    fn read_message_begin(&mut self) -> thrift::Result<TMessageIdentifier> {
        self.left = self.limit;
        self.last_field = 0;
        self.field_stack.clear();
        self.pending_bool = None;
        self.depth = 0;
        self.seen = 0;
        self.stopped = false;
        self.synthetic = None;
        self.synthetic_struct = None;
        let m = self.read_message_head()?;
        self.args = match (self.defaults, m.message_type) {
            (Some(defaults), TMessageType::Call | TMessageType::OneWay) => defaults(&m.name),
            _ => &[],
        };
        Ok(m)
    }

    fn read_message_end(&mut self) -> thrift::Result<()> {
        Ok(())
    }

    fn read_struct_begin(&mut self) -> thrift::Result<Option<TStructIdentifier>> {
        self.depth += 1;
        if self.synthetic(TType::Struct) {
            self.synthetic_struct = Some(self.depth);
            return Ok(None);
        }
        if self.protocol == Protocol::Compact {
            if self.field_stack.len() >= 64 {
                return Err(protocol_error(
                    ProtocolErrorKind::DepthLimit,
                    "structs nested too deeply".into(),
                ));
            }
            self.field_stack.push(self.last_field);
            self.last_field = 0;
        }
        Ok(None)
    }

    fn read_struct_end(&mut self) -> thrift::Result<()> {
        let synthetic = self.synthetic_struct == Some(self.depth);
        self.depth = self.depth.saturating_sub(1);
        if synthetic {
            self.synthetic_struct = None;
        } else if self.protocol == Protocol::Compact {
            self.last_field = self.field_stack.pop().unwrap_or(0);
        }
        Ok(())
    }

    fn read_field_begin(&mut self) -> thrift::Result<TFieldIdentifier> {
        if self.synthetic_struct == Some(self.depth) {
            return Ok(TFieldIdentifier::new::<Option<String>, String, Option<i16>>(
                None,
                TType::Stop,
                None,
            ));
        }
        if self.depth == 1 && !self.args.is_empty() {
            return self.args_field(Self::read_field);
        }
        self.read_field()
    }

    fn read_field_end(&mut self) -> thrift::Result<()> {
        Ok(())
    }

    fn read_bool(&mut self) -> thrift::Result<bool> {
        if let Some(b) = self.pending_bool.take() {
            return Ok(b);
        }
        let [b] = self.array::<1>()?;
        match (self.protocol, b) {
            (Protocol::Binary, 0) | (Protocol::Compact, 2) => Ok(false),
            (Protocol::Binary, _) | (Protocol::Compact, 1) => Ok(true),
            (Protocol::Compact, other) => Err(protocol_error(
                ProtocolErrorKind::InvalidData,
                format!("{other} is not a compact bool"),
            )),
        }
    }

    fn read_bytes(&mut self) -> thrift::Result<Vec<u8>> {
        if self.synthetic(TType::String) {
            return Ok(Vec::new());
        }
        self.blob()
    }

    fn read_i8(&mut self) -> thrift::Result<i8> {
        Ok(self.array::<1>()?[0] as i8)
    }

    fn read_i16(&mut self) -> thrift::Result<i16> {
        match self.protocol {
            Protocol::Binary => Ok(i16::from_be_bytes(self.array()?)),
            Protocol::Compact => Ok(self.zigzag()? as i16),
        }
    }

    fn read_i32(&mut self) -> thrift::Result<i32> {
        if self.synthetic(TType::I32) {
            return Ok(0);
        }
        match self.protocol {
            Protocol::Binary => Ok(i32::from_be_bytes(self.array()?)),
            Protocol::Compact => Ok(self.zigzag()? as i32),
        }
    }

    fn read_i64(&mut self) -> thrift::Result<i64> {
        if self.synthetic(TType::I64) {
            return Ok(0);
        }
        match self.protocol {
            Protocol::Binary => Ok(i64::from_be_bytes(self.array()?)),
            Protocol::Compact => self.zigzag(),
        }
    }

    fn read_double(&mut self) -> thrift::Result<f64> {
        match self.protocol {
            Protocol::Binary => Ok(f64::from_be_bytes(self.array()?)),
            Protocol::Compact => Ok(f64::from_le_bytes(self.array()?)),
        }
    }

    fn read_string(&mut self) -> thrift::Result<String> {
        if self.synthetic(TType::String) {
            return Ok(String::new());
        }
        Ok(String::from_utf8(self.blob()?)?)
    }

    fn read_list_begin(&mut self) -> thrift::Result<TListIdentifier> {
        if self.synthetic(TType::List) {
            return Ok(TListIdentifier::new(TType::String, 0));
        }
        let (kind, n) = match self.protocol {
            Protocol::Binary => {
                let [b] = self.array::<1>()?;
                let kind = Self::binary_type(b)?;
                let n = self.read_i32()?;
                (kind, self.count(i64::from(n))?)
            }
            Protocol::Compact => self.compact_collection()?,
        };
        Ok(TListIdentifier::new(kind, n))
    }

    fn read_list_end(&mut self) -> thrift::Result<()> {
        Ok(())
    }

    fn read_set_begin(&mut self) -> thrift::Result<TSetIdentifier> {
        let list = self.read_list_begin()?;
        Ok(TSetIdentifier::new(list.element_type, list.size))
    }

    fn read_set_end(&mut self) -> thrift::Result<()> {
        Ok(())
    }

    fn read_map_begin(&mut self) -> thrift::Result<TMapIdentifier> {
        if self.synthetic(TType::Map) {
            return Ok(TMapIdentifier::new(TType::String, TType::String, 0));
        }
        match self.protocol {
            Protocol::Binary => {
                let [k, v] = self.array::<2>()?;
                let (k, v) = (Self::binary_type(k)?, Self::binary_type(v)?);
                let n = self.read_i32()?;
                Ok(TMapIdentifier::new(k, v, self.count(i64::from(n))?))
            }
            Protocol::Compact => {
                let n = self.varint()? as i64;
                let n = self.count(n)?;
                if n == 0 {
                    return Ok(TMapIdentifier::new(None, None, 0));
                }
                let [types] = self.array::<1>()?;
                let k = Self::compact_type(types >> 4)?;
                let v = Self::compact_type(types & 0x0f)?;
                Ok(TMapIdentifier::new(k, v, n))
            }
        }
    }

    fn read_map_end(&mut self) -> thrift::Result<()> {
        Ok(())
    }

    fn read_byte(&mut self) -> thrift::Result<u8> {
        Ok(self.array::<1>()?[0])
    }
}

/// An input protocol that remembers whether any read failed. The generated processor
/// answers a request it could not read with an exception and carries on, but the stream
/// is then mid-message: the server closes such a connection.
pub struct Watched<P> {
    inner: P,
    failed: bool,
    on_call: Option<OnCall>,
}

type OnCall = Box<dyn FnMut(&str) -> thrift::Result<()> + Send>;

impl<P: TInputProtocol> Watched<P> {
    /// Watches `inner`.
    pub fn new(inner: P) -> Self {
        Watched {
            inner,
            failed: false,
            on_call: None,
        }
    }

    /// Runs `hook` with each call's method name once its message header is read, before
    /// the call is served; an error from it fails the read.
    pub fn on_call(mut self, hook: impl FnMut(&str) -> thrift::Result<()> + Send + 'static) -> Self {
        self.on_call = Some(Box::new(hook));
        self
    }

    /// Whether a read has failed since the connection opened.
    pub fn failed(&self) -> bool {
        self.failed
    }
}

macro_rules! watched {
    ($($name:ident -> $t:ty;)*) => {
        impl<P: TInputProtocol> TInputProtocol for Watched<P> {
            fn read_message_begin(&mut self) -> thrift::Result<TMessageIdentifier> {
                let m = self.inner.read_message_begin();
                self.failed |= m.is_err();
                let m = m?;
                if let Some(hook) = self.on_call.as_mut() {
                    hook(&m.name)?;
                }
                Ok(m)
            }
            $(fn $name(&mut self) -> thrift::Result<$t> {
                let r = self.inner.$name();
                self.failed |= r.is_err();
                r
            })*
        }
    };
}

watched! {
    read_message_end -> ();
    read_struct_begin -> Option<TStructIdentifier>;
    read_struct_end -> ();
    read_field_begin -> TFieldIdentifier;
    read_field_end -> ();
    read_bool -> bool;
    read_bytes -> Vec<u8>;
    read_i8 -> i8;
    read_i16 -> i16;
    read_i32 -> i32;
    read_i64 -> i64;
    read_double -> f64;
    read_string -> String;
    read_list_begin -> TListIdentifier;
    read_list_end -> ();
    read_set_begin -> TSetIdentifier;
    read_set_end -> ();
    read_map_begin -> TMapIdentifier;
    read_map_end -> ();
    read_byte -> u8;
}

/// An output protocol of either kind over `w`.
pub fn output<W: Write + Send + 'static>(w: W, protocol: Protocol) -> Box<dyn TOutputProtocol + Send> {
    match protocol {
        Protocol::Binary => Box::new(TBinaryOutputProtocol::new(w, true)),
        Protocol::Compact => Box::new(TCompactOutputProtocol::new(w)),
    }
}

/// Collects one message's bytes and sends them at `flush`, framed or not, in one write.
pub struct Outbox<W: Write> {
    inner: W,
    buf: Vec<u8>,
    framed: bool,
}

impl<W: Write> Outbox<W> {
    /// Messages to `inner`.
    pub fn new(inner: W, transport: Transport) -> Self {
        Outbox {
            inner,
            buf: Vec::with_capacity(4096),
            framed: transport == Transport::Framed,
        }
    }
}

impl<W: Write> Write for Outbox<W> {
    fn write(&mut self, data: &[u8]) -> io::Result<usize> {
        if self.framed && self.buf.is_empty() {
            self.buf.extend_from_slice(&[0; 4]);
        }
        self.buf.extend_from_slice(data);
        Ok(data.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        if self.buf.is_empty() {
            return self.inner.flush();
        }
        if self.framed {
            let len = (self.buf.len() - 4) as u32;
            self.buf[..4].copy_from_slice(&len.to_be_bytes());
        }
        let result = self.inner.write_all(&self.buf).and_then(|_| self.inner.flush());
        self.buf.clear();
        if self.buf.capacity() > 1 << 20 {
            self.buf.shrink_to(4096);
        }
        result
    }
}

/// Held bytes beyond which a flush sends them anyway.
const HOLD_LIMIT: usize = 1 << 20;

type BeforeSend = Box<dyn FnMut() -> io::Result<()> + Send>;

/// A socket's outgoing messages, held and sent in one write: a client's pipelined calls
/// until the window is written, a server's replies until it would wait for the next
/// request. One syscall then carries many messages instead of one each.
///
/// Cloned handles share the buffer. A flush sends only when not holding or past
/// [`HOLD_LIMIT`]; [`Held::send`] always sends, after the `before_send` hook has run (a
/// server commits the writes its held replies acknowledge there).
#[derive(Clone)]
pub struct Held(std::sync::Arc<std::sync::Mutex<HeldState>>);

struct HeldState {
    stream: std::net::TcpStream,
    buf: Vec<u8>,
    holding: bool,
    before_send: Option<BeforeSend>,
}

impl HeldState {
    /// Sends and empties the buffer; on failure what was held is dropped, never resent.
    fn send(&mut self) -> io::Result<()> {
        if self.buf.is_empty() {
            return Ok(());
        }
        let result = match self.before_send.as_mut() {
            Some(hook) => hook(),
            None => Ok(()),
        }
        .and_then(|()| self.stream.write_all(&self.buf));
        self.buf.clear();
        if self.buf.capacity() > HOLD_LIMIT {
            self.buf.shrink_to(64 << 10);
        }
        result
    }
}

impl Held {
    /// Holds nothing until [`Held::hold`] says so.
    pub fn new(stream: std::net::TcpStream) -> Self {
        Held(std::sync::Arc::new(std::sync::Mutex::new(HeldState {
            stream,
            buf: Vec::new(),
            holding: false,
            before_send: None,
        })))
    }

    /// Runs `hook` before every send of held bytes; an error from it fails the send and
    /// discards what was held.
    pub fn before_send(self, hook: impl FnMut() -> io::Result<()> + Send + 'static) -> Self {
        self.state().before_send = Some(Box::new(hook));
        self
    }

    fn state(&self) -> std::sync::MutexGuard<'_, HeldState> {
        // A panic while holding the lock leaves only bytes behind; keep using them.
        self.0.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Starts or stops holding flushed messages.
    pub fn hold(&self, on: bool) {
        self.state().holding = on;
    }

    /// Sends whatever is held.
    pub fn send(&self) -> io::Result<()> {
        self.state().send()
    }
}

impl Write for Held {
    fn write(&mut self, data: &[u8]) -> io::Result<usize> {
        self.state().buf.extend_from_slice(data);
        Ok(data.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        let mut s = self.state();
        if !s.holding || s.buf.len() > HOLD_LIMIT {
            return s.send();
        }
        Ok(())
    }
}

/// A connection's reading half that first sends what `held` holds, since the peer may be
/// waiting for those replies before it sends more.
pub struct SendBeforeRead {
    stream: std::net::TcpStream,
    held: Held,
}

impl SendBeforeRead {
    /// Reads `stream`, releasing `held` before each read.
    pub fn new(stream: std::net::TcpStream, held: Held) -> Self {
        SendBeforeRead { stream, held }
    }
}

impl Read for SendBeforeRead {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        self.held.send()?;
        self.stream.read(buf)
    }
}

/// The reading side of a connection: framing undone, then the bounded protocol.
pub fn input<R: Read + Send + 'static>(
    r: R,
    transport: Transport,
    protocol: Protocol,
    limit: usize,
) -> Input<Box<dyn Read + Send>> {
    let r: Box<dyn Read + Send> = match transport {
        Transport::Buffered => Box::new(io::BufReader::with_capacity(256 << 10, r)),
        Transport::Framed => Box::new(FramedReader::new(io::BufReader::with_capacity(256 << 10, r), limit)),
    };
    Input::new(r, protocol, limit)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn encode(protocol: Protocol, write: impl FnOnce(&mut dyn TOutputProtocol)) -> Vec<u8> {
        let mut buf = Vec::new();
        {
            let mut out: Box<dyn TOutputProtocol> = match protocol {
                Protocol::Binary => Box::new(TBinaryOutputProtocol::new(&mut buf, true)),
                Protocol::Compact => Box::new(TCompactOutputProtocol::new(&mut buf)),
            };
            write(out.as_mut());
            out.flush().unwrap();
        }
        buf
    }

    #[test]
    fn round_trips_what_the_crate_writes() {
        use hbase_thrift::hbase::{BatchMutation, Mutation, TScan};
        for protocol in [Protocol::Binary, Protocol::Compact] {
            let batch = BatchMutation::new(
                b"row\x00\xff".to_vec(),
                vec![
                    Mutation::new(false, b"f:q".to_vec(), b"v".to_vec(), true),
                    Mutation::new(true, b"f".to_vec(), Vec::new(), false),
                ],
            );
            let scan = TScan::new(
                b"a".to_vec(),
                None,
                -5i64,
                vec![b"f:".to_vec()],
                1000,
                b"PrefixFilter('x')".to_vec(),
                None,
                true,
                false,
                None,
            );
            let bytes = encode(protocol, |o| {
                o.write_message_begin(&TMessageIdentifier::new("mutateRows", TMessageType::Call, -7))
                    .unwrap();
                batch.write_to_out_protocol(o).unwrap();
                scan.write_to_out_protocol(o).unwrap();
                o.write_i64(i64::MIN).unwrap();
                o.write_double(-1.5).unwrap();
                o.write_message_end().unwrap();
            });
            let mut i = Input::new(bytes.as_slice(), protocol, 1 << 20);
            let m = i.read_message_begin().unwrap();
            assert_eq!((m.name.as_str(), m.sequence_number), ("mutateRows", -7));
            assert_eq!(BatchMutation::read_from_in_protocol(&mut i).unwrap(), batch);
            assert_eq!(TScan::read_from_in_protocol(&mut i).unwrap(), scan);
            assert_eq!(i.read_i64().unwrap(), i64::MIN);
            assert_eq!(i.read_double().unwrap(), -1.5);
        }
    }

    #[test]
    fn refuses_claimed_lengths_beyond_the_budget_without_allocating() {
        // A binary call whose first string claims 2 GiB, and a list claiming 2^31-1 structs.
        let mut string = vec![0x80, 0x01, 0x00, 0x01, 0x00, 0x00, 0x00, 0x03, b'g', b'e', b't'];
        string.extend_from_slice(&[0, 0, 0, 1, 11, 0, 1, 0x7f, 0xff, 0xff, 0xff]);
        let mut i = Input::new(string.as_slice(), Protocol::Binary, 1 << 20);
        i.read_message_begin().unwrap();
        i.read_struct_begin().unwrap();
        i.read_field_begin().unwrap();
        match i.read_bytes().unwrap_err() {
            thrift::Error::Protocol(e) => assert!(e.message.contains("2147483647"), "{}", e.message),
            other => panic!("{other:?}"),
        }

        let list = [15u8, 12, 0x7f, 0xff, 0xff, 0xff];
        let mut i = Input::new(&list[..], Protocol::Binary, 1 << 20);
        assert!(i.read_list_begin().is_err());
        let negative = [15u8, 12, 0xff, 0xff, 0xff, 0xff];
        let mut i = Input::new(&negative[..], Protocol::Binary, 1 << 20);
        assert!(i.read_list_begin().is_err());
        // Compact: a varint length of 2^32-1.
        let compact = [0xffu8, 0xff, 0xff, 0xff, 0x0f];
        let mut i = Input::new(&compact[..], Protocol::Compact, 1 << 20);
        assert!(i.read_bytes().is_err());
        let endless = [0xffu8; 16];
        let mut i = Input::new(&endless[..], Protocol::Compact, 1 << 20);
        assert!(i.read_i64().is_err());
    }

    #[test]
    fn frames_above_the_limit_are_refused_and_the_budget_spans_a_message() {
        let mut framed = FramedReader::new(&[0x7fu8, 0xff, 0xff, 0xff, 1, 2][..], 1024);
        let err = framed.read(&mut [0u8; 8]).unwrap_err();
        assert!(err.to_string().contains("exceeds the limit of 1024"), "{err}");
        let mut ok = FramedReader::new(&[0u8, 0, 0, 2, 7, 8, 0, 0, 0, 1, 9][..], 1024);
        let mut all = Vec::new();
        ok.read_to_end(&mut all).unwrap_err(); // ends mid-header
        let mut ok = FramedReader::new(&[0u8, 0, 0, 2, 7, 8, 0, 0, 0, 1, 9][..], 1024);
        let mut three = [0u8; 3];
        ok.read_exact(&mut three).unwrap();
        assert_eq!(three, [7, 8, 9]);

        // 100 one-byte reads fit a 100-byte budget; the 101st does not.
        let bytes = vec![0u8; 200];
        let mut i = Input::new(bytes.as_slice(), Protocol::Binary, 100);
        for _ in 0..100 {
            i.read_byte().unwrap();
        }
        assert!(i.read_byte().is_err());
    }

    #[test]
    fn outbox_frames_each_message() {
        let mut sent = Vec::new();
        {
            let mut o = Outbox::new(&mut sent, Transport::Framed);
            o.write_all(b"abc").unwrap();
            o.flush().unwrap();
            o.write_all(b"de").unwrap();
            o.flush().unwrap();
        }
        assert_eq!(sent, b"\0\0\0\x03abc\0\0\0\x02de");
    }
}
