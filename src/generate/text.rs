//! Synthetic text of an exact length: words drawn from a fixed vocabulary, and, when a
//! workload asks for a compressibility, some words replaced by random letters (less
//! compressible) or by the word before (more).

use super::rng::Stream;
use std::io::Write;

const WORDS: [&str; 64] = [
    "the", "river", "light", "market", "coffee", "train", "morning", "code", "city", "rain", "music", "night",
    "garden", "window", "story", "friend", "photo", "summer", "winter", "road", "mountain", "sea", "book", "game",
    "street", "lunch", "dinner", "weekend", "office", "release", "update", "launch", "news", "match", "goal", "team",
    "song", "movie", "trip", "flight", "hotel", "park", "dog", "cat", "bike", "run", "walk", "snow", "sun", "cloud",
    "data", "server", "table", "region", "row", "key", "load", "test", "happy", "great", "new", "today", "tomorrow",
    "again",
];

/// Appends `len` bytes of ASCII words to `out`, from draws of `stream`.
pub fn words(stream: &Stream, len: usize, out: &mut String) {
    let end = out.len() + len;
    let mut i = 0u64;
    'fill: loop {
        let mut bits = stream.u64(i);
        i += 1;
        for _ in 0..10 {
            if out.len() >= end {
                break 'fill;
            }
            if out.len() + 1 < end && !out.is_empty() && !out.ends_with(' ') {
                out.push(' ');
            }
            out.push_str(WORDS[(bits & 63) as usize]);
            bits >>= 6;
        }
    }
    out.truncate(end);
    // A trailing space would make lengths differ after trimming clients; end on a letter.
    if out.ends_with(' ') {
        out.pop();
        out.push('x');
    }
}

/// How text departs from the plain vocabulary: shares of word slots.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Texture {
    /// Filled with five random letters and digits.
    pub random: f64,
    /// Filled with the word before.
    pub repeat: f64,
}

/// The letters of a random token: 32, five bits each.
const LETTERS: &[u8; 32] = b"abcdefghijklmnopqrstuvwxyz012345";

/// Appends `len` bytes of ASCII text of `texture` to `out`; the plain texture gives exactly
/// what [`words`] gives.
pub fn words_with(stream: &Stream, len: usize, out: &mut String, texture: Texture) {
    if texture == Texture::default() {
        return words(stream, len, out);
    }
    let end = out.len() + len;
    let mut prev = 0usize;
    let mut token = [0u8; 5];
    for i in 0u64.. {
        if out.len() >= end {
            break;
        }
        if out.len() + 1 < end && !out.is_empty() && !out.ends_with(' ') {
            out.push(' ');
        }
        // One draw a word: 6 bits of word, 24 of choice, 25 of letters.
        let bits = stream.u64(i);
        let choice = ((bits >> 6) & 0xFF_FFFF) as f64 / f64::from(1u32 << 24);
        if choice < texture.random {
            for (k, t) in token.iter_mut().enumerate() {
                *t = LETTERS[((bits >> (30 + 5 * k)) & 31) as usize];
            }
            out.push_str(std::str::from_utf8(&token).expect("ASCII"));
        } else if choice < texture.random + texture.repeat && i > 0 {
            out.push_str(WORDS[prev]);
        } else {
            prev = (bits & 63) as usize;
            out.push_str(WORDS[prev]);
        }
    }
    out.truncate(end);
    if out.ends_with(' ') {
        out.pop();
        out.push('x');
    }
}

/// The ratio DEFLATE (gzip's level 6, as HBase's GZ codec compresses) reaches on 64 KiB of
/// text of `texture`: a block's worth at HBase's default block size.
pub fn deflate_ratio(texture: Texture) -> f64 {
    let rng = super::rng::Rng::new(0x7e47);
    let mut text = String::with_capacity(SAMPLE);
    words_with(&rng.stream(super::rng::Kind::Post, 0, 0), SAMPLE, &mut text, texture);
    let mut z = flate2::write::DeflateEncoder::new(Vec::new(), flate2::Compression::new(6));
    z.write_all(text.as_bytes()).expect("a Vec grows");
    let compressed = z.finish().expect("a Vec grows");
    SAMPLE as f64 / compressed.len() as f64
}

