//! A row key as a list of segments, each a pure function of one field: what a design's
//! `key = [...]` declares, encoded into a caller's buffer and decoded back, byte for byte.
//!
//! ```
//! use tallrow::design::key::{Key, Value};
//!
//! let key = Key::parse("useractions", r#"key = [
//!     { int = "userid", bytes = 4 },
//!     { stamp = "stamp", order = "reverse" },
//!     { int = "actionid", bytes = 4 },
//! ]"#).map_err(|(at, why)| format!("{at}: {why}"))?;
//! let mut row = Vec::new();
//! key.encode_into(&[Value::Int(1), Value::Int(1_600_000_000_000), Value::Int(7)], &mut row)?;
//! assert_eq!(tallrow::keys::hex(&row), "000000017ffffe8b78917fff00000007");
//! assert_eq!(key.decode(&row)?[2], ("actionid", Value::Int(7).owned()));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use crate::keys::{MAX, Order, Salt, push_decimal, push_padded19, seed_hash, to_string_binary};
use std::fmt::Write as _;

/// A key segment's error, or a key's: which field or which part, and why.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Error {
    /// A field value the key cannot hold.
    #[error("{field}: {value} is out of range ({allowed})")]
    OutOfRange {
        /// The field's name.
        field: String,
        /// The value, as given.
        value: String,
        /// What the field accepts.
        allowed: String,
    },
    /// A key of fixed size given with another.
    #[error("{layout} keys are {expected} bytes, got {actual}")]
    Length {
        /// The key's name.
        layout: String,
        /// Its size.
        expected: usize,
        /// The size given.
        actual: usize,
    },
    /// Bytes that do not form a key of this layout.
    #[error("{layout}: {reason}")]
    Malformed {
        /// The key's name.
        layout: String,
        /// What is wrong.
        reason: String,
    },
}

/// Result of an encode or decode.
pub type Result<T> = std::result::Result<T, Error>;

/// A field's value: an integer (stamps are integers), or bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Value<'a> {
    /// An integer of any width the key declares.
    Int(i128),
    /// Text or bytes.
    Bytes(&'a [u8]),
}

/// A decoded field's value.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Owned {
    /// An integer.
    Int(i128),
    /// Text or bytes.
    Bytes(Vec<u8>),
}

impl Value<'_> {
    /// The value held apart from its source.
    pub fn owned(self) -> Owned {
        match self {
            Value::Int(v) => Owned::Int(v),
            Value::Bytes(b) => Owned::Bytes(b.to_vec()),
        }
    }
}

impl Owned {
    /// The value borrowed.
    pub fn as_value(&self) -> Value<'_> {
        match self {
            Owned::Int(v) => Value::Int(*v),
            Owned::Bytes(b) => Value::Bytes(b),
        }
    }
}

impl std::fmt::Display for Owned {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Owned::Int(v) => write!(f, "{v}"),
            Owned::Bytes(b) => f.write_str(&to_string_binary(b)),
        }
    }
}

/// What values a field takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// Integers from `min` to `max`.
    Int {
        /// Smallest.
        min: i128,
        /// Largest.
        max: i128,
    },
    /// Text or bytes.
    Bytes,
}

/// A field of a key, named where its segments name it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Field {
    /// Its name.
    pub name: String,
    /// What it takes.
    pub kind: Kind,
}

impl Field {
    /// What the field accepts, in words.
    pub fn allowed(&self) -> String {
        match self.kind {
            Kind::Int { min, max } => format!("{min} to {max}"),
            Kind::Bytes => "bytes".into(),
        }
    }
}

/// How much of a salt's hash the key keeps.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SaltSize {
    /// Nothing: a place a workload's `[keys] salt` may fill.
    Off,
    /// The whole 32-bit hash: 4 bytes, or 8 lowercase hex digits.
    Hash,
    /// The hash mod `n`: 1 byte (2 above 256 buckets), or `n - 1`'s decimal width zero-padded.
    Buckets(u32),
}

/// How a salt or a stamp is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Form {
    /// Big-endian binary.
    Bytes,
    /// ASCII digits: hex for a whole hash, zero-padded decimal otherwise.
    Digits,
}

