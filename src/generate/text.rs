//! Synthetic text of an exact length: words drawn from a fixed vocabulary.

use super::rng::Stream;

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
}
