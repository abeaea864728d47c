//! Per-table progress bars on a terminal; nothing at all in pipes and CI.

use crate::generate::Table;
use indicatif::{MultiProgress, ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::io::IsTerminal;

/// Whether progress should be drawn: stderr is a terminal and `CI` is not set.
pub fn wanted() -> bool {
    std::io::stderr().is_terminal() && std::env::var_os("CI").is_none()
}

/// One bar per table; each bar's length is an estimate that tightens as blocks finish.
pub struct Progress {
    bars: Vec<Option<ProgressBar>>,
    _multi: Option<MultiProgress>,
}

impl Progress {
    /// Bars for `tables`, drawn only when `show` is set.
    pub fn new(tables: &[Table], show: bool) -> Self {
        if !show {
            return Progress {
                bars: vec![None; crate::generate::MAX_TABLES],
                _multi: None,
            };
        }
        let multi = MultiProgress::with_draw_target(ProgressDrawTarget::stderr_with_hz(5));
        let style = ProgressStyle::with_template(
            "{prefix:>16} {bar:24.cyan/blue} {human_pos:>11}/{human_len:<11} rows {per_sec:>14} ETA {eta}",
        )
        .expect("valid template")
        .progress_chars("=> ");
        let mut bars = vec![None; crate::generate::MAX_TABLES];
        for &t in tables {
            let bar = multi.add(ProgressBar::new(0).with_style(style.clone()).with_prefix(t.name()));
            bars[t.index()] = Some(bar);
        }
        Progress {
            bars,
            _multi: Some(multi),
        }
    }

    /// `rows` more rows of `table` are written.
    pub fn add(&self, table: Table, rows: u64) {
        if let Some(bar) = &self.bars[table.index()] {
            bar.inc(rows);
        }
    }

    /// `done` of `total` blocks are finished: re-estimate every bar's length.
    pub fn blocks(&self, done: u64, total: u64) {
        for bar in self.bars.iter().flatten() {
            let pos = bar.position();
            let estimate = (pos * total).checked_div(done).unwrap_or(pos);
            bar.set_length(estimate.max(pos));
        }
    }

    /// Clears the bars.
    pub fn finish(&self) {
        for bar in self.bars.iter().flatten() {
            bar.finish_and_clear();
        }
    }
}