/// One part of a key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Segment {
    /// Seed 002's `hash(field)` (`(int)(v ^ (v >>> 32))` of the field as a Java long), whole
    /// or mod a bucket count, then `separator` (when the salt writes anything).
    Salt {
        /// The hashed field.
        field: usize,
        /// How much of the hash.
        size: SaltSize,
        /// Bytes or digits.
        form: Form,
        /// Written after it.
        separator: Vec<u8>,
    },
    /// A big-endian two's-complement integer of 1 to 8 bytes.
    Int {
        /// The field.
        field: usize,
        /// Its width.
        bytes: u8,
    },
    /// Epoch milliseconds, forward or as `Long.MAX_VALUE` minus them: 8 bytes, or 19 digits.
    Stamp {
        /// The field.
        field: usize,
        /// Forward or reverse.
        order: Order,
        /// Bytes or digits.
        form: Form,
    },
    /// A decimal integer: zero-padded to `width` digits, or as written (delimited).
    Decimal {
        /// The field.
        field: usize,
        /// Fixed width, or none.
        width: Option<u8>,
    },
    /// Text or bytes: exactly `width` bytes, or delimited by what follows.
    Text {
        /// The field.
        field: usize,
        /// Fixed width, or none.
        width: Option<u16>,
    },
    /// Text or bytes after their length, a big-endian unsigned integer of `length` bytes.
    Counted {
        /// The field.
        field: usize,
        /// The length's width: 1, 2 or 4 bytes.
        length: u8,
    },
    /// The same bytes in every key.
    Literal(Vec<u8>),
}

impl Segment {
    /// The field whose value this segment writes (a salt's is written elsewhere too).
    pub fn field(&self) -> Option<usize> {
        match *self {
            Segment::Salt { field, .. }
            | Segment::Int { field, .. }
            | Segment::Stamp { field, .. }
            | Segment::Decimal { field, .. }
            | Segment::Text { field, .. }
            | Segment::Counted { field, .. } => Some(field),
            Segment::Literal(_) => None,
        }
    }

    /// Its size in bytes, when every key has the same.
    pub fn width(&self) -> Option<usize> {
        match self {
            Segment::Salt {
                size, form, separator, ..
            } => Some(
                match (size, form) {
                    (SaltSize::Off, _) => return Some(0),
                    (SaltSize::Hash, Form::Bytes) => 4,
                    (SaltSize::Hash, Form::Digits) => 8,
                    (SaltSize::Buckets(n), Form::Bytes) => bucket_bytes(*n),
                    (SaltSize::Buckets(n), Form::Digits) => digits(u64::from(*n - 1)),
                } + separator.len(),
            ),
            Segment::Int { bytes, .. } => Some(usize::from(*bytes)),
            Segment::Stamp { form: Form::Bytes, .. } => Some(8),
            Segment::Stamp { form: Form::Digits, .. } => Some(19),
            Segment::Decimal { width, .. } => width.map(usize::from),
            Segment::Text { width, .. } => width.map(usize::from),
            Segment::Counted { .. } => None,
            Segment::Literal(b) => Some(b.len()),
        }
    }

    /// Whether its end is found only by what follows it.
    pub fn delimited(&self) -> bool {
        self.width().is_none() && !matches!(self, Segment::Counted { .. })
    }
}

fn bucket_bytes(n: u32) -> usize {
    if n <= 256 { 1 } else { 2 }
}

fn digits(mut v: u64) -> usize {
    let mut d = 1;
    while v >= 10 {
        v /= 10;
        d += 1;
    }
    d
}

/// A row key: its fields, and the segments that write them in order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Key {
    /// Its name in errors (the row kind's).
    pub name: String,
    /// The fields, in the order values are given.
    pub fields: Vec<Field>,
    /// The segments, in key order.
    pub segments: Vec<Segment>,
}

const I64_RANGE: (i128, i128) = (i64::MIN as i128, i64::MAX as i128);

