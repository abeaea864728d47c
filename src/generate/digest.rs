//! A fast, stable 128-bit digest of byte streams: the workload digest in reports and the
//! check that generated data is the same on any thread count. Not a cryptographic hash.

use super::rng::mix;

/// A streaming digest; feed bytes with [`Digest::write`], read it with [`Digest::value`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Digest {
    a: u64,
    b: u64,
    len: u64,
    tail: [u8; 8],
    fill: usize,
}

impl Default for Digest {
    fn default() -> Self {
        Digest {
            a: 0x243f_6a88_85a3_08d3,
            b: 0x1319_8a2e_0370_7344,
            len: 0,
            tail: [0; 8],
            fill: 0,
        }
    }
}

impl Digest {
    #[inline]
    fn word(&mut self, w: u64) {
        self.a = mix(self.a ^ w).wrapping_add(self.b.rotate_left(23));
        self.b = mix(self.b.wrapping_add(w) ^ 0x9e37_79b9_7f4a_7c15).rotate_left(17) ^ self.a;
    }

    /// Feeds bytes.
    pub fn write(&mut self, mut bytes: &[u8]) {
        self.len += bytes.len() as u64;
        if self.fill > 0 {
            let take = (8 - self.fill).min(bytes.len());
            self.tail[self.fill..self.fill + take].copy_from_slice(&bytes[..take]);
            self.fill += take;
            bytes = &bytes[take..];
            if self.fill < 8 {
                return;
            }
            self.word(u64::from_le_bytes(self.tail));
            self.fill = 0;
        }
        let mut chunks = bytes.chunks_exact(8);
        for c in &mut chunks {
            self.word(u64::from_le_bytes(c.try_into().expect("8 bytes")));
        }
        let rest = chunks.remainder();
        self.tail[..rest.len()].copy_from_slice(rest);
        self.fill = rest.len();
    }

    /// Feeds a length-prefixed field, so that field boundaries count.
    pub fn field(&mut self, bytes: &[u8]) {
        self.write(&(bytes.len() as u64).to_le_bytes());
        self.write(bytes);
    }

    /// The digest of everything fed so far.
    pub fn value(&self) -> u128 {
        let mut d = *self;
        let mut last = [0u8; 8];
        last[..d.fill].copy_from_slice(&d.tail[..d.fill]);
        d.word(u64::from_le_bytes(last));
        d.word(d.len);
        (u128::from(mix(d.a ^ d.b.rotate_left(32))) << 64) | u128::from(mix(d.b.wrapping_add(d.a)))
    }

    /// The digest as 32 hex digits.
    pub fn hex(&self) -> String {
        format!("{:032x}", self.value())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn of(parts: &[&[u8]]) -> u128 {
        let mut d = Digest::default();
        for p in parts {
            d.write(p);
        }
        d.value()
    }

    #[test]
    fn chunking_does_not_matter_but_content_does() {
        let whole = of(&[b"hello, digest world"]);
        assert_eq!(whole, of(&[b"hel", b"lo, dige", b"", b"st world"]));
        assert_ne!(whole, of(&[b"hello, digest worle"]));
        assert_ne!(of(&[b""]), of(&[b"\0"]));
        assert_ne!(of(&[b"\0"]), of(&[b"\0\0"]));
        let mut a = Digest::default();
        a.field(b"ab");
        a.field(b"c");
        let mut b = Digest::default();
        b.field(b"a");
        b.field(b"bc");
        assert_ne!(a.value(), b.value());
    }
}
