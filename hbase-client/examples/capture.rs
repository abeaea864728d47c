//! Records what HBase answers, byte for byte, for the codec tests: writes a table of known
//! cells, then sends a Get, a Scan and a Multi to its region server through a recording
//! relay, and saves both directions of that connection. `cargo run -p hbase-client --example
//! capture -- QUORUM hbase-client/tests/fixtures/rpc` (see the folder's README).

use bytes::Bytes;
use hbase_client::admin::Family;
use hbase_client::cells::{CellType, LATEST_TIMESTAMP};
use hbase_client::conn::{Conn, Options as ConnOptions, Service};
use hbase_client::{Client, Mutation, MutationCell, MutationKind, Options, Registry, pb};
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// Copies `from` to `to`, recording what passed.
fn pipe(mut from: TcpStream, mut to: TcpStream, log: Arc<Mutex<Vec<u8>>>) {
    let mut buf = [0u8; 65536];
    while let Ok(n) = from.read(&mut buf) {
        if n == 0 || to.write_all(&buf[..n]).is_err() {
            break;
        }
        log.lock().unwrap().extend_from_slice(&buf[..n]);
    }
    let _ = to.shutdown(std::net::Shutdown::Write);
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let quorum = args.next().ok_or("usage: capture QUORUM OUT_DIR")?;
    let out = std::path::PathBuf::from(args.next().ok_or("usage: capture QUORUM OUT_DIR")?);
    let client = Client::connect(
        Registry::ZooKeeper {
            quorum,
            parent: "/hbase".into(),
        },
        Options::default(),
    )?;
    let t = "tallrow_capture";
    let _ = client.delete_table(t);
    client.create_table(t, &[Family::new("f", 3)], &[])?;
    let cell = |q: &'static [u8], ts: i64, v: &'static [u8]| MutationCell {
        family: Bytes::from_static(b"f"),
        qualifier: Bytes::from_static(q),
        timestamp: ts,
        kind: CellType::Put,
        value: Bytes::from_static(v),
    };
    let row = |k: &'static [u8], cells| Mutation {
        row: Bytes::from_static(k),
        kind: MutationKind::Put,
        cells,
        timestamp: LATEST_TIMESTAMP,
    };
    client.mutate(
        t,
        vec![
            row(
                b"r1",
                vec![
                    cell(b"a", 1700000000000, b"v1"),
                    cell(b"a", 1700000000001, b"v2"),
                    cell(b"b", 1700000000000, b"\x00\xff"),
                ],
            ),
            row(b"r2", vec![cell(b"a", 1700000000002, b"second row")]),
        ],
    )?;
    let region = client.locate(t, b"r1")?;
    let server = region.server.clone().ok_or("unassigned")?.addr();

    let relay = TcpListener::bind("127.0.0.1:0")?;
    let relay_addr = relay.local_addr()?.to_string();
    let (sent, got) = (Arc::new(Mutex::new(Vec::new())), Arc::new(Mutex::new(Vec::new())));
    let (s2, g2, target) = (sent.clone(), got.clone(), server.clone());
    let relaying = std::thread::spawn(move || {
        let (client_side, _) = relay.accept().unwrap();
        let server_side = TcpStream::connect(&target).unwrap();
        let (c2, s_2) = (client_side.try_clone().unwrap(), server_side.try_clone().unwrap());
        let up = std::thread::spawn(move || pipe(client_side, server_side, s2));
        pipe(s_2, c2, g2);
        up.join().unwrap();
    });
    let conn = Conn::open(&relay_addr, Service::Client, &ConnOptions::default())?;
    let timeout = Duration::from_secs(30);
    let get = pb::GetRequest {
        region: region.specifier(),
        get: pb::Get {
            row: Bytes::from_static(b"r1"),
            max_versions: Some(3),
            ..Default::default()
        },
    };
    conn.call("Get", &get, b"", timeout)?;
    let scan = pb::ScanRequest {
        region: Some(region.specifier()),
        scan: Some(pb::Scan {
            max_versions: Some(1),
            ..Default::default()
        }),
        number_of_rows: Some(10),
        close_scanner: Some(true),
        client_handles_partials: Some(true),
        client_handles_heartbeats: Some(true),
        ..Default::default()
    };
    conn.call("Scan", &scan, b"", timeout)?;
    let mut block = Vec::new();
    hbase_client::cells::encode(
        &mut block,
        b"r3",
        b"f",
        b"c",
        1700000000003,
        CellType::Put,
        b"put by a multi",
    );
    let multi = pb::MultiRequest {
        region_action: vec![pb::RegionAction {
            region: region.specifier(),
            action: vec![
                pb::Action {
                    index: Some(0),
                    mutation: Some(pb::MutationProto {
                        row: Some(Bytes::from_static(b"r3")),
                        mutate_type: Some(pb::mutation_proto::MutationType::Put as i32),
                        associated_cell_count: Some(1),
                        ..Default::default()
                    }),
                    ..Default::default()
                },
                pb::Action {
                    index: Some(1),
                    get: Some(pb::Get {
                        row: Bytes::from_static(b"r2"),
                        ..Default::default()
                    }),
                    ..Default::default()
                },
            ],
            ..Default::default()
        }],
        ..Default::default()
    };
    conn.call("Multi", &multi, &block, timeout)?;
    conn.close();
    drop(conn);
    relaying.join().unwrap();
    std::fs::create_dir_all(&out)?;
    std::fs::write(out.join("client-to-server.bin"), &*sent.lock().unwrap())?;
    std::fs::write(out.join("server-to-client.bin"), &*got.lock().unwrap())?;
    client.delete_table(t)?;
    println!(
        "captured {} bytes out, {} back, from {server}",
        sent.lock().unwrap().len(),
        got.lock().unwrap().len()
    );
    Ok(())
}