impl Key {
    /// The key with every stamp written in `order`, where given, and every salt as `salt`
    /// says, where given: a workload's `[keys]` variant of a design.
    pub fn with_options(&self, order: Option<Order>, salt: Option<Salt>) -> Key {
        let mut k = self.clone();
        for s in &mut k.segments {
            match s {
                Segment::Stamp { order: o, .. } => {
                    if let Some(order) = order {
                        *o = order;
                    }
                }
                Segment::Salt { size, .. } => {
                    if let Some(salt) = salt {
                        *size = match salt {
                            Salt::None => SaltSize::Off,
                            Salt::Hash => SaltSize::Hash,
                            Salt::Buckets(n) => SaltSize::Buckets(u32::from(n)),
                        };
                    }
                }
                _ => {}
            }
        }
        k
    }

    /// The size of every key, when all are the same.
    pub fn fixed_len(&self) -> Option<usize> {
        self.segments.iter().map(Segment::width).sum()
    }

    /// The field named `name`.
    pub fn field(&self, name: &str) -> Option<usize> {
        self.fields.iter().position(|f| f.name == name)
    }

    fn int(&self, field: usize, v: Value<'_>) -> Result<i128> {
        let f = &self.fields[field];
        match (v, f.kind) {
            (Value::Int(v), Kind::Int { min, max }) if (min..=max).contains(&v) => Ok(v),
            (Value::Int(v), _) => Err(Error::OutOfRange {
                field: f.name.clone(),
                value: v.to_string(),
                allowed: f.allowed(),
            }),
            (Value::Bytes(b), _) => Err(Error::OutOfRange {
                field: f.name.clone(),
                value: format!("{:?}", to_string_binary(b)),
                allowed: f.allowed(),
            }),
        }
    }

