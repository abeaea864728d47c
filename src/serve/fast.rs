//! Thrift1 mutation calls parsed in place: a `mutateRow(s)(Ts)` call in the binary protocol
//! that has arrived whole is checked here against the IDL and read as slices of the
//! received bytes, which the handler turns into store rows with one copy of each key and
//! value; its reply is written as the generated processor writes it. The generated path
//! reads the same call through the bounded reader into Thrift structs first, several
//! allocations per mutation.
//!
//! Only what the bounded reader would read the same way is taken: every argument present
//! once with its declared type, no unknown fields, no attributes, each length within the
//! bytes at hand and the message within its limit, and no more structs than
//! [`super::STRUCT_BYTES`] allows. Anything else (a call cut off by the buffer's end, a
//! malformed or hostile one, an omitted argument) goes the bounded way, which answers it as
//! before.

use super::STRUCT_BYTES;
use crate::idl::thrift1::{IOError, IllegalArgument};
use std::ops::Range;
use thrift::protocol::{
    TFieldIdentifier, TMessageIdentifier, TMessageType, TOutputProtocol, TSerializable, TStructIdentifier, TType,
};

/// HBase's `LATEST_TIMESTAMP`: the timestamp of the calls that name none.
const LATEST: i64 = i64::MAX;

/// Structs a message may hold before [`STRUCT_BYTES`] applies (as the bounded reader).
const STRUCT_ALLOWANCE: usize = 64;

const T_BOOL: u8 = 2;
const T_I64: u8 = 10;
const T_STRING: u8 = 11;
const T_STRUCT: u8 = 12;
const T_MAP: u8 = 13;
const T_LIST: u8 = 15;

/// An argument's type as the IDL declares it.
#[derive(Clone, Copy)]
enum Arg {
    Text,
    I64,
    /// `list<BatchMutation>`.
    Batches,
    /// `list<Mutation>`.
    Mutations,
    /// `map<Text, Text>` attributes, taken only when empty.
    Attributes,
}

/// The calls taken, with their arguments by field id (1, 2, ...).
fn arguments(name: &[u8]) -> Option<(&'static str, &'static [Arg])> {
    use Arg::*;
    Some(match name {
        b"mutateRow" => ("mutateRow", &[Text, Text, Mutations, Attributes]),
        b"mutateRowTs" => ("mutateRowTs", &[Text, Text, Mutations, I64, Attributes]),
        b"mutateRows" => ("mutateRows", &[Text, Batches, Attributes]),
        b"mutateRowsTs" => ("mutateRowsTs", &[Text, Batches, I64, Attributes]),
        _ => return None,
    })
}

/// A mutation call read in place.
#[derive(Debug, Default, PartialEq)]
pub struct Call<'a> {
    pub method: &'static str,
    pub seq: i32,
    pub table: &'a [u8],
    /// The call's timestamp; [`LATEST`] for the calls without one.
    pub timestamp: i64,
    /// Each row and its range of `mutations`.
    pub rows: Vec<(&'a [u8], Range<usize>)>,
    /// `isDelete`, `column` and `value` of each mutation, as the generated reader defaults
    /// them when absent (false and empty).
    pub mutations: Vec<(bool, &'a [u8], &'a [u8])>,
}

/// What starts a buffer.
#[derive(Debug, PartialEq)]
pub enum Found {
    /// A whole mutation call: its method and its length in bytes.
    Whole(&'static str, usize),
    /// The start of what may be one, cut off by the buffer's end (within the limit).
    Short,
    /// Anything else, read the bounded way.
    Other,
}

/// What starts `buf`: a whole mutation call, perhaps one cut off, or anything else.
pub fn mutation_call(buf: &[u8], limit: usize) -> Found {
    let mut c = Cursor::new(buf, limit, None);
    match c.call() {
        Some(method) => Found::Whole(method, c.pos),
        None if c.short && buf.len() < limit => Found::Short,
        None => Found::Other,
    }
}

/// The call that [`mutation_call`] found whole in `buf` (its first `len` bytes), read.
pub fn read(buf: &[u8], limit: usize) -> Option<Call<'_>> {
    let mut call = Call::default();
    let mut c = Cursor::new(buf, limit, Some(&mut call));
    c.call()?;
    Some(call)
}

