//! A seeded generator of hostile calls against the server's request path: every call of both
//! services, shaped by HBase's own IDL files, with honest values, lists of the smallest
//! elements the wire allows, and lengths and counts that claim far more than the request
//! carries, then truncated and corrupted at random. Each request goes through the reader, the
//! generated processor and the handler of a real server, and the memory allocated while it
//! is served is held to a small multiple of the request's own size.

use super::handler::{Handler, Thrift2};
use super::{args, args2};
use crate::idl::thrift1::HbaseSyncProcessor;
use crate::idl::thrift2::THBaseServiceSyncProcessor;
use crate::store::memory::Memory;
use crate::wire::{Api, ArgDefaults, FramedReader, Input, Protocol};
use std::collections::HashMap;
use std::io::Read;
use std::sync::Arc;
use std::time::Duration;
use thrift::protocol::{
    TBinaryOutputProtocol, TCompactOutputProtocol, TFieldIdentifier, TInputProtocol, TListIdentifier, TMapIdentifier,
    TMessageIdentifier, TMessageType, TOutputProtocol, TSetIdentifier, TStructIdentifier, TType,
};
use thrift::server::TProcessor;

/// Most bytes a request may make the server hold at once, per byte of the request.
const PER_BYTE: u64 = 128;
/// Allocated by any request however small: replies, errors, a scanner, a table's metadata.
const FIXED: u64 = 64 << 10;

/// A type as the IDL spells it, typedefs and enums resolved.
#[derive(Debug, Clone)]
enum Ty {
    Bool,
    Byte,
    I16,
    I32,
    I64,
    Double,
    Bytes,
    List(Box<Ty>),
    Set(Box<Ty>),
    Map(Box<Ty>, Box<Ty>),
    Struct(String),
}

type Fields = Vec<(i16, Ty)>;

/// The structs and the calls of one IDL file.
struct Idl {
    structs: HashMap<String, Fields>,
    calls: Vec<(String, Fields)>,
}

/// Reads the parts of a Thrift IDL that shape a request: typedefs, enums, structs, unions,
/// exceptions and the service's calls.
fn parse(text: &str) -> Idl {
    let tokens = tokenize(text);
    let mut typedefs: HashMap<String, String> = HashMap::new();
    let mut enums = Vec::new();
    let mut raw_structs: Vec<(String, Vec<(i16, String)>)> = Vec::new();
    let mut raw_calls = Vec::new();
    let mut i = 0;
    while i < tokens.len() {
        match tokens[i].as_str() {
            "namespace" => i += 3,
            "typedef" => {
                let (ty, next) = type_text(&tokens, i + 1);
                typedefs.insert(tokens[next].clone(), ty);
                i = next + 1;
            }
            "enum" => {
                enums.push(tokens[i + 1].clone());
                i = skip_block(&tokens, i + 2);
            }
            "struct" | "union" | "exception" => {
                let name = tokens[i + 1].clone();
                let (fields, next) = fields(&tokens, i + 3, "}");
                raw_structs.push((name, fields));
                i = next + 1;
            }
            "service" => {
                i += 3;
                while tokens[i] != "}" {
                    if tokens[i] == "oneway" {
                        i += 1;
                    }
                    let (_, next) = type_text(&tokens, i);
                    let name = tokens[next].clone();
                    let (args, next) = fields(&tokens, next + 2, ")");
                    i = next + 1;
                    if tokens[i] == "throws" {
                        i = fields(&tokens, i + 2, ")").1 + 1;
                    }
                    if tokens[i] == "," || tokens[i] == ";" {
                        i += 1;
                    }
                    raw_calls.push((name, args));
                }
                i += 1;
            }
            _ => i += 1,
        }
    }
    let resolve = |t: &str| resolve(t, &typedefs, &enums);
    Idl {
        structs: raw_structs
            .into_iter()
            .map(|(name, f)| (name, f.iter().map(|(id, t)| (*id, resolve(t))).collect()))
            .collect(),
        calls: raw_calls
            .into_iter()
            .map(|(name, f)| (name, f.iter().map(|(id, t)| (*id, resolve(t))).collect()))
            .collect(),
    }
}

