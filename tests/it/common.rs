//! Shared helpers: backends under test behind one harness trait, the built binary, and the
//! fixtures.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;
use tallrow::store::{
    Store,
    embedded::Embedded,
    memory::{Memory, Semantics},
};

/// A backend under test.
pub trait Harness {
    /// The store; drop every clone before `restart`.
    fn store(&self) -> Arc<dyn Store>;
    /// Closes and reopens the backend on the same data. Returns false for a backend that
    /// keeps nothing across restarts by design (the in-memory model).
    fn restart(&mut self) -> bool;
    /// A table name no other test on this backend uses.
    fn table(&self, base: &str) -> String {
        base.to_string()
    }
    /// Whether the backend serves reversed scans; one that does not must refuse them with a
    /// clear error, which the contract then checks instead.
    fn reversed_scans(&self) -> bool {
        true
    }
    /// Makes `namespace` exist where the backend cannot create one itself (HBase over
    /// Thrift1, which has no namespace call).
    fn namespace(&self, _namespace: &str) {}
    /// The longest row key the backend accepts in `table` (HBase's by default).
    fn max_row_key(&self, _table: &str) -> usize {
        tallrow::store::MAX_ROW_LEN
    }
    /// Which behaviour of deletes and versions the backend has (see the model).
    fn semantics(&self) -> Semantics {
        Semantics::Hbase
    }
    /// Whether the backend deletes one version at a time; one that cannot (HBase's Thrift1
    /// API) must refuse with a clear error, which the contract then checks instead.
    fn version_deletes(&self) -> bool {
        true
    }
    /// Whether the backend creates a table of several regions; one that cannot (HBase's
    /// Thrift1 API) must refuse with a clear error, which the contract then checks instead.
    fn presplits(&self) -> bool {
        true
    }
    /// Whether the backend reports a table's regions where they were split at creation.
    /// Bigtable answers `SampleRowKeys` from the tablets it keeps, which it may merge; the
    /// emulator keeps none, and a table there is one region.
    fn regions_as_created(&self) -> bool {
        true
    }
    /// Whether the backend keeps a table's attributes (tallrow's mark); HBase's Thrift1 API
    /// and Bigtable have none to keep.
    fn keeps_marks(&self) -> bool {
        true
    }
    /// Whether the backend carries TIMELINE reads (HBase's native RPC and Thrift2); one that
    /// does not must refuse them in one line, which the contract then checks instead.
    fn timeline_reads(&self) -> bool {
        false
    }
}

/// Drops a harness's store before a restart, checking that no test kept a handle to it.
fn release(store: Option<Arc<dyn Store>>) {
    let store = store.expect("open");
    assert_eq!(
        Arc::strong_count(&store),
        1,
        "a test kept a store handle across restart"
    );
}

/// The embedded backend in a temporary directory.
pub struct EmbeddedHarness {
    pub dir: tempfile::TempDir,
    store: Option<Arc<dyn Store>>,
}

impl EmbeddedHarness {
    pub fn new() -> Self {
        let dir = tempfile::tempdir().expect("tempdir");
        let store: Arc<dyn Store> = Arc::new(Embedded::open(dir.path()).expect("open"));
        EmbeddedHarness {
            dir,
            store: Some(store),
        }
    }
}

impl Harness for EmbeddedHarness {
    fn store(&self) -> Arc<dyn Store> {
        self.store.clone().expect("open")
    }

    fn restart(&mut self) -> bool {
        release(self.store.take());
        self.store = Some(Arc::new(Embedded::open(self.dir.path()).expect("reopen")));
        true
    }
}

/// The in-memory model.
pub struct MemoryHarness(Arc<dyn Store>);

impl MemoryHarness {
    pub fn new() -> Self {
        MemoryHarness(Arc::new(Memory::new()))
    }
}

impl Harness for MemoryHarness {
    fn store(&self) -> Arc<dyn Store> {
        self.0.clone()
    }

    fn restart(&mut self) -> bool {
        false
    }
}

/// What a run of the binary printed and how it exited.
pub struct Out {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

/// Runs the built `tallrow` in `dir`, as in CI (no progress bars).
pub fn tallrow(dir: &Path, args: &[&str]) -> Out {
    tallrow_with(dir, args, &[])
}

/// `tallrow` with `env` added to (or, with an empty value, removed from) its environment.
pub fn tallrow_with(dir: &Path, args: &[&str], env: &[(&str, &str)]) -> Out {
    let mut command = Command::new(env!("CARGO_BIN_EXE_tallrow"));
    command.current_dir(dir).env("CI", "1").args(args);
    for (k, v) in env {
        if v.is_empty() {
            command.env_remove(k);
        } else {
            command.env(k, v);
        }
    }
    let out = command.output().unwrap();
    Out {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8(out.stdout).unwrap(),
        stderr: String::from_utf8(out.stderr).unwrap(),
    }
}

/// `verify --sample` for the tests whose subject is the path to the data (a transport, a
/// protection, a bulk load, a fault) rather than the queries: 20 users' query checks, in
/// place of 100, still run every kind of check (20 to 60 of each on the small fixture),
/// and a row missing or changed is found whatever the sample. The queries themselves are
/// the DAO suites' subject.
pub const SAMPLE: &str = "20";

/// `tests/fixtures/small.toml`: a few hundred users with every design.
pub fn small_fixture() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/small.toml")
}

/// `tests/fixtures/hbase.toml`: 1,500 users, a little over 100,000 rows, every design.
pub fn hbase_fixture() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/hbase.toml")
}

/// The hbase backend against an in-process `tallrow serve` over the embedded store.
pub struct ThriftHarness {
    pub dir: tempfile::TempDir,
    api: tallrow::wire::Api,
    transport: tallrow::wire::Transport,
    protocol: tallrow::wire::Protocol,
    server: Option<tallrow::serve::Server>,
    store: Option<Arc<dyn Store>>,
    served: std::sync::Weak<dyn Store>,
}

impl ThriftHarness {
    /// HBase's defaults: buffered transport, binary protocol.
    pub fn buffered_binary() -> Self {
        Self::new(tallrow::wire::Transport::Buffered, tallrow::wire::Protocol::Binary)
    }

    /// The other combination clients use.
    pub fn framed_compact() -> Self {
        Self::new(tallrow::wire::Transport::Framed, tallrow::wire::Protocol::Compact)
    }

    /// `serve --api thrift2` and the backend's `api=thrift2`, in HBase's default wire format.
    pub fn thrift2() -> Self {
        Self::with_api(
            tallrow::wire::Api::Thrift2,
            tallrow::wire::Transport::Buffered,
            tallrow::wire::Protocol::Binary,
        )
    }

    /// Thrift2 framed and compact.
    pub fn thrift2_framed_compact() -> Self {
        Self::with_api(
            tallrow::wire::Api::Thrift2,
            tallrow::wire::Transport::Framed,
            tallrow::wire::Protocol::Compact,
        )
    }

    fn new(transport: tallrow::wire::Transport, protocol: tallrow::wire::Protocol) -> Self {
        Self::with_api(tallrow::wire::Api::Thrift1, transport, protocol)
    }

