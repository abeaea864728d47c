//! `cluster.svg`: the region servers over the run's time line, a panel per figure (request
//! rates from their reports; queues, blocked updates and GC from their `/jmx`), a line per
//! server, the run's and the cluster's events drawn over them as on `timeseries.svg`.

use super::cluster::Mark;
use super::plot::{BOTTOM, COLORS, LEFT, RIGHT, TOP, W, draw_marks, nice_step, open_svg, trim_number};
use super::text::escape;
use crate::observe::watch::{JmxSample, Observed, Sample};
use std::fmt::Write as _;

/// A panel's height, and the gap below it.
const PANEL: f64 = 90.0;
const GAP: f64 = 28.0;

/// One figure: its title, and per server its points (seconds from the start of measuring,
/// value).
struct Panel {
    title: &'static str,
    series: Vec<(String, Vec<(f64, f64)>)>,
}

/// Per server (in `servers`' order) the points `value` gives for its rows.
fn per_server<T>(
    rows: &[T],
    servers: &[String],
    started_ms: i64,
    at: fn(&T) -> (u64, &str),
    value: fn(&T) -> Option<f64>,
) -> Vec<(String, Vec<(f64, f64)>)> {
    servers
        .iter()
        .map(|name| {
            let points = rows
                .iter()
                .filter(|r| at(r).1 == name)
                .filter_map(|r| value(r).map(|v| ((at(r).0 as i64 - started_ms) as f64 / 1000.0, v)))
                .collect();
            (name.clone(), points)
        })
        .collect()
}

