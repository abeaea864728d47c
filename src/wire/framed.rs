//! Framing: the reader that undoes frames with a bound on each, and the writer that sends
//! one message per write, framed or not.

use super::Transport;
use std::io::{self, Read, Write};

/// Reads framed messages: each `read` serves bytes of the current frame and reads the next
/// frame's header when one is used up. A header above `limit` is an error, and a frame's
/// bytes are read as they arrive rather than allocated up front.
pub struct FramedReader<R> {
    inner: R,
    left: usize,
    limit: usize,
}

impl<R: Read> FramedReader<R> {
    /// Frames from `inner`, each at most `limit` bytes.
    pub fn new(inner: R, limit: usize) -> Self {
        FramedReader { inner, left: 0, limit }
    }
}

impl<R: Read> Read for FramedReader<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if buf.is_empty() {
            return Ok(0);
        }
        while self.left == 0 {
            let mut header = [0u8; 4];
            self.inner.read_exact(&mut header)?;
            let len = i32::from_be_bytes(header);
            if &header == b"HTTP" {
                return Err(io::Error::new(io::ErrorKind::InvalidData, crate::wire::SPOKE_HTTP));
            }
            if len < 0 || len as usize > self.limit {
                return Err(io::Error::new(
                    io::ErrorKind::InvalidData,
                    format!("frame of {len} bytes exceeds the limit of {} bytes", self.limit),
                ));
            }
            self.left = len as usize;
        }
        let n = buf.len().min(self.left);
        let got = self.inner.read(&mut buf[..n])?;
        if got == 0 {
            return Err(io::ErrorKind::UnexpectedEof.into());
        }
        self.left -= got;
        Ok(got)
    }
}

/// Frames are read through; their bytes are never parsed in place.
impl<R: Read + Send> super::Source for FramedReader<R> {}

/// Collects one message's bytes and sends them at `flush`, framed or not, in one write.
pub struct Outbox<W: Write> {
    inner: W,
    buf: Vec<u8>,
    framed: bool,
}

impl<W: Write> Outbox<W> {
    /// Messages to `inner`.
    pub fn new(inner: W, transport: Transport) -> Self {
        Outbox {
            inner,
            buf: Vec::with_capacity(4096),
            framed: transport == Transport::Framed,
        }
    }
}

impl<W: Write> Write for Outbox<W> {
    fn write(&mut self, data: &[u8]) -> io::Result<usize> {
        if self.framed && self.buf.is_empty() {
            self.buf.extend_from_slice(&[0; 4]);
        }
        self.buf.extend_from_slice(data);
        Ok(data.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        if self.buf.is_empty() {
            return self.inner.flush();
        }
        if self.framed {
            let len = (self.buf.len() - 4) as u32;
            self.buf[..4].copy_from_slice(&len.to_be_bytes());
        }
        let result = self.inner.write_all(&self.buf).and_then(|_| self.inner.flush());
        self.buf.clear();
        if self.buf.capacity() > 1 << 20 {
            self.buf.shrink_to(4096);
        }
        result
    }
}
