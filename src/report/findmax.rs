//! The `run --find-max` folder, beside each step's own run report:
//! - `steps.csv`: per step its target rate, achieved rate, validity, and each target's figure;
//! - `findmax.json`: the settings, the steps and the answer;
//! - `index.html`: the answer, response time (p99 of all operations) against achieved
//!   throughput for every step, and the steps' table with links to their reports.

use super::summary::Verdict;
use super::text::escape;
use serde::{Deserialize, Serialize};
use std::fmt::Write as _;
use std::path::Path;

/// One measured step.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Step {
    /// Its report folder, inside the find-max folder.
    pub folder: String,
    /// The open-loop rate asked for; `None` for the closed-loop probe.
    pub target_ops_per_s: Option<f64>,
    /// Successful operations per second.
    pub achieved_ops_per_s: f64,
    /// Whether the run was valid (95% of operations on time).
    pub valid: bool,
    /// Why not, when not.
    pub invalid_reason: Option<String>,
    /// Whether it was valid and met every target.
    pub holds: bool,
    /// p99 response time of all operations (ns).
    pub p99_ns: u64,
    /// The targets' verdicts.
    pub verdicts: Vec<Verdict>,
}

/// `findmax.json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FindMax {
    /// The workload.
    pub workload: String,
    /// The backend's identity.
    pub backend: String,
    /// When the search started (ISO 8601, UTC).
    pub started: String,
    /// Worker threads.
    pub threads: usize,
    /// Measured seconds per step, after its warm-up.
    pub step_s: f64,
    /// Warm-up seconds per step.
    pub warmup_s: f64,
    /// How close the answer is to the lowest rate that failed, as a fraction of it.
    pub precision: f64,
    /// The targets, as given.
    pub targets: Vec<String>,
    /// Every step, in the order run: the probe first.
    pub steps: Vec<Step>,
    /// The highest rate that held (ops/s, as asked for), when one did.
    pub max_ops_per_s: Option<f64>,
    /// Its step, an index into `steps`.
    pub best_step: Option<usize>,
}

impl FindMax {
    /// The answer in one line.
    pub fn answer(&self) -> String {
        match self.best_step.map(|i| &self.steps[i]) {
            Some(best) => {
                let figures: Vec<String> = if best.verdicts.is_empty() {
                    vec![format!("all p99 {}", super::fmt_ns(best.p99_ns))]
                } else {
                    best.verdicts
                        .iter()
                        .map(|v| {
                            let what = v.target.split(['<', '>']).next().unwrap_or("").trim().to_string();
                            format!("{what} {}", v.measured.as_deref().unwrap_or("-"))
                        })
                        .collect()
                };
                format!(
                    "max sustainable rate: {} ops/s ({})",
                    super::thousands(self.max_ops_per_s.unwrap_or(0.0).round() as u64),
                    figures.join(", ")
                )
            }
            None => "no rate tried held the targets".to_string(),
        }
    }

    /// Writes `steps.csv`, `findmax.json` and `index.html` into `dir` (which exists).
    pub fn write(&self, dir: &Path) -> std::io::Result<()> {
        std::fs::write(dir.join("steps.csv"), self.csv())?;
        let json = serde_json::to_string_pretty(self).expect("serializable");
        std::fs::write(dir.join("findmax.json"), json + "\n")?;
        std::fs::write(dir.join("index.html"), self.html())
    }

    fn csv(&self) -> Vec<u8> {
        let mut w = csv::Writer::from_writer(Vec::new());
        let mut header: Vec<String> = [
            "step",
            "folder",
            "target_ops_per_s",
            "achieved_ops_per_s",
            "valid",
            "holds",
            "all_p99_us",
        ]
        .map(String::from)
        .to_vec();
        header.extend(self.targets.iter().cloned());
        w.write_record(&header).expect("writing to memory");
        for (i, s) in self.steps.iter().enumerate() {
            let mut row = vec![
                i.to_string(),
                s.folder.clone(),
                s.target_ops_per_s.map(|r| format!("{r:.2}")).unwrap_or_default(),
                format!("{:.2}", s.achieved_ops_per_s),
                s.valid.to_string(),
                s.holds.to_string(),
                format!("{:.3}", s.p99_ns as f64 / 1000.0),
            ];
            row.extend(s.verdicts.iter().map(|v| v.measured.clone().unwrap_or_default()));
            w.write_record(&row).expect("writing to memory");
        }
        w.into_inner().expect("writing to memory")
    }

