//! Loads through secured HBase against plain, the same rows into the same HBase each time,
//! as `tallrow load` of each URL:
//! - through `scripts/hbase.sh start --secure`'s Thrift1 gateways: plain, `sasl=gssapi&qop=auth`
//!   and `qop=auth-conf` (the same HBase behind them);
//! - through HBase's own RPC (`api=native`) into one Kerberized standalone HBase that offers
//!   `authentication` and `privacy` and also takes simple authentication
//!   (`hbase.ipc.server.fallback-to-simple-auth-allowed`): plain, `qop=auth`, `qop=auth-conf`,
//!   and `qop=auth-conf&crypto=aes` (HBase's AES in place of GSSAPI's wrap, which that
//!   HBase runs: `hbase.rpc.crypto.encryption.aes.enabled`). Its URL comes in
//!   `TALLROW_BENCH_NATIVE_KRB` (`scripts/bench.sh secure` starts it).
//!
//! A first, untimed load through each warms the servers' JVMs (a freshly started one loads
//! up to a third slower until its JIT has compiled the SASL path) and is checked with
//! `tallrow verify`. Timed rounds then alternate them (each round in another order),
//! every load into empty tables; the figures are the median and range of the rounds, and
//! the ratio is each round's own against that round's plain load.
//!
//! `cargo bench --features kerberos --bench secure -- [WORKLOAD] [--rounds N] [--native-only]
//! [--native-workload PATH]` (the native loads' own workload, by default WORKLOAD: HBase's RPC
//! loads the small fixture in about a second, where a connection's setup and the server's
//! pauses weigh as much as the steady rate the comparison is about).

mod shared;

use shared::BIN;
use std::path::{Path, PathBuf};
use std::process::Command;
use tallrow::generate::Generator;
use tallrow::report::thousands;
use tallrow::store::backend::Backend;
use tallrow::workload::Workload;

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    v[v.len() / 2]
}

fn main() {
    if !std::env::args().any(|a| a == "--bench") {
        return;
    }
    let mut args = std::env::args().skip(1).filter(|a| a != "--bench");
    let (mut workload, mut rounds) = (PathBuf::from("tests/fixtures/hbase.toml"), 3usize);
    let mut gateways = true;
    let mut native_workload = None;
    while let Some(a) = args.next() {
        match a.as_str() {
            "--rounds" => rounds = args.next().and_then(|v| v.parse().ok()).expect("--rounds N"),
            "--native-only" => gateways = false,
            "--native-workload" => native_workload = Some(PathBuf::from(args.next().expect("--native-workload PATH"))),
            other => workload = PathBuf::from(other),
        }
    }
    let env = |v: &str| std::env::var(v).ok().filter(|s| !s.is_empty());
    let (Some(plain), Some(auth), Some(conf)) = (
        env("TALLROW_HBASE_THRIFT1"),
        env("TALLROW_HBASE_SASL1_AUTH"),
        env("TALLROW_HBASE_SASL1_CONF"),
    ) else {
        println!("no Kerberized HBase (scripts/hbase.sh start --secure): the secured loads are not measured");
        return;
    };
    if !tallrow::secure::KERBEROS {
        println!("this build has no Kerberos (--features kerberos): the secured loads are not measured");
        return;
    }
    let plain = format!("hbase://{}", plain.replace("127.0.0.1:", "localhost:"));
    let urls = [
        ("Thrift1 buffered/binary, plain".to_string(), plain.clone()),
        ("the same, sasl=gssapi qop=auth".to_string(), auth),
        ("the same, sasl=gssapi qop=auth-conf".to_string(), conf),
    ];
    let version = env("TALLROW_HBASE_VERSION").unwrap_or_default();
    if gateways {
        compare(&format!("HBase {version}'s Thrift1 gateways"), &urls, &workload, rounds);
    }
    match env("TALLROW_BENCH_NATIVE_KRB") {
        None => println!("no TALLROW_BENCH_NATIVE_KRB (scripts/bench.sh secure starts it): api=native is not measured"),
        Some(native) => {
            let urls = [
                ("api=native, plain (simple auth)".to_string(), native.clone()),
                (
                    "the same, sasl=gssapi qop=auth".to_string(),
                    format!("{native}&sasl=gssapi&qop=auth"),
                ),
                (
                    "the same, sasl=gssapi qop=auth-conf".to_string(),
                    format!("{native}&sasl=gssapi&qop=auth-conf"),
                ),
                (
                    "the same, qop=auth-conf crypto=aes".to_string(),
                    format!("{native}&sasl=gssapi&qop=auth-conf&crypto=aes"),
                ),
            ];
            compare(
                &format!("HBase {version}'s own RPC (one Kerberized standalone HBase)"),
                &urls,
                native_workload.as_deref().unwrap_or(&workload),
                rounds,
            );
        }
    }
}