fn tokenize(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let b = text.as_bytes();
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        if b[i..].starts_with(b"/*") {
            i += text[i..].find("*/").map_or(b.len(), |e| e + 2);
        } else if b[i..].starts_with(b"//") || c == b'#' {
            i += text[i..].find('\n').unwrap_or(b.len() - i);
        } else if c == b'"' || c == b'\'' {
            let end = text[i + 1..].find(c as char).map_or(b.len(), |e| i + 1 + e + 1);
            out.push(text[i..end].to_string());
            i = end;
        } else if c.is_ascii_alphanumeric() || c == b'_' || c == b'.' || c == b'-' {
            let start = i;
            while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_' || b[i] == b'.' || b[i] == b'-') {
                i += 1;
            }
            out.push(text[start..i].to_string());
        } else {
            if !c.is_ascii_whitespace() {
                out.push((c as char).to_string());
            }
            i += 1;
        }
    }
    out
}

/// A type starting at `i`, as text; and the index after it.
fn type_text(tokens: &[String], i: usize) -> (String, usize) {
    if tokens[i + 1] != "<" {
        return (tokens[i].clone(), i + 1);
    }
    let mut depth = 0;
    let mut j = i;
    let mut text = String::new();
    loop {
        text.push_str(&tokens[j]);
        match tokens[j].as_str() {
            "<" => depth += 1,
            ">" => {
                depth -= 1;
                if depth == 0 {
                    return (text, j + 1);
                }
            }
            _ => {}
        }
        j += 1;
    }
}

/// Fields `id: [required|optional] type name [= default]`, up to `end`.
fn fields(tokens: &[String], mut i: usize, end: &str) -> (Vec<(i16, String)>, usize) {
    let mut out = Vec::new();
    while tokens[i] != end {
        let id: i16 = tokens[i].parse().expect("field id");
        i += 2;
        if tokens[i] == "required" || tokens[i] == "optional" {
            i += 1;
        }
        let (ty, next) = type_text(tokens, i);
        i = next + 1;
        if tokens[i] == "=" {
            i += 1;
            i = if tokens[i] == "[" || tokens[i] == "{" {
                skip_block(tokens, i)
            } else {
                i + 1
            };
        }
        if tokens[i] == "," || tokens[i] == ";" {
            i += 1;
        }
        out.push((id, ty));
    }
    (out, i)
}

/// Past a balanced `{...}` or `[...]` starting at `i`.
fn skip_block(tokens: &[String], mut i: usize) -> usize {
    let mut depth = 0;
    loop {
        match tokens[i].as_str() {
            "{" | "[" => depth += 1,
            "}" | "]" => {
                depth -= 1;
                if depth == 0 {
                    return i + 1;
                }
            }
            _ => {}
        }
        i += 1;
    }
}

fn resolve(t: &str, typedefs: &HashMap<String, String>, enums: &[String]) -> Ty {
    let inner = |s: &str| Box::new(resolve(s, typedefs, enums));
    if let Some(rest) = t.strip_prefix("list<").or_else(|| t.strip_prefix("set<")) {
        let element = inner(&rest[..rest.len() - 1]);
        return if t.starts_with("list") {
            Ty::List(element)
        } else {
            Ty::Set(element)
        };
    }
    if let Some(rest) = t.strip_prefix("map<") {
        let body = &rest[..rest.len() - 1];
        let mut depth = 0;
        let comma = body
            .char_indices()
            .find(|&(_, c)| {
                match c {
                    '<' => depth += 1,
                    '>' => depth -= 1,
                    _ => {}
                }
                c == ',' && depth == 0
            })
            .map(|(i, _)| i)
            .expect("map<K,V>");
        return Ty::Map(inner(&body[..comma]), inner(&body[comma + 1..]));
    }
    if let Some(real) = typedefs.get(t) {
        return resolve(real, typedefs, enums);
    }
    match t {
        "bool" => Ty::Bool,
        "byte" | "i8" => Ty::Byte,
        "i16" => Ty::I16,
        "i32" => Ty::I32,
        "i64" => Ty::I64,
        "double" => Ty::Double,
        "binary" | "string" => Ty::Bytes,
        _ if enums.iter().any(|e| e == t) => Ty::I32,
        _ => Ty::Struct(t.to_string()),
    }
}

