//! The latency plot (`latency.svg`: one percentile curve per operation, both axes on log
//! scales, as HdrHistogram's plotter draws them), the plot over time (`timeseries.svg`:
//! throughput, p50 and p99 per interval, so that a stall shows where it happened) and
//! `index.html`, which shows them with the table of figures.

use super::cluster::Mark;
use super::summary::{ALL, OpReport, RunSummary};
use super::text::escape;
use crate::stats::Histogram;
use std::fmt::Write as _;

pub(super) const W: f64 = 900.0;
const H: f64 = 520.0;
pub(super) const LEFT: f64 = 70.0;
pub(super) const RIGHT: f64 = 190.0;
pub(super) const TOP: f64 = 40.0;
pub(super) const BOTTOM: f64 = 50.0;
pub(super) const COLORS: [&str; 18] = [
    "#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf",
    "#393b79", "#ad494a", "#637939", "#8c6d31", "#843c39", "#7b4173", "#3182bd", "#e6550d",
];

/// Operations drawn on one axis before the plots split them: past it, colours come too
/// close to tell apart.
const MOST_PER_PANEL: usize = 8;

/// The operations of `names` in panels: one when they are few, else the reads and the
/// writes apart (each with `all`, for scale), and each group past [`MOST_PER_PANEL`] in
/// panels of its own. Each panel is (title, indexes into `names`).
fn panels(names: &[&str], writers: &[&str]) -> Vec<(String, Vec<usize>)> {
    let all: Vec<usize> = (0..names.len()).filter(|&i| names[i] == ALL).collect();
    let ops: Vec<usize> = (0..names.len()).filter(|&i| names[i] != ALL).collect();
    if ops.len() <= MOST_PER_PANEL {
        return vec![(String::new(), (0..names.len()).collect())];
    }
    let writes = |i: &usize| writers.contains(&names[*i]);
    let mut out = Vec::new();
    for (kind, group) in [
        ("reads", ops.iter().copied().filter(|i| !writes(i)).collect::<Vec<_>>()),
        ("writes", ops.iter().copied().filter(writes).collect()),
    ] {
        let parts = group.len().div_ceil(MOST_PER_PANEL).max(1);
        let per = group.len().div_ceil(parts).max(1);
        for (k, chunk) in group.chunks(per).enumerate() {
            let title = if parts > 1 {
                format!("{kind} ({}/{parts})", k + 1)
            } else {
                kind.to_string()
            };
            out.push((title, chunk.iter().copied().chain(all.iter().copied()).collect()));
        }
    }
    out
}