const SAMPLE: usize = 64 << 10;

/// Most words a texture repeats.
const MAX_REPEAT: f64 = 0.95;

/// The texture whose text DEFLATE compresses `ratio` times (to 0.5% of it), found by
/// bisection over the share of random or of repeated words; a ratio out of reach names the
/// range there is.
pub fn texture_for(ratio: f64) -> Result<Texture, String> {
    let plain = deflate_ratio(Texture::default());
    let lowest = deflate_ratio(Texture {
        random: 1.0,
        repeat: 0.0,
    });
    let highest = deflate_ratio(Texture {
        random: 0.0,
        repeat: MAX_REPEAT,
    });
    if !(lowest..=highest).contains(&ratio) {
        return Err(format!(
            "{ratio} is out of reach: the generated text compresses {lowest:.2} to {highest:.2} times ({plain:.2} as it is)"
        ));
    }
    let at = |share: f64| {
        if ratio < plain {
            Texture {
                random: share,
                repeat: 0.0,
            }
        } else {
            Texture {
                random: 0.0,
                repeat: share,
            }
        }
    };
    // The ratio falls as random words grow and rises as repeated ones do.
    let (mut lo, mut hi) = (0.0, if ratio < plain { 1.0 } else { MAX_REPEAT });
    for _ in 0..40 {
        let mid = (lo + hi) / 2.0;
        let r = deflate_ratio(at(mid));
        if (r - ratio).abs() <= ratio * 0.005 {
            return Ok(at(mid));
        }
        if (r > ratio) == (ratio < plain) {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    Ok(at((lo + hi) / 2.0))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::generate::rng::{Kind, Rng};

    #[test]
    fn exact_lengths_and_deterministic() {
        let s = Rng::new(1).stream(Kind::Post, 1, 1);
        for len in [0usize, 1, 2, 85, 250, 5000] {
            let mut a = String::new();
            words(&s, len, &mut a);
            assert_eq!(a.len(), len);
            let mut b = String::from("x");
            words(&s, len, &mut b);
            assert_eq!(&b[1..].len(), &len);
            assert!(a.is_ascii());
        }
        let (mut a, mut b) = (String::new(), String::new());
        words(&s, 100, &mut a);
        words(&s, 100, &mut b);
        assert_eq!(a, b);
    }

    #[test]
    fn textures_keep_lengths_and_the_plain_one_is_todays_text() {
        let s = Rng::new(1).stream(Kind::Post, 1, 1);
        let t = Texture {
            random: 0.3,
            repeat: 0.2,
        };
        for len in [0usize, 1, 2, 85, 250, 5000] {
            let mut a = String::new();
            words_with(&s, len, &mut a, t);
            assert_eq!(a.len(), len);
            assert!(a.is_ascii() && !a.ends_with(' '));
            let (mut plain, mut today) = (String::new(), String::new());
            words_with(&s, len, &mut plain, Texture::default());
            words(&s, len, &mut today);
            assert_eq!(plain, today);
        }
    }

    #[test]
    fn a_texture_reaches_the_ratio_asked_for() {
        let plain = deflate_ratio(Texture::default());
        for ratio in [1.8, 2.5, plain, 5.0, 8.0] {
            let t = texture_for(ratio).unwrap();
            let got = deflate_ratio(t);
            assert!((got - ratio).abs() <= ratio * 0.005, "{ratio}: {got} with {t:?}");
        }
        // The figures docs/storage.md gives.
        assert_eq!(format!("{plain:.3}"), "4.121");
        assert_eq!(
            texture_for(50.0).unwrap_err(),
            "50 is out of reach: the generated text compresses 1.51 to 31.45 times (4.12 as it is)"
        );
        let shares: Vec<String> = [2.0, 3.0, 6.0, 8.0, 10.0]
            .into_iter()
            .map(|r| {
                let t = texture_for(r).unwrap();
                format!("{:.1}% {:.3}", 100.0 * (t.random + t.repeat), deflate_ratio(t))
            })
            .collect();
        assert_eq!(
            shares,
            [
                "51.6% 2.006",
                "16.4% 2.994",
                "53.4% 5.983",
                "69.4% 7.999",
                "77.6% 10.024"
            ]
        );
    }
}
