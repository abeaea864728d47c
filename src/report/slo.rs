//! Latency targets (`run --slo`): what they say, how they are read from the command line,
//! and the verdicts a run's summary gives them.

use super::summary::{ALL, OpReport, RunSummary, Verdict};
use std::fmt;
use std::str::FromStr;

/// What a target measures.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Metric {
    /// A response-time figure: `mean`, `p50`, `p90`, `p99`, `p99.9` or `max`.
    Latency(&'static str),
    /// Failed operations as a percentage of all.
    Errors,
    /// Successful operations per second.
    Throughput,
}

/// How the measured figure must compare with the target's value.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Bound {
    /// Below.
    Below,
    /// At most.
    AtMost,
    /// Above.
    Above,
    /// At least.
    AtLeast,
}

/// `--slo SCOPE:METRIC<VALUE`, e.g. `timeline:p99<5ms`, `all:errors<0.1%`,
/// `all:throughput>2000`.
#[derive(Debug, Clone, PartialEq)]
pub struct Slo {
    /// `all`, or an operation of the mix.
    pub scope: String,
    /// The figure.
    pub metric: Metric,
    /// How it must compare.
    pub bound: Bound,
    /// The value: nanoseconds for latency, a percentage for errors, operations per second
    /// for throughput.
    pub value: f64,
}

impl FromStr for Slo {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        let form = "the form is SCOPE:METRIC<VALUE, e.g. timeline:p99<5ms, all:errors<0.1% or all:throughput>2000";
        let (scope, rest) = s.split_once(':').ok_or_else(|| format!("{s:?}: {form}"))?;
        let scope = scope.trim();
        if scope.is_empty() {
            return Err(format!("{s:?}: no operation before ':' ({form})"));
        }
        let (at, bound, len) = ["<=", ">=", "<", ">"]
            .iter()
            .filter_map(|op| rest.find(op).map(|i| (i, *op)))
            .min_by_key(|(i, op)| (*i, std::cmp::Reverse(op.len())))
            .map(|(i, op)| {
                let bound = match op {
                    "<=" => Bound::AtMost,
                    ">=" => Bound::AtLeast,
                    "<" => Bound::Below,
                    _ => Bound::Above,
                };
                (i, bound, op.len())
            })
            .ok_or_else(|| format!("{s:?}: no comparison (<, <=, > or >=); {form}"))?;
        let (name, value) = (rest[..at].trim(), rest[at + len..].trim());
        let metric = match name {
            "mean" => Metric::Latency("mean"),
            "p50" => Metric::Latency("p50"),
            "p90" => Metric::Latency("p90"),
            "p99" => Metric::Latency("p99"),
            "p99.9" | "p999" => Metric::Latency("p99.9"),
            "max" => Metric::Latency("max"),
            "errors" => Metric::Errors,
            "throughput" => Metric::Throughput,
            other => {
                return Err(format!(
                    "{s:?}: unknown metric {other:?}: expected mean, p50, p90, p99, p99.9, max, errors or throughput"
                ));
            }
        };
        let value = match metric {
            Metric::Latency(_) => latency_ns(value).map_err(|e| format!("{s:?}: {e}"))?,
            Metric::Errors => {
                let v = value
                    .strip_suffix('%')
                    .ok_or_else(|| format!("{s:?}: an error target is a percentage, e.g. errors<0.1%"))?;
                let v: f64 = v
                    .trim()
                    .parse()
                    .map_err(|_| format!("{s:?}: {value:?} is not a percentage"))?;
                if !(0.0..=100.0).contains(&v) {
                    return Err(format!("{s:?}: {value} is not between 0% and 100%"));
                }
                v
            }
            Metric::Throughput => {
                let v = value.strip_suffix("ops/s").unwrap_or(value).trim();
                let v: f64 = v
                    .parse()
                    .map_err(|_| format!("{s:?}: {value:?} is not operations per second, e.g. 2000"))?;
                if !(v.is_finite() && v >= 0.0) {
                    return Err(format!("{s:?}: {value:?} is not operations per second"));
                }
                v
            }
        };
        Ok(Slo {
            scope: scope.to_string(),
            metric,
            bound,
            value,
        })
    }
}

/// A duration with its unit (`ns`, `us` or `µs`, `ms`, `s`) in nanoseconds.
fn latency_ns(text: &str) -> Result<f64, String> {
    let unit_at = text
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .ok_or_else(|| format!("{text:?} has no unit: write e.g. 5ms, 250us or 1.5s"))?;
    let (number, unit) = text.split_at(unit_at);
    let number: f64 = number
        .parse()
        .map_err(|_| format!("{text:?} is not a duration like 5ms, 250us or 1.5s"))?;
    let scale = match unit.trim() {
        "ns" => 1.0,
        "us" | "µs" => 1e3,
        "ms" => 1e6,
        "s" => 1e9,
        other => return Err(format!("{text:?}: unknown unit {other:?}: expected ns, us, ms or s")),
    };
    Ok(number * scale)
}