/// The plot of `curves` (name, response-time histogram in ns): one panel, or, for many
/// operations, panels stacked on the same axes ([`panels`]), those named in `writes` apart.
pub fn svg(curves: &[(String, Histogram)], writes: &[&str], title: &str) -> String {
    let curves: Vec<&(String, Histogram)> = curves.iter().filter(|(_, h)| !h.is_empty()).collect();
    let count = curves.iter().map(|(_, h)| h.len()).max().unwrap_or(1);
    // x: log10(1 / (1 - q)), out to the decade the largest count resolves (99.9% needs 1,000).
    let x_max = ((count as f64).log10().floor()).clamp(1.0, 6.0);
    let lo = curves.iter().map(|(_, h)| h.min()).min().unwrap_or(1).max(1) as f64;
    let hi = curves.iter().map(|(_, h)| h.max()).max().unwrap_or(10).max(10) as f64;
    let (y_lo, y_hi) = (lo.log10().floor(), hi.log10().ceil().max(lo.log10().floor() + 1.0));
    let names: Vec<&str> = curves.iter().map(|(n, _)| n.as_str()).collect();
    let panels = panels(&names, writes);
    let pw = W - LEFT - RIGHT;
    let ph = H - TOP - BOTTOM;
    let height = H * panels.len() as f64;
    let mut s = open_svg(height);
    for (p, (subtitle, members)) in panels.iter().enumerate() {
        let top = H * p as f64 + TOP;
        let px = |x: f64| LEFT + x / x_max * pw;
        let py = |ns: f64| top + ph - (ns.max(1.0).log10() - y_lo) / (y_hi - y_lo) * ph;
        let _ = writeln!(
            s,
            r#"<text x="{}" y="{}" font-size="15" text-anchor="middle">{} — response time by percentile{}</text>"#,
            LEFT + pw / 2.0,
            top - 18.0,
            escape(title),
            if subtitle.is_empty() {
                String::new()
            } else {
                format!(": {subtitle}")
            }
        );
        // Grid and axes.
        for d in 0..=(x_max as u32) {
            let x = px(f64::from(d));
            let label = match d {
                0 => "0%".to_string(),
                d => format!("{}%", 100.0 - 100.0 / 10f64.powi(d as i32)),
            };
            let _ = writeln!(
                s,
                r##"<line x1="{x:.1}" y1="{top}" x2="{x:.1}" y2="{:.1}" stroke="#ddd"/><text x="{x:.1}" y="{:.1}" text-anchor="middle">{label}</text>"##,
                top + ph,
                top + ph + 18.0
            );
        }
        for e in (y_lo as i32)..=(y_hi as i32) {
            let y = py(10f64.powi(e));
            let _ = writeln!(
                s,
                r##"<line x1="{LEFT}" y1="{y:.1}" x2="{:.1}" y2="{y:.1}" stroke="#ddd"/><text x="{:.1}" y="{:.1}" text-anchor="end">{}</text>"##,
                LEFT + pw,
                LEFT - 6.0,
                y + 4.0,
                decade(e)
            );
        }
        let _ = writeln!(
            s,
            r#"<rect x="{LEFT}" y="{top}" width="{pw}" height="{ph}" fill="none" stroke="black"/>"#
        );
        let _ = writeln!(
            s,
            r#"<text x="{:.1}" y="{:.1}" text-anchor="middle">percentile</text>"#,
            LEFT + pw / 2.0,
            top + ph + BOTTOM - 8.0
        );
        let _ = writeln!(
            s,
            r#"<text transform="translate(16 {:.1}) rotate(-90)" text-anchor="middle">response time</text>"#,
            top + ph / 2.0
        );
        // Curves, coloured within the panel.
        let steps = (x_max * 40.0) as u32;
        for (k, &i) in members.iter().enumerate() {
            let (name, h) = curves[i];
            let color = if name == ALL { "black" } else { COLORS[k % COLORS.len()] };
            let width = if name == ALL { 2.5 } else { 1.5 };
            let mut points = String::new();
            for step in 0..=steps {
                let x = f64::from(step) / f64::from(steps) * x_max;
                let q = 1.0 - 10f64.powf(-x);
                let v = h.value_at_quantile(q) as f64;
                let _ = write!(points, "{:.1},{:.1} ", px(x), py(v));
            }
            let _ = writeln!(
                s,
                r#"<polyline fill="none" stroke="{color}" stroke-width="{width}" points="{}"><title>{}</title></polyline>"#,
                points.trim_end(),
                escape(name)
            );
            let ly = top + 10.0 + 16.0 * k as f64;
            let lx = W - RIGHT + 12.0;
            let _ = writeln!(
                s,
                r#"<line x1="{lx}" y1="{ly}" x2="{}" y2="{ly}" stroke="{color}" stroke-width="{width}"/><text x="{}" y="{}">{}</text>"#,
                lx + 20.0,
                lx + 26.0,
                ly + 4.0,
                escape(name)
            );
        }
    }
    s.push_str("</svg>\n");
    s
}

/// ` (VERSION)` after the backend's identity, or nothing where the identity says it already
/// (HBase's native RPC names the cluster in both).
fn backend_version(identity: &str, version: &str) -> String {
    let words = |t: &str| t.chars().filter(|c| c.is_alphanumeric()).collect::<String>();
    if version.is_empty() || words(identity).contains(&words(version)) {
        String::new()
    } else {
        format!(" ({version})")
    }
}

