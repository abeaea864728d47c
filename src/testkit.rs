//! What the test suites share about the components some tests need (real HBase, the Bigtable
//! emulator, the Kerberized gateways, a Kubernetes control plane, the Python environment, a
//! `kerberos` build): a test that finds its component absent calls [`absent`] before it
//! returns, so that no test passes by doing nothing unseen.
//!
//! - Under `TALLROW_STRICT` (which `scripts/test.sh` sets in CI and with `--strict`) the test
//!   fails, naming the component.
//! - Otherwise the test is recorded as one line, `component<TAB>test`, appended to the file
//!   `TALLROW_SKIPS` names, and `scripts/test.sh` counts those lines aloud after the suite
//!   (`N tests did not run: ...`). Without the variable the component is named once on
//!   standard error.

use std::io::Write;
use std::sync::Mutex;

/// Whether the suite runs strict: every component it needs must be there.
pub fn strict() -> bool {
    std::env::var_os("TALLROW_STRICT").is_some_and(|v| !v.is_empty() && v != "0")
}

/// Says that the calling test does not run (or runs only in part) because `component` is
/// absent; `why` says what was missing and how to get it. Panics under `TALLROW_STRICT`.
pub fn absent(component: &str, why: &str) {
    if strict() {
        panic!("{component} is not there, and the suite runs strict (TALLROW_STRICT): {why}");
    }
    static SAID: Mutex<Vec<String>> = Mutex::new(Vec::new());
    let test = std::thread::current().name().unwrap_or("?").to_string();
    let mut said = SAID.lock().unwrap_or_else(|e| e.into_inner());
    let first_for_component = !said.iter().any(|s| s.starts_with(&format!("{component}\t")));
    let line = format!("{component}\t{test}");
    if said.contains(&line) {
        return;
    }
    said.push(line.clone());
    match std::env::var_os("TALLROW_SKIPS").filter(|p| !p.is_empty()) {
        Some(path) => {
            // One short line in append mode: lines from test processes side by side stay whole.
            let written = std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(&path)
                .and_then(|mut f| f.write_all(format!("{line}\n").as_bytes()));
            if let Err(e) = written {
                panic!("cannot record a skipped test in {}: {e}", path.to_string_lossy());
            }
        }
        None if first_for_component => eprintln!("{why}: the tests that need {component} do not run"),
        None => {}
    }
}