    /// The address the server listens on, for clients of its own.
    pub fn addr(&self) -> std::net::SocketAddr {
        self.server.as_ref().expect("serving").addr()
    }

    fn with_api(
        api: tallrow::wire::Api,
        transport: tallrow::wire::Transport,
        protocol: tallrow::wire::Protocol,
    ) -> Self {
        let dir = tempfile::tempdir().expect("tempdir");
        let mut h = ThriftHarness {
            dir,
            api,
            transport,
            protocol,
            server: None,
            store: None,
            served: std::sync::Weak::<Memory>::new(),
        };
        h.start();
        h
    }

    fn start(&mut self) {
        let embedded: Arc<dyn Store> = Arc::new(Embedded::open(self.dir.path()).expect("open"));
        self.served = Arc::downgrade(&embedded);
        let opts = tallrow::serve::Options {
            bind: "127.0.0.1:0".parse().unwrap(),
            api: self.api,
            transport: self.transport,
            protocol: self.protocol,
            ..tallrow::serve::Options::default()
        };
        let server = tallrow::serve::Server::start(embedded, &opts).expect("serve");
        self.server = Some(server);
        let url = self.url();
        let backend = tallrow::store::backend::Backend::parse(&url, Path::new(".")).expect("url");
        self.store = Some(backend.open().expect("connect"));
    }

    /// The hbase backend's URL for the server.
    pub fn url(&self) -> String {
        format!(
            "hbase://{}?api={}&transport={}&protocol={}",
            self.addr(),
            self.api,
            self.transport,
            self.protocol
        )
    }
}

impl Harness for ThriftHarness {
    fn store(&self) -> Arc<dyn Store> {
        self.store.clone().expect("open")
    }

    fn namespace(&self, namespace: &str) {
        // Thrift2 has the call, and `serve --api thrift2` wants namespaces made, as HBase.
        if self.api == tallrow::wire::Api::Thrift2 {
            let addr = self.server.as_ref().expect("serving").addr().to_string();
            thrift2_create_namespace(&addr, self.transport, self.protocol, namespace);
        }
    }

    fn max_row_key(&self, table: &str) -> usize {
        tallrow::store::hbase::max_row_key(table)
    }

    fn version_deletes(&self) -> bool {
        self.api == tallrow::wire::Api::Thrift2
    }

    fn presplits(&self) -> bool {
        self.api == tallrow::wire::Api::Thrift2
    }

    fn keeps_marks(&self) -> bool {
        self.api == tallrow::wire::Api::Thrift2
    }

    fn timeline_reads(&self) -> bool {
        self.api == tallrow::wire::Api::Thrift2
    }

    fn restart(&mut self) -> bool {
        release(self.store.take());
        drop(self.server.take());
        // Connection threads let go of the served store once they see their sockets close,
        // in milliseconds; the deadline guards against a hang only.
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(120);
        while self.served.upgrade().is_some() {
            assert!(std::time::Instant::now() < deadline, "the server kept the store open");
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        self.start();
        true
    }
}

/// Whether a Bigtable emulator is there to test against (`BIGTABLE_EMULATOR_HOST`, which
/// `scripts/test.sh` sets after starting one); when not, the calling test is counted as not
/// run (or fails, in a strict suite: `tallrow::testkit`).
pub fn bigtable_emulator() -> bool {
    let there = std::env::var("BIGTABLE_EMULATOR_HOST").is_ok_and(|h| !h.is_empty());
    if !there {
        tallrow::testkit::absent(
            "the Bigtable emulator",
            "BIGTABLE_EMULATOR_HOST is not set (scripts/test.sh starts the emulator)",
        );
    }
    there
}

/// The bigtable backend against the emulator, in an instance of its own: the emulator makes
/// instances on first use, so tests never see each other's tables.
pub struct BigtableHarness {
    url: String,
    store: Option<Arc<dyn Store>>,
}

impl BigtableHarness {
    pub fn new() -> Self {
        static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let url = format!("bigtable://tallrow-test/t{}-{n}", std::process::id());
        let mut h = BigtableHarness { url, store: None };
        h.open();
        h
    }

    fn open(&mut self) {
        let backend = tallrow::store::backend::Backend::parse(&self.url, Path::new(".")).expect("url");
        self.store = Some(backend.open().expect("connect to the Bigtable emulator"));
    }
}

impl Harness for BigtableHarness {
    fn keeps_marks(&self) -> bool {
        false
    }

    fn store(&self) -> Arc<dyn Store> {
        self.store.clone().expect("open")
    }

    fn restart(&mut self) -> bool {
        release(self.store.take());
        self.open();
        true
    }

    fn reversed_scans(&self) -> bool {
        // The emulator answers a reversed ReadRows with Unimplemented; Cloud Bigtable has them.
        false
    }

    fn max_row_key(&self, _table: &str) -> usize {
        tallrow::store::bigtable::MAX_ROW_KEY
    }

    fn semantics(&self) -> Semantics {
        Semantics::Bigtable
    }

