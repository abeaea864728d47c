//! `history.html`: one self-contained page of a history, a small chart per operation and
//! figure, each run a point that links to its report, each segment's level drawn as a step,
//! each change point marked with its run, change and p, and the detection's settings.

use super::history::{Change, Group, History};
use super::text::escape;
use std::fmt::Write as _;
use std::path::{Component, Path, PathBuf};

/// Chart size and margins.
const W: f64 = 300.0;
const H: f64 = 130.0;
const LEFT: f64 = 66.0;
const RIGHT: f64 = 8.0;
/// The title's line, then a line for the change points' labels, above the points.
const TOP: f64 = 30.0;
const BOTTOM: f64 = 18.0;

/// `to` as a link from a page in `from`: relative where both resolve, absolute otherwise.
fn link(from: &Path, to: &Path) -> String {
    let abs = |p: &Path| std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf());
    let (from, to) = (abs(from), abs(to));
    let f: Vec<Component> = from.components().collect();
    let t: Vec<Component> = to.components().collect();
    let common = f.iter().zip(&t).take_while(|(a, b)| a == b).count();
    if common == 0 {
        return to.join("index.html").display().to_string();
    }
    let mut rel = PathBuf::new();
    for _ in common..f.len() {
        rel.push("..");
    }
    for c in &t[common..] {
        rel.push(c.as_os_str());
    }
    rel.join("index.html").display().to_string()
}

/// A value on a chart's axis, short enough for its margin.
fn axis(figure: &str, v: f64) -> String {
    match figure {
        "throughput" if v >= 1e6 => format!("{:.2}M ops/s", v / 1e6),
        "throughput" if v >= 1e4 => format!("{:.1}k ops/s", v / 1e3),
        "throughput" => format!("{v:.0} ops/s"),
        _ => show(figure, v),
    }
}

fn show(figure: &str, v: f64) -> String {
    match figure {
        "throughput" => format!("{v:.1} ops/s"),
        "errors" => format!("{:.2}%", v * 100.0),
        _ => super::fmt_ns(v as u64),
    }
}

