//! Byte-exact row-key codecs for the seed designs.
//!
//! Every codec writes into the caller's buffer and decodes from a borrowed slice. Integers are
//! big-endian two's complement, as Java's `Bytes.toBytes` writes them; text keys are ASCII.
//! The seed layout is the default; the variants the seeds discuss (forward vs reverse stamp,
//! salting) are [`KeyOptions`].
//!
//! ```
//! use tallrow::keys::{KeyOptions, actions, hex};
//!
//! let key = actions::Key { userid: 1, stamp: 1_600_000_000_000, actionid: 7 };
//! let mut row = Vec::new();
//! key.encode_into(KeyOptions::SEED, &mut row)?;
//! assert_eq!(hex(&row), "000000017ffffe8b78917fff00000007");
//! assert_eq!(actions::Key::decode(KeyOptions::SEED, &row)?, key);
//! # Ok::<(), tallrow::keys::Error>(())
//! ```

pub mod actions;
pub mod blog;
mod layout;
pub mod series;
pub mod weibo;

pub use layout::{Field, Layout};

use std::fmt::Write as _;

/// Java's `Long.MAX_VALUE`, the base of every reverse stamp.
pub const MAX: i64 = i64::MAX;

/// A codec error: which field or which part of a key is wrong, and why.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Error {
    /// A field value outside what the layout can encode.
    #[error("{field}: {value} is out of range ({allowed})")]
    OutOfRange {
        /// The field's name.
        field: &'static str,
        /// The offending value, as given.
        value: String,
        /// What the field accepts.
        allowed: &'static str,
    },
    /// A binary key of the wrong size.
    #[error("{layout} keys are {expected} bytes, got {actual}")]
    Length {
        /// The layout's name.
        layout: &'static str,
        /// The size the layout (with its options) requires.
        expected: usize,
        /// The size given.
        actual: usize,
    },
    /// A key whose bytes do not form a key of the layout.
    #[error("{layout}: {reason}")]
    Malformed {
        /// The layout's name.
        layout: &'static str,
        /// What is wrong.
        reason: String,
    },
}

/// Result of a codec call.
pub type Result<T> = std::result::Result<T, Error>;

/// How a time field is written into the key.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum Order {
    /// `MAX - stamp`: the newest rows sort first (every seed's choice).
    #[default]
    Reverse,
    /// The stamp itself: the oldest rows sort first (seed 001's first `uid_ts` key).
    Forward,
}

named_values!(Order, "order");

/// A prefix that spreads users over regions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Salt {
    /// No prefix.
    None,
    /// Seed 002's `hash(id)`: 4 bytes (binary keys) or 8 lowercase hex digits and `_` (text keys).
    Hash,
    /// `hash(id) mod n` for 1 <= n <= 256: 1 byte (binary keys) or zero-padded decimal and `_`.
    Buckets(u16),
}

/// The key-design variant of a layout.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KeyOptions {
    /// Forward or reverse time field.
    pub order: Order,
    /// Salt prefix.
    pub salt: Salt,
}

impl KeyOptions {
    /// The seed layout of every design but the blog: reverse stamp, no salt.
    pub const SEED: KeyOptions = KeyOptions {
        order: Order::Reverse,
        salt: Salt::None,
    };
    /// Seed 002's layout: reverse stamp, `hash(uid)` prefix.
    pub const BLOG_SEED: KeyOptions = KeyOptions {
        order: Order::Reverse,
        salt: Salt::Hash,
    };
}

impl std::fmt::Display for KeyOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let order = self.order;
        match self.salt {
            Salt::None => write!(f, "order={order} salt=none"),
            Salt::Hash => write!(f, "order={order} salt=hash"),
            Salt::Buckets(n) => write!(f, "order={order} salt={n}"),
        }
    }
}

/// Seed 002's hash: `(int)(value ^ (value >>> 32))`.
pub fn seed_hash(value: i64) -> i32 {
    (value ^ ((value as u64) >> 32) as i64) as i32
}

