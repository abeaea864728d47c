//! The master's table calls (`MasterService`), as `RawAsyncHBaseAdmin` makes them: create,
//! disable, delete and truncate tables, create namespaces, list and describe tables. The
//! calls that start a procedure return once it has finished (`getProcedureResult` polled
//! with HBase's backoff); a table created is then enabled with every region assigned.

use crate::client::Client;
use crate::conn::Service;
use crate::error::{Error, Result, Retry};
use crate::locate::{table_name, table_string};
use crate::pb;
use bytes::Bytes;
use prost::Message;
use std::time::{Duration, Instant};

/// A column family as created.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Family {
    /// Name.
    pub name: String,
    /// Its attributes, by HBase's names (`VERSIONS`, `TTL`, `COMPRESSION`, ...), as text.
    pub attributes: Vec<(String, String)>,
}

impl Family {
    /// A family keeping `versions` versions, HBase's defaults otherwise.
    pub fn new(name: &str, versions: u32) -> Family {
        Family {
            name: name.to_string(),
            attributes: vec![("VERSIONS".into(), versions.to_string())],
        }
    }

    /// The value of attribute `key`.
    pub fn attribute(&self, key: &str) -> Option<&str> {
        self.attributes.iter().find(|(k, _)| k == key).map(|(_, v)| v.as_str())
    }
}

/// A table as described by the master.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Table {
    /// `ns:name`, or `name` in the default namespace.
    pub name: String,
    /// Its families.
    pub families: Vec<Family>,
    /// The table's own attributes (its `METADATA`), as text.
    pub attributes: Vec<(String, String)>,
}

/// How long a procedure may take before the client stops waiting
/// (`hbase.client.sync.wait.timeout.msec`).
pub const PROCEDURE_TIMEOUT: Duration = Duration::from_secs(600);

/// How long a procedure is polled at a short fixed step before the backoff takes over.
const FAST_POLLS: Duration = Duration::from_secs(5);

impl Client {
    /// A call to the active master, retried as HBase's admin retries (a master that moved or
    /// is starting is found again).
    pub(crate) fn master_call<Req: Message, Resp: Message + Default>(
        &self,
        method: &'static str,
        req: &Req,
    ) -> Result<Resp> {
        let started = Instant::now();
        let mut tries = 0;
        loop {
            tries += 1;
            let master = self.cluster().master.addr();
            let timeout = self.options().rpc_timeout;
            let r = self
                .conn(&master, Service::Master)
                .and_then(|c| c.call(method, req, b"", timeout)?.decode::<Resp>(&master));
            match r {
                Ok(resp) => return Ok(resp),
                Err(e) => {
                    // Whatever the failure, the master held may no longer be the active one,
                    // and is found again before the next try. HBase's client asks its kept
                    // master `IsMasterRunning` before each use, which a standby refuses
                    // (`checkServiceStarted`); without that, a master restarted as a standby
                    // on the same address kept this client's calls: 2.6.1's standby answers
                    // `GetProcedures` with a NullPointerException, not with
                    // ServerNotRunningYetException, and in a suite run's fault step some
                    // client of the test retried it there for three minutes (master.log, one
                    // call every 20 s).
                    if e.retry() != Retry::Never {
                        let _ = self.refind();
                    }
                    self.backoff(e, tries, started, 1)?;
                }
            }
        }
    }

    /// Waits for procedure `id` to finish; its failure is the call's error.
    fn wait_procedure(&self, id: u64) -> Result<()> {
        let started = Instant::now();
        let mut tries = 0u32;
        loop {
            let resp: pb::GetProcedureResultResponse =
                self.master_call("getProcedureResult", &pb::GetProcedureResultRequest { proc_id: id })?;
            if let Some(ex) = &resp.exception {
                let g = ex.generic_exception.clone().unwrap_or_default();
                let class = g.class_name.unwrap_or_else(|| "ProcedureException".into());
                let short = class.rsplit('.').next().unwrap_or(&class).to_string();
                return Err(Error::Remote {
                    do_not_retry: crate::error::classify(&short, false) == Retry::Never,
                    class,
                    message: g.message.unwrap_or_default(),
                });
            }
            if resp.state != pb::get_procedure_result_response::State::Running as i32 {
                return Ok(());
            }
            if started.elapsed() > PROCEDURE_TIMEOUT {
                return Err(Error::Bootstrap(format!(
                    "procedure {id} still running after {PROCEDURE_TIMEOUT:?}"
                )));
            }
            // HBase's admin polls on its retry backoff (100, 200, 300, 500 ms, 1 s...), so
            // a table that is ready in 0.7 s is seen at 1.1 s. Setup is not what a run
            // measures, and a poll costs the master little: a short fixed step while a
            // procedure is young, the backoff once it runs long.
            let step = if started.elapsed() < FAST_POLLS {
                self.options().pause / 4
            } else {
                crate::error::pause(self.options().pause, tries.min(6))
            };
            std::thread::sleep(step);
            tries += 1;
        }
    }

