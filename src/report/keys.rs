//! The key-design comparison folder, `reports/<workload>-keys-<UTC>/`: one subfolder per
//! variant with its load manifest (`load.json`) and its run report, and side by side:
//!
//! - `keys.json`: every variant's keys, load rate, region skew and latencies, and the findings;
//! - `variants.csv`: per variant and table, the region skew of the load and of the run;
//! - `latency.csv`: per variant and operation, throughput and response-time percentiles;
//! - `index.html`: the findings, those tables, and each variant's heat map.
//!
//! A finding states, per table whose keys the variants change, where each variant's writes
//! (and reads) landed: the hottest region's share, which region it is, and its rows over the
//! mean.

use super::summary::{RunConfig, RunSummary};
use super::text::escape;
use super::{Error, fmt_ns, thousands};
use crate::regions::report::{TableSkew, fmt_ratio, fmt_share};
use serde::{Deserialize, Serialize};
use std::fmt::Write as _;
use std::path::Path;

/// Version of the folder's layout.
pub const FORMAT: u32 = 1;

/// `keys.json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct KeysReport {
    /// Layout version ([`FORMAT`]).
    pub format: u32,
    /// The tallrow that wrote it.
    pub tallrow: String,
    /// The workload's name.
    pub workload: String,
    /// Its file.
    pub file: String,
    /// `--backend` as given.
    pub url: String,
    /// Regions each table was asked to be created with.
    pub regions_asked: usize,
    /// When the first load began (ISO 8601, UTC).
    pub started: String,
    /// The run settings every variant ran with.
    pub config: RunConfig,
    /// In the order they ran.
    pub variants: Vec<Variant>,
    /// Where each variant's rows landed, per table the variants key differently.
    pub findings: Vec<Finding>,
}

/// One key variant's figures.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Variant {
    /// Its name.
    pub name: String,
    /// The spec it was given (`seed` for the seed layouts).
    pub spec: String,
    /// Subfolder of the comparison folder with its load manifest and run report.
    pub folder: String,
    /// The backend it ran on (its own data directory on the embedded store).
    pub backend: String,
    /// The key options of each table keyed by a design.
    pub tables: Vec<TableKeys>,
    /// The load.
    pub load: LoadFigures,
    /// The run.
    pub run: RunFigures,
}

/// A table's key options in one variant.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TableKeys {
    /// The table.
    pub table: String,
    /// The design (`actions`, `weibo`, `blog`, `series`).
    pub design: String,
    /// `order=... salt=...`.
    pub keys: String,
    /// The salt prefix: `none`, `hash` or the bucket count.
    pub salt: String,
    /// Whether the key is binary (big-endian ids) rather than text.
    pub binary: bool,
}

/// A variant's load.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LoadFigures {
    /// Row writes: the row mutations the store acknowledged (the load summary's figure).
    pub row_writes: u64,
    /// Seconds spent writing.
    pub seconds: f64,
    /// Row writes per second.
    pub row_writes_per_s: f64,
    /// Per table, how the load spread over the regions.
    pub regions: Vec<TableSkew>,
}

/// A variant's run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunFigures {
    /// Measured seconds.
    pub measured_s: f64,
    /// Successful operations per second, all operations.
    pub ops_per_s: f64,
    /// Failed operations.
    pub errors: u64,
    /// Why the run's figures cannot be trusted, when they cannot.
    pub invalid_reason: Option<String>,
    /// Per operation, then `all`.
    pub ops: Vec<OpFigures>,
    /// Per table, how the run's rows spread over the regions (warm-up included).
    pub regions: Vec<TableSkew>,
}

/// One operation's figures; latencies in nanoseconds.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct OpFigures {
    /// Operation name (or `all`).
    pub op: String,
    /// Successful operations.
    pub count: u64,
    /// Failed operations.
    pub errors: u64,
    /// Successful operations per second.
    pub ops_per_s: f64,
    /// Response-time percentiles.
    pub p50_ns: u64,
    /// 99th percentile.
    pub p99_ns: u64,
    /// 99.9th percentile.
    pub p999_ns: u64,
    /// Largest.
    pub max_ns: u64,
}