    /// The bytes of a text field's value.
    fn bytes<'v>(&self, field: usize, v: Value<'v>) -> Result<&'v [u8]> {
        match v {
            Value::Bytes(b) => Ok(b),
            Value::Int(_) => Err(Error::OutOfRange {
                field: self.fields[field].name.clone(),
                value: format!("{v:?}"),
                allowed: "bytes".into(),
            }),
        }
    }

    fn malformed(&self, reason: String) -> Error {
        Error::Malformed {
            layout: self.name.clone(),
            reason,
        }
    }

    /// Appends the key of `values` (one per field, in field order) to `out`; on an error
    /// `out` holds what was written before it.
    pub fn encode_into(&self, values: &[Value<'_>], out: &mut Vec<u8>) -> Result<()> {
        self.encode_upto(values, self.segments.len(), out)
    }

    /// The first `segments` segments of the key of `values`: a prefix, whose fields alone
    /// need real values.
    pub fn prefix(&self, values: &[Value<'_>], segments: usize) -> Result<Vec<u8>> {
        let mut out = Vec::with_capacity(32);
        self.encode_upto(values, segments, &mut out)?;
        Ok(out)
    }

    fn encode_upto(&self, values: &[Value<'_>], upto: usize, out: &mut Vec<u8>) -> Result<()> {
        if values.len() != self.fields.len() {
            return Err(self.malformed(format!("{} values for {} fields", values.len(), self.fields.len())));
        }
        for (i, s) in self.segments.iter().enumerate().take(upto) {
            match s {
                Segment::Salt {
                    field,
                    size,
                    form,
                    separator,
                } => {
                    let v = self.int(*field, values[*field])?;
                    if write_salt(*size, *form, v, out) {
                        out.extend_from_slice(separator);
                    }
                }
                Segment::Int { field, bytes } => {
                    let v = self.int(*field, values[*field])?;
                    out.extend_from_slice(&v.to_be_bytes()[16 - usize::from(*bytes)..]);
                }
                Segment::Stamp { field, order, form } => {
                    let v = self.int(*field, values[*field])?;
                    if !(0..=i128::from(MAX)).contains(&v) {
                        return Err(Error::OutOfRange {
                            field: self.fields[*field].name.clone(),
                            value: v.to_string(),
                            allowed: "0 to 9223372036854775807".into(),
                        });
                    }
                    let stored = match order {
                        Order::Reverse => MAX - v as i64,
                        Order::Forward => v as i64,
                    };
                    match form {
                        Form::Bytes => out.extend_from_slice(&stored.to_be_bytes()),
                        Form::Digits => push_padded19(stored, out),
                    }
                }
                Segment::Decimal { field, width } => {
                    let v = self.int(*field, values[*field])?;
                    match width {
                        None if (I64_RANGE.0..=I64_RANGE.1).contains(&v) => push_decimal(v as i64, out),
                        None => push_decimal(v as u64, out),
                        Some(w) => {
                            let w = usize::from(*w);
                            if v < 0 || v >= 10i128.pow(w as u32) {
                                return Err(Error::OutOfRange {
                                    field: self.fields[*field].name.clone(),
                                    value: v.to_string(),
                                    allowed: format!("0 to {} ({w} digits)", 10i128.pow(w as u32) - 1),
                                });
                            }
                            let start = out.len();
                            push_decimal(v as u64, out);
                            let len = out.len() - start;
                            out.splice(start..start, std::iter::repeat_n(b'0', w - len));
                        }
                    }
                }
                Segment::Text { field, width } => {
                    let f = &self.fields[*field];
                    let b = self.bytes(*field, values[*field])?;
                    match width {
                        Some(w) if b.len() != usize::from(*w) => {
                            return Err(Error::OutOfRange {
                                field: f.name.clone(),
                                value: format!("{:?}", to_string_binary(b)),
                                allowed: format!("exactly {w} bytes"),
                            });
                        }
                        None => {
                            if let Some(t) = self.terminator(i)
                                && b.contains(&t)
                            {
                                return Err(Error::OutOfRange {
                                    field: f.name.clone(),
                                    value: format!("{:?}", to_string_binary(b)),
                                    allowed: format!("bytes without {:?}, which ends it", to_string_binary(&[t])),
                                });
                            }
                        }
                        _ => {}
                    }
                    out.extend_from_slice(b);
                }
                Segment::Counted { field, length } => {
                    let f = &self.fields[*field];
                    let b = self.bytes(*field, values[*field])?;
                    let n = usize::from(*length);
                    if n < 8 && b.len() >> (8 * n) != 0 {
                        return Err(Error::OutOfRange {
                            field: f.name.clone(),
                            value: format!("{} bytes", b.len()),
                            allowed: format!("at most {} bytes", (1u64 << (8 * n)) - 1),
                        });
                    }
                    out.extend_from_slice(&(b.len() as u64).to_be_bytes()[8 - n..]);
                    out.extend_from_slice(b);
                }
                Segment::Literal(b) => out.extend_from_slice(b),
            }
        }
        Ok(())
    }

    /// The key of `values` as a new vector.
    pub fn encode(&self, values: &[Value<'_>]) -> Result<Vec<u8>> {
        let mut out = Vec::with_capacity(self.fixed_len().unwrap_or(32));
        self.encode_into(values, &mut out)?;
        Ok(out)
    }

    /// The byte that ends delimited segment `i`: the first of the literal after it (none when
    /// it ends the key).
    fn terminator(&self, i: usize) -> Option<u8> {
        match self.segments.get(i + 1) {
            Some(Segment::Literal(b)) => b.first().copied(),
            _ => None,
        }
    }

    /// Reads a key: each field's name and value, in field order. Salts are checked against
    /// the fields they hash.
    pub fn decode(&self, key: &[u8]) -> Result<Vec<(&str, Owned)>> {
        if let Some(len) = self.fixed_len()
            && key.len() != len
        {
            return Err(Error::Length {
                layout: self.name.clone(),
                expected: len,
                actual: key.len(),
            });
        }
        let mut values: Vec<Option<Owned>> = vec![None; self.fields.len()];
        let mut salts = Vec::new();
        let mut at = 0;
        for (i, s) in self.segments.iter().enumerate() {
            let rest = &key[at..];
            let take = |n: usize, what: &str| -> Result<&[u8]> {
                rest.get(..n)
                    .ok_or_else(|| self.malformed(format!("{what} needs {n} bytes, {} left", rest.len())))
            };
            let name = |field: usize| self.fields[field].name.as_str();
            match s {
                Segment::Salt {
                    field, size, separator, ..
                } => {
                    if *size == SaltSize::Off {
                        continue;
                    }
                    let w = s.width().expect("salts have a width");
                    let part = take(w, &format!("the salt of {}", name(*field)))?;
                    salts.push((i, *field, part.to_vec()));
                    if !part.ends_with(separator) {
                        return Err(self.malformed(format!(
                            "the salt of {} does not end with {:?}",
                            name(*field),
                            to_string_binary(separator)
                        )));
                    }
                    at += w;
                }
                Segment::Int { field, bytes } => {
                    let n = usize::from(*bytes);
                    let part = take(n, name(*field))?;
                    let mut buf = [0u8; 16];
                    let negative =
                        matches!(self.fields[*field].kind, Kind::Int { min, .. } if min < 0) && part[0] & 0x80 != 0;
                    if negative {
                        buf = [0xFF; 16];
                    }
                    buf[16 - n..].copy_from_slice(part);
                    values[*field] = Some(Owned::Int(i128::from_be_bytes(buf)));
                    at += n;
                }
                Segment::Stamp { field, order, form } => {
                    let stored = match form {
                        Form::Bytes => {
                            let part = take(8, name(*field))?;
                            at += 8;
                            i64::from_be_bytes(part.try_into().expect("8 bytes"))
                        }
                        Form::Digits => {
                            let part = take(19, name(*field))?;
                            at += 19;
                            crate::keys::parse_padded19("", "", part).map_err(|_| {
                                self.malformed(if part.iter().all(u8::is_ascii_digit) {
                                    format!(
                                        "{} {:?} exceeds 9223372036854775807",
                                        name(*field),
                                        to_string_binary(part)
                                    )
                                } else {
                                    format!("{} {:?} is not 19 decimal digits", name(*field), to_string_binary(part))
                                })
                            })?
                        }
                    };
                    if stored < 0 {
                        return Err(self.malformed(format!("{} field {stored} is negative", name(*field))));
                    }
                    values[*field] = Some(Owned::Int(i128::from(match order {
                        Order::Reverse => MAX - stored,
                        Order::Forward => stored,
                    })));
                }
                Segment::Decimal { field, width } => {
                    let part = match width {
                        Some(w) => take(usize::from(*w), name(*field))?,
                        None => self.delimited_part(i, rest),
                    };
                    at += part.len();
                    let v = self.parse_decimal(*field, part, width.is_some())?;
                    values[*field] = Some(Owned::Int(v));
                }
                Segment::Text { field, width } => {
                    let part = match width {
                        Some(w) => take(usize::from(*w), name(*field))?,
                        None => self.delimited_part(i, rest),
                    };
                    at += part.len();
                    values[*field] = Some(Owned::Bytes(part.to_vec()));
                }
                Segment::Counted { field, length } => {
                    let n = usize::from(*length);
                    let head = take(n, &format!("the length of {}", name(*field)))?;
                    let mut buf = [0u8; 8];
                    buf[8 - n..].copy_from_slice(head);
                    let len = u64::from_be_bytes(buf) as usize;
                    let part = rest[n..].get(..len).ok_or_else(|| {
                        self.malformed(format!("{} needs {len} bytes, {} left", name(*field), rest.len() - n))
                    })?;
                    at += n + len;
                    values[*field] = Some(Owned::Bytes(part.to_vec()));
                }
                Segment::Literal(b) => {
                    if !rest.starts_with(b) {
                        let what = if self.segments[..i].iter().any(Segment::delimited) {
                            format!("missing the {:?} after {}", to_string_binary(b), self.before(i))
                        } else {
                            format!("expected {:?} at byte {at}", to_string_binary(b))
                        };
                        return Err(self.malformed(what));
                    }
                    at += b.len();
                }
            }
        }
        if at != key.len() {
            return Err(self.malformed(format!("{} bytes after the key's last field", key.len() - at)));
        }
        for (i, field, part) in salts {
            let Some(Owned::Int(v)) = values[field] else {
                continue;
            };
            let Segment::Salt { size, form, .. } = self.segments[i] else {
                continue;
            };
            let mut expected = Vec::new();
            write_salt(size, form, v, &mut expected);
            if !part.starts_with(&expected) {
                let shown = match form {
                    Form::Bytes => crate::keys::hex(&part[..expected.len()]),
                    Form::Digits => format!("{:?}", to_string_binary(&part[..expected.len()])),
                };
                return Err(self.malformed(format!(
                    "salt prefix {shown} does not match the {} {v}",
                    self.fields[field].name
                )));
            }
        }
        Ok(self
            .fields
            .iter()
            .zip(values)
            .map(|(f, v)| (f.name.as_str(), v.unwrap_or(Owned::Bytes(Vec::new()))))
            .collect())
    }

    /// What segment `i` follows, in words.
    fn before(&self, i: usize) -> String {
        match self.segments[..i].iter().rev().find_map(Segment::field) {
            Some(f) => format!("the {}", self.fields[f].name),
            None => "the key's start".into(),
        }
    }

    /// Where each segment lies in `key` (an empty range for a salt that is off), once
    /// [`Key::decode`] has read it.
    pub fn spans(&self, key: &[u8]) -> Result<Vec<std::ops::Range<usize>>> {
        self.decode(key)?;
        Ok(self.places(key))
    }

    /// Where each segment lies in `key`, a key this key's encoder made (unchecked: a key
    /// read from elsewhere goes through [`Key::spans`]).
    pub fn places(&self, key: &[u8]) -> Vec<std::ops::Range<usize>> {
        let mut at = 0;
        let mut out = Vec::with_capacity(self.segments.len());
        for (i, s) in self.segments.iter().enumerate() {
            let rest = &key[at..];
            let n = match s {
                Segment::Counted { length, .. } => {
                    let n = usize::from(*length);
                    let mut buf = [0u8; 8];
                    buf[8 - n..].copy_from_slice(&rest[..n]);
                    n + u64::from_be_bytes(buf) as usize
                }
                s => s.width().unwrap_or_else(|| self.delimited_part(i, rest).len()),
            };
            out.push(at..at + n);
            at += n;
        }
        out
    }

    fn delimited_part<'k>(&self, i: usize, rest: &'k [u8]) -> &'k [u8] {
        match self.terminator(i) {
            Some(t) => &rest[..rest.iter().position(|&b| b == t).unwrap_or(rest.len())],
            None => rest,
        }
    }

    fn parse_decimal(&self, field: usize, part: &[u8], padded: bool) -> Result<i128> {
        let f = &self.fields[field];
        let bad = || {
            self.malformed(format!(
                "{} {:?} is not a decimal number",
                f.name,
                to_string_binary(part)
            ))
        };
        let s = std::str::from_utf8(part).map_err(|_| bad())?;
        let ok = if padded {
            !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit())
        } else {
            // As written: no sign but a minus, no leading zero.
            let digits = s.strip_prefix('-').unwrap_or(s);
            !digits.is_empty()
                && digits.bytes().all(|b| b.is_ascii_digit())
                && (digits == "0" || !digits.starts_with('0'))
                && s != "-0"
        };
        if !ok {
            return Err(bad());
        }
        let v: i128 = s.parse().map_err(|_| bad())?;
        if let Kind::Int { min, max } = f.kind
            && !(min..=max).contains(&v)
        {
            return Err(bad());
        }
        Ok(v)
    }
}

