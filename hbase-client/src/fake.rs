//! A fake HBase server on loopback for the client's own tests: one listener that answers
//! `ClientMetaService` (naming itself the active master and `hbase:meta`'s server, as the
//! RPC registry asks) and hands every other call to a handler the test gives. It lets a
//! test answer exactly what a busy or failing cluster answers (a heartbeat, a reset
//! scanner), which a real one does only by chance.

use crate::pb;
use bytes::Bytes;
use prost::Message;
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::Arc;

/// A call's answer: its body and cell block, or a remote exception's class.
pub type Answer = Result<(Vec<u8>, Vec<u8>), &'static str>;

/// What a handler is given: the method and the request's bytes.
pub type Handler = dyn Fn(&str, Bytes) -> Answer + Send + Sync;

/// Serves on a loopback port until the test process ends; returns `host:port`.
pub fn serve(handler: Arc<Handler>) -> String {
    let l = TcpListener::bind("127.0.0.1:0").expect("a loopback port");
    let addr = l.local_addr().expect("bound").to_string();
    let me = addr.clone();
    std::thread::spawn(move || {
        for s in l.incoming() {
            let Ok(s) = s else { return };
            let (h, me) = (handler.clone(), me.clone());
            std::thread::spawn(move || {
                let _ = connection(s, &*h, &me);
            });
        }
    });
    addr
}

/// This server's name, as the registry reports it.
pub fn server_name(addr: &str) -> pb::ServerName {
    let (host, port) = addr.rsplit_once(':').expect("host:port");
    pb::ServerName {
        host_name: host.to_string(),
        port: Some(port.parse().expect("a port")),
        start_code: Some(1),
    }
}

fn connection(mut s: TcpStream, handler: &Handler, me: &str) -> std::io::Result<()> {
    let mut preamble = [0u8; 6];
    s.read_exact(&mut preamble)?;
    let _header = frame(&mut s)?;
    loop {
        let mut call = Bytes::from(frame(&mut s)?);
        let Ok(header) = pb::RequestHeader::decode_length_delimited(&mut call) else {
            return Ok(());
        };
        let len = prost::decode_length_delimiter(&mut call).unwrap_or(0);
        let request = call.split_to(len.min(call.len()));
        let method = header.method_name.clone().unwrap_or_default();
        let answer = match method.as_str() {
            "GetClusterId" => Ok((
                pb::GetClusterIdResponse {
                    cluster_id: Some("fake-cluster".into()),
                }
                .encode_to_vec(),
                Vec::new(),
            )),
            "GetActiveMaster" => Ok((
                pb::GetActiveMasterResponse {
                    server_name: Some(server_name(me)),
                }
                .encode_to_vec(),
                Vec::new(),
            )),
            "GetMetaRegionLocations" => Ok((
                pb::GetMetaRegionLocationsResponse {
                    meta_locations: vec![pb::RegionLocation {
                        region_info: pb::RegionInfo {
                            region_id: 1,
                            table_name: crate::locate::table_name("hbase:meta"),
                            ..Default::default()
                        },
                        server_name: Some(server_name(me)),
                        seq_num: 0,
                    }],
                }
                .encode_to_vec(),
                Vec::new(),
            )),
            m => handler(m, request),
        };
        let mut reply = Vec::new();
        let mut rh = pb::ResponseHeader {
            call_id: header.call_id,
            ..Default::default()
        };
        match answer {
            Ok((body, cells)) => {
                if !cells.is_empty() {
                    rh.cell_block_meta = Some(pb::CellBlockMeta {
                        length: Some(cells.len() as u32),
                    });
                }
                rh.encode_length_delimited(&mut reply)?;
                prost::encode_length_delimiter(body.len(), &mut reply).map_err(std::io::Error::other)?;
                reply.extend_from_slice(&body);
                reply.extend_from_slice(&cells);
            }
            Err(class) => {
                rh.exception = Some(pb::ExceptionResponse {
                    exception_class_name: Some(class.to_string()),
                    stack_trace: Some(format!("{class}: from the fake server")),
                    do_not_retry: Some(false),
                    ..Default::default()
                });
                rh.encode_length_delimited(&mut reply)?;
            }
        }
        s.write_all(&(reply.len() as u32).to_be_bytes())?;
        s.write_all(&reply)?;
    }
}

fn frame(s: &mut TcpStream) -> std::io::Result<Vec<u8>> {
    let mut len = [0u8; 4];
    s.read_exact(&mut len)?;
    let mut body = vec![0u8; u32::from_be_bytes(len) as usize];
    s.read_exact(&mut body)?;
    Ok(body)
}