impl Salt {
    /// Checks the bucket count.
    pub fn validate(self) -> Result<Self> {
        match self {
            Salt::Buckets(n) if !(1..=256).contains(&n) => Err(Error::OutOfRange {
                field: "salt",
                value: n.to_string(),
                allowed: "1 to 256 buckets",
            }),
            s => Ok(s),
        }
    }

    /// Size of the binary prefix in bytes.
    pub fn binary_len(self) -> usize {
        match self {
            Salt::None => 0,
            Salt::Hash => 4,
            Salt::Buckets(_) => 1,
        }
    }

    /// Writes the binary prefix for `id`.
    pub fn encode_binary(self, id: i64, out: &mut Vec<u8>) {
        match self {
            Salt::None => {}
            Salt::Hash => out.extend_from_slice(&seed_hash(id).to_be_bytes()),
            Salt::Buckets(n) => out.push(bucket(id, n) as u8),
        }
    }

    /// Checks the binary prefix of `key` against `id`.
    pub fn check_binary(self, layout: &'static str, key: &[u8], id: i64) -> Result<()> {
        let mut expected = Vec::with_capacity(4);
        self.encode_binary(id, &mut expected);
        if key[..expected.len()] == expected[..] {
            Ok(())
        } else {
            Err(Error::Malformed {
                layout,
                reason: format!("salt prefix {} does not match the id {id}", hex(&key[..expected.len()])),
            })
        }
    }

    /// Writes the text prefix (with its `_` separator) for `id`.
    pub fn encode_text(self, id: i64, out: &mut Vec<u8>) {
        let mut s = String::new();
        match self {
            Salt::None => return,
            Salt::Hash => write!(s, "{:08x}_", seed_hash(id) as u32),
            Salt::Buckets(n) => write!(s, "{:0w$}_", bucket(id, n), w = digits(u64::from(n - 1))),
        }
        .expect("writing to a String cannot fail");
        out.extend_from_slice(s.as_bytes());
    }

    /// Splits the text prefix off `key`, checking it later against the id.
    pub fn split_text(self, layout: &'static str, key: &[u8]) -> Result<(Vec<u8>, usize)> {
        if self == Salt::None {
            return Ok((Vec::new(), 0));
        }
        match key.iter().position(|&b| b == b'_') {
            Some(i) => Ok((key[..=i].to_vec(), i + 1)),
            None => Err(Error::Malformed {
                layout,
                reason: "missing the salt prefix".into(),
            }),
        }
    }

    /// Checks a text prefix split off by [`Salt::split_text`] against `id`.
    pub fn check_text(self, layout: &'static str, prefix: &[u8], id: i64) -> Result<()> {
        let mut expected = Vec::new();
        self.encode_text(id, &mut expected);
        if prefix == expected {
            Ok(())
        } else {
            Err(Error::Malformed {
                layout,
                reason: format!("salt prefix {:?} does not match the id {id}", to_string_binary(prefix)),
            })
        }
    }
}

fn bucket(id: i64, n: u16) -> u32 {
    seed_hash(id) as u32 % u32::from(n)
}

fn digits(mut v: u64) -> usize {
    let mut d = 1;
    while v >= 10 {
        v /= 10;
        d += 1;
    }
    d
}

/// Encodes a time field; stamps are epoch milliseconds and must not be negative.
pub fn encode_stamp(order: Order, field: &'static str, stamp: i64) -> Result<i64> {
    if stamp < 0 {
        return Err(Error::OutOfRange {
            field,
            value: stamp.to_string(),
            allowed: "0 to 9223372036854775807",
        });
    }
    Ok(match order {
        Order::Reverse => MAX - stamp,
        Order::Forward => stamp,
    })
}