    fn regions_as_created(&self) -> bool {
        false
    }
}

/// The address of a real HBase Thrift server that `scripts/hbase.sh start` runs, from the
/// variable it exports (`TALLROW_HBASE_THRIFT1`, `TALLROW_HBASE_THRIFT1_FC`,
/// `TALLROW_HBASE_THRIFT2`); when there is none, the calling test is counted as not run (or
/// fails, in a strict suite).
pub fn real_hbase(var: &str) -> Option<String> {
    let addr = std::env::var(var).ok().filter(|a| !a.is_empty());
    if addr.is_none() {
        tallrow::testkit::absent(
            "real HBase",
            &format!("{var} is not set (scripts/hbase.sh start, or scripts/test.sh)"),
        );
    }
    addr
}

/// The URL of one of the Kerberized gateways `scripts/hbase.sh start --secure` runs
/// (`TALLROW_HBASE_SASL1_AUTH`, `_SASL1_CONF`, `_SASL2_INT`, `_HTTPS2`), when they run and
/// this build speaks Kerberos; when not, the calling test is counted as not run (or fails, in
/// a strict suite).
pub fn secure_hbase(var: &str) -> Option<String> {
    let url = std::env::var(var).ok().filter(|a| !a.is_empty());
    match (&url, tallrow::secure::KERBEROS) {
        (None, _) => tallrow::testkit::absent(
            "the Kerberized HBase gateways",
            &format!("{var} is not set (scripts/hbase.sh start --secure, or scripts/test.sh)"),
        ),
        (Some(_), false) => tallrow::testkit::absent(
            "a kerberos build",
            "this build has no Kerberos (cargo feature kerberos)",
        ),
        (Some(_), true) => return url,
    }
    None
}

/// Whether the Kerberized gateways are there to test against.
pub fn secure_hbase_there() -> bool {
    secure_hbase("TALLROW_HBASE_SASL1_AUTH").is_some()
}

/// How the suite's cluster is found through HBase's own RPC (`TALLROW_HBASE_NATIVE`).
pub fn raw_registry() -> hbase_client::Registry {
    let url = real_hbase("TALLROW_HBASE_NATIVE").expect("TALLROW_HBASE_NATIVE");
    tallrow::store::hbase::native::Spec::parse(&url["hbase://".len()..])
        .unwrap()
        .registry
}

/// The native client of the suite's cluster, straight from `hbase-client`: to find where a
/// table's region or the master is, so a test's proxy can sit in front of it.
pub fn raw_client() -> hbase_client::Client {
    hbase_client::Client::connect(raw_registry(), hbase_client::Options::default()).unwrap()
}

/// Whether real HBase is there to test against.
pub fn real_hbase_there() -> bool {
    real_hbase("TALLROW_HBASE_THRIFT1").is_some()
}

/// Creates `namespace` through a Thrift2 server's `createNamespace`; an existing one is fine.
pub fn thrift2_create_namespace(
    addr: &str,
    transport: tallrow::wire::Transport,
    protocol: tallrow::wire::Protocol,
    namespace: &str,
) {
    use tallrow::idl::thrift2::{THBaseServiceSyncClient, TNamespaceDescriptor, TTHBaseServiceSyncClient};
    use tallrow::wire::{Protocol, Transport};
    use thrift::protocol::*;
    use thrift::transport::*;
    let stream = std::net::TcpStream::connect(addr).expect("connect");
    let (i, o) = TTcpChannel::with_stream(stream).split().unwrap();
    let (r, w): (Box<dyn TReadTransport + Send>, Box<dyn TWriteTransport + Send>) = match transport {
        Transport::Buffered => (
            Box::new(TBufferedReadTransport::new(i)),
            Box::new(TBufferedWriteTransport::new(o)),
        ),
        Transport::Framed => (
            Box::new(TFramedReadTransport::new(i)),
            Box::new(TFramedWriteTransport::new(o)),
        ),
    };
    let (ip, op): (Box<dyn TInputProtocol + Send>, Box<dyn TOutputProtocol + Send>) = match protocol {
        Protocol::Binary => (
            Box::new(TBinaryInputProtocol::new(r, true)),
            Box::new(TBinaryOutputProtocol::new(w, true)),
        ),
        Protocol::Compact => (
            Box::new(TCompactInputProtocol::new(r)),
            Box::new(TCompactOutputProtocol::new(w)),
        ),
    };
    let mut c = THBaseServiceSyncClient::new(ip, op);
    match c.create_namespace(TNamespaceDescriptor::new(namespace.to_string(), None)) {
        Ok(()) => {}
        Err(e) if format!("{e:?}").contains("NamespaceExist") => {}
        Err(e) => panic!("createNamespace {namespace}: {e:?}"),
    }
}

/// Creates `namespace` on the real HBase (Thrift1 has no call for it) through its Thrift2
/// server's `createNamespace`, hand-encoded in binary protocol; an existing one is fine.
pub fn real_hbase_namespace(namespace: &str) {
    use std::io::{Read, Write};
    let addr = real_hbase("TALLROW_HBASE_THRIFT2").expect("TALLROW_HBASE_THRIFT2");
    let mut msg = Vec::new();
    let name = b"createNamespace";
    msg.extend_from_slice(&0x8001_0001u32.to_be_bytes());
    msg.extend_from_slice(&(name.len() as u32).to_be_bytes());
    msg.extend_from_slice(name);
    msg.extend_from_slice(&0i32.to_be_bytes());
    // 1: TNamespaceDescriptor { 1: string name }
    msg.extend_from_slice(&[12, 0, 1, 11, 0, 1]);
    msg.extend_from_slice(&(namespace.len() as u32).to_be_bytes());
    msg.extend_from_slice(namespace.as_bytes());
    msg.extend_from_slice(&[0, 0]);
    let mut conn = std::net::TcpStream::connect(&addr).expect("connect to HBase's Thrift2 server");
    conn.write_all(&msg).unwrap();
    let mut head = [0u8; 8];
    conn.read_exact(&mut head).unwrap();
    let len = u32::from_be_bytes(head[4..8].try_into().unwrap()) as usize;
    let mut rest = vec![0u8; len + 4 + 1];
    conn.read_exact(&mut rest).unwrap();
    let mut field = (rest[len + 4], 0i16);
    if field.0 != 0 {
        let mut id = [0u8; 2];
        conn.read_exact(&mut id).unwrap();
        field.1 = i16::from_be_bytes(id);
    }
    assert!(
        head[3] == 2 && (field.0 == 0 || field.1 == 1),
        "createNamespace {namespace}: {head:?} {field:?}"
    );
}

/// The hbase backend against a real HBase Thrift1 server. Every harness names its tables
/// apart (HBase is shared by every test of a run) and its `restart` reconnects: the data
/// stays on the server.
pub struct RealHBaseHarness {
    url: String,
    tag: String,
    store: Option<Arc<dyn Store>>,
}

impl RealHBaseHarness {
    /// HBase's default Thrift1 server: buffered transport, binary protocol.
    pub fn buffered_binary() -> Self {
        let addr = real_hbase("TALLROW_HBASE_THRIFT1").expect("TALLROW_HBASE_THRIFT1");
        Self::new(format!("hbase://{addr}"))
    }

    /// The framed/compact Thrift1 server.
    pub fn framed_compact() -> Self {
        let addr = real_hbase("TALLROW_HBASE_THRIFT1_FC").expect("TALLROW_HBASE_THRIFT1_FC");
        Self::new(format!("hbase://{addr}?transport=framed&protocol=compact"))
    }

    /// HBase's Thrift2 server (`THBaseService`), buffered/binary.
    pub fn thrift2() -> Self {
        let addr = real_hbase("TALLROW_HBASE_THRIFT2").expect("TALLROW_HBASE_THRIFT2");
        Self::new(format!("hbase://{addr}?api=thrift2"))
    }

    /// HBase's own RPC, no gateway: the cluster found through ZooKeeper.
    pub fn native() -> Self {
        Self::new(real_hbase("TALLROW_HBASE_NATIVE").expect("TALLROW_HBASE_NATIVE"))
    }

    /// The Kerberized Thrift1 server with SASL qop auth-conf (`scripts/hbase.sh start --secure`).
    pub fn sasl_thrift1() -> Self {
        Self::new(secure_hbase("TALLROW_HBASE_SASL1_CONF").expect("TALLROW_HBASE_SASL1_CONF"))
    }

    /// The Kerberized Thrift2 server with SASL qop auth-int.
    pub fn sasl_thrift2() -> Self {
        Self::new(secure_hbase("TALLROW_HBASE_SASL2_INT").expect("TALLROW_HBASE_SASL2_INT"))
    }

    /// The Kerberized Thrift2 server in HTTP mode, SPNEGO over TLS.
    pub fn https_thrift2() -> Self {
        Self::new(secure_hbase("TALLROW_HBASE_HTTPS2").expect("TALLROW_HBASE_HTTPS2"))
    }

    /// The Kerberized cluster through HBase's own RPC, with privacy (`qop=auth-conf`).
    pub fn native_kerberos_privacy() -> Self {
        let url = secure_hbase("TALLROW_HBASE_NATIVE_KRB").expect("TALLROW_HBASE_NATIVE_KRB");
        Self::new(format!("{url}&qop=auth-conf"))
    }

