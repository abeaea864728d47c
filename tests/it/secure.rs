//! The hbase backend through real HBase's Kerberized gateways (`scripts/hbase.sh start
//! --secure`: a real MIT KDC, HBase's own Thrift servers with SASL/GSSAPI, and in HTTP mode
//! with SPNEGO over TLS): `load`, `verify` and `run` through each (of the small fixture at
//! 100 users: what these passes add to the contract suites' is the protection over a whole
//! session, not the volume), the errors a user meets
//! first (each one line, naming the cause), and a ticket that expires during a run. The
//! Store contract runs through them in `contract`.

use crate::common::{
    PrefixedSchemaTables, RealHBaseHarness, SAMPLE, SchemaTables, load_verify_run_and_miss_a_row_with, real_hbase,
    secure_hbase, secure_hbase_there, small_fixture, tallrow_with,
};
use std::path::Path;
use std::time::Instant;

/// The small fixture at a third of its users (a few thousand rows, several batches and
/// verify blocks of every kind of row): what a secured path adds to the plain ones' is the
/// protection over a whole session, not the volume.
const FEWER_USERS: &str = "data.users=100";

fn load_verify_and_run(var: &str, api: &str) {
    let url = secure_hbase(var).unwrap();
    // The workload's tables under a prefix of this test's own, dropped before and after
    // (through the plain Thrift2 server: the same cluster).
    let tables = PrefixedSchemaTables::new(RealHBaseHarness::thrift2());
    let workload = small_fixture();
    let summary = load_verify_run_and_miss_a_row_with(
        workload.to_str().unwrap(),
        &[&tables.set(), FEWER_USERS],
        &url,
        &format!("(HBase {api}, "),
    );
    assert!(
        summary.contains(&format!("HBase {api}")),
        "the report names the backend"
    );
}

#[test]
fn load_verify_and_run_through_sasl_on_thrift1_with_privacy() {
    if secure_hbase_there() {
        load_verify_and_run("TALLROW_HBASE_SASL1_CONF", "Thrift1");
    }
}

#[test]
fn load_verify_and_run_through_sasl_on_thrift2_with_integrity() {
    if secure_hbase_there() {
        load_verify_and_run("TALLROW_HBASE_SASL2_INT", "Thrift2");
    }
}

#[test]
fn load_verify_and_run_through_http_spnego_and_tls() {
    if secure_hbase_there() {
        load_verify_and_run("TALLROW_HBASE_HTTPS2", "Thrift2");
    }
}

/// `load`, `verify` and `run` through the Kerberized cluster's own RPC (`var`: plain TCP or
/// TLS) with `qop`.
fn native_load_verify_and_run(var: &str, qop: &str) {
    // Each protection's test loads the tables into the one Kerberized cluster under a prefix
    // of its own, dropped before and after.
    let url = format!("{}&qop={qop}", secure_hbase(var).unwrap());
    let tables = PrefixedSchemaTables::at(&url);
    let workload = small_fixture();
    let summary = load_verify_run_and_miss_a_row_with(
        workload.to_str().unwrap(),
        &[&tables.set(), FEWER_USERS],
        &url,
        "(HBase native RPC, ",
    );
    assert!(summary.contains("HBase native RPC"), "the report names the backend");
}

/// A run's observer reads the Kerberized region server's /jmx, whose info server asks for
/// SPNEGO, with the run's own credentials: cluster.csv has its rows, and no read failed.
fn observed_with_spnego(url: &str) {
    let dir = tempfile::tempdir().unwrap();
    let workload = small_fixture();
    let out = tallrow_with(
        dir.path(),
        &[
            "run",
            workload.to_str().unwrap(),
            "--backend",
            url,
            "--ops",
            "50",
            "--warmup",
            "0s",
        ],
        &[],
    );
    assert_eq!(out.code, 0, "{}{}", out.stdout, out.stderr);
    let line = out.stdout.lines().find(|l| l.starts_with("cluster: ")).unwrap_or("");
    assert!(
        line.ends_with("0 servers lost"),
        "no read failed: {line}\n{}",
        out.stdout
    );
    let report = out
        .stdout
        .lines()
        .find_map(|l| l.strip_prefix("report: "))
        .map(|p| dir.path().join(p))
        .unwrap();
    let csv = std::fs::read_to_string(report.join("cluster.csv")).unwrap();
    let mut rows = csv::Reader::from_reader(csv.as_bytes());
    let queued = rows.headers().unwrap().iter().position(|h| h == "rpc_queued").unwrap();
    assert!(
        rows.records().any(|r| !r.unwrap()[queued].is_empty()),
        "a /jmx row in {csv}"
    );
}

