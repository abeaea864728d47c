//! `tallrow serve` from the outside: the real binary with happybase (a client we did not
//! write) in both wire formats, `load`/`verify` through the hbase backend, kill -9, hostile
//! requests, scanner leases and its command-line guards.

use crate::common::{python, small_fixture, tallrow};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};
use tallrow::store::{Get, Mutation, RowMutation, Scan, Store, TableDescriptor, backend::Backend, embedded::Embedded};
use tallrow::wire::{Protocol, Transport};
use thrift::protocol::TSerializable;

/// A `tallrow serve` child process, killed when dropped.
struct Served {
    child: Child,
    port: u16,
}

impl Served {
    fn start(data: &Path, extra: &[&str]) -> Served {
        let mut command = Command::new(env!("CARGO_BIN_EXE_tallrow"));
        command.stderr(Stdio::inherit());
        Self::spawn(command, data, extra)
    }

    /// Started under an address-space limit of `kib` KiB (`ulimit -v`), so that an
    /// allocation beyond it fails the process instead of being reserved and left untouched.
    fn limited(kib: u64, data: &Path, extra: &[&str]) -> Served {
        let mut sh = Command::new("sh");
        sh.args(["-c", &format!("ulimit -v {kib} && exec \"$0\" \"$@\"")])
            .arg(env!("CARGO_BIN_EXE_tallrow"))
            .stderr(Stdio::null());
        Self::spawn(sh, data, extra)
    }

    /// Starts `command` (the binary, its standard error already directed) serving `data`.
    fn spawn(mut command: Command, data: &Path, extra: &[&str]) -> Served {
        let mut child = command
            .args(["serve", "--data"])
            .arg(data)
            .args(["--bind", "127.0.0.1:0"])
            .args(extra)
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        let port = line
            .split("127.0.0.1:")
            .nth(1)
            .and_then(|r| r.split_whitespace().next())
            .and_then(|p| p.parse().ok())
            .unwrap_or_else(|| panic!("no port in {line:?}"));
        Served { child, port }
    }

    fn addr(&self) -> std::net::SocketAddr {
        std::net::SocketAddr::from(([127, 0, 0, 1], self.port))
    }

    /// A figure from /proc/PID/status, in KiB.
    fn status_kib(&self, field: &str) -> u64 {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.child.id())).unwrap();
        status
            .lines()
            .find_map(|l| l.strip_prefix(field)?.strip_prefix(':'))
            .and_then(|v| v.split_whitespace().next()?.parse().ok())
            .unwrap_or_else(|| panic!("no {field} in {status}"))
    }

    /// The server's threads.
    fn threads(&self) -> u64 {
        self.status_kib("Threads")
    }

    fn url(&self, transport: Transport, protocol: Protocol) -> String {
        format!(
            "hbase://127.0.0.1:{}?transport={transport}&protocol={protocol}",
            self.port
        )
    }

    /// The URL for a server started with `--api thrift2`.
    fn url2(&self) -> String {
        format!("hbase://127.0.0.1:{}?api=thrift2", self.port)
    }
}

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