/// `index.html`: what ran, whether it is valid, the plot and the table; `timeseries_svg`
/// inlined where events are drawn on it, the cluster's side where it was observed, and the
/// stages.
pub fn html(s: &RunSummary, timeseries_svg: Option<&str>, cluster: Option<&ClusterHtml>) -> String {
    let mut h = String::new();
    let _ = writeln!(
        h,
        "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>tallrow: {} {}</title>",
        escape(&s.workload.name),
        escape(&s.started)
    );
    h.push_str(
        "<style>body{font-family:sans-serif;margin:1.5em}table{border-collapse:collapse}\
         td,th{padding:2px 8px;text-align:right;border-bottom:1px solid #ddd}td:first-child,th:first-child{text-align:left}\
         .row{display:flex;flex-wrap:wrap;gap:2em;align-items:flex-start}.bad{color:#b00;font-weight:bold}</style></head><body>\n",
    );
    let _ = writeln!(h, "<h1>{} — {}</h1>", escape(&s.workload.name), escape(&s.started));
    let _ = writeln!(
        h,
        "<p>backend {}{}; {}; {} threads; {}; measured {:.1} s; data digest {}</p>",
        escape(&s.backend.identity),
        escape(&backend_version(&s.backend.identity, &s.backend.version)),
        escape(&s.reads()),
        s.config.run.threads,
        s.config.run.describe_loop(),
        s.measured_s,
        escape(&s.workload.data_digest)
    );
    match &s.invalid_reason {
        Some(why) => {
            let _ = writeln!(h, "<p class=\"bad\">INVALID: {}</p>", escape(why));
        }
        None => {
            if let Some(share) = s.on_time_share {
                let _ = writeln!(
                    h,
                    "<p>{:.2}% of operations started within 1 s of schedule.</p>",
                    share * 100.0
                );
            }
        }
    }
    if !s.slos.is_empty() {
        // The run's own verdicts and each stage's, counted as the exit status counts them.
        let all: Vec<(String, &super::summary::Verdict)> = s
            .slos
            .iter()
            .map(|v| (v.target.clone(), v))
            .chain(s.stages.iter().flat_map(|st| {
                st.slos
                    .iter()
                    .map(move |v| (format!("{} in stage {}", v.target, st.stage), v))
            }))
            .collect();
        let missed = all.iter().filter(|(_, v)| !v.held).count();
        let _ = writeln!(
            h,
            "<h2>Targets</h2>\n<p{}>{} of {} targets met.</p>\n<table>\n<tr><th>target</th><th>measured</th><th>verdict</th></tr>",
            if missed > 0 { " class=\"bad\"" } else { "" },
            all.len() - missed,
            all.len()
        );
        for (target, v) in &all {
            let _ = writeln!(
                h,
                "<tr><td>{}</td><td>{}</td><td{}>{}</td></tr>",
                escape(target),
                escape(v.measured.as_deref().unwrap_or("no successful operations")),
                if v.held { "" } else { " class=\"bad\"" },
                if v.held { "met" } else { "MISSED" }
            );
        }
        h.push_str("</table>\n");
    }
    h.push_str("<div class=\"row\"><img src=\"latency.svg\" alt=\"response time by percentile\">\n<table>\n");
    let columns = if s.open_loop { 12 } else { 10 };
    h.push_str("<tr>");
    for c in &OpReport::COLUMNS[..columns] {
        let _ = write!(h, "<th>{c}</th>");
    }
    h.push_str("</tr>\n");
    for o in s.ops.iter().chain([&s.all]) {
        let cells = o.cells();
        let _ = write!(h, "<tr><td><a href=\"{0}.hgrm\">{0}</a></td>", escape(&cells[0]));
        for c in &cells[1..] {
            let _ = write!(h, "<td>{}</td>", escape(c));
        }
        h.push_str("</tr>\n");
    }
    h.push_str("</table></div>\n");
    if s.timeline() {
        h.push_str("<h2>Timeline reads</h2>\n<p>Stale: an answer a secondary replica gave, the primary having not answered in time.</p>\n<table>\n<tr>");
        for c in super::summary::TimelineReads::COLUMNS {
            let _ = write!(h, "<th>{c}</th>");
        }
        h.push_str("</tr>\n");
        for o in s.ops.iter().chain([&s.all]) {
            if let Some(t) = &o.timeline {
                h.push_str("<tr>");
                for c in t.cells(&o.op) {
                    let _ = write!(h, "<td>{}</td>", escape(&c));
                }
                h.push_str("</tr>\n");
            }
        }
        h.push_str("</table>\n");
    }
    h.push_str("<h2>Over time</h2>\n<p>Per interval (<a href=\"timeseries.csv\">timeseries.csv</a>): throughput, and p50 and p99 response time.</p>\n");
    match timeseries_svg {
        // Inline, so that each event's tooltip shows.
        Some(svg) => {
            h.push_str("<p>The run's and the cluster's events are drawn over it: a band from a start to its end, a line at a moment (stages grey, splits and merges orange, moves and assigns purple, compactions red, writes blocked dark red, flushes blue, servers lost or joined black); point at one for what, where and when.</p>\n");
            h.push_str(svg);
        }
        None => h.push_str("<img src=\"timeseries.svg\" alt=\"throughput and response time per interval\">\n"),
    }
    if let Some(c) = cluster {
        cluster_html(&mut h, c);
    }
    stages_html(&mut h, s);
    regions_html(&mut h, s);
    h.push_str("<p>Files: <a href=\"summary.json\">summary.json</a>, <a href=\"ops.csv\">ops.csv</a>, \
                <a href=\"timeseries.csv\">timeseries.csv</a>; per operation a <code>.hgrm</code> percentile distribution and a <code>.hlog</code> interval log.</p>\n</body></html>\n");
    h
}

/// What `index.html` shows of the cluster's side of a run.
pub struct ClusterHtml {
    /// `cluster.svg`, to inline, when the observer saw a server report.
    pub servers_svg: Option<String>,
    /// The line after the text table.
    pub line: String,
    /// The worst seconds of p99 per operation, with what the cluster did then.
    pub rose: Vec<super::cluster::Rose>,
}