/// SplitMix64: a seeded generator, so that a failing case can be run again.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }

    fn chance(&mut self, percent: u64) -> bool {
        self.below(100) < percent
    }
}

/// Generation stopped: the request ends here, a claim left unpaid.
struct Cut;

/// How values are chosen.
#[derive(Clone, Copy, PartialEq)]
enum Shape {
    /// Random values of modest size.
    Honest,
    /// The smallest encoding of every value: empty structs and strings, zeros, many of them.
    Smallest,
}

/// Claimed lengths and counts that a hostile client sends with few bytes behind them.
const CLAIMS: [i32; 6] = [i32::MAX, 67_108_800, 1 << 26, 1 << 20, 65_536, 4_096];

struct Gen<'a> {
    idl: &'a Idl,
    rng: Rng,
}

impl Gen<'_> {
    fn value(&mut self, o: &mut dyn TOutputProtocol, ty: &Ty, shape: Shape, depth: usize) -> Result<(), Cut> {
        let small = shape == Shape::Smallest;
        let w = |r: thrift::Result<()>| r.map_err(|_| Cut);
        match ty {
            Ty::Bool => w(o.write_bool(!small && self.rng.chance(50))),
            Ty::Byte => w(o.write_i8(if small { 0 } else { self.rng.next() as i8 })),
            Ty::I16 => w(o.write_i16(if small { 0 } else { self.rng.next() as i16 })),
            Ty::I32 => w(o.write_i32(if small { 0 } else { self.int() as i32 })),
            Ty::I64 => w(o.write_i64(if small { 0 } else { self.int() })),
            Ty::Double => w(o.write_double(self.rng.next() as f64)),
            Ty::Bytes => {
                if !small && self.rng.chance(3) {
                    // A length claimed, a few bytes sent.
                    let claim = CLAIMS[self.rng.below(CLAIMS.len() as u64) as usize];
                    w(o.write_i32(claim))?;
                    w(o.write_bytes(&vec![b'x'; self.rng.below(8) as usize]))?;
                    return Err(Cut);
                }
                let len = match (small, self.rng.below(10)) {
                    (true, _) => 0,
                    (false, 0) => self.rng.below(400),
                    (false, _) => self.rng.below(12),
                };
                let bytes: Vec<u8> = (0..len).map(|_| b'a' + self.rng.below(4) as u8).collect();
                w(o.write_bytes(&bytes))
            }
            Ty::List(t) | Ty::Set(t) => {
                let (n, claimed) = self.count(shape, depth);
                let kind = self.wire_type(t);
                if matches!(ty, Ty::List(_)) {
                    w(o.write_list_begin(&TListIdentifier::new(kind, claimed)))?;
                } else {
                    w(o.write_set_begin(&TSetIdentifier::new(kind, claimed)))?;
                }
                for _ in 0..n {
                    self.value(o, t, shape, depth + 1)?;
                }
                if n < claimed as usize {
                    return Err(Cut);
                }
                w(o.write_list_end())
            }
            Ty::Map(k, v) => {
                let (n, claimed) = self.count(shape, depth);
                let (kk, vk) = (self.wire_type(k), self.wire_type(v));
                w(o.write_map_begin(&TMapIdentifier::new(kk, vk, claimed)))?;
                for _ in 0..n {
                    self.value(o, k, shape, depth + 1)?;
                    self.value(o, v, shape, depth + 1)?;
                }
                if n < claimed as usize {
                    return Err(Cut);
                }
                w(o.write_map_end())
            }
            Ty::Struct(name) => {
                let fields = self.idl.structs.get(name).cloned().unwrap_or_default();
                self.structure(o, &fields, shape, depth)
            }
        }
    }

    fn structure(
        &mut self,
        o: &mut dyn TOutputProtocol,
        fields: &Fields,
        shape: Shape,
        depth: usize,
    ) -> Result<(), Cut> {
        let w = |r: thrift::Result<()>| r.map_err(|_| Cut);
        w(o.write_struct_begin(&TStructIdentifier::new("s")))?;
        if shape == Shape::Honest && depth < 6 {
            for (id, ty) in fields {
                if !self.rng.chance(75) {
                    continue;
                }
                if self.rng.chance(4) {
                    // A field of the wrong type, which the reader skips.
                    let other = [Ty::I64, Ty::Bytes, Ty::List(Box::new(Ty::Bytes)), Ty::Bool];
                    let other = &other[self.rng.below(4) as usize];
                    w(o.write_field_begin(&TFieldIdentifier::new("f", self.wire_type(other), *id)))?;
                    self.value(o, other, shape, depth + 1)?;
                } else {
                    w(o.write_field_begin(&TFieldIdentifier::new("f", self.wire_type(ty), *id)))?;
                    self.value(o, ty, shape, depth + 1)?;
                }
                w(o.write_field_end())?;
            }
            if self.rng.chance(5) {
                // An unknown field, skipped by the reader.
                let unknown = Ty::Map(Box::new(Ty::Bytes), Box::new(Ty::List(Box::new(Ty::I64))));
                w(o.write_field_begin(&TFieldIdentifier::new("u", TType::Map, 99)))?;
                self.value(o, &unknown, shape, depth + 1)?;
                w(o.write_field_end())?;
            }
        } else if shape == Shape::Smallest {
            // Only the containers, each with the most elements of the smallest kind.
            for (id, ty) in fields {
                if depth < 3 && matches!(ty, Ty::List(_) | Ty::Set(_) | Ty::Map(..) | Ty::Struct(_)) {
                    w(o.write_field_begin(&TFieldIdentifier::new("f", self.wire_type(ty), *id)))?;
                    self.value(o, ty, shape, depth + 1)?;
                    w(o.write_field_end())?;
                }
            }
        }
        w(o.write_field_stop())?;
        w(o.write_struct_end())
    }

    /// Elements to write, and the count the header claims.
    fn count(&mut self, shape: Shape, depth: usize) -> (usize, i32) {
        if shape == Shape::Smallest {
            let n = [1usize, 100, 3_000, 20_000][self.rng.below(4) as usize] >> (depth * 4).min(12);
            return (n, n as i32);
        }
        if self.rng.chance(8) {
            let claim = CLAIMS[self.rng.below(CLAIMS.len() as u64) as usize];
            return (self.rng.below(4) as usize, claim);
        }
        let n = if depth > 3 {
            self.rng.below(2)
        } else {
            self.rng.below(6)
        } as usize;
        (n, n as i32)
    }

    fn int(&mut self) -> i64 {
        match self.rng.below(6) {
            0 => i64::MAX,
            1 => i32::MAX as i64,
            2 => -1,
            3 => self.rng.below(1_000) as i64,
            _ => self.rng.next() as i64,
        }
    }

    fn wire_type(&self, ty: &Ty) -> TType {
        match ty {
            Ty::Bool => TType::Bool,
            Ty::Byte => TType::I08,
            Ty::I16 => TType::I16,
            Ty::I32 => TType::I32,
            Ty::I64 => TType::I64,
            Ty::Double => TType::Double,
            Ty::Bytes => TType::String,
            Ty::List(_) => TType::List,
            Ty::Set(_) => TType::Set,
            Ty::Map(..) => TType::Map,
            Ty::Struct(_) => TType::Struct,
        }
    }

    /// One call: a message header and its arguments, perhaps truncated or corrupted.
    fn call(&mut self, protocol: Protocol) -> (String, Vec<u8>) {
        let (name, params) = &self.idl.calls[self.rng.below(self.idl.calls.len() as u64) as usize];
        let shape = if self.rng.chance(15) {
            Shape::Smallest
        } else {
            Shape::Honest
        };
        let mut buf = Vec::new();
        {
            let mut o: Box<dyn TOutputProtocol> = match protocol {
                Protocol::Binary => Box::new(TBinaryOutputProtocol::new(&mut buf, true)),
                Protocol::Compact => Box::new(TCompactOutputProtocol::new(&mut buf)),
            };
            let _ = o.write_message_begin(&TMessageIdentifier::new(name.as_str(), TMessageType::Call, 1));
            if self.structure(o.as_mut(), params, shape, 0).is_ok() {
                let _ = o.write_message_end();
            }
            let _ = o.flush();
        }
        if self.rng.chance(10) && !buf.is_empty() {
            buf.truncate(self.rng.below(buf.len() as u64) as usize);
        }
        if self.rng.chance(10) {
            for _ in 0..=self.rng.below(3) {
                if !buf.is_empty() {
                    let at = self.rng.below(buf.len() as u64) as usize;
                    buf[at] = self.rng.next() as u8;
                }
            }
        }
        (name.clone(), buf)
    }
}

