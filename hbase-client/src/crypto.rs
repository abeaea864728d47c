//! HBase's own encryption of its RPC (`hbase.rpc.crypto.encryption.aes.enabled`, the
//! server's `CryptoAES`): once SASL has settled on privacy, a client whose `ConnectionHeader`
//! names a cipher (`rpc_crypto_cipher_transformation`) gets back, still GSSAPI-wrapped, a
//! `ConnectionHeaderResponse` with fresh keys, and from then on each direction's frames are
//! AES instead of GSSAPI's wrap.
//!
//! A frame keeps SASL's framing (a 4-byte length, then the bytes), and the bytes are
//! `AES-CTR(P ‖ MAC) ‖ SEQ`:
//! - `MAC` is HMAC-MD5 keyed with the sender's AES key over `SEQ ‖ P`, cut to 10 bytes;
//! - `SEQ` is the sender's message count from 0, 4 bytes big-endian, in clear;
//! - the counter mode runs on across frames: one keystream per direction for the
//!   connection's life, `P` and `MAC` drawn from it in turn.
//!
//! The keys in the server's `CryptoCipherMeta` are already the client's view: it sends with
//! `outKey`/`outIv` and reads with `inKey`/`inIv`.

use crate::error::{Error, Result};
use crate::pb;
use crate::sasl::{FrameReader, Layer};
use aes::{Aes128, Aes192, Aes256};
use cipher::{KeyIvInit, StreamCipher};
use hmac::{Hmac, KeyInit, Mac};
use md5::Md5;
use prost::Message;
use std::io::{self, Read};

/// The one cipher HBase's `CryptoAES` runs (`hbase.rpc.crypto.encryption.aes.cipher.transform`).
pub const TRANSFORMATION: &str = "AES/CTR/NoPadding";
/// The MAC's bytes on each frame.
const MAC_LEN: usize = 10;
/// The sequence number's bytes on each frame.
const SEQ_LEN: usize = 4;

/// AES in counter mode with a 128-bit big-endian counter, as the JCE's `AES/CTR`.
enum Ctr {
    Aes128(ctr::Ctr128BE<Aes128>),
    Aes192(ctr::Ctr128BE<Aes192>),
    Aes256(ctr::Ctr128BE<Aes256>),
}

impl Ctr {
    fn new(key: &[u8], iv: &[u8]) -> std::result::Result<Ctr, String> {
        if iv.len() != 16 {
            return Err(format!("an IV of {} bytes; AES/CTR takes 16", iv.len()));
        }
        let bad = |_| "a key AES does not take".to_string();
        Ok(match key.len() {
            16 => Ctr::Aes128(ctr::Ctr128BE::new_from_slices(key, iv).map_err(bad)?),
            24 => Ctr::Aes192(ctr::Ctr128BE::new_from_slices(key, iv).map_err(bad)?),
            32 => Ctr::Aes256(ctr::Ctr128BE::new_from_slices(key, iv).map_err(bad)?),
            n => return Err(format!("a key of {n} bytes; AES takes 16, 24 or 32")),
        })
    }

    fn apply(&mut self, buf: &mut [u8]) {
        match self {
            Ctr::Aes128(c) => c.apply_keystream(buf),
            Ctr::Aes192(c) => c.apply_keystream(buf),
            Ctr::Aes256(c) => c.apply_keystream(buf),
        }
    }
}

/// One direction: its keystream, its MAC key, its sequence number.
struct Direction {
    ctr: Ctr,
    mac: Hmac<Md5>,
    seq: u32,
}

impl Direction {
    fn new(key: &[u8], iv: &[u8]) -> std::result::Result<Direction, String> {
        Ok(Direction {
            ctr: Ctr::new(key, iv)?,
            mac: Hmac::<Md5>::new_from_slice(key).map_err(|_| "an HMAC key HMAC-MD5 does not take".to_string())?,
            seq: 0,
        })
    }

    fn mac(&self, seq: &[u8], data: &[u8]) -> [u8; MAC_LEN] {
        let mut m = self.mac.clone();
        m.update(seq);
        m.update(data);
        let full = m.finalize().into_bytes();
        let mut out = [0u8; MAC_LEN];
        out.copy_from_slice(&full[..MAC_LEN]);
        out
    }
}

