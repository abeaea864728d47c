//! `blog` row keys (seed 002). Articles: `hash(uid):i32` `uid:i64` `0x00` `MAX-postAt:i64`
//! `articleId:i64` (29 bytes). Category index: `hash(uid):i32` `uid:i64` `0x01`
//! `categoryId:i32` `MAX-postAt:i64` `articleId:i64` (33 bytes). The `0x00`/`0x01` tag keeps a
//! user's articles and index rows in separate, adjacent ranges.

use super::{Error, KeyOptions, Result, decode_stamp, encode_stamp, get_i32, get_i64};

const ARTICLE: &str = "blog";
const INDEX: &str = "blog-index";
/// Tag byte of article rows.
pub const ARTICLE_TAG: u8 = 0;
/// Tag byte of category index rows.
pub const INDEX_TAG: u8 = 1;

/// An article row's key fields.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ArticleKey {
    /// The author.
    pub uid: i64,
    /// When the article was posted (epoch ms).
    pub post_at: i64,
    /// The article's id.
    pub article_id: i64,
}

/// A category index row's key fields.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct IndexKey {
    /// The author.
    pub uid: i64,
    /// The article's category.
    pub category: i32,
    /// When the article was posted (epoch ms).
    pub post_at: i64,
    /// The article's id.
    pub article_id: i64,
}

/// Size of an article key with these options.
pub fn article_len(opts: KeyOptions) -> usize {
    opts.salt.binary_len() + 25
}

/// Size of an index key with these options.
pub fn index_len(opts: KeyOptions) -> usize {
    opts.salt.binary_len() + 29
}

/// The prefix of every row of `uid` with tag `tag` (articles or index).
pub fn user_prefix(opts: KeyOptions, uid: i64, tag: u8, out: &mut Vec<u8>) {
    opts.salt.encode_binary(uid, out);
    out.extend_from_slice(&uid.to_be_bytes());
    out.push(tag);
}

/// The prefix of every index row of `uid` in `category`.
pub fn category_prefix(opts: KeyOptions, uid: i64, category: i32, out: &mut Vec<u8>) {
    user_prefix(opts, uid, INDEX_TAG, out);
    out.extend_from_slice(&category.to_be_bytes());
}

fn check(layout: &'static str, opts: KeyOptions, key: &[u8], expected: usize, tag: u8) -> Result<(i64, usize)> {
    if key.len() != expected {
        return Err(Error::Length {
            layout,
            expected,
            actual: key.len(),
        });
    }
    let at = opts.salt.binary_len();
    let uid = get_i64(key, at);
    opts.salt.check_binary(layout, key, uid)?;
    if key[at + 8] != tag {
        return Err(Error::Malformed {
            layout,
            reason: format!("tag byte is {:#04x}, expected {tag:#04x}", key[at + 8]),
        });
    }
    Ok((uid, at + 9))
}

impl ArticleKey {
    /// Appends the row key to `out`.
    pub fn encode_into(&self, opts: KeyOptions, out: &mut Vec<u8>) -> Result<()> {
        let post_at = encode_stamp(opts.order, "post_at", self.post_at)?;
        user_prefix(opts, self.uid, ARTICLE_TAG, out);
        out.extend_from_slice(&post_at.to_be_bytes());
        out.extend_from_slice(&self.article_id.to_be_bytes());
        Ok(())
    }

    /// The row key as a new vector.
    pub fn encode(&self, opts: KeyOptions) -> Result<Vec<u8>> {
        let mut out = Vec::with_capacity(article_len(opts));
        self.encode_into(opts, &mut out)?;
        Ok(out)
    }

    /// Reads a row key written with the same options.
    pub fn decode(opts: KeyOptions, key: &[u8]) -> Result<ArticleKey> {
        let (uid, at) = check(ARTICLE, opts, key, article_len(opts), ARTICLE_TAG)?;
        Ok(ArticleKey {
            uid,
            post_at: decode_stamp(opts.order, ARTICLE, "post_at", get_i64(key, at))?,
            article_id: get_i64(key, at + 8),
        })
    }
}

impl IndexKey {
    /// Appends the row key to `out`.
    pub fn encode_into(&self, opts: KeyOptions, out: &mut Vec<u8>) -> Result<()> {
        let post_at = encode_stamp(opts.order, "post_at", self.post_at)?;
        category_prefix(opts, self.uid, self.category, out);
        out.extend_from_slice(&post_at.to_be_bytes());
        out.extend_from_slice(&self.article_id.to_be_bytes());
        Ok(())
    }

    /// The row key as a new vector.
    pub fn encode(&self, opts: KeyOptions) -> Result<Vec<u8>> {
        let mut out = Vec::with_capacity(index_len(opts));
        self.encode_into(opts, &mut out)?;
        Ok(out)
    }