/// A request's reader that fails once the argument struct is read, so that its handler does
/// not run: what the server holds until then is what the request itself made it allocate.
struct UpToArgs<P> {
    inner: P,
    depth: usize,
    read_whole: bool,
}

macro_rules! up_to_args {
    ($($name:ident -> $t:ty;)*) => {
        impl<P: TInputProtocol> TInputProtocol for UpToArgs<P> {
            fn read_struct_begin(&mut self) -> thrift::Result<Option<TStructIdentifier>> {
                self.depth += 1;
                self.inner.read_struct_begin()
            }
            fn read_struct_end(&mut self) -> thrift::Result<()> {
                self.inner.read_struct_end()?;
                self.depth -= 1;
                if self.depth > 0 {
                    return Ok(());
                }
                self.read_whole = true;
                Err(thrift::Error::Application(thrift::ApplicationError::new(
                    thrift::ApplicationErrorKind::Unknown,
                    "arguments read",
                )))
            }
            $(fn $name(&mut self) -> thrift::Result<$t> {
                self.inner.$name()
            })*
        }
    };
}

up_to_args! {
    read_message_begin -> TMessageIdentifier;
    read_message_end -> ();
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

/// The server's reader over `request`, as a connection would read it.
fn reader<'a>(request: &'a [u8], protocol: Protocol, framed: Option<u32>, api: Api) -> Input<Box<dyn Read + 'a>> {
    let limit = crate::wire::DEFAULT_MAX_MESSAGE;
    let r: Box<dyn Read> = match framed {
        Some(claimed) => {
            let header = std::io::Cursor::new(claimed.to_be_bytes());
            Box::new(FramedReader::new(header.chain(request), limit))
        }
        None => Box::new(request),
    };
    let defaults: ArgDefaults = match api {
        Api::Thrift1 => args::of,
        Api::Thrift2 => args2::of,
    };
    Input::new(r, protocol, limit)
        .with_defaults(defaults)
        .struct_bytes(super::STRUCT_BYTES)
}

