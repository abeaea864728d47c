//! The bounded input protocols: every claimed length checked against what is left of the
//! message's byte budget before anything is allocated, omitted call arguments filled in,
//! and a watch that notes failed reads and each call's name.

use super::{Protocol, protocol_error, too_large};
use std::io::Read;
use thrift::ProtocolErrorKind;
use thrift::protocol::{
    TFieldIdentifier, TInputProtocol, TListIdentifier, TMapIdentifier, TMessageIdentifier, TMessageType,
    TSetIdentifier, TStructIdentifier, TType,
};

/// Structs any message may hold before [`Input::struct_bytes`] applies.
const STRUCT_ALLOWANCE: usize = 64;

/// What a string reserves before its first bytes arrive.
const CLAIM_RESERVE: usize = 4 << 10;

/// A call argument a caller may leave out: its field id, its type, and the value an omitted
/// integer reads as (the IDL's default; 0 where it has none).
pub type Arg = (i16, TType, i64);

/// The arguments of a call that a reader fills in when the caller left them out: empty
/// values, or an integer's default.
pub type ArgDefaults = fn(&str) -> &'static [Arg];

/// An input protocol (binary or compact) that holds each message to a byte budget.
///
/// With [`Input::with_defaults`], a call's top-level arguments that the caller omitted (as
/// Python and Java clients do for null arguments) are read as empty values instead of
/// failing the generated code's presence checks.
pub struct Input<R> {
    r: R,
    defaults: Option<ArgDefaults>,
    args: &'static [Arg],
    depth: usize,
    seen: u64,
    stopped: bool,
    /// An omitted argument being read: its type and, for an integer, its value.
    synthetic: Option<(TType, i64)>,
    synthetic_struct: Option<usize>,
    protocol: Protocol,
    limit: usize,
    left: usize,
    /// Structs begun in this message, and the wire bytes each must average (0: no rule).
    structs: usize,
    struct_bytes: usize,
    between_calls: bool,
    // Compact protocol state: field ids are deltas within a struct, and a bool field's value
    // travels in its header.
    last_field: i16,
    field_stack: Vec<i16>,
    pending_bool: Option<bool>,
}

impl Input<Box<dyn super::Source>> {
    /// The bytes received and not yet read. Between messages, a whole message found here
    /// may be parsed in place and then [`Input::consume`]d instead of read.
    pub fn unread(&self) -> &[u8] {
        self.r.unread()
    }

    /// Takes `n` bytes of [`Input::unread`] off the input: only a whole message, between
    /// messages, so that no read is left in the middle of one.
    pub fn consume(&mut self, n: usize) {
        self.r.consume(n);
    }

    /// Reads more after [`Input::unread`] (see [`super::Source::fill`]).
    pub fn fill_more(&mut self) -> std::io::Result<bool> {
        self.r.fill()
    }

    /// The largest message accepted, in bytes.
    pub fn limit(&self) -> usize {
        self.limit
    }
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
            structs: 0,
            struct_bytes: 0,
            between_calls: false,
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

    /// Refuses a message with more than one struct per `bytes` of it (after the first
    /// [`STRUCT_ALLOWANCE`] structs). An empty struct takes one byte on the wire and a
    /// hundred or more in memory, so this is what holds a request's decoded size to a small
    /// multiple of its own; no real request comes close (a compact column of a one-letter
    /// family is 4 bytes). A list or map of structs is then held to `bytes` per struct
    /// when its header is read.
    pub fn struct_bytes(mut self, bytes: usize) -> Self {
        self.struct_bytes = bytes;
        self
    }

    /// Counts a struct against [`Input::struct_bytes`].
    fn count_struct(&mut self) -> thrift::Result<()> {
        self.structs += 1;
        let read = self.limit - self.left;
        if self.struct_bytes > 0 && self.structs > STRUCT_ALLOWANCE && self.structs * self.struct_bytes > read {
            return Err(protocol_error(
                ProtocolErrorKind::SizeLimit,
                format!(
                    "{} structs in the first {read} bytes of a message: more than one per {} bytes",
                    self.structs, self.struct_bytes
                ),
            ));
        }
        Ok(())
    }

    /// Takes a pending synthetic value of type `t`.
    fn synthetic(&mut self, t: TType) -> bool {
        self.synthetic_int(t).is_some()
    }