/// Writes a salt for field value `v`; whether it wrote anything.
pub(crate) fn write_salt(size: SaltSize, form: Form, v: i128, out: &mut Vec<u8>) -> bool {
    // The field as a Java long: an unsigned 64-bit id keeps its bits.
    let h = seed_hash(v as i64);
    match (size, form) {
        (SaltSize::Off, _) => return false,
        (SaltSize::Hash, Form::Bytes) => out.extend_from_slice(&h.to_be_bytes()),
        (SaltSize::Hash, Form::Digits) => {
            let mut s = String::with_capacity(8);
            write!(s, "{:08x}", h as u32).expect("writing to a String cannot fail");
            out.extend_from_slice(s.as_bytes());
        }
        (SaltSize::Buckets(n), form) => write_bucket(n, form, h as u32 % n, out),
    }
    true
}

/// Appends bucket `b` of a salt of `n` buckets, as a key writes it.
pub fn write_bucket(n: u32, form: Form, b: u32, out: &mut Vec<u8>) {
    match form {
        Form::Bytes if n <= 256 => out.push(b as u8),
        Form::Bytes => out.extend_from_slice(&(b as u16).to_be_bytes()),
        Form::Digits => {
            let w = digits(u64::from(n - 1));
            let start = out.len();
            push_decimal(b, out);
            let len = out.len() - start;
            out.splice(start..start, std::iter::repeat_n(b'0', w - len));
        }
    }
}

#[cfg(test)]
mod tests;
