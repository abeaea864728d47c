//! Thrift on the wire, for the `hbase` backend and `tallrow serve` alike: the transport and
//! protocol choices, framing, and input protocols that bound what a peer can make us allocate.
//!
//! The `thrift` crate's own input protocols allocate whatever length a string, list or frame
//! header claims, so one hostile 5-byte message could ask for gigabytes. The readers here
//! check every claimed length against what is left of the message's byte budget before they
//! allocate, and never panic on malformed input. Output goes through the crate's compact
//! protocol, or through [`binary`], which writes what the crate's binary protocol writes.
//!
//! - [`framed`]: frames in and out (`FramedReader`, `Outbox`);
//! - [`binary`]: the binary output protocol, a buffer per message (`BinaryOutput`);
//! - [`bounded`]: the bounded input protocols (`Input`, `Watched`);
//! - [`buffered`]: a connection's reading buffer, grown and shrunk with the traffic;
//! - [`held`]: outgoing messages held and sent in one write (`Held`, `SendBeforeRead`);
//! - [`sasl`]: Thrift's SASL transport, client side (negotiation, wrapped frames).

pub mod binary;
pub mod bounded;
pub mod buffered;
pub mod framed;
pub mod held;
pub mod sasl;

pub use binary::BinaryOutput;
pub use bounded::{Arg, ArgDefaults, Input, Watched};
pub use buffered::Buffered;
pub use framed::{FramedReader, Outbox};
pub use held::{Held, SendBeforeRead};

use std::io::{Read, Write};
use thrift::protocol::{TCompactOutputProtocol, TOutputProtocol};
use thrift::{ProtocolError, ProtocolErrorKind};

/// The default limit on one message (framed or not): large batches fit, hostile lengths do not.
pub const DEFAULT_MAX_MESSAGE: usize = 64 << 20;

/// What a generated list reader reserves before its elements arrive: the claimed count, but
/// at most 4 KiB of elements. A list header is only a claim; the rest grows as elements
/// are actually read (`scripts/gen_thrift.sh` puts this call into the generated readers).
pub fn capacity<T>(claimed: i32) -> usize {
    let most = (4 << 10) / std::mem::size_of::<T>().max(1);
    usize::try_from(claimed).unwrap_or(0).min(most)
}

/// How messages are delimited on the connection.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Transport {
    /// Messages back to back (`hbase thrift start`'s default).
    Buffered,
    /// Each message preceded by its 4-byte big-endian length.
    Framed,
}

/// How values are encoded.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Protocol {
    /// TBinaryProtocol, strict (versioned) messages; unversioned ones are read too.
    Binary,
    /// TCompactProtocol.
    Compact,
}

/// HBase's two Thrift services.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Api {
    /// `Hbase` (`hbase thrift start`): one timestamp per mutation call, one version per
    /// column in row reads.
    Thrift1,
    /// `THBaseService` (`hbase thrift2 start`): a timestamp per cell, versions and time
    /// ranges in every read.
    Thrift2,
}

named_values!(Api, "api");
named_values!(Transport, "transport");
named_values!(Protocol, "protocol");

/// What a reply that begins `HTTP` means: an HTTP server answered, such as HBase's Thrift
/// gateway in HTTP mode (`hbase.regionserver.thrift.http`).
pub const SPOKE_HTTP: &str = "the server answered in HTTP (\"HTTP\" where a Thrift message begins): a Thrift gateway in HTTP mode is reached with transport=http";

pub(crate) fn protocol_error(kind: ProtocolErrorKind, message: String) -> thrift::Error {
    thrift::Error::Protocol(ProtocolError { kind, message })
}

fn too_large(what: &str, claimed: u64, left: usize) -> thrift::Error {
    protocol_error(
        ProtocolErrorKind::SizeLimit,
        format!("{what} of {claimed} bytes exceeds the {left} bytes left of the message limit"),
    )
}

/// Answers a call that failed before its handler could answer it, for the generated
/// processors (`scripts/gen_thrift.sh` puts this call there): arguments that could not be
/// read get a `PROTOCOL_ERROR` with what was wrong, as Thrift's Java processor answers
/// them; anything else the `thrift` crate's answer.
pub fn answer_failed_call(
    call: &thrift::protocol::TMessageIdentifier,
    result: thrift::Result<()>,
    o: &mut dyn TOutputProtocol,
) -> thrift::Result<()> {
    use thrift::protocol::{TMessageIdentifier, TMessageType};
    match result {
        Err(thrift::Error::Protocol(p)) => {
            let e = thrift::ApplicationError::new(thrift::ApplicationErrorKind::ProtocolError, p.message);
            o.write_message_begin(&TMessageIdentifier::new(
                &call.name,
                TMessageType::Exception,
                call.sequence_number,
            ))?;
            thrift::Error::write_application_error_to_out_protocol(&e, o)?;
            o.write_message_end()?;
            o.flush()
        }
        other => thrift::server::handle_process_result(call, other, o),
    }
}

