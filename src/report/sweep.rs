//! The `tallrow sweep` folder, beside each point's load manifest and run report:
//! - `points.csv`: per point and operation, the varied values, throughput, p50, p99, errors;
//! - `load.csv`: per point that loaded and table, row writes, rows in the table, cells and
//!   bytes written;
//! - `sweep.json`: all of it;
//! - `index.html`: per operation, throughput and p99 against the points, and both tables.

use super::text::escape;
use super::{Error, TextTable, fmt_ns, thousands};
use serde::{Deserialize, Serialize};
use std::fmt::Write as _;
use std::path::Path;

/// One operation's figures at one point: those `keys compare` keeps per variant.
pub use super::keys::OpFigures;

/// What a load wrote into one table.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TableLoad {
    /// The table.
    pub table: String,
    /// Row mutations acknowledged (a row written by several counts each).
    pub row_writes: u64,
    /// Distinct rows in the table after the load.
    pub rows_in_table: Option<u64>,
    /// Cells.
    pub cells: u64,
    /// Bytes of keys and values.
    pub bytes: u64,
}

impl TableLoad {
    /// The tables of a load manifest.
    pub fn of(m: &crate::load::Manifest) -> Vec<TableLoad> {
        m.tables
            .iter()
            .map(|(name, t)| TableLoad {
                table: name.clone(),
                row_writes: t.row_writes,
                rows_in_table: t.rows_in_table,
                cells: t.cells,
                bytes: t.bytes,
            })
            .collect()
    }
}

/// One point of the sweep.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Point {
    /// Its folder, inside the sweep folder.
    pub folder: String,
    /// The value of each varied key, in [`SweepReport::varied`] order.
    pub values: Vec<String>,
    /// Which data set it ran on (1 for the first loaded).
    pub data_set: usize,
    /// Rows per second of its load, when it loaded one.
    pub load_rows_per_s: Option<f64>,
    /// What its load wrote, per table (empty when it ran on the point before's data).
    pub tables: Vec<TableLoad>,
    /// Per operation, then `all`.
    pub ops: Vec<OpFigures>,
    /// Whether the run was valid.
    pub valid: bool,
    /// Why not, when not.
    pub invalid_reason: Option<String>,
}

/// `sweep.json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SweepReport {
    /// The workload's name.
    pub workload: String,
    /// Its file.
    pub file: String,
    /// The backend asked for.
    pub url: String,
    /// When the sweep started (ISO 8601, UTC).
    pub started: String,
    /// The varied keys.
    pub varied: Vec<String>,
    /// Every point, in the order run.
    pub points: Vec<Point>,
}

impl SweepReport {
    fn label(&self, p: &Point) -> String {
        self.varied
            .iter()
            .zip(&p.values)
            .map(|(k, v)| format!("{}={v}", k.rsplit('.').next().unwrap_or(k)))
            .collect::<Vec<_>>()
            .join(", ")
    }

    /// Per point and operation, throughput and latency.
    pub fn text_table(&self) -> TextTable {
        let mut t = TextTable::new(&["point", "operation", "ops/s", "p50", "p99", "errors"]);
        for p in &self.points {
            for o in &p.ops {
                t.row(vec![
                    self.label(p),
                    o.op.clone(),
                    format!("{:.1}", o.ops_per_s),
                    fmt_ns(o.p50_ns),
                    fmt_ns(o.p99_ns),
                    thousands(o.errors),
                ]);
            }
        }
        t
    }