    /// The Kerberized cluster through HBase's own RPC, with integrity (`qop=auth-int`).
    pub fn native_kerberos_integrity() -> Self {
        let url = secure_hbase("TALLROW_HBASE_NATIVE_KRB").expect("TALLROW_HBASE_NATIVE_KRB");
        Self::new(format!("{url}&qop=auth-int"))
    }

    /// The Kerberized cluster through HBase's own RPC inside TLS, with integrity
    /// (`tls=true&qop=auth-int`).
    pub fn native_kerberos_tls() -> Self {
        let url = secure_hbase("TALLROW_HBASE_NATIVE_KRB_TLS").expect("TALLROW_HBASE_NATIVE_KRB_TLS");
        Self::new(format!("{url}&qop=auth-int"))
    }

    fn new(url: String) -> Self {
        static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let tag = format!("{}_{n}", std::process::id());
        let mut h = RealHBaseHarness { url, tag, store: None };
        h.open();
        h
    }

    fn open(&mut self) {
        let backend = tallrow::store::backend::Backend::parse(&self.url, Path::new(".")).expect("url");
        self.store = Some(backend.open().expect("connect to HBase's Thrift server"));
    }
}

impl Drop for RealHBaseHarness {
    /// Drops the tables this harness made, so that a run's hundreds of tables do not pile
    /// up in one HBase.
    fn drop(&mut self) {
        let Some(store) = self.store.take() else { return };
        let mine: Vec<String> = (store.list_tables().unwrap_or_default().into_iter())
            .map(|t| t.name)
            .filter(|n| n.ends_with(&format!("_{}", self.tag)))
            .collect();
        let _ = drop_tables(&*store, &mine);
    }
}

impl Harness for RealHBaseHarness {
    fn store(&self) -> Arc<dyn Store> {
        self.store.clone().expect("open")
    }

    fn restart(&mut self) -> bool {
        release(self.store.take());
        self.open();
        true
    }

    fn table(&self, base: &str) -> String {
        format!("{base}_{}", self.tag)
    }

    fn namespace(&self, namespace: &str) {
        real_hbase_namespace(namespace);
    }

    fn max_row_key(&self, table: &str) -> usize {
        tallrow::store::hbase::max_row_key(table)
    }

    fn version_deletes(&self) -> bool {
        self.url.contains("api=thrift2") || self.url.contains("api=native")
    }

    fn presplits(&self) -> bool {
        self.url.contains("api=thrift2") || self.url.contains("api=native")
    }

    fn keeps_marks(&self) -> bool {
        self.url.contains("api=thrift2") || self.url.contains("api=native")
    }

    fn timeline_reads(&self) -> bool {
        self.url.contains("api=thrift2") || self.url.contains("api=native")
    }
}

/// Drops `names` all at once: each drop is two procedures (disable, delete) that the
/// master runs and the client waits for, and it runs those of different tables side by
/// side (8 tables: 1.3 s, where one after another took 5.3). The first error, if any.
pub fn drop_tables(store: &dyn Store, names: &[String]) -> tallrow::store::Result<()> {
    std::thread::scope(|s| {
        let drops: Vec<_> = names.iter().map(|n| s.spawn(move || store.delete_table(n))).collect();
        drops.into_iter().try_for_each(|d| d.join().expect("a table's drop"))
    })
}

/// The tables of the four seed designs, by the fixed names their DAOs use.
fn schema_tables() -> Vec<String> {
    use tallrow::schema::{actions::Actions, blog::Blog, microblog::Microblog, series::Series};
    [
        Actions::tables(),
        Blog::tables(),
        Series::tables(),
        Microblog::tables(&Default::default()),
    ]
    .into_iter()
    .flatten()
    .map(|t| t.name)
    .collect()
}

/// A store whose tables are another's under names of their own: each name `n` is `n_TAG`
/// there (`weibo:user` is `weibo:user_TAG`, `blog` is `blog_TAG`), and only those tables are
/// listed, by the names they have here. The DAO suites run on real HBase through it, so that
/// their tables, though the schemas fix their names, are apart from every other test's.
pub struct Apart {
    inner: Arc<dyn Store>,
    suffix: String,
}

impl Apart {
    pub fn new(inner: Arc<dyn Store>, tag: &str) -> Self {
        Apart {
            inner,
            suffix: format!("_{tag}"),
        }
    }

    fn there(&self, table: &str) -> String {
        format!("{table}{}", self.suffix)
    }

    fn here(&self, mut d: tallrow::store::TableDescriptor) -> tallrow::store::TableDescriptor {
        if let Some(n) = d.name.strip_suffix(&self.suffix) {
            d.name = n.to_string();
        }
        d
    }

    fn error(&self, e: tallrow::store::Error) -> tallrow::store::Error {
        use tallrow::store::Error as E;
        let here = |n: String| n.strip_suffix(&self.suffix).map_or(n.clone(), str::to_string);
        match e {
            E::TableNotFound(n) => E::TableNotFound(here(n)),
            E::TableExists(n) => E::TableExists(here(n)),
            e => e,
        }
    }
}

impl Store for Apart {
    fn identity(&self) -> String {
        self.inner.identity()
    }

    fn version(&self) -> String {
        self.inner.version()
    }

    fn retries(&self) -> Vec<(String, u64)> {
        self.inner.retries()
    }

    fn create_table(&self, table: &tallrow::store::TableDescriptor) -> tallrow::store::Result<()> {
        let mut d = table.clone();
        d.name = self.there(&d.name);
        self.inner.create_table(&d).map_err(|e| self.error(e))
    }

    fn delete_table(&self, table: &str) -> tallrow::store::Result<()> {
        self.inner.delete_table(&self.there(table)).map_err(|e| self.error(e))
    }

    fn list_tables(&self) -> tallrow::store::Result<Vec<tallrow::store::TableDescriptor>> {
        Ok(self
            .inner
            .list_tables()?
            .into_iter()
            .filter(|d| d.name.ends_with(&self.suffix))
            .map(|d| self.here(d))
            .collect())
    }

    fn describe_table(&self, table: &str) -> tallrow::store::Result<tallrow::store::TableDescriptor> {
        let d = self
            .inner
            .describe_table(&self.there(table))
            .map_err(|e| self.error(e))?;
        Ok(self.here(d))
    }

    fn regions(&self, table: &str) -> tallrow::store::Result<Vec<Vec<u8>>> {
        self.inner.regions(&self.there(table)).map_err(|e| self.error(e))
    }

    fn mutate(&self, table: &str, rows: &[tallrow::store::RowMutation]) -> tallrow::store::Result<()> {
        self.inner.mutate(&self.there(table), rows).map_err(|e| self.error(e))
    }

    fn get(
        &self,
        table: &str,
        gets: &[tallrow::store::Get],
    ) -> tallrow::store::Result<Vec<Option<tallrow::store::Row>>> {
        self.inner.get(&self.there(table), gets).map_err(|e| self.error(e))
    }

    fn scan(&self, table: &str, scan: &tallrow::store::Scan) -> tallrow::store::Result<Vec<tallrow::store::Row>> {
        self.inner.scan(&self.there(table), scan).map_err(|e| self.error(e))
    }