impl OpFigures {
    /// The figures of a run report's row.
    pub fn of(o: &crate::report::summary::OpReport) -> OpFigures {
        OpFigures {
            op: o.op.clone(),
            count: o.count,
            errors: o.errors,
            ops_per_s: o.ops_per_s,
            p50_ns: o.response.p50,
            p99_ns: o.response.p99,
            p999_ns: o.response.p999,
            max_ns: o.response.max,
        }
    }
}

impl RunFigures {
    /// The figures of a written run report.
    pub fn of(s: &RunSummary) -> RunFigures {
        RunFigures {
            measured_s: s.measured_s,
            ops_per_s: s.all.ops_per_s,
            errors: s.all.errors,
            invalid_reason: s.invalid_reason.clone(),
            ops: s.ops.iter().chain([&s.all]).map(OpFigures::of).collect(),
            regions: s.regions.clone(),
        }
    }
}

/// Where the variants' rows of one kind landed in one table.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Finding {
    /// The table.
    pub table: String,
    /// `writes` or `reads` (of the run).
    pub kind: String,
    /// Per variant that had such rows.
    pub entries: Vec<FindingEntry>,
    /// The finding in one paragraph.
    pub text: String,
}

/// One variant in a [`Finding`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FindingEntry {
    /// The variant.
    pub variant: String,
    /// Its key's salt prefix: `none`, `hash` or the bucket count.
    pub salt: String,
    /// Rows of this kind.
    pub rows: u64,
    /// The table's regions.
    pub regions: usize,
    /// The hottest region's share of the rows.
    pub hottest_share: f64,
    /// Which region that is, from 1 in key order.
    pub hottest_region: usize,
    /// Its rows over the mean per region.
    pub max_mean: f64,
}

impl KeysReport {
    /// Fills in the findings from the variants.
    pub fn find(&mut self) {
        self.findings = findings(&self.variants);
    }

    /// Writes `keys.json`, `variants.csv`, `latency.csv` and `index.html` into `dir`, which
    /// holds the variants' subfolders.
    pub fn write(&self, dir: &Path) -> Result<(), Error> {
        let json = serde_json::to_string_pretty(self).expect("a report serializes") + "\n";
        write(dir, "keys.json", json.as_bytes())?;
        write(dir, "variants.csv", &self.variants_csv())?;
        write(dir, "latency.csv", &self.latency_csv())?;
        write(dir, "index.html", self.html().as_bytes())
    }

    /// Tables the variants key differently, in report order.
    fn varied(&self) -> Vec<String> {
        let Some(first) = self.variants.first() else {
            return Vec::new();
        };
        first
            .tables
            .iter()
            .filter(|t| {
                self.variants.iter().any(|v| {
                    v.tables
                        .iter()
                        .find(|u| u.table == t.table)
                        .is_some_and(|u| u.keys != t.keys)
                })
            })
            .map(|t| t.table.clone())
            .collect()
    }

