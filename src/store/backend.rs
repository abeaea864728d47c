//! `--backend URL`: which store a command works on, parsed and opened. It names every
//! backend, so it sits beside them rather than in `store`'s root, which they all use.

use super::{Error, Result, Store, bigtable, delay, embedded, hbase, memory, null};
use std::path::PathBuf;
use std::sync::Arc;

/// Where a command's data lives: parsed from `--backend`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Backend {
    /// `embedded:PATH`: the in-process persistent store.
    Embedded(PathBuf),
    /// `memory:`: in-process, gone when the process ends (tests, dry runs).
    Memory,
    /// `null:`: validates and discards writes, reads nothing (benchmarks).
    Null,
    /// `delay:DELAY[,stall=LENGTH@AT]:INNER`: another backend with added latency.
    Delay(delay::Spec, Box<Backend>),
    /// `hbase://HOST:PORT[?transport=..&protocol=..&api=..&sasl=..&tls=..]`: an HBase
    /// Thrift server, plain or secured.
    Hbase(hbase::Spec),
    /// `hbase://QUORUM[/ZNODE_PARENT]?api=native[&registry=rpc]`: HBase through its own
    /// RPC, with no gateway.
    Native(hbase::native::Spec),
    /// `bigtable://PROJECT/INSTANCE`: Cloud Bigtable, or its emulator when
    /// `BIGTABLE_EMULATOR_HOST` is set.
    Bigtable(bigtable::Spec),
    /// `hfile:DIR` or `hfile:hdfs://NAMENODE:PORT/PATH`: HFiles for HBase's bulk load,
    /// written by `load` only.
    Hfile(crate::bulkload::fs::Location),
}

impl Backend {
    /// Parses a backend URL; `embedded:` without a path uses `default_path`.
    pub fn parse(url: &str, default_path: &std::path::Path) -> Result<Backend> {
        if let Some(path) = url.strip_prefix("embedded:") {
            let path = path.strip_prefix("//").unwrap_or(path);
            return Ok(Backend::Embedded(if path.is_empty() {
                default_path.to_path_buf()
            } else {
                PathBuf::from(path)
            }));
        }
        if url == "embedded" {
            return Ok(Backend::Embedded(default_path.to_path_buf()));
        }
        if url == "memory" || url == "memory:" {
            return Ok(Backend::Memory);
        }
        if url == "null" || url == "null:" {
            return Ok(Backend::Null);
        }
        if let Some(rest) = url.strip_prefix("hbase://") {
            if hbase::native::Spec::wanted(rest) {
                return hbase::native::Spec::parse(rest)
                    .map(Backend::Native)
                    .map_err(Error::BadArgument);
            }
            return hbase::Spec::parse(rest).map(Backend::Hbase).map_err(Error::BadArgument);
        }
        if let Some(rest) = url.strip_prefix("bigtable://") {
            return bigtable::Spec::parse(rest)
                .map(Backend::Bigtable)
                .map_err(Error::BadArgument);
        }
        if let Some(dir) = url.strip_prefix("hfile:") {
            let dir = if dir.starts_with("hdfs://") {
                dir
            } else {
                dir.strip_prefix("//").unwrap_or(dir)
            };
            if dir.is_empty() {
                return Err(Error::BadArgument(
                    "hfile: needs a directory, e.g. hfile:data/hfiles".into(),
                ));
            }
            return crate::bulkload::fs::Location::parse(dir)
                .map(Backend::Hfile)
                .map_err(Error::BadArgument);
        }
        if let Some(rest) = url.strip_prefix("delay:") {
            let spec = delay::Spec::parse(rest).map_err(Error::BadArgument)?;
            let inner = Backend::parse(&spec.inner, default_path)?;
            return Ok(Backend::Delay(spec, Box::new(inner)));
        }
        Err(Error::BadArgument(format!(
            "unknown backend {url:?}: expected embedded:PATH, memory:, null:, hbase://HOST:PORT, hbase://QUORUM?api=native, bigtable://PROJECT/INSTANCE, hfile:DIR or delay:DELAY:INNER"
        )))
    }

    /// Opens the backend.
    pub fn open(&self) -> Result<Arc<dyn Store>> {
        Ok(match self {
            Backend::Embedded(path) => Arc::new(embedded::Embedded::open(path)?),
            Backend::Memory => Arc::new(memory::Memory::new()),
            Backend::Null => Arc::new(null::Null::new()),
            Backend::Delay(spec, inner) => Arc::new(delay::Delay::over(inner.open()?, spec)),
            Backend::Hbase(spec) => match spec.api {
                hbase::Api::Thrift1 => Arc::new(hbase::Hbase::open(spec)?),
                hbase::Api::Thrift2 => Arc::new(hbase::Hbase2::open(spec)?),
            },
            Backend::Native(spec) => Arc::new(hbase::native::Native::open(spec)?),
            Backend::Bigtable(spec) => Arc::new(bigtable::Bigtable::open(spec)?),
            Backend::Hfile(dir) => {
                return Err(Error::BadArgument(format!(
                    "hfile:{} takes `tallrow load` only: hand its files to HBase with `tallrow bulkload {}`",
                    dir.display(),
                    dir.display()
                )));
            }
        })
    }
}
