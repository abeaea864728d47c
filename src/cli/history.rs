//! `tallrow history`: many runs' reports as series with their change points, on the terminal
//! and as `history.html`, `history.json`, `history.md` and `history.csv` in a folder of its
//! own.

use super::HistoryArgs;
use crate::report::history;
use crate::stats::changepoint;
use anyhow::Context;
use std::io::Write;
use std::process::ExitCode;

pub(super) fn history(args: HistoryArgs) -> anyhow::Result<ExitCode> {
    let o = changepoint::Options {
        window: args.window,
        max_pvalue: args.p_value,
        min_magnitude: args.magnitude,
        logarithms: false,
    };
    let acked = match &args.acknowledged {
        Some(f) => history::acknowledged(f).map_err(|e| anyhow::anyhow!(e))?,
        None => Vec::new(),
    };
    let mut h = history::history(&args.dirs, &o, args.key.as_deref());
    if let Some(within) = args.fail_within {
        h.gate = h.gate(within, args.fail_above, &acked);
    }
    if h.groups.is_empty() {
        let why: Vec<String> = h.left_out.iter().map(|l| format!("{}: {}", l.dir, l.why)).collect();
        anyhow::bail!("no run to make a history of ({})", why.join("; "));
    }
    let mut out = std::io::stdout().lock();
    write!(out, "{}", h.markdown())?;
    let dir = history::folder(&args.reports, crate::store::now_millis());
    std::fs::create_dir_all(&dir).with_context(|| format!("cannot create {}", dir.display()))?;
    let json = serde_json::to_string_pretty(&h).expect("serializable") + "\n";
    let mut files = vec![
        ("history.json", json),
        ("history.md", h.markdown()),
        ("history.html", crate::report::history_page::page(&h, &dir)),
    ];
    if let Some(csv) = h.csv() {
        files.push(("history.csv", csv));
    }
    for (name, text) in files {
        let path = dir.join(name);
        std::fs::write(&path, text).with_context(|| format!("cannot write {}", path.display()))?;
    }
    writeln!(out, "\nhistory: {}", dir.join("history.md").display())?;
    Ok(match &h.gate {
        Some(g) if g.verdict == "regression" => ExitCode::from(history::EXIT_REGRESSION),
        _ => ExitCode::SUCCESS,
    })
}
