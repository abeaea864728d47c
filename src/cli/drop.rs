//! `tallrow drop`: the tables a workload creates, dropped only where tallrow's mark says
//! that workload made them, and what it did, table by table.

use super::DropArgs;
use crate::generate::Generator;
use crate::report::TextTable;
use crate::store::{Error, MARK_DATA, MARK_WORKLOAD, prefixed};
use anyhow::bail;
use std::io::Write;
use std::process::ExitCode;

/// What is known of one of the workload's tables on the target.
enum Found {
    Missing,
    /// Marked as made by this workload, with its data digest.
    Ours(String),
    /// Marked by another workload.
    Theirs(String),
    Unmarked,
}

pub(super) fn drop(args: DropArgs) -> anyhow::Result<ExitCode> {
    let (w, store) = args.target.open(&[])?;
    let g = Generator::new(&w);
    let prefix = &w.storage.table_prefix;
    let mut found = Vec::new();
    // Every table is looked at before any is dropped: a refusal drops nothing.
    for t in g.tables() {
        let f = match store.describe_table(&t.name) {
            Err(Error::TableNotFound(_)) => Found::Missing,
            Err(e) => bail!("table {}: {e}", prefixed::physical(prefix, &t.name)),
            Ok(d) => match d.attribute(MARK_WORKLOAD) {
                Some(name) if name == w.name => Found::Ours(d.attribute(MARK_DATA).unwrap_or("").to_string()),
                Some(name) => Found::Theirs(name.to_string()),
                None => Found::Unmarked,
            },
        };
        found.push((t.name, f));
    }
    let refused: Vec<String> = found
        .iter()
        .filter_map(|(name, f)| {
            let on = prefixed::physical(prefix, name);
            match f {
                Found::Theirs(other) => Some(format!("{on} (made by workload {other})")),
                Found::Unmarked => Some(format!("{on} (no mark)")),
                _ => None,
            }
        })
        .collect();
    if !refused.is_empty() && !args.force {
        bail!(
            "{} of {}'s tables on {} {} not marked as made by it: {}; nothing was dropped (--force drops them anyway{})",
            refused.len(),
            w.name,
            store.identity(),
            if refused.len() == 1 { "is" } else { "are" },
            refused.join(", "),
            if found.iter().any(|(_, f)| matches!(f, Found::Theirs(_))) {
                ""
            } else {
                "; tables made through Thrift1 or in Bigtable, or by a tallrow before marks, carry none"
            }
        );
    }
    let digest = w.data_digest();
    let mut table = TextTable::new(&["table", "on the target", "mark", "done"]);
    let mut dropped = 0;
    for (name, f) in &found {
        let on = prefixed::physical(prefix, name);
        let (mark, drop) = match f {
            Found::Missing => ("-".to_string(), false),
            Found::Ours(d) if *d == digest => (format!("{} (this data)", w.name), true),
            Found::Ours(_) => (format!("{} (other data)", w.name), true),
            Found::Theirs(other) => (format!("{other} (forced)"), true),
            Found::Unmarked => ("none (forced)".to_string(), true),
        };
        let done = if drop {
            match store.delete_table(name) {
                Ok(()) => {
                    dropped += 1;
                    "dropped"
                }
                // Dropped by someone else meanwhile.
                Err(Error::TableNotFound(_)) => "not there",
                Err(e) => bail!("cannot drop table {on}: {e} (dropped {dropped} before it)"),
            }
        } else {
            "not there"
        };
        table.row(vec![name.clone(), on, mark, done.to_string()]);
    }
    let mut o = std::io::stdout().lock();
    writeln!(o, "dropped {dropped} of {}'s tables from {}", w.name, store.identity())?;
    write!(o, "{}", table.render())?;
    Ok(ExitCode::SUCCESS)
}