#[test]
fn load_verify_and_run_through_native_kerberos_with_privacy() {
    if secure_hbase_there() {
        native_load_verify_and_run("TALLROW_HBASE_NATIVE_KRB", "auth-conf");
        let _turn = SchemaTables::native_kerberos_privacy();
        observed_with_spnego(&format!(
            "{}&qop=auth-conf",
            secure_hbase("TALLROW_HBASE_NATIVE_KRB").unwrap()
        ));
    }
}

/// With HBase's own AES in place of GSSAPI's privacy wrap: the Kerberized cluster runs
/// `hbase.rpc.crypto.encryption.aes.enabled`, and sends its keys to a client that asks.
#[test]
fn load_verify_and_run_through_native_kerberos_with_hbase_aes() {
    if secure_hbase_there() {
        native_load_verify_and_run("TALLROW_HBASE_NATIVE_KRB", "auth-conf&crypto=aes");
    }
}

#[test]
fn load_verify_and_run_through_native_kerberos_with_integrity() {
    if secure_hbase_there() {
        native_load_verify_and_run("TALLROW_HBASE_NATIVE_KRB", "auth-int");
    }
}

#[test]
fn load_verify_and_run_through_native_kerberos_inside_tls() {
    if secure_hbase_there() {
        native_load_verify_and_run("TALLROW_HBASE_NATIVE_KRB_TLS", "auth-int");
    }
}

/// Each TLS failure on api=native in one line: a certificate from a CA the URL does not
/// trust, TLS asked of a server whose RPC takes none, a CA file that holds no certificate.
#[test]
fn the_native_path_names_each_tls_failure() {
    if !secure_hbase_there() {
        return;
    }
    let url = secure_hbase("TALLROW_HBASE_NATIVE_KRB_TLS").unwrap();
    let ca = std::env::var("TALLROW_HBASE_CA").unwrap();
    let other = std::env::var("TALLROW_HBASE_OTHER_CA").unwrap();
    let e = refused(&url.replace(&ca, &other), &[]);
    assert!(
        e.contains(&format!(
            "the server's TLS certificate is not signed by the CA in ca={other}: give ca= the CA that signed it"
        )),
        "{e}"
    );
    // Without ca=, the public CAs: the test CA is not one of them.
    let e = refused(&url.replace(&format!("&ca={ca}"), ""), &[]);
    assert!(
        e.contains("the server's TLS certificate is not signed by the public CAs"),
        "{e}"
    );
    // The RPC's certificate is for localhost: its master reached by address is refused.
    let master = std::env::var("TALLROW_HBASE_NATIVE_KRB_MASTER").unwrap();
    let by_address = master.replace("localhost:", "127.0.0.1:");
    let e = refused(
        &format!("hbase://{by_address}?api=native&registry=rpc&sasl=gssapi&tls=true&ca={ca}"),
        &[],
    );
    assert!(
        e.contains(&format!(
            "{by_address}: the server's TLS certificate is not for \"127.0.0.1\", the host this connection reached"
        )),
        "{e}"
    );
    let plain = real_hbase("TALLROW_HBASE_NATIVE").unwrap();
    let e = refused(&format!("{plain}&tls=true&ca={ca}"), &[]);
    assert!(e.contains("its RPC does not take TLS"), "{e}");
    let dir = tempfile::tempdir().unwrap();
    let empty = dir.path().join("empty.pem");
    std::fs::write(&empty, "").unwrap();
    let e = refused(&url.replace(&ca, empty.to_str().unwrap()), &[]);
    assert!(
        e.contains(&format!("ca={}: no certificate in it", empty.display())),
        "{e}"
    );
}

