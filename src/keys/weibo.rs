//! Microblog keys (seed 001). Content rows are text `uid_` followed by `MAX-stamp` as 19 decimal
//! digits, the seed's own fix of its `uid_ts` key so that the newest post sorts first; relation
//! and inbox rows, and their qualifiers, are the text uid.

use super::{
    Error, KeyOptions, Result, decode_stamp, encode_stamp, parse_padded19, parse_text_int, push_decimal, push_padded19,
};

const LAYOUT: &str = "weibo-content";

/// A content row's key fields; `stamp` is epoch milliseconds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ContentKey {
    /// The author.
    pub uid: u64,
    /// When the post was published (epoch ms).
    pub stamp: i64,
}

impl ContentKey {
    /// Appends the row key to `out`.
    pub fn encode_into(&self, opts: KeyOptions, out: &mut Vec<u8>) -> Result<()> {
        let stamp = encode_stamp(opts.order, "stamp", self.stamp)?;
        user_prefix(opts, self.uid, out);
        push_padded19(stamp, out);
        Ok(())
    }

    /// The row key as a new vector.
    pub fn encode(&self, opts: KeyOptions) -> Result<Vec<u8>> {
        let mut out = Vec::with_capacity(40);
        self.encode_into(opts, &mut out)?;
        Ok(out)
    }

    /// Reads a row key written with the same options.
    pub fn decode(opts: KeyOptions, key: &[u8]) -> Result<ContentKey> {
        let (salt, start) = opts.salt.split_text(LAYOUT, key)?;
        let rest = &key[start..];
        let sep = rest.iter().position(|&b| b == b'_').ok_or_else(|| Error::Malformed {
            layout: LAYOUT,
            reason: "missing the '_' after the uid".into(),
        })?;
        let uid: u64 = parse_text_int(LAYOUT, "uid", &rest[..sep])?;
        opts.salt.check_text(LAYOUT, &salt, uid as i64)?;
        let stored = parse_padded19(LAYOUT, "stamp", &rest[sep + 1..])?;
        Ok(ContentKey {
            uid,
            stamp: decode_stamp(opts.order, LAYOUT, "stamp", stored)?,
        })
    }
}

/// The prefix every content row of `uid` starts with (`uid_`, after any salt); the seed scans
/// from `uid_` to `uid|`, which is the same range.
pub fn user_prefix(opts: KeyOptions, uid: u64, out: &mut Vec<u8>) {
    opts.salt.encode_text(uid as i64, out);
    push_decimal(uid, out);
    out.push(b'_');
}

/// The text uid: a relation or inbox row key, and a relation or inbox qualifier.
pub fn uid_key(uid: u64, out: &mut Vec<u8>) {
    push_decimal(uid, out);
}

/// Reads a text uid written by [`uid_key`].
pub fn parse_uid(bytes: &[u8]) -> Result<u64> {
    parse_text_int("weibo-uid", "uid", bytes)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::keys::{Order, Salt};
    use proptest::prelude::*;

    const SEED: KeyOptions = KeyOptions::SEED;

    #[test]
    fn exact_bytes() {
        let k = ContentKey {
            uid: 1001,
            stamp: 1_600_000_000_000,
        };
        assert_eq!(k.encode(SEED).unwrap(), b"1001_9223370436854775807");
        let fwd = KeyOptions {
            order: Order::Forward,
            salt: Salt::None,
        };
        assert_eq!(k.encode(fwd).unwrap(), b"1001_0000001600000000000");
        let hashed = KeyOptions {
            order: Order::Reverse,
            salt: Salt::Hash,
        };
        assert_eq!(k.encode(hashed).unwrap(), b"000003e9_1001_9223370436854775807");
        let mut out = Vec::new();
        uid_key(42, &mut out);
        assert_eq!(out, b"42");
    }

    #[test]
    fn newest_first_and_prefixes_do_not_collide() {
        let k = |uid, stamp| ContentKey { uid, stamp }.encode(SEED).unwrap();
        assert!(k(1, 2) < k(1, 1));
        // `1_` is not a prefix of `12_...`: user 1's scan never reaches user 12.
        let mut p1 = Vec::new();
        user_prefix(SEED, 1, &mut p1);
        assert!(!k(12, 5).starts_with(&p1));
        assert!(k(1, 5).starts_with(&p1));
    }

    #[test]
    fn bad_keys_are_rejected() {
        for bad in [
            &b"1001"[..],
            b"x_9223370436854775807",
            b"1001_922337043685477580",
            b"1001_9999999999999999999",
            b"01_9223370436854775807",
        ] {
            assert!(
                matches!(ContentKey::decode(SEED, bad), Err(Error::Malformed { .. })),
                "{bad:?}"
            );
        }
    }

    fn opts() -> impl Strategy<Value = KeyOptions> {
        (
            prop_oneof![Just(Order::Reverse), Just(Order::Forward)],
            prop_oneof![Just(Salt::None), Just(Salt::Hash), (1u16..=256).prop_map(Salt::Buckets)],
        )
            .prop_map(|(order, salt)| KeyOptions { order, salt })
    }

    proptest! {
        #[test]
        fn round_trip(o in opts(), uid in any::<u64>(), stamp in 0..=i64::MAX) {
            let k = ContentKey { uid, stamp };
            prop_assert_eq!(ContentKey::decode(o, &k.encode(o).unwrap()).unwrap(), k);
        }

        #[test]
        fn order_follows_user_then_time(o in opts(), u in any::<(u64, u64)>(), s in (0..=i64::MAX, 0..=i64::MAX)) {
            let k1 = ContentKey { uid: u.0, stamp: s.0 }.encode(o).unwrap();
            let k2 = ContentKey { uid: u.1, stamp: s.1 }.encode(o).unwrap();
            let (mut p1, mut p2) = (Vec::new(), Vec::new());
            user_prefix(o, u.0, &mut p1);
            user_prefix(o, u.1, &mut p2);
            prop_assert!(k1.starts_with(&p1));
            if u.0 != u.1 {
                // Users never interleave: the other user's rows lie outside this prefix.
                prop_assert!(!k2.starts_with(&p1));
            } else if s.0 != s.1 {
                prop_assert_eq!((s.0 > s.1) == (k1 < k2), o.order == Order::Reverse);
            }
        }
    }
}