/// One series' chart: its points (each a link to its run's report), the levels of the
/// segments between its change points, and the change points.
fn chart(g: &Group, operation: &str, figure: &'static str, links: &[String]) -> String {
    let series = g
        .series
        .iter()
        .find(|s| s.operation == operation && s.figure == figure)
        .expect("a series of the group");
    let points: Vec<(usize, f64)> = series
        .values
        .iter()
        .enumerate()
        .filter_map(|(i, v)| v.map(|v| (i, v)))
        .collect();
    let mut s = String::new();
    let _ = writeln!(
        s,
        r##"<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" viewBox="0 0 {W} {H}" font-family="sans-serif" font-size="10"><rect width="{W}" height="{H}" fill="white" stroke="#ddd"/>"##
    );
    let _ = writeln!(
        s,
        r#"<text x="{LEFT}" y="12" font-weight="bold">{}</text>"#,
        escape(figure)
    );
    if points.is_empty() {
        s.push_str("</svg>");
        return s;
    }
    let (lo, hi) = points
        .iter()
        .fold((f64::MAX, f64::MIN), |(l, h), (_, v)| (l.min(*v), h.max(*v)));
    let pad = ((hi - lo) * 0.1).max(hi.abs() * 0.02).max(1e-12);
    let (lo, hi) = ((lo - pad).max(if lo >= 0.0 { 0.0 } else { f64::MIN }), hi + pad);
    let runs = g.runs.len().max(2) as f64;
    let x = |i: f64| LEFT + (W - LEFT - RIGHT) * i / (runs - 1.0);
    let y = |v: f64| TOP + (H - TOP - BOTTOM) * (1.0 - (v - lo) / (hi - lo));
    for v in [lo, hi] {
        let _ = writeln!(
            s,
            r##"<text x="{:.1}" y="{:.1}" text-anchor="end" fill="#666">{}</text>"##,
            LEFT - 4.0,
            y(v) + 3.0,
            escape(&axis(figure, v))
        );
    }
    let _ = writeln!(
        s,
        r##"<text x="{LEFT}" y="{:.1}" fill="#666">run 1</text><text x="{:.1}" y="{:.1}" text-anchor="end" fill="#666">run {}</text>"##,
        H - 4.0,
        W - RIGHT,
        H - 4.0,
        g.runs.len()
    );
    // The segments' levels as steps, between this series' change points.
    let mine: Vec<&Change> = g
        .changes
        .iter()
        .filter(|c| c.operation == operation && c.figure == figure)
        .collect();
    let mut edges = vec![0usize];
    edges.extend(mine.iter().map(|c| c.run));
    edges.push(g.runs.len());
    // A drift's runs have its line, not a level.
    let drift_from = g
        .drifts
        .iter()
        .find(|d| d.operation == operation && d.figure == figure)
        .map_or(usize::MAX, |d| d.runs.0);
    for (k, w) in edges.windows(2).enumerate() {
        if w[1] > drift_from {
            break;
        }
        let level = if k == 0 {
            mine.first().map(|c| c.before)
        } else {
            Some(mine[k - 1].after)
        };
        let level = level.or_else(|| {
            let vals: Vec<f64> = points
                .iter()
                .filter(|(i, _)| *i >= w[0] && *i < w[1])
                .map(|p| p.1)
                .collect();
            (!vals.is_empty()).then(|| vals.iter().sum::<f64>() / vals.len() as f64)
        });
        if let Some(v) = level {
            let _ = writeln!(
                s,
                r##"<line class="level" x1="{:.1}" x2="{:.1}" y1="{:.1}" y2="{:.1}" stroke="#2a7" stroke-width="2"><title>level {}</title></line>"##,
                x(w[0] as f64 - 0.5).max(LEFT),
                x(w[1] as f64 - 0.5).min(W - RIGHT),
                y(v),
                y(v),
                escape(&show(figure, v))
            );
        }
    }
    let line: Vec<String> = points
        .iter()
        .map(|(i, v)| format!("{:.1},{:.1}", x(*i as f64), y(*v)))
        .collect();
    let _ = writeln!(
        s,
        r##"<polyline fill="none" stroke="#89a" stroke-width="1" points="{}"/>"##,
        line.join(" ")
    );
    let single: Vec<usize> = g
        .single_runs
        .iter()
        .filter(|c| c.operation == operation && c.figure == figure)
        .map(|c| c.run)
        .collect();
    for (i, v) in &points {
        let color = if single.contains(i) { "#e80" } else { "#246" };
        let _ = writeln!(
            s,
            r#"<a href="{}"><circle class="run" cx="{:.1}" cy="{:.1}" r="3" fill="{color}"><title>run {} ({}): {}</title></circle></a>"#,
            escape(&links[*i]),
            x(*i as f64),
            y(*v),
            i + 1,
            escape(g.runs[*i].name()),
            escape(&show(figure, *v))
        );
    }
    for d in g
        .drifts
        .iter()
        .filter(|d| d.operation == operation && d.figure == figure)
    {
        let _ = writeln!(
            s,
            r##"<line class="drift" x1="{:.1}" x2="{:.1}" y1="{:.1}" y2="{:.1}" stroke="#d70" stroke-width="2" stroke-dasharray="6 3"><title>{}</title></line>"##,
            x(d.runs.0 as f64),
            x(d.runs.1 as f64),
            y(d.from).clamp(TOP, H - BOTTOM),
            y(d.to).clamp(TOP, H - BOTTOM),
            escape(&d.line(&g.runs))
        );
    }
    // Where labels would overlap, the later change keeps only its mark (its title says all).
    let mut labelled_to = f64::MIN;
    for c in &mine {
        let color = if c.verdict == "regression" { "#c00" } else { "#070" };
        let cx = x(c.run as f64 - 0.5);
        let _ = writeln!(
            s,
            r#"<line class="change" x1="{cx:.1}" x2="{cx:.1}" y1="{TOP}" y2="{:.1}" stroke="{color}" stroke-dasharray="3 2"><title>{} at run {}: {} -> {} ({:+.1}%, p={:.1e})</title></line>"#,
            H - BOTTOM,
            c.verdict,
            c.run + 1,
            escape(&show(figure, c.before)),
            escape(&show(figure, c.after)),
            c.change * 100.0,
            c.pvalue
        );
        // Its label in the band above the points, on the side of the mark with more room.
        let label = format!("{:+.0}% p={:.0e}", c.change * 100.0, c.pvalue);
        // About 5.5 px a character at 10 px sans-serif.
        let width = 5.5 * label.len() as f64;
        let (tx, anchor, from, to) = if cx > LEFT + (W - LEFT - RIGHT) / 2.0 {
            (cx - 3.0, "end", cx - 3.0 - width, cx)
        } else {
            (cx + 3.0, "start", cx, cx + 3.0 + width)
        };
        if from < labelled_to + 4.0 {
            continue;
        }
        labelled_to = to;
        let _ = writeln!(
            s,
            r#"<text x="{tx:.1}" y="{:.1}" text-anchor="{anchor}" fill="{color}">{}</text>"#,
            TOP - 5.0,
            escape(&label)
        );
    }
    s.push_str("</svg>");
    s
}