    /// Writes `sweep.json`, `points.csv`, `load.csv` and `index.html` into `dir`.
    pub fn write(&self, dir: &Path) -> Result<(), Error> {
        let put = |name: &str, bytes: &[u8]| {
            let path = dir.join(name);
            std::fs::write(&path, bytes).map_err(|e| Error::at(&path, e))
        };
        let json = serde_json::to_string_pretty(self).expect("a sweep serializes") + "\n";
        put("sweep.json", json.as_bytes())?;
        let mut w = csv::Writer::from_writer(Vec::new());
        let mut header: Vec<String> = vec!["point".into()];
        header.extend(self.varied.iter().cloned());
        header.extend(["op", "count", "errors", "ops_per_s", "p50_us", "p99_us", "valid"].map(String::from));
        w.write_record(&header).expect("writing to memory");
        for p in &self.points {
            for o in &p.ops {
                let mut row = vec![p.folder.clone()];
                row.extend(p.values.iter().cloned());
                row.extend([
                    o.op.clone(),
                    o.count.to_string(),
                    o.errors.to_string(),
                    format!("{:.2}", o.ops_per_s),
                    format!("{:.3}", o.p50_ns as f64 / 1000.0),
                    format!("{:.3}", o.p99_ns as f64 / 1000.0),
                    p.valid.to_string(),
                ]);
                w.write_record(&row).expect("writing to memory");
            }
        }
        put("points.csv", &w.into_inner().expect("writing to memory"))?;
        let mut w = csv::Writer::from_writer(Vec::new());
        let mut header: Vec<String> = vec!["point".into()];
        header.extend(self.varied.iter().cloned());
        header.extend(["table", "row_writes", "rows_in_table", "cells", "bytes"].map(String::from));
        w.write_record(&header).expect("writing to memory");
        for p in &self.points {
            for t in &p.tables {
                let mut row = vec![p.folder.clone()];
                row.extend(p.values.iter().cloned());
                row.extend([
                    t.table.clone(),
                    t.row_writes.to_string(),
                    t.rows_in_table.map(|n| n.to_string()).unwrap_or_default(),
                    t.cells.to_string(),
                    t.bytes.to_string(),
                ]);
                w.write_record(&row).expect("writing to memory");
            }
        }
        put("load.csv", &w.into_inner().expect("writing to memory"))?;
        put("index.html", self.html().as_bytes())
    }

    fn html(&self) -> String {
        let mut h = String::new();
        let _ = writeln!(
            h,
            "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>tallrow sweep: {} {}</title>\
             <style>body{{font-family:sans-serif;margin:1.5em}}table{{border-collapse:collapse}}\
             td,th{{padding:2px 8px;text-align:right;border-bottom:1px solid #ddd}}td:first-child,th:first-child{{text-align:left}}\
             .row{{display:flex;flex-wrap:wrap;gap:1em}}</style></head><body>\n<h1>{} — sweep of {}</h1>\n<p>{} points against {}; started {}.</p>",
            escape(&self.workload),
            escape(&self.started),
            escape(&self.workload),
            escape(&self.varied.join(" × ")),
            self.points.len(),
            escape(&self.url),
            escape(&self.started)
        );
        let ops: Vec<&str> = self
            .points
            .first()
            .map(|p| p.ops.iter().map(|o| o.op.as_str()).collect())
            .unwrap_or_default();
        h.push_str("<h2>Throughput and p99 per operation</h2>\n<div class=\"row\">\n");
        for op in &ops {
            h.push_str(&self.chart(op));
        }
        h.push_str("</div>\n<h2>Points</h2>\n<table>\n<tr><th>point</th><th>operation</th><th>ops/s</th><th>p50</th><th>p99</th><th>errors</th></tr>\n");
        for p in &self.points {
            for o in &p.ops {
                let _ = writeln!(
                    h,
                    "<tr><td><a href=\"{}/run/index.html\">{}</a></td><td>{}</td><td>{:.1}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
                    escape(&p.folder),
                    escape(&self.label(p)),
                    escape(&o.op),
                    o.ops_per_s,
                    fmt_ns(o.p50_ns),
                    fmt_ns(o.p99_ns),
                    thousands(o.errors)
                );
            }
        }
        h.push_str("</table>\n<h2>Loads</h2>\n<table>\n<tr><th>point</th><th>table</th><th>row writes</th><th>rows in table</th><th>cells</th><th>bytes</th></tr>\n");
        for p in &self.points {
            for t in &p.tables {
                let _ = writeln!(
                    h,
                    "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
                    escape(&self.label(p)),
                    escape(&t.table),
                    thousands(t.row_writes),
                    t.rows_in_table.map_or("-".into(), thousands),
                    thousands(t.cells),
                    thousands(t.bytes)
                );
            }
        }
        h.push_str("</table>\n<p>Files: <a href=\"points.csv\">points.csv</a>, <a href=\"load.csv\">load.csv</a>, <a href=\"sweep.json\">sweep.json</a>; each point's load manifest and run report in its folder.</p>\n</body></html>\n");
        h
    }

