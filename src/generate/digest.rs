//! A fast, stable 128-bit digest of sequences of byte strings: the workload digest in reports
//! and the check that generated data is the same on any thread count. Not a cryptographic
//! hash; it only has to tell different data apart.

use super::rng::mix;

/// A digest of the byte strings fed to it, in order, with their boundaries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Digest {
    a: u64,
    b: u64,
}

impl Default for Digest {
    fn default() -> Self {
        Digest {
            a: 0x243f_6a88_85a3_08d3,
            b: 0x1319_8a2e_0370_7344,
        }
    }
}

impl Digest {
    /// One multiply per lane per word; the lanes meet in [`Digest::value`]'s full mixes.
    #[inline]
    fn word(&mut self, w: u64) {
        self.a = (self.a ^ w).wrapping_mul(0x9e37_79b9_7f4a_7c15).rotate_left(29);
        self.b = (self.b.wrapping_add(w) ^ self.a)
            .wrapping_mul(0xc2b2_ae3d_27d4_eb4f)
            .rotate_left(31);
    }

    /// Feeds one integer.
    #[inline]
    pub fn int(&mut self, v: u64) {
        self.word(v);
    }

    /// Feeds one byte string; its length counts, so `["ab", "c"]` and `["a", "bc"]` differ.
    #[inline]
    pub fn field(&mut self, bytes: &[u8]) {
        let mut chunks = bytes.chunks_exact(8);
        for c in &mut chunks {
            self.word(u64::from_le_bytes(c.try_into().expect("8 bytes")));
        }
        let rest = chunks.remainder();
        let mut last = [0u8; 8];
        last[..rest.len()].copy_from_slice(rest);
        self.word(u64::from_le_bytes(last));
        self.word(bytes.len() as u64 ^ 0xa5a5_a5a5_0000_0000);
    }

    /// The digest of everything fed so far.
    pub fn value(&self) -> u128 {
        let (a, b) = (mix(self.a ^ self.b.rotate_left(32)), mix(self.b.wrapping_add(self.a)));
        (u128::from(mix(a ^ b.rotate_left(17))) << 64) | u128::from(mix(b ^ a))
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
            d.field(p);
        }
        d.value()
    }

    #[test]
    fn content_and_boundaries_count() {
        let whole = of(&[b"hello, digest world"]);
        assert_eq!(whole, of(&[b"hello, digest world"]));
        assert_ne!(whole, of(&[b"hello, digest worle"]));
        assert_ne!(whole, of(&[b"hello, ", b"digest world"]));
        assert_ne!(of(&[b""]), of(&[b"\0"]));
        assert_ne!(of(&[b"\0"]), of(&[b"\0\0"]));
        assert_ne!(of(&[]), of(&[b""]));
        assert_ne!(of(&[b"ab", b"c"]), of(&[b"a", b"bc"]));
        assert_ne!(of(&[b"a", b"b"]), of(&[b"b", b"a"]));
    }
}
