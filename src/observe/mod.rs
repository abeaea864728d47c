//! The cluster's side of a run: what HBase did while tallrow measured, read from its master
//! as HBase's own tools read it (its status and its procedures), as events on the run's time
//! line. [`events`] turns the master's successive answers into events; [`jmx`] reads what
//! only a region server has from its web UI; [`watch`] reads them on a thread of its own
//! while a run goes on. None knows how a report is written.

pub mod events;
pub mod jmx;
pub mod watch;

use crate::store::backend::Backend;

/// Which cluster to observe: `--observe` as given (`off`, or a URL of HBase's own RPC), else
/// the backend itself when it is reached through HBase's own RPC; none otherwise.
pub fn choose(flag: Option<&str>, backend: &str) -> Result<Option<String>, String> {
    let native = |url: &str| {
        let mut b = Backend::parse(url, std::path::Path::new(""));
        // A delay wraps the cluster it delays.
        while let Ok(Backend::Delay(_, inner)) = b {
            b = Ok(*inner);
        }
        matches!(b, Ok(Backend::Native(_)))
    };
    match flag.map(str::trim) {
        Some("off") => Ok(None),
        Some(url) if native(url) => Ok(Some(url.to_string())),
        Some(url) => Err(format!(
            "--observe {url:?}: expected off or a URL of HBase's own RPC, hbase://QUORUM[/ZNODE_PARENT]?api=native"
        )),
        None if native(backend) => Ok(Some(backend.to_string())),
        None => Ok(None),
    }
}

/// The observer's own connection to the cluster `url` names (one that [`choose`] took).
pub fn open(url: &str) -> Result<Box<dyn watch::Source>, String> {
    let mut b = Backend::parse(url, std::path::Path::new("")).map_err(|e| e.to_string())?;
    while let Backend::Delay(_, inner) = b {
        b = *inner;
    }
    match b {
        Backend::Native(spec) => {
            let native = crate::store::hbase::native::Native::open(&spec).map_err(|e| e.to_string())?;
            Ok(Box::new(native))
        }
        _ => Err(format!("{url}: not a URL of HBase's own RPC")),
    }
}

impl watch::Source for crate::store::hbase::native::Native {
    fn status(&self) -> Result<hbase_client::status::Status, String> {
        self.client().cluster_status().map_err(|e| e.to_string())
    }

    fn procedures(&self) -> Result<Vec<hbase_client::status::Procedure>, String> {
        self.client().procedures().map_err(|e| e.to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::choose;

    #[test]
    fn the_backend_is_observed_when_it_speaks_hbases_own_rpc() {
        let native = "hbase://zk1:2181/hbase?api=native";
        assert_eq!(choose(None, native), Ok(Some(native.to_string())));
        let delayed = format!("delay:2ms:{native}");
        assert_eq!(choose(None, &delayed), Ok(Some(delayed.clone())));
        assert_eq!(choose(None, "hbase://127.0.0.1:9090?api=thrift2"), Ok(None));
        assert_eq!(choose(None, "embedded:data/x"), Ok(None));
        assert_eq!(choose(Some("off"), native), Ok(None));
        assert_eq!(
            choose(Some(native), "hbase://127.0.0.1:9090?api=thrift2"),
            Ok(Some(native.to_string()))
        );
        let bad = choose(Some("hbase://127.0.0.1:9090"), "memory:").unwrap_err();
        assert!(
            bad.starts_with("--observe \"hbase://127.0.0.1:9090\": expected off or"),
            "{bad}"
        );
    }
}