    /// Takes a pending synthetic value of type `t`, with its integer value.
    fn synthetic_int(&mut self, t: TType) -> Option<i64> {
        match self.synthetic {
            Some((pending, value)) if pending == t => {
                self.synthetic = None;
                Some(value)
            }
            _ => None,
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
        let missing = self.args.iter().find(|(id, _, _)| self.seen & (1 << id) == 0).copied();
        match missing {
            Some((id, t, value)) => {
                self.seen |= 1 << id;
                self.synthetic = Some((t, value));
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
        self.bytes(len as usize)
    }

    /// `len` bytes, already checked against the budget. Memory follows the bytes that
    /// arrive: a length is only a claim, so the buffer doubles as its bytes come in.
    fn bytes(&mut self, len: usize) -> thrift::Result<Vec<u8>> {
        self.take(len)?;
        let mut buf = Vec::new();
        while buf.len() < len {
            let start = buf.len();
            let step = (len - start).min(start.max(CLAIM_RESERVE));
            buf.reserve_exact(step);
            buf.resize(start + step, 0);
            self.r.read_exact(&mut buf[start..]).map_err(thrift::Error::from)?;
        }
        Ok(buf)
    }

    /// Checks a collection's element count: each element takes at least the smallest
    /// encoding of its declared type (one byte for a struct or a compact integer), and the
    /// elements must fit in what is left of the message's budget.
    fn count(&self, n: i64, each: usize) -> thrift::Result<i32> {
        if n < 0 {
            return Err(protocol_error(
                ProtocolErrorKind::NegativeSize,
                format!("collection size {n}"),
            ));
        }
        let bytes = (n as u64).saturating_mul(each.max(1) as u64);
        if bytes > self.left as u64 {
            return Err(protocol_error(
                ProtocolErrorKind::SizeLimit,
                format!(
                    "collection of {n} elements (at least {bytes} bytes) exceeds the {} bytes left of the message limit",
                    self.left
                ),
            ));
        }
        Ok(n as i32)
    }

    /// The fewest bytes a value of type `t` takes on the wire; for a struct, what
    /// [`Input::struct_bytes`] asks structs to average.
    fn smallest(&self, t: TType) -> usize {
        match (self.protocol, t) {
            (_, TType::Double) => 8,
            (_, TType::Struct) => self.struct_bytes.max(1),
            (Protocol::Compact, _) => 1,
            (Protocol::Binary, TType::I16) => 2,
            (Protocol::Binary, TType::I32 | TType::String | TType::Utf8 | TType::Utf16) => 4,
            (Protocol::Binary, TType::I64) => 8,
            (Protocol::Binary, TType::List | TType::Set) => 5,
            (Protocol::Binary, TType::Map) => 6,
            (Protocol::Binary, _) => 1,
        }
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
                let [b0, b1, b2, b3] = [
                    self.first_byte()?,
                    self.read_byte()?,
                    self.read_byte()?,
                    self.read_byte()?,
                ];
                let head = [b0, b1, b2, b3];
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
                    if &head == b"HTTP" {
                        return Err(protocol_error(
                            ProtocolErrorKind::InvalidData,
                            crate::wire::SPOKE_HTTP.into(),
                        ));
                    }
                    // Unversioned: the four bytes were the name's length.
                    let len = i32::from_be_bytes(head);
                    if len as usize > self.left {
                        return Err(too_large("method name", len as u64, self.left));
                    }
                    if len < 0 {
                        return Err(protocol_error(
                            ProtocolErrorKind::NegativeSize,
                            format!("method name length {len}"),
                        ));
                    }
                    let name = String::from_utf8(self.bytes(len as usize)?)?;
                    let [kind] = self.array::<1>()?;
                    let kind = TMessageType::try_from(kind)?;
                    let seq = self.read_i32()?;
                    Ok(TMessageIdentifier::new(name, kind, seq))
                }
            }
            Protocol::Compact => {
                let [id, version] = [self.first_byte()?, self.read_byte()?];
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

    /// A message's first byte; whether the wait for it failed is kept for
    /// [`Input::waited_between_calls`].
    fn first_byte(&mut self) -> thrift::Result<u8> {
        let b = self.array::<1>();
        self.between_calls = b.is_err();
        Ok(b?[0])
    }

    /// Whether the last failed read was the wait for a message's first byte: nothing of
    /// a call had arrived (as when a connection sits idle).
    pub fn waited_between_calls(&self) -> bool {
        self.between_calls
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
        Ok((element, self.count(n, self.smallest(element))?))
    }
}

impl<R: Read> TInputProtocol for Input<R> {
    fn read_message_begin(&mut self) -> thrift::Result<TMessageIdentifier> {
        self.left = self.limit;
        self.last_field = 0;
        self.field_stack.clear();
        self.pending_bool = None;
        self.depth = 0;
        self.structs = 0;
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
        self.count_struct()?;
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
        if self.synthetic(TType::Bool) {
            return Ok(false);
        }
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
        if let Some(value) = self.synthetic_int(TType::I32) {
            return Ok(value as i32);
        }
        match self.protocol {
            Protocol::Binary => Ok(i32::from_be_bytes(self.array()?)),
            Protocol::Compact => Ok(self.zigzag()? as i32),
        }
    }

    fn read_i64(&mut self) -> thrift::Result<i64> {
        if let Some(value) = self.synthetic_int(TType::I64) {
            return Ok(value);
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
                (kind, self.count(i64::from(n), self.smallest(kind))?)
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
                let each = self.smallest(k) + self.smallest(v);
                Ok(TMapIdentifier::new(k, v, self.count(i64::from(n), each)?))
            }
            Protocol::Compact => {
                let n = self.varint()? as i64;
                if n == 0 {
                    return Ok(TMapIdentifier::new(None, None, 0));
                }
                let [types] = self.array::<1>()?;
                let k = Self::compact_type(types >> 4)?;
                let v = Self::compact_type(types & 0x0f)?;
                let each = self.smallest(k) + self.smallest(v);
                Ok(TMapIdentifier::new(k, v, self.count(n, each)?))
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
    failed: Option<String>,
    on_call: Option<OnCall>,
}

type OnCall = Box<dyn FnMut(&str) -> thrift::Result<()> + Send>;

impl<P: TInputProtocol> Watched<P> {
    /// Watches `inner`.
    pub fn new(inner: P) -> Self {
        Watched {
            inner,
            failed: None,
            on_call: None,
        }
    }

    /// Runs `hook` with each call's method name once its message header is read, before
    /// the call is served; an error from it fails the read.
    pub fn on_call(mut self, hook: impl FnMut(&str) -> thrift::Result<()> + Send + 'static) -> Self {
        self.on_call = Some(Box::new(hook));
        self
    }

    /// What the first read that failed since the connection opened found wrong.
    pub fn failed(&self) -> Option<&str> {
        self.failed.as_deref()
    }

    fn note(&mut self, e: &thrift::Error) {
        if self.failed.is_none() {
            self.failed = Some(match e {
                thrift::Error::Transport(t) => t.message.clone(),
                thrift::Error::Protocol(p) => p.message.clone(),
                thrift::Error::Application(a) => a.message.clone(),
                thrift::Error::User(u) => u.to_string(),
            });
        }
    }

    /// The protocol watched.
    pub fn inner(&self) -> &P {
        &self.inner
    }

    /// The protocol watched, to take a message parsed elsewhere off its input.
    pub fn inner_mut(&mut self) -> &mut P {
        &mut self.inner
    }

    /// Runs the call hook for a call whose header was read elsewhere.
    pub fn announce(&mut self, method: &str) -> thrift::Result<()> {
        match self.on_call.as_mut() {
            Some(hook) => hook(method),
            None => Ok(()),
        }
    }
}

macro_rules! watched {
    ($($name:ident -> $t:ty;)*) => {
        impl<P: TInputProtocol> TInputProtocol for Watched<P> {
            fn read_message_begin(&mut self) -> thrift::Result<TMessageIdentifier> {
                let m = self.inner.read_message_begin();
                if let Err(e) = &m {
                    self.note(e);
                }
                let m = m?;
                if let Some(hook) = self.on_call.as_mut() {
                    hook(&m.name)?;
                }
                Ok(m)
            }
            $(fn $name(&mut self) -> thrift::Result<$t> {
                let r = self.inner.$name();
                if let Err(e) = &r {
                    self.note(e);
                }
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