/// Each stage's figures, and its verdicts where the run had targets.
fn stages_html(h: &mut String, s: &RunSummary) {
    if s.stages.is_empty() {
        return;
    }
    let columns = if s.open_loop { 12 } else { 10 };
    h.push_str("<h2>Stages</h2>\n<p>An operation counts in the stage it was due in.</p>\n");
    for st in &s.stages {
        let _ = writeln!(h, "<h3>{}</h3>\n<table>\n<tr>", escape(&super::console::stage_line(st)));
        for c in &OpReport::COLUMNS[..columns] {
            let _ = write!(h, "<th>{c}</th>");
        }
        h.push_str("</tr>\n");
        for o in st.ops.iter().chain([&st.all]) {
            h.push_str("<tr>");
            for c in o.cells() {
                let _ = write!(h, "<td>{}</td>", escape(&c));
            }
            h.push_str("</tr>\n");
        }
        h.push_str("</table>\n");
        if !st.slos.is_empty() {
            h.push_str("<p>");
            for v in &st.slos {
                let _ = write!(
                    h,
                    "<span{}>{}</span><br>",
                    if v.held { "" } else { " class=\"bad\"" },
                    escape(&v.line())
                );
            }
            h.push_str("</p>\n");
        }
    }
}

fn cluster_html(h: &mut String, c: &ClusterHtml) {
    let _ = writeln!(
        h,
        "<h2>What the cluster did</h2>\n<p>{}. Each event: <a href=\"events.csv\">events.csv</a>; each region server report: <a href=\"cluster.csv\">cluster.csv</a>.</p>",
        escape(&c.line)
    );
    if let Some(svg) = &c.servers_svg {
        h.push_str("<p>The region servers over the same time (<a href=\"cluster.svg\">cluster.svg</a>): their request rates and pressures from their reports, and from their <code>/jmx</code> their queues, blocked updates and GC.</p>\n");
        h.push_str(svg);
    }
    if c.rose.is_empty() {
        return;
    }
    h.push_str(
        "<h3>What happened when latency rose</h3>\n<p>Each operation's worst intervals by p99, with the events and the region servers' reports of that interval and the one before.</p>\n\
         <table>\n<tr><th>operation</th><th>interval</th><th>p99</th><th>run p99</th><th>events</th><th>region servers</th></tr>\n",
    );
    for r in &c.rose {
        let list = |items: &[String]| {
            if items.is_empty() {
                "none".to_string()
            } else {
                items.iter().map(|i| escape(i)).collect::<Vec<_>>().join("<br>")
            }
        };
        let _ = writeln!(
            h,
            "<tr><td>{}</td><td>{:.1}–{:.1} s</td><td>{}</td><td>{}</td><td style=\"text-align:left\">{}</td><td style=\"text-align:left\">{}</td></tr>",
            escape(&r.op),
            r.from_s,
            r.to_s,
            super::fmt_ns(r.p99_ns),
            super::fmt_ns(r.run_p99_ns),
            list(&r.events),
            list(&r.signals)
        );
    }
    h.push_str("</table>\n");
}

/// One operation's figures per interval.
pub struct Series {
    /// The operation, or `all`.
    pub name: String,
    /// Per interval: its end (seconds from the start of measurement), successful
    /// operations per second, p50 and p99 (ns).
    pub points: Vec<Point>,
}

/// An interval's end (s), throughput (ops/s), p50 and p99 (ns).
pub type Point = (f64, f64, u64, u64);

