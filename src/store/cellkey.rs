//! How a cell's coordinates become one fjall key, so that fjall's byte order is HBase's cell
//! order: row, then family, then qualifier ascending, then timestamp descending.
//!
//! `escape(row) 00 01 | family index:u8 | escape(qualifier) 00 01 | MAX-timestamp:u64`
//!
//! `escape` writes `00` as `00 FF` and leaves every other byte alone. The terminator `00 01`
//! sorts below any escaped continuation (`00 FF` or a non-zero byte), so a row sorts before
//! every longer row it is a prefix of, exactly as unsigned byte order says; and the encoded
//! row is a prefix of every key of that row and of no other row's key.

use crate::keys::next_prefix;
use std::ops::Bound;

/// Appends `bytes`, escaped and terminated.
pub fn push_escaped(bytes: &[u8], out: &mut Vec<u8>) {
    for &b in bytes {
        out.push(b);
        if b == 0 {
            out.push(0xFF);
        }
    }
    out.extend_from_slice(&[0, 1]);
}

/// The prefix of every key of `row`.
pub fn row_prefix(row: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(row.len() + 2);
    push_escaped(row, &mut out);
    out
}

/// The prefix of every key of one column of a row.
pub fn column_prefix(row_prefix: &[u8], family: u8, qualifier: &[u8], out: &mut Vec<u8>) {
    out.clear();
    out.extend_from_slice(row_prefix);
    out.push(family);
    push_escaped(qualifier, out);
}

/// Timestamps are validated non-negative; `MAX - ts` makes newer versions sort first.
pub fn encode_ts(ts: i64) -> [u8; 8] {
    debug_assert!(ts >= 0);
    ((i64::MAX - ts) as u64).to_be_bytes()
}

/// The timestamp of a full cell key.
pub fn decode_ts(key: &[u8]) -> i64 {
    let raw = u64::from_be_bytes(key[key.len() - 8..].try_into().expect("8 bytes"));
    i64::MAX - raw as i64
}

/// Finds the end of an escaped, terminated field starting at `at`; returns the index just
/// past the terminator, and writes the unescaped bytes into `out` when given.
pub fn split_escaped(key: &[u8], at: usize, mut out: Option<&mut Vec<u8>>) -> usize {
    let mut i = at;
    loop {
        let b = key[i];
        if b == 0 {
            if key[i + 1] == 1 {
                return i + 2;
            }
            // `00 FF`: an escaped zero byte.
            if let Some(o) = out.as_deref_mut() {
                o.push(0);
            }
            i += 2;
        } else {
            if let Some(o) = out.as_deref_mut() {
                o.push(b);
            }
            i += 1;
        }
    }
}

/// The index just past the escaped, terminated field starting at `at`, or `None` where
/// the bytes hold none: for keys that may not be well formed, where `split_escaped` would
/// panic.
pub fn escaped_end(key: &[u8], at: usize) -> Option<usize> {
    let mut i = at;
    while i + 1 < key.len() {
        match (key[i], key[i + 1]) {
            (0, 1) => return Some(i + 2),
            (0, _) => i += 2,
            _ => i += 1,
        }
    }
    None
}

/// The fjall key range of a scan's rows: `(lower, upper)` over encoded keys.
pub fn scan_bounds(scan: &crate::store::Scan) -> (Bound<Vec<u8>>, Bound<Vec<u8>>) {
    // Past every key of `row`: its encoded prefix with the terminator's last byte raised.
    let after = |row: &[u8]| {
        let mut k = row_prefix(row);
        *k.last_mut().expect("terminator") = 2;
        k
    };
    let (mut lower, mut upper) = if scan.reversed {
        let upper = match (scan.start.is_empty(), scan.start_exclusive) {
            (true, _) => Bound::Unbounded,
            (false, false) => Bound::Excluded(after(&scan.start)),
            (false, true) => Bound::Excluded(row_prefix(&scan.start)),
        };
        let lower = if scan.stop.is_empty() {
            Bound::Unbounded
        } else {
            Bound::Included(after(&scan.stop))
        };
        (lower, upper)
    } else {
        let lower = match (scan.start.is_empty(), scan.start_exclusive) {
            (true, _) => Bound::Unbounded,
            (false, false) => Bound::Included(row_prefix(&scan.start)),
            (false, true) => Bound::Included(after(&scan.start)),
        };
        let upper = if scan.stop.is_empty() {
            Bound::Unbounded
        } else {
            Bound::Excluded(row_prefix(&scan.stop))
        };
        (lower, upper)
    };
    if !scan.prefix.is_empty() {
        // The escaped prefix without its terminator starts every key of every row that
        // starts with the prefix, and no other.
        let mut p = row_prefix(&scan.prefix);
        p.truncate(p.len() - 2);
        let end = next_prefix(&p);
        lower = max_lower(lower, Bound::Included(p));
        if !end.is_empty() {
            upper = min_upper(upper, Bound::Excluded(end));
        }
    }
    (lower, upper)
}