/// An output protocol of either kind over `w`.
pub fn output<W: Write + Send + 'static>(w: W, protocol: Protocol) -> Box<dyn TOutputProtocol + Send> {
    match protocol {
        Protocol::Binary => Box::new(BinaryOutput::new(w)),
        Protocol::Compact => Box::new(TCompactOutputProtocol::new(w)),
    }
}

/// A connection's reading side whose received bytes can be looked at before they are
/// read, so that a whole message already buffered can be parsed in place.
pub trait Source: Read + Send {
    /// Bytes received and not yet read; empty where the reader cannot show them (framed).
    fn unread(&self) -> &[u8] {
        &[]
    }

    /// Marks the first `n` bytes of [`Source::unread`] read.
    fn consume(&mut self, n: usize) {
        debug_assert_eq!(n, 0, "nothing to consume");
    }

    /// Reads more bytes after [`Source::unread`], keeping them, so that a message cut off
    /// by the buffer's end can be completed in place. `false` where it cannot (framed, or
    /// the buffer is full at its largest).
    fn fill(&mut self) -> std::io::Result<bool> {
        Ok(false)
    }
}

/// The reading side of a connection: framing undone, then the bounded protocol.
pub fn input<R: Read + Send + 'static>(
    r: R,
    transport: Transport,
    protocol: Protocol,
    limit: usize,
) -> Input<Box<dyn Source>> {
    let r: Box<dyn Source> = match transport {
        Transport::Buffered => Box::new(Buffered::new(r)),
        Transport::Framed => Box::new(FramedReader::new(Buffered::new(r), limit)),
    };
    Input::new(r, protocol, limit)
}

#[cfg(test)]
mod tests {
    use super::*;
    use thrift::protocol::{TBinaryOutputProtocol, TInputProtocol, TMessageIdentifier, TMessageType, TSerializable};

    fn encode(protocol: Protocol, write: impl FnOnce(&mut dyn TOutputProtocol)) -> Vec<u8> {
        let mut buf = Vec::new();
        {
            let mut out: Box<dyn TOutputProtocol> = match protocol {
                Protocol::Binary => Box::new(TBinaryOutputProtocol::new(&mut buf, true)),
                Protocol::Compact => Box::new(TCompactOutputProtocol::new(&mut buf)),
            };
            write(out.as_mut());
            out.flush().unwrap();
        }
        buf
    }

    #[test]
    fn round_trips_what_the_crate_writes() {
        use crate::idl::thrift1::{BatchMutation, Mutation, TScan};
        for protocol in [Protocol::Binary, Protocol::Compact] {
            let batch = BatchMutation::new(
                b"row\x00\xff".to_vec(),
                vec![
                    Mutation::new(false, b"f:q".to_vec(), b"v".to_vec(), true),
                    Mutation::new(true, b"f".to_vec(), Vec::new(), false),
                ],
            );
            let scan = TScan::new(
                b"a".to_vec(),
                None,
                -5i64,
                vec![b"f:".to_vec()],
                1000,
                b"PrefixFilter('x')".to_vec(),
                None,
                true,
                false,
                None,
            );
            let bytes = encode(protocol, |o| {
                o.write_message_begin(&TMessageIdentifier::new("mutateRows", TMessageType::Call, -7))
                    .unwrap();
                batch.write_to_out_protocol(o).unwrap();
                scan.write_to_out_protocol(o).unwrap();
                o.write_i64(i64::MIN).unwrap();
                o.write_double(-1.5).unwrap();
                o.write_message_end().unwrap();
            });
            let mut i = Input::new(bytes.as_slice(), protocol, 1 << 20);
            let m = i.read_message_begin().unwrap();
            assert_eq!((m.name.as_str(), m.sequence_number), ("mutateRows", -7));
            assert_eq!(BatchMutation::read_from_in_protocol(&mut i).unwrap(), batch);
            assert_eq!(TScan::read_from_in_protocol(&mut i).unwrap(), scan);
            assert_eq!(i.read_i64().unwrap(), i64::MIN);
            assert_eq!(i.read_double().unwrap(), -1.5);
        }
    }

