//! Shared helpers: backends under test behind one harness trait, the built binary, and the
//! fixtures.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;
use tallrow::store::{Store, embedded::Embedded, memory::Memory};

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
        let store = self.store.take().expect("open");
        assert_eq!(
            Arc::strong_count(&store),
            1,
            "a test kept a store handle across restart"
        );
        drop(store);
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
    let out = Command::new(env!("CARGO_BIN_EXE_tallrow"))
        .current_dir(dir)
        .env("CI", "1")
        .args(args)
        .output()
        .unwrap();
    Out {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8(out.stdout).unwrap(),
        stderr: String::from_utf8(out.stderr).unwrap(),
    }
}

/// `tests/fixtures/small.toml`: a few hundred users with every design.
pub fn small_fixture() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/small.toml")
}