/// The page of `h`, written in `dir` (links to the runs' reports are made from there).
pub fn page(h: &History, dir: &Path) -> String {
    let mut p = String::new();
    let title = h.groups.first().map_or("tallrow history".to_string(), |g| {
        format!("tallrow history: {} on {}", g.key.workload, g.key.backend)
    });
    let _ = writeln!(
        p,
        "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>{}</title>",
        escape(&title)
    );
    p.push_str(
        "<style>body{font-family:sans-serif;margin:1.5em}.row{display:flex;flex-wrap:wrap;gap:1em}\
         table{border-collapse:collapse}td,th{padding:2px 8px;border-bottom:1px solid #ddd;text-align:left}\
         .bad{color:#b00;font-weight:bold}</style></head><body>\n",
    );
    let _ = writeln!(p, "<h1>{}</h1>", escape(&title));
    let _ = writeln!(p, "<p id=\"settings\">{}.</p>", escape(&h.method));
    if let Some(gate) = &h.gate {
        let _ = writeln!(
            p,
            "<p class=\"{}\">Gate: {}{} over {} ({} failing, {} acknowledged; within the last {} runs, at least {:.1}%, p &le; {:.1e}).</p>",
            if gate.verdict == "regression" { "bad" } else { "" },
            gate.verdict,
            gate.why.as_ref().map_or(String::new(), |w| format!(", {}", escape(w))),
            escape(&gate.group),
            gate.failing.len() + gate.failing_drifts.len(),
            gate.acknowledged.len() + gate.acknowledged_drifts.len(),
            gate.within,
            gate.above * 100.0,
            gate.pvalue
        );
    }
    for g in &h.groups {
        let _ = writeln!(
            p,
            "<h2>{} on {}: {} runs</h2>\n<p>Machine {}, tallrow {}.</p>",
            escape(&g.key.workload),
            escape(&g.key.backend),
            g.runs.len(),
            escape(&g.key.machine),
            escape(&g.key.tallrow)
        );
        if let Some(why) = &g.unjudged {
            let _ = writeln!(p, "<p>Not searched: {}.</p>", escape(why));
        }
        if !g.changes.is_empty() {
            let _ = write!(
                p,
                "<table><tr><th>run</th><th>{}</th><th>operation</th>",
                escape(h.key.as_deref().unwrap_or("started"))
            );
            p.push_str(
                "<th>figure</th><th>before</th><th>after</th><th>change [95%]</th><th>p</th><th>verdict</th></tr>\n",
            );
            for c in &g.changes {
                let _ = writeln!(
                    p,
                    "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{:+.1}% [{:+.1}%..{:+.1}%]</td><td>{:.1e}</td><td class=\"{}\">{}</td></tr>",
                    c.run + 1,
                    escape(c.name()),
                    escape(&c.operation),
                    c.figure,
                    escape(&show(c.figure, c.before)),
                    escape(&show(c.figure, c.after)),
                    c.change * 100.0,
                    c.interval.0 * 100.0,
                    c.interval.1 * 100.0,
                    c.pvalue,
                    if c.verdict == "regression" { "bad" } else { "" },
                    c.verdict
                );
            }
            p.push_str("</table>\n");
        }
        if !g.drifts.is_empty() {
            p.push_str("<ul class=\"drifts\">\n");
            for d in &g.drifts {
                let _ = writeln!(
                    p,
                    "<li class=\"{}\">{}</li>",
                    if d.verdict == "regression" { "bad" } else { "" },
                    escape(&d.line(&g.runs))
                );
            }
            p.push_str("</ul>\n");
        }
        let links: Vec<String> = g.runs.iter().map(|r| link(dir, Path::new(&r.dir))).collect();
        let mut operations: Vec<&str> = Vec::new();
        for s in &g.series {
            if !operations.contains(&s.operation.as_str()) {
                operations.push(&s.operation);
            }
        }
        for op in operations {
            let _ = writeln!(p, "<h3>{}</h3>\n<div class=\"row\">", escape(op));
            for figure in super::history::FIGURES {
                p.push_str(&chart(g, op, figure, &links));
                p.push('\n');
            }
            p.push_str("</div>\n");
        }
    }
    if !h.left_out.is_empty() {
        p.push_str("<h2>Left out</h2>\n<ul>\n");
        for l in &h.left_out {
            let _ = writeln!(p, "<li>{}: {}</li>", escape(&l.dir), escape(&l.why));
        }
        p.push_str("</ul>\n");
    }
    p.push_str("</body></html>\n");
    p
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_run_is_linked_from_the_history_folder() {
        let base = std::env::temp_dir().join(format!("tallrow-link-{}", std::process::id()));
        let (from, to) = (base.join("reports/history-x"), base.join("nightly/run-1"));
        std::fs::create_dir_all(&from).unwrap();
        std::fs::create_dir_all(&to).unwrap();
        assert_eq!(link(&from, &to), "../../nightly/run-1/index.html");
        std::fs::remove_dir_all(&base).unwrap();
    }
}