    /// Reads a row key written with the same options.
    pub fn decode(opts: KeyOptions, key: &[u8]) -> Result<IndexKey> {
        let (uid, at) = check(INDEX, opts, key, index_len(opts), INDEX_TAG)?;
        Ok(IndexKey {
            uid,
            category: get_i32(key, at),
            post_at: decode_stamp(opts.order, INDEX, "post_at", get_i64(key, at + 4))?,
            article_id: get_i64(key, at + 12),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::keys::{Order, Salt, hex};
    use proptest::prelude::*;

    const SEED: KeyOptions = KeyOptions::BLOG_SEED;

    fn article(uid: i64, post_at: i64, article_id: i64) -> ArticleKey {
        ArticleKey {
            uid,
            post_at,
            article_id,
        }
    }

    fn index(uid: i64, category: i32, post_at: i64, article_id: i64) -> IndexKey {
        IndexKey {
            uid,
            category,
            post_at,
            article_id,
        }
    }

    #[test]
    fn exact_bytes_of_the_anchors() {
        let a = article(123_456_789_012, 1_600_000_000_000, 42).encode(SEED).unwrap();
        assert_eq!(hex(&a), "be991a080000001cbe991a14007ffffe8b78917fff000000000000002a");
        assert_eq!(a.len(), 29);
        let i = index(123_456_789_012, 5, 1_600_000_000_000, 42).encode(SEED).unwrap();
        assert_eq!(
            hex(&i),
            "be991a080000001cbe991a1401000000057ffffe8b78917fff000000000000002a"
        );
        assert_eq!(i.len(), 33);
        let unsalted = KeyOptions {
            order: Order::Reverse,
            salt: Salt::None,
        };
        assert_eq!(
            hex(&article(123_456_789_012, 1_600_000_000_000, 42)
                .encode(unsalted)
                .unwrap()),
            "0000001cbe991a14007ffffe8b78917fff000000000000002a"
        );
    }

    #[test]
    fn articles_then_index_and_newest_first() {
        let uid = 77;
        let newest = article(uid, 2000, 1).encode(SEED).unwrap();
        let oldest = article(uid, 1000, 2).encode(SEED).unwrap();
        let idx = index(uid, 0, 3000, 3).encode(SEED).unwrap();
        assert!(newest < oldest && oldest < idx);
        assert!(index(uid, 1, 2000, 1).encode(SEED).unwrap() < index(uid, 1, 1000, 1).encode(SEED).unwrap());
        assert!(index(uid, 1, 0, 1).encode(SEED).unwrap() < index(uid, 2, 5000, 1).encode(SEED).unwrap());
    }

    #[test]
    fn bad_keys_are_rejected() {
        let a = article(1, 1, 1).encode(SEED).unwrap();
        assert!(matches!(
            IndexKey::decode(SEED, &a),
            Err(Error::Length {
                expected: 33,
                actual: 29,
                ..
            })
        ));
        let mut wrong_tag = a.clone();
        wrong_tag[12] = 1;
        assert!(matches!(
            ArticleKey::decode(SEED, &wrong_tag),
            Err(Error::Malformed { .. })
        ));
        let mut wrong_hash = a;
        wrong_hash[0] ^= 1;
        assert!(matches!(
            ArticleKey::decode(SEED, &wrong_hash),
            Err(Error::Malformed { .. })
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
        fn round_trip(o in opts(), uid in any::<i64>(), c in any::<i32>(), p in 0..=i64::MAX, id in any::<i64>()) {
            let a = article(uid, p, id);
            prop_assert_eq!(ArticleKey::decode(o, &a.encode(o).unwrap()).unwrap(), a);
            let i = index(uid, c, p, id);
            prop_assert_eq!(IndexKey::decode(o, &i.encode(o).unwrap()).unwrap(), i);
        }

        #[test]
        fn users_and_categories_stay_apart(o in opts(), u in any::<(i64, i64)>(), c in any::<(i32, i32)>(), p in (0..=i64::MAX, 0..=i64::MAX), id in any::<(i64, i64)>()) {
            let i1 = index(u.0, c.0, p.0, id.0).encode(o).unwrap();
            let i2 = index(u.1, c.1, p.1, id.1).encode(o).unwrap();
            let a1 = article(u.0, p.0, id.0).encode(o).unwrap();
            let mut cat1 = Vec::new();
            category_prefix(o, u.0, c.0, &mut cat1);
            let mut art1 = Vec::new();
            user_prefix(o, u.0, ARTICLE_TAG, &mut art1);
            prop_assert!(i1.starts_with(&cat1) && a1.starts_with(&art1));
            prop_assert!(!i1.starts_with(&art1));
            if (u.0, c.0) != (u.1, c.1) {
                prop_assert!(!i2.starts_with(&cat1));
            } else if p.0 != p.1 {
                prop_assert_eq!((p.0 > p.1) == (i1 < i2), o.order == Order::Reverse);
            }
        }
    }
}