    fn scan_each(
        &self,
        table: &str,
        scan: &tallrow::store::Scan,
        page: usize,
        visit: &mut dyn FnMut(tallrow::store::Row) -> bool,
    ) -> tallrow::store::Result<()> {
        self.inner
            .scan_each(&self.there(table), scan, page, visit)
            .map_err(|e| self.error(e))
    }
}

/// The hbase backend against real HBase for the DAO suites: the schemas' tables under names
/// of this harness's own ([`Apart`]), so that DAO tests run beside each other and beside
/// the tests that load the schemas' tables by their own names ([`SchemaTables`]). The
/// tables go with the harness.
pub struct RealHBaseDaoHarness {
    inner: RealHBaseHarness,
    store: Option<Arc<dyn Store>>,
}

impl RealHBaseDaoHarness {
    /// Through the buffered/binary Thrift1 server.
    pub fn buffered_binary() -> Self {
        Self::new(RealHBaseHarness::buffered_binary())
    }

    /// Through the framed/compact Thrift1 server.
    pub fn framed_compact() -> Self {
        Self::new(RealHBaseHarness::framed_compact())
    }

    /// Through the Thrift2 server.
    pub fn thrift2() -> Self {
        Self::new(RealHBaseHarness::thrift2())
    }

    /// Through HBase's own RPC.
    pub fn native() -> Self {
        Self::new(RealHBaseHarness::native())
    }

    fn new(inner: RealHBaseHarness) -> Self {
        // The schemas' namespace, which Thrift1 cannot create.
        real_hbase_namespace("weibo");
        let mut h = RealHBaseDaoHarness { inner, store: None };
        h.wrap();
        h
    }

    fn wrap(&mut self) {
        self.store = Some(Arc::new(Apart::new(self.inner.store(), &self.inner.tag)));
    }
}

impl Harness for RealHBaseDaoHarness {
    fn store(&self) -> Arc<dyn Store> {
        self.store.clone().expect("open")
    }

    fn restart(&mut self) -> bool {
        release(self.store.take());
        self.inner.restart();
        self.wrap();
        true
    }
}

/// The schemas' tables of one real HBase by their own names, as `load`, `verify` and `run`
/// name them: one holder at a time per cluster in the whole run (a [`Turn`]), with those
/// tables dropped before and after, so that each holder starts empty.
pub struct SchemaTables {
    inner: RealHBaseHarness,
    _turn: Turn,
}

/// A turn on one cluster's schema tables: an exclusive lock on a file named after the
/// cluster, so that test threads and test processes alike (nextest runs each test in a
/// process of its own) take turns. The lock goes with the file when the turn is dropped, or
/// when a test's process dies.
pub struct Turn {
    _lock: std::fs::File,
}

impl Turn {
    /// Waits for the turn on the cluster that `var` (a variable of `.hbase.env`) names.
    fn take(var: &str) -> Turn {
        let cluster = std::env::var(var).unwrap_or_default();
        let name: String = cluster
            .chars()
            .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
            .collect();
        let path = std::env::temp_dir().join(format!("tallrow-turn-{name}.lock"));
        let file = std::fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&path)
            .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        file.lock().unwrap_or_else(|e| panic!("lock {}: {e}", path.display()));
        Turn { _lock: file }
    }

    /// The two-region-server HBase's, whichever server a test reaches it through (its Thrift
    /// gateways, Kerberized or not, or its RPC).
    fn plain() -> Turn {
        Turn::take("TALLROW_HBASE_ZK")
    }

    /// The Kerberized standalone HBase's: another cluster, whose tests run beside the plain
    /// one's.
    fn kerberized() -> Turn {
        Turn::take("TALLROW_HBASE_NATIVE_KRB")
    }
}

impl SchemaTables {
    /// Through the buffered/binary Thrift1 server.
    pub fn buffered_binary() -> Self {
        Self::new(RealHBaseHarness::buffered_binary, Turn::plain)
    }

    /// Through the framed/compact Thrift1 server.
    pub fn framed_compact() -> Self {
        Self::new(RealHBaseHarness::framed_compact, Turn::plain)
    }

    /// Through the Thrift2 server.
    pub fn thrift2() -> Self {
        Self::new(RealHBaseHarness::thrift2, Turn::plain)
    }

    /// Through HBase's own RPC.
    pub fn native() -> Self {
        Self::new(RealHBaseHarness::native, Turn::plain)
    }

    /// The Kerberized cluster through its own RPC, with privacy: its schema tables dropped
    /// before and after.
    pub fn native_kerberos_privacy() -> Self {
        Self::new(RealHBaseHarness::native_kerberos_privacy, Turn::kerberized)
    }

    fn new(make: fn() -> RealHBaseHarness, turn: fn() -> Turn) -> Self {
        // A test that failed while holding its turn leaves nothing that needs it undone.
        let turn = turn();
        let h = SchemaTables {
            inner: make(),
            _turn: turn,
        };
        h.drop_schema_tables();
        h
    }

    fn drop_schema_tables(&self) {
        let store = self.inner.store();
        let wanted = schema_tables();
        let there: Vec<String> = store
            .list_tables()
            .expect("list tables")
            .into_iter()
            .map(|t| t.name)
            .filter(|n| wanted.contains(n))
            .collect();
        drop_tables(&*store, &there).expect("drop a schema table");
    }
}

impl Drop for SchemaTables {
    fn drop(&mut self) {
        if self.inner.store.is_some() {
            let _ = drop_tables(&*self.inner.store(), &schema_tables());
        }
    }
}

impl Harness for SchemaTables {
    fn store(&self) -> Arc<dyn Store> {
        self.inner.store()
    }

    fn restart(&mut self) -> bool {
        self.inner.restart()
    }
}

/// The schemas' tables of one real HBase under a prefix of this test's own
/// (`storage.table_prefix`), as an operator keeps two workloads apart on one cluster: beside
/// every other test's tables, with no turn to wait for. They are dropped before and after.
pub struct PrefixedSchemaTables {
    inner: RealHBaseHarness,
    prefix: String,
}

impl PrefixedSchemaTables {
    /// Through `url` (a Kerberized gateway, or the Kerberized cluster's own RPC).
    pub fn at(url: &str) -> Self {
        Self::new(RealHBaseHarness::new(url.to_string()))
    }

    /// Through `inner`'s server (`RealHBaseHarness::thrift2()`, `::native()`, ...).
    pub fn new(inner: RealHBaseHarness) -> Self {
        real_hbase_namespace("weibo");
        let prefix = format!("t{}_", inner.tag);
        let h = PrefixedSchemaTables { inner, prefix };
        drop_tables(&*h.inner.store(), &h.tables()).expect("drop a prefixed schema table");
        h
    }

    /// The prefix, as `--set` takes it: `storage.table_prefix=...`.
    pub fn set(&self) -> String {
        format!("storage.table_prefix={}", self.prefix)
    }

    /// The prefix itself.
    pub fn prefix(&self) -> &str {
        &self.prefix
    }

    /// The schema tables' names on the cluster.
    fn tables(&self) -> Vec<String> {
        let there: std::collections::HashSet<String> =
            (self.inner.store().list_tables().expect("list tables").into_iter())
                .map(|t| t.name)
                .collect();
        (schema_tables().iter())
            .map(|t| tallrow::store::prefixed::physical(&self.prefix, t))
            .filter(|t| there.contains(t))
            .collect()
    }
}