/// Each failure a user of api=native with Kerberos meets first, in one line that names it.
#[test]
fn the_native_path_names_each_kerberos_failure() {
    if !secure_hbase_there() {
        return;
    }
    let url = secure_hbase("TALLROW_HBASE_NATIVE_KRB").unwrap();
    // The cluster offers integrity and privacy (hbase.rpc.protection=integrity,privacy).
    let e = refused(&format!("{url}&qop=auth"), &[]);
    assert!(
        e.contains(
            "quality of protection mismatch: the server offers qop auth-int, auth-conf and the URL asks qop=auth"
        ),
        "{e}"
    );
    let e = refused(&url.replace("&sasl=gssapi", ""), &[]);
    assert!(
        e.contains("the server requires authentication (Kerberos) and this connection offered simple authentication"),
        "{e}"
    );
    let plain = real_hbase("TALLROW_HBASE_NATIVE").unwrap();
    let e = refused(&format!("{plain}&sasl=gssapi"), &[]);
    assert!(
        e.contains("the server runs simple authentication, not Kerberos: leave sasl= out"),
        "{e}"
    );
    let dir = tempfile::tempdir().unwrap();
    let cache = format!("FILE:{}", dir.path().join("empty.ccache").display());
    let e = refused(&url, &[("KRB5CCNAME", cache.as_str()), ("KRB5_CLIENT_KTNAME", "")]);
    assert!(e.contains(&format!("no Kerberos ticket in {cache}: run kinit")), "{e}");
    let e = refused(&format!("{url}&service=nosuch"), &[]);
    assert!(e.contains("the KDC knows no principal for nosuch/localhost"), "{e}");
}

/// A Kerberized cluster whose ZooKeeper refuses anonymous sessions
/// (`zookeeper.enforce.auth.enabled`): loaded and verified with `zk_sasl=gssapi`, and named
/// in one line without it.
#[test]
fn a_zookeeper_that_requires_sasl_is_reached_with_zk_sasl() {
    if !secure_hbase_there() {
        return;
    }
    let url = format!(
        "{}&qop=auth-conf",
        secure_hbase("TALLROW_HBASE_NATIVE_KRB_ZK_SASL").unwrap()
    );
    let fixture = small_fixture();
    let fixture = fixture.to_str().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let out = tallrow_with(
        dir.path(),
        &["load", fixture, "--backend", &url, "--set", FEWER_USERS],
        &[],
    );
    assert_eq!(out.code, 0, "{}\n{}", out.stdout, out.stderr);
    let verify = [
        "verify",
        fixture,
        "--backend",
        &url,
        "--set",
        FEWER_USERS,
        "--sample",
        SAMPLE,
    ];
    let out = tallrow_with(dir.path(), &verify, &[]);
    assert_eq!(out.code, 0, "{}\n{}", out.stdout, out.stderr);
    assert!(out.stdout.contains("OK: the store holds exactly"), "{}", out.stdout);
    let e = refused(&url.replace("&zk_sasl=gssapi", ""), &[]);
    assert!(
        e.contains("requires SASL authentication: add zk_sasl=gssapi to the URL"),
        "{e}"
    );
}

/// `host:port` of an `hbase://` URL.
fn authority(url: &str) -> &str {
    let rest = url.strip_prefix("hbase://").unwrap();
    rest.split('?').next().unwrap()
}

/// Opens `url` with `tallrow verify` (under `env`) and returns its error: the test fails
/// unless it exits non-zero with exactly one line on stderr and nothing half done.
fn refused(url: &str, env: &[(&str, &str)]) -> String {
    let dir = tempfile::tempdir().unwrap();
    let fixture = small_fixture();
    let started = Instant::now();
    let out = tallrow_with(
        dir.path(),
        &["verify", fixture.to_str().unwrap(), "--backend", url],
        env,
    );
    let took = started.elapsed();
    assert_ne!(out.code, 0, "{url} must be refused: {}", out.stdout);
    assert!(!out.stderr.contains("panicked"), "{}", out.stderr);
    let lines: Vec<&str> = out.stderr.lines().filter(|l| !l.trim().is_empty()).collect();
    assert_eq!(lines.len(), 1, "one line, not:\n{}", out.stderr);
    eprintln!("{url}: refused after {:.1} s: {}", took.as_secs_f64(), lines[0]);
    lines[0].to_string()
}