/// Decodes a time field written by [`encode_stamp`].
pub fn decode_stamp(order: Order, layout: &'static str, field: &'static str, stored: i64) -> Result<i64> {
    if stored < 0 {
        return Err(Error::Malformed {
            layout,
            reason: format!("{field} field {stored} is negative"),
        });
    }
    Ok(match order {
        Order::Reverse => MAX - stored,
        Order::Forward => stored,
    })
}

/// Reads a big-endian `i32` at `at`.
pub fn get_i32(key: &[u8], at: usize) -> i32 {
    i32::from_be_bytes(key[at..at + 4].try_into().expect("4 bytes"))
}

/// Reads a big-endian `i64` at `at`.
pub fn get_i64(key: &[u8], at: usize) -> i64 {
    i64::from_be_bytes(key[at..at + 8].try_into().expect("8 bytes"))
}

/// Writes a non-negative number as 19 zero-padded decimal digits (the width of `MAX`), so that
/// text keys sort numerically.
pub fn push_padded19(value: i64, out: &mut Vec<u8>) {
    debug_assert!(value >= 0);
    let mut buf = [b'0'; 19];
    write_digits(value as u64, &mut buf);
    out.extend_from_slice(&buf);
}

/// `"00" ..= "99"`: keys are built for every generated row, two digits per division.
const PAIRS: &[u8; 200] = b"0001020304050607080910111213141516171819\
2021222324252627282930313233343536373839\
4041424344454647484950515253545556575859\
6061626364656667686970717273747576777879\
8081828384858687888990919293949596979899";

/// Writes `v`'s decimal digits at the end of `buf` and returns where they start.
fn write_digits(mut v: u64, buf: &mut [u8]) -> usize {
    let mut i = buf.len();
    while v >= 100 {
        let pair = (v % 100) as usize * 2;
        v /= 100;
        i -= 2;
        buf[i..i + 2].copy_from_slice(&PAIRS[pair..pair + 2]);
    }
    if v >= 10 {
        i -= 2;
        buf[i..i + 2].copy_from_slice(&PAIRS[v as usize * 2..v as usize * 2 + 2]);
    } else {
        i -= 1;
        buf[i] = b'0' + v as u8;
    }
    i
}

/// An integer that [`push_decimal`] writes.
pub trait Decimal: Copy {
    /// Its sign, and its magnitude.
    fn parts(self) -> (bool, u64);
}

macro_rules! decimal {
    ($($t:ty),*) => {$(
        impl Decimal for $t {
            fn parts(self) -> (bool, u64) {
                (self < 0, self.unsigned_abs() as u64)
            }
        }
    )*};
}
decimal!(i32, i64, isize);

macro_rules! unsigned {
    ($($t:ty),*) => {$(
        impl Decimal for $t {
            fn parts(self) -> (bool, u64) {
                (false, self as u64)
            }
        }
    )*};
}
unsigned!(u32, u64, usize);

/// Writes a decimal number, as `Display` does.
pub fn push_decimal(value: impl Decimal, out: &mut Vec<u8>) {
    let (negative, magnitude) = value.parts();
    if negative {
        out.push(b'-');
    }
    let mut buf = [0u8; 20];
    let at = write_digits(magnitude, &mut buf);
    out.extend_from_slice(&buf[at..]);
}

/// The smallest key greater than every key that starts with `prefix`; empty (no upper bound)
/// when the prefix is all `0xFF`.
pub fn next_prefix(prefix: &[u8]) -> Vec<u8> {
    let mut out = prefix.to_vec();
    while let Some(last) = out.pop() {
        if last < 0xFF {
            out.push(last + 1);
            return out;
        }
    }
    out
}

/// Lowercase hex.
pub fn hex(bytes: &[u8]) -> String {
    let mut s = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        write!(s, "{b:02x}").expect("writing to a String cannot fail");
    }
    s
}

