//! The binary output protocol, strict (versioned) messages as `TBinaryOutputProtocol`
//! writes them, byte for byte. Each message is encoded into a buffer of its own with
//! fixed-size stores and handed to the transport whole at `flush`; the crate's protocol
//! makes a transport write per value, a library copy each.

use std::io::Write;
use thrift::protocol::{
    TFieldIdentifier, TListIdentifier, TMapIdentifier, TMessageIdentifier, TOutputProtocol, TSetIdentifier,
    TStructIdentifier, TType,
};

/// Strict binary messages to `inner`, one write per message.
pub struct BinaryOutput<W: Write> {
    buf: Vec<u8>,
    inner: W,
}

impl<W: Write> BinaryOutput<W> {
    /// Writes messages to `inner`.
    pub fn new(inner: W) -> Self {
        BinaryOutput {
            buf: Vec::with_capacity(256),
            inner,
        }
    }
}

/// A type's code on the wire.
fn code(t: TType) -> u8 {
    match t {
        TType::Stop => 0x00,
        TType::Void => 0x01,
        TType::Bool => 0x02,
        TType::I08 => 0x03,
        TType::Double => 0x04,
        TType::I16 => 0x06,
        TType::I32 => 0x08,
        TType::I64 => 0x0A,
        TType::String | TType::Utf7 => 0x0B,
        TType::Struct => 0x0C,
        TType::Map => 0x0D,
        TType::Set => 0x0E,
        TType::List => 0x0F,
        TType::Utf8 => 0x10,
        TType::Utf16 => 0x11,
    }
}

impl<W: Write> TOutputProtocol for BinaryOutput<W> {
    fn write_message_begin(&mut self, identifier: &TMessageIdentifier) -> thrift::Result<()> {
        let kind: u8 = identifier.message_type.into();
        self.buf
            .extend_from_slice(&(0x8001_0000u32 | u32::from(kind)).to_be_bytes());
        self.write_string(&identifier.name)?;
        self.write_i32(identifier.sequence_number)
    }

    fn write_message_end(&mut self) -> thrift::Result<()> {
        Ok(())
    }

    fn write_struct_begin(&mut self, _: &TStructIdentifier) -> thrift::Result<()> {
        Ok(())
    }

    fn write_struct_end(&mut self) -> thrift::Result<()> {
        Ok(())
    }

    fn write_field_begin(&mut self, identifier: &TFieldIdentifier) -> thrift::Result<()> {
        let Some(id) = identifier.id else {
            if identifier.field_type == TType::Stop {
                return self.write_byte(0);
            }
            return Err(super::protocol_error(
                thrift::ProtocolErrorKind::Unknown,
                format!("cannot write field {:?} without an id", identifier.name),
            ));
        };
        let [a, b] = id.to_be_bytes();
        self.buf.extend_from_slice(&[code(identifier.field_type), a, b]);
        Ok(())
    }

    fn write_field_end(&mut self) -> thrift::Result<()> {
        Ok(())
    }

    fn write_field_stop(&mut self) -> thrift::Result<()> {
        self.write_byte(0)
    }

    fn write_bytes(&mut self, b: &[u8]) -> thrift::Result<()> {
        self.write_i32(b.len() as i32)?;
        self.buf.extend_from_slice(b);
        Ok(())
    }

    fn write_bool(&mut self, b: bool) -> thrift::Result<()> {
        self.write_byte(u8::from(b))
    }

    fn write_i8(&mut self, i: i8) -> thrift::Result<()> {
        self.write_byte(i as u8)
    }

    fn write_i16(&mut self, i: i16) -> thrift::Result<()> {
        self.buf.extend_from_slice(&i.to_be_bytes());
        Ok(())
    }

    fn write_i32(&mut self, i: i32) -> thrift::Result<()> {
        self.buf.extend_from_slice(&i.to_be_bytes());
        Ok(())
    }

    fn write_i64(&mut self, i: i64) -> thrift::Result<()> {
        self.buf.extend_from_slice(&i.to_be_bytes());
        Ok(())
    }

    fn write_double(&mut self, d: f64) -> thrift::Result<()> {
        self.buf.extend_from_slice(&d.to_bits().to_be_bytes());
        Ok(())
    }

    fn write_string(&mut self, s: &str) -> thrift::Result<()> {
        self.write_bytes(s.as_bytes())
    }