/// Writes `result` as the reply to `call`, as the generated processor writes a mutation
/// call's: an empty result, its `IOError` (field 1) or `IllegalArgument` (field 2), or an
/// application exception.
pub fn reply(o: &mut dyn TOutputProtocol, call: &Call, result: thrift::Result<()>) -> thrift::Result<()> {
    let reply = TMessageIdentifier::new(call.method, TMessageType::Reply, call.seq);
    let exception = |o: &mut dyn TOutputProtocol, e: &thrift::ApplicationError| {
        o.write_message_begin(&TMessageIdentifier::new(call.method, TMessageType::Exception, call.seq))?;
        thrift::Error::write_application_error_to_out_protocol(e, o)?;
        o.write_message_end()?;
        o.flush()
    };
    let field =
        |o: &mut dyn TOutputProtocol, id: i16, write: &dyn Fn(&mut dyn TOutputProtocol) -> thrift::Result<()>| {
            o.write_message_begin(&reply)?;
            o.write_struct_begin(&TStructIdentifier::new(""))?;
            o.write_field_begin(&TFieldIdentifier::new("", TType::Struct, id))?;
            write(o)?;
            o.write_field_end()?;
            o.write_field_stop()?;
            o.write_struct_end()?;
            o.write_message_end()?;
            o.flush()
        };
    match result {
        Ok(()) => {
            o.write_message_begin(&reply)?;
            o.write_struct_begin(&TStructIdentifier::new(""))?;
            o.write_field_stop()?;
            o.write_struct_end()?;
            o.write_message_end()?;
            o.flush()
        }
        Err(thrift::Error::User(u)) => {
            if let Some(io) = u.downcast_ref::<IOError>() {
                field(o, 1, &|o| io.write_to_out_protocol(o))
            } else if let Some(ia) = u.downcast_ref::<IllegalArgument>() {
                field(o, 2, &|o| ia.write_to_out_protocol(o))
            } else {
                exception(
                    o,
                    &thrift::ApplicationError::new(thrift::ApplicationErrorKind::Unknown, u.to_string()),
                )
            }
        }
        Err(thrift::Error::Application(a)) => exception(o, &a),
        Err(e) => exception(
            o,
            &thrift::ApplicationError::new(thrift::ApplicationErrorKind::Unknown, e.to_string()),
        ),
    }
}

/// A position in the bytes at hand; every step is `None` past their end. With `out`, what
/// is read is recorded there.
struct Cursor<'a, 'c> {
    buf: &'a [u8],
    pos: usize,
    limit: usize,
    structs: usize,
    out: Option<&'c mut Call<'a>>,
    /// Whether a step ran past the bytes at hand.
    short: bool,
}

impl<'a, 'c> Cursor<'a, 'c> {
    fn new(buf: &'a [u8], limit: usize, out: Option<&'c mut Call<'a>>) -> Self {
        Cursor {
            buf: &buf[..buf.len().min(limit)],
            pos: 0,
            limit,
            structs: 0,
            out,
            short: false,
        }
    }