/// The layer that replaces GSSAPI's once the server has sent its keys.
pub struct CryptoAes {
    send: Direction,
    receive: Direction,
}

impl CryptoAes {
    /// The layer the server's `CryptoCipherMeta` describes, or why it cannot be used.
    pub fn from_meta(meta: &pb::CryptoCipherMeta) -> std::result::Result<CryptoAes, String> {
        if !meta.transformation.eq_ignore_ascii_case(TRANSFORMATION) {
            return Err(format!(
                "the server chose the cipher {:?}, not {TRANSFORMATION}",
                meta.transformation
            ));
        }
        let part = |v: &Option<bytes::Bytes>, what: &str| {
            v.clone().ok_or_else(|| format!("the server's cipher has no {what}"))
        };
        let (in_key, in_iv) = (part(&meta.in_key, "inKey")?, part(&meta.in_iv, "inIv")?);
        let (out_key, out_iv) = (part(&meta.out_key, "outKey")?, part(&meta.out_iv, "outIv")?);
        Ok(CryptoAes {
            send: Direction::new(&out_key, &out_iv).map_err(|e| format!("the server's outKey/outIv: {e}"))?,
            receive: Direction::new(&in_key, &in_iv).map_err(|e| format!("the server's inKey/inIv: {e}"))?,
        })
    }
}

/// The longest `ConnectionHeaderResponse` taken: four keys and a name.
const MAX_RESPONSE: usize = 4 << 10;

/// Reads the server's `ConnectionHeaderResponse` (a 4-byte length and the message, the
/// first bytes after the connection header, through the GSSAPI layer) and makes the layer
/// its keys describe.
pub fn receive_keys<R: Read>(r: &mut FrameReader<R>, addr: &str) -> Result<CryptoAes> {
    let auth = |why: String| Error::Auth {
        addr: addr.to_string(),
        why,
    };
    let io = |e: io::Error| {
        auth(match e.kind() {
            io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut => {
                "no AES keys from the server within the connect timeout: it does not run \
                 hbase.rpc.crypto.encryption.aes.enabled (leave crypto=aes out of the URL)"
                    .into()
            }
            io::ErrorKind::UnexpectedEof => "the server closed the connection before sending its AES keys".into(),
            _ => format!("reading the server's AES keys: {e}"),
        })
    };
    let mut len = [0u8; 4];
    r.read_exact(&mut len).map_err(io)?;
    let len = u32::from_be_bytes(len) as usize;
    if len > MAX_RESPONSE {
        return Err(Error::Protocol(format!(
            "{addr}: a connection header response of {len} bytes"
        )));
    }
    let mut body = vec![0u8; len];
    r.read_exact(&mut body).map_err(io)?;
    if r.buffered() != 0 {
        return Err(Error::Protocol(format!(
            "{addr}: bytes after the connection header response, before its keys were taken"
        )));
    }
    let resp = pb::ConnectionHeaderResponse::decode(&body[..])
        .map_err(|e| Error::Protocol(format!("{addr}: the connection header response: {e}")))?;
    let meta = resp
        .crypto_cipher_meta
        .ok_or_else(|| auth("the server answered the connection header without AES keys".into()))?;
    CryptoAes::from_meta(&meta).map_err(auth)
}

fn invalid(why: String) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, why)
}

impl Layer for CryptoAes {
    fn wrap(&mut self, data: &[u8]) -> io::Result<Vec<u8>> {
        let seq = self.send.seq.to_be_bytes();
        let mac = self.send.mac(&seq, data);
        let mut out = Vec::with_capacity(data.len() + MAC_LEN + SEQ_LEN);
        out.extend_from_slice(data);
        out.extend_from_slice(&mac);
        self.send.ctr.apply(&mut out);
        out.extend_from_slice(&seq);
        self.send.seq = self.send.seq.wrapping_add(1);
        Ok(out)
    }