    fn html(&self) -> String {
        let mut h = String::new();
        let _ = writeln!(
            h,
            "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>tallrow find-max: {} {}</title>\
             <style>body{{font-family:sans-serif;margin:1.5em}}table{{border-collapse:collapse}}\
             td,th{{padding:2px 8px;text-align:right;border-bottom:1px solid #ddd}}td:first-child,th:first-child{{text-align:left}}\
             .bad{{color:#b00}}</style></head><body>",
            escape(&self.workload),
            escape(&self.started)
        );
        let _ = writeln!(
            h,
            "<h1>{} — the highest rate that holds</h1>\n<p><b>{}</b></p>\n<p>backend {}; {} threads; steps of {:.0} s after {:.0} s of warm-up; precision {:.0}%; targets: {}.</p>",
            escape(&self.workload),
            escape(&self.answer()),
            escape(&self.backend),
            self.threads,
            self.step_s,
            self.warmup_s,
            self.precision * 100.0,
            if self.targets.is_empty() {
                "none (validity only)".to_string()
            } else {
                escape(&self.targets.join(", "))
            }
        );
        h.push_str(&self.svg());
        h.push_str(
            "<table>\n<tr><th>step</th><th>target ops/s</th><th>achieved ops/s</th><th>valid</th><th>all p99</th>",
        );
        for t in &self.targets {
            let _ = write!(h, "<th>{}</th>", escape(t));
        }
        h.push_str("<th>holds</th></tr>\n");
        for (i, s) in self.steps.iter().enumerate() {
            let _ = write!(
                h,
                "<tr><td><a href=\"{}/index.html\">{i}: {}</a></td><td>{}</td><td>{:.1}</td><td{}>{}</td><td>{}</td>",
                escape(&s.folder),
                escape(&s.folder),
                s.target_ops_per_s
                    .map(|r| format!("{r:.1}"))
                    .unwrap_or_else(|| "closed loop".into()),
                s.achieved_ops_per_s,
                if s.valid { "" } else { " class=\"bad\"" },
                if s.valid { "yes" } else { "no" },
                super::fmt_ns(s.p99_ns)
            );
            for v in &s.verdicts {
                let _ = write!(
                    h,
                    "<td{}>{}</td>",
                    if v.held { "" } else { " class=\"bad\"" },
                    escape(v.measured.as_deref().unwrap_or("-"))
                );
            }
            let _ = writeln!(
                h,
                "<td{}>{}</td></tr>",
                if s.holds { "" } else { " class=\"bad\"" },
                if s.target_ops_per_s.is_none() {
                    "probe"
                } else if s.holds {
                    "yes"
                } else {
                    "no"
                }
            );
        }
        h.push_str("</table>\n<p>Files: <a href=\"steps.csv\">steps.csv</a>, <a href=\"findmax.json\">findmax.json</a>; each step's report in its folder.</p>\n</body></html>\n");
        h
    }

    /// p99 of all operations (log scale) against achieved throughput, a point per step:
    /// green where the step held, red where it did not, the probe hollow.
    fn svg(&self) -> String {
        let (w, hgt, left, right, top, bottom) = (760.0, 420.0, 70.0, 20.0, 30.0, 50.0);
        let (pw, ph) = (w - left - right, hgt - top - bottom);
        let x_max = self.steps.iter().map(|s| s.achieved_ops_per_s).fold(1.0f64, f64::max) * 1.08;
        let (lo, hi) = self
            .steps
            .iter()
            .map(|s| s.p99_ns.max(1))
            .fold((u64::MAX, 1), |(lo, hi), v| (lo.min(v), hi.max(v)));
        let y_lo = (lo.min(hi) as f64).log10().floor();
        let y_hi = (hi as f64).log10().ceil().max(y_lo + 1.0);
        let px = |r: f64| left + r / x_max * pw;
        let py = |ns: u64| top + ph - ((ns.max(1) as f64).log10() - y_lo) / (y_hi - y_lo) * ph;
        let mut s = String::new();
        let _ = writeln!(
            s,
            r#"<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{hgt}" viewBox="0 0 {w} {hgt}" font-family="sans-serif" font-size="12">"#
        );
        let _ = writeln!(
            s,
            r#"<rect x="{left}" y="{top}" width="{pw}" height="{ph}" fill="white" stroke="black"/>"#
        );
        for e in (y_lo as i32)..=(y_hi as i32) {
            let y = py(10u64.pow(e.max(0) as u32));
            let _ = writeln!(
                s,
                r##"<line x1="{left}" y1="{y:.1}" x2="{:.1}" y2="{y:.1}" stroke="#eee"/><text x="{:.1}" y="{:.1}" text-anchor="end">{}</text>"##,
                left + pw,
                left - 6.0,
                y + 4.0,
                super::fmt_ns(10u64.pow(e.max(0) as u32))
            );
        }
        for k in 0..=4 {
            let r = x_max * f64::from(k) / 4.0;
            let x = px(r);
            let _ = writeln!(
                s,
                r#"<text x="{x:.1}" y="{:.1}" text-anchor="middle">{:.0}</text>"#,
                top + ph + 18.0,
                r
            );
        }
        let _ = writeln!(
            s,
            r#"<text x="{:.1}" y="{:.1}" text-anchor="middle">achieved operations per second</text><text transform="translate(16 {:.1}) rotate(-90)" text-anchor="middle">p99, all operations</text>"#,
            left + pw / 2.0,
            hgt - 8.0,
            top + ph / 2.0
        );
        for (i, st) in self.steps.iter().enumerate() {
            let (x, y) = (px(st.achieved_ops_per_s), py(st.p99_ns));
            let color = if st.holds { "#2ca02c" } else { "#d62728" };
            let fill = if st.target_ops_per_s.is_none() { "white" } else { color };
            let _ = writeln!(
                s,
                r#"<circle cx="{x:.1}" cy="{y:.1}" r="5" fill="{fill}" stroke="{color}"><title>step {i}: {:.1} ops/s, p99 {}</title></circle><text x="{:.1}" y="{:.1}">{i}</text>"#,
                st.achieved_ops_per_s,
                super::fmt_ns(st.p99_ns),
                x + 7.0,
                y - 6.0
            );
        }
        s.push_str("</svg>\n");
        s
    }
}