impl fmt::Display for Slo {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let bound = match self.bound {
            Bound::Below => "<",
            Bound::AtMost => "<=",
            Bound::Above => ">",
            Bound::AtLeast => ">=",
        };
        let value = match self.metric {
            Metric::Latency(_) => super::fmt_ns(self.value.round() as u64),
            Metric::Errors => format!("{}%", self.value),
            Metric::Throughput => format!("{} ops/s", self.value),
        };
        write!(f, "{} {} {bound} {value}", self.scope, self.metric_name())
    }
}

impl Slo {
    fn metric_name(&self) -> &'static str {
        match self.metric {
            Metric::Latency(name) => name,
            Metric::Errors => "errors",
            Metric::Throughput => "throughput",
        }
    }

    /// Checks that the target names `all` or an operation of `ops`.
    pub fn check_scope(&self, ops: &[String]) -> Result<(), String> {
        if self.scope == ALL || ops.contains(&self.scope) {
            return Ok(());
        }
        Err(format!(
            "--slo {self}: {:?} is not an operation of the run's mix ({}) or all",
            self.scope,
            ops.join(", ")
        ))
    }

    /// The figure this target measures in `o`.
    fn measure(&self, o: &OpReport) -> f64 {
        let r = &o.response;
        match self.metric {
            Metric::Latency("mean") => r.mean,
            Metric::Latency("p50") => r.p50 as f64,
            Metric::Latency("p90") => r.p90 as f64,
            Metric::Latency("p99") => r.p99 as f64,
            Metric::Latency("p99.9") => r.p999 as f64,
            Metric::Latency(_) => r.max as f64,
            Metric::Errors => {
                let all = o.count + o.errors;
                if all == 0 {
                    0.0
                } else {
                    o.errors as f64 * 100.0 / all as f64
                }
            }
            Metric::Throughput => o.ops_per_s,
        }
    }

    fn holds(&self, measured: f64) -> bool {
        match self.bound {
            Bound::Below => measured < self.value,
            Bound::AtMost => measured <= self.value,
            Bound::Above => measured > self.value,
            Bound::AtLeast => measured >= self.value,
        }
    }

    /// The figure as reports print it.
    fn show(&self, measured: f64) -> String {
        match self.metric {
            Metric::Latency(_) => super::fmt_ns(measured.round() as u64),
            Metric::Errors => format!("{measured:.3}%"),
            Metric::Throughput => format!("{measured:.1} ops/s"),
        }
    }

    /// The verdict of `s` on this target. A latency target of an operation that never
    /// succeeded is missed: there is nothing that held it.
    pub fn verdict(&self, s: &RunSummary) -> Verdict {
        self.verdict_of(&s.ops, &s.all)
    }

    /// The verdict of the figures `ops` and `all` (a run's, or one stage's) on this target.
    pub fn verdict_of(&self, ops: &[OpReport], all: &OpReport) -> Verdict {
        let report = if self.scope == ALL {
            Some(all)
        } else {
            ops.iter().find(|o| o.op == self.scope)
        };
        let (measured, held) = match report {
            Some(o) if matches!(self.metric, Metric::Latency(_)) && o.count == 0 => (None, false),
            Some(o) => {
                let m = self.measure(o);
                (Some(m), self.holds(m))
            }
            None => (None, false),
        };
        Verdict {
            target: self.to_string(),
            measured: measured.map(|m| self.show(m)),
            value: measured,
            held,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn targets_read_as_written() {
        let t: Slo = "timeline:p99<5ms".parse().unwrap();
        assert_eq!(
            (t.scope.as_str(), t.metric, t.bound, t.value),
            ("timeline", Metric::Latency("p99"), Bound::Below, 5e6)
        );
        let t: Slo = "all:errors<=0.1%".parse().unwrap();
        assert_eq!((t.metric, t.bound, t.value), (Metric::Errors, Bound::AtMost, 0.1));
        let t: Slo = "all:throughput>2000".parse().unwrap();
        assert_eq!((t.metric, t.bound, t.value), (Metric::Throughput, Bound::Above, 2000.0));
        let t: Slo = "get:p99.9 >= 1.5s".parse().unwrap();
        assert_eq!(
            (t.metric, t.bound, t.value),
            (Metric::Latency("p99.9"), Bound::AtLeast, 1.5e9)
        );
        assert_eq!("a:mean<250us".parse::<Slo>().unwrap().value, 250e3);
        assert_eq!("a:max<250µs".parse::<Slo>().unwrap().value, 250e3);
        assert_eq!("a:throughput>=10 ops/s".parse::<Slo>().unwrap().value, 10.0);
        assert_eq!(
            "timeline:p99<5ms".parse::<Slo>().unwrap().to_string(),
            "timeline p99 < 5.00 ms"
        );
    }

    #[test]
    fn malformed_targets_say_what_is_wrong() {
        for (text, says) in [
            ("p99<5ms", "SCOPE:METRIC<VALUE"),
            (":p99<5ms", "no operation"),
            ("all:p99=5ms", "no comparison"),
            ("all:p95<5ms", "unknown metric \"p95\""),
            ("all:p99<5", "no unit"),
            ("all:p99<5min", "unknown unit"),
            ("all:errors<0.1", "a percentage"),
            ("all:errors<200%", "between 0% and 100%"),
            ("all:throughput>lots", "not operations per second"),
        ] {
            let err = text.parse::<Slo>().unwrap_err();
            assert!(err.contains(says), "{text}: {err}");
        }
    }
}