    fn variants_csv(&self) -> Vec<u8> {
        let mut w = csv::Writer::from_writer(Vec::new());
        w.write_record([
            "variant",
            "table",
            "keys",
            "regions",
            "load_row_writes",
            "load_write_hottest_share",
            "load_write_max_mean",
            "run_rows_written",
            "run_write_hottest_share",
            "run_write_hottest_region",
            "run_write_max_mean",
            "run_rows_read",
            "run_read_hottest_share",
            "run_read_hottest_region",
            "run_read_max_mean",
        ])
        .expect("writing to memory");
        let f = |v: Option<f64>| v.map_or(String::new(), |v| format!("{v:.6}"));
        let n = |v: Option<usize>| v.map_or(String::new(), |v| v.to_string());
        for v in &self.variants {
            for l in &v.load.regions {
                let r = v.run.regions.iter().find(|r| r.table == l.table);
                let keys = v.tables.iter().find(|t| t.table == l.table);
                w.write_record([
                    v.name.clone(),
                    l.table.clone(),
                    keys.map_or(String::new(), |k| k.keys.clone()),
                    r.map_or(l.regions, |r| r.regions).to_string(),
                    l.rows_written.to_string(),
                    f(l.write_hottest_share),
                    f(l.write_max_mean),
                    r.map_or(0, |r| r.rows_written).to_string(),
                    f(r.and_then(|r| r.write_hottest_share)),
                    n(r.and_then(|r| r.write_hottest_region)),
                    f(r.and_then(|r| r.write_max_mean)),
                    r.map_or(0, |r| r.rows_read).to_string(),
                    f(r.and_then(|r| r.read_hottest_share)),
                    n(r.and_then(|r| r.read_hottest_region)),
                    f(r.and_then(|r| r.read_max_mean)),
                ])
                .expect("writing to memory");
            }
        }
        w.into_inner().expect("writing to memory")
    }

    fn latency_csv(&self) -> Vec<u8> {
        let mut w = csv::Writer::from_writer(Vec::new());
        w.write_record([
            "variant",
            "op",
            "count",
            "errors",
            "ops_per_s",
            "p50_us",
            "p99_us",
            "p999_us",
            "max_us",
        ])
        .expect("writing to memory");
        let us = |ns: u64| format!("{:.3}", ns as f64 / 1000.0);
        for v in &self.variants {
            for o in &v.run.ops {
                w.write_record([
                    v.name.clone(),
                    o.op.clone(),
                    o.count.to_string(),
                    o.errors.to_string(),
                    format!("{:.2}", o.ops_per_s),
                    us(o.p50_ns),
                    us(o.p99_ns),
                    us(o.p999_ns),
                    us(o.max_ns),
                ])
                .expect("writing to memory");
            }
        }
        w.into_inner().expect("writing to memory")
    }

    /// The variants side by side as the terminal shows them: keys, load rate, throughput,
    /// and for each table the variants key differently, the hottest region of the run's
    /// writes and reads.
    pub fn text_table(&self) -> super::TextTable {
        let touched = |t: &String| {
            self.variants.iter().any(|v| {
                v.run
                    .regions
                    .iter()
                    .any(|r| &r.table == t && r.rows_written + r.rows_read > 0)
            })
        };
        let varied: Vec<String> = self.varied().into_iter().filter(touched).collect();
        let mut header = vec!["variant".to_string(), "load row writes/s".into(), "run ops/s".into()];
        for t in &varied {
            header.push(format!("{t} writes: hottest"));
            header.push("reads: hottest".into());
        }
        let refs: Vec<&str> = header.iter().map(String::as_str).collect();
        let mut table = super::TextTable::new(&refs);
        for v in &self.variants {
            let mut row = vec![
                v.name.clone(),
                thousands(v.load.row_writes_per_s as u64),
                format!("{:.1}", v.run.ops_per_s),
            ];
            for t in &varied {
                let r = v.run.regions.iter().find(|r| &r.table == t);
                row.push(hot(
                    r.and_then(|r| r.write_hottest_share),
                    r.and_then(|r| r.write_hottest_region),
                    r,
                ));
                row.push(hot(
                    r.and_then(|r| r.read_hottest_share),
                    r.and_then(|r| r.read_hottest_region),
                    r,
                ));
            }
            table.row(row);
        }
        table
    }

