//! A design's rows made from the generator's entities: for each instance of an entity, the
//! rows of every kind that names it, in the design's order, with keys, qualifiers and values
//! encoded from the instance's fields.

use super::key::{self, Form, Key, Kind, SaltSize, Segment, Value};
use super::{Design, Entity, Fill, Part, Size};
use crate::generate::dist::Zipf;
use crate::generate::rng::{self, Rng, mix};
use crate::generate::text::{Texture, words_with};
use crate::store::{Mutation, RowMutation};

/// What a design makes of each entity, ready to encode.
#[derive(Debug, Clone)]
pub struct Emitter {
    /// Per entity (in [`Entity::ALL`] order), the kinds of rows it makes.
    makers: [Vec<Maker>; 8],
    /// What generated values are drawn from.
    source: Source,
}

/// The random source of generated values, and their text's texture.
#[derive(Debug, Clone, Copy)]
struct Source {
    rng: Rng,
    texture: Texture,
}

/// What one instance's generated values are drawn from: the source, and a hash of the
/// instance's fields made when a value first needs it.
struct Draws<'a> {
    source: &'a Source,
    instance: Option<u64>,
}

/// One kind of rows of one table.
#[derive(Debug, Clone)]
struct Maker {
    table: usize,
    key: Encoder,
    cells: Vec<CellMaker>,
    /// Whether its key is made of the user's own fields alone: one row per user, gathering
    /// every instance's cells.
    gathers: bool,
}

#[derive(Debug, Clone)]
struct CellMaker {
    family: String,
    qualifier: Bytes,
    value: Bytes,
    timestamp: Option<usize>,
}

/// A qualifier or a value: the same bytes for every cell, encoded from the fields, or the
/// same as the cell's qualifier.
#[derive(Debug, Clone)]
enum Bytes {
    Fixed(Vec<u8>),
    /// One field's bytes as they are (a text segment alone), of `width` when it has one.
    Copy(usize, Option<usize>),
    Encoded(Encoder),
    Qualifier,
    /// Generated: a size drawn, then filled, from the instance's stream for this cell (a hash
    /// of the cell's place in the design).
    Sized {
        size: Draw,
        fill: Fill,
        cell: u64,
    },
}

/// A [`Size`] ready to draw from.
#[derive(Debug, Clone)]
enum Draw {
    Fixed(u32),
    Uniform { min: u32, span: u64 },
    Normal { mean: f64, sd: f64, min: u32, max: u32 },
    Zipf { min: u32, zipf: Zipf },
    Histogram(Vec<(u32, f64)>),
}

impl Draw {
    fn new(size: &Size) -> Draw {
        match size {
            Size::Fixed(n) => Draw::Fixed(*n),
            Size::Uniform { min, max } => Draw::Uniform {
                min: *min,
                span: u64::from(max - min) + 1,
            },
            Size::Normal { mean, sd, min, max } => Draw::Normal {
                mean: *mean,
                sd: *sd,
                min: *min,
                max: *max,
            },
            Size::Zipf { min, max, exponent } => Draw::Zipf {
                min: *min,
                zipf: Zipf::new(u64::from(max - min) + 1, *exponent),
            },
            Size::Histogram(b) => Draw::Histogram(b.clone()),
        }
    }

    /// A size from draw 0 of `s`.
    fn size(&self, s: &rng::Stream) -> usize {
        (match self {
            Draw::Fixed(n) => *n,
            Draw::Uniform { min, span } => min + s.below(0, *span) as u32,
            Draw::Normal { mean, sd, min, max } => (mean + sd * s.normal(0))
                .round()
                .clamp(f64::from(*min), f64::from(*max)) as u32,
            Draw::Zipf { min, zipf } => min + (zipf.sample(s, 0) - 1) as u32,
            Draw::Histogram(b) => {
                let u = s.unit(0);
                b.iter().find(|(_, c)| u < *c).unwrap_or(&b[b.len() - 1]).0
            }
        }) as usize
    }
}

