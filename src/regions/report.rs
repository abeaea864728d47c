//! What a [`Spread`] looks like in reports: `regions.csv`, the per-table skew figures of
//! `summary.json`, the terminal and the load manifest, and the heat map of `index.html`.

use crate::keys::{from_string_binary, to_string_binary};
use crate::regions::Bounds;
use crate::store::counted::{Spread, TableSpread, Tally};
use serde::{Deserialize, Serialize};
use std::fmt::Write as _;
use std::time::Duration;

/// One table's spread in figures. Shares and max/mean ratios count rows; they are absent
/// where the table saw no rows of that kind.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TableSkew {
    /// The table.
    pub table: String,
    /// Its regions, as the backend reported them.
    pub regions: usize,
    /// Row mutations written, over all regions.
    pub rows_written: u64,
    /// Rows read.
    pub rows_read: u64,
    /// The busiest region's share of the rows written.
    pub write_hottest_share: Option<f64>,
    /// The busiest region's rows written over the mean per region (1 is even; the region
    /// count is the most).
    pub write_max_mean: Option<f64>,
    /// Start key (`toStringBinary`) of the region that took the most writes.
    pub write_hottest_start: Option<String>,
    /// Which region that is, 1 for the first in key order and `regions` for the last.
    #[serde(default)]
    pub write_hottest_region: Option<usize>,
    /// The busiest region's share of the rows read.
    pub read_hottest_share: Option<f64>,
    /// The busiest region's rows read over the mean per region.
    pub read_max_mean: Option<f64>,
    /// Start key of the region that served the most reads.
    pub read_hottest_start: Option<String>,
    /// Which region that is, counted from 1 in key order.
    #[serde(default)]
    pub read_hottest_region: Option<usize>,
}

/// (hottest share, max/mean, index of the hottest) of per-region counts; `None` when all
/// are zero.
fn hottest(counts: &[u64]) -> Option<(f64, f64, usize)> {
    let total: u64 = counts.iter().sum();
    if total == 0 {
        return None;
    }
    let (at, &max) = counts
        .iter()
        .enumerate()
        .max_by_key(|&(i, &c)| (c, std::cmp::Reverse(i)))
        .expect("a region");
    let mean = total as f64 / counts.len() as f64;
    Some((max as f64 / total as f64, max as f64 / mean, at))
}

/// Every table's skew figures.
pub fn skew(spread: &Spread) -> Vec<TableSkew> {
    spread.tables.iter().map(table_skew).collect()
}

fn table_skew(t: &TableSpread) -> TableSkew {
    let totals = t.totals();
    let written: Vec<u64> = totals.iter().map(|r| r.rows_written).collect();
    let read: Vec<u64> = totals.iter().map(|r| r.rows_read).collect();
    let w = hottest(&written);
    let r = hottest(&read);
    let start = |i: usize| to_string_binary(t.bounds.range(i).0);
    TableSkew {
        table: t.bounds.table.clone(),
        regions: t.bounds.len(),
        rows_written: written.iter().sum(),
        rows_read: read.iter().sum(),
        write_hottest_share: w.map(|w| w.0),
        write_max_mean: w.map(|w| w.1),
        write_hottest_start: w.map(|w| start(w.2)),
        write_hottest_region: w.map(|w| w.2 + 1),
        read_hottest_share: r.map(|r| r.0),
        read_max_mean: r.map(|r| r.1),
        read_hottest_start: r.map(|r| start(r.2)),
        read_hottest_region: r.map(|r| r.2 + 1),
    }
}

/// The header of `regions.csv`.
pub const CSV_HEADER: [&str; 10] = [
    "table",
    "start",
    "end",
    "rows_written",
    "bytes_written",
    "rows_read",
    "bytes_read",
    "write_share",
    "read_share",
    "region",
];

fn share(part: u64, whole: u64) -> f64 {
    if whole == 0 { 0.0 } else { part as f64 / whole as f64 }
}

/// Per table and region: start and end keys in HBase's `toStringBinary` form, rows and
/// bytes written and read, and the region's share of the table's rows written and read.
pub fn csv(spread: &Spread) -> Vec<u8> {
    let mut w = csv::Writer::from_writer(Vec::new());
    w.write_record(CSV_HEADER).expect("writing to memory");
    for t in &spread.tables {
        let totals = t.totals();
        let (rw, rr) = sums(&totals);
        for (i, r) in totals.iter().enumerate() {
            let (start, end) = t.bounds.range(i);
            w.write_record([
                t.bounds.table.clone(),
                to_string_binary(start),
                to_string_binary(end),
                r.rows_written.to_string(),
                r.bytes_written.to_string(),
                r.rows_read.to_string(),
                r.bytes_read.to_string(),
                format!("{:.6}", share(r.rows_written, rw)),
                format!("{:.6}", share(r.rows_read, rr)),
                (i + 1).to_string(),
            ])
            .expect("writing to memory");
        }
    }
    w.into_inner().expect("writing to memory")
}