    /// A whole call: its method.
    fn call(&mut self) -> Option<&'static str> {
        // Strict binary header of a call: 0x80 0x01, an unused byte, the message type (1).
        if self.take(4)? != [0x80, 0x01, 0x00, 0x01] {
            return None;
        }
        let len = self.length()?;
        let (method, args) = arguments(self.take(len)?)?;
        let seq = i32::from_be_bytes(self.take(4)?.try_into().ok()?);
        if let Some(out) = self.out.as_deref_mut() {
            out.method = method;
            out.seq = seq;
            out.timestamp = LATEST;
        }
        self.struct_begin()?;
        let mut seen = 0u32;
        // mutateRow(Ts): the row, and where its mutations begin.
        let mut row: &[u8] = &[];
        loop {
            let t = self.byte()?;
            if t == 0 {
                break;
            }
            let id = self.field_id()?;
            let arg = *args.get(id.checked_sub(1)?)?;
            if seen & (1 << id) != 0 {
                return None;
            }
            seen |= 1 << id;
            match (arg, t) {
                (Arg::Text, T_STRING) => {
                    let text = self.string()?;
                    match id {
                        1 => self.out.as_deref_mut().into_iter().for_each(|o| o.table = text),
                        _ => row = text,
                    }
                }
                (Arg::I64, T_I64) => {
                    let ts = i64::from_be_bytes(self.take(8)?.try_into().ok()?);
                    if let Some(out) = self.out.as_deref_mut() {
                        out.timestamp = ts;
                    }
                }
                (Arg::Batches, T_LIST) => {
                    for _ in 0..self.structs_list()? {
                        self.batch()?;
                    }
                }
                (Arg::Mutations, T_LIST) => {
                    for _ in 0..self.structs_list()? {
                        self.mutation()?;
                    }
                }
                (Arg::Attributes, T_MAP) => {
                    if self.take(6)? != [T_STRING, T_STRING, 0, 0, 0, 0] {
                        return None;
                    }
                }
                _ => return None,
            }
        }
        if seen != ((1 << args.len()) - 1) << 1 {
            return None;
        }
        if matches!(method, "mutateRow" | "mutateRowTs")
            && let Some(out) = self.out.as_deref_mut()
        {
            out.rows.push((row, 0..out.mutations.len()));
        }
        Some(method)
    }

    fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        let end = self.pos.checked_add(n).filter(|&end| end <= self.buf.len());
        let Some(end) = end else {
            self.short = true;
            return None;
        };
        let bytes = &self.buf[self.pos..end];
        self.pos = end;
        Some(bytes)
    }

    fn byte(&mut self) -> Option<u8> {
        Some(self.take(1)?[0])
    }

    fn field_id(&mut self) -> Option<usize> {
        let id = i16::from_be_bytes(self.take(2)?.try_into().ok()?);
        usize::try_from(id).ok().filter(|&id| id < 32)
    }

    /// A non-negative length.
    fn length(&mut self) -> Option<usize> {
        usize::try_from(i32::from_be_bytes(self.take(4)?.try_into().ok()?)).ok()
    }

    fn string(&mut self) -> Option<&'a [u8]> {
        let len = self.length()?;
        self.take(len)
    }

    /// A struct begun, counted as the bounded reader counts it.
    fn struct_begin(&mut self) -> Option<()> {
        self.structs += 1;
        (self.structs <= STRUCT_ALLOWANCE || self.structs * STRUCT_BYTES <= self.pos).then_some(())
    }

    /// A list of structs' header: its length, held to [`STRUCT_BYTES`] per struct of what
    /// is left of the limit, as the bounded reader holds it.
    fn structs_list(&mut self) -> Option<usize> {
        if self.byte()? != T_STRUCT {
            return None;
        }
        let n = self.length()?;
        (n.checked_mul(STRUCT_BYTES)? <= self.limit - self.pos).then_some(n)
    }

    /// A `BatchMutation`: `1: Text row`, `2: list<Mutation> mutations`.
    fn batch(&mut self) -> Option<()> {
        self.struct_begin()?;
        let mut seen = 0u8;
        let first = self.out.as_deref().map_or(0, |o| o.mutations.len());
        let mut row: &[u8] = &[];
        loop {
            let t = self.byte()?;
            if t == 0 {
                if let Some(out) = self.out.as_deref_mut() {
                    out.rows.push((row, first..out.mutations.len()));
                }
                return Some(());
            }
            let id = self.field_id()?;
            if id > 2 || seen & (1 << id) != 0 {
                return None;
            }
            seen |= 1 << id;
            match (id, t) {
                (1, T_STRING) => row = self.string()?,
                (2, T_LIST) => {
                    for _ in 0..self.structs_list()? {
                        self.mutation()?;
                    }
                }
                _ => return None,
            }
        }
    }

    /// A `Mutation`: `1: bool isDelete`, `2: Text column`, `3: Text value`,
    /// `4: bool writeToWAL`.
    fn mutation(&mut self) -> Option<()> {
        self.struct_begin()?;
        let mut seen = 0u8;
        let (mut delete, mut column, mut value): (bool, &[u8], &[u8]) = (false, &[], &[]);
        loop {
            let t = self.byte()?;
            if t == 0 {
                if let Some(out) = self.out.as_deref_mut() {
                    out.mutations.push((delete, column, value));
                }
                return Some(());
            }
            let id = self.field_id()?;
            if id > 4 || seen & (1 << id) != 0 {
                return None;
            }
            seen |= 1 << id;
            match (id, t) {
                (1 | 4, T_BOOL) => match self.byte()? {
                    b @ (0 | 1) if id == 1 => delete = b == 1,
                    0 | 1 => {}
                    _ => return None,
                },
                (2, T_STRING) => column = self.string()?,
                (3, T_STRING) => value = self.string()?,
                _ => return None,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::idl::thrift1::{BatchMutation, Mutation};
    use thrift::protocol::{TBinaryOutputProtocol, TListIdentifier, TMapIdentifier};

    /// An argument as written: its id and a writer of its value.
    type Field<'a> = (i16, TType, &'a dyn Fn(&mut dyn TOutputProtocol) -> thrift::Result<()>);

    fn message(name: &str, kind: TMessageType, fields: &[Field]) -> Vec<u8> {
        let mut buf = Vec::new();
        {
            let mut o = TBinaryOutputProtocol::new(&mut buf, true);
            o.write_message_begin(&TMessageIdentifier::new(name, kind, 7)).unwrap();
            o.write_struct_begin(&TStructIdentifier::new("args")).unwrap();
            for (id, t, write) in fields {
                o.write_field_begin(&TFieldIdentifier::new("f", *t, *id)).unwrap();
                write(&mut o).unwrap();
                o.write_field_end().unwrap();
            }
            o.write_field_stop().unwrap();
            o.write_struct_end().unwrap();
            o.write_message_end().unwrap();
        }
        buf
    }

    fn text(v: &'static [u8]) -> impl Fn(&mut dyn TOutputProtocol) -> thrift::Result<()> {
        move |o| o.write_bytes(v)
    }

    fn list<T: TSerializable>(items: Vec<T>) -> impl Fn(&mut dyn TOutputProtocol) -> thrift::Result<()> {
        move |o| {
            o.write_list_begin(&TListIdentifier::new(TType::Struct, items.len() as i32))?;
            items.iter().try_for_each(|i| i.write_to_out_protocol(o))?;
            o.write_list_end()
        }
    }

    fn no_attributes(o: &mut dyn TOutputProtocol) -> thrift::Result<()> {
        o.write_map_begin(&TMapIdentifier::new(TType::String, TType::String, 0))?;
        o.write_map_end()
    }

    fn put(column: &str, value: &str) -> Mutation {
        Mutation::new(false, column.as_bytes().to_vec(), value.as_bytes().to_vec(), true)
    }

    /// A mutateRowsTs of two rows, the second with a delete that leaves its value out.
    fn rows_ts() -> Vec<u8> {
        let batches = list(vec![
            BatchMutation::new(b"r1".to_vec(), vec![put("f:a", "1"), put("f:b", "2")]),
            BatchMutation::new(
                b"r2".to_vec(),
                vec![Mutation {
                    is_delete: Some(true),
                    column: Some(b"f".to_vec()),
                    value: None,
                    write_to_w_a_l: None,
                }],
            ),
        ]);
        let ts = |o: &mut dyn TOutputProtocol| o.write_i64(42);
        message(
            "mutateRowsTs",
            TMessageType::Call,
            &[
                (1, TType::String, &text(b"t")),
                (2, TType::List, &batches),
                (3, TType::I64, &ts),
                (4, TType::Map, &no_attributes),
            ],
        )
    }

    #[test]
    fn a_whole_call_is_read_in_place_and_every_prefix_is_left_alone() {
        let whole = rows_ts();
        let mut two = whole.clone();
        two.extend_from_slice(&whole);
        assert_eq!(mutation_call(&two, 1 << 20), Found::Whole("mutateRowsTs", whole.len()));
        let call = read(&whole, 1 << 20).unwrap();
        assert_eq!(
            call,
            Call {
                method: "mutateRowsTs",
                seq: 7,
                table: b"t",
                timestamp: 42,
                rows: vec![(&b"r1"[..], 0..2), (&b"r2"[..], 2..3)],
                mutations: vec![
                    (false, &b"f:a"[..], &b"1"[..]),
                    (false, b"f:b", b"2"),
                    (true, b"f", b""),
                ],
            }
        );
        for cut in 0..whole.len() {
            assert_eq!(mutation_call(&whole[..cut], 1 << 20), Found::Short, "cut at {cut}");
        }
        // Over the message limit: the bounded reader answers it.
        assert_eq!(mutation_call(&whole, whole.len() - 1), Found::Other);
        assert_eq!(
            mutation_call(&whole, whole.len()),
            Found::Whole("mutateRowsTs", whole.len())
        );
    }

    #[test]
    fn mutate_row_calls_name_their_row_and_default_the_timestamp() {
        let m = list(vec![put("f:a", "1")]);
        let whole = message(
            "mutateRow",
            TMessageType::Call,
            &[
                (4, TType::Map, &no_attributes),
                (3, TType::List, &m),
                (2, TType::String, &text(b"row")),
                (1, TType::String, &text(b"t")),
            ],
        );
        let call = read(&whole, 1 << 20).unwrap();
        assert_eq!(
            (call.method, call.timestamp, call.table),
            ("mutateRow", LATEST, &b"t"[..])
        );
        assert_eq!(call.rows, [(&b"row"[..], 0..1)]);
    }

    #[test]
    fn anything_the_bounded_reader_would_read_otherwise_is_left_to_it() {
        let batches = list(vec![BatchMutation::new(b"r".to_vec(), vec![put("f:a", "1")])]);
        let ts = |o: &mut dyn TOutputProtocol| o.write_i64(1);
        let attributes = |o: &mut dyn TOutputProtocol| {
            o.write_map_begin(&TMapIdentifier::new(TType::String, TType::String, 1))?;
            o.write_bytes(b"k")?;
            o.write_bytes(b"v")?;
            o.write_map_end()
        };
        let wrong_type = |o: &mut dyn TOutputProtocol| o.write_i32(1);
        let of_strings = |o: &mut dyn TOutputProtocol| {
            o.write_list_begin(&TListIdentifier::new(TType::String, 1))?;
            o.write_bytes(b"x")?;
            o.write_list_end()
        };
        let table: Field = (1, TType::String, &text(b"t"));
        let rows: Field = (2, TType::List, &batches);
        let stamp: Field = (3, TType::I64, &ts);
        let none: Field = (4, TType::Map, &no_attributes);
        let call = |fields: &[Field]| message("mutateRowsTs", TMessageType::Call, fields);
        let good = call(&[table, rows, stamp, none]);
        assert_eq!(mutation_call(&good, 1 << 20), Found::Whole("mutateRowsTs", good.len()));
        let refused = [
            ("an omitted argument", call(&[table, rows, none])),
            ("attributes", call(&[table, rows, stamp, (4, TType::Map, &attributes)])),
            (
                "an unknown argument",
                call(&[table, rows, stamp, none, (5, TType::I64, &ts)]),
            ),
            ("a repeated argument", call(&[table, rows, rows, stamp, none])),
            (
                "an argument of another type",
                call(&[table, rows, (3, TType::I32, &wrong_type), none]),
            ),
            (
                "a list of strings",
                call(&[table, (2, TType::List, &of_strings), stamp, none]),
            ),
            ("another method", message("getTableNames", TMessageType::Call, &[])),
            (
                "a oneway message",
                message("mutateRowsTs", TMessageType::OneWay, &[table, rows, stamp, none]),
            ),
        ];
        for (what, bytes) in refused {
            assert_eq!(mutation_call(&bytes, 1 << 20), Found::Other, "{what}");
        }
        // An unversioned header.
        let mut old = Vec::new();
        TBinaryOutputProtocol::new(&mut old, false)
            .write_message_begin(&TMessageIdentifier::new("mutateRowsTs", TMessageType::Call, 1))
            .unwrap();
        assert_eq!(mutation_call(&old, 1 << 20), Found::Other);
    }

    #[test]
    fn empty_structs_past_the_allowance_are_left_to_the_bounded_reader() {
        let empty = || Mutation {
            is_delete: None,
            column: None,
            value: None,
            write_to_w_a_l: None,
        };
        let row_ts = |mutations: usize| {
            let m = list((0..mutations).map(|_| empty()).collect());
            message(
                "mutateRowTs",
                TMessageType::Call,
                &[
                    (1, TType::String, &text(b"t")),
                    (2, TType::String, &text(b"r")),
                    (3, TType::List, &m),
                    (4, TType::I64, &|o| o.write_i64(1)),
                    (5, TType::Map, &no_attributes),
                ],
            )
        };
        // One byte per Mutation: more structs than one per STRUCT_BYTES.
        assert_eq!(mutation_call(&row_ts(200), 1 << 20), Found::Other);
        let call = row_ts(STRUCT_ALLOWANCE - 2);
        let read = read(&call, 1 << 20).unwrap();
        assert!(read.mutations.iter().all(|m| *m == (false, &b""[..], &b""[..])));
        assert_eq!(read.mutations.len(), STRUCT_ALLOWANCE - 2);
    }

    /// Generated `Mutation`s with any of their fields present or absent.
    fn mutations() -> impl proptest::strategy::Strategy<Value = Vec<Mutation>> {
        use proptest::prelude::*;
        let bytes = || prop::option::of(prop::collection::vec(any::<u8>(), 0..5));
        prop::collection::vec(
            (
                prop::option::of(any::<bool>()),
                bytes(),
                bytes(),
                prop::option::of(any::<bool>()),
            ),
            0..5,
        )
        .prop_map(|ms| {
            ms.into_iter()
                .map(|(is_delete, column, value, wal)| Mutation {
                    is_delete,
                    column,
                    value,
                    write_to_w_a_l: wal,
                })
                .collect()
        })
    }

    proptest::proptest! {
        /// A mutateRows(Ts) call as the generated client writes it is read in place as the
        /// generated reader reads it: every row, and every mutation's fields with absent
        /// ones as their defaults, which is what the one conversion
        /// (`convert::thrift1::row_mutation`) takes from either.
        #[test]
        fn calls_read_in_place_as_the_generated_reader_reads_them(
            batches in proptest::collection::vec((proptest::collection::vec(proptest::arbitrary::any::<u8>(), 0..5), mutations()), 0..4),
            ts in proptest::option::of(proptest::arbitrary::any::<i64>()),
        ) {
            let generated: Vec<BatchMutation> =
                batches.iter().map(|(row, m)| BatchMutation::new(row.clone(), m.clone())).collect();
            let list = list(generated.clone());
            let stamp = move |o: &mut dyn TOutputProtocol| o.write_i64(ts.unwrap_or(0));
            let table = text(b"t");
            let mut fields: Vec<Field> = vec![(1, TType::String, &table), (2, TType::List, &list)];
            if ts.is_some() {
                fields.push((3, TType::I64, &stamp));
            }
            fields.push((fields.len() as i16 + 1, TType::Map, &no_attributes));
            let name = if ts.is_some() { "mutateRowsTs" } else { "mutateRows" };
            let bytes = message(name, TMessageType::Call, &fields);
            proptest::prop_assert_eq!(mutation_call(&bytes, 1 << 20), Found::Whole(name, bytes.len()));
            let call = read(&bytes, 1 << 20).unwrap();
            proptest::prop_assert_eq!(call.timestamp, ts.unwrap_or(LATEST));
            proptest::prop_assert_eq!(call.rows.len(), generated.len());
            for ((row, range), b) in call.rows.iter().zip(generated) {
                proptest::prop_assert_eq!(row.to_vec(), b.row.unwrap_or_default());
                let in_place: Vec<(bool, Vec<u8>, Vec<u8>)> =
                    call.mutations[range.clone()].iter().map(|&(d, c, v)| (d, c.to_vec(), v.to_vec())).collect();
                let owned: Vec<(bool, Vec<u8>, Vec<u8>)> =
                    b.mutations.unwrap_or_default().into_iter().map(crate::convert::thrift1::fields_of).collect();
                proptest::prop_assert_eq!(in_place, owned);
            }
        }

        /// Damaged calls (bytes changed, cut or added anywhere) never panic the check, and
        /// what it takes as whole, `read` reads from those bytes alone, as the same method.
        #[test]
        fn damaged_calls_are_taken_whole_only_when_they_read_whole(
            edits in proptest::collection::vec((0usize..400, 0u8..=255, 0u8..3), 1..6),
            cut in 0usize..400,
        ) {
            let mut bytes = rows_ts();
            for (at, byte, kind) in edits {
                let at = at % (bytes.len() + 1);
                match kind {
                    0 if at < bytes.len() => bytes[at] = byte,
                    1 => bytes.insert(at, byte),
                    _ if at < bytes.len() => { bytes.remove(at); }
                    _ => {}
                }
            }
            bytes.truncate(bytes.len().saturating_sub(cut % 8));
            if let Found::Whole(method, len) = mutation_call(&bytes, 1 << 20) {
                let call = read(&bytes[..len], 1 << 20);
                proptest::prop_assert!(call.is_some());
                let call = call.unwrap();
                proptest::prop_assert_eq!(call.method, method);
                proptest::prop_assert!(call.rows.iter().all(|(_, r)| r.end <= call.mutations.len()));
            }
        }
    }
}