/// Parses hex (either case); errors say where the input goes wrong.
pub fn parse_hex(text: &str) -> std::result::Result<Vec<u8>, String> {
    if !text.len().is_multiple_of(2) {
        return Err(format!("hex has an odd number of digits ({})", text.len()));
    }
    text.as_bytes()
        .chunks(2)
        .enumerate()
        .map(|(i, pair)| {
            std::str::from_utf8(pair)
                .ok()
                .and_then(|p| u8::from_str_radix(p, 16).ok())
                .ok_or_else(|| {
                    format!(
                        "hex digit pair {} ({:?}) is not hex",
                        i + 1,
                        String::from_utf8_lossy(pair)
                    )
                })
        })
        .collect()
}

/// HBase's `Bytes.toStringBinary`: printable ASCII but `\` as is, every other byte as `\xHH`.
pub fn to_string_binary(bytes: &[u8]) -> String {
    let mut s = String::with_capacity(bytes.len());
    for &b in bytes {
        if (b' '..=b'~').contains(&b) && b != b'\\' {
            s.push(b as char);
        } else {
            write!(s, "\\x{b:02X}").expect("writing to a String cannot fail");
        }
    }
    s
}

/// HBase's `Bytes.toBytesBinary`, the inverse of [`to_string_binary`]: `\xHH` is a byte,
/// every other character its own byte; the `\` of a `\x` without two hex digits after it is
/// dropped, as HBase drops it.
pub fn from_string_binary(s: &str) -> Vec<u8> {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'\\' && b.get(i + 1) == Some(&b'x') {
            let hex = b.get(i + 2..i + 4).filter(|h| h.iter().all(u8::is_ascii_hexdigit));
            if let Some(v) = hex.and_then(|h| u8::from_str_radix(std::str::from_utf8(h).ok()?, 16).ok()) {
                out.push(v);
                i += 4;
            } else {
                i += 1;
            }
            continue;
        }
        out.push(b[i]);
        i += 1;
    }
    out
}

/// Parses a text field of a text key: optional `-` then digits, canonical (no leading zeros,
/// no `+`), as Java's `Long.toString` writes it.
pub(crate) fn parse_text_int<T: std::str::FromStr + ToString>(
    layout: &'static str,
    field: &'static str,
    part: &[u8],
) -> Result<T> {
    let bad = || Error::Malformed {
        layout,
        reason: format!("{field} {:?} is not a decimal number", to_string_binary(part)),
    };
    let s = std::str::from_utf8(part).map_err(|_| bad())?;
    let v: T = s.parse().map_err(|_| bad())?;
    if v.to_string() != s {
        return Err(bad());
    }
    Ok(v)
}