/// Throughput (top, linear) and p50 (dashed) and p99 (solid) response time (bottom, log)
/// of every operation per interval, against time; for many operations, small multiples
/// instead ([`rows`]).
pub fn timeseries(series: &[Series], title: &str, marks: &[Mark]) -> String {
    if series.iter().filter(|s| s.name != ALL).count() > MOST_PER_PANEL {
        return rows(series, title, marks);
    }
    let (panel, gap) = (200.0, 50.0);
    let height = TOP + panel + gap + panel + BOTTOM;
    let pw = W - LEFT - RIGHT;
    let (t_max, y_lo, y_hi) = ranges(series);
    let rate_max = series
        .iter()
        .flat_map(|s| s.points.iter().map(|p| p.1))
        .fold(0.0f64, f64::max)
        .max(1.0)
        * 1.05;
    let px = |t: f64| LEFT + t / t_max * pw;
    let rate_y = |r: f64| TOP + panel - r / rate_max * panel;
    let lat_top = TOP + panel + gap;
    let lat_y = |ns: u64| lat_top + panel - ((ns.max(1) as f64).log10() - y_lo) / (y_hi - y_lo) * panel;
    let mut s = open_svg(height);
    let _ = writeln!(
        s,
        r#"<text x="{}" y="22" font-size="15" text-anchor="middle">{} — throughput and response time over time</text>"#,
        LEFT + pw / 2.0,
        escape(title)
    );
    for top in [TOP, lat_top] {
        let _ = writeln!(
            s,
            r#"<rect x="{LEFT}" y="{top}" width="{pw}" height="{panel}" fill="none" stroke="black"/>"#
        );
    }
    draw_marks(
        &mut s,
        marks,
        &|t| px(t.clamp(0.0, t_max)),
        &[(TOP, panel), (lat_top, panel)],
    );
    // Time ticks on both panels: about eight, at whole seconds where the run is long enough.
    let step = nice_step(t_max / 8.0);
    let mut t = 0.0;
    while t <= t_max + 1e-9 {
        let x = px(t);
        for top in [TOP, lat_top] {
            let _ = writeln!(
                s,
                r##"<line x1="{x:.1}" y1="{top}" x2="{x:.1}" y2="{:.1}" stroke="#eee"/>"##,
                top + panel
            );
        }
        let _ = writeln!(
            s,
            r#"<text x="{x:.1}" y="{:.1}" text-anchor="middle">{}</text>"#,
            lat_top + panel + 18.0,
            trim_number(t)
        );
        t += step;
    }
    let _ = writeln!(
        s,
        r#"<text x="{:.1}" y="{:.1}" text-anchor="middle">seconds from the start of measurement</text>"#,
        LEFT + pw / 2.0,
        height - 8.0
    );
    let rate_step = nice_step(rate_max / 4.0);
    let mut r = 0.0;
    while r <= rate_max {
        let y = rate_y(r);
        let _ = writeln!(
            s,
            r##"<line x1="{LEFT}" y1="{y:.1}" x2="{:.1}" y2="{y:.1}" stroke="#eee"/><text x="{:.1}" y="{:.1}" text-anchor="end">{}</text>"##,
            LEFT + pw,
            LEFT - 6.0,
            y + 4.0,
            trim_number(r)
        );
        r += rate_step;
    }
    for e in (y_lo as i32)..=(y_hi as i32) {
        let y = lat_y(10u64.pow(e.max(0) as u32));
        let _ = writeln!(
            s,
            r##"<line x1="{LEFT}" y1="{y:.1}" x2="{:.1}" y2="{y:.1}" stroke="#eee"/><text x="{:.1}" y="{:.1}" text-anchor="end">{}</text>"##,
            LEFT + pw,
            LEFT - 6.0,
            y + 4.0,
            decade(e)
        );
    }
    let _ = writeln!(
        s,
        r#"<text transform="translate(16 {:.1}) rotate(-90)" text-anchor="middle">ops/s</text>"#,
        TOP + panel / 2.0
    );
    let _ = writeln!(
        s,
        r#"<text transform="translate(16 {:.1}) rotate(-90)" text-anchor="middle">p50 - - , p99 —</text>"#,
        lat_top + panel / 2.0
    );
    for (i, series) in series.iter().enumerate() {
        let color = if series.name == ALL {
            "black"
        } else {
            COLORS[i % COLORS.len()]
        };
        let width = if series.name == ALL { 2.5 } else { 1.5 };
        let name = escape(&series.name);
        lines(&mut s, series, (color, width), &|t, r| (px(t), rate_y(r)), &|t, ns| {
            (px(t), lat_y(ns))
        });
        let ly = TOP + 10.0 + 16.0 * i as f64;
        let lx = W - RIGHT + 12.0;
        let _ = writeln!(
            s,
            r#"<line x1="{lx}" y1="{ly}" x2="{}" y2="{ly}" stroke="{color}" stroke-width="{width}"/><text x="{}" y="{}">{name}</text>"#,
            lx + 20.0,
            lx + 26.0,
            ly + 4.0
        );
    }
    s.push_str("</svg>\n");
    s
}