    fn unwrap(&mut self, data: &[u8]) -> io::Result<Vec<u8>> {
        if data.len() < MAC_LEN + SEQ_LEN {
            return Err(invalid(format!(
                "an AES frame of {} bytes, shorter than its MAC and sequence number",
                data.len()
            )));
        }
        let (sealed, seq) = data.split_at(data.len() - SEQ_LEN);
        let mut plain = sealed.to_vec();
        // The keystream moves on whatever the checks below find, as the server's does.
        self.receive.ctr.apply(&mut plain);
        let at = plain.len() - MAC_LEN;
        if self.receive.mac(seq, &plain[..at]) != plain[at..] {
            return Err(invalid(
                "an AES frame whose MAC does not match (HBase's crypto AES)".into(),
            ));
        }
        let got = u32::from_be_bytes(seq.try_into().expect("4 bytes"));
        if got != self.receive.seq {
            return Err(invalid(format!(
                "an AES frame numbered {got} where {} was next",
                self.receive.seq
            )));
        }
        self.receive.seq = self.receive.seq.wrapping_add(1);
        plain.truncate(at);
        Ok(plain)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hex(s: &str) -> Vec<u8> {
        let s: String = s.split_whitespace().collect();
        (0..s.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
            .collect()
    }

    fn seq(from: u8) -> bytes::Bytes {
        (from..from + 16).collect::<Vec<u8>>().into()
    }

    /// The server made inKey 00..0f, outKey 10..1f, inIv 20..2f, outIv 30..3f, and sent
    /// them swapped, as `ServerRpcConnection.setupCryptoCipher` does.
    fn client() -> CryptoAes {
        let meta = pb::CryptoCipherMeta {
            transformation: TRANSFORMATION.into(),
            in_key: Some(seq(0x10)),
            in_iv: Some(seq(0x30)),
            out_key: Some(seq(0x00)),
            out_iv: Some(seq(0x20)),
        };
        CryptoAes::from_meta(&meta).unwrap()
    }

    /// Frames from a port of `CryptoAES.java` checked against `openssl enc -aes-128-ctr`.
    #[test]
    fn frames_match_hbases_crypto_aes() {
        let mut c = client();
        assert_eq!(
            c.wrap(b"hello").unwrap(),
            hex("338d124234 d62bffea18c47164b57b 00000000")
        );
        // The keystream runs on from the first frame.
        assert_eq!(
            c.wrap(b"0123456789abcdef0123").unwrap(),
            hex("e87a962f1617b80f903b025c9b14faaec745bde9 ad2db9cd4ccc43ebec5c 00000001")
        );
        let back = c.unwrap(&hex("9f4a34a32119 cf60e59c97045503dc26 00000000")).unwrap();
        assert_eq!(back, b"world!");
    }

    #[test]
    fn a_bad_mac_a_skipped_frame_and_a_short_frame_are_refused() {
        let frame = hex("9f4a34a32119 cf60e59c97045503dc26 00000000");
        let mut flipped = frame.clone();
        flipped[0] ^= 1;
        let e = client().unwrap(&flipped).unwrap_err();
        assert!(e.to_string().contains("MAC does not match"), "{e}");
        // The right bytes under another number: the MAC covers the number.
        let mut renumbered = frame.clone();
        renumbered[19] = 1;
        assert!(client().unwrap(&renumbered).is_err());
        let e = client().unwrap(&frame[..13]).unwrap_err();
        assert!(e.to_string().contains("shorter than"), "{e}");
    }

    /// The server's side of [`client`]: its own keys, unswapped.
    fn server() -> CryptoAes {
        let meta = pb::CryptoCipherMeta {
            transformation: TRANSFORMATION.into(),
            in_key: Some(seq(0x00)),
            in_iv: Some(seq(0x20)),
            out_key: Some(seq(0x10)),
            out_iv: Some(seq(0x30)),
        };
        CryptoAes::from_meta(&meta).unwrap()
    }

    #[test]
    fn frames_out_of_order_or_misnumbered_are_refused() {
        let mut c = client();
        let (first, second) = (c.wrap(b"one").unwrap(), c.wrap(b"two").unwrap());
        let mut s = server();
        assert_eq!(s.unwrap(&first).unwrap(), b"one");
        assert_eq!(s.unwrap(&second).unwrap(), b"two");
        // A replay lands at the wrong place in the keystream.
        assert!(s.unwrap(&first).is_err());
        // The second before the first, likewise.
        assert!(server().unwrap(&second).is_err());
        // A sender that skipped a number: the MAC holds, the number does not.
        let mut c = client();
        c.send.seq = 5;
        let e = server().unwrap(&c.wrap(b"one").unwrap()).unwrap_err();
        assert!(e.to_string().contains("numbered 5 where 0 was next"), "{e}");
    }

    /// The response of [`frames_match_hbases_crypto_aes`]'s server, as one SASL frame
    /// (here with no layer under it), with `extra` bytes after it in the frame.
    fn response_frame(extra: &[u8]) -> Vec<u8> {
        let chr = hex("0a5b0a114145532f4354522f4e6f50616464696e67
             1210 101112131415161718191a1b1c1d1e1f 1a10 303132333435363738393a3b3c3d3e3f
             2210 000102030405060708090a0b0c0d0e0f 2a10 202122232425262728292a2b2c2d2e2f");
        let inner = [&(chr.len() as u32).to_be_bytes()[..], &chr, extra].concat();
        [&(inner.len() as u32).to_be_bytes()[..], &inner].concat()
    }

    #[test]
    fn the_servers_response_gives_the_keys() {
        let wire = response_frame(b"");
        let mut r = FrameReader::new(&wire[..], None, 1 << 20);
        let mut aes = receive_keys(&mut r, "rs1:16020").unwrap();
        assert_eq!(
            aes.unwrap(&hex("9f4a34a32119 cf60e59c97045503dc26 00000000")).unwrap(),
            b"world!"
        );
        // Anything after the response in its frame would be read with the wrong layer.
        let wire = response_frame(b"\0\0\0\x01x");
        let mut r = FrameReader::new(&wire[..], None, 1 << 20);
        let e = receive_keys(&mut r, "rs1:16020").err().unwrap().to_string();
        assert!(e.contains("bytes after the connection header response"), "{e}");
        // A response without keys, and one claiming a huge length.
        let wire = [&4u32.to_be_bytes()[..], &0u32.to_be_bytes()].concat();
        let mut r = FrameReader::new(&wire[..], None, 1 << 20);
        let e = receive_keys(&mut r, "rs1:16020").err().unwrap().to_string();
        assert!(e.contains("without AES keys"), "{e}");
        let wire = [&4u32.to_be_bytes()[..], &u32::MAX.to_be_bytes()].concat();
        let mut r = FrameReader::new(&wire[..], None, 1 << 20);
        let e = receive_keys(&mut r, "rs1:16020").err().unwrap().to_string();
        assert!(e.contains("a connection header response of 4294967295 bytes"), "{e}");
    }

    #[test]
    fn a_server_without_crypto_aes_is_named_at_the_timeout() {
        // A Kerberized server without hbase.rpc.crypto.encryption.aes.enabled says nothing
        // after the connection header.
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap().to_string();
        let quiet = std::thread::spawn(move || listener.accept().map(|(s, _)| s));
        let stream = std::net::TcpStream::connect(&addr).unwrap();
        stream
            .set_read_timeout(Some(std::time::Duration::from_millis(200)))
            .unwrap();
        let mut r = FrameReader::new(stream, None, 1 << 20);
        let e = receive_keys(&mut r, &addr).err().unwrap().to_string();
        assert!(
            e.contains("no AES keys from the server within the connect timeout")
                && e.contains("leave crypto=aes out of the URL"),
            "{e}"
        );
        drop(quiet.join());
    }

    #[test]
    fn a_cipher_other_than_aes_ctr_or_a_bad_key_is_named() {
        let mut meta = pb::CryptoCipherMeta {
            transformation: "AES/CBC/PKCS5Padding".into(),
            in_key: Some(seq(0)),
            in_iv: Some(seq(0)),
            out_key: Some(seq(0)),
            out_iv: Some(seq(0)),
        };
        assert!(
            CryptoAes::from_meta(&meta)
                .err()
                .unwrap()
                .contains("AES/CBC/PKCS5Padding")
        );
        meta.transformation = "aes/ctr/nopadding".into();
        assert!(CryptoAes::from_meta(&meta).is_ok());
        meta.out_key = Some(bytes::Bytes::from_static(b"short"));
        let e = CryptoAes::from_meta(&meta).err().unwrap();
        assert!(e.contains("outKey/outIv: a key of 5 bytes"), "{e}");
        meta.out_key = Some(seq(0));
        meta.in_iv = Some((0..32).collect::<Vec<u8>>().into());
        let e = CryptoAes::from_meta(&meta).err().unwrap();
        assert!(e.contains("an IV of 32 bytes"), "{e}");
        meta.in_iv = None;
        assert!(CryptoAes::from_meta(&meta).err().unwrap().contains("no inIv"));
    }
}