fn max_lower(a: Bound<Vec<u8>>, b: Bound<Vec<u8>>) -> Bound<Vec<u8>> {
    match (&a, &b) {
        (Bound::Unbounded, _) => b,
        (_, Bound::Unbounded) => a,
        (Bound::Included(x) | Bound::Excluded(x), Bound::Included(y) | Bound::Excluded(y)) => {
            if x >= y {
                a
            } else {
                b
            }
        }
    }
}

fn min_upper(a: Bound<Vec<u8>>, b: Bound<Vec<u8>>) -> Bound<Vec<u8>> {
    match (&a, &b) {
        (Bound::Unbounded, _) => b,
        (_, Bound::Unbounded) => a,
        (Bound::Included(x) | Bound::Excluded(x), Bound::Included(y) | Bound::Excluded(y)) => {
            if x <= y {
                a
            } else {
                b
            }
        }
    }
}

/// Whether the range holds no key at all (fjall wants `lower <= upper`).
pub fn is_empty_range(lower: &Bound<Vec<u8>>, upper: &Bound<Vec<u8>>) -> bool {
    match (lower, upper) {
        (Bound::Included(l) | Bound::Excluded(l), Bound::Excluded(u)) => l >= u,
        (Bound::Included(l) | Bound::Excluded(l), Bound::Included(u)) => l > u,
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn key(row: &[u8], family: u8, qualifier: &[u8], ts: i64) -> Vec<u8> {
        let mut k = Vec::new();
        column_prefix(&row_prefix(row), family, qualifier, &mut k);
        k.extend_from_slice(&encode_ts(ts));
        k
    }

    #[test]
    fn exact_bytes() {
        assert_eq!(
            key(b"a\x00", 1, b"", 0),
            [
                b'a', 0, 0xFF, 0, 1, 1, 0, 1, 0x7F, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF
            ]
        );
    }

    proptest! {
        #[test]
        fn key_order_is_cell_order(a in (proptest::collection::vec(any::<u8>(), 0..6), 0u8..3, proptest::collection::vec(any::<u8>(), 0..4), 0..=i64::MAX),
                                   b in (proptest::collection::vec(any::<u8>(), 0..6), 0u8..3, proptest::collection::vec(any::<u8>(), 0..4), 0..=i64::MAX)) {
            let ka = key(&a.0, a.1, &a.2, a.3);
            let kb = key(&b.0, b.1, &b.2, b.3);
            let expected = (&a.0, a.1, &a.2, std::cmp::Reverse(a.3)).cmp(&(&b.0, b.1, &b.2, std::cmp::Reverse(b.3)));
            prop_assert_eq!(ka.cmp(&kb), expected);
            // Round trip of every field.
            let mut row = Vec::new();
            let end = split_escaped(&ka, 0, Some(&mut row));
            prop_assert_eq!(&row, &a.0);
            prop_assert_eq!(ka[end], a.1);
            let mut q = Vec::new();
            split_escaped(&ka, end + 1, Some(&mut q));
            prop_assert_eq!(&q, &a.2);
            prop_assert_eq!(decode_ts(&ka), a.3);
            // A row's prefix starts its keys and no other row's.
            prop_assert_eq!(kb.starts_with(&row_prefix(&a.0)), a.0 == b.0);
        }
    }
}