    fn html(&self) -> String {
        let mut h = String::new();
        let _ = writeln!(
            h,
            "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>tallrow: {} key designs {}</title>",
            escape(&self.workload),
            escape(&self.started)
        );
        h.push_str(
            "<style>body{font-family:sans-serif;margin:1.5em}table{border-collapse:collapse;margin-bottom:1em}\
             td,th{padding:2px 8px;text-align:right;border-bottom:1px solid #ddd}td:first-child,th:first-child{text-align:left}\
             td.l{text-align:left}.row{display:flex;flex-wrap:wrap;gap:2em;align-items:flex-start}.bad{color:#b00}</style></head><body>\n",
        );
        let c = &self.config;
        let _ = writeln!(
            h,
            "<h1>{} — key designs side by side</h1>\n<p>Started {}; backend {}; each table created with {} regions. \
             Every variant loaded the same data and then ran the same mix ({}) for {} after {:.1} s of warm-up, \
             {} threads, {}, users picked by <b>{}</b> skew.</p>",
            escape(&self.workload),
            escape(&self.started),
            escape(&self.url),
            self.regions_asked,
            escape(
                &c.run
                    .mix
                    .iter()
                    .map(|(op, w)| format!("{} {w}", op.name()))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            match c.run.ops {
                Some(n) => format!("{} operations", thousands(n)),
                None => format!("{:.1} s", c.run.duration.as_secs_f64()),
            },
            c.run.warmup.as_secs_f64(),
            c.run.threads,
            match c.run.rate {
                Some(r) => format!("open loop at {r} ops/s"),
                None => "closed loop".into(),
            },
            c.run.skew
        );
        h.push_str("<h2>Findings</h2>\n<ul>\n");
        for f in &self.findings {
            let _ = writeln!(h, "<li>{}</li>", escape(&f.text));
        }
        h.push_str(
            "</ul>\n<h2>Variants</h2>\n<table>\n<tr><th>variant</th><th>keys</th><th>row writes</th>\
                    <th>load row writes/s</th><th>run ops/s</th><th>errors</th><th>report</th></tr>\n",
        );
        for v in &self.variants {
            let keys: Vec<String> = v.tables.iter().map(|t| format!("{}: {}", t.design, t.keys)).collect();
            let _ = writeln!(
                h,
                "<tr><td>{}</td><td class=\"l\">{}</td><td>{}</td><td>{}</td><td>{:.1}</td><td>{}</td><td><a href=\"{}/index.html\">{}</a>{}</td></tr>",
                escape(&v.name),
                escape(&keys.join("; ")),
                thousands(v.load.row_writes),
                thousands(v.load.row_writes_per_s as u64),
                v.run.ops_per_s,
                thousands(v.run.errors),
                escape(&v.folder),
                escape(&v.folder),
                v.run
                    .invalid_reason
                    .as_ref()
                    .map(|why| format!(" <span class=\"bad\">INVALID: {}</span>", escape(why)))
                    .unwrap_or_default()
            );
        }
        h.push_str("</table>\n<h2>Regions</h2>\n<p>Per table, each variant's regions, how even its load landed, and where \
                    the run's writes and reads landed (warm-up included): the hottest region's share of the rows, which \
                    region it is in key order, and its rows over the mean per region (1.00 is even). Every region of \
                    every table is in the variants' <code>regions.csv</code>; all of these figures in \
                    <a href=\"variants.csv\">variants.csv</a>.</p>\n");
        let tables: Vec<String> = self
            .variants
            .first()
            .map(|v| v.load.regions.iter().map(|r| r.table.clone()).collect())
            .unwrap_or_default();
        let varied = self.varied();
        for t in tables
            .iter()
            .filter(|t| varied.contains(t))
            .chain(tables.iter().filter(|t| !varied.contains(t)))
        {
            let _ = writeln!(
                h,
                "<h3>{}{}</h3>\n<table>\n<tr><th>variant</th><th>keys</th><th>regions</th><th>load max/mean</th>\
                 <th>rows written</th><th>hottest</th><th>region</th><th>max/mean</th><th>rows read</th><th>hottest</th>\
                 <th>region</th><th>max/mean</th></tr>",
                escape(t),
                if varied.contains(t) {
                    ""
                } else {
                    " (the same keys in every variant)"
                }
            );
            for v in &self.variants {
                let load = v.load.regions.iter().find(|r| &r.table == t);
                let run = v.run.regions.iter().find(|r| &r.table == t);
                let keys = v
                    .tables
                    .iter()
                    .find(|k| &k.table == t)
                    .map_or("text uid", |k| k.keys.as_str());
                let n = |x: Option<usize>| x.map_or("-".into(), |x| x.to_string());
                let _ = writeln!(
                    h,
                    "<tr><td>{}</td><td class=\"l\">{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
                    escape(&v.name),
                    escape(keys),
                    run.or(load).map_or(0, |r| r.regions),
                    fmt_ratio(load.and_then(|r| r.write_max_mean)),
                    thousands(run.map_or(0, |r| r.rows_written)),
                    fmt_share(run.and_then(|r| r.write_hottest_share)),
                    n(run.and_then(|r| r.write_hottest_region)),
                    fmt_ratio(run.and_then(|r| r.write_max_mean)),
                    thousands(run.map_or(0, |r| r.rows_read)),
                    fmt_share(run.and_then(|r| r.read_hottest_share)),
                    n(run.and_then(|r| r.read_hottest_region)),
                    fmt_ratio(run.and_then(|r| r.read_max_mean)),
                );
            }
            h.push_str("</table>\n");
        }
        h.push_str("<h2>Latency</h2>\n<p>Response time per operation (all of them in <a href=\"latency.csv\">latency.csv</a>).</p>\n<table>\n<tr><th>operation</th>");
        for v in &self.variants {
            let _ = write!(h, "<th colspan=\"3\">{}</th>", escape(&v.name));
        }
        h.push_str("</tr>\n<tr><th></th>");
        for _ in &self.variants {
            h.push_str("<th>p50</th><th>p99</th><th>p99.9</th>");
        }
        h.push_str("</tr>\n");
        let ops: Vec<String> = self
            .variants
            .first()
            .map(|v| v.run.ops.iter().map(|o| o.op.clone()).collect())
            .unwrap_or_default();
        for op in &ops {
            let _ = write!(h, "<tr><td>{}</td>", escape(op));
            for v in &self.variants {
                match v.run.ops.iter().find(|o| &o.op == op) {
                    Some(o) => {
                        let _ = write!(
                            h,
                            "<td>{}</td><td>{}</td><td>{}</td>",
                            fmt_ns(o.p50_ns),
                            fmt_ns(o.p99_ns),
                            fmt_ns(o.p999_ns)
                        );
                    }
                    None => h.push_str("<td>-</td><td>-</td><td>-</td>"),
                }
            }
            h.push_str("</tr>\n");
        }
        h.push_str("</table>\n<h2>Heat maps</h2>\n<div class=\"row\">\n");
        for v in &self.variants {
            let _ = writeln!(
                h,
                "<figure><figcaption>{}</figcaption><img src=\"{}/regions.svg\" alt=\"rows per region and interval, {}\"></figure>",
                escape(&v.name),
                escape(&v.folder),
                escape(&v.name)
            );
        }
        h.push_str(
            "</div>\n<p>Files: <a href=\"keys.json\">keys.json</a>, <a href=\"variants.csv\">variants.csv</a>, \
                    <a href=\"latency.csv\">latency.csv</a>; per variant a folder with its load manifest \
                    (<code>load.json</code>) and its run report.</p>\n</body></html>\n",
        );
        h
    }
}

/// `41.2% (8/8)`: a share and the region that took it.
fn hot(share: Option<f64>, region: Option<usize>, r: Option<&TableSkew>) -> String {
    match (share, region, r) {
        (Some(_), Some(i), Some(r)) => format!("{} ({i}/{})", fmt_share(share), r.regions),
        _ => "-".into(),
    }
}

fn write(dir: &Path, name: &str, bytes: &[u8]) -> Result<(), Error> {
    let path = dir.join(name);
    std::fs::write(&path, bytes).map_err(|e| Error::at(&path, e))
}

/// Per table the variants key differently and kind of row the run had, where each variant's
/// rows landed.
fn findings(variants: &[Variant]) -> Vec<Finding> {
    let Some(first) = variants.first() else {
        return Vec::new();
    };
    let mut out = Vec::new();
    let mut hash_explained = false;
    for t in &first.tables {
        let varied = variants.iter().any(|v| {
            v.tables
                .iter()
                .find(|u| u.table == t.table)
                .is_some_and(|u| u.keys != t.keys)
        });
        if !varied {
            continue;
        }
        for kind in ["writes", "reads"] {
            let entries: Vec<FindingEntry> = variants
                .iter()
                .filter_map(|v| {
                    let r = v.run.regions.iter().find(|r| r.table == t.table)?;
                    let salt = v.tables.iter().find(|u| u.table == t.table)?.salt.clone();
                    let (rows, share, region, ratio) = if kind == "writes" {
                        (
                            r.rows_written,
                            r.write_hottest_share?,
                            r.write_hottest_region?,
                            r.write_max_mean?,
                        )
                    } else {
                        (
                            r.rows_read,
                            r.read_hottest_share?,
                            r.read_hottest_region?,
                            r.read_max_mean?,
                        )
                    };
                    (r.regions > 1).then(|| FindingEntry {
                        variant: v.name.clone(),
                        salt,
                        rows,
                        regions: r.regions,
                        hottest_share: share,
                        hottest_region: region,
                        max_mean: ratio,
                    })
                })
                .collect();
            if entries.is_empty() {
                continue;
            }
            let explain_hash = !hash_explained && entries.iter().any(|e| e.salt == "hash");
            hash_explained |= explain_hash;
            let text = finding_text(&t.table, kind, t.binary, &entries, explain_hash);
            out.push(Finding {
                table: t.table.clone(),
                kind: kind.into(),
                entries,
                text,
            });
        }
    }
    if out.is_empty() {
        let one = variants.iter().flat_map(|v| &v.run.regions).all(|r| r.regions <= 1);
        out.push(Finding {
            table: String::new(),
            kind: String::new(),
            entries: Vec::new(),
            text: if one {
                "Every table had one region, so every row landed in it: ask for more with --regions N.".into()
            } else {
                "The run wrote and read no rows of the tables the variants key differently.".into()
            },
        });
    }
    out
}

fn finding_text(table: &str, kind: &str, binary: bool, entries: &[FindingEntry], explain_hash: bool) -> String {
    let mut text = format!(
        "{table}, rows {} during the run: ",
        if kind == "writes" { "written" } else { "read" }
    );
    let parts: Vec<String> = entries
        .iter()
        .map(|e| {
            format!(
                "{} put {:.1}% of {} into region {} of {}{} (max/mean {:.2})",
                e.variant,
                e.hottest_share * 100.0,
                thousands(e.rows),
                e.hottest_region,
                e.regions,
                if e.hottest_region == e.regions {
                    ", the last"
                } else {
                    ""
                },
                e.max_mean
            )
        })
        .collect();
    text.push_str(&parts.join("; "));
    text.push('.');
    let even = 100.0 / entries[0].regions as f64;
    let unsalted: Vec<&FindingEntry> = entries.iter().filter(|e| e.salt == "none").collect();
    if !unsalted.is_empty() {
        let shares = unsalted.iter().map(|e| e.hottest_share * 100.0);
        let lo = shares.clone().fold(f64::INFINITY, f64::min);
        let hi = shares.fold(f64::NEG_INFINITY, f64::max);
        let _ = write!(
            text,
            " Unsalted keys ({}) put {} of them into one region{}.",
            unsalted
                .iter()
                .map(|e| e.variant.as_str())
                .collect::<Vec<_>>()
                .join(", "),
            if hi - lo < 0.05 {
                format!("{hi:.1}%")
            } else {
                format!("{lo:.1}-{hi:.1}%")
            },
            if unsalted.iter().all(|e| e.hottest_region == e.regions) {
                ", the last"
            } else {
                ""
            }
        );
    }
    let salted: Vec<String> = entries
        .iter()
        .filter(|e| e.salt != "none")
        .map(|e| format!("{} {:.1}%", e.variant, e.hottest_share * 100.0))
        .collect();
    if !salted.is_empty() {
        let _ = write!(
            text,
            " The hottest region of salted keys: {} (an even spread is {even:.1}%).",
            salted.join(", ")
        );
    }
    if explain_hash {
        text.push_str(
            " Seed 002's hash(id) is id ^ (id >>> 32), the id itself below 2^32: that prefix keeps consecutive \
             ids together and spreads only ids that are spread already, where N buckets (hash mod N) deal \
             consecutive ids out in turn.",
        );
    }
    if !binary && entries.iter().any(|e| e.salt == "none") {
        text.push_str(
            " These keys begin with the decimal uid, which sorts as text (10000 before 9999), so the newest \
             users' rows gather in one region that need not be the last.",
        );
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    fn skew(table: &str, regions: usize, written: u64, share: f64, at: usize) -> TableSkew {
        TableSkew {
            table: table.into(),
            regions,
            rows_written: written,
            rows_read: 0,
            write_hottest_share: Some(share),
            write_max_mean: Some(share * regions as f64),
            write_hottest_start: Some(String::new()),
            write_hottest_region: Some(at),
            read_hottest_share: None,
            read_max_mean: None,
            read_hottest_start: None,
            read_hottest_region: None,
        }
    }

    fn variant(name: &str, salt: &str, keys: &str, share: f64, at: usize) -> Variant {
        Variant {
            name: name.into(),
            spec: name.into(),
            folder: name.into(),
            backend: "memory".into(),
            tables: vec![TableKeys {
                table: "useractions".into(),
                design: "actions".into(),
                keys: keys.into(),
                salt: salt.into(),
                binary: true,
            }],
            load: LoadFigures {
                row_writes: 10,
                seconds: 1.0,
                row_writes_per_s: 10.0,
                regions: vec![skew("useractions", 8, 10, 0.125, 1)],
            },
            run: RunFigures {
                measured_s: 1.0,
                ops_per_s: 5.0,
                errors: 0,
                invalid_reason: None,
                ops: Vec::new(),
                regions: vec![skew("useractions", 8, 1000, share, at)],
            },
        }
    }

    #[test]
    fn a_finding_names_each_variants_hottest_region_and_sets_salted_against_unsalted() {
        let vs = [
            variant("seed", "none", "order=reverse salt=none", 0.815, 8),
            variant("forward", "none", "order=forward salt=none", 0.80, 8),
            variant("salt-16", "16", "order=reverse salt=16", 0.21, 3),
        ];
        let f = findings(&vs);
        assert_eq!(f.len(), 1, "{f:?}");
        assert_eq!(f[0].kind, "writes");
        assert_eq!(
            f[0].text,
            "useractions, rows written during the run: seed put 81.5% of 1,000 into region 8 of 8, the last \
             (max/mean 6.52); forward put 80.0% of 1,000 into region 8 of 8, the last (max/mean 6.40); salt-16 put \
             21.0% of 1,000 into region 3 of 8 (max/mean 1.68). Unsalted keys (seed, forward) put 80.0-81.5% of \
             them into one region, the last. The hottest region of salted keys: salt-16 21.0% (an even spread is \
             12.5%)."
        );
    }

    #[test]
    fn tables_keyed_alike_in_every_variant_make_no_finding() {
        let vs = [
            variant("a", "none", "order=reverse salt=none", 0.9, 8),
            variant("b", "none", "order=reverse salt=none", 0.9, 8),
        ];
        let f = findings(&vs);
        assert_eq!(f.len(), 1);
        assert!(f[0].entries.is_empty() && f[0].text.contains("no rows"), "{f:?}");
    }
}