/// One table of a `regions.csv` read back: its regions and their totals.
#[derive(Debug, Clone, PartialEq)]
pub struct TableTotals {
    /// The table and where its regions begin.
    pub bounds: Bounds,
    /// Per region, in key order.
    pub totals: Vec<Tally>,
}

/// Reads a `regions.csv` back (as [`csv`] writes it); errors name the line and field.
pub fn read_csv(bytes: &[u8]) -> Result<Vec<TableTotals>, String> {
    let mut r = csv::Reader::from_reader(bytes);
    let headers = r.headers().map_err(|e| e.to_string())?;
    if headers.iter().ne(CSV_HEADER) {
        return Err(format!("line 1: the header is not {}", CSV_HEADER.join(",")));
    }
    let mut out: Vec<TableTotals> = Vec::new();
    let mut last_end: Vec<u8> = Vec::new();
    for (n, rec) in r.records().enumerate() {
        let line = n + 2;
        let rec = rec.map_err(|e| format!("line {line}: {e}"))?;
        let field = |i: usize| rec.get(i).unwrap_or("");
        let count = |i: usize| {
            field(i)
                .parse::<u64>()
                .map_err(|_| format!("line {line}: {}: {:?} is not a count", CSV_HEADER[i], field(i)))
        };
        let (table, start, end) = (field(0), from_string_binary(field(1)), from_string_binary(field(2)));
        let tally = Tally {
            rows_written: count(3)?,
            bytes_written: count(4)?,
            rows_read: count(5)?,
            bytes_read: count(6)?,
        };
        let region = count(9)? as usize;
        match out.last_mut() {
            Some(t) if t.bounds.table == table => {
                if region != t.totals.len() + 1 || start != last_end || start.is_empty() {
                    return Err(format!(
                        "line {line}: region {region} of {table} does not follow region {} (start {:?})",
                        t.totals.len(),
                        field(1)
                    ));
                }
                t.bounds.splits.push(start);
                t.totals.push(tally);
            }
            _ => {
                if out.last().is_some_and(|_| !last_end.is_empty()) {
                    return Err(format!("line {line}: the table before {table} does not reach its end"));
                }
                if region != 1 || !start.is_empty() {
                    return Err(format!(
                        "line {line}: {table} starts at region {region}, key {:?}, not region 1 at the first key",
                        field(1)
                    ));
                }
                out.push(TableTotals {
                    bounds: Bounds {
                        table: table.to_string(),
                        splits: Vec::new(),
                    },
                    totals: vec![tally],
                });
            }
        }
        last_end = end;
    }
    if !last_end.is_empty() {
        return Err("the last table does not reach its end".into());
    }
    Ok(out)
}

/// The regions of several shards' runs added up, as one column of `column`; `Err` says why
/// they cannot be (the shards saw different regions: a region split or merged meanwhile).
pub fn add_up(parts: &[Vec<TableTotals>], column: Duration) -> Result<Spread, String> {
    let Some(first) = parts.first() else {
        return Err("no regions".into());
    };
    let mut sum = first.clone();
    for (k, part) in parts.iter().enumerate().skip(1) {
        let same = part.len() == sum.len() && part.iter().zip(&sum).all(|(a, b)| a.bounds == b.bounds);
        if !same {
            return Err(format!("report {} saw other regions than report 1", k + 1));
        }
        for (t, p) in sum.iter_mut().zip(part) {
            for (a, b) in t.totals.iter_mut().zip(&p.totals) {
                a.rows_written += b.rows_written;
                a.bytes_written += b.bytes_written;
                a.rows_read += b.rows_read;
                a.bytes_read += b.bytes_read;
            }
        }
    }
    Ok(Spread {
        column,
        tables: sum
            .into_iter()
            .map(|t| TableSpread {
                bounds: t.bounds,
                tallies: vec![t.totals],
            })
            .collect(),
    })
}

fn sums(totals: &[Tally]) -> (u64, u64) {
    (
        totals.iter().map(|r| r.rows_written).sum(),
        totals.iter().map(|r| r.rows_read).sum(),
    )
}

/// One table's regions as the load manifest lists them.
pub fn manifest_regions(t: &TableSpread) -> Vec<RegionEntry> {
    let totals = t.totals();
    let (rw, rr) = sums(&totals);
    totals
        .iter()
        .enumerate()
        .map(|(i, r)| {
            let (start, end) = t.bounds.range(i);
            RegionEntry {
                start: to_string_binary(start),
                end: to_string_binary(end),
                rows_written: r.rows_written,
                bytes_written: r.bytes_written,
                rows_read: r.rows_read,
                bytes_read: r.bytes_read,
                write_share: share(r.rows_written, rw),
                read_share: share(r.rows_read, rr),
            }
        })
        .collect()
}