    fn nonce(&self) -> u64 {
        use std::sync::atomic::{AtomicU64, Ordering};
        static NEXT: AtomicU64 = AtomicU64::new(1);
        NEXT.fetch_add(1, Ordering::Relaxed) ^ (self.nonce_group() << 16)
    }

    /// Creates namespace `name`; one that exists is an error (`NamespaceExistException`).
    pub fn create_namespace(&self, name: &str) -> Result<()> {
        let req = pb::CreateNamespaceRequest {
            namespace_descriptor: pb::NamespaceDescriptor {
                name: Bytes::copy_from_slice(name.as_bytes()),
                configuration: Vec::new(),
            },
            nonce_group: None,
            nonce: None,
        };
        let resp: pb::CreateNamespaceResponse = self.master_call("CreateNamespace", &req)?;
        self.wait_opt(resp.proc_id)
    }

    fn wait_opt(&self, id: Option<u64>) -> Result<()> {
        match id {
            Some(id) => self.wait_procedure(id),
            None => Ok(()),
        }
    }

    /// Creates `table` with `families`, pre-split at `splits` (sorted, distinct, none
    /// empty), and waits until it is enabled with every region open.
    pub fn create_table(&self, table: &str, families: &[Family], splits: &[Vec<u8>]) -> Result<()> {
        self.create_table_with(table, &[], families, splits)
    }

    /// [`Client::create_table`] with the table's own attributes (its `METADATA`).
    pub fn create_table_with(
        &self,
        table: &str,
        attributes: &[(String, String)],
        families: &[Family],
        splits: &[Vec<u8>],
    ) -> Result<()> {
        if splits.iter().any(|s| s.is_empty()) || splits.windows(2).any(|w| w[0] >= w[1]) {
            return Err(Error::BadRequest(format!(
                "{table}: split keys must be sorted, distinct and not empty"
            )));
        }
        let pair = |(k, v): &(String, String)| pb::BytesBytesPair {
            first: Bytes::copy_from_slice(k.as_bytes()),
            second: Bytes::copy_from_slice(v.as_bytes()),
        };
        let schema = pb::TableSchema {
            table_name: Some(table_name(table)),
            attributes: attributes.iter().map(pair).collect(),
            column_families: families
                .iter()
                .map(|f| pb::ColumnFamilySchema {
                    name: Bytes::copy_from_slice(f.name.as_bytes()),
                    attributes: f.attributes.iter().map(pair).collect(),
                    configuration: Vec::new(),
                })
                .collect(),
            configuration: Vec::new(),
        };
        let req = pb::CreateTableRequest {
            table_schema: schema,
            split_keys: splits.iter().map(|s| Bytes::copy_from_slice(s)).collect(),
            nonce_group: Some(self.nonce_group()),
            nonce: Some(self.nonce()),
        };
        let resp: pb::CreateTableResponse = self.master_call("CreateTable", &req)?;
        self.wait_opt(resp.proc_id)?;
        self.cache.forget_table(table);
        Ok(())
    }

    /// Flushes every region of `table` (the master's `FlushTable` procedure, HBase 2.6 on),
    /// answered once each memstore is written out.
    pub fn flush_table(&self, table: &str) -> Result<()> {
        let req = pb::FlushTableRequest {
            table_name: table_name(table),
            column_family: Vec::new(),
            nonce_group: Some(self.nonce_group()),
            nonce: Some(self.nonce()),
        };
        let resp: pb::FlushTableResponse = self
            .master_call("FlushTable", &req)
            .map_err(|e| self.not_found(table, e))?;
        self.wait_opt(resp.proc_id)
    }