impl Drop for PrefixedSchemaTables {
    fn drop(&mut self) {
        if self.inner.store.is_some() {
            let _ = drop_tables(&*self.inner.store(), &self.tables());
        }
    }
}

/// End to end through the binary against `url`: `load` of `workload` (whose summary must
/// name `backend` and count `rows` rows), then one row deleted behind verify's back, which
/// `verify` must report as the store's one difference from the workload (so every other row
/// is as loaded: one verify shows both that the load is whole and that verify reads what is
/// there), then a `run` of 400 operations. Returns the run's summary.json.
pub fn load_verify_run_and_miss_a_row(workload: &str, url: &str, backend: &str) -> String {
    load_verify_run_and_miss_a_row_with(workload, &[], url, backend)
}

/// [`load_verify_run_and_miss_a_row`] with `sets` (`KEY=VALUE`, as `--set` takes them)
/// changing the workload.
pub fn load_verify_run_and_miss_a_row_with(workload: &str, sets: &[&str], url: &str, backend: &str) -> String {
    use tallrow::store::{Mutation, RowMutation, backend::Backend};
    let dir = tempfile::tempdir().unwrap();
    let logs = ClusterLogs::mark();
    let with = |args: &[&str]| -> Vec<String> {
        let mut all: Vec<String> = args.iter().map(|a| a.to_string()).collect();
        for s in sets {
            all.extend(["--set".to_string(), s.to_string()]);
        }
        all
    };
    let parsed: Vec<tallrow::workload::Set> = sets.iter().map(|s| s.parse().unwrap()).collect();
    let w = tallrow::workload::Workload::from_file_with(Path::new(workload), &parsed).unwrap();
    let rows = tallrow::report::thousands(row_writes_of(&w));
    let args = with(&["load", workload, "--backend", url]);
    let out = tallrow(dir.path(), &args.iter().map(String::as_str).collect::<Vec<_>>());
    assert_eq!(out.code, 0, "{}\n{}", out.stderr, logs.since());
    assert!(out.stdout.contains(backend), "{}", out.stdout);
    assert!(
        out.stdout.contains(&rows),
        "every row of the workload, {rows}: {}",
        out.stdout
    );

    let store = Backend::parse(url, Path::new(".")).unwrap().open().unwrap();
    let store = tallrow::store::prefixed::over(store, &w.storage.table_prefix);
    let gone = RowMutation::new("1", vec![Mutation::DeleteRow { timestamp: None }]);
    store.mutate("weibo:user", &[gone]).unwrap();
    drop(store);
    let args = with(&["verify", workload, "--backend", url, "--sample", SAMPLE]);
    let out = tallrow(dir.path(), &args.iter().map(String::as_str).collect::<Vec<_>>());
    assert_eq!(
        (out.code, out.stderr.trim()),
        (1, "error: 1 differences"),
        "{}\n{}\n{}",
        out.stdout,
        out.stderr,
        logs.since()
    );
    let differences: Vec<&str> = out.stdout.lines().filter(|l| l.contains(" row ")).collect();
    assert_eq!(differences, ["missing row weibo:user uid=1"], "{}", out.stdout);

    let reports = dir.path().join("reports");
    let run = with(&[
        "run",
        workload,
        "--backend",
        url,
        "--ops",
        "400",
        "--warmup",
        "0s",
        "--reports",
        reports.to_str().unwrap(),
    ]);
    let out = tallrow(dir.path(), &run.iter().map(String::as_str).collect::<Vec<_>>());
    assert_eq!(out.code, 0, "{}\n{}\n{}", out.stdout, out.stderr, logs.since());
    assert!(out.stdout.contains("400 operations"), "{}", out.stdout);
    let summary = std::fs::read_dir(&reports)
        .unwrap()
        .map(|e| e.unwrap().path().join("summary.json"))
        .find(|p| p.exists())
        .expect("a report with a summary");
    std::fs::read_to_string(summary).unwrap()
}

/// The messaging example (`workloads/messaging.toml`, a design of its own) at 200 users,
/// end to end through the binary against `url` with `sets`: `load` (whose summary must name
/// `backend` and each of the design's tables), `verify` of the whole, then one message
/// deleted behind verify's back, which `verify` must report as the one difference, named by
/// its key's segments; then `run` of the design's own operations (a get, a page, an index
/// lookup and a write), none failing, the write's messages there after. Its tables are
/// dropped before and after.
pub fn own_design_loads_verifies_and_misses_a_row(sets: &[&str], url: &str, backend: &str) {
    use tallrow::store::{Mutation, RowMutation, Scan, backend::Backend};
    const TABLES: [&str; 3] = ["chat:accounts", "chat:messages", "chat:conversations"];
    let workload = Path::new(env!("CARGO_MANIFEST_DIR")).join("workloads/messaging.toml");
    let workload = workload.to_str().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let logs = ClusterLogs::mark();
    // Four regions a table: the salted tables split at whole buckets.
    let mut all = vec!["data.users=200", "load.regions=4"];
    all.extend(sets);
    let parsed: Vec<tallrow::workload::Set> = all.iter().map(|s| s.parse().unwrap()).collect();
    let w = tallrow::workload::Workload::from_file_with(Path::new(workload), &parsed).unwrap();
    let open = || {
        let store = Backend::parse(url, Path::new(".")).unwrap().open().unwrap();
        tallrow::store::prefixed::over(store, &w.storage.table_prefix)
    };
    let names: Vec<String> = TABLES.iter().map(|t| t.to_string()).collect();
    let _ = drop_tables(&*open(), &names);
    let with = |args: &[&str]| -> Vec<String> {
        let mut out: Vec<String> = args.iter().map(|a| a.to_string()).collect();
        for s in &all {
            out.extend(["--set".to_string(), s.to_string()]);
        }
        out
    };
    let binary = |args: &[&str]| {
        let args = with(args);
        tallrow(dir.path(), &args.iter().map(String::as_str).collect::<Vec<_>>())
    };
    let out = binary(&["load", workload, "--backend", url]);
    assert_eq!(out.code, 0, "{}\n{}", out.stderr, logs.since());
    assert!(out.stdout.contains(backend), "{}", out.stdout);
    for t in TABLES {
        assert!(out.stdout.contains(t), "{t}: {}", out.stdout);
    }
    let out = binary(&["verify", workload, "--backend", url]);
    assert_eq!(out.code, 0, "{}\n{}\n{}", out.stdout, out.stderr, logs.since());

    let store = open();
    let there: Vec<String> = store.list_tables().unwrap().into_iter().map(|t| t.name).collect();
    for t in TABLES {
        assert!(there.iter().any(|n| n == t), "{t} made: {there:?}");
    }
    // The Bigtable emulator ignores initial splits (docs/loading.md#regions).
    for t in TABLES.iter().filter(|_| !url.starts_with("bigtable")) {
        assert_eq!(
            store.regions(t).unwrap(),
            [[4u8], [8], [12]],
            "{t}: four regions of four salt buckets each"
        );
    }
    let mut first = None;
    tallrow::store::scan_each(&*store, "chat:messages", &Scan::default(), 1, |r| {
        first = Some(r.key);
        false
    })
    .unwrap();
    let key = first.expect("a message");
    assert_eq!(key.len(), 1 + 8 + 8 + 8, "salt, reader, conversation, reversed stamp");
    let reader = i64::from_be_bytes(key[1..9].try_into().unwrap());
    let with_user = i64::from_be_bytes(key[9..17].try_into().unwrap());
    let stamp = i64::MAX - i64::from_be_bytes(key[17..25].try_into().unwrap());
    let gone = RowMutation::new(key, vec![Mutation::DeleteRow { timestamp: None }]);
    store.mutate("chat:messages", &[gone]).unwrap();
    // An embedded store has one process at a time.
    drop(store);
    let out = binary(&["verify", workload, "--backend", url]);
    assert_eq!(
        (out.code, out.stderr.trim()),
        (1, "error: 1 differences"),
        "{}\n{}\n{}",
        out.stdout,
        out.stderr,
        logs.since()
    );
    let differences: Vec<&str> = out.stdout.lines().filter(|l| l.contains(" row ")).collect();
    assert_eq!(
        differences,
        [format!(
            "missing row chat:messages reader={reader} uid={with_user} stamp={stamp}"
        )],
        "{}",
        out.stdout
    );
    // Its operations, as the design declares them and the workload's mix weighs them: each
    // runs without an error, and `send` writes messages.
    let count = |t: &str| {
        let mut n = 0u64;
        tallrow::store::scan_each(&*open(), t, &Scan::default(), 1000, |_| {
            n += 1;
            true
        })
        .unwrap();
        n
    };
    let before = count("chat:messages");
    let out = binary(&[
        "run",
        workload,
        "--backend",
        url,
        "--set",
        "run.ops=400",
        "--set",
        "run.warmup=0s",
        "--set",
        "run.threads=2",
    ]);
    assert_eq!(out.code, 0, "{}\n{}\n{}", out.stdout, out.stderr, logs.since());
    let ops = run_ops(dir.path(), &out.stdout);
    let op_names: Vec<&str> = ops.iter().map(|o| o.name.as_str()).collect();
    assert_eq!(op_names, ["account", "conversation", "inbox", "send"], "{}", out.stdout);
    // The summary marks the design's write as one, for the plots' reads and writes apart.
    let writes: Vec<bool> = ops.iter().map(|o| o.writes).collect();
    assert_eq!(writes, [false, false, false, true], "{ops:?}");
    assert!(
        ops.iter().all(|o| o.count > 0 && o.errors == 0),
        "{ops:?}\n{}",
        out.stdout
    );
    let sent = ops[3].count;
    assert!(count("chat:messages") > before, "{sent} messages sent: {}", out.stdout);
    drop_tables(&*open(), &names).unwrap();
}