#[test]
fn an_empty_ticket_cache_is_named() {
    if !secure_hbase_there() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let cache = format!("FILE:{}", dir.path().join("empty.ccache").display());
    let env = [("KRB5CCNAME", cache.as_str()), ("KRB5_CLIENT_KTNAME", "")];
    for var in ["TALLROW_HBASE_SASL1_AUTH", "TALLROW_HBASE_HTTPS2"] {
        let e = refused(&secure_hbase(var).unwrap(), &env);
        assert!(e.contains(&format!("no Kerberos ticket in {cache}: run kinit")), "{e}");
    }
}

#[test]
fn a_certificate_from_another_ca_is_refused() {
    if !secure_hbase_there() {
        return;
    }
    let url = secure_hbase("TALLROW_HBASE_HTTPS2").unwrap();
    let ca = std::env::var("TALLROW_HBASE_CA").unwrap();
    let other = std::env::var("TALLROW_HBASE_OTHER_CA").unwrap();
    let wrong = url.replace(&ca, &other);
    assert_ne!(wrong, url);
    let e = refused(&wrong, &[]);
    assert!(
        e.contains(&format!("the server's certificate does not verify against ca={other}")),
        "{e}"
    );
    // Without tls=true the HTTPS port answers no HTTP.
    let plain = url.replace("&tls=true", "").replace(&format!("&ca={ca}"), "");
    let e = refused(&plain, &[]);
    assert!(e.contains("no HTTP") && e.contains("add tls=true"), "{e}");
}

#[test]
fn a_quality_of_protection_the_server_does_not_offer_is_named() {
    if !secure_hbase_there() {
        return;
    }
    let conf = secure_hbase("TALLROW_HBASE_SASL1_CONF").unwrap();
    let e = refused(&conf.replace("qop=auth-conf", "qop=auth"), &[]);
    assert!(
        e.contains("quality of protection mismatch: the server offers qop auth-conf and the URL asks qop=auth"),
        "{e}"
    );
    let int = secure_hbase("TALLROW_HBASE_SASL2_INT").unwrap();
    let e = refused(&int.replace("qop=auth-int", "qop=auth-conf"), &[]);
    assert!(
        e.contains("the server offers qop auth-int and the URL asks qop=auth-conf"),
        "{e}"
    );
}

#[test]
fn plain_against_sasl_and_sasl_against_plain_are_named() {
    if !secure_hbase_there() {
        return;
    }
    for (var, api) in [
        ("TALLROW_HBASE_SASL1_AUTH", ""),
        ("TALLROW_HBASE_SASL2_INT", "?api=thrift2"),
    ] {
        let url = secure_hbase(var).unwrap();
        let e = refused(&format!("hbase://{}{api}", authority(&url)), &[]);
        // HBase's SASL server neither answers nor (mostly) closes; when it does close, the
        // line says so.
        assert!(
            e.contains("a Kerberized gateway (SASL) ignores plain clients; add sasl=gssapi")
                || e.contains("closed the connection on a plain Thrift call")
                    && e.contains("a Kerberized gateway (SASL)? add sasl=gssapi"),
            "{e}"
        );
    }
    // As the KDC knows the servers' principals: hbase/localhost.
    let local = |var: &str| real_hbase(var).unwrap().replace("127.0.0.1:", "localhost:");
    let plain = local("TALLROW_HBASE_THRIFT1");
    let e = refused(&format!("hbase://{plain}?sasl=gssapi"), &[]);
    assert!(e.contains("no SASL answer within 5 s: a plain Thrift server?"), "{e}");
    // A framed server closes at once on what is no frame.
    let framed = local("TALLROW_HBASE_THRIFT1_FC");
    let e = refused(&format!("hbase://{framed}?sasl=gssapi&protocol=compact"), &[]);
    assert!(e.contains("closed the connection during SASL negotiation"), "{e}");
}