fn sink(protocol: Protocol) -> Box<dyn TOutputProtocol> {
    match protocol {
        Protocol::Binary => Box::new(TBinaryOutputProtocol::new(std::io::sink(), true)),
        Protocol::Compact => Box::new(TCompactOutputProtocol::new(std::io::sink())),
    }
}

/// Reads one request's call and arguments through `processor`: the most bytes held at once
/// meanwhile, and whether the arguments were read whole.
fn read_one(
    processor: &dyn TProcessor,
    request: &[u8],
    protocol: Protocol,
    framed: Option<u32>,
    api: Api,
) -> (u64, bool) {
    let mut input = UpToArgs {
        inner: reader(request, protocol, framed, api),
        depth: 0,
        read_whole: false,
    };
    let mut output = sink(protocol);
    let held = allocation_counter::measure(|| {
        let _ = processor.process(&mut input, output.as_mut());
    })
    .bytes_max;
    (held, input.read_whole)
}

/// Serves one request whole, handler included: it may fail, never panic.
fn serve_one(processor: &dyn TProcessor, request: &[u8], protocol: Protocol, framed: Option<u32>, api: Api) {
    let _ = processor.process(&mut reader(request, protocol, framed, api), sink(protocol).as_mut());
}

fn processors() -> [(Api, Idl, Box<dyn TProcessor>); 2] {
    let handler =
        || Handler::new(Arc::new(Memory::new()), "127.0.0.1", 9090, Duration::from_secs(60)).expect("handler");
    [
        (
            Api::Thrift1,
            parse(include_str!("../idl/hbase1.thrift")),
            Box::new(HbaseSyncProcessor::new(handler())),
        ),
        (
            Api::Thrift2,
            parse(include_str!("../idl/hbase2.thrift")),
            Box::new(THBaseServiceSyncProcessor::new(Thrift2(handler()))),
        ),
    ]
}

