//! The `tallrow` binary: parses the command line and maps errors to an exit code.

use clap::error::ErrorKind;
use std::process::ExitCode;

// Loads and serving allocate a value or key per cell; glibc's malloc spends a third of
// generation time and most of a serve connection's decode time there.
#[global_allocator]
static ALLOC: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    let cli = match tallrow::cli::parse() {
        Ok(cli) => cli,
        Err(e) if matches!(e.kind(), ErrorKind::DisplayHelp | ErrorKind::DisplayVersion) => e.exit(),
        Err(e) if e.kind() == ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand => e.exit(),
        Err(e) => {
            // One line: what is wrong and where. Clap's first paragraph says it, listing
            // missing arguments on indented lines; its usage hint follows a blank line.
            let text = e.to_string();
            let first: Vec<&str> = text
                .lines()
                .take_while(|l| !l.trim().is_empty())
                .map(str::trim)
                .collect();
            let line = first.join(" ");
            eprintln!(
                "{}",
                if line.is_empty() {
                    "error: invalid arguments".into()
                } else {
                    line
                }
            );
            return ExitCode::from(2);
        }
    };
    let result = tallrow::cli::run(cli);
    // Before the exit tears down the Kerberos library: no renewal may be inside it then.
    tallrow::secure::quiesce();
    match result {
        Ok(code) => code,
        Err(err) => {
            eprintln!("error: {err:#}");
            if let Some(tallrow::session::StartAt::Late { .. }) = err.downcast_ref() {
                ExitCode::from(tallrow::session::EXIT_LATE)
            } else {
                ExitCode::FAILURE
            }
        }
    }
}