/// Loads the small fixture into `dir` with the embedded backend and describes one table's
/// rows for the Python side to compare.
fn load_and_describe(dir: &Path) -> PathBuf {
    let data = dir.join("data");
    let fixture = small_fixture();
    let url = format!("embedded:{}", data.display());
    let out = tallrow(dir, &["load", fixture.to_str().unwrap(), "--backend", &url]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let store = Embedded::open(&data).unwrap();
    let table = store
        .list_tables()
        .unwrap()
        .into_iter()
        .map(|t| t.name)
        .find(|n| n.contains("series"))
        .expect("a series table");
    let rows = store.scan(&table, &Scan::default()).unwrap();
    let sample: Vec<serde_json::Value> = rows
        .iter()
        .step_by(rows.len() / 20 + 1)
        .map(|r| {
            let cells: serde_json::Map<String, serde_json::Value> = r
                .cells
                .iter()
                .map(|c| {
                    let name = [c.family.as_bytes(), b":", &c.qualifier].concat();
                    (hex(&name), serde_json::json!([hex(&c.value), c.timestamp]))
                })
                .collect();
            serde_json::json!({"key": hex(&r.key), "cells": cells})
        })
        .collect();
    let expected = dir.join("expected.json");
    let doc = serde_json::json!({"table": table, "rows": sample, "count": rows.len()});
    std::fs::write(&expected, doc.to_string()).unwrap();
    expected
}

fn happybase_interop(transport: Transport, protocol: Protocol) {
    let Some(python) = python() else { return };
    let dir = tempfile::tempdir().unwrap();
    let expected = load_and_describe(dir.path());
    let data = dir.path().join("data");
    let t = transport.to_string();
    let p = protocol.to_string();
    let served = Served::start(&data, &["--transport", &t, "--protocol", &p]);
    let url = served.url(transport, protocol);
    happybase_checks(&python, dir.path(), served.port, &url, &expected);
}

/// Runs tests/happybase_interop.py against the Thrift1 server at `port` (also reachable as
/// the backend `url`) holding the small fixture, then reads what it wrote through tallrow
/// and verifies the fixture through the server.
fn happybase_checks(python: &Path, dir: &Path, port: u16, url: &str, expected: &Path) {
    let (t, p) = match url.contains("transport=framed") {
        true => ("framed", "compact"),
        false => ("buffered", "binary"),
    };
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/happybase_interop.py");
    let out = Command::new(python)
        .arg(&script)
        .args([&port.to_string(), t, p])
        .arg(expected)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(stdout.lines().filter(|l| l.starts_with("ok ")).count(), 11, "{stdout}");

    // tallrow reads what happybase wrote.
    let store = Backend::parse(url, Path::new(".")).unwrap().open().unwrap();
    let rows = store.scan("hb_written", &Scan::default().versions(2)).unwrap();
    assert_eq!(rows.len(), 300);
    let first: Vec<(i64, &[u8])> = rows[0]
        .cells
        .iter()
        .map(|c| (c.timestamp, c.value.as_slice()))
        .collect();
    assert_eq!(first, [(1235, &b"second"[..]), (1234, &b"value 0"[..])]);
    assert_eq!(rows[299].value("d", b"v"), Some(&b"value 299"[..]));
    // And the loaded data verifies through the server.
    let fixture = small_fixture();
    let out = tallrow(dir, &["verify", fixture.to_str().unwrap(), "--backend", url]);
    assert_eq!(out.code, 0, "{}{}", out.stdout, out.stderr);
    assert!(out.stdout.contains("OK: the store holds exactly"), "{}", out.stdout);
}

/// The same happybase checks against real HBase's Thrift1 server (`var` names its
/// address): the fixture is loaded into HBase through HBase's own RPC (a tenth of the time
/// Thrift1 takes; tallrow's writes through each Thrift1 server are `hbase::`'s tests), and
/// into an embedded store only to describe what the script must read. tallrow then reads
/// it back through the same Thrift1 server.
fn happybase_interop_real(var: &str, query: &str, turn: fn() -> crate::common::SchemaTables) {
    let Some(addr) = crate::common::real_hbase(var) else {
        return;
    };
    let Some(python) = python() else { return };
    // The fixture's tables have the schemas' fixed names, and the script's are fixed too.
    let harness = turn();
    let store = crate::common::Harness::store(&harness);
    for table in ["hb_t", "hb_written"] {
        let _ = store.delete_table(table);
    }
    let dir = tempfile::tempdir().unwrap();
    let expected = load_and_describe(dir.path());
    let url = format!("hbase://{addr}{query}");
    let native = crate::common::real_hbase("TALLROW_HBASE_NATIVE").unwrap();
    let fixture = small_fixture();
    let out = tallrow(dir.path(), &["load", fixture.to_str().unwrap(), "--backend", &native]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let port: u16 = addr.rsplit(':').next().unwrap().parse().unwrap();
    happybase_checks(&python, dir.path(), port, &url, &expected);
    let _ = store.delete_table("hb_written");
}

#[test]
fn happybase_interop_real_hbase_buffered_binary() {
    happybase_interop_real(
        "TALLROW_HBASE_THRIFT1",
        "",
        crate::common::SchemaTables::buffered_binary,
    );
}

#[test]
fn happybase_interop_real_hbase_framed_compact() {
    happybase_interop_real(
        "TALLROW_HBASE_THRIFT1_FC",
        "?transport=framed&protocol=compact",
        crate::common::SchemaTables::framed_compact,
    );
}

#[test]
fn happybase_interop_buffered_binary() {
    happybase_interop(Transport::Buffered, Protocol::Binary);
}

#[test]
fn happybase_interop_framed_compact() {
    happybase_interop(Transport::Framed, Protocol::Compact);
}

#[test]
fn load_and_verify_through_the_hbase_backend_then_serve_the_directory_again() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let fixture = small_fixture();
    let fixture = fixture.to_str().unwrap();
    {
        let served = Served::start(&data, &[]);
        let url = served.url(Transport::Buffered, Protocol::Binary);
        let out = tallrow(dir.path(), &["load", fixture, "--backend", &url]);
        assert_eq!(out.code, 0, "{}", out.stderr);
        let out = tallrow(dir.path(), &["verify", fixture, "--backend", &url]);
        assert_eq!(out.code, 0, "{}{}", out.stdout, out.stderr);
    }
    // The directory is an ordinary embedded store: it verifies directly, and serves again.
    let out = tallrow(
        dir.path(),
        &["verify", fixture, "--backend", &format!("embedded:{}", data.display())],
    );
    assert_eq!(out.code, 0, "{}{}", out.stdout, out.stderr);
    let served = Served::start(&data, &["--transport", "framed", "--protocol", "compact"]);
    let url = served.url(Transport::Framed, Protocol::Compact);
    let out = tallrow(dir.path(), &["verify", fixture, "--backend", &url]);
    assert_eq!(out.code, 0, "{}{}", out.stdout, out.stderr);
}

#[test]
fn one_line_errors_for_refused_connections_missing_tables_and_remote_binds() {
    let dir = tempfile::tempdir().unwrap();
    let fixture = small_fixture();
    // Port 1 on loopback: nothing listens there.
    let out = tallrow(
        dir.path(),
        &["verify", fixture.to_str().unwrap(), "--backend", "hbase://127.0.0.1:1"],
    );
    assert_ne!(out.code, 0);
    assert_eq!(out.stderr.trim().lines().count(), 1, "{}", out.stderr);
    assert!(
        out.stderr.contains("cannot connect to 127.0.0.1:1: connection refused"),
        "{}",
        out.stderr
    );

    let served = Served::start(&dir.path().join("data"), &[]);
    let store = Backend::parse(&served.url(Transport::Buffered, Protocol::Binary), Path::new("."))
        .unwrap()
        .open()
        .unwrap();
    let err = store.get("weibo:inbox", &[Get::new("r")]).unwrap_err();
    assert_eq!(err.to_string(), "table weibo:inbox does not exist");

    let out = tallrow(dir.path(), &["serve", "--data", "x", "--bind", "0.0.0.0:0"]);
    assert_ne!(out.code, 0);
    assert!(out.stderr.contains("--allow-remote"), "{}", out.stderr);
    assert_eq!(out.stderr.trim().lines().count(), 1, "{}", out.stderr);
}

#[test]
fn kill_9_of_the_server_loses_nothing_acknowledged() {
    kill_9_loses_nothing(&[]);
}

#[test]
fn kill_9_of_the_thrift2_server_loses_nothing_acknowledged() {
    kill_9_loses_nothing(&["--api", "thrift2"]);
}

fn kill_9_loses_nothing(api: &[&str]) {
    let url = |served: &Served| match api {
        [] => served.url(Transport::Buffered, Protocol::Binary),
        _ => served.url2(),
    };
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let mut served = Served::start(&data, api);
    let store = Backend::parse(&url(&served), Path::new(".")).unwrap().open().unwrap();
    store.create_table(&TableDescriptor::new("acks", &["f"], 1)).unwrap();
    let acked = Arc::new(AtomicUsize::new(0));
    let writer = {
        let (store, acked) = (store.clone(), acked.clone());
        std::thread::spawn(move || {
            for n in 0..1_000_000usize {
                let batch: Vec<RowMutation> = (0..20)
                    .map(|i| {
                        RowMutation::new(
                            format!("{n:07}-{i:02}"),
                            vec![Mutation::put("f", "q", 1, format!("v{n}-{i}"))],
                        )
                    })
                    .collect();
                if store.mutate("acks", &batch).is_err() {
                    return;
                }
                acked.store(n + 1, Ordering::SeqCst);
            }
        })
    };
    // The deadline guards against a hang only.
    let deadline = Instant::now() + Duration::from_secs(120);
    while acked.load(Ordering::SeqCst) < 200 {
        assert!(Instant::now() < deadline, "the writer made no progress");
        std::thread::sleep(Duration::from_millis(5));
    }
    served.child.kill().unwrap(); // SIGKILL
    served.child.wait().unwrap();
    let acknowledged = acked.load(Ordering::SeqCst);
    writer.join().unwrap();
    drop(store);

    let served = Served::start(&data, api);
    let store = Backend::parse(&url(&served), Path::new(".")).unwrap().open().unwrap();
    let gets: Vec<Get> = (0..acknowledged)
        .flat_map(|n| (0..20).map(move |i| Get::new(format!("{n:07}-{i:02}"))))
        .collect();
    for chunk in gets.chunks(1000) {
        for (g, row) in chunk.iter().zip(store.get("acks", chunk).unwrap()) {
            assert!(
                row.is_some(),
                "acknowledged row {} is gone",
                String::from_utf8_lossy(&g.row)
            );
        }
    }
}

#[test]
fn load_verify_and_run_through_serve_thrift2() {
    let dir = tempfile::tempdir().unwrap();
    let served = Served::start(&dir.path().join("data"), &["--api", "thrift2"]);
    let workload = crate::common::hbase_fixture();
    let summary =
        crate::common::load_verify_run_and_miss_a_row(workload.to_str().unwrap(), &served.url2(), "(HBase Thrift2, ");
    assert!(summary.contains("HBase Thrift2"), "the report names the backend");
}

/// The messaging example, a design of the workload's own, through `serve`'s Thrift2.
#[test]
fn a_design_of_its_own_loads_and_verifies_through_serve() {
    let dir = tempfile::tempdir().unwrap();
    let served = Served::start(&dir.path().join("data"), &["--api", "thrift2"]);
    crate::common::own_design_loads_verifies_and_misses_a_row(&[], &served.url2(), "(HBase Thrift2, ");
}

/// A raw connection for malformed requests.
fn raw(addr: std::net::SocketAddr) -> TcpStream {
    let s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
    s
}

/// Whether the server closed the connection (after at most an exception reply).
fn closed(mut s: TcpStream) -> bool {
    let mut reply = Vec::new();
    s.read_to_end(&mut reply).is_ok() && reply.len() < 1024
}

fn in_process(transport: Transport, lease: Duration, max_message: usize) -> tallrow::serve::Server {
    let opts = tallrow::serve::Options {
        bind: "127.0.0.1:0".parse().unwrap(),
        transport,
        protocol: Protocol::Binary,
        max_message,
        scanner_lease: lease,
        ..tallrow::serve::Options::default()
    };
    tallrow::serve::Server::start(Arc::new(tallrow::store::memory::Memory::new()), &opts).unwrap()
}

fn backend(server: &tallrow::serve::Server, transport: Transport) -> Arc<dyn Store> {
    let url = format!("hbase://{}?transport={transport}", server.addr());
    Backend::parse(&url, Path::new(".")).unwrap().open().unwrap()
}

#[test]
fn hostile_requests_are_refused_and_the_server_lives_on() {
    let server = in_process(Transport::Buffered, Duration::from_secs(60), 1 << 20);
    // A call whose table name claims 2 GiB.
    let mut s = raw(server.addr());
    let mut msg = vec![0x80, 0x01, 0x00, 0x01, 0, 0, 0, 13];
    msg.extend_from_slice(b"getTableNames");
    msg.extend_from_slice(&[0, 0, 0, 1]);
    let mut get = vec![0x80, 0x01, 0x00, 0x01, 0, 0, 0, 6];
    get.extend_from_slice(b"getRow");
    get.extend_from_slice(&[0, 0, 0, 2, 11, 0, 1, 0x7f, 0xff, 0xff, 0xff]);
    s.write_all(&get).unwrap();
    assert!(closed(s), "a 2 GiB string claim must close the connection");
    // A list claiming 2^31-1 mutations.
    let mut s = raw(server.addr());
    let mut rows = vec![0x80, 0x01, 0x00, 0x01, 0, 0, 0, 10];
    rows.extend_from_slice(b"mutateRows");
    rows.extend_from_slice(&[
        0, 0, 0, 3, 11, 0, 1, 0, 0, 0, 1, b't', 15, 0, 2, 12, 0x7f, 0xff, 0xff, 0xff,
    ]);
    s.write_all(&rows).unwrap();
    assert!(closed(s));
    // Garbage, and a client that leaves mid-call.
    let mut s = raw(server.addr());
    s.write_all(b"GET / HTTP/1.1\r\n\r\n").unwrap();
    assert!(closed(s));
    let mut s = raw(server.addr());
    s.write_all(&msg[..10]).unwrap();
    drop(s);
    // Still serving, and several-megabyte requests below the limit's multiple are fine
    // once the limit allows them.
    let store = backend(&server, Transport::Buffered);
    store.create_table(&TableDescriptor::new("t", &["f"], 1)).unwrap();
    let big = vec![7u8; 900_000];
    store
        .mutate(
            "t",
            &[RowMutation::new("r", vec![Mutation::put("f", "q", 1, big.clone())])],
        )
        .unwrap();
    assert_eq!(
        store.get("t", &[Get::new("r")]).unwrap()[0].as_ref().unwrap().cells[0].value,
        big
    );
    let too_big = vec![7u8; 2 << 20];
    let err = store
        .mutate(
            "t",
            &[RowMutation::new("r2", vec![Mutation::put("f", "q", 1, too_big)])],
        )
        .unwrap_err();
    assert!(
        matches!(
            err,
            tallrow::store::Error::Unavailable(_) | tallrow::store::Error::Io(_)
        ),
        "{err}"
    );
    assert!(store.get("t", &[Get::new("r2")]).unwrap()[0].is_none());

    // Framed: a frame header above the limit closes the connection unread.
    let framed = in_process(Transport::Framed, Duration::from_secs(60), 1 << 20);
    let mut s = raw(framed.addr());
    s.write_all(&[0x7f, 0xff, 0xff, 0xff, 0x80, 0x01]).unwrap();
    assert!(closed(s));
    let store = backend(&framed, Transport::Framed);
    store.create_table(&TableDescriptor::new("t", &["f"], 1)).unwrap();
    let big = vec![1u8; 6 << 20];
    let server64 = in_process(Transport::Framed, Duration::from_secs(60), 64 << 20);
    let store64 = backend(&server64, Transport::Framed);
    store64.create_table(&TableDescriptor::new("t", &["f"], 1)).unwrap();
    store64
        .mutate(
            "t",
            &[RowMutation::new("r", vec![Mutation::put("f", "q", 1, big.clone())])],
        )
        .unwrap();
    assert_eq!(
        store64.get("t", &[Get::new("r")]).unwrap()[0].as_ref().unwrap().cells[0]
            .value
            .len(),
        6 << 20
    );
}

/// The 39-byte `createTable` whose column list claims 67,108,800 descriptors, as buffered
/// binary, buffered compact and framed binary: each is answered with a protocol error naming
/// the claim, the server's memory does not move, and it serves on. Under a 4 GiB address
/// space, so that reserving what the request claims (7.5 GB) would fail the server.
#[test]
fn a_request_that_claims_gigabytes_is_answered_with_an_error_and_costs_nothing() {
    let binary = hex_bytes("800100010000000b6372656174655461626c65000000010b000100000001740f00020c03ffffc0");
    assert_eq!(binary.len(), 39);
    // The same call in the compact protocol: header, name, field 1 "t", field 2 a list of
    // structs claiming 67,108,800 elements (varint c0 ff ff 1f).
    let mut compact = vec![0x82, 0x21, 0x01, 0x0b];
    compact.extend_from_slice(b"createTable");
    compact.extend_from_slice(&[0x18, 0x01, b't', 0x19, 0xfc, 0xc0, 0xff, 0xff, 0x1f]);
    let framed = [&(binary.len() as u32).to_be_bytes()[..], &binary].concat();
    for (transport, protocol, request) in [
        ("buffered", "binary", &binary),
        ("buffered", "compact", &compact),
        ("framed", "binary", &framed),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let served = Served::limited(4 << 20, dir.path(), &["--transport", transport, "--protocol", protocol]);
        let url = format!(
            "hbase://127.0.0.1:{}?transport={transport}&protocol={protocol}",
            served.port
        );
        let store = Backend::parse(&url, dir.path()).unwrap().open().unwrap();
        store.create_table(&TableDescriptor::new("t0", &["f"], 1)).unwrap();
        let idle = served.threads();
        let send = || {
            let mut s = raw(served.addr());
            s.write_all(request).unwrap();
            let mut reply = Vec::new();
            s.read_to_end(&mut reply).unwrap();
            let text = String::from_utf8_lossy(&reply);
            assert!(
                text.contains("createTable") && text.contains("collection of 67108800 elements"),
                "{transport}/{protocol}: {text:?}"
            );
            // One connection's thread at a time: a thread started while the last one is still
            // ending takes an allocator segment of its own, address space this test is not
            // about.
            let since = Instant::now();
            while served.threads() > idle && since.elapsed() < Duration::from_secs(10) {
                std::thread::sleep(Duration::from_millis(1));
            }
        };
        // The first calls warm the allocator's per-thread heaps.
        (0..5).for_each(|_| send());
        let (rss, peak) = (served.status_kib("VmRSS"), served.status_kib("VmPeak"));
        (0..50).for_each(|_| send());
        assert_eq!(
            store.list_tables().unwrap().len(),
            1,
            "{transport}/{protocol}: serving on"
        );
        let (rss_after, peak_after) = (served.status_kib("VmRSS"), served.status_kib("VmPeak"));
        assert!(
            rss_after < rss + (8 << 10) && peak_after < peak + (64 << 10),
            "{transport}/{protocol}: resident {rss} -> {rss_after} KiB, peak address space {peak} -> {peak_after} KiB"
        );
    }
}

fn hex_bytes(hex: &str) -> Vec<u8> {
    (0..hex.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&hex[i..i + 2], 16).unwrap())
        .collect()
}