    /// Moves a region (a secondary replica too, by its own name) to `dest`: the master's
    /// `MoveRegion`, answered once the region is open there.
    pub fn move_region(&self, region_name: &[u8], dest: &crate::zk::ServerName) -> Result<()> {
        let req = pb::MoveRegionRequest {
            region: pb::RegionSpecifier {
                r#type: pb::region_specifier::RegionSpecifierType::EncodedRegionName as i32,
                value: Bytes::copy_from_slice(crate::locate::encoded_name(region_name)),
            },
            dest_server_name: Some(pb::ServerName {
                host_name: dest.host.clone(),
                port: Some(u32::from(dest.port)),
                start_code: Some(dest.start_code),
            }),
        };
        self.master_call::<_, pb::MoveRegionResponse>("MoveRegion", &req)
            .map(drop)
    }

    /// Disables `table` (one already disabled is left so).
    pub fn disable_table(&self, table: &str) -> Result<()> {
        let req = pb::DisableTableRequest {
            table_name: table_name(table),
            nonce_group: Some(self.nonce_group()),
            nonce: Some(self.nonce()),
        };
        match self.master_call::<_, pb::DisableTableResponse>("DisableTable", &req) {
            Ok(resp) => self.wait_opt(resp.proc_id),
            Err(e) if e.class() == Some("TableNotEnabledException") => Ok(()),
            Err(e) => Err(self.not_found(table, e)),
        }
    }

    /// Disables and drops `table`.
    pub fn delete_table(&self, table: &str) -> Result<()> {
        self.disable_table(table)?;
        let req = pb::DeleteTableRequest {
            table_name: table_name(table),
            nonce_group: Some(self.nonce_group()),
            nonce: Some(self.nonce()),
        };
        let resp: pb::DeleteTableResponse = self
            .master_call("DeleteTable", &req)
            .map_err(|e| self.not_found(table, e))?;
        self.wait_opt(resp.proc_id)?;
        self.cache.forget_table(table);
        Ok(())
    }

    /// Empties `table`, keeping its regions' boundaries when `preserve_splits`.
    pub fn truncate_table(&self, table: &str, preserve_splits: bool) -> Result<()> {
        self.disable_table(table)?;
        let req = pb::TruncateTableRequest {
            table_name: table_name(table),
            preserve_splits: Some(preserve_splits),
            nonce_group: Some(self.nonce_group()),
            nonce: Some(self.nonce()),
        };
        let resp: pb::TruncateTableResponse = self
            .master_call("truncateTable", &req)
            .map_err(|e| self.not_found(table, e))?;
        self.wait_opt(resp.proc_id)?;
        self.cache.forget_table(table);
        Ok(())
    }

    /// The names of the user tables.
    pub fn table_names(&self) -> Result<Vec<String>> {
        let resp: pb::GetTableNamesResponse = self.master_call(
            "GetTableNames",
            &pb::GetTableNamesRequest {
                regex: None,
                include_sys_tables: Some(false),
                namespace: None,
            },
        )?;
        Ok(resp.table_names.iter().map(table_string).collect())
    }

    /// `table`'s families and their attributes.
    pub fn describe(&self, table: &str) -> Result<Table> {
        let resp: pb::GetTableDescriptorsResponse = self.master_call(
            "GetTableDescriptors",
            &pb::GetTableDescriptorsRequest {
                table_names: vec![table_name(table)],
                regex: None,
                include_sys_tables: None,
                namespace: None,
            },
        )?;
        let schema = resp
            .table_schema
            .into_iter()
            .next()
            .ok_or_else(|| Error::TableNotFound(crate::locate::canonical(table).to_string()))?;
        let text = |a: &pb::BytesBytesPair| {
            (
                String::from_utf8_lossy(&a.first).into_owned(),
                String::from_utf8_lossy(&a.second).into_owned(),
            )
        };
        Ok(Table {
            name: schema
                .table_name
                .as_ref()
                .map_or_else(|| table.to_string(), table_string),
            attributes: schema.attributes.iter().map(text).collect(),
            families: schema
                .column_families
                .iter()
                .map(|f| Family {
                    name: String::from_utf8_lossy(&f.name).into_owned(),
                    attributes: f
                        .attributes
                        .iter()
                        .map(|a| {
                            (
                                String::from_utf8_lossy(&a.first).into_owned(),
                                String::from_utf8_lossy(&a.second).into_owned(),
                            )
                        })
                        .collect(),
                })
                .collect(),
        })
    }

    /// A master's "no such table" as [`Error::TableNotFound`].
    fn not_found(&self, table: &str, e: Error) -> Error {
        if e.class() == Some("TableNotFoundException") {
            Error::TableNotFound(crate::locate::canonical(table).to_string())
        } else {
            e
        }
    }
}