/// An operation of a run's summary.json.
#[derive(Debug)]
pub struct RunOp {
    /// Its name.
    pub name: String,
    /// Operations measured.
    pub count: u64,
    /// Of them, failed.
    pub errors: u64,
    /// Whether it writes.
    pub writes: bool,
}

/// The operations of the run whose `run` printed `stdout` (its `report: DIR` line, from
/// `dir`), as its summary.json has them.
pub fn run_ops(dir: &Path, stdout: &str) -> Vec<RunOp> {
    let report = stdout
        .lines()
        .find_map(|l| l.strip_prefix("report: "))
        .unwrap_or_else(|| panic!("a report: {stdout}"));
    let summary: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join(report).join("summary.json")).unwrap()).unwrap();
    summary["ops"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| RunOp {
            name: o["op"].as_str().unwrap().to_string(),
            count: o["count"].as_u64().unwrap(),
            errors: o["errors"].as_u64().unwrap(),
            writes: o["writes"].as_bool().unwrap_or(false),
        })
        .collect()
}

/// Where each of the real cluster's logs (`TALLROW_HBASE_DIR/logs`) ended when taken: a
/// test that fails shows the warnings the cluster logged since, which go with the cluster
/// when the suite stops it.
pub struct ClusterLogs(Vec<(PathBuf, u64)>);

impl ClusterLogs {
    /// The logs' lengths now (none without a cluster).
    pub fn mark() -> Self {
        let Ok(dir) = std::env::var("TALLROW_HBASE_DIR") else {
            return ClusterLogs(Vec::new());
        };
        let names = [
            "master.log",
            "regionserver-1.log",
            "regionserver-2.log",
            "zookeeper.log",
        ];
        ClusterLogs(
            names
                .iter()
                .map(|n| Path::new(&dir).join("logs").join(n))
                .filter_map(|p| Some((p.clone(), std::fs::metadata(&p).ok()?.len())))
                .collect(),
        )
    }

    /// What each log got since the mark, by the log's file name.
    fn texts(&self) -> Vec<(String, String)> {
        use std::io::{Read, Seek, SeekFrom};
        let mut out = Vec::new();
        for (path, from) in &self.0 {
            let mut bytes = Vec::new();
            let read = std::fs::File::open(path).and_then(|mut f| {
                f.seek(SeekFrom::Start(*from))?;
                f.read_to_end(&mut bytes)
            });
            if read.is_ok() {
                let name = path.file_name().unwrap_or_default().to_string_lossy().to_string();
                out.push((name, String::from_utf8_lossy(&bytes).into_owned()));
            }
        }
        out
    }

    /// What the region servers logged since the mark; panics when the mark found neither
    /// server's log.
    pub fn region_servers_since(&self) -> String {
        let logs: Vec<String> = self
            .texts()
            .into_iter()
            .filter(|(name, _)| name.starts_with("regionserver-"))
            .map(|(_, text)| text)
            .collect();
        assert!(!logs.is_empty(), "no region server log (TALLROW_HBASE_DIR/logs)");
        logs.concat()
    }

    /// The WARN and ERROR lines logged since the mark, the last `MAX` of each log, and its
    /// last `MAX` table procedures finished and `hbase:meta` events.
    pub fn since(&self) -> String {
        const MAX: usize = 20;
        let mut out = String::new();
        for (name, text) in self.texts() {
            let lines: Vec<&str> = text
                .lines()
                .filter(|l| (l.contains(" WARN ") || l.contains(" ERROR ")) && !l.contains("MetricsConfig"))
                .collect();
            out.push_str(&format!("-- {name}: {} warnings since the mark\n", lines.len()));
            for l in &lines[lines.len().saturating_sub(MAX)..] {
                out.push_str(&l.chars().take(400).collect::<String>());
                out.push('\n');
            }
            // What happened to tables and to hbase:meta meanwhile: a read that finds no
            // table, or no region, is explained by these.
            let events: Vec<&str> = text
                .lines()
                .filter(|l| {
                    l.contains(" INFO ")
                        && ((l.contains("Finished pid=") && l.contains("TableProcedure table="))
                            || l.contains("TableRegionsProcedure")
                            || l.contains("1588230740"))
                })
                .collect();
            if !events.is_empty() {
                out.push_str(&format!(
                    "-- {name}: {} table and hbase:meta events since the mark\n",
                    events.len()
                ));
                for l in &events[events.len().saturating_sub(MAX)..] {
                    out.push_str(&l.chars().take(300).collect::<String>());
                    out.push('\n');
                }
            }
        }
        out
    }
}