#[test]
fn the_idls_are_read_whole() {
    let one = parse(include_str!("../idl/hbase1.thrift"));
    let two = parse(include_str!("../idl/hbase2.thrift"));
    assert_eq!(one.calls.len(), 47);
    assert_eq!(two.calls.len(), 50);
    let create = &one
        .calls
        .iter()
        .find(|(n, _)| n == "createTable")
        .expect("createTable")
        .1;
    assert!(matches!(&create[1], (2, Ty::List(t)) if matches!(&**t, Ty::Struct(s) if s == "ColumnDescriptor")));
    assert_eq!(one.structs["ColumnDescriptor"].len(), 9);
    assert!(two.structs.contains_key("TMutation"), "unions are read");
}

#[test]
fn the_39_byte_create_table_reserves_nothing_it_claims() {
    let hex = "800100010000000b6372656174655461626c65000000010b000100000001740f00020c03ffffc0";
    let request: Vec<u8> = (0..hex.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&hex[i..i + 2], 16).expect("hex"))
        .collect();
    assert_eq!(request.len(), 39);
    let [(api, _, processor), _] = processors();
    for framed in [None, Some(39), Some(64 << 20)] {
        let (held, read_whole) = read_one(processor.as_ref(), &request, Protocol::Binary, framed, api);
        assert!(!read_whole, "the request cannot be read whole");
        assert!(
            held <= FIXED,
            "{held} bytes held for a 39-byte request (framed {framed:?})"
        );
    }
}

#[test]
fn no_hostile_call_makes_the_server_hold_more_than_a_small_multiple_of_it() {
    let cases: u64 = std::env::var("TALLROW_HOSTILE_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(20_000);
    let seed: u64 = std::env::var("TALLROW_HOSTILE_SEED")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(0x7a11);
    for (api, idl, processor) in processors() {
        for protocol in [Protocol::Binary, Protocol::Compact] {
            let mut g = Gen {
                idl: &idl,
                rng: Rng(seed ^ (api as u64) << 8 ^ protocol as u64),
            };
            let mut worst = (0.0, String::new());
            let mut read = 0;
            for case in 0..cases {
                let (name, request) = g.call(protocol);
                let framed = match g.rng.below(4) {
                    0 => Some(request.len() as u32),
                    1 => Some(CLAIMS[g.rng.below(3) as usize + 3] as u32),
                    _ => None,
                };
                let (held, read_whole) = read_one(processor.as_ref(), &request, protocol, framed, api);
                serve_one(processor.as_ref(), &request, protocol, framed, api);
                read += usize::from(read_whole);
                let size = request.len() as u64 + 4;
                assert!(
                    held <= PER_BYTE * size + FIXED,
                    "case {case} of seed {seed} ({api} {protocol} {name}): {held} bytes held for a request of {size} bytes"
                );
                let ratio = held as f64 / size as f64;
                if size >= 1024 && ratio > worst.0 {
                    worst = (ratio, format!("case {case}, {name}, {} bytes", request.len()));
                }
            }
            eprintln!(
                "{api} {protocol}: {read} of {cases} calls read whole; of requests of 1 KiB or more, the most held was {:.1}x the request ({})",
                worst.0, worst.1
            );
        }
    }
}
