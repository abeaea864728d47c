//! Latency recording: HdrHistograms in nanoseconds with 3 significant digits, one set per
//! operation, kept by each worker and merged late with `Histogram::add`. Also the compact
//! text form (V2 compressed, base64) that reports store so any percentile can be recomputed.
//! Pure: no I/O, no locks.

use base64::Engine as _;
use hdrhistogram::serialization::{Deserializer, Serializer as _, V2DeflateSerializer};
use std::collections::BTreeMap;

pub mod changepoint;
mod significance;
#[cfg(test)]
pub(crate) mod sim;

pub use significance::{quantile_shift, student_t, welch, welch_histograms};

/// A latency histogram, values in nanoseconds.
pub type Histogram = hdrhistogram::Histogram<u64>;

/// Largest value tracked: one hour; longer values are recorded as one hour.
pub const HIGHEST_NS: u64 = 3_600_000_000_000;
/// Significant decimal digits kept: values are exact to 0.1%.
pub const SIGFIG: u8 = 3;

/// An empty histogram of the harness's range and precision.
pub fn histogram() -> Histogram {
    Histogram::new_with_bounds(1, HIGHEST_NS, SIGFIG).expect("constant bounds are valid")
}

/// Records `ns`, clamped into the tracked range (never fails).
#[inline]
pub fn record(h: &mut Histogram, ns: u64) {
    h.saturating_record(ns.clamp(1, HIGHEST_NS));
}