    #[test]
    fn omitted_arguments_read_as_empty_values_or_their_defaults() {
        use thrift::protocol::{TFieldIdentifier, TStructIdentifier, TType};
        fn defaults(method: &str) -> &'static [Arg] {
            match method {
                "scan" => &[(1, TType::String, 0), (2, TType::I32, 1), (3, TType::I64, 0)],
                _ => &[],
            }
        }
        for protocol in [Protocol::Binary, Protocol::Compact] {
            // The caller sends only argument 3.
            let bytes = encode(protocol, |o| {
                o.write_message_begin(&TMessageIdentifier::new("scan", TMessageType::Call, 1))
                    .unwrap();
                o.write_struct_begin(&TStructIdentifier::new("args")).unwrap();
                o.write_field_begin(&TFieldIdentifier::new("c", TType::I64, 3)).unwrap();
                o.write_i64(9).unwrap();
                o.write_field_end().unwrap();
                o.write_field_stop().unwrap();
                o.write_struct_end().unwrap();
                o.write_message_end().unwrap();
            });
            let mut i = Input::new(bytes.as_slice(), protocol, 1 << 20).with_defaults(defaults);
            i.read_message_begin().unwrap();
            i.read_struct_begin().unwrap();
            assert_eq!(i.read_field_begin().unwrap().id, Some(3));
            assert_eq!(i.read_i64().unwrap(), 9);
            i.read_field_end().unwrap();
            let f = i.read_field_begin().unwrap();
            assert_eq!((f.id, f.field_type), (Some(1), TType::String));
            assert_eq!(i.read_bytes().unwrap(), b"");
            i.read_field_end().unwrap();
            let f = i.read_field_begin().unwrap();
            assert_eq!((f.id, f.field_type), (Some(2), TType::I32));
            assert_eq!(i.read_i32().unwrap(), 1, "the IDL's default");
            i.read_field_end().unwrap();
            assert_eq!(i.read_field_begin().unwrap().field_type, TType::Stop);
        }
    }

    #[test]
    fn refuses_claimed_lengths_beyond_the_budget_without_allocating() {
        // A binary call whose first string claims 2 GiB, and a list claiming 2^31-1 structs.
        let mut string = vec![0x80, 0x01, 0x00, 0x01, 0x00, 0x00, 0x00, 0x03, b'g', b'e', b't'];
        string.extend_from_slice(&[0, 0, 0, 1, 11, 0, 1, 0x7f, 0xff, 0xff, 0xff]);
        let mut i = Input::new(string.as_slice(), Protocol::Binary, 1 << 20);
        i.read_message_begin().unwrap();
        i.read_struct_begin().unwrap();
        i.read_field_begin().unwrap();
        match i.read_bytes().unwrap_err() {
            thrift::Error::Protocol(e) => assert!(e.message.contains("2147483647"), "{}", e.message),
            other => panic!("{other:?}"),
        }

        let list = [15u8, 12, 0x7f, 0xff, 0xff, 0xff];
        let mut i = Input::new(&list[..], Protocol::Binary, 1 << 20);
        assert!(i.read_list_begin().is_err());
        let negative = [15u8, 12, 0xff, 0xff, 0xff, 0xff];
        let mut i = Input::new(&negative[..], Protocol::Binary, 1 << 20);
        assert!(i.read_list_begin().is_err());
        // Compact: a varint length of 2^32-1.
        let compact = [0xffu8, 0xff, 0xff, 0xff, 0x0f];
        let mut i = Input::new(&compact[..], Protocol::Compact, 1 << 20);
        assert!(i.read_bytes().is_err());
        let endless = [0xffu8; 16];
        let mut i = Input::new(&endless[..], Protocol::Compact, 1 << 20);
        assert!(i.read_i64().is_err());
    }

    #[test]
    fn counts_are_held_to_the_smallest_size_of_their_elements() {
        // 1,000 i64s take at least 8,000 bytes in binary, 1,000 in compact: a 4,000-byte
        // message can hold the one and not the other.
        let binary = [10u8, 0, 0, 0x03, 0xe8];
        let mut i = Input::new(&binary[..], Protocol::Binary, 4_000);
        let err = format!("{:?}", i.read_list_begin().unwrap_err());
        assert!(err.contains("1000 elements (at least 8000 bytes)"), "{err}");
        let compact = [0xf6u8, 0xe8, 0x07];
        let mut i = Input::new(&compact[..], Protocol::Compact, 4_000);
        assert_eq!(i.read_list_begin().unwrap().size, 1000);
        // A binary map of 1,000 string pairs: at least 8 bytes each.
        let map = [11u8, 11, 0, 0, 0x03, 0xe8];
        let mut i = Input::new(&map[..], Protocol::Binary, 7_999);
        assert!(i.read_map_begin().is_err());
        let mut i = Input::new(&map[..], Protocol::Binary, 8_006);
        assert_eq!(i.read_map_begin().unwrap().size, 1000);
    }

    #[test]
    fn a_claimed_string_length_reserves_only_what_arrives() {
        // 2^20 bytes claimed in a 64 MiB budget, 3 sent.
        let bytes = [0u8, 0x10, 0, 0, b'a', b'b', b'c'];
        let mut i = Input::new(&bytes[..], Protocol::Binary, 64 << 20);
        let held = allocation_counter::measure(|| assert!(i.read_bytes().is_err())).bytes_max;
        assert!(held <= 5 << 10, "{held} bytes reserved for 3 that arrived");
        // A 10 KiB string that arrives whole is read exactly.
        let mut bytes = vec![0u8, 0, 0x28, 0];
        bytes.extend(std::iter::repeat_n(b'x', 10 << 10));
        let mut i = Input::new(&bytes[..], Protocol::Binary, 64 << 20);
        let read = i.read_bytes().unwrap();
        assert_eq!((read.len(), read.capacity()), (10 << 10, 10 << 10));
    }

    #[test]
    fn structs_must_average_the_bytes_asked_for() {
        // A list of 10,000 empty structs (one byte each) in a message of 10,005 bytes.
        let mut bytes = vec![12u8, 0, 0, 0x27, 0x10];
        bytes.extend(std::iter::repeat_n(0u8, 10_000));
        let read_all = |i: &mut Input<&[u8]>| -> thrift::Result<()> {
            let n = i.read_list_begin()?.size;
            for _ in 0..n {
                i.read_struct_begin()?;
                assert_eq!(i.read_field_begin()?.field_type, thrift::protocol::TType::Stop);
                i.read_struct_end()?;
            }
            Ok(())
        };
        read_all(&mut Input::new(&bytes[..], Protocol::Binary, 1 << 20)).unwrap();
        let mut strict = Input::new(&bytes[..], Protocol::Binary, 1 << 20).struct_bytes(4);
        let err = format!("{:?}", read_all(&mut strict).unwrap_err());
        assert!(err.contains("more than one per 4 bytes"), "{err}");
        // The first 64 structs of a message are free of the rule.
        let mut few = vec![12u8, 0, 0, 0, 64];
        few.extend([0u8; 64]);
        read_all(&mut Input::new(&few[..], Protocol::Binary, 1 << 20).struct_bytes(4)).unwrap();
    }

    #[test]
    fn an_http_reply_is_named_as_http_in_either_transport() {
        use thrift::protocol::TInputProtocol;
        let reply = b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n".to_vec();
        for transport in [Transport::Buffered, Transport::Framed] {
            let mut i = input(
                std::io::Cursor::new(reply.clone()),
                transport,
                Protocol::Binary,
                1 << 20,
            );
            let err = format!("{:?}", i.read_message_begin().unwrap_err());
            assert!(err.contains("transport=http"), "{transport}: {err}");
            assert!(!err.contains("1213486160"), "{transport}: {err}");
        }
    }

    #[test]
    fn frames_above_the_limit_are_refused_and_the_budget_spans_a_message() {
        let mut framed = FramedReader::new(&[0x7fu8, 0xff, 0xff, 0xff, 1, 2][..], 1024);
        let err = framed.read(&mut [0u8; 8]).unwrap_err();
        assert!(err.to_string().contains("exceeds the limit of 1024"), "{err}");
        let mut ok = FramedReader::new(&[0u8, 0, 0, 2, 7, 8, 0, 0, 0, 1, 9][..], 1024);
        let mut all = Vec::new();
        ok.read_to_end(&mut all).unwrap_err(); // ends mid-header
        let mut ok = FramedReader::new(&[0u8, 0, 0, 2, 7, 8, 0, 0, 0, 1, 9][..], 1024);
        let mut three = [0u8; 3];
        ok.read_exact(&mut three).unwrap();
        assert_eq!(three, [7, 8, 9]);

        // 100 one-byte reads fit a 100-byte budget; the 101st does not.
        let bytes = vec![0u8; 200];
        let mut i = Input::new(bytes.as_slice(), Protocol::Binary, 100);
        for _ in 0..100 {
            i.read_byte().unwrap();
        }
        assert!(i.read_byte().is_err());
    }

    #[test]
    fn outbox_frames_each_message() {
        let mut sent = Vec::new();
        {
            let mut o = Outbox::new(&mut sent, Transport::Framed);
            o.write_all(b"abc").unwrap();
            o.flush().unwrap();
            o.write_all(b"de").unwrap();
            o.flush().unwrap();
        }
        assert_eq!(sent, b"\0\0\0\x03abc\0\0\0\x02de");
    }
}
