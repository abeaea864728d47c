//! Aligned plain-text tables: the first column left-aligned, the others right-aligned.

/// `1234567` as `1,234,567`.
pub fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// A duration in nanoseconds, in the unit that suits it: `850 ns`, `12.5 µs`, `3.25 ms`,
/// `1.500 s`.
pub fn fmt_ns(ns: u64) -> String {
    let v = ns as f64;
    if ns < 1_000 {
        format!("{ns} ns")
    } else if ns < 1_000_000 {
        format!("{:.1} µs", v / 1e3)
    } else if ns < 1_000_000_000 {
        format!("{:.2} ms", v / 1e6)
    } else {
        format!("{:.3} s", v / 1e9)
    }
}

/// A table of text cells, rendered with columns padded to their widest cell.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TextTable {
    rows: Vec<Vec<String>>,
}

impl TextTable {
    /// A table with a header row.
    pub fn new(header: &[&str]) -> Self {
        TextTable {
            rows: vec![header.iter().map(|s| s.to_string()).collect()],
        }
    }

    /// Appends a row.
    pub fn row(&mut self, cells: Vec<String>) {
        self.rows.push(cells);
    }

    /// The table as lines of text, each ending in a newline.
    pub fn render(&self) -> String {
        let cols = self.rows.iter().map(Vec::len).max().unwrap_or(0);
        let width: Vec<usize> = (0..cols)
            .map(|c| {
                self.rows
                    .iter()
                    .filter_map(|r| r.get(c))
                    .map(|s| s.chars().count())
                    .max()
                    .unwrap_or(0)
            })
            .collect();
        let mut out = String::new();
        for r in &self.rows {
            let mut line = String::new();
            for (c, cell) in r.iter().enumerate() {
                if c == 0 {
                    line.push_str(&format!("{cell:<w$}", w = width[c]));
                } else {
                    line.push_str(&format!("  {cell:>w$}", w = width[c]));
                }
            }
            out.push_str(line.trim_end());
            out.push('\n');
        }
        out
    }
}

/// Text made safe inside HTML and SVG elements and attributes.
pub(crate) fn escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// The line a load or run prints about the calls its backend repeated, by kind:
/// `retries: 12 (NotServingRegion 9, RegionMoved 3)`; none when nothing was repeated.
pub fn retries_line(retries: &std::collections::BTreeMap<String, u64>) -> Option<String> {
    let total: u64 = retries.values().sum();
    (total > 0).then(|| {
        let kinds: Vec<String> = retries
            .iter()
            .filter(|(_, n)| **n > 0)
            .map(|(kind, n)| format!("{kind} {}", thousands(*n)))
            .collect();
        format!("retries: {} ({})", thousands(total), kinds.join(", "))
    })
}

/// The retries by kind made between two readings of a backend's counters.
pub fn retries_since(before: &[(String, u64)], after: &[(String, u64)]) -> std::collections::BTreeMap<String, u64> {
    after
        .iter()
        .map(|(kind, n)| {
            let was = before.iter().find(|(k, _)| k == kind).map_or(0, |(_, n)| *n);
            (kind.clone(), n.saturating_sub(was))
        })
        .filter(|(_, n)| *n > 0)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn thousands_separators() {
        assert_eq!(thousands(0), "0");
        assert_eq!(thousands(999), "999");
        assert_eq!(thousands(1000), "1,000");
        assert_eq!(thousands(1_234_567), "1,234,567");
    }

    #[test]
    fn columns_align() {
        let mut t = TextTable::new(&["table", "rows"]);
        t.row(vec!["useractions".into(), thousands(12345)]);
        t.row(vec!["blog".into(), "7".into()]);
        assert_eq!(
            t.render(),
            "table          rows\nuseractions  12,345\nblog              7\n"
        );
    }

    #[test]
    fn retries_line_and_difference() {
        let before = vec![("NotServingRegion".to_string(), 2)];
        let after = vec![("NotServingRegion".to_string(), 5), ("RegionMoved".to_string(), 1200)];
        let since = super::retries_since(&before, &after);
        assert_eq!(since.len(), 2);
        assert_eq!(
            super::retries_line(&since).unwrap(),
            "retries: 1,203 (NotServingRegion 3, RegionMoved 1,200)"
        );
        assert_eq!(super::retries_line(&super::retries_since(&after, &after)), None);
    }
}