#[test]
fn abandoned_scanners_are_freed_when_their_lease_ends() {
    let server = in_process(Transport::Buffered, Duration::from_millis(300), 1 << 20);
    let store = backend(&server, Transport::Buffered);
    store.create_table(&TableDescriptor::new("t", &["f"], 1)).unwrap();
    let rows: Vec<RowMutation> = (0..10)
        .map(|i| RowMutation::new(format!("r{i}"), vec![Mutation::put("f", "q", 1, "v")]))
        .collect();
    store.mutate("t", &rows).unwrap();
    // A client that opens scanners and walks away.
    let mut client = thrift1_client(server.addr());
    use tallrow::idl::thrift1::THbaseSyncClient;
    let id = client
        .scanner_open(b"t".to_vec(), Vec::new(), Vec::new(), Default::default())
        .unwrap();
    assert_eq!(client.scanner_get_list(id, 3).unwrap().len(), 3);
    for _ in 0..5 {
        client
            .scanner_open(b"t".to_vec(), Vec::new(), Vec::new(), Default::default())
            .unwrap();
    }
    assert_eq!(server.open_scanners(), 6);
    // The reaper closes them a lease after their last use; the deadline guards against a
    // hang only.
    let deadline = Instant::now() + Duration::from_secs(120);
    while server.open_scanners() > 0 {
        assert!(Instant::now() < deadline, "scanners outlived their lease");
        std::thread::sleep(Duration::from_millis(20));
    }
    match client.scanner_get_list(id, 3) {
        Err(thrift::Error::User(e)) => assert!(e.downcast_ref::<tallrow::idl::thrift1::IllegalArgument>().is_some()),
        other => panic!("expected IllegalArgument, got {other:?}"),
    }
    // The backend's own scans close their scanners: whole, and one batch whose close goes
    // out with the read.
    assert_eq!(store.scan("t", &Scan::default()).unwrap().len(), 10);
    assert_eq!(server.open_scanners(), 0);
    let first3 = Scan {
        limit: Some(3),
        ..Scan::default()
    };
    let keys: Vec<_> = store.scan("t", &first3).unwrap().into_iter().map(|r| r.key).collect();
    assert_eq!(keys, [b"r0".to_vec(), b"r1".to_vec(), b"r2".to_vec()]);
    assert_eq!(server.open_scanners(), 0);
}

