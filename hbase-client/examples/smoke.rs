//! Creates a table, writes, reads and scans it, and drops it: `cargo run -p hbase-client
//! --example smoke -- QUORUM`. A quick check of a client against a cluster.

use bytes::Bytes;
use hbase_client::admin::Family;
use hbase_client::cells::{CellType, LATEST_TIMESTAMP};
use hbase_client::{Client, Mutation, MutationCell, MutationKind, Options, Registry, ScanSpec, pb};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let quorum = std::env::args().nth(1).unwrap_or_else(|| "127.0.0.1:2181".into());
    let client = Client::connect(
        Registry::ZooKeeper {
            quorum,
            parent: "/hbase".into(),
        },
        Options::default(),
    )?;
    let c = client.cluster();
    println!("cluster {} master {} meta {}", c.id, c.master, c.meta);
    let t = format!("smoke_{}", std::process::id());
    let splits: Vec<Vec<u8>> = vec![b"r250".to_vec(), b"r500".to_vec(), b"r750".to_vec()];
    client.create_table(&t, &[Family::new("f", 3)], &splits)?;
    println!(
        "regions: {:?}",
        client
            .regions(&t)?
            .iter()
            .map(|r| String::from_utf8_lossy(&r.start).into_owned())
            .collect::<Vec<_>>()
    );
    let rows: Vec<Mutation> = (0..1000)
        .map(|i| Mutation {
            row: Bytes::from(format!("r{i:03}")),
            kind: MutationKind::Put,
            cells: vec![MutationCell {
                family: Bytes::from_static(b"f"),
                qualifier: Bytes::from_static(b"q"),
                timestamp: 5,
                kind: CellType::Put,
                value: Bytes::from(format!("v{i}")),
            }],
            timestamp: LATEST_TIMESTAMP,
        })
        .collect();
    let t0 = std::time::Instant::now();
    client.mutate(&t, rows)?;
    println!("1000 puts in {:?}", t0.elapsed());
    let got = client.get(
        &t,
        vec![
            pb::Get {
                row: Bytes::from_static(b"r042"),
                ..Default::default()
            },
            pb::Get {
                row: Bytes::from_static(b"nope"),
                ..Default::default()
            },
        ],
    )?;
    println!(
        "get: {:?} / {:?}",
        got[0].first().map(|c| c.value.clone()),
        got[1].len()
    );
    let all = client
        .scan(
            &t,
            ScanSpec {
                caching: 100,
                ..Default::default()
            },
        )
        .collect_rows()?;
    println!(
        "scan: {} rows, first {:?} last {:?}",
        all.len(),
        all.first().map(|r| r.key.clone()),
        all.last().map(|r| r.key.clone())
    );
    let rev = client
        .scan(
            &t,
            ScanSpec {
                start: Bytes::from_static(b"r600"),
                stop: Bytes::from_static(b"r200"),
                reversed: true,
                limit: Some(1000),
                caching: 37,
                ..Default::default()
            },
        )
        .collect_rows()?;
    println!(
        "reversed r600..r200: {} rows, first {:?} last {:?}",
        rev.len(),
        rev.first().map(|r| r.key.clone()),
        rev.last().map(|r| r.key.clone())
    );
    let limited = client
        .scan(
            &t,
            ScanSpec {
                start: Bytes::from_static(b"r240"),
                exclude_start: true,
                limit: Some(20),
                caching: 7,
                ..Default::default()
            },
        )
        .collect_rows()?;
    println!(
        "limited: {} rows {:?}..{:?}",
        limited.len(),
        limited.first().map(|r| r.key.clone()),
        limited.last().map(|r| r.key.clone())
    );
    client.mutate(
        &t,
        vec![Mutation {
            row: Bytes::from_static(b"r042"),
            kind: MutationKind::Delete,
            cells: vec![],
            timestamp: LATEST_TIMESTAMP,
        }],
    )?;
    let got = client.get(
        &t,
        vec![pb::Get {
            row: Bytes::from_static(b"r042"),
            ..Default::default()
        }],
    )?;
    println!("after delete: {} cells", got[0].len());
    println!("describe: {:?}", client.describe(&t)?.families[0].attribute("VERSIONS"));
    client.delete_table(&t)?;
    println!("dropped; describe now: {}", client.describe(&t).unwrap_err());
    println!("retries: {}", client.retries().total());
    Ok(())
}