    /// One operation's throughput (bars, left scale) and p99 (line, right log scale) at
    /// every point.
    fn chart(&self, op: &str) -> String {
        let (w, hgt, left, right, top, bottom) = (420.0, 260.0, 60.0, 60.0, 28.0, 70.0);
        let (pw, ph) = (w - left - right, hgt - top - bottom);
        let figures: Vec<Option<&OpFigures>> = self.points.iter().map(|p| p.ops.iter().find(|o| o.op == op)).collect();
        let n = figures.len().max(1) as f64;
        let rate_max = figures.iter().flatten().map(|o| o.ops_per_s).fold(1.0f64, f64::max) * 1.1;
        let (lo, hi) = figures
            .iter()
            .flatten()
            .map(|o| o.p99_ns.max(1))
            .fold((u64::MAX, 1), |(lo, hi), v| (lo.min(v), hi.max(v)));
        let y_lo = (lo.min(hi) as f64).log10().floor();
        let y_hi = (hi as f64).log10().ceil().max(y_lo + 1.0);
        let x = |i: usize| left + (i as f64 + 0.5) / n * pw;
        let rate_y = |r: f64| top + ph - r / rate_max * ph;
        let lat_y = |ns: u64| top + ph - ((ns.max(1) as f64).log10() - y_lo) / (y_hi - y_lo) * ph;
        let mut s = String::new();
        let _ = writeln!(
            s,
            r#"<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{hgt}" viewBox="0 0 {w} {hgt}" font-family="sans-serif" font-size="11"><text x="{:.1}" y="16" font-size="13" text-anchor="middle">{}</text><rect x="{left}" y="{top}" width="{pw}" height="{ph}" fill="white" stroke="black"/>"#,
            left + pw / 2.0,
            escape(op)
        );
        let bar = pw / n * 0.6;
        let mut line = Vec::new();
        for (i, f) in figures.iter().enumerate() {
            let label = escape(&self.label(&self.points[i]));
            let _ = writeln!(
                s,
                r#"<text transform="translate({:.1} {:.1}) rotate(30)" font-size="10">{label}</text>"#,
                x(i) - 4.0,
                top + ph + 12.0
            );
            let Some(f) = f else { continue };
            let _ = writeln!(
                s,
                r##"<rect x="{:.1}" y="{:.1}" width="{bar:.1}" height="{:.1}" fill="#9ecae1"><title>{label}: {:.1} ops/s</title></rect>"##,
                x(i) - bar / 2.0,
                rate_y(f.ops_per_s),
                top + ph - rate_y(f.ops_per_s),
                f.ops_per_s
            );
            line.push(format!("{:.1},{:.1}", x(i), lat_y(f.p99_ns)));
            let _ = writeln!(
                s,
                r##"<circle cx="{:.1}" cy="{:.1}" r="3" fill="#d62728"><title>{label}: p99 {}</title></circle>"##,
                x(i),
                lat_y(f.p99_ns),
                fmt_ns(f.p99_ns)
            );
        }
        let _ = writeln!(
            s,
            r##"<polyline fill="none" stroke="#d62728" stroke-width="1.5" points="{}"/>"##,
            line.join(" ")
        );
        let _ = writeln!(
            s,
            r##"<text x="{:.1}" y="{:.1}" text-anchor="end" fill="#3182bd">{:.0} ops/s</text><text x="{:.1}" y="{:.1}" text-anchor="end" fill="#3182bd">0</text>"##,
            left - 4.0,
            top + ph * 0.1 + 4.0,
            rate_max / 1.1 * 1.0,
            left - 4.0,
            top + ph
        );
        for e in (y_lo as i32)..=(y_hi as i32) {
            let ns = 10u64.pow(e.max(0) as u32);
            let _ = writeln!(
                s,
                r##"<text x="{:.1}" y="{:.1}" fill="#d62728">{}</text>"##,
                left + pw + 4.0,
                lat_y(ns) + 4.0,
                fmt_ns(ns)
            );
        }
        s.push_str("</svg>\n");
        s
    }
}