/// Loads `workload` through each of `urls` (the first the plain one, which also drops the
/// tables and verifies), `rounds` timed rounds, and prints the table.
fn compare(title: &str, urls: &[(String, String)], workload: &Path, rounds: usize) {
    let plain = urls[0].1.clone();
    let w = Workload::from_file(workload).unwrap_or_else(|e| panic!("{e}"));
    let g = Generator::new(&w);
    let tables: Vec<String> = g.tables().into_iter().map(|t| t.name).collect();
    let store = Backend::parse(&plain, Path::new(".")).unwrap().open().unwrap();
    let drop_tables = || {
        for t in &tables {
            let _ = store.delete_table(t);
        }
    };
    let tmp = tempfile::tempdir().unwrap();
    let reports = tmp.path().join("reports");
    let mut rates = vec![Vec::new(); urls.len()];
    let mut ratios = vec![Vec::new(); urls.len()];
    let mut rows = 0;
    println!("== loads of {} through {title}, {rounds} rounds", workload.display());
    for (name, url) in urls {
        drop_tables();
        let (_, rate) = shared::load(workload, url, &reports);
        println!("warm-up: {name:<40} {:>8} rows/s", thousands(rate as u64));
        let out = Command::new(BIN)
            .arg("verify")
            .arg(workload)
            .args(["--backend", &plain])
            .output()
            .expect("run tallrow verify");
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success() && text.contains("OK: the store holds exactly"),
            "after loading through {url}: {text}"
        );
    }
    for round in 0..rounds {
        let mut round_rates = vec![0.0; urls.len()];
        for k in 0..urls.len() {
            let i = (k + round) % urls.len();
            drop_tables();
            let (n, rate) = shared::load(workload, &urls[i].1, &reports);
            rows = n;
            round_rates[i] = rate;
            println!(
                "round {}: {:<40} {:>8} rows/s",
                round + 1,
                urls[i].0,
                thousands(rate as u64)
            );
        }
        for i in 0..urls.len() {
            rates[i].push(round_rates[i]);
            ratios[i].push(round_rates[i] / round_rates[0]);
        }
    }
    drop_tables();
    println!("{} rows per load; median [range] of {rounds} rounds", thousands(rows));
    println!("{:<40} {:>10} {:>22} {:>6}", "", "rows/s", "range", "/ plain");
    for (i, (name, _)) in urls.iter().enumerate() {
        let lo = rates[i].iter().copied().fold(f64::INFINITY, f64::min);
        let hi = rates[i].iter().copied().fold(0.0, f64::max);
        let (lo_r, hi_r) = (
            ratios[i].iter().copied().fold(f64::INFINITY, f64::min),
            ratios[i].iter().copied().fold(0.0, f64::max),
        );
        println!(
            "{name:<40} {:>10} {:>22} {:>6.2} [{lo_r:.2}..{hi_r:.2}]",
            thousands(median(&mut rates[i].clone()) as u64),
            format!("[{}..{}]", thousands(lo as u64), thousands(hi as u64)),
            median(&mut ratios[i].clone())
        );
    }
}