/// The histogram in HdrHistogram's V2 compressed encoding, as base64: what the interval log
/// holds per line, and what `summary.json` stores.
pub fn encode(h: &Histogram) -> String {
    let mut bytes = Vec::new();
    V2DeflateSerializer::new()
        .serialize(h, &mut bytes)
        .expect("serializing into memory cannot fail");
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

/// Reads [`encode`]'s form (or plain V2) back; the error says what is wrong.
pub fn decode(text: &str) -> Result<Histogram, String> {
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(text.trim())
        .map_err(|e| format!("not base64: {e}"))?;
    let h: Histogram = Deserializer::new()
        .deserialize(&mut bytes.as_slice())
        .map_err(|e| format!("not an HdrHistogram: {e:?}"))?;
    let mut out = histogram();
    out.add(&h).map_err(|e| format!("histogram out of range: {e:?}"))?;
    Ok(out)
}

/// The figures reports print for one histogram, in nanoseconds.
#[derive(Debug, Clone, Copy, PartialEq, Default, serde::Serialize, serde::Deserialize)]
pub struct Summary {
    /// Values recorded.
    pub count: u64,
    /// Mean.
    pub mean: f64,
    /// Smallest value.
    pub min: u64,
    /// Median.
    pub p50: u64,
    /// 90th percentile.
    pub p90: u64,
    /// 99th percentile.
    pub p99: u64,
    /// 99.9th percentile.
    pub p999: u64,
    /// Largest value.
    pub max: u64,
}

impl Summary {
    /// The figures of `h` (all zero when it is empty).
    pub fn of(h: &Histogram) -> Summary {
        if h.is_empty() {
            return Summary::default();
        }
        Summary {
            count: h.len(),
            mean: h.mean(),
            min: h.min(),
            p50: h.value_at_quantile(0.5),
            p90: h.value_at_quantile(0.9),
            p99: h.value_at_quantile(0.99),
            p999: h.value_at_quantile(0.999),
            max: h.max(),
        }
    }

    /// A figure by its report name: `mean`, `p50`, `p90`, `p99`, `p999` (or `p99.9`), `max`.
    pub fn get(&self, name: &str) -> Option<f64> {
        Some(match name {
            "mean" => self.mean,
            "min" => self.min as f64,
            "p50" => self.p50 as f64,
            "p90" => self.p90 as f64,
            "p99" => self.p99 as f64,
            "p999" | "p99.9" => self.p999 as f64,
            "max" => self.max as f64,
            _ => return None,
        })
    }
}

/// What one operation recorded: response times (from the intended start), service times (from
/// the actual start; recorded only under a target rate, where the two differ), errors by kind,
/// and how many operations started more than a second behind schedule.
#[derive(Debug, Clone)]
pub struct OpStats {
    /// Response times of the operations that succeeded.
    pub response: Histogram,
    /// Service times of the operations that succeeded (open loop only).
    pub service: Histogram,
    /// Failed operations by error kind: count and the first message seen.
    pub errors: BTreeMap<String, (u64, String)>,
    /// Operations (succeeded or not) that started over a second after their scheduled time.
    pub late: u64,
    /// Response times of the operations that succeeded with a stale answer (a secondary
    /// replica's, under TIMELINE reads); none until one does.
    pub stale: Option<Histogram>,
}

impl Default for OpStats {
    fn default() -> Self {
        OpStats {
            response: histogram(),
            service: histogram(),
            errors: BTreeMap::new(),
            late: 0,
            stale: None,
        }
    }
}

impl OpStats {
    /// Successful operations.
    pub fn ok(&self) -> u64 {
        self.response.len()
    }

    /// Failed operations.
    pub fn failed(&self) -> u64 {
        self.errors.values().map(|(n, _)| n).sum()
    }

    /// Every operation, succeeded or not.
    pub fn total(&self) -> u64 {
        self.ok() + self.failed()
    }

    /// Counts a failure of `kind`, keeping the first message of each kind.
    pub fn error(&mut self, kind: &str, message: impl FnOnce() -> String) {
        match self.errors.get_mut(kind) {
            Some((n, _)) => *n += 1,
            None => {
                self.errors.insert(kind.to_string(), (1, message()));
            }
        }
    }

    /// Adds `other` into `self`.
    pub fn add(&mut self, other: &OpStats) {
        self.response.add(&other.response).expect("same bounds");
        self.service.add(&other.service).expect("same bounds");
        for (kind, (n, msg)) in &other.errors {
            let e = self.errors.entry(kind.clone()).or_insert((0, msg.clone()));
            e.0 += n;
        }
        self.late += other.late;
        if let Some(h) = &other.stale {
            self.stale.get_or_insert_with(histogram).add(h).expect("same bounds");
        }
    }

    /// Operations that succeeded with a stale answer.
    pub fn stale_count(&self) -> u64 {
        self.stale.as_ref().map_or(0, Histogram::len)
    }

    /// Response times of the operations that succeeded with a fresh answer: all but the
    /// stale ones.
    pub fn fresh(&self) -> Histogram {
        let mut h = self.response.clone();
        if let Some(s) = &self.stale {
            h.subtract(s).expect("stale answers are among the answers");
        }
        h
    }

    /// Whether nothing was recorded.
    pub fn is_empty(&self) -> bool {
        self.total() == 0
    }

    /// Takes what was recorded, leaving `self` empty with the same configuration.
    pub fn take(&mut self) -> OpStats {
        std::mem::take(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_clamped_and_summarizes_within_precision() {
        let mut h = histogram();
        for v in 1..=1000u64 {
            record(&mut h, v * 1000);
        }
        record(&mut h, 0);
        record(&mut h, u64::MAX);
        let s = Summary::of(&h);
        assert_eq!(s.count, 1002);
        assert_eq!(s.min, 1);
        assert!(s.max >= HIGHEST_NS && s.max <= HIGHEST_NS + HIGHEST_NS / 1000);
        let near = |got: u64, want: u64| (got as f64 - want as f64).abs() <= want as f64 * 0.001 + 1.0;
        // 1,002 values, the smallest is the clamped 0: the 501st, 902nd and 992nd values.
        assert!(near(s.p50, 500_000), "{}", s.p50);
        assert!(near(s.p90, 901_000), "{}", s.p90);
        assert!(near(s.p99, 991_000), "{}", s.p99);
        assert_eq!(Summary::of(&histogram()), Summary::default());
    }

    #[test]
    fn encoding_round_trips_exactly() {
        let mut h = histogram();
        for v in [1u64, 7, 2_000, 2_000, 31_337, 5_000_000, 1_000_000_000] {
            record(&mut h, v);
        }
        let text = encode(&h);
        assert!(!text.contains('\n'));
        let back = decode(&text).unwrap();
        assert_eq!(back, h);
        assert!(decode("not base64!").unwrap_err().contains("base64"));
        assert!(decode("AAAA").unwrap_err().contains("HdrHistogram"));
    }

    #[test]
    fn op_stats_merge_counts_errors_and_lateness() {
        let mut a = OpStats::default();
        record(&mut a.response, 10);
        a.error("io", || "disk".into());
        a.error("io", || unreachable!("the first message is kept"));
        a.late = 2;
        let mut b = OpStats::default();
        record(&mut b.response, 20);
        b.error("timeout", || "slow".into());
        b.late = 1;
        let mut total = OpStats::default();
        total.add(&a);
        total.add(&b);
        assert_eq!(total.ok(), 2);
        assert_eq!(total.failed(), 3);
        assert_eq!(total.total(), 5);
        assert_eq!(total.late, 3);
        assert_eq!(total.errors["io"], (2, "disk".to_string()));
        let taken = total.take();
        assert!(total.is_empty());
        assert_eq!(taken.total(), 5);
    }
}
