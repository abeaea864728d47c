//! Bulk loading: HFiles already in the cluster's file system handed to the region servers
//! that serve their rows, as `BulkLoadHFilesTool` hands them through
//! `AsyncClusterConnection` (`PrepareBulkLoad` once per table, one `BulkLoadHFile` per
//! region with every family's files, `CleanupBulkLoad` at the end).
//!
//! The server moves each file: into the table's staging folder (the bulk token), then into
//! the region. On one file system both are renames; the files' first and last rows must lie
//! in the region, which the server checks again (`HStore.assertBulkLoadHFileOk`).

use crate::client::{Client, printable};
use crate::conn::Service;
use crate::error::{Error, Result, Retry};
use crate::locate::{self, Region};
use crate::pb;
use bytes::Bytes;
use prost::Message;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// One table's bulk load in progress: its staging folder on the cluster, cleaned up when
/// it is finished or dropped.
pub struct BulkLoad<'a> {
    client: &'a Client,
    table: String,
    token: String,
    fs_token: Option<pb::DelegationToken>,
    done: bool,
}

/// The longest one region's hand-over may take: the server renames (or, across file
/// systems, copies) every file of the call before it answers.
const LOAD_TIMEOUT: Duration = Duration::from_secs(20 * 60);

impl Client {
    /// Starts a bulk load into `table`: the server makes the staging folder whose path is
    /// the bulk token.
    pub fn bulk_load(&self, table: &str) -> Result<BulkLoad<'_>> {
        let t = locate::canonical(table).to_string();
        let request = |r: &Region| pb::PrepareBulkLoadRequest {
            table_name: locate::table_name(&t),
            region: Some(r.specifier()),
        };
        let timeout = self.options().rpc_timeout;
        let (_, addr, reply) = self.region_call(&t, b"", "PrepareBulkLoad", timeout, &|_| Ok(()), &request)?;
        let token = reply.decode::<pb::PrepareBulkLoadResponse>(&addr)?.bulk_token;
        Ok(BulkLoad {
            client: self,
            table: t,
            token,
            fs_token: None,
            done: false,
        })
    }

    /// Calls `method` on the region holding `row`, located again after an error that says
    /// the region is elsewhere; the reply and the server that gave it.
    fn region_call<M: Message>(
        &self,
        table: &str,
        row: &[u8],
        method: &'static str,
        timeout: Duration,
        fits: &dyn Fn(&Region) -> Result<()>,
        request: &dyn Fn(&Region) -> M,
    ) -> Result<(Arc<Region>, String, crate::conn::Reply)> {
        let started = Instant::now();
        let mut tries = 0;
        loop {
            tries += 1;
            let region = self.locate(table, row)?;
            let sent = fits(&region).and_then(|()| self.call_on(&region, method, timeout, request));
            match sent {
                Ok((addr, reply)) => return Ok((region, addr, reply)),
                Err(e) => {
                    self.learn(&region, &e);
                    // A hand-over that timed out may have moved its files: it is not sent
                    // again, nor is one whose failure is not about where the region is.
                    if matches!(e.retry(), Retry::Same) || matches!(e, Error::Timeout { .. }) {
                        return Err(e);
                    }
                    self.backoff(e, tries, started, 1)?;
                }
            }
        }
    }

    fn call_on<M: Message>(
        &self,
        region: &Arc<Region>,
        method: &'static str,
        timeout: Duration,
        request: &dyn Fn(&Region) -> M,
    ) -> Result<(String, crate::conn::Reply)> {
        let server = region.server.clone().expect("located regions have a server");
        let conn = self.conn(&server.addr(), Service::Client)?;
        let reply = conn.send(method, &request(region), b"", timeout)?.wait(timeout)?;
        Ok((conn.addr().to_string(), reply))
    }
}

