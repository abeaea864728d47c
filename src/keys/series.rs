//! Time-series row key (seed 004): text `userid_(MAX-dataTime)_insertNanos`. The time field is
//! written as 19 zero-padded digits (the seed's `Long.MAX_VALUE - time` is 19 digits for every
//! date it can meet, and padding keeps that true for any time), so text order is time order.

use super::{
    Error, KeyOptions, Result, decode_stamp, encode_stamp, parse_padded19, parse_text_int, push_decimal, push_padded19,
};

const LAYOUT: &str = "series";

/// A point's key fields.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Key {
    /// The user.
    pub userid: i32,
    /// The time the data belongs to (epoch ms).
    pub time: i64,
    /// When it was inserted (ns); it tells apart points of one user at one time.
    pub nanos: i64,
}

impl Key {
    /// Appends the row key to `out`.
    pub fn encode_into(&self, opts: KeyOptions, out: &mut Vec<u8>) -> Result<()> {
        let time = encode_stamp(opts.order, "time", self.time)?;
        if self.nanos < 0 {
            return Err(Error::OutOfRange {
                field: "nanos",
                value: self.nanos.to_string(),
                allowed: "0 to 9223372036854775807",
            });
        }
        time_prefix_raw(opts, self.userid, time, out);
        push_decimal(self.nanos, out);
        Ok(())
    }

    /// The row key as a new vector.
    pub fn encode(&self, opts: KeyOptions) -> Result<Vec<u8>> {
        let mut out = Vec::with_capacity(48);
        self.encode_into(opts, &mut out)?;
        Ok(out)
    }

    /// Reads a row key written with the same options.
    pub fn decode(opts: KeyOptions, key: &[u8]) -> Result<Key> {
        let (salt, start) = opts.salt.split_text(LAYOUT, key)?;
        let parts: Vec<&[u8]> = key[start..].split(|&b| b == b'_').collect();
        let [userid, time, nanos] = parts[..] else {
            return Err(Error::Malformed {
                layout: LAYOUT,
                reason: format!("expected userid_time_nanos, found {} '_'-separated parts", parts.len()),
            });
        };
        let userid: i32 = parse_text_int(LAYOUT, "userid", userid)?;
        opts.salt.check_text(LAYOUT, &salt, i64::from(userid))?;
        let time = decode_stamp(opts.order, LAYOUT, "time", parse_padded19(LAYOUT, "time", time)?)?;
        let nanos: i64 = parse_text_int(LAYOUT, "nanos", nanos)?;
        if nanos < 0 {
            return Err(Error::Malformed {
                layout: LAYOUT,
                reason: format!("nanos {nanos} is negative"),
            });
        }
        Ok(Key { userid, time, nanos })
    }
}

/// The prefix every row of `userid` starts with (`userid_`, after any salt).
pub fn user_prefix(opts: KeyOptions, userid: i32, out: &mut Vec<u8>) {
    opts.salt.encode_text(i64::from(userid), out);
    push_decimal(userid, out);
    out.push(b'_');
}

/// The prefix every row of `userid` at `time` starts with.
pub fn time_prefix(opts: KeyOptions, userid: i32, time: i64, out: &mut Vec<u8>) -> Result<()> {
    let time = encode_stamp(opts.order, "time", time)?;
    time_prefix_raw(opts, userid, time, out);
    Ok(())
}

fn time_prefix_raw(opts: KeyOptions, userid: i32, stored_time: i64, out: &mut Vec<u8>) {
    user_prefix(opts, userid, out);
    push_padded19(stored_time, out);
    out.push(b'_');
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::keys::{Order, Salt};
    use proptest::prelude::*;

    const SEED: KeyOptions = KeyOptions::SEED;

    #[test]
    fn exact_bytes() {
        let k = Key {
            userid: 352,
            time: 1_400_657_685_457,
            nanos: 81_234_567_890,
        };
        assert_eq!(k.encode(SEED).unwrap(), b"352_9223370636197090350_81234567890");
        let fwd = KeyOptions {
            order: Order::Forward,
            salt: Salt::None,
        };
        assert_eq!(k.encode(fwd).unwrap(), b"352_0000001400657685457_81234567890");
        let neg = Key {
            userid: -4,
            time: 0,
            nanos: 0,
        };
        assert_eq!(neg.encode(SEED).unwrap(), b"-4_9223372036854775807_0");
    }

    #[test]
    fn newest_first_within_a_user() {
        let k = |time, nanos| Key { userid: 7, time, nanos }.encode(SEED).unwrap();
        assert!(k(2000, 5) < k(1999, 1));
        let mut p = Vec::new();
        user_prefix(SEED, 7, &mut p);
        assert!(
            !Key {
                userid: 77,
                time: 1,
                nanos: 1
            }
            .encode(SEED)
            .unwrap()
            .starts_with(&p)
        );
    }

    #[test]
    fn bad_keys_are_rejected() {
        for bad in [
            &b"7_9223370636197090350"[..],
            b"7_9223370636197090350_1_2",
            b"7_922337063619709035_1",
            b"7_9223370636197090350_-1",
            b"9999999999_9223370636197090350_1",
            b"07_9223370636197090350_1",
        ] {
            assert!(
                matches!(Key::decode(SEED, bad), Err(Error::Malformed { .. })),
                "{bad:?}"
            );
        }
        assert!(matches!(
            Key {
                userid: 1,
                time: 1,
                nanos: -1
            }
            .encode(SEED),
            Err(Error::OutOfRange { field: "nanos", .. })
        ));
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
        fn round_trip(o in opts(), userid in any::<i32>(), time in 0..=i64::MAX, nanos in 0..=i64::MAX) {
            let k = Key { userid, time, nanos };
            prop_assert_eq!(Key::decode(o, &k.encode(o).unwrap()).unwrap(), k);
        }

        #[test]
        fn order_follows_user_then_time(o in opts(), u in any::<(i32, i32)>(), t in (0..=i64::MAX, 0..=i64::MAX), n in (0..=i64::MAX, 0..=i64::MAX)) {
            let k1 = Key { userid: u.0, time: t.0, nanos: n.0 }.encode(o).unwrap();
            let k2 = Key { userid: u.1, time: t.1, nanos: n.1 }.encode(o).unwrap();
            let mut p1 = Vec::new();
            user_prefix(o, u.0, &mut p1);
            prop_assert!(k1.starts_with(&p1));
            if u.0 != u.1 {
                prop_assert!(!k2.starts_with(&p1));
            } else if t.0 != t.1 {
                prop_assert_eq!((t.0 > t.1) == (k1 < k2), o.order == Order::Reverse);
            }
        }
    }
}