/// Small multiples over time: a row per operation (and `all`), its throughput on the left
/// (linear, to its own peak, printed) and its p50 (dashed) and p99 (solid) on the right
/// (log, one range for every row), all on one time axis.
fn rows(series: &[Series], title: &str, marks: &[Mark]) -> String {
    let (row_h, row_gap, label_w, mid) = (46.0, 14.0, 130.0, 30.0);
    let pw = (W - label_w - LEFT - mid) / 2.0;
    let height = TOP + (row_h + row_gap) * series.len() as f64 + BOTTOM;
    let (t_max, y_lo, y_hi) = ranges(series);
    let (rate_x, lat_x) = (label_w, label_w + pw + mid);
    let mut s = open_svg(height);
    let _ = writeln!(
        s,
        r#"<text x="{}" y="22" font-size="15" text-anchor="middle">{} — throughput (left, to each row's peak) and p50 - - , p99 — (right, {} to {}) over time</text>"#,
        W / 2.0,
        escape(title),
        decade(y_lo as i32),
        decade(y_hi as i32)
    );
    for (i, series) in series.iter().enumerate() {
        let top = TOP + (row_h + row_gap) * i as f64;
        let peak = series.points.iter().map(|p| p.1).fold(0.0f64, f64::max).max(1e-9);
        let x_at = |left: f64, t: f64| left + t / t_max * pw;
        let rate_y = |r: f64| top + row_h - r / peak * row_h;
        let lat_y = |ns: u64| top + row_h - ((ns.max(1) as f64).log10() - y_lo) / (y_hi - y_lo) * row_h;
        let color = if series.name == ALL {
            "black"
        } else {
            COLORS[i % COLORS.len()]
        };
        let name = escape(&series.name);
        let _ = writeln!(
            s,
            r##"<text x="{:.1}" y="{:.1}" text-anchor="end">{name}</text><text x="{:.1}" y="{:.1}" text-anchor="end" fill="#666">{} ops/s</text>"##,
            label_w - 8.0,
            top + row_h / 2.0,
            label_w - 8.0,
            top + row_h / 2.0 + 14.0,
            trim_number(peak.round())
        );
        for left in [rate_x, lat_x] {
            let _ = writeln!(
                s,
                r##"<rect x="{left:.1}" y="{top:.1}" width="{pw:.1}" height="{row_h}" fill="none" stroke="#999"/>"##
            );
        }
        lines(
            &mut s,
            series,
            (color, 1.5),
            &|t, r| (x_at(rate_x, t), rate_y(r)),
            &|t, ns| (x_at(lat_x, t), lat_y(ns)),
        );
    }
    let axis_y = TOP + (row_h + row_gap) * series.len() as f64;
    for left in [rate_x, lat_x] {
        draw_marks(
            &mut s,
            marks,
            &|t| left + t.clamp(0.0, t_max) / t_max * pw,
            &[(TOP, axis_y - TOP - row_gap)],
        );
    }
    for left in [rate_x, lat_x] {
        let step = nice_step(t_max / 4.0);
        let mut t = 0.0;
        while t <= t_max + 1e-9 {
            let _ = writeln!(
                s,
                r#"<text x="{:.1}" y="{:.1}" text-anchor="middle">{}</text>"#,
                left + t / t_max * pw,
                axis_y + 4.0,
                trim_number(t)
            );
            t += step;
        }
    }
    let _ = writeln!(
        s,
        r#"<text x="{:.1}" y="{:.1}" text-anchor="middle">seconds from the start of measurement</text>"#,
        W / 2.0,
        height - 8.0
    );
    s.push_str("</svg>\n");
    s
}

/// The end of the last interval (s) and the decades (log10 ns) every p50 and p99 falls in.
fn ranges(series: &[Series]) -> (f64, f64, f64) {
    let t_max = series
        .iter()
        .flat_map(|s| s.points.iter().map(|p| p.0))
        .fold(0.0f64, f64::max)
        .max(1e-3);
    let latencies = series
        .iter()
        .flat_map(|s| s.points.iter().flat_map(|p| [p.2, p.3]))
        .filter(|&v| v > 0);
    let (lo, hi) = latencies.fold((u64::MAX, 1u64), |(lo, hi), v| (lo.min(v), hi.max(v)));
    let y_lo = (lo.min(hi).max(1) as f64).log10().floor();
    (t_max, y_lo, (hi as f64).log10().ceil().max(y_lo + 1.0))
}

/// A mark's colour: what moves regions warm, what rewrites files cool, lost servers black.
fn mark_color(kind: &str) -> &'static str {
    match kind {
        "split" | "merge" => "#e6550d",
        "move" | "assign" => "#9e4fc4",
        "compaction" => "#d62728",
        "writes_blocked" => "#8b0000",
        "flush" => "#1f77b4",
        "server_dead" | "server_joined" | "master_changed" => "#000000",
        _ => "#7f7f7f",
    }
}