/// A raw Thrift1 client on a connection of its own.
fn thrift1_client(
    addr: std::net::SocketAddr,
) -> tallrow::idl::thrift1::HbaseSyncClient<
    tallrow::wire::Input<Box<dyn tallrow::wire::Source>>,
    Box<dyn thrift::protocol::TOutputProtocol + Send>,
> {
    let stream = TcpStream::connect(addr).unwrap();
    // A server that never answers fails the test rather than hanging it.
    stream.set_read_timeout(Some(Duration::from_secs(60))).unwrap();
    let input = tallrow::wire::input(
        stream.try_clone().unwrap(),
        Transport::Buffered,
        Protocol::Binary,
        1 << 20,
    );
    let output = tallrow::wire::output(
        tallrow::wire::Outbox::new(stream, Transport::Buffered),
        Protocol::Binary,
    );
    tallrow::idl::thrift1::HbaseSyncClient::new(input, output)
}

/// One client opening scanners until refused holds its own cap (50 here), not the server's
/// 100,000: another client's scans are served meanwhile, and the first client's scanners
/// are closed when its connection closes.
#[test]
fn one_client_holding_its_scanner_cap_leaves_scans_for_others() {
    use tallrow::idl::thrift1::THbaseSyncClient;
    let opts = tallrow::serve::Options {
        bind: "127.0.0.1:0".parse().unwrap(),
        max_scanners_per_connection: 50,
        ..tallrow::serve::Options::default()
    };
    let server = tallrow::serve::Server::start(Arc::new(tallrow::store::memory::Memory::new()), &opts).unwrap();
    let store = backend(&server, Transport::Buffered);
    store.create_table(&TableDescriptor::new("t", &["f"], 1)).unwrap();
    let rows: Vec<RowMutation> = (0..10)
        .map(|i| RowMutation::new(format!("r{i}"), vec![Mutation::put("f", "q", 1, "v")]))
        .collect();
    store.mutate("t", &rows).unwrap();

    let mut greedy = thrift1_client(server.addr());
    let mut opened = 0;
    let refusal = loop {
        match greedy.scanner_open(b"t".to_vec(), Vec::new(), Vec::new(), Default::default()) {
            Ok(_) => opened += 1,
            Err(e) => break e,
            // Bounded, for a server without a cap: its own runs out at 100,000.
        }
        assert!(opened <= 200_000);
    };
    assert_eq!(opened, 50, "{refusal:?}");
    match &refusal {
        thrift::Error::User(e) => {
            let io = e.downcast_ref::<tallrow::idl::thrift1::IOError>().expect("an IOError");
            assert!(
                io.message
                    .as_deref()
                    .unwrap_or("")
                    .contains("--max-scanners-per-connection"),
                "{io:?}"
            );
        }
        other => panic!("expected an IOError, got {other:?}"),
    }
    // Another client's scan is served while the first holds its cap.
    assert_eq!(store.scan("t", &Scan::default()).unwrap().len(), 10);
    assert_eq!(server.open_scanners(), 50);
    // Its scanners are closed when its connection closes.
    drop(greedy);
    // The deadline guards against a hang only.
    let deadline = Instant::now() + Duration::from_secs(120);
    while server.open_scanners() > 0 {
        assert!(Instant::now() < deadline, "a closed connection's scanners stay open");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// `tallrow serve ARGS` over `dir/data`, its standard error in the returned file.
fn served_logging(dir: &Path, args: &[&str]) -> (Served, PathBuf) {
    let log = dir.join("serve.log");
    let mut command = Command::new(env!("CARGO_BIN_EXE_tallrow"));
    command.stderr(std::fs::File::create(&log).unwrap());
    (Served::spawn(command, &dir.join("data"), args), log)
}

/// A connection that has sent the first bytes of a `get` call and stops there.
fn half_a_call(addr: std::net::SocketAddr) -> TcpStream {
    let mut half = raw(addr);
    half.write_all(&[0x80, 0x01, 0x00, 0x01, 0, 0, 0, 13, b'g', b'e', b't'])
        .unwrap();
    half
}

/// With every connection the server allows held by idle clients (and one that sent half a
/// call), a new client is served at once: the connection idle longest is closed for it, the
/// one in the middle of a call never is, and this is logged once however many clients
/// come. The idle timeout (10 minutes) is far off, so nothing else could make room.
#[test]
fn at_the_connection_limit_the_longest_idle_makes_room() {
    let dir = tempfile::tempdir().unwrap();
    let (served, log) = served_logging(dir.path(), &["--max-connections", "8", "--idle-timeout", "10m"]);
    // The one in a call first, so that it is the oldest; then seven idle ones, in order.
    let half = half_a_call(served.addr());
    let mut idle = Vec::new();
    for _ in 0..7 {
        std::thread::sleep(Duration::from_millis(20));
        idle.push(raw(served.addr()));
    }
    std::thread::sleep(Duration::from_millis(200));

    let started = Instant::now();
    let url = format!("hbase://127.0.0.1:{}", served.port);
    let store = Backend::parse(&url, dir.path()).unwrap().open().unwrap();
    store.create_table(&TableDescriptor::new("t", &["f"], 1)).unwrap();
    store
        .mutate("t", &[RowMutation::new("r", vec![Mutation::put("f", "q", 1, "v")])])
        .unwrap();
    let got = store.get("t", &[Get::new("r")]).unwrap();
    assert_eq!(got[0].as_ref().unwrap().cells.len(), 1);
    eprintln!("a new client at the limit served in {:?}", started.elapsed());
    // The longest idle was closed for it (the store's pool may take more than one), the
    // newest idle one and the one in a call were not.
    let mut rest = Vec::new();
    assert_eq!(idle[0].read_to_end(&mut rest).unwrap(), 0, "closed without a reply");
    for s in [&idle[6], &half] {
        s.set_nonblocking(true).unwrap();
        let e = (&*s).read(&mut [0u8; 1]).unwrap_err();
        assert_eq!(e.kind(), std::io::ErrorKind::WouldBlock, "still open");
        s.set_nonblocking(false).unwrap();
    }
    // Another client: another idle one goes, and no second line.
    use tallrow::idl::thrift1::THbaseSyncClient;
    let mut other = thrift1_client(served.addr());
    other.get_table_names().unwrap();
    assert_eq!(idle[1].read_to_end(&mut rest).unwrap(), 0, "closed without a reply");
    let text = std::fs::read_to_string(&log).unwrap();
    let closing = text
        .lines()
        .filter(|l| l.contains("8 connections open, the most --max-connections allows; closing the one idle longest"))
        .count();
    assert_eq!(closing, 1, "{text}");
}

/// While every connection the limit allows is in a call, a new client waits to be accepted
/// until one closes: two clients that each sent half a call and stopped hold both, and are
/// closed after --idle-timeout; the limit is logged once.
#[test]
fn connections_stalled_in_a_call_at_the_limit_close_after_the_idle_timeout() {
    let dir = tempfile::tempdir().unwrap();
    let (served, log) = served_logging(dir.path(), &["--max-connections", "2", "--idle-timeout", "1s"]);
    let halves: Vec<TcpStream> = (0..2).map(|_| half_a_call(served.addr())).collect();
    std::thread::sleep(Duration::from_millis(200));

    let url = format!("hbase://127.0.0.1:{}", served.port);
    let store = Backend::parse(&url, dir.path()).unwrap().open().unwrap();
    store.create_table(&TableDescriptor::new("t", &["f"], 1)).unwrap();
    assert_eq!(store.list_tables().unwrap().len(), 1);
    for mut s in halves {
        let mut rest = Vec::new();
        assert_eq!(s.read_to_end(&mut rest).unwrap(), 0, "closed without a reply");
    }
    let text = std::fs::read_to_string(&log).unwrap();
    let at_limit = text
        .lines()
        .filter(|l| l.contains("2 connections open, the most --max-connections allows, each in a call"))
        .count();
    assert_eq!(at_limit, 1, "{text}");
    assert_eq!(
        text.lines()
            .filter(|l| l.contains("nothing sent for 1s in the middle of a request"))
            .count(),
        2,
        "{text}"
    );
}

/// An idle connection holds little memory: a small read buffer (grown only while a client
/// sends much) and no huge page per connection thread.
#[test]
fn idle_connections_cost_little_memory() {
    use tallrow::idl::thrift1::THbaseSyncClient;
    let dir = tempfile::tempdir().unwrap();
    let served = Served::start(&dir.path().join("data"), &[]);
    thrift1_client(served.addr()).get_table_names().unwrap();
    let before = served.status_kib("VmRSS");
    let clients: Vec<_> = (0..100)
        .map(|_| {
            let mut c = thrift1_client(served.addr());
            c.get_table_names().unwrap();
            c
        })
        .collect();
    let after = served.status_kib("VmRSS");
    let each = (after.saturating_sub(before)) / 100;
    assert!(
        each < 512,
        "{each} KiB resident per idle connection ({before} -> {after} KiB)"
    );
    drop(clients);
}

/// A store that counts the write batches reaching it and can be told to fail them.
struct Counting {
    inner: tallrow::store::memory::Memory,
    batches: AtomicUsize,
    fail: std::sync::atomic::AtomicBool,
}

impl Store for Counting {
    fn identity(&self) -> String {
        "counting".into()
    }
    fn create_table(&self, t: &TableDescriptor) -> tallrow::store::Result<()> {
        self.inner.create_table(t)
    }
    fn delete_table(&self, t: &str) -> tallrow::store::Result<()> {
        self.inner.delete_table(t)
    }
    fn list_tables(&self) -> tallrow::store::Result<Vec<TableDescriptor>> {
        self.inner.list_tables()
    }
    fn describe_table(&self, t: &str) -> tallrow::store::Result<TableDescriptor> {
        self.inner.describe_table(t)
    }
    fn mutate(&self, t: &str, rows: &[RowMutation]) -> tallrow::store::Result<()> {
        if t == "t" {
            if self.fail.load(Ordering::Relaxed) {
                return Err(tallrow::store::Error::Io("disk on fire".into()));
            }
            self.batches.fetch_add(1, Ordering::Relaxed);
        }
        self.inner.mutate(t, rows)
    }
    fn get(&self, t: &str, gets: &[Get]) -> tallrow::store::Result<Vec<Option<tallrow::store::Row>>> {
        self.inner.get(t, gets)
    }
    fn scan(&self, t: &str, scan: &Scan) -> tallrow::store::Result<Vec<tallrow::store::Row>> {
        self.inner.scan(t, scan)
    }
}

fn counting_server() -> (Arc<Counting>, tallrow::serve::Server) {
    let store = Arc::new(Counting {
        inner: tallrow::store::memory::Memory::new(),
        batches: AtomicUsize::new(0),
        fail: false.into(),
    });
    let opts = tallrow::serve::Options {
        bind: "127.0.0.1:0".parse().unwrap(),
        ..tallrow::serve::Options::default()
    };
    let server = tallrow::serve::Server::start(store.clone(), &opts).unwrap();
    (store, server)
}

/// Rows that each carry their own timestamp: Thrift1 needs one mutateRowsTs call per row.
fn own_timestamps(n: usize) -> Vec<RowMutation> {
    (0..n)
        .map(|i| RowMutation::new(format!("r{i:04}"), vec![Mutation::put("f", "q", 1000 + i as i64, "v")]))
        .collect()
}

#[test]
fn pipelined_mutation_calls_reach_the_store_in_few_batches() {
    let (store, server) = counting_server();
    let client = backend(&server, Transport::Buffered);
    client.create_table(&TableDescriptor::new("t", &["f"], 1)).unwrap();
    client.mutate("t", &own_timestamps(1000)).unwrap();
    // Acknowledged means applied: every row is there for any connection.
    assert_eq!(store.inner.scan("t", &Scan::default()).unwrap().len(), 1000);
    assert_eq!(client.scan("t", &Scan::default()).unwrap().len(), 1000);
    let batches = store.batches.load(Ordering::Relaxed);
    assert!(batches < 250, "1000 pipelined calls took {batches} store batches");
}

#[test]
fn a_failed_group_commit_acknowledges_nothing_and_the_server_lives_on() {
    let (store, server) = counting_server();
    let client = backend(&server, Transport::Buffered);
    client.create_table(&TableDescriptor::new("t", &["f"], 1)).unwrap();
    store.fail.store(true, Ordering::Relaxed);
    assert!(client.mutate("t", &own_timestamps(50)).is_err());
    assert!(store.inner.scan("t", &Scan::default()).unwrap().is_empty());
    store.fail.store(false, Ordering::Relaxed);
    client.mutate("t", &own_timestamps(50)).unwrap();
    assert_eq!(client.scan("t", &Scan::default()).unwrap().len(), 50);
}

#[test]
fn a_read_pipelined_after_writes_on_one_connection_sees_them() {
    use thrift::protocol::{
        TBinaryOutputProtocol, TFieldIdentifier, TInputProtocol, TListIdentifier, TMessageIdentifier, TMessageType,
        TOutputProtocol, TStructIdentifier, TType,
    };
    let (_store, server) = counting_server();
    backend(&server, Transport::Buffered)
        .create_table(&TableDescriptor::new("t", &["f"], 1))
        .unwrap();
    // mutateRowTs(t, r, [f:q=v<i>], ts=i) for i in 1..=3, then getRow(t, r), in one write.
    let mut bytes = Vec::new();
    {
        let mut o = TBinaryOutputProtocol::new(&mut bytes, true);
        let field = |o: &mut TBinaryOutputProtocol<_>, t, id| o.write_field_begin(&TFieldIdentifier::new("f", t, id));
        for i in 1..=3i64 {
            o.write_message_begin(&TMessageIdentifier::new("mutateRowTs", TMessageType::Call, i as i32))
                .unwrap();
            o.write_struct_begin(&TStructIdentifier::new("args")).unwrap();
            field(&mut o, TType::String, 1).unwrap();
            o.write_bytes(b"t").unwrap();
            field(&mut o, TType::String, 2).unwrap();
            o.write_bytes(b"r").unwrap();
            field(&mut o, TType::List, 3).unwrap();
            o.write_list_begin(&TListIdentifier::new(TType::Struct, 1)).unwrap();
            tallrow::idl::thrift1::Mutation::new(false, b"f:q".to_vec(), format!("v{i}").into_bytes(), None)
                .write_to_out_protocol(&mut o)
                .unwrap();
            field(&mut o, TType::I64, 4).unwrap();
            o.write_i64(i).unwrap();
            o.write_field_stop().unwrap();
            o.write_struct_end().unwrap();
        }
        o.write_message_begin(&TMessageIdentifier::new("getRow", TMessageType::Call, 4))
            .unwrap();
        field(&mut o, TType::String, 1).unwrap();
        o.write_bytes(b"t").unwrap();
        field(&mut o, TType::String, 2).unwrap();
        o.write_bytes(b"r").unwrap();
        o.write_field_stop().unwrap();
    }
    let mut s = raw(server.addr());
    s.write_all(&bytes).unwrap();
    let mut i = tallrow::wire::input(s, Transport::Buffered, Protocol::Binary, 1 << 20);
    for seq in 1..=3 {
        let m = i.read_message_begin().unwrap();
        assert_eq!((m.name.as_str(), m.sequence_number), ("mutateRowTs", seq));
        i.read_struct_begin().unwrap();
        assert_eq!(
            i.read_field_begin().unwrap().field_type,
            TType::Stop,
            "mutateRowTs failed"
        );
    }
    let m = i.read_message_begin().unwrap();
    assert_eq!((m.name.as_str(), m.sequence_number), ("getRow", 4));
    i.read_struct_begin().unwrap();
    let f = i.read_field_begin().unwrap();
    assert_eq!((f.id, f.field_type), (Some(0), TType::List));
    let list = i.read_list_begin().unwrap();
    assert_eq!(list.size, 1);
    let row = tallrow::idl::thrift1::TRowResult::read_from_in_protocol(&mut i).unwrap();
    let cell = &row.columns.unwrap()[&b"f:q".to_vec()];
    assert_eq!((cell.value.as_deref(), cell.timestamp), (Some(&b"v3"[..]), Some(3)));
}

/// Thrift1 mutation calls read in place (whole in the server's buffer) and through the
/// bounded reader give the same replies, byte for byte, and the same stored cells: every
/// method, puts and deletes, and the refusals (empty rows, family-only puts, unknown
/// tables and families, an omitted argument).
#[test]
fn mutation_calls_read_in_place_answer_and_store_as_the_bounded_reader() {
    use tallrow::idl::thrift1::{BatchMutation, Mutation as TMutation};
    use thrift::protocol::{
        TBinaryOutputProtocol, TFieldIdentifier, TListIdentifier, TMapIdentifier, TMessageIdentifier, TMessageType,
        TOutputProtocol, TStructIdentifier, TType,
    };

    let put = |c: &str, v: &str| TMutation::new(false, c.as_bytes().to_vec(), v.as_bytes().to_vec(), true);
    let delete = |c: &str| TMutation {
        is_delete: Some(true),
        column: Some(c.as_bytes().to_vec()),
        value: None,
        write_to_w_a_l: None,
    };
    enum Arg {
        Text(&'static str),
        I64(i64),
        Batches(Vec<BatchMutation>),
        Mutations(Vec<TMutation>),
        NoAttributes,
    }
    let mut stream = Vec::new();
    let mut calls = 0;
    let mut call = |name: &str, args: Vec<Arg>| {
        calls += 1;
        let mut o = TBinaryOutputProtocol::new(&mut stream, true);
        o.write_message_begin(&TMessageIdentifier::new(name, TMessageType::Call, calls))
            .unwrap();
        o.write_struct_begin(&TStructIdentifier::new("args")).unwrap();
        for (i, a) in args.iter().enumerate() {
            let id = i as i16 + 1;
            let t = match a {
                Arg::Text(_) => TType::String,
                Arg::I64(_) => TType::I64,
                Arg::Batches(_) | Arg::Mutations(_) => TType::List,
                Arg::NoAttributes => TType::Map,
            };
            o.write_field_begin(&TFieldIdentifier::new("a", t, id)).unwrap();
            match a {
                Arg::Text(s) => o.write_bytes(s.as_bytes()).unwrap(),
                Arg::I64(v) => o.write_i64(*v).unwrap(),
                Arg::Batches(b) => {
                    o.write_list_begin(&TListIdentifier::new(TType::Struct, b.len() as i32))
                        .unwrap();
                    b.iter().for_each(|b| b.write_to_out_protocol(&mut o).unwrap());
                }
                Arg::Mutations(m) => {
                    o.write_list_begin(&TListIdentifier::new(TType::Struct, m.len() as i32))
                        .unwrap();
                    m.iter().for_each(|m| m.write_to_out_protocol(&mut o).unwrap());
                }
                Arg::NoAttributes => o
                    .write_map_begin(&TMapIdentifier::new(TType::String, TType::String, 0))
                    .unwrap(),
            }
        }
        o.write_field_stop().unwrap();
    };
    use Arg::*;
    let batch = |row: &str, m: Vec<TMutation>| BatchMutation::new(row.as_bytes().to_vec(), m);
    let rows_ts = |table, batches, ts| {
        (
            "mutateRowsTs",
            vec![Text(table), Batches(batches), I64(ts), NoAttributes],
        )
    };
    let row_ts = |table, row, m, ts| {
        (
            "mutateRowTs",
            vec![Text(table), Text(row), Mutations(m), I64(ts), NoAttributes],
        )
    };
    let mut call = |(name, args): (&str, Vec<Arg>)| call(name, args);
    call(rows_ts(
        "t",
        vec![
            batch("r1", vec![put("f:a", "1"), put("f:b", "2"), put("f:a", "3")]),
            batch("r2", vec![put("f:a", "x"), delete("f")]),
            batch("r1", vec![delete("f:b")]),
        ],
        5,
    ));
    let r3 = vec![batch("r3", vec![put("f:c", "now")])];
    call(("mutateRows", vec![Text("t"), Batches(r3), NoAttributes]));
    let r4 = vec![put("f", "skipped"), put("f:d", "4")];
    call(("mutateRow", vec![Text("t"), Text("r4"), Mutations(r4), NoAttributes]));
    call(row_ts(
        "t",
        "r5",
        vec![put("f:e", "5"), delete("f:e"), put("f:", "empty")],
        9,
    ));
    // Refused: an empty row, a family-only put in a rows call, an unknown table and
    // family, a column HBase cannot parse.
    call(rows_ts("t", vec![batch("", vec![put("f:a", "1")])], 1));
    call(row_ts("t", "", vec![put("f:a", "1")], 1));
    call(rows_ts("t", vec![batch("r6", vec![put("f", "1")])], 1));
    call(row_ts("nope", "r7", vec![put("f:a", "1")], 1));
    call(rows_ts("t", vec![batch("r8", vec![put("g:a", "1")])], 1));
    call(row_ts("t", "r9", vec![put(":a", "1")], 1));
    // Attributes left out: the bounded reader fills them in on both servers.
    let r10 = vec![put("f:a", "10")];
    call(("mutateRowTs", vec![Text("t"), Text("r10"), Mutations(r10), I64(10)]));
    // A read after the writes on the same connection.
    call(("getRowTs", vec![Text("t"), Text("r1"), I64(6), NoAttributes]));
    let calls = calls;
    assert!(stream.len() < 8 << 10, "the calls arrive in the server's first read");

    let serve = |in_place: bool| {
        let opts = tallrow::serve::Options {
            bind: "127.0.0.1:0".parse().unwrap(),
            in_place,
            ..tallrow::serve::Options::default()
        };
        let server = tallrow::serve::Server::start(Arc::new(tallrow::store::memory::Memory::new()), &opts).unwrap();
        let store = backend(&server, Transport::Buffered);
        store.create_table(&TableDescriptor::new("t", &["f"], 3)).unwrap();
        let mut s = raw(server.addr());
        s.write_all(&stream).unwrap();
        s.shutdown(std::net::Shutdown::Write).unwrap();
        let mut replies = Vec::new();
        s.read_to_end(&mut replies).unwrap();
        // Cells written at the server's clock compare by everything but their timestamp.
        let mut cells = Vec::new();
        let all = Scan {
            select: tallrow::store::Selection {
                max_versions: 10,
                ..Default::default()
            },
            ..Scan::default()
        };
        for row in store.scan("t", &all).unwrap() {
            for c in row.cells {
                let ts = if c.timestamp > 1_000_000_000_000 {
                    -1
                } else {
                    c.timestamp
                };
                cells.push((row.key.clone(), c.family, c.qualifier, ts, c.value));
            }
        }
        (replies, cells)
    };
    let (in_place, bounded) = (serve(true), serve(false));
    assert_eq!(in_place.0, bounded.0, "replies differ");
    assert_eq!(in_place.1, bounded.1, "stored cells differ");

    // And what they agree on is what HBase does.
    let replies = &in_place.0;
    let count = |needle: &[u8]| replies.windows(needle.len()).filter(|w| *w == needle).count();
    let (answers, exceptions) = (count(b"\x80\x01\x00\x02"), count(b"\x80\x01\x00\x03"));
    assert_eq!(answers + exceptions, calls as usize, "one reply per call");
    assert!(count(b"Row length is 0") >= 1 && count(b"Internal error processing mutateRowsTs") >= 2);
    let cell = |row: &str, q: &str, ts: i64, v: &str| {
        (
            row.as_bytes().to_vec(),
            "f".to_string(),
            q.as_bytes().to_vec(),
            ts,
            v.as_bytes().to_vec(),
        )
    };
    let expected = vec![
        cell("r1", "a", 5, "3"),
        cell("r10", "a", 10, "10"),
        cell("r3", "c", -1, "now"),
        cell("r4", "d", -1, "4"),
        cell("r5", "", 9, "empty"),
    ];
    assert_eq!(in_place.1, expected);
}