impl BulkLoad<'_> {
    /// The staging folder the server made.
    pub fn token(&self) -> &str {
        &self.token
    }

    /// Hands `files` (family, path), whose rows lie in `[start, end)` (`end` empty: to the
    /// table's end), to the region that holds all of them. Fails, with nothing moved, when
    /// no one region does (the table was split otherwise than the files were), and when
    /// the server refuses them.
    pub fn load(&self, start: &[u8], end: &[u8], files: &[(Bytes, String)]) -> Result<()> {
        let fits = |r: &Region| {
            let ends_within = if r.end.is_empty() {
                true
            } else {
                !end.is_empty() && end <= &r.end[..]
            };
            if r.start[..] <= *start && ends_within {
                Ok(())
            } else {
                Err(Error::BadRequest(format!(
                    "{}: the files of rows [{}, {}) straddle a region boundary ({} holds [{}, {})): the table is split otherwise than the files",
                    self.table,
                    printable(start),
                    if end.is_empty() { "end".into() } else { printable(end) },
                    printable(&r.name),
                    printable(&r.start),
                    if r.end.is_empty() {
                        "end".into()
                    } else {
                        printable(&r.end)
                    },
                )))
            }
        };
        let request = |r: &Region| pb::BulkLoadHFileRequest {
            region: r.specifier(),
            family_path: files
                .iter()
                .map(|(family, path)| pb::bulk_load_h_file_request::FamilyPath {
                    family: family.clone(),
                    path: path.clone(),
                })
                .collect(),
            assign_seq_num: Some(true),
            fs_token: self.fs_token.clone(),
            bulk_token: Some(self.token.clone()),
            copy_file: Some(false),
            cluster_ids: Vec::new(),
            replicate: Some(true),
        };
        let started = Instant::now();
        let mut tries = 0;
        loop {
            tries += 1;
            let (region, addr, reply) =
                self.client
                    .region_call(&self.table, start, "BulkLoadHFile", LOAD_TIMEOUT, &fits, &request)?;
            let resp: pb::BulkLoadHFileResponse = reply.decode(&addr)?;
            if resp.loaded {
                return Ok(());
            }
            // Not loaded, nothing moved. Either a file no longer fits the region (it split
            // meanwhile: found again, the new regions say whether they still fit), or the
            // server could not check or move the files, which it logs and does not say.
            self.client.forget_table(&self.table);
            let again = self.client.locate(&self.table, start)?;
            if again.name == region.name {
                return Err(Error::Remote {
                    class: "org.apache.hadoop.hbase.DoNotRetryIOException".into(),
                    message: format!(
                        "{addr} did not load the files of region {} and says no more: its log says why (the usual cause: the files or their folder are not readable and writable by {})",
                        printable(&region.name),
                        self.client.options().user
                    ),
                    do_not_retry: true,
                });
            }
            let e = Error::Remote {
                class: "org.apache.hadoop.hbase.NotServingRegionException".into(),
                message: format!(
                    "{addr} did not load the files of rows from {}: the region split",
                    printable(start)
                ),
                do_not_retry: false,
            };
            self.client.backoff(e, tries, started, 1)?;
        }
    }

    /// Sends `token` with every hand-over: the caller's delegation token for the file
    /// system the files are in, which a region server whose Hadoop runs Kerberos moves them
    /// with, as the caller (`SecureBulkLoadManager` refuses the call without one: "User
    /// token cannot be null").
    pub fn with_fs_token(mut self, token: pb::DelegationToken) -> Self {
        self.fs_token = Some(token);
        self
    }

    /// Removes the staging folder.
    pub fn finish(mut self) -> Result<()> {
        self.done = true;
        self.cleanup()
    }

    fn cleanup(&self) -> Result<()> {
        let timeout = self.client.options().rpc_timeout;
        let request = |r: &Region| pb::CleanupBulkLoadRequest {
            bulk_token: self.token.clone(),
            region: Some(r.specifier()),
        };
        self.client
            .region_call(&self.table, b"", "CleanupBulkLoad", timeout, &|_| Ok(()), &request)
            .map(|_| ())
    }
}

impl Drop for BulkLoad<'_> {
    fn drop(&mut self) {
        if !self.done {
            let _ = self.cleanup();
        }
    }
}
