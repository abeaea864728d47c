//! Pipelining: calls written back to back in windows and their replies read in order, with
//! the argument writers and reply readers the generated client has no form for.

use super::*;
use thrift::protocol::TSerializable;

/// Writes a call's argument fields.
pub(super) type ArgsWriter<'a> = Box<dyn Fn(&mut dyn TOutputProtocol) -> thrift::Result<()> + 'a>;

/// One pipelined call: its name and a writer of its arguments.
pub(super) struct Call<'a> {
    pub(super) name: &'static str,
    pub(super) args: ArgsWriter<'a>,
}

pub(super) fn write_field(o: &mut dyn TOutputProtocol, name: &str, t: TType, id: i16) -> thrift::Result<()> {
    o.write_field_begin(&TFieldIdentifier::new(name, t, id))
}

pub(super) fn write_bytes_field(o: &mut dyn TOutputProtocol, name: &str, id: i16, v: &[u8]) -> thrift::Result<()> {
    write_field(o, name, TType::String, id)?;
    o.write_bytes(v)?;
    o.write_field_end()
}

pub(super) fn write_no_attributes(o: &mut dyn TOutputProtocol, id: i16) -> thrift::Result<()> {
    write_field(o, "attributes", TType::Map, id)?;
    o.write_map_begin(&TMapIdentifier::new(TType::String, TType::String, 0))?;
    o.write_map_end()?;
    o.write_field_end()
}

/// A service whose calls can be pipelined: how its replies declare exceptions, and what an
/// error means for a retry.
pub(super) trait Service: TThriftClient {
    /// The exception a result struct's field `id` holds; `None` for a field that is not one.
    fn exception(id: i16, t: TType, i: &mut dyn TInputProtocol) -> thrift::Result<Option<thrift::Error>>;
    /// What `e` means for a retry, worded for `table`.
    fn classify(e: thrift::Error, table: &str) -> Failure;
}

impl Service for ThriftClient {
    fn exception(id: i16, t: TType, i: &mut dyn TInputProtocol) -> thrift::Result<Option<thrift::Error>> {
        Ok(match (id, t) {
            (1, TType::Struct) => Some(thrift::Error::User(Box::new(IOError::read_from_in_protocol(i)?))),
            (2, TType::Struct) => Some(thrift::Error::User(Box::new(IllegalArgument::read_from_in_protocol(
                i,
            )?))),
            _ => None,
        })
    }

    fn classify(e: thrift::Error, table: &str) -> Failure {
        failure(e, table)
    }
}

/// Sends `calls` back to back, then reads their replies in order; `success` reads the
/// result struct's field 0. Sent in windows so that unread replies never fill the socket.
pub(super) fn pipeline<S: Service, T>(
    client: &mut Connected<S>,
    table: &str,
    calls: &[Call],
    success: impl Fn(&mut dyn TInputProtocol) -> thrift::Result<T>,
) -> std::result::Result<Vec<Option<T>>, Failure> {
    let failure = S::classify;
    let mut out = Vec::with_capacity(calls.len());
    let mut first_error: Option<Failure> = None;
    for window in calls.chunks(WINDOW) {
        let mut seqs = Vec::with_capacity(window.len());
        let send = |client: &mut Connected<S>, seqs: &mut Vec<i32>| -> thrift::Result<()> {
            client.held.hold(true);
            for c in window {
                let seq = client.increment_sequence_number();
                seqs.push(seq);
                let o = client.o_prot_mut();
                o.write_message_begin(&TMessageIdentifier::new(c.name, TMessageType::Call, seq))?;
                // The protocols write no struct names: an empty one costs no allocation per call.
                o.write_struct_begin(&TStructIdentifier::new(""))?;
                (c.args)(o)?;
                o.write_field_stop()?;
                o.write_struct_end()?;
                o.write_message_end()?;
                o.flush()?;
            }
            client.held.hold(false);
            client.held.send()?;
            Ok(())
        };
        send(client, &mut seqs).map_err(|e| match failure(e, table) {
            Failure::Broken(e) if out.is_empty() => Failure::NotSent(e),
            f => f,
        })?;
        for seq in seqs {
            let reply = read_reply::<S, T>(client.i_prot_mut(), seq, &success).map_err(|e| failure(e, table))?;
            match reply {
                Ok(v) => out.push(v),
                Err(e) => {
                    out.push(None);
                    first_error.get_or_insert(failure(e, table));
                }
            }
        }
    }
    match first_error {
        Some(e) => Err(e),
        None => Ok(out),
    }
}

/// Reads one reply: the outer error is the connection's, the inner the call's.
#[allow(clippy::type_complexity)]
pub(super) fn read_reply<S: Service, T>(
    i: &mut dyn TInputProtocol,
    seq: i32,
    success: &impl Fn(&mut dyn TInputProtocol) -> thrift::Result<T>,
) -> thrift::Result<std::result::Result<Option<T>, thrift::Error>> {
    let m = i.read_message_begin()?;
    if m.sequence_number != seq {
        return Err(thrift::Error::Application(ApplicationError::new(
            thrift::ApplicationErrorKind::BadSequenceId,
            format!("reply {} to call {seq}", m.sequence_number),
        )));
    }
    if m.message_type == TMessageType::Exception {
        let e = thrift::Error::read_application_error_from_in_protocol(i)?;
        i.read_message_end()?;
        return Ok(Err(thrift::Error::Application(e)));
    }
    i.read_struct_begin()?;
    let mut result: std::result::Result<Option<T>, thrift::Error> = Ok(None);
    loop {
        let f = i.read_field_begin()?;
        if f.field_type == TType::Stop {
            break;
        }
        match f.id {
            Some(0) => result = Ok(Some(success(i)?)),
            Some(id) => match S::exception(id, f.field_type, i)? {
                Some(e) => result = Err(e),
                None => i.skip(f.field_type)?,
            },
            None => i.skip(f.field_type)?,
        }
        i.read_field_end()?;
    }
    i.read_struct_end()?;
    i.read_message_end()?;
    Ok(result)
}

pub(super) fn read_cells(i: &mut dyn TInputProtocol) -> thrift::Result<Vec<TCell>> {
    let list = i.read_list_begin()?;
    let mut out = Vec::with_capacity(list.size as usize);
    for _ in 0..list.size {
        out.push(TCell::read_from_in_protocol(i)?);
    }
    i.read_list_end()?;
    Ok(out)
}

/// A `list<TRowResult>` reply.
pub(super) fn read_row_results(i: &mut dyn TInputProtocol) -> thrift::Result<Vec<TRowResult>> {
    let list = i.read_list_begin()?;
    // The bounded input has checked the count against the message's size.
    let mut out = Vec::with_capacity(list.size.clamp(0, 4096) as usize);
    for _ in 0..list.size {
        out.push(TRowResult::read_from_in_protocol(i)?);
    }
    i.read_list_end()?;
    Ok(out)
}