#[test]
fn a_server_principal_the_kdc_does_not_know_is_named() {
    if !secure_hbase_there() {
        return;
    }
    let url = secure_hbase("TALLROW_HBASE_SASL1_AUTH").unwrap();
    let e = refused(&format!("{url}&service=nosuch"), &[]);
    assert!(e.contains("the KDC knows no principal for nosuch/localhost"), "{e}");
    // The host part is the URL's: the KDC knows HTTP/localhost, not HTTP/127.0.0.1.
    let https = secure_hbase("TALLROW_HBASE_HTTPS2").unwrap();
    let e = refused(&https.replace("hbase://localhost:", "hbase://127.0.0.1:"), &[]);
    assert!(e.contains("the KDC knows no principal for HTTP/127.0.0.1"), "{e}");
    // A Kerberized HTTP gateway asked without Kerberos.
    let e = refused(&https.replace("&sasl=gssapi", ""), &[]);
    assert!(e.contains("the server asks for Kerberos (401"), "{e}");
}

/// Fills a fresh ticket cache from the client's keytab with `kinit ARGS`.
fn ticket(dir: &Path, args: &[&str]) -> String {
    let cache = format!("FILE:{}", dir.join("client.ccache").display());
    let keytab = std::env::var("TALLROW_KRB5_CLIENT_KEYTAB").unwrap();
    let status = std::process::Command::new("kinit")
        .env("KRB5CCNAME", &cache)
        .args(args)
        .args(["-k", "-t", &keytab, "client"])
        .status()
        .expect("kinit");
    assert!(status.success(), "kinit {args:?}");
    cache
}

/// `tallrow run` of the small fixture for 30 s through `url`, under `env`.
fn run_30s(dir: &Path, url: &str, env: &[(&str, &str)]) -> crate::common::Out {
    let fixture = small_fixture();
    let reports = dir.join("reports");
    let args = [
        "run",
        fixture.to_str().unwrap(),
        "--backend",
        url,
        "--duration",
        "30s",
        "--warmup",
        "0s",
        "--threads",
        "2",
        "--reports",
        reports.to_str().unwrap(),
        "--set",
        FEWER_USERS,
    ];
    tallrow_with(dir, &args, env)
}