/// The cluster's events over the plot's panels (`(top, height)` each), placed by `x_at`: a
/// band per span, a line per moment, each with its words as a tooltip.
pub(super) fn draw_marks(s: &mut String, marks: &[Mark], x_at: &dyn Fn(f64) -> f64, panels: &[(f64, f64)]) {
    for m in marks {
        let (x1, x2) = (x_at(m.from_s), x_at(m.to_s));
        let color = mark_color(m.kind);
        let _ = write!(s, "<g><title>{:.1} s: {}</title>", m.from_s, escape(&m.text));
        for &(top, height) in panels {
            if x2 - x1 < 2.0 {
                let _ = write!(
                    s,
                    r#"<line x1="{x1:.1}" y1="{top:.1}" x2="{x1:.1}" y2="{:.1}" stroke="{color}" stroke-width="1.5" stroke-opacity="0.7"/>"#,
                    top + height
                );
            } else {
                let _ = write!(
                    s,
                    r#"<rect x="{x1:.1}" y="{top:.1}" width="{:.1}" height="{height:.1}" fill="{color}" fill-opacity="0.15"/>"#,
                    x2 - x1
                );
            }
        }
        s.push_str("</g>\n");
    }
}

/// An SVG document's opening, `height` tall on a white ground.
pub(super) fn open_svg(height: f64) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{height}" viewBox="0 0 {W} {height}" font-family="sans-serif" font-size="12">"#
    );
    let _ = writeln!(s, r#"<rect width="{W}" height="{height}" fill="white"/>"#);
    s
}

/// One series' throughput, p50 (dashed) and p99 lines in `(colour, width)`, placed by
/// `rate_at(time, ops/s)` and `latency_at(time, ns)`; intervals without a latency are left out.
fn lines(
    s: &mut String,
    series: &Series,
    (color, width): (&str, f64),
    rate_at: &dyn Fn(f64, f64) -> (f64, f64),
    latency_at: &dyn Fn(f64, u64) -> (f64, f64),
) {
    let line = |f: &dyn Fn(&Point) -> Option<(f64, f64)>| -> String {
        series
            .points
            .iter()
            .filter_map(f)
            .map(|(x, y)| format!("{x:.1},{y:.1}"))
            .collect::<Vec<_>>()
            .join(" ")
    };
    let name = escape(&series.name);
    for (points, dash, what) in [
        (line(&|p| Some(rate_at(p.0, p.1))), "", "ops/s"),
        (
            line(&|p| (p.2 > 0).then(|| latency_at(p.0, p.2))),
            r#" stroke-dasharray="4 3""#,
            "p50",
        ),
        (line(&|p| (p.3 > 0).then(|| latency_at(p.0, p.3))), "", "p99"),
    ] {
        let _ = writeln!(
            s,
            r#"<polyline fill="none" stroke="{color}" stroke-width="{width}"{dash} points="{points}"><title>{name} {what}</title></polyline>"#
        );
    }
}

/// A round step near `raw`: 1, 2 or 5 times a power of ten.
pub(super) fn nice_step(raw: f64) -> f64 {
    let raw = raw.max(1e-6);
    let base = 10f64.powf(raw.log10().floor());
    [1.0, 2.0, 5.0, 10.0]
        .into_iter()
        .map(|m| m * base)
        .find(|&s| s >= raw)
        .unwrap_or(10.0 * base)
}

/// A tick label: whole numbers without decimals.
pub(super) fn trim_number(v: f64) -> String {
    if (v - v.round()).abs() < 1e-9 {
        format!("{}", v.round() as i64)
    } else {
        format!("{v:.2}").trim_end_matches('0').to_string()
    }
}

/// `10^e` ns as an axis label: `1 µs`, `100 ms`, `10 s`.
fn decade(e: i32) -> String {
    let (unit, base) = match e {
        ..=2 => ("ns", 0),
        3..=5 => ("µs", 3),
        6..=8 => ("ms", 6),
        _ => ("s", 9),
    };
    format!("{} {unit}", 10u64.pow((e - base).max(0) as u32))
}

