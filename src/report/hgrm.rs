//! HdrHistogram's percentile-distribution text (`.hgrm`), as its Java
//! `outputPercentileDistribution` writes it: the tools that plot `.hgrm` files read this.

use crate::stats::{Histogram, SIGFIG};
use std::fmt::Write as _;

/// The distribution of `h` with values divided by `scale` (1e6: nanoseconds shown as ms),
/// five percentile ticks per halving distance, as Java's default.
pub fn percentiles(h: &Histogram, scale: f64) -> String {
    let mut out = String::new();
    let _ = write!(
        out,
        "{:>12} {:>14} {:>10} {:>14}\n\n",
        "Value", "Percentile", "TotalCount", "1/(1-Percentile)"
    );
    if !h.is_empty() {
        let mut total = 0u64;
        for v in h.iter_quantiles(5) {
            total += v.count_since_last_iteration();
            let q = v.quantile_iterated_to();
            let value = v.value_iterated_to() as f64 / scale;
            if q < 1.0 {
                let _ = writeln!(out, "{value:12.3} {q:2.12} {:10} {:14.2}", total, 1.0 / (1.0 - q));
            } else {
                let _ = writeln!(out, "{value:12.3} {q:2.12} {:10}", total);
            }
        }
    }
    let sub_buckets = (2 * 10u64.pow(u32::from(SIGFIG))).next_power_of_two();
    let (mean, sd, max) = if h.is_empty() {
        (0.0, 0.0, 0.0)
    } else {
        (h.mean() / scale, h.stdev() / scale, h.max() as f64 / scale)
    };
    let _ = writeln!(out, "#[Mean    = {mean:12.3}, StdDeviation   = {sd:12.3}]");
    let _ = writeln!(out, "#[Max     = {max:12.3}, Total count    = {:12}]", h.len());
    let _ = writeln!(
        out,
        "#[Buckets = {:12}, SubBuckets     = {:12}]",
        h.buckets(),
        sub_buckets
    );
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::{histogram, record};

    #[test]
    fn lays_out_like_hdrhistogram() {
        let mut h = histogram();
        for v in 1..=1000u64 {
            record(&mut h, v * 1_000_000);
        }
        let text = percentiles(&h, 1_000_000.0);
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines[0], "       Value     Percentile TotalCount 1/(1-Percentile)");
        assert_eq!(lines[1], "");
        assert_eq!(lines[2], "       1.000 0.000000000000          1           1.00");
        let last = lines.iter().rev().find(|l| !l.starts_with('#')).unwrap();
        assert!(last.ends_with(" 1.000000000000       1000"), "{last}");
        assert!(text.contains("#[Mean    =      500.500, StdDeviation   =      288.675]"));
        assert!(
            text.contains("#[Max     =     1000.342, Total count    =         1000]"),
            "{text}"
        );
        assert!(text.contains("SubBuckets     =         2048]"));
        // Percentiles only grow.
        let qs: Vec<f64> = lines[2..]
            .iter()
            .filter(|l| !l.starts_with('#'))
            .map(|l| l.split_whitespace().nth(1).unwrap().parse().unwrap())
            .collect();
        assert!(qs.windows(2).all(|w| w[0] <= w[1]));
    }
}