/// One region of a load manifest's table.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RegionEntry {
    /// First key (as HBase's shell writes keys).
    pub start: String,
    /// Key after the last.
    pub end: String,
    /// Rows written into it.
    pub rows_written: u64,
    /// Bytes written into it.
    pub bytes_written: u64,
    /// Rows read from it.
    pub rows_read: u64,
    /// Bytes read from it.
    pub bytes_read: u64,
    /// Its share of the table's rows written.
    pub write_share: f64,
    /// Its share of the table's rows read.
    pub read_share: f64,
}

/// A ratio as the terminal shows it.
pub fn fmt_share(v: Option<f64>) -> String {
    v.map_or("-".into(), |v| format!("{:.1}%", v * 100.0))
}

/// A max/mean ratio as the terminal shows it.
pub fn fmt_ratio(v: Option<f64>) -> String {
    v.map_or("-".into(), |v| format!("{v:.2}"))
}

const CELL_W: f64 = 6.0;

/// Which count of a tally a heat-map panel shows.
type Pick = fn(&Tally) -> u64;
const LABEL_W: f64 = 190.0;

/// The heat map: per table, regions (rows, first region on top) against columns of time,
/// one panel for rows written and one for rows read, each shaded against its own busiest
/// cell. Columns before `warmup` ends are marked.
pub fn heat_map(spread: &Spread, warmup: Duration) -> String {
    let mut panels: Vec<(String, &TableSpread, Pick)> = Vec::new();
    for t in &spread.tables {
        let totals = t.totals();
        let (rw, rr) = sums(&totals);
        if rw > 0 {
            panels.push((format!("{} — rows written", t.bounds.table), t, |c| c.rows_written));
        }
        if rr > 0 {
            panels.push((format!("{} — rows read", t.bounds.table), t, |c| c.rows_read));
        }
    }
    let columns = spread.tables.iter().map(|t| t.tallies.len()).max().unwrap_or(0).max(1);
    let col_s = spread.column.as_secs_f64();
    let width = LABEL_W + columns as f64 * CELL_W + 20.0;
    let mut body = String::new();
    let mut y = 10.0;
    for (title, t, pick) in &panels {
        let regions = t.bounds.len();
        let cell_h = (240.0 / regions as f64).clamp(2.0, 14.0);
        let max = t.tallies.iter().flatten().map(pick).max().unwrap_or(0).max(1);
        let _ = writeln!(
            body,
            r#"<text x="4" y="{:.1}" font-size="13" font-weight="bold">{}</text>"#,
            y + 12.0,
            crate::report::text::escape(title)
        );
        y += 20.0;
        let top = y;
        // Label at most about 16 regions.
        let every = regions.div_ceil(16).max(1);
        for r in 0..regions {
            let ry = top + r as f64 * cell_h;
            if r % every == 0 {
                let mut label = to_string_binary(t.bounds.range(r).0);
                if label.is_empty() {
                    label = "(first)".into();
                }
                if label.chars().count() > 28 {
                    label = label.chars().take(27).collect::<String>() + "…";
                }
                let _ = writeln!(
                    body,
                    r#"<text x="{:.1}" y="{:.1}" font-size="10" text-anchor="end">{}</text>"#,
                    LABEL_W - 6.0,
                    ry + cell_h.max(10.0) - 2.0,
                    crate::report::text::escape(&label)
                );
            }
            for (c, column) in t.tallies.iter().enumerate() {
                let v = column.get(r).map(pick).unwrap_or(0);
                if v == 0 {
                    continue;
                }
                // Square root so that a region at a quarter of the busiest still shows.
                let level = (v as f64 / max as f64).sqrt();
                let shade = (255.0 * (1.0 - level)).round() as u8;
                let _ = writeln!(
                    body,
                    r#"<rect x="{:.1}" y="{ry:.1}" width="{CELL_W}" height="{cell_h:.1}" fill="rgb(200,{shade},{shade})"><title>region {} at {:.0} s: {v} rows</title></rect>"#,
                    LABEL_W + c as f64 * CELL_W,
                    r + 1,
                    c as f64 * col_s
                );
            }
        }
        let bottom = top + regions as f64 * cell_h;
        let _ = writeln!(
            body,
            r##"<rect x="{LABEL_W}" y="{top:.1}" width="{:.1}" height="{:.1}" fill="none" stroke="#999"/>"##,
            columns as f64 * CELL_W,
            bottom - top
        );
        if !warmup.is_zero() && col_s > 0.0 {
            let x = LABEL_W + (warmup.as_secs_f64() / col_s) * CELL_W;
            let _ = writeln!(
                body,
                r##"<line x1="{x:.1}" y1="{top:.1}" x2="{x:.1}" y2="{bottom:.1}" stroke="#333" stroke-dasharray="3,2"><title>end of warm-up</title></line>"##
            );
        }
        let _ = writeln!(
            body,
            r#"<text x="{LABEL_W}" y="{:.1}" font-size="10">0 s</text><text x="{:.1}" y="{:.1}" font-size="10" text-anchor="end">{:.0} s ({:.1} s per column)</text>"#,
            bottom + 12.0,
            LABEL_W + columns as f64 * CELL_W,
            bottom + 12.0,
            columns as f64 * col_s,
            col_s
        );
        y = bottom + 26.0;
    }
    format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{width:.0}\" height=\"{:.0}\" font-family=\"sans-serif\">\n<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n{body}</svg>\n",
        y + 4.0
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::regions::Bounds;

    fn spread() -> Spread {
        let tally = |w: u64, r: u64| Tally {
            rows_written: w,
            bytes_written: w * 10,
            rows_read: r,
            bytes_read: r * 10,
        };
        Spread {
            column: Duration::from_secs(1),
            tables: vec![TableSpread {
                bounds: Bounds {
                    table: "t".into(),
                    splits: vec![b"m".to_vec(), vec![b'x', 0xff]],
                },
                tallies: vec![
                    vec![tally(1, 0), tally(2, 0), tally(5, 4)],
                    vec![tally(0, 0), tally(0, 0), tally(2, 0)],
                ],
            }],
        }
    }

    #[test]
    fn regions_csv_reads_back_and_adds_up() {
        let s = spread();
        let back = read_csv(&csv(&s)).unwrap();
        assert_eq!(back.len(), 1);
        assert_eq!(back[0].bounds, s.tables[0].bounds);
        assert_eq!(back[0].totals, s.tables[0].totals());
        let sum = add_up(&[back.clone(), back.clone()], Duration::from_secs(9)).unwrap();
        let doubled: Vec<u64> = sum.tables[0].totals().iter().map(|t| t.bytes_written).collect();
        assert_eq!(doubled, [20, 40, 140]);
        // The sum's file is the one a run with both shards' counts would write.
        assert_eq!(read_csv(&csv(&sum)).unwrap()[0].totals, sum.tables[0].totals());

        let mut other = back.clone();
        other[0].bounds.splits.pop();
        other[0].totals.pop();
        let e = add_up(&[back, other], Duration::from_secs(1)).unwrap_err();
        assert_eq!(e, "report 2 saw other regions than report 1");

        let text = String::from_utf8(csv(&s)).unwrap();
        let e = read_csv(text.replacen(",m,1,", ",m,one,", 1).as_bytes()).unwrap_err();
        assert!(e.starts_with("line 2: rows_written: \"one\""), "{e}");
        let gap: String = text
            .lines()
            .filter(|l| !l.ends_with(",2"))
            .map(|l| format!("{l}\n"))
            .collect();
        let e = read_csv(gap.as_bytes()).unwrap_err();
        assert!(e.contains("region 3 of t does not follow region 1"), "{e}");
    }

    #[test]
    fn skew_names_the_hottest_region() {
        let s = skew(&spread());
        assert_eq!(s.len(), 1);
        let t = &s[0];
        assert_eq!((t.regions, t.rows_written, t.rows_read), (3, 10, 4));
        assert_eq!(t.write_hottest_share, Some(0.7));
        assert!((t.write_max_mean.unwrap() - 2.1).abs() < 1e-9);
        assert_eq!(t.write_hottest_start.as_deref(), Some("x\\xFF"));
        assert_eq!(t.read_max_mean, Some(3.0));
    }

    #[test]
    fn csv_lists_each_region_with_its_keys_and_shares() {
        let text = String::from_utf8(csv(&spread())).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines[0], CSV_HEADER.join(","));
        assert_eq!(lines[1], "t,,m,1,10,0,0,0.100000,0.000000,1");
        assert_eq!(lines[3], "t,x\\xFF,,7,70,4,40,0.700000,1.000000,3");
    }

    #[test]
    fn heat_map_has_a_cell_per_busy_region_and_interval() {
        let svg = heat_map(&spread(), Duration::from_secs(1));
        assert_eq!(svg.matches("<rect x=").count(), 4 + 1 + 1 + 1, "{svg}");
        assert!(svg.contains("t — rows written") && svg.contains("t — rows read"));
        assert!(svg.contains("end of warm-up"));
    }
}
