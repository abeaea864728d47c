//! The reading buffer of a connection: small while the peer sends little, grown while it
//! sends much, and shrunk back when it slows down.

use std::io::{self, Read};

/// A buffer's smallest and largest size.
const SMALLEST: usize = 8 << 10;
const LARGEST: usize = 256 << 10;

/// Buffers reads from `inner`. A read that fills the whole buffer doubles it (up to
/// 256 KiB), so that a pipelined window of calls arrives in a few reads; one that fills
/// less than a sixteenth of it (a single small call) shrinks it back to 8 KiB, so that a
/// connection waiting for its next call holds little. A read as large as the buffer
/// bypasses it.
pub struct Buffered<R> {
    inner: R,
    buf: Vec<u8>,
    pos: usize,
    end: usize,
}

impl<R: Read> Buffered<R> {
    /// Buffers `inner`.
    pub fn new(inner: R) -> Self {
        Buffered {
            inner,
            buf: Vec::new(),
            pos: 0,
            end: 0,
        }
    }

    /// The buffer's size now.
    pub fn capacity(&self) -> usize {
        self.buf.len()
    }

    fn refill(&mut self) -> io::Result<()> {
        let size = self.buf.len();
        let want = if size == 0 {
            SMALLEST
        } else if self.end == size {
            (size * 2).min(LARGEST)
        } else if self.end < size / 16 {
            SMALLEST
        } else {
            size
        };
        if want != size {
            self.buf = vec![0; want];
        }
        self.pos = 0;
        self.end = 0;
        self.end = self.inner.read(&mut self.buf)?;
        Ok(())
    }
}

impl<R: Read> Read for Buffered<R> {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        if self.pos == self.end {
            if out.len() >= self.buf.len().max(SMALLEST) {
                return self.inner.read(out);
            }
            self.refill()?;
        }
        let n = out.len().min(self.end - self.pos);
        out[..n].copy_from_slice(&self.buf[self.pos..self.pos + n]);
        self.pos += n;
        Ok(n)
    }
}

impl<R: Read + Send> super::Source for Buffered<R> {
    fn unread(&self) -> &[u8] {
        &self.buf[self.pos..self.end]
    }

    fn consume(&mut self, n: usize) {
        assert!(n <= self.end - self.pos, "consumed more than was buffered");
        self.pos += n;
    }

    fn fill(&mut self) -> io::Result<bool> {
        let kept = self.end - self.pos;
        if kept == self.buf.len() {
            if kept >= LARGEST {
                return Ok(false);
            }
            self.buf.resize((kept * 2).clamp(SMALLEST, LARGEST), 0);
        }
        self.buf.copy_within(self.pos..self.end, 0);
        self.pos = 0;
        self.end = kept;
        let n = self.inner.read(&mut self.buf[kept..])?;
        if n == 0 {
            return Err(io::ErrorKind::UnexpectedEof.into());
        }
        self.end += n;
        Ok(true)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Hands out at most `chunk` bytes a read, as a socket does.
    struct Chunks<'a> {
        data: &'a [u8],
        chunk: usize,
    }

    impl Read for Chunks<'_> {
        fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
            let n = out.len().min(self.chunk).min(self.data.len());
            out[..n].copy_from_slice(&self.data[..n]);
            self.data = &self.data[n..];
            Ok(n)
        }
    }

    #[test]
    fn grows_while_reads_fill_it_and_shrinks_back_when_they_do_not() {
        let data: Vec<u8> = (0..4_000_000u32).map(|i| (i % 251) as u8).collect();
        let mut b = Buffered::new(Chunks {
            data: &data,
            chunk: usize::MAX,
        });
        let mut got = Vec::new();
        let mut small = [0u8; 100];
        let mut read = |b: &mut Buffered<Chunks>, times: usize| {
            for _ in 0..times {
                let n = b.read(&mut small).unwrap();
                got.extend_from_slice(&small[..n]);
            }
        };
        read(&mut b, 1);
        assert_eq!(b.capacity(), SMALLEST);
        read(&mut b, 10_000);
        assert_eq!(b.capacity(), LARGEST, "grown while the peer sends much");
        // The peer slows down to 1,000 bytes a read.
        b.inner.chunk = 1_000;
        read(&mut b, 5_000);
        assert_eq!(b.capacity(), SMALLEST, "shrunk back");
        assert_eq!(got, data[..got.len()]);
    }

    #[test]
    fn a_fill_keeps_what_was_unread_and_grows_a_full_buffer() {
        use crate::wire::Source;
        let data: Vec<u8> = (0..40_000u32).map(|i| (i % 253) as u8).collect();
        let mut b = Buffered::new(Chunks {
            data: &data,
            chunk: 5_000,
        });
        let mut first = [0u8; 10];
        b.read_exact(&mut first).unwrap();
        assert_eq!(b.unread(), &data[10..5_000]);
        assert!(b.fill().unwrap());
        assert_eq!(b.unread(), &data[10..8_202], "kept, then filled to the buffer's end");
        assert_eq!(b.capacity(), 8 << 10);
        assert!(b.fill().unwrap());
        assert_eq!(b.capacity(), 16 << 10, "a full buffer doubles");
        assert_eq!(b.unread(), &data[10..13_202]);
        b.consume(13_192);
        let mut rest = Vec::new();
        b.read_to_end(&mut rest).unwrap();
        assert_eq!(rest, data[13_202..]);
        assert!(b.fill().is_err(), "the end of the input");
    }

    #[test]
    fn large_reads_bypass_the_buffer() {
        let data = vec![7u8; 100_000];
        let mut b = Buffered::new(Chunks {
            data: &data,
            chunk: usize::MAX,
        });
        let mut big = vec![0u8; 50_000];
        assert_eq!(b.read(&mut big).unwrap(), 50_000);
        assert_eq!(b.capacity(), 0, "nothing buffered");
    }
}