/// The plot, or `None` when the observer saw no server report.
pub fn svg(seen: &Observed, started_ms: i64, t_max: f64, marks: &[Mark], title: &str) -> Option<String> {
    let mut servers: Vec<String> = seen
        .samples
        .iter()
        .map(|s| s.server.clone())
        .chain(seen.jmx.iter().map(|j| j.server.clone()))
        .collect();
    servers.sort();
    servers.dedup();
    if servers.is_empty() {
        return None;
    }
    let report: fn(&Sample) -> (u64, &str) = |s| (s.at_ms, s.server.as_str());
    let read: fn(&JmxSample) -> (u64, &str) = |j| (j.at_ms, j.server.as_str());
    let s = &seen.samples;
    let j = &seen.jmx;
    let candidates = [
        Panel {
            title: "reads/s",
            series: per_server(s, &servers, started_ms, report, |s| s.read_per_s),
        },
        Panel {
            title: "writes/s",
            series: per_server(s, &servers, started_ms, report, |s| s.write_per_s),
        },
        Panel {
            title: "memstore MiB",
            series: per_server(s, &servers, started_ms, report, |s| Some(s.memstore_mib as f64)),
        },
        Panel {
            title: "most store files",
            series: per_server(s, &servers, started_ms, report, |s| Some(f64::from(s.max_store_files))),
        },
        Panel {
            title: "compacting",
            series: per_server(s, &servers, started_ms, report, |s| Some(f64::from(s.compacting))),
        },
        Panel {
            title: "compactions queued",
            series: per_server(j, &servers, started_ms, read, |j| Some(j.compactions_queued as f64)),
        },
        Panel {
            title: "RPC calls queued",
            series: per_server(j, &servers, started_ms, read, |j| Some(j.rpc_queued as f64)),
        },
        Panel {
            title: "updates blocked, ms",
            series: per_server(j, &servers, started_ms, read, |j| {
                j.blocked_updates_ms.map(|n| n as f64)
            }),
        },
        Panel {
            title: "GC ms",
            series: per_server(j, &servers, started_ms, read, |j| j.gc_ms.map(|n| n as f64)),
        },
    ];
    let panels: Vec<Panel> = candidates
        .into_iter()
        .filter(|p| p.series.iter().any(|(_, pts)| !pts.is_empty()))
        .collect();
    let all = || {
        panels
            .iter()
            .flat_map(|p| p.series.iter().flat_map(|(_, pts)| pts.iter()))
    };
    let t0 = all().map(|p| p.0).fold(0.0f64, f64::min);
    let t1 = all().map(|p| p.0).fold(t_max, f64::max).max(t0 + 1e-3);
    let pw = W - LEFT - RIGHT;
    let px = |t: f64| LEFT + (t.clamp(t0, t1) - t0) / (t1 - t0) * pw;
    let height = TOP + panels.len() as f64 * (PANEL + GAP) + BOTTOM;
    let mut out = open_svg(height);
    let _ = writeln!(
        out,
        r#"<text x="{}" y="22" font-size="15" text-anchor="middle">{} — the region servers over time</text>"#,
        LEFT + pw / 2.0,
        escape(title)
    );
    let tops: Vec<(f64, f64)> = (0..panels.len())
        .map(|i| (TOP + i as f64 * (PANEL + GAP), PANEL))
        .collect();
    draw_marks(&mut out, marks, &px, &tops);
    for (p, &(top, _)) in panels.iter().zip(&tops) {
        let most = p
            .series
            .iter()
            .flat_map(|(_, pts)| pts.iter().map(|q| q.1))
            .fold(0.0f64, f64::max);
        let step = nice_step(most.max(1.0) / 2.0);
        let y_max = (most / step).ceil().max(1.0) * step;
        let py = |v: f64| top + PANEL - v / y_max * PANEL;
        let _ = writeln!(
            out,
            r#"<rect x="{LEFT}" y="{top}" width="{pw}" height="{PANEL}" fill="none" stroke="black"/><text x="{LEFT}" y="{:.1}">{}</text>"#,
            top - 5.0,
            p.title
        );
        let mut v = 0.0;
        while v <= y_max + 1e-9 {
            let y = py(v);
            let _ = writeln!(
                out,
                r##"<line x1="{LEFT}" y1="{y:.1}" x2="{:.1}" y2="{y:.1}" stroke="#eee"/><text x="{:.1}" y="{:.1}" text-anchor="end">{}</text>"##,
                LEFT + pw,
                LEFT - 6.0,
                y + 4.0,
                trim_number(v)
            );
            v += step;
        }
        for (i, (server, pts)) in p.series.iter().enumerate() {
            let points: Vec<String> = pts.iter().map(|&(t, v)| format!("{:.1},{:.1}", px(t), py(v))).collect();
            let _ = writeln!(
                out,
                r#"<polyline fill="none" stroke="{}" stroke-width="1.5" points="{}"><title>{} {}</title></polyline>"#,
                COLORS[i % COLORS.len()],
                points.join(" "),
                escape(server),
                p.title
            );
        }
    }
    for (i, server) in servers.iter().enumerate() {
        let (lx, ly) = (W - RIGHT + 12.0, TOP + 10.0 + 16.0 * i as f64);
        let _ = writeln!(
            out,
            r#"<line x1="{lx}" y1="{ly}" x2="{}" y2="{ly}" stroke="{}" stroke-width="1.5"/><text x="{}" y="{}">{}</text>"#,
            lx + 20.0,
            COLORS[i % COLORS.len()],
            lx + 26.0,
            ly + 4.0,
            escape(server)
        );
    }
    let step = nice_step((t1 - t0) / 8.0);
    let mut t = (t0 / step).ceil() * step;
    let bottom = TOP + panels.len() as f64 * (PANEL + GAP) - GAP;
    while t <= t1 + 1e-9 {
        let _ = writeln!(
            out,
            r#"<text x="{:.1}" y="{:.1}" text-anchor="middle">{}</text>"#,
            px(t),
            bottom + 18.0,
            trim_number(t)
        );
        t += step;
    }
    let _ = writeln!(
        out,
        r#"<text x="{:.1}" y="{:.1}" text-anchor="middle">seconds from the start of measurement</text>"#,
        LEFT + pw / 2.0,
        height - 8.0
    );
    out.push_str("</svg>\n");
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample(at_ms: u64, server: &str, writes: f64) -> Sample {
        Sample {
            at_ms,
            server: server.into(),
            read_per_s: None,
            write_per_s: Some(writes),
            regions: 2,
            memstore_mib: 3,
            max_store_files: 4,
            compacting: 0,
        }
    }

    #[test]
    fn a_panel_per_figure_seen_and_a_line_per_server() {
        let seen = Observed {
            samples: vec![
                sample(2_000, "rs1:1", 100.0),
                sample(5_000, "rs1:1", 300.0),
                sample(3_000, "rs2:2", 50.0),
            ],
            ..Default::default()
        };
        let svg = svg(&seen, 1_000, 10.0, &[], "t").unwrap();
        // Reads were never rated, nor /jmx read: those panels are left out.
        for shown in ["writes/s", "memstore MiB", "most store files", "compacting"] {
            assert!(svg.contains(&format!(">{shown}</text>")), "{shown}");
        }
        for left in ["reads/s", "compactions queued", "GC ms"] {
            assert!(!svg.contains(&format!(">{left}</text>")), "{left}");
        }
        assert_eq!(svg.matches("<title>rs1:1 writes/s</title>").count(), 1);
        assert_eq!(svg.matches("<polyline").count(), 4 * 2);
        assert!(svg_contains_legend(&svg, "rs2:2"));
        assert!(super::svg(&Observed::default(), 0, 1.0, &[], "t").is_none());
    }

    fn svg_contains_legend(svg: &str, server: &str) -> bool {
        svg.contains(&format!(">{server}</text>"))
    }
}