/// Parses a 19-digit zero-padded time field of a text key.
pub(crate) fn parse_padded19(layout: &'static str, field: &'static str, part: &[u8]) -> Result<i64> {
    if part.len() != 19 || !part.iter().all(u8::is_ascii_digit) {
        return Err(Error::Malformed {
            layout,
            reason: format!("{field} {:?} is not 19 decimal digits", to_string_binary(part)),
        });
    }
    std::str::from_utf8(part)
        .ok()
        .and_then(|s| s.parse::<i64>().ok())
        .ok_or_else(|| Error::Malformed {
            layout,
            reason: format!("{field} {:?} exceeds 9223372036854775807", to_string_binary(part)),
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seed_hash_matches_java() {
        // (int)(v ^ (v >>> 32)) for 123456789012 = 0x1C_BE991A14.
        assert_eq!(seed_hash(123_456_789_012) as u32, 0xBE99_1A08);
        assert_eq!(seed_hash(1), 1);
        assert_eq!(seed_hash(-1), 0);
        assert_eq!(seed_hash(i64::MIN) as u32, 0x8000_0000);
    }

    #[test]
    fn to_string_binary_matches_hbase() {
        assert_eq!(to_string_binary(b"ab\\c ~"), "ab\\x5Cc ~");
        assert_eq!(to_string_binary(&[0x00, 0x7f, 0xff, b'x']), "\\x00\\x7F\\xFFx");
    }

    #[test]
    fn from_string_binary_inverts_it() {
        assert_eq!(from_string_binary("ab\\x5Cc ~"), b"ab\\c ~");
        assert_eq!(from_string_binary("\\x00\\x7F\\xffx"), [0x00, 0x7f, 0xff, b'x']);
        // As HBase: the backslash of a \x without two hex digits is dropped.
        assert_eq!(from_string_binary("a\\xZ1\\x+1\\x"), b"axZ1x+1x");
        let all: Vec<u8> = (0..=255).collect();
        assert_eq!(from_string_binary(&to_string_binary(&all)), all);
    }

    #[test]
    fn next_prefix_carries_and_ends_unbounded() {
        assert_eq!(next_prefix(b"ab"), b"ac");
        assert_eq!(next_prefix(&[1, 0xff, 0xff]), vec![2]);
        assert_eq!(next_prefix(&[0xff, 0xff]), Vec::<u8>::new());
    }

    #[test]
    fn padded19_is_fixed_width() {
        let mut out = Vec::new();
        push_padded19(0, &mut out);
        push_padded19(MAX, &mut out);
        assert_eq!(out, b"00000000000000000009223372036854775807");
    }

    #[test]
    fn decimals_are_what_display_writes() {
        let mut cases: Vec<i64> = vec![
            0,
            1,
            9,
            10,
            11,
            99,
            100,
            101,
            999,
            1000,
            i64::MAX,
            i64::MIN,
            -1,
            -10,
            -100,
        ];
        cases.extend((1..19).map(|p| 10i64.pow(p) - 1));
        cases.extend((1..19).map(|p| 10i64.pow(p)));
        cases.extend((1..19).map(|p| -(10i64.pow(p))));
        for v in cases {
            let mut out = Vec::new();
            push_decimal(v, &mut out);
            assert_eq!(out, v.to_string().as_bytes());
            if v >= 0 {
                out.clear();
                push_padded19(v, &mut out);
                assert_eq!(out, format!("{v:019}").as_bytes());
            }
        }
        for v in [0u64, 7, 42, u64::MAX, u64::MAX / 10] {
            let mut out = Vec::new();
            push_decimal(v, &mut out);
            assert_eq!(out, v.to_string().as_bytes());
        }
        for v in [i32::MIN, i32::MAX, -5, 0, 123_456] {
            let mut out = Vec::new();
            push_decimal(v, &mut out);
            assert_eq!(out, v.to_string().as_bytes());
        }
    }

    proptest::proptest! {
        #[test]
        fn any_integer_is_written_as_display_writes(v: i64, u: u64, w: i32) {
            let mut out = Vec::new();
            push_decimal(v, &mut out);
            push_decimal(u, &mut out);
            push_decimal(w, &mut out);
            proptest::prop_assert_eq!(out, format!("{v}{u}{w}").into_bytes());
            let mut padded = Vec::new();
            push_padded19(v.saturating_abs(), &mut padded);
            proptest::prop_assert_eq!(padded, format!("{:019}", v.saturating_abs()).into_bytes());
        }
    }

    #[test]
    fn hex_round_trips_and_rejects_odd_input() {
        assert_eq!(parse_hex("00ff7A").unwrap(), vec![0, 0xff, 0x7a]);
        assert_eq!(hex(&[0, 0xff, 0x7a]), "00ff7a");
        assert!(parse_hex("abc").unwrap_err().contains("odd"));
        assert!(parse_hex("zz").unwrap_err().contains("pair 1"));
    }

    #[test]
    fn salt_buckets_are_bounded() {
        assert!(Salt::Buckets(0).validate().is_err());
        assert!(Salt::Buckets(257).validate().is_err());
        assert_eq!(Salt::Buckets(256).validate(), Ok(Salt::Buckets(256)));
        let mut out = Vec::new();
        Salt::Buckets(16).encode_text(21, &mut out);
        assert_eq!(out, b"05_");
        out.clear();
        Salt::Buckets(8).encode_text(21, &mut out);
        assert_eq!(out, b"5_");
    }
}
