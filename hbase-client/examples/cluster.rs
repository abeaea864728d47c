//! Prints what a client finds at a ZooKeeper quorum: `cargo run -p hbase-client --example
//! cluster -- QUORUM [ZNODE_PARENT]`.

fn main() {
    let mut args = std::env::args().skip(1);
    let quorum = args.next().unwrap_or_else(|| "127.0.0.1:2181".into());
    let parent = args.next().unwrap_or_else(|| "/hbase".into());
    let read = hbase_client::zk::Quorum::open(
        &quorum,
        &parent,
        hbase_client::zk::ZkSettings::default(),
        std::time::Duration::from_secs(10),
        None,
    )
    .and_then(|q| q.cluster());
    match read {
        Ok(c) => println!("cluster {}: master {}, hbase:meta on {}", c.id, c.master, c.meta),
        Err(e) => {
            eprintln!("error: {e}");
            std::process::exit(1);
        }
    }
}