    fn write_list_begin(&mut self, identifier: &TListIdentifier) -> thrift::Result<()> {
        self.write_byte(code(identifier.element_type))?;
        self.write_i32(identifier.size)
    }

    fn write_list_end(&mut self) -> thrift::Result<()> {
        Ok(())
    }

    fn write_set_begin(&mut self, identifier: &TSetIdentifier) -> thrift::Result<()> {
        self.write_byte(code(identifier.element_type))?;
        self.write_i32(identifier.size)
    }

    fn write_set_end(&mut self) -> thrift::Result<()> {
        Ok(())
    }

    fn write_map_begin(&mut self, identifier: &TMapIdentifier) -> thrift::Result<()> {
        let (Some(k), Some(v)) = (identifier.key_type, identifier.value_type) else {
            return Err(super::protocol_error(
                thrift::ProtocolErrorKind::Unknown,
                "a map to write needs its key and value types".into(),
            ));
        };
        self.buf.extend_from_slice(&[code(k), code(v)]);
        self.write_i32(identifier.size)
    }

    fn write_map_end(&mut self) -> thrift::Result<()> {
        Ok(())
    }

    fn flush(&mut self) -> thrift::Result<()> {
        let written = self.inner.write_all(&self.buf).and_then(|()| self.inner.flush());
        self.buf.clear();
        if self.buf.capacity() > 1 << 20 {
            self.buf.shrink_to(4096);
        }
        written.map_err(From::from)
    }

    fn write_byte(&mut self, b: u8) -> thrift::Result<()> {
        self.buf.push(b);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::idl::thrift1::{BatchMutation, Mutation, TCell, TRowResult};
    use thrift::protocol::{TBinaryOutputProtocol, TMessageType, TSerializable};

    /// Values of every kind, written through `o`.
    fn write_all_kinds(o: &mut dyn TOutputProtocol) {
        o.write_message_begin(&TMessageIdentifier::new("call", TMessageType::Reply, -3))
            .unwrap();
        o.write_struct_begin(&TStructIdentifier::new("s")).unwrap();
        o.write_field_begin(&TFieldIdentifier::new("f", TType::Double, 9))
            .unwrap();
        o.write_double(-1.5).unwrap();
        o.write_field_begin(&TFieldIdentifier::new("f", TType::I16, -2))
            .unwrap();
        o.write_i16(-300).unwrap();
        o.write_i8(-7).unwrap();
        o.write_bool(true).unwrap();
        o.write_bool(false).unwrap();
        o.write_set_begin(&TSetIdentifier::new(TType::I64, 2)).unwrap();
        o.write_i64(i64::MIN).unwrap();
        o.write_i64(1).unwrap();
        o.write_map_begin(&TMapIdentifier::new(TType::String, TType::Struct, 1))
            .unwrap();
        o.write_string("ключ").unwrap();
        let row = TRowResult::new(
            b"row".to_vec(),
            std::collections::BTreeMap::from([(b"f:q".to_vec(), TCell::new(b"v".to_vec(), 5))]),
            None,
        );
        row.write_to_out_protocol(o).unwrap();
        let batch = BatchMutation::new(
            b"r".to_vec(),
            vec![Mutation::new(true, b"f".to_vec(), Vec::new(), false)],
        );
        batch.write_to_out_protocol(o).unwrap();
        o.write_field_stop().unwrap();
        o.write_struct_end().unwrap();
        o.write_message_end().unwrap();
        o.flush().unwrap();
    }

    #[test]
    fn writes_what_the_crates_binary_protocol_writes() {
        let mut ours = Vec::new();
        write_all_kinds(&mut BinaryOutput::new(&mut ours));
        let mut theirs = Vec::new();
        write_all_kinds(&mut TBinaryOutputProtocol::new(&mut theirs, true));
        assert_eq!(ours, theirs);
        assert!(ours.len() > 60);
    }

    #[test]
    fn nothing_reaches_the_transport_before_the_flush() {
        let mut out = Vec::new();
        {
            let mut o = BinaryOutput::new(&mut out);
            o.write_i32(1).unwrap();
            o.write_bytes(b"abc").unwrap();
            assert_eq!(o.buf.len(), 11);
        }
        assert!(out.is_empty());
    }
}