impl Draws<'_> {
    /// The bytes of a generated cell of this instance.
    fn bytes(&mut self, values: &[Value<'_>], size: &Draw, fill: Fill, cell: u64) -> Vec<u8> {
        let instance = *self.instance.get_or_insert_with(|| instance_hash(values));
        let s = self.source.rng.stream(rng::Kind::Cell, instance, cell);
        let n = size.size(&s);
        let body = s.child(1);
        match fill {
            Fill::Text => {
                let mut text = String::with_capacity(n);
                words_with(&body, n, &mut text, self.source.texture);
                text.into_bytes()
            }
            Fill::Random => {
                let mut out = Vec::with_capacity(n + 8);
                for i in 0..n.div_ceil(8) as u64 {
                    out.extend_from_slice(&body.u64(i).to_le_bytes());
                }
                out.truncate(n);
                out
            }
        }
    }
}

/// A hash of an instance's field values: what its generated values are drawn by.
fn instance_hash(values: &[Value<'_>]) -> u64 {
    let mut h = 0x1d5e_a7c0_ffee_0001_u64;
    for v in values {
        match v {
            Value::Int(i) => h = mix(h ^ mix(*i as u64 ^ ((*i >> 64) as u64).rotate_left(17))),
            Value::Bytes(b) => {
                for chunk in b.chunks(8) {
                    let mut word = [0u8; 8];
                    word[..chunk.len()].copy_from_slice(chunk);
                    h = mix(h ^ u64::from_le_bytes(word));
                }
                h = mix(h ^ b.len() as u64 ^ 0xb7e1_5162_8aed_2a6b);
            }
        }
    }
    h
}

/// A stable number for a cell's place in a design: a hash of `TABLE.ROWS.N`, so that adding
/// tables or cells elsewhere leaves a cell's generated values as they were.
fn cell_id(table: &str, rows: &str, cell: usize) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in format!("{table}.{rows}.{cell}").bytes() {
        h = (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
    }
    mix(h)
}

/// A key over an entity's fields compiled for the emitter: each segment with its field's
/// bounds inline, so that the common case runs without looking anything up, and the key
/// itself kept to word an error when a value does not fit.
#[derive(Debug, Clone)]
struct Encoder {
    key: Key,
    ops: Vec<Op>,
    /// Bytes every encoding has.
    base: usize,
    /// The fields whose bytes it copies.
    copies: Vec<usize>,
    /// The fields it writes as delimited decimals.
    decimals: Vec<usize>,
    /// Where another part of the same instance writes the same bytes: its place among the
    /// instance's shared encodings, and whether this is the last use (which takes them).
    slot: Option<(usize, bool)>,
    /// The key is one unpadded decimal of this field (a text id, as the seeds' `uid`s):
    /// encoded without walking `ops`.
    decimal: Option<(usize, i128, i128)>,
}

/// The most encodings one instance shares between its parts (the rest are made each time).
const SLOTS: usize = 4;

/// The encodings an instance's parts share, made once (a follow's two ids: each a row key
/// in one relation row and a qualifier in the other).
type Shared = [Option<Vec<u8>>; SLOTS];

#[derive(Debug, Clone)]
enum Op {
    Salt {
        field: usize,
        size: SaltSize,
        form: Form,
        separator: Vec<u8>,
    },
    Int {
        field: usize,
        bytes: u8,
        min: i128,
        max: i128,
    },
    Stamp {
        field: usize,
        reverse: bool,
        digits: bool,
    },
    Decimal {
        field: usize,
        width: Option<u8>,
        min: i128,
        max: i128,
    },
    Text {
        field: usize,
        width: Option<u16>,
        terminator: Option<u8>,
    },
    Counted {
        field: usize,
        length: u8,
    },
    Literal(Vec<u8>),
}

impl Encoder {
    fn new(key: Key) -> Encoder {
        let mut base = 0;
        let mut copies = Vec::new();
        let mut decimals = Vec::new();
        let bounds = |f: usize| match key.fields[f].kind {
            Kind::Int { min, max } => (min, max),
            Kind::Bytes => (0, -1),
        };
        let mut ops = Vec::with_capacity(key.segments.len());
        for (i, s) in key.segments.iter().enumerate() {
            match s {
                Segment::Text { field, width: None } => copies.push(*field),
                Segment::Counted { field, length } => {
                    copies.push(*field);
                    base += usize::from(*length);
                }
                Segment::Decimal { field, width: None } => decimals.push(*field),
                s => base += s.width().unwrap_or(0),
            }
            if let Segment::Salt {
                size: SaltSize::Off, ..
            } = s
            {
                continue;
            }
            ops.push(match s.clone() {
                Segment::Salt {
                    field,
                    size,
                    form,
                    separator,
                } => Op::Salt {
                    field,
                    size,
                    form,
                    separator,
                },
                Segment::Int { field, bytes } => {
                    let (min, max) = bounds(field);
                    Op::Int { field, bytes, min, max }
                }
                Segment::Stamp { field, order, form } => Op::Stamp {
                    field,
                    reverse: order == crate::keys::Order::Reverse,
                    digits: form == Form::Digits,
                },
                Segment::Decimal { field, width } => {
                    let (mut min, mut max) = bounds(field);
                    if let Some(w) = width {
                        min = min.max(0);
                        max = max.min(10i128.pow(u32::from(w)) - 1);
                    }
                    Op::Decimal { field, width, min, max }
                }
                Segment::Text { field, width } => Op::Text {
                    field,
                    width,
                    terminator: match (width, key.segments.get(i + 1)) {
                        (None, Some(Segment::Literal(b))) => b.first().copied(),
                        _ => None,
                    },
                },
                Segment::Counted { field, length } => Op::Counted { field, length },
                Segment::Literal(b) => Op::Literal(b),
            });
        }
        let decimal = match ops[..] {
            [
                Op::Decimal {
                    field,
                    width: None,
                    min,
                    max,
                },
            ] => Some((field, min, max)),
            _ => None,
        };
        Encoder {
            key,
            ops,
            base,
            copies,
            decimals,
            slot: None,
            decimal,
        }
    }

    /// [`Encoder::encode`], made once per instance where parts share it.
    #[inline(always)]
    fn encode_shared(&self, values: &[Value<'_>], shared: &mut Shared) -> Option<Vec<u8>> {
        let Some((i, last)) = self.slot else {
            return self.encode(values);
        };
        if shared[i].is_none() {
            shared[i] = Some(self.encode(values)?);
        }
        if last { shared[i].take() } else { shared[i].clone() }
    }

    /// The encoding of `values`; `None` where the key's own encoder refuses them, which
    /// [`Encoder::refusal`] then words (errors are large: the hot path carries none).
    #[inline(always)]
    fn encode(&self, values: &[Value<'_>]) -> Option<Vec<u8>> {
        if let Some((f, min, max)) = self.decimal {
            let Some(&Value::Int(v)) = values.get(f) else {
                return None;
            };
            if v < min || v > max {
                return None;
            }
            let mut out = Vec::with_capacity(20);
            push_int_decimal(v, &mut out);
            return Some(out);
        }
        // Room for a 64-bit field's longest decimal (20 digits, or a sign and 19) rather than
        // counting each one's digits.
        let mut n = self.base + 20 * self.decimals.len();
        for &f in &self.copies {
            if let Value::Bytes(b) = values[f] {
                n += b.len();
            }
        }
        let mut out = Vec::with_capacity(n);
        self.fast(values, &mut out)?;
        Some(out)
    }

    /// Why the key refuses `values`.
    #[cold]
    #[inline(never)]
    fn refusal(&self, values: &[Value<'_>]) -> key::Error {
        match self.key.encode(values) {
            Err(e) => e,
            Ok(_) => key::Error::Malformed {
                layout: self.key.name.clone(),
                reason: "the emitter refused what the key encodes".into(),
            },
        }
    }

    /// Encodes what fits as the key's encoder would; `None` where it would refuse.
    #[inline(always)]
    fn fast(&self, values: &[Value<'_>], out: &mut Vec<u8>) -> Option<()> {
        let int = |f: usize| match values.get(f)? {
            Value::Int(v) => Some(*v),
            Value::Bytes(_) => None,
        };
        let bytes = |f: usize| match values.get(f)? {
            Value::Bytes(b) => Some(*b),
            Value::Int(_) => None,
        };
        for op in &self.ops {
            match op {
                Op::Salt {
                    field,
                    size,
                    form,
                    separator,
                } => {
                    if key::write_salt(*size, *form, int(*field)?, out) {
                        out.extend_from_slice(separator);
                    }
                }
                Op::Int { field, bytes, min, max } => {
                    let v = int(*field)?;
                    if v < *min || v > *max {
                        return None;
                    }
                    out.extend_from_slice(&v.to_be_bytes()[16 - usize::from(*bytes)..]);
                }
                Op::Stamp { field, reverse, digits } => {
                    let v = int(*field)?;
                    if !(0..=i128::from(i64::MAX)).contains(&v) {
                        return None;
                    }
                    let stored = if *reverse { i64::MAX - v as i64 } else { v as i64 };
                    if *digits {
                        crate::keys::push_padded19(stored, out);
                    } else {
                        out.extend_from_slice(&stored.to_be_bytes());
                    }
                }
                Op::Decimal { field, width, min, max } => {
                    let v = int(*field)?;
                    if v < *min || v > *max {
                        return None;
                    }
                    match width {
                        None => push_int_decimal(v, out),
                        Some(w) => {
                            let start = out.len();
                            crate::keys::push_decimal(v as u64, out);
                            let len = out.len() - start;
                            out.splice(start..start, std::iter::repeat_n(b'0', usize::from(*w) - len));
                        }
                    }
                }
                Op::Text {
                    field,
                    width,
                    terminator,
                } => {
                    let b = bytes(*field)?;
                    if width.is_some_and(|w| b.len() != usize::from(w)) || terminator.is_some_and(|t| b.contains(&t)) {
                        return None;
                    }
                    out.extend_from_slice(b);
                }
                Op::Counted { field, length } => {
                    let b = bytes(*field)?;
                    let n = usize::from(*length);
                    if n < 8 && b.len() >> (8 * n) != 0 {
                        return None;
                    }
                    out.extend_from_slice(&(b.len() as u64).to_be_bytes()[8 - n..]);
                    out.extend_from_slice(b);
                }
                Op::Literal(b) => match b[..] {
                    [one] => out.push(one),
                    _ => out.extend_from_slice(b),
                },
            }
        }
        Some(())
    }
}

/// Appends the decimal of `v`, a value within a 64-bit field's bounds (signed or not).
#[inline(always)]
fn push_int_decimal(v: i128, out: &mut Vec<u8>) {
    if v >= 0 {
        crate::keys::push_decimal(v as u64, out)
    } else {
        crate::keys::push_decimal(v as i64, out)
    }
}

impl Bytes {
    fn of(part: &Part, design: &Design, entity: Entity, cell: u64) -> Bytes {
        if let Some(fixed) = part.fixed() {
            return Bytes::Fixed(fixed);
        }
        match part {
            Part::Sized(s) => Bytes::Sized {
                size: Draw::new(&s.size),
                fill: s.fill,
                cell,
            },
            Part::Segments(k) if matches!(k.segments[..], [Segment::Text { .. }]) => {
                let Segment::Text { field, width } = k.segments[0] else {
                    unreachable!("matched above")
                };
                let field = entity
                    .field(&k.fields[field].name)
                    .expect("fields checked when the design was read");
                Bytes::Copy(field, width.map(usize::from))
            }
            Part::Segments(k) => Bytes::Encoded(Encoder::new(rebind(k, entity))),
            Part::Row { table, rows } => {
                let k = design
                    .key(table, rows)
                    .expect("references checked when the design was read");
                Bytes::Encoded(Encoder::new(rebind(k, entity)))
            }
        }
    }

    /// The bytes of `values` (`qualifier`: the cell's, for a value that repeats it); `None`
    /// where a segment refuses them, which [`Bytes::refusal`] then words.
    #[inline(always)]
    fn write(
        &self,
        values: &[Value<'_>],
        qualifier: &[u8],
        shared: &mut Shared,
        draws: &mut Draws<'_>,
    ) -> Option<Vec<u8>> {
        match self {
            Bytes::Sized { size, fill, cell } => Some(draws.bytes(values, size, *fill, *cell)),
            Bytes::Fixed(b) => Some(b.clone()),
            Bytes::Copy(f, width) => match values[*f] {
                Value::Bytes(b) if width.is_none_or(|w| w == b.len()) => Some(b.to_vec()),
                _ => None,
            },
            Bytes::Encoded(e) => e.encode_shared(values, shared),
            Bytes::Qualifier => Some(qualifier.to_vec()),
        }
    }

    /// Why the part refuses `values`.
    #[cold]
    #[inline(never)]
    fn refusal(&self, values: &[Value<'_>], entity: Entity) -> key::Error {
        match self {
            Bytes::Copy(f, width) => {
                let (name, _) = entity.fields()[*f];
                let key = Key {
                    name: String::new(),
                    fields: vec![key::Field {
                        name: name.to_string(),
                        kind: Kind::Bytes,
                    }],
                    segments: vec![Segment::Text {
                        field: 0,
                        width: width.map(|w| w as u16),
                    }],
                };
                key.encode(&values[*f..=*f])
                    .err()
                    .unwrap_or_else(|| key::Error::Malformed {
                        layout: name.to_string(),
                        reason: "refused".into(),
                    })
            }
            Bytes::Encoded(e) => e.refusal(values),
            Bytes::Fixed(_) | Bytes::Qualifier | Bytes::Sized { .. } => {
                unreachable!("fixed, generated bytes and copies of a qualifier are never refused")
            }
        }
    }
}

/// Gives the encoders of one entity's makers that write the same bytes a shared slot, in
/// the order they are used, the last use taking the bytes.
fn share(makers: &mut [Maker]) {
    let mut uses: Vec<&mut Encoder> = Vec::new();
    for m in makers.iter_mut() {
        uses.push(&mut m.key);
        for c in &mut m.cells {
            for b in [&mut c.qualifier, &mut c.value] {
                if let Bytes::Encoded(e) = b {
                    uses.push(e);
                }
            }
        }
    }
    let same = |a: &Encoder, b: &Encoder| a.key.fields == b.key.fields && a.key.segments == b.key.segments;
    let mut slots = 0;
    for i in 0..uses.len() {
        if uses[i].slot.is_some() || slots == SLOTS {
            continue;
        }
        let later: Vec<usize> = (i + 1..uses.len()).filter(|&j| same(uses[i], uses[j])).collect();
        let Some(&last) = later.last() else { continue };
        uses[i].slot = Some((slots, false));
        for &j in &later {
            uses[j].slot = Some((slots, j == last));
        }
        slots += 1;
    }
}

/// Whether two parts write the same bytes from the same fields, not being fixed.
fn same_bytes(a: &Part, b: &Part) -> bool {
    match (a, b) {
        (Part::Segments(x), Part::Segments(y)) => {
            a.fixed().is_none() && x.fields == y.fields && x.segments == y.segments
        }
        (Part::Row { .. }, Part::Row { .. }) => a == b,
        _ => false,
    }
}

/// `key` over `entity`'s fields: values are given in the entity's field order.
fn rebind(key: &Key, entity: Entity) -> Key {
    let fields = entity
        .fields()
        .iter()
        .map(|(name, _)| match key.field(name) {
            Some(f) => key.fields[f].clone(),
            None => key::Field {
                name: (*name).to_string(),
                kind: Kind::Bytes,
            },
        })
        .collect();
    let to = |f: usize| {
        entity
            .field(&key.fields[f].name)
            .expect("fields checked when the design was read")
    };
    let segments = key
        .segments
        .iter()
        .map(|s| match s.clone() {
            Segment::Salt {
                field,
                size,
                form,
                separator,
            } => Segment::Salt {
                field: to(field),
                size,
                form,
                separator,
            },
            Segment::Int { field, bytes } => Segment::Int {
                field: to(field),
                bytes,
            },
            Segment::Stamp { field, order, form } => Segment::Stamp {
                field: to(field),
                order,
                form,
            },
            Segment::Decimal { field, width } => Segment::Decimal {
                field: to(field),
                width,
            },
            Segment::Text { field, width } => Segment::Text {
                field: to(field),
                width,
            },
            Segment::Counted { field, length } => Segment::Counted {
                field: to(field),
                length,
            },
            Segment::Literal(b) => Segment::Literal(b),
        })
        .collect();
    Key {
        name: key.name.clone(),
        fields,
        segments,
    }
}

impl Maker {
    /// Appends the cells of one instance to `out`; `bare`: without their values (what a
    /// delete of them needs).
    #[inline(always)]
    fn cells(
        &self,
        entity: Entity,
        values: &[Value<'_>],
        (shared, draws): (&mut Shared, &mut Draws<'_>),
        bare: bool,
        out: &mut Vec<Mutation>,
    ) -> Result<(), key::Error> {
        for c in &self.cells {
            let timestamp = c.timestamp.map(|f| match values[f] {
                Value::Int(v) => v as i64,
                Value::Bytes(_) => unreachable!("a timestamp field is an integer"),
            });
            let Some(qualifier) = c.qualifier.write(values, &[], shared, draws) else {
                return Err(c.qualifier.refusal(values, entity));
            };
            let value = match bare {
                true => Vec::new(),
                false => match c.value.write(values, &qualifier, shared, draws) {
                    Some(value) => value,
                    None => return Err(c.value.refusal(values, entity)),
                },
            };
            out.push(Mutation::Put {
                // From the `str`: its copy is inlined, where `String::clone` is a call.
                family: String::from(c.family.as_str()),
                qualifier,
                timestamp,
                value,
            });
        }
        Ok(())
    }
}

impl Emitter {
    /// The emitter of `design`'s rows, its generated values drawn from the workload seed
    /// `seed` and their text of `texture`.
    pub fn new(design: &Design, seed: u64, texture: Texture) -> Emitter {
        let mut makers: [Vec<Maker>; 8] = Default::default();
        for (t, table) in design.tables.iter().enumerate() {
            for rows in &table.rows {
                let Some(entity) = rows.entity else { continue };
                // Gathers where its key is the user's own and no other kind of rows of the
                // entity goes into the same table (a follow's two relation rows stay apart).
                let gathers = rows
                    .key
                    .fields
                    .iter()
                    .all(|f| entity.per_user().contains(&f.name.as_str()))
                    && table.rows.iter().filter(|r| r.entity == Some(entity)).count() == 1;
                makers[entity as usize].push(Maker {
                    gathers,
                    table: t,
                    key: Encoder::new(rebind(&rows.key, entity)),
                    cells: rows
                        .cells
                        .iter()
                        .enumerate()
                        .map(|(i, c)| CellMaker {
                            family: c.family.clone(),
                            qualifier: Bytes::of(&c.qualifier, design, entity, 0),
                            // A value written as the qualifier is (`fans:<uid>` = uid) is its copy.
                            value: if same_bytes(&c.value, &c.qualifier) {
                                Bytes::Qualifier
                            } else {
                                Bytes::of(&c.value, design, entity, cell_id(&table.id, &rows.name, i))
                            },
                            timestamp: c.timestamp,
                        })
                        .collect(),
                });
            }
        }
        for m in &mut makers {
            share(m);
        }
        Emitter {
            makers,
            source: Source {
                rng: Rng::new(seed),
                texture,
            },
        }
    }

    /// Whether any table takes rows of `entity`.
    pub fn makes(&self, entity: Entity) -> bool {
        !self.makers[entity as usize].is_empty()
    }

    /// Makes the rows of one instance of `entity`, its field values in the entity's order,
    /// and hands each to `sink` as (table, row); except that a row whose key is made of the
    /// user's own fields alone ([`Entity::per_user`]) goes into `gathered`, where the rows
    /// of the user's other instances add their cells to it: the caller hands those over once
    /// the user's instances of the entity are all made, and so `gathered` holds one user's
    /// rows of one entity at a time.
    #[inline]
    pub fn emit<E>(
        &self,
        entity: Entity,
        values: &[Value<'_>],
        gathered: &mut Vec<(usize, RowMutation)>,
        sink: &mut impl FnMut(usize, RowMutation) -> Result<(), E>,
    ) -> Result<(), E>
    where
        E: From<key::Error>,
    {
        self.emit_as(entity, values, false, gathered, sink)
    }

    /// [`Emitter::emit`]; `bare`: with the cells' values left empty, which cells an
    /// instance wrote, for a delete of them, without making what they hold.
    #[inline(always)]
    pub fn emit_as<E>(
        &self,
        entity: Entity,
        values: &[Value<'_>],
        bare: bool,
        gathered: &mut Vec<(usize, RowMutation)>,
        sink: &mut impl FnMut(usize, RowMutation) -> Result<(), E>,
    ) -> Result<(), E>
    where
        E: From<key::Error>,
    {
        let mut shared: Shared = Default::default();
        let mut draws = Draws {
            source: &self.source,
            instance: None,
        };
        for m in &self.makers[entity as usize] {
            // A gathering row already begun is this user's: its key is made of the user's
            // own fields, the same for every instance, so it is not made again.
            if m.gathers
                && let Some((_, g)) = gathered.iter_mut().find(|(t, _)| *t == m.table)
            {
                debug_assert_eq!(m.key.encode(values).as_deref(), Some(&g.row[..]));
                m.cells(entity, values, (&mut shared, &mut draws), bare, &mut g.mutations)?;
                continue;
            }
            let Some(row) = m.key.encode_shared(values, &mut shared) else {
                return Err(m.key.refusal(values).into());
            };
            let mut cells = Vec::with_capacity(m.cells.len());
            m.cells(entity, values, (&mut shared, &mut draws), bare, &mut cells)?;
            if m.gathers {
                gathered.push((m.table, RowMutation::new(row, cells)));
            } else {
                sink(m.table, RowMutation::new(row, cells))?;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(3000))]

        /// The emitter's encoders, their shortcuts included, write what the key's own encoder
        /// writes and refuse what it refuses, on values in and past every type's bounds.
        #[test]
        fn the_emitters_encoders_agree_with_the_keys_own(
            shape in 0usize..4,
            kind in prop::sample::select(vec!["i64", "u64", "u32", "i32", "u8"]),
            a in prop_oneof![any::<i64>().prop_map(i128::from), any::<u64>().prop_map(i128::from), -300i128..300, Just(i128::from(u64::MAX) + 1)],
            b in any::<i64>().prop_map(i128::from),
            signed in any::<bool>(),
        ) {
            let src = match shape {
                0 => format!(r#"key = [{{ decimal = "a", type = "{kind}" }}]"#),
                1 => format!(r#"key = [{{ decimal = "a", type = "{kind}", width = 12 }}]"#),
                2 => format!(r#"key = [{{ decimal = "a", type = "{kind}" }}, {{ literal = "_" }}, {{ stamp = "b", order = "reverse", form = "digits" }}]"#),
                _ => format!(r#"key = [{{ salt = "a", buckets = 7 }}, {{ int = "a", bytes = 4, signed = {signed} }}, {{ decimal = "b" }}]"#),
            };
            let key = Key::parse("k", &src).unwrap();
            let values = [Value::Int(a), Value::Int(b)];
            let values = &values[..key.fields.len()];
            let e = Encoder::new(key.clone());
            prop_assert_eq!(e.encode(values), key.encode(values).ok(), "{}", src);
        }
    }

    #[test]
    fn rows_of_one_entity_in_two_tables_and_cells_into_one_row() {
        let d = Design::parse(
            r#"
            [tables.msgs]
            name = "ns:msgs"
            families = ["m"]
            entity = "post"
            key = [{ salt = "uid", buckets = 4 }, { int = "uid", bytes = 4 }, { stamp = "stamp" }]
            cells = [
              { family = "m", qualifier = "t", value = [{ text = "content" }], timestamp = "stamp" },
              { family = "m", qualifier = [{ literal = "u" }, { decimal = "uid" }], value = "x" },
            ]
            [tables.by_user]
            families = ["i"]
            entity = "post"
            key = [{ decimal = "uid" }]
            cells = [{ family = "i", qualifier = [{ int = "stamp" }], value = { key = "msgs" } }]
            "#,
        )
        .unwrap();
        let e = Emitter::new(&d, 1, Texture::default());
        assert!(e.makes(Entity::Post) && !e.makes(Entity::User));
        let mut out = Vec::new();
        let mut gathered = Vec::new();
        let mut sink = |t, row| {
            out.push((t, row));
            Ok::<_, key::Error>(())
        };
        for stamp in [5, 3] {
            e.emit(
                Entity::Post,
                &[Value::Int(7), Value::Int(stamp), Value::Bytes(b"hi")],
                &mut gathered,
                &mut sink,
            )
            .unwrap();
        }
        out.append(&mut gathered);
        // Two messages as they come, then the index row of user 7 (keyed by the user's own
        // field alone) gathering both posts' cells.
        let rows: Vec<_> = out
            .iter()
            .map(|(t, r)| (*t, crate::keys::hex(&r.row), r.mutations.len()))
            .collect();
        let salt = format!("{:02x}", crate::keys::seed_hash(7) as u32 % 4);
        let msg = |stamp: i64| format!("{salt}00000007{}", crate::keys::hex(&(i64::MAX - stamp).to_be_bytes()));
        assert_eq!(rows, vec![(0, msg(5), 2), (0, msg(3), 2), (1, "37".into(), 2)]);
        let Mutation::Put {
            qualifier,
            value,
            timestamp,
            ..
        } = &out[0].1.mutations[1]
        else {
            panic!()
        };
        assert_eq!(
            (qualifier.as_slice(), value.as_slice(), *timestamp),
            (&b"u7"[..], &b"x"[..], None)
        );
        let Mutation::Put { qualifier, value, .. } = &out[2].1.mutations[0] else {
            panic!()
        };
        assert_eq!(qualifier, &5i64.to_be_bytes());
        assert_eq!(crate::keys::hex(value), msg(5));
        // One table alone: consecutive rows with one key merge.
        let d = Design::parse(
            r#"
            [tables.inbox]
            families = ["r"]
            entity = "delivery"
            key = [{ decimal = "reader" }]
            cells = [{ family = "r", qualifier = [{ decimal = "uid" }], value = [{ int = "stamp" }], timestamp = "stamp" }]
            "#,
        )
        .unwrap();
        let e = Emitter::new(&d, 1, Texture::default());
        let mut out = Vec::new();
        let mut gathered = Vec::new();
        let mut sink = |t, row| {
            out.push((t, row));
            Ok::<_, key::Error>(())
        };
        for (uid, stamp) in [(2, 10), (2, 9), (3, 4)] {
            e.emit(
                Entity::Delivery,
                &[Value::Int(1), Value::Int(uid), Value::Int(stamp)],
                &mut gathered,
                &mut sink,
            )
            .unwrap();
        }
        assert!(out.is_empty(), "the reader's row gathers until the caller takes it");
        out.append(&mut gathered);
        assert_eq!(out.len(), 1);
        assert_eq!(out[0].1.mutations.len(), 3);
    }

    #[test]
    fn generated_values_follow_their_size_distributions_and_are_made_again_alike() {
        let d = Design::parse(
            r#"
            [tables.t]
            families = ["f", "g"]
            entity = "post"
            key = [{ int = "uid" }, { stamp = "stamp" }]
            cells = [
              { family = "f", qualifier = "fixed", value = { size = 16, fill = "random" } },
              { family = "f", qualifier = "uniform", value = { size = "uniform", min = 5, max = 9 } },
              { family = "f", qualifier = "histogram", value = { size = "histogram", buckets = [[1, 1], [100, 3]] } },
              { family = "g", qualifier = "normal", value = { size = "normal", mean = 50, sd = 5, min = 40, max = 60 } },
              { family = "g", qualifier = "zipf", value = { size = "zipf", min = 10, max = 20, exponent = 1.2 } },
            ]
            "#,
        )
        .unwrap();
        let make = |seed: u64, stamps: std::ops::Range<i128>| {
            let e = Emitter::new(&d, seed, Texture::default());
            let mut rows = Vec::new();
            let mut gathered = Vec::new();
            for stamp in stamps {
                e.emit(
                    Entity::Post,
                    &[Value::Int(3), Value::Int(stamp), Value::Bytes(b"x")],
                    &mut gathered,
                    &mut |_, row| {
                        rows.push(row);
                        Ok::<_, key::Error>(())
                    },
                )
                .unwrap();
            }
            rows
        };
        let rows = make(9, 0..4000);
        let values = |cell: usize| -> Vec<Vec<u8>> {
            rows.iter()
                .map(|r| match &r.mutations[cell] {
                    Mutation::Put { value, .. } => value.clone(),
                    other => panic!("{other:?}"),
                })
                .collect()
        };
        let lens = |cell: usize| values(cell).iter().map(Vec::len).collect::<Vec<_>>();
        assert!(lens(0).iter().all(|&n| n == 16));
        assert!(
            values(0).iter().flatten().any(|&b| b >= 0x80),
            "random fill is not text"
        );
        let uniform = lens(1);
        assert_eq!((*uniform.iter().min().unwrap(), *uniform.iter().max().unwrap()), (5, 9));
        assert!(values(1).iter().flatten().all(|b| b.is_ascii_lowercase() || *b == b' '));
        let hist = lens(2);
        assert!(hist.iter().all(|&n| n == 1 || n == 100));
        let big = hist.iter().filter(|&&n| n == 100).count() as f64 / hist.len() as f64;
        assert!((0.72..0.78).contains(&big), "{big}");
        let normal = lens(3);
        let mean = normal.iter().sum::<usize>() as f64 / normal.len() as f64;
        assert!(
            normal.iter().all(|n| (40..=60).contains(n)) && (49.5..50.5).contains(&mean),
            "{mean}"
        );
        let zipf = lens(4);
        let count = |n: usize| zipf.iter().filter(|&&z| z == n).count();
        assert!(zipf.iter().all(|n| (10..=20).contains(n)) && count(10) > count(11) && count(11) > count(20));
        // Made again alike: the same instance the same bytes, in any order; another seed not.
        assert_eq!(make(9, 1234..1236), rows[1234..1236]);
        assert_ne!(make(10, 1234..1236), rows[1234..1236]);
        assert_ne!(values(0)[0], values(0)[1]);
    }
}