/// The regions section: per table its skew figures, then the heat map (`regions.svg`).
fn regions_html(h: &mut String, s: &RunSummary) {
    use crate::regions::report::{fmt_ratio, fmt_share};
    if s.regions.is_empty() {
        return;
    }
    h.push_str(
        "<h2>Regions</h2>\n<p>Rows written and read per region of each table, warm-up included: the hottest \
         region's share of the table's rows and its rows over the mean per region (1.00 is even). Every region \
         is in <a href=\"regions.csv\">regions.csv</a>.</p>\n<table>\n<tr><th>table</th><th>regions</th>\
         <th>rows written</th><th>hottest</th><th>max/mean</th><th>hottest starts at</th><th>rows read</th>\
         <th>hottest</th><th>max/mean</th><th>hottest starts at</th></tr>\n",
    );
    for r in &s.regions {
        let _ = writeln!(
            h,
            "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            escape(&r.table),
            r.regions,
            super::thousands(r.rows_written),
            fmt_share(r.write_hottest_share),
            fmt_ratio(r.write_max_mean),
            escape(r.write_hottest_start.as_deref().unwrap_or("-")),
            super::thousands(r.rows_read),
            fmt_share(r.read_hottest_share),
            fmt_ratio(r.read_max_mean),
            escape(r.read_hottest_start.as_deref().unwrap_or("-")),
        );
    }
    h.push_str("</table>\n");
    if s.merged_from.is_empty() {
        h.push_str("<p><img src=\"regions.svg\" alt=\"rows per region and interval\"></p>\n");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_backend_is_named_once() {
        // HBase's native RPC names its cluster in its identity and its version alike.
        let native = "hbase://zk:2181/hbase?api=native (HBase native RPC, cluster f70e)";
        assert_eq!(backend_version(native, "HBase (native RPC, cluster f70e)"), "");
        assert_eq!(
            backend_version("embedded (fjall 3) at db", "tallrow 0.1.0 embedded store on fjall 3"),
            " (tallrow 0.1.0 embedded store on fjall 3)"
        );
    }
    use crate::stats::{histogram, record};

    #[test]
    fn draws_one_curve_per_operation_with_log_axes() {
        let mut a = histogram();
        let mut b = histogram();
        for v in 1..=5000u64 {
            record(&mut a, v * 1000);
            record(&mut b, v * 100_000);
        }
        let svg = svg(
            &[
                ("timeline".into(), a),
                ("publish".into(), b),
                ("empty".into(), histogram()),
            ],
            &["publish"],
            "q<1>",
        );
        assert_eq!(svg.matches("<polyline").count(), 2);
        assert!(svg.contains("<title>timeline</title>") && svg.contains("<title>publish</title>"));
        assert!(svg.contains(">99.9%<") && !svg.contains(">99.99%<"));
        assert!(svg.contains(">1 µs<") && svg.contains(">1 s<"), "{svg}");
        assert!(svg.contains("q&lt;1&gt;"));
        assert!(svg.ends_with("</svg>\n"));
    }

    /// Every operation of the mix (17 of them) and two of a design's own (`send` writes,
    /// `inbox` reads) with `all`: the latency plot splits them into panels of at most eight
    /// besides `all`, reads apart from writes (as the summary marks them), each curve once
    /// and `all` in every panel; the plot over time draws a row per operation.
    #[test]
    fn many_operations_are_drawn_in_panels_and_rows() {
        let mut names: Vec<String> = crate::workload::Op::ALL.iter().map(|o| o.name().to_string()).collect();
        names.truncate(17);
        let mut writers: Vec<&str> = crate::workload::Op::ALL[..17]
            .iter()
            .filter(|o| o.writes())
            .map(|o| o.name())
            .collect();
        writers.push("send");
        names.extend(["send".to_string(), "inbox".to_string(), ALL.into()]);
        let mut h = histogram();
        for v in 1..=2000u64 {
            record(&mut h, v * 1000);
        }
        let curves: Vec<(String, Histogram)> = names.iter().map(|n| (n.clone(), h.clone())).collect();
        let svg = svg(&curves, &writers, "mix");
        let refs: Vec<&str> = names.iter().map(String::as_str).collect();
        let panels = panels(&refs, &writers);
        assert!(panels.len() >= 3, "{panels:?}");
        for (title, members) in &panels {
            let ops: Vec<&&str> = members.iter().map(|&i| &refs[i]).filter(|n| **n != ALL).collect();
            assert!(!ops.is_empty() && ops.len() <= MOST_PER_PANEL, "{title}: {ops:?}");
            let writes = ops.iter().filter(|n| writers.contains(n)).count();
            assert!(writes == 0 || writes == ops.len(), "{title} mixes reads and writes");
            assert_eq!(title.starts_with("writes"), writes > 0, "{title}: {ops:?}");
            assert!(members.iter().any(|&i| refs[i] == ALL), "{title}");
        }
        assert_eq!(svg.matches("<polyline").count(), 19 + panels.len());
        for n in &names[..19] {
            assert_eq!(svg.matches(&format!("<title>{n}</title>")).count(), 1, "{n}");
        }
        assert!(svg.contains(": reads") && svg.contains(": writes"));

        let series: Vec<Series> = names
            .iter()
            .map(|n| Series {
                name: n.clone(),
                points: vec![(1.0, 100.0, 1_000, 5_000), (2.0, 120.0, 1_100, 9_000)],
            })
            .collect();
        let over_time = timeseries(&series, "mix", &[]);
        assert_eq!(over_time.matches("<polyline").count(), 3 * 20);
        for n in &names {
            assert_eq!(over_time.matches(&format!("<title>{n} p99</title>")).count(), 1, "{n}");
        }
        // A few operations stay on one pair of axes.
        let few = timeseries(&series[..3], "mix", &[]);
        assert!(!few.contains("to each row's peak"));
        assert!(over_time.contains("to each row's peak"));
    }
}
