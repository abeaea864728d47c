//! `useractions` row key (seeds 000 and 003): `userid:i32` `MAX-stamp:i64` `actionid:i32`.

use super::{Error, KeyOptions, Result, decode_stamp, encode_stamp, get_i32, get_i64};

const LAYOUT: &str = "actions";

/// One action row's key fields; `stamp` is epoch milliseconds as the application sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Key {
    /// The user.
    pub userid: i32,
    /// When the action happened (epoch ms).
    pub stamp: i64,
    /// The action's id.
    pub actionid: i32,
}

/// Encoded size with these options.
pub fn len(opts: KeyOptions) -> usize {
    opts.salt.binary_len() + 16
}

impl Key {
    /// Appends the row key to `out`.
    pub fn encode_into(&self, opts: KeyOptions, out: &mut Vec<u8>) -> Result<()> {
        let stamp = encode_stamp(opts.order, "stamp", self.stamp)?;
        user_prefix(opts, self.userid, out);
        out.extend_from_slice(&stamp.to_be_bytes());
        out.extend_from_slice(&self.actionid.to_be_bytes());
        Ok(())
    }

    /// The row key as a new vector.
    pub fn encode(&self, opts: KeyOptions) -> Result<Vec<u8>> {
        let mut out = Vec::with_capacity(len(opts));
        self.encode_into(opts, &mut out)?;
        Ok(out)
    }

    /// Reads a row key written with the same options.
    pub fn decode(opts: KeyOptions, key: &[u8]) -> Result<Key> {
        if key.len() != len(opts) {
            return Err(Error::Length {
                layout: LAYOUT,
                expected: len(opts),
                actual: key.len(),
            });
        }
        let at = opts.salt.binary_len();
        let userid = get_i32(key, at);
        opts.salt.check_binary(LAYOUT, key, i64::from(userid))?;
        Ok(Key {
            userid,
            stamp: decode_stamp(opts.order, LAYOUT, "stamp", get_i64(key, at + 4))?,
            actionid: get_i32(key, at + 12),
        })
    }
}

/// The prefix every row of `userid` starts with.
pub fn user_prefix(opts: KeyOptions, userid: i32, out: &mut Vec<u8>) {
    opts.salt.encode_binary(i64::from(userid), out);
    out.extend_from_slice(&userid.to_be_bytes());
}

/// The prefix every row of `userid` at `stamp` starts with.
pub fn stamp_prefix(opts: KeyOptions, userid: i32, stamp: i64, out: &mut Vec<u8>) -> Result<()> {
    let stamp = encode_stamp(opts.order, "stamp", stamp)?;
    user_prefix(opts, userid, out);
    out.extend_from_slice(&stamp.to_be_bytes());
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::keys::{Order, Salt, hex};
    use proptest::prelude::*;

    const SEED: KeyOptions = KeyOptions::SEED;

    fn key(userid: i32, stamp: i64, actionid: i32) -> Key {
        Key {
            userid,
            stamp,
            actionid,
        }
    }

    #[test]
    fn exact_bytes_of_the_anchor() {
        let k = key(1, 1_600_000_000_000, 7);
        assert_eq!(hex(&k.encode(SEED).unwrap()), "000000017ffffe8b78917fff00000007");
        let fwd = KeyOptions {
            order: Order::Forward,
            salt: Salt::None,
        };
        assert_eq!(hex(&k.encode(fwd).unwrap()), "0000000100000174876e800000000007");
        let salted = KeyOptions {
            order: Order::Reverse,
            salt: Salt::Buckets(16),
        };
        assert_eq!(hex(&k.encode(salted).unwrap()), "01000000017ffffe8b78917fff00000007");
    }

    #[test]
    fn newer_sorts_first_and_users_stay_apart() {
        let newer = key(1, 1_600_000_000_001, 0).encode(SEED).unwrap();
        let older = key(1, 1_600_000_000_000, 9).encode(SEED).unwrap();
        let next_user = key(2, 0, 0).encode(SEED).unwrap();
        assert!(newer < older);
        assert!(older < next_user);
        let fwd = KeyOptions {
            order: Order::Forward,
            salt: Salt::None,
        };
        assert!(key(1, 5, 0).encode(fwd).unwrap() < key(1, 6, 0).encode(fwd).unwrap());
    }

    #[test]
    fn bad_input_is_rejected() {
        assert!(matches!(
            key(1, -1, 0).encode(SEED),
            Err(Error::OutOfRange { field: "stamp", .. })
        ));
        assert!(matches!(
            Key::decode(SEED, &[0; 15]),
            Err(Error::Length {
                expected: 16,
                actual: 15,
                ..
            })
        ));
        // A stored reverse stamp with the sign bit set is no stamp the codec wrote.
        let mut bad = key(1, 0, 0).encode(SEED).unwrap();
        bad[4] = 0x80;
        assert!(matches!(Key::decode(SEED, &bad), Err(Error::Malformed { .. })));
        let salted = KeyOptions {
            order: Order::Reverse,
            salt: Salt::Buckets(16),
        };
        let mut wrong_salt = key(1, 0, 0).encode(salted).unwrap();
        wrong_salt[0] = 2;
        assert!(matches!(Key::decode(salted, &wrong_salt), Err(Error::Malformed { .. })));
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
        fn round_trip(o in opts(), u in any::<i32>(), s in 0..=i64::MAX, a in any::<i32>()) {
            let k = key(u, s, a);
            prop_assert_eq!(Key::decode(o, &k.encode(o).unwrap()).unwrap(), k);
        }

        #[test]
        fn order_follows_user_then_time(o in opts(), a in any::<(i32, i32)>(), s in (0..=i64::MAX, 0..=i64::MAX), id in any::<(i32, i32)>()) {
            let k1 = key(a.0, s.0, id.0).encode(o).unwrap();
            let k2 = key(a.1, s.1, id.1).encode(o).unwrap();
            if a.0 != a.1 {
                // Different users compare as their prefixes do, whatever the other fields.
                let (mut p1, mut p2) = (Vec::new(), Vec::new());
                user_prefix(o, a.0, &mut p1);
                user_prefix(o, a.1, &mut p2);
                prop_assert_eq!(k1.cmp(&k2), p1.cmp(&p2));
                prop_assert!(!p2.starts_with(&p1));
            } else if s.0 != s.1 {
                let newer_first = (s.0 > s.1) == (k1 < k2);
                prop_assert_eq!(newer_first, o.order == Order::Reverse);
            }
        }
    }
}