/// The row writes a load of `workload` makes, counted by loading it into the `null:` store,
/// which acknowledges every write and keeps none.
pub fn row_writes(workload: &Path) -> u64 {
    row_writes_of(&tallrow::workload::Workload::from_file(workload).unwrap())
}

/// The row writes a load of `w` makes (see [`row_writes`]).
pub fn row_writes_of(w: &tallrow::workload::Workload) -> u64 {
    let g = tallrow::generate::Generator::new(w);
    let opts = tallrow::load::Options {
        shard: tallrow::load::Shard::ALL,
        progress: false,
        count_rows: false,
        checkpoint: tallrow::load::CHECKPOINT,
        opened: std::time::Duration::ZERO,
        bulk: false,
    };
    let store: Arc<dyn Store> = Arc::new(tallrow::store::null::Null::new());
    let out = tallrow::load::load(store, &g, &w.load, &opts).unwrap();
    assert!(out.error.is_none(), "{:?}", out.error);
    out.rows()
}

/// The Python of the test environment (`TALLROW_PYTHON`, else `.venv` when scripts/test.sh
/// made it); when there is none, the calling test is counted as not run (or fails, in a
/// strict suite).
pub fn python() -> Option<PathBuf> {
    let found = match std::env::var("TALLROW_PYTHON") {
        Ok(p) => Some(PathBuf::from(p)),
        Err(_) => {
            let venv = Path::new(env!("CARGO_MANIFEST_DIR")).join(".venv/bin/python");
            venv.exists().then_some(venv)
        }
    };
    if found.is_none() {
        tallrow::testkit::absent(
            "the Python test environment",
            "no TALLROW_PYTHON and no .venv (scripts/test.sh makes it)",
        );
    }
    found
}

/// `page` as headless Chromium renders it (tests/browser.py): its text, links, each chart's
/// size and what is drawn outside it, console messages and failed loads; a screenshot where
/// asked. `None` where Chromium is absent (scripts/test.sh installs Debian's).
pub fn browser(page: &Path, screenshot: Option<&Path>) -> Option<serde_json::Value> {
    let chromium = std::env::var("TALLROW_CHROMIUM").unwrap_or_else(|_| "/usr/bin/chromium".into());
    if !Path::new(&chromium).exists() {
        tallrow::testkit::absent(
            "Chromium",
            "no TALLROW_CHROMIUM and no /usr/bin/chromium (scripts/test.sh installs it)",
        );
        return None;
    }
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/browser.py");
    let mut cmd = std::process::Command::new("python3");
    cmd.arg(script).arg(page).env("CHROMIUM", &chromium);
    if let Some(s) = screenshot {
        cmd.arg("--screenshot").arg(s);
    }
    let out = cmd.output().expect("python3 runs");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    Some(serde_json::from_slice(&out.stdout).expect("browser.py prints JSON"))
}

/// A process's live metrics (`--metrics 127.0.0.1:0`), read as Prometheus reads them.
pub struct Metrics(pub String);

impl Metrics {
    pub fn scrape(&self) -> String {
        use std::io::{Read, Write};
        let mut s = std::net::TcpStream::connect(&self.0).unwrap();
        write!(s, "GET /metrics HTTP/1.0\r\nHost: {}\r\n\r\n", self.0).unwrap();
        let mut text = String::new();
        s.read_to_string(&mut text).unwrap();
        text
    }

    /// The sum of the samples of `family` whose label value contains one of `values` (every
    /// sample of it where none are given).
    pub fn sum(&self, family: &str, values: &[&str]) -> u64 {
        sum_of(&self.scrape(), family, values)
    }

    /// The retries counted so far whose kind names one of `kinds`.
    pub fn retried(&self, kinds: &[&str]) -> u64 {
        self.sum("tallrow_retries_total", kinds)
    }

    /// The cluster events of `kind` the observer has seen so far.
    pub fn events(&self, kind: &str) -> u64 {
        self.sum("tallrow_cluster_events_total", &[&format!("\"{kind}\"")])
    }

    /// Waits until `what` (a count read from the metrics) reaches `at_least`; fails naming it
    /// if it never does.
    pub fn wait_for(&self, what: &str, at_least: u64, count: impl Fn(&Metrics) -> u64) {
        let deadline = std::time::Instant::now() + WAIT_GUARD;
        loop {
            let n = count(self);
            if n >= at_least {
                return;
            }
            assert!(
                std::time::Instant::now() < deadline,
                "never came within {WAIT_GUARD:?}: {what} ({n} of {at_least}); the metrics:\n{}",
                self.scrape()
            );
            std::thread::sleep(std::time::Duration::from_millis(100));
        }
    }
}

fn sum_of(text: &str, family: &str, values: &[&str]) -> u64 {
    text.lines()
        .filter(|l| l.starts_with(family) && l[family.len()..].starts_with(['{', ' ']))
        .filter(|l| values.is_empty() || values.iter().any(|v| l.split_once(' ').unwrap().0.contains(v)))
        .filter_map(|l| l.rsplit_once(' ')?.1.parse::<f64>().ok())
        .map(|v| v as u64)
        .sum()
}

/// How long [`wait_until`] and [`Metrics::wait_for`] wait before the test fails naming what
/// never came: a guard against a hang, many times what each wait takes.
pub const WAIT_GUARD: std::time::Duration = std::time::Duration::from_secs(180);

/// Polls `cond` until it holds; fails with `what` if it has not within [`WAIT_GUARD`].
pub fn wait_until(what: &str, mut cond: impl FnMut() -> bool) {
    let deadline = std::time::Instant::now() + WAIT_GUARD;
    while !cond() {
        assert!(
            std::time::Instant::now() < deadline,
            "never came within {WAIT_GUARD:?}: {what}"
        );
        std::thread::sleep(std::time::Duration::from_millis(250));
    }
}

/// Each of `ops` (its name and a space, as the latency table starts its row) has a row in a
/// run's latency table whose last column, its errors, is 0.
pub fn ran_without_errors(stdout: &str, ops: &[&str]) {
    for op in ops {
        assert!(
            stdout
                .lines()
                .any(|l| l.starts_with(op) && l.trim_end().ends_with(" 0")),
            "{op}without errors: {stdout}"
        );
    }
}

/// `reads.toml` in `dir`: the quickstart with `mix` as its `[run.mix]` (reads alone, so that
/// no run changes what the next one reads), loaded into `embedded:db` at `users` users.
pub fn loaded_reads(dir: &Path, mix: &str, users: u32) {
    let mut w =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("workloads/quickstart.toml")).unwrap();
    w.push_str(&format!("\n[run.mix]\n{mix}\n"));
    std::fs::write(dir.join("reads.toml"), w).unwrap();
    let users = format!("data.users={users}");
    let load = tallrow(
        dir,
        &["load", "reads.toml", "--backend", "embedded:db", "--set", &users],
    );
    assert_eq!(load.code, 0, "{}", load.stderr);
}