/// A run through `url` with a ticket that lasts 15 s: kept alive when it is renewable or
/// a keytab is at hand, else the run stops at the expiry with one line.
fn a_ticket_expires_during_a_run(url: &str) {
    // The data first, with the suite's own ticket: the runs below only read and write.
    let fixture = small_fixture();
    let setup = tempfile::tempdir().unwrap();
    let out = tallrow_with(
        setup.path(),
        &[
            "load",
            fixture.to_str().unwrap(),
            "--backend",
            url,
            "--set",
            FEWER_USERS,
        ],
        &[],
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    // The three tickets below, each in a cache of its own, run side by side: each run
    // outlives its ticket's 15 s, and none depends on another.
    let keytab = std::env::var("TALLROW_KRB5_CLIENT_KEYTAB").unwrap();
    // Renewable for an hour: kept alive with kinit -R.
    let renewable = tempfile::tempdir().unwrap();
    let renewable_cache = ticket(renewable.path(), &["-l", "15s", "-r", "1h"]);
    // Renewable for no longer than it lasts, but a keytab: MIT's GSSAPI takes a new
    // ticket from it.
    let with_keytab = tempfile::tempdir().unwrap();
    let keytab_cache = ticket(with_keytab.path(), &["-l", "15s", "-r", "16s"]);
    // Neither: the run stops at the expiry with one line, and writes no report.
    let dir = tempfile::tempdir().unwrap();
    let cache = ticket(dir.path(), &["-l", "15s", "-r", "16s"]);
    let (renewed, from_keytab, out) = std::thread::scope(|s| {
        let renewed = s.spawn(|| {
            run_30s(
                renewable.path(),
                url,
                &[("KRB5CCNAME", &renewable_cache), ("KRB5_CLIENT_KTNAME", "")],
            )
        });
        let from_keytab = s.spawn(|| {
            run_30s(
                with_keytab.path(),
                url,
                &[("KRB5CCNAME", &keytab_cache), ("KRB5_CLIENT_KTNAME", &keytab)],
            )
        });
        let out = run_30s(dir.path(), url, &[("KRB5CCNAME", &cache), ("KRB5_CLIENT_KTNAME", "")]);
        (renewed.join().unwrap(), from_keytab.join().unwrap(), out)
    });
    for out in [renewed, from_keytab] {
        assert_eq!(out.code, 0, "{}\n{}", out.stdout, out.stderr);
        assert!(!out.stdout.contains("failed"), "{}", out.stdout);
    }
    assert_ne!(out.code, 0, "{}", out.stdout);
    let lines: Vec<&str> = out.stderr.lines().filter(|l| !l.trim().is_empty()).collect();
    assert_eq!(lines.len(), 1, "{}", out.stderr);
    assert!(lines[0].contains("the run stopped: "), "{}", lines[0]);
    assert!(
        lines[0].contains(&format!("the Kerberos ticket in {cache} expired")),
        "{}",
        lines[0]
    );
    assert!(!dir.path().join("reports").exists(), "no report of a run that stopped");
}

/// Through HTTP + SPNEGO, where every request authenticates anew.
#[test]
fn a_ticket_that_expires_during_a_run_is_renewed_or_stops_it() {
    if !secure_hbase_there() {
        return;
    }
    let _turn = SchemaTables::thrift2();
    a_ticket_expires_during_a_run(&secure_hbase("TALLROW_HBASE_HTTPS2").unwrap());
}

/// Through HBase's own RPC, whose connections stay authenticated once open: the run still
/// stops when the ticket they stand for is gone.
#[test]
fn a_ticket_that_expires_during_a_native_run_is_renewed_or_stops_it() {
    if !secure_hbase_there() {
        return;
    }
    let _turn = SchemaTables::native_kerberos_privacy();
    a_ticket_expires_during_a_run(&secure_hbase("TALLROW_HBASE_NATIVE_KRB").unwrap());
}

/// The data-transfer handshakes a DataNode logged after byte `from` of its log: for each,
/// the client it then served (its name, as the client gave it) and the protection
/// negotiated. The handshake's line and the one naming the client are the same thread's
/// (scripts/hdfs.sh logs each line's thread id), whatever other connections log between.
fn handshakes_since(log: &Path, from: u64) -> Vec<(String, String)> {
    use std::io::{Read, Seek, SeekFrom};
    let mut text = String::new();
    let mut f = std::fs::File::open(log).unwrap_or_else(|e| panic!("{}: {e}", log.display()));
    f.seek(SeekFrom::Start(from)).unwrap();
    f.read_to_string(&mut text).unwrap();
    let tid = |line: &str| line.split(" tid=").nth(1)?.split(' ').next().map(str::to_string);
    let mut pending: std::collections::HashMap<String, String> = Default::default();
    let mut out = Vec::new();
    for line in text.lines() {
        let Some(t) = tid(line) else { continue };
        if let Some(q) = line.split("negotiated QOP = ").nth(1) {
            pending.insert(t, q.trim().to_string());
        } else if let Some(rest) = line.split("DataXceiver for client ").nth(1)
            && let Some(q) = pending.remove(&t)
        {
            out.push((rest.split(' ').next().unwrap_or("").to_string(), q));
        }
    }
    out
}

/// HFiles written into the Kerberized HDFS (`scripts/hbase.sh start --secure --hdfs`) by a
/// client at each data-transfer protection HDFS offers, then handed to the Kerberized HBase
/// (whose root is on that HDFS) by HBase's own bulk-load tool run with the same ticket (at
/// privacy), or by tallrow through HBase's RPC with a delegation token (the others), and
/// verified through HBase's RPC with Kerberos.
#[test]
fn hfiles_written_into_kerberized_hdfs_at_each_protection_bulk_load_and_verify() {
    if !secure_hbase_there() {
        return;
    }
    let (Some(hdfs), Some(conf)) = (
        std::env::var("TALLROW_HDFS_KRB").ok().filter(|v| !v.is_empty()),
        std::env::var("TALLROW_HDFS_KRB_CONF").ok().filter(|v| !v.is_empty()),
    ) else {
        tallrow::testkit::absent(
            "the Kerberized HDFS",
            "TALLROW_HDFS_KRB is not set (scripts/hbase.sh start --secure --hdfs, or scripts/test.sh)",
        );
        return;
    };
    let hbase_conf = std::env::var("TALLROW_HBASE_KRB_CONF").unwrap();
    let native = format!("{}&qop=auth-conf", secure_hbase("TALLROW_HBASE_NATIVE_KRB").unwrap());
    let tool = format!(
        "{} completebulkload",
        Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/hbase.sh").display()
    );
    let fixture = small_fixture();
    let fixture = fixture.to_str().unwrap();
    // The DataNode logs each handshake's protection (scripts/hdfs.sh turns that on), and
    // then, on the same thread, the client it serves.
    let datanode_log = Path::new(&conf).join("../logs/datanode.log");
    let log_length = || std::fs::metadata(&datanode_log).map_or(0, |m| m.len());
    for (level, qop) in [
        ("authentication", "auth"),
        ("integrity", "auth-int"),
        ("privacy", "auth-conf"),
    ] {
        // Each level into tables of its own making: the turn drops them before and after.
        let _turn = SchemaTables::native_kerberos_privacy();
        let tmp = tempfile::tempdir().unwrap();
        let client = format!("{conf}/client-{level}");
        let env = [
            ("HADOOP_CONF_DIR", client.as_str()),
            ("TALLROW_HBASE_TOOL_CONF", hbase_conf.as_str()),
        ];
        let url = format!("{hdfs}/tmp/tallrow-it-{}-{level}", std::process::id());
        let mark = log_length();
        let out = tallrow_with(
            tmp.path(),
            &[
                "load",
                fixture,
                "--backend",
                &format!("hfile:{url}"),
                "--set",
                FEWER_USERS,
            ],
            &env,
        );
        assert_eq!(out.code, 0, "{level}: {}\n{}", out.stdout, out.stderr);
        // The writer's blocks went at the protection its configuration asks, though the
        // DataNode offers all three: every handshake of tallrow's HDFS client since the mark.
        // HBase's own, at privacy, are told apart by their client's name: Hadoop's client
        // names itself `DFSClient_...`, tallrow's (hdfs-native) a bare UUID.
        let uuid = |name: &str| {
            name.len() == 36
                && name.char_indices().all(|(i, c)| {
                    if [8, 13, 18, 23].contains(&i) {
                        c == '-'
                    } else {
                        c.is_ascii_hexdigit()
                    }
                })
        };
        let ours: Vec<String> = handshakes_since(&datanode_log, mark)
            .into_iter()
            .filter(|(client, _)| uuid(client))
            .map(|(_, negotiated)| negotiated)
            .collect();
        assert!(
            !ours.is_empty() && ours.iter().all(|q| q == qop),
            "{level}: the writer's handshakes in {} negotiated {ours:?}, not {qop} alone",
            datanode_log.display()
        );
        // HBase's own tool (a JVM per table) at privacy; at the other two, tallrow hands the
        // files over through HBase's RPC itself, with the HDFS delegation token the region
        // server moves them with.
        let mut args = vec!["bulkload", &url, "--backend", &native];
        if level == "privacy" {
            args.extend(["--hbase-cmd", &tool]);
        }
        let out = tallrow_with(tmp.path(), &args, &env);
        assert_eq!(out.code, 0, "{level}: {}\n{}", out.stdout, out.stderr);
        let out = tallrow_with(
            tmp.path(),
            &[
                "verify",
                fixture,
                "--backend",
                &native,
                "--set",
                FEWER_USERS,
                "--sample",
                SAMPLE,
            ],
            &[],
        );
        assert_eq!(out.code, 0, "{level}: {}\n{}", out.stdout, out.stderr);
        assert!(
            out.stdout.contains("OK: the store holds exactly"),
            "{level}: {}",
            out.stdout
        );
    }
    // A protection HDFS does not know is named in the load's error.
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy(
        format!("{conf}/client-privacy/core-site.xml"),
        dir.path().join("core-site.xml"),
    )
    .unwrap();
    let site = std::fs::read_to_string(format!("{conf}/client-privacy/hdfs-site.xml"))
        .unwrap()
        .replace(">privacy<", ">secrecy<");
    std::fs::write(dir.path().join("hdfs-site.xml"), site).unwrap();
    let out = tallrow_with(
        dir.path(),
        &[
            "load",
            fixture,
            "--backend",
            &format!("hfile:{hdfs}/tmp/tallrow-it-{}-bad", std::process::id()),
        ],
        &[("HADOOP_CONF_DIR", dir.path().to_str().unwrap())],
    );
    assert_ne!(out.code, 0, "{}", out.stdout);
    assert!(
        out.stderr
            .contains("\"secrecy\" is not authentication, integrity or privacy"),
        "{}",
        out.stderr
    );
}
