//! Change points in a series of runs: E-divisive means with Student's t, as Apache Otava
//! 0.8.0 (formerly DataStax Hunter) computes them, so that a history judged here and the same
//! series in Otava name the same runs.
//!
//! The series is cut into windows of `window` values, each half overlapping the last. In each
//! window the split that most separates the values (E-divisive's q̂, over every split and
//! every end) is tried by Student's t between the two segments beside it; kept splits
//! divide the window further until one is not significant at the first pass's looser
//! p-value. The splits of all windows are then pruned one at a time, weakest first: the
//! largest p-value while it is at least `max_pvalue`, then the smallest change while it is
//! at most `min_magnitude`. No permutation test: the result is a function of the values
//! alone. The order of every floating-point sum follows numpy's, so that q̂'s argmax falls
//! on the same split; p-values agree with scipy's to about 1e-11 (a different incomplete
//! beta), which can only matter for a p-value within that of a limit.

use super::student_t;

/// What [`change_points`] is asked: Otava's options, with its defaults.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Options {
    /// Values per window (Otava's `--window`, 50); at least 2.
    pub window: usize,
    /// The largest p-value a change point may have (`-P`, 0.001).
    pub max_pvalue: f64,
    /// The smallest change a change point may make, a share (`--magnitude`, 0).
    pub min_magnitude: f64,
    /// The values are logarithms: a change's magnitude is then the share by which the
    /// values they are the logarithms of changed (`exp(|after - before|) - 1`), where Otava,
    /// given logarithms, would take the share of the logarithms themselves. At a
    /// `min_magnitude` of 0 the two agree.
    pub logarithms: bool,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            window: 50,
            max_pvalue: 0.001,
            min_magnitude: 0.0,
            logarithms: false,
        }
    }
}

/// The two segments beside a change point.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Stats {
    /// Mean of the segment before.
    pub mean_before: f64,
    /// Mean of the segment after.
    pub mean_after: f64,
    /// Standard deviation (population) of the segment before.
    pub std_before: f64,
    /// Standard deviation (population) of the segment after.
    pub std_after: f64,
    /// Student's t (pooled variance, two-sided) between the segments.
    pub pvalue: f64,
}

impl Stats {
    /// The change from before to after, a share (0 where the mean before is 0).
    pub fn forward_change(&self) -> f64 {
        if self.mean_before == 0.0 {
            0.0
        } else {
            self.mean_after / self.mean_before - 1.0
        }
    }

    /// The change either way, the larger: a 5% drop is 1/0.95 - 1 = 0.0526.
    pub fn magnitude(&self) -> f64 {
        let back = if self.mean_after == 0.0 {
            0.0
        } else {
            self.mean_before / self.mean_after - 1.0
        };
        self.forward_change().abs().max(back.abs())
    }

    /// [`Stats::magnitude`] of values whose logarithms these are.
    pub fn magnitude_of_logarithms(&self) -> f64 {
        (self.mean_after - self.mean_before).abs().exp() - 1.0
    }
}

/// A change point: the first value of the new level, and its segments.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ChangePoint {
    /// Index of the first value after the change (never 0).
    pub index: usize,
    /// The segments beside it.
    pub stats: Stats,
}

/// The change points of `series`, in index order.
pub fn change_points(series: &[f64], o: &Options) -> Vec<ChangePoint> {
    assert!(o.window >= 2, "a window of at least 2 values");
    let p = o.max_pvalue;
    let first_pass = if p < 0.05 {
        p * 10.0
    } else if p < 0.5 {
        p * 2.0
    } else {
        p
    };
    let weak = split(series, o.window, first_pass);
    let magnitude = if o.logarithms {
        Stats::magnitude_of_logarithms
    } else {
        Stats::magnitude
    };
    merge(weak, series, p, o.min_magnitude, magnitude)
}

/// numpy's sum of a contiguous array: eight running sums up to 128 values, halves beyond.
fn pairwise_sum(a: &[f64]) -> f64 {
    let n = a.len();
    if n < 8 {
        return a.iter().fold(0.0, |s, x| s + x);
    }
    if n <= 128 {
        let mut r = [0.0; 8];
        r.copy_from_slice(&a[..8]);
        let mut i = 8;
        while i < n - n % 8 {
            for j in 0..8 {
                r[j] += a[i + j];
            }
            i += 8;
        }
        let mut s = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]));
        for x in &a[i..] {
            s += x;
        }
        return s;
    }
    let half = n / 2;
    let half = half - half % 8;
    pairwise_sum(&a[..half]) + pairwise_sum(&a[half..])
}

fn mean(a: &[f64]) -> f64 {
    pairwise_sum(a) / a.len() as f64
}

/// Population standard deviation, as `np.std`.
fn std(a: &[f64]) -> f64 {
    let m = mean(a);
    let sq: Vec<f64> = a.iter().map(|x| (x - m) * (x - m)).collect();
    (pairwise_sum(&sq) / a.len() as f64).sqrt()
}

/// Student's t between two segments as Otava's tester computes it: scipy's
/// `ttest_ind_from_stats` (pooled variance) given population standard deviations.
fn ttest(left: &[f64], right: &[f64]) -> Stats {
    let (n1, n2) = (left.len() as f64, right.len() as f64);
    let (m1, m2) = (mean(left), mean(right));
    let s1 = if left.len() >= 2 { std(left) } else { 0.0 };
    let s2 = if right.len() >= 2 { std(right) } else { 0.0 };
    let pvalue = if left.len() + right.len() > 2 {
        let v1 = if left.len() == 1 { 0.0 } else { s1 * s1 };
        let v2 = if right.len() == 1 { 0.0 } else { s2 * s2 };
        let df = n1 + n2 - 2.0;
        let pooled = ((n1 - 1.0) * v1 + (n2 - 1.0) * v2) / df;
        let denom = (pooled * (1.0 / n1 + 1.0 / n2)).sqrt();
        let t = (m1 - m2) / denom;
        if t.is_nan() {
            f64::NAN
        } else if t.is_infinite() {
            0.0
        } else {
            student_t(t, df)
        }
    } else {
        1.0
    };
    Stats {
        mean_before: m1,
        mean_after: m2,
        std_before: s1,
        std_after: s2,
        pvalue,
    }
}

/// The segments between change points at `indexes` (sorted) of a series of `n`, empty ones
/// left out.
fn intervals(indexes: impl Iterator<Item = usize>, n: usize) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let mut lo = 0;
    for i in indexes {
        if lo != i {
            out.push((lo, i));
        }
        lo = i;
    }
    if lo != n {
        out.push((lo, n));
    }
    out
}

/// The test of a change point at `index` among `intervals`: the two segments beside it,
/// whether it splits one or ends one.
fn stats_at(index: usize, series: &[f64], intervals: &[(usize, usize)]) -> Stats {
    for (i, &(lo, hi)) in intervals.iter().enumerate() {
        if hi == index {
            let (rlo, rhi) = intervals[i + 1];
            return ttest(&series[lo..hi], &series[rlo..rhi]);
        }
        if lo < index && index < hi {
            return ttest(&series[lo..index], &series[index..hi]);
        }
    }
    unreachable!("a change point within the series")
}

/// E-divisive's q̂ over one window: the pairwise distances' column sums and row running sums,
/// kept for every interval's candidate.
struct Window<'a> {
    x: &'a [f64],
    /// `v[c]`: the distances of value c + 1 to every value before it, summed in order.
    v: Vec<f64>,
    /// `h[r][c]`: value r's distances to values r + 1 ..= c + 1, summed in order.
    h: Vec<Vec<f64>>,
}

impl<'a> Window<'a> {
    fn new(x: &'a [f64]) -> Self {
        let n = x.len();
        let d = |r: usize, c: usize| (x[r] - x[c]).abs();
        let m = n.saturating_sub(1);
        let v = (0..m)
            .map(|c| {
                let mut s = d(0, c + 1);
                for r in 1..=c {
                    s += d(r, c + 1);
                }
                s
            })
            .collect();
        let h = (0..m)
            .map(|r| {
                let mut row = vec![0.0; m];
                let mut s = 0.0;
                for (c, cell) in row.iter_mut().enumerate().skip(r) {
                    s = if c == r { d(r, c + 1) } else { s + d(r, c + 1) };
                    *cell = s;
                }
                row
            })
            .collect();
        Window { x, v, h }
    }

    /// The best split of `[start, end)` (at least two values): its index and q̂, the first
    /// of the largest in numpy's row-major argmax over every split and every end.
    fn candidate(&self, start: usize, end: usize) -> (usize, f64) {
        let l = end - 1 - start;
        let d = |r: usize, c: usize| (self.x[r] - self.x[c]).abs();
        let vloc: Vec<f64> = (0..l)
            .map(|k| {
                let mut before = 0.0;
                for r in 0..start {
                    before = if r == 0 {
                        d(r, start + 1 + k)
                    } else {
                        before + d(r, start + 1 + k)
                    };
                }
                self.v[start + k] - before
            })
            .collect();
        let mut cv = Vec::with_capacity(l);
        let mut s = 0.0;
        for (k, x) in vloc.iter().enumerate() {
            s = if k == 0 { *x } else { s + x };
            cv.push(s);
        }
        let h = |t: usize, b: usize| self.h[start + t][start + b];
        // Column running sums of h down (for A) and up from the last row (for C).
        let mut down = vec![vec![0.0; l]; l];
        for b in 0..l {
            let mut s = h(0, b);
            down[0][b] = s;
            for (t, row) in down.iter_mut().enumerate().skip(1) {
                s += h(t, b);
                row[b] = s;
            }
        }
        let mut up = vec![vec![0.0; l]; l];
        let mut sums = vec![0.0; l];
        for t in (1..l).rev() {
            for (b, s) in sums.iter_mut().enumerate().skip(1) {
                *s = if t == l - 1 { h(t, b) } else { *s + h(t, b) };
            }
            up[t - 1].copy_from_slice(&sums);
        }
        let (mut best, mut at) = (f64::NEG_INFINITY, (0, 0));
        let mut nan = None;
        for a in 0..l {
            for b in 0..l {
                let q = if b < a {
                    0.0
                } else {
                    let av = (2.0 / (b + 2) as f64) * (down[a][b] - if a >= 1 { cv[a - 1] } else { 0.0 });
                    let bv = if a >= 1 && b >= 1 {
                        (2 * (b - a + 1)) as f64 / ((b + 2) * a) as f64 * cv[a - 1]
                    } else {
                        0.0
                    };
                    let cvv = if b > a {
                        (2 * (a + 1)) as f64 / ((b + 2) * (b - a)) as f64 * up[a][b]
                    } else {
                        0.0
                    };
                    (av - bv) - cvv
                };
                if q.is_nan() {
                    nan.get_or_insert((a, b));
                } else if q > best {
                    best = q;
                    at = (a, b);
                }
            }
        }
        let (a, _) = nan.unwrap_or(at);
        (a + 1 + start, if nan.is_some() { f64::NAN } else { best })
    }
}

/// The change points of one window, at `p` (window-local indexes).
fn detect(w: &[f64], p: f64) -> Vec<ChangePoint> {
    let calc = Window::new(w);
    let mut cps: Vec<ChangePoint> = Vec::new();
    loop {
        let iv = intervals(cps.iter().map(|c| c.index), w.len());
        let mut best: Option<(usize, f64)> = None;
        for &(lo, hi) in &iv {
            if hi - lo > 1 {
                let c = calc.candidate(lo, hi);
                // Python's max: the first of the largest (a NaN only where it comes first).
                if best.is_none_or(|b| c.1 > b.1) {
                    best = Some(c);
                }
            }
        }
        let Some((index, _)) = best else { break };
        let stats = stats_at(index, w, &iv);
        if stats.pvalue <= p {
            cps.push(ChangePoint { index, stats });
            cps.sort_by_key(|c| c.index);
        } else {
            break;
        }
    }
    cps
}

/// Every window's change points at `p`, each retested on the whole series between its
/// neighbours.
fn split(series: &[f64], window: usize, p: f64) -> Vec<ChangePoint> {
    let step = window / 2;
    let mut start = 0;
    let mut cps: Vec<ChangePoint> = Vec::new();
    while start < series.len() {
        let end = (start + window).min(series.len());
        let mut found = detect(&series[start..end], p);
        for c in &mut found {
            c.index += start;
        }
        let last = found.last().map_or(0, |c| c.index);
        start = last.max(start + step);
        for c in found {
            if cps.iter().all(|o| o.index != c.index) {
                cps.push(c);
            }
        }
    }
    cps.sort_by_key(|c| c.index);
    let iv = intervals(cps.iter().map(|c| c.index), series.len());
    cps.iter()
        .map(|c| ChangePoint {
            index: c.index,
            stats: stats_at(c.index, series, &iv),
        })
        .collect()
}

/// Removes the weakest change point, one at a time, until every one left is significant and
/// large enough. As Otava does, the two to the right of a removed point are retested and
/// the one to its left keeps its figures.
fn merge(
    mut cps: Vec<ChangePoint>,
    series: &[f64],
    p: f64,
    min_magnitude: f64,
    magnitude: fn(&Stats) -> f64,
) -> Vec<ChangePoint> {
    while !cps.is_empty() {
        let mut weakest = 0;
        for (i, c) in cps.iter().enumerate().skip(1) {
            if c.stats.pvalue > cps[weakest].stats.pvalue {
                weakest = i;
            }
        }
        if cps[weakest].stats.pvalue < p {
            weakest = 0;
            for (i, c) in cps.iter().enumerate().skip(1) {
                if magnitude(&c.stats) < magnitude(&cps[weakest].stats) {
                    weakest = i;
                }
            }
            if magnitude(&cps[weakest].stats) > min_magnitude {
                return cps;
            }
        }
        cps.remove(weakest);
        let iv = intervals(cps.iter().map(|c| c.index), series.len());
        for j in [weakest, weakest + 1] {
            if j < cps.len() {
                cps[j].stats = stats_at(cps[j].index, series, &iv);
            }
        }
    }
    cps
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::sim::Sim;

    /// Otava's own test (`tests/analysis_test.py::test_single_series`): one step down at 10.
    #[test]
    fn one_step_is_found_where_otava_finds_it() {
        let s = [
            1.02, 0.95, 0.99, 1.00, 1.12, 1.00, 1.01, 0.98, 1.01, 0.96, 0.50, 0.51, 0.48, 0.48, 0.55, 0.50, 0.49, 0.51,
            0.50, 0.49,
        ];
        for o in [
            Options {
                window: 10,
                max_pvalue: 0.0001,
                ..Options::default()
            },
            Options::default(),
        ] {
            let cps = change_points(&s, &o);
            assert_eq!(cps.len(), 1, "{cps:?}");
            let c = cps[0];
            assert_eq!(c.index, 10);
            assert!((c.stats.mean_before - 1.004).abs() < 1e-12);
            assert!((c.stats.mean_after - 0.501).abs() < 1e-12);
            assert_eq!(c.stats.std_before, 0.04409081537009725);
            assert_eq!(c.stats.std_after, 0.019209372712298563);
            let p = 1.4271728389900107e-17;
            assert!((c.stats.pvalue - p).abs() < p * 1e-9, "{}", c.stats.pvalue);
        }
    }

    /// 24 series (steps, drifts, spikes, flat stretches; 24 to 160 values) at four settings
    /// each, with the change points Otava 0.8.0 finds (`tests/data/otava_changepoints.py`
    /// made the file): the same runs, the same segments' means, p-values to 1e-6.
    #[test]
    fn the_change_points_are_otavas_on_its_own_results() {
        let fixture: serde_json::Value =
            serde_json::from_str(include_str!("../../tests/data/otava_changepoints.json")).unwrap();
        let cases = fixture["cases"].as_array().unwrap();
        assert!(cases.len() >= 80);
        let mut points = 0;
        for (k, case) in cases.iter().enumerate() {
            let series: Vec<f64> = case["series"]
                .as_array()
                .unwrap()
                .iter()
                .map(|v| v.as_f64().unwrap())
                .collect();
            let o = Options {
                window: case["window"].as_u64().unwrap() as usize,
                max_pvalue: case["max_pvalue"].as_f64().unwrap(),
                min_magnitude: case["min_magnitude"].as_f64().unwrap(),
                logarithms: false,
            };
            let ours = change_points(&series, &o);
            let theirs = case["change_points"].as_array().unwrap();
            let at = |c: &serde_json::Value| c["index"].as_u64().unwrap() as usize;
            assert_eq!(
                ours.iter().map(|c| c.index).collect::<Vec<_>>(),
                theirs.iter().map(at).collect::<Vec<_>>(),
                "case {k} ({o:?})"
            );
            for (a, b) in ours.iter().zip(theirs) {
                let close = |x: f64, y: f64, tol: f64| (x - y).abs() <= tol * y.abs().max(1e-300);
                assert!(
                    close(a.stats.mean_before, b["mean_before"].as_f64().unwrap(), 1e-12),
                    "case {k}"
                );
                assert!(
                    close(a.stats.mean_after, b["mean_after"].as_f64().unwrap(), 1e-12),
                    "case {k}"
                );
                let p = b["pvalue"].as_f64().unwrap();
                assert!(
                    close(a.stats.pvalue, p, 1e-6) || (a.stats.pvalue - p).abs() < 1e-15,
                    "case {k}: {} {p}",
                    a.stats.pvalue
                );
                points += 1;
            }
        }
        assert!(points > 100, "{points}");
    }

    /// Histories of 24 runs on the logarithm of a figure that varies by 3% a run (now and
    /// then, one run in a hundred, a run 30% off, as a busy neighbour makes one),
    /// simulated. Without a change, Otava's settings leave a change point (two runs or more
    /// on each side) in a few percent of series: the best of many splits is tested as if it
    /// were the only one. At the p-value `history`'s gate holds each series to when a
    /// history has a hundred (0.001 / 100), in two or three series of a thousand; a step of
    /// 15% at run 12 is found at its run (give or take one) in most series at both. docs/running.md quotes the rates
    /// (`-- --nocapture` shows them).
    #[test]
    fn histories_of_24_runs_without_a_change_seldom_have_one_and_a_step_is_found() {
        let mut sim = Sim(24);
        let trials = 1000;
        let o = Options {
            logarithms: true,
            ..Options::default()
        };
        let series = |sim: &mut Sim, step: f64, spikes: f64| -> Vec<f64> {
            (0..24)
                .map(|i| {
                    let spike = if sim.uniform() < spikes { 0.3 } else { 0.0 };
                    let shift = if i >= 12 { (1.0 + step).ln() } else { 0.0 };
                    7.0 + shift + 0.03 * sim.normal() + spike
                })
                .collect()
        };
        // The change points with at least two runs on each side between their neighbours,
        // and p at most `p`.
        let confirmed = |cps: &[ChangePoint], p: f64| -> Vec<usize> {
            let mut edges = vec![0];
            edges.extend(cps.iter().map(|c| c.index));
            edges.push(24);
            (1..edges.len() - 1)
                .filter(|&k| edges[k] - edges[k - 1] >= 2 && edges[k + 1] - edges[k] >= 2)
                .filter(|&k| cps[k - 1].stats.pvalue <= p)
                .map(|k| edges[k])
                .collect()
        };
        let gate = o.max_pvalue / 100.0;
        // A magnitude above the runs' own spread (3%), as the history chapter advises.
        let sized = Options {
            min_magnitude: 0.1,
            ..o
        };
        let (mut sized_alarms, mut sized_quiet, mut sized_found) = (0, 0, 0);
        let (mut alarms, mut gate_alarms, mut found, mut gate_found) = (0, 0, 0, 0);
        let (mut quiet_alarms, mut quiet_gate_alarms) = (0, 0);
        for _ in 0..trials {
            let x = series(&mut sim, 0.0, 0.0);
            let quiet = change_points(&x, &o);
            quiet_alarms += !confirmed(&quiet, 1.0).is_empty() as u32;
            sized_quiet += !confirmed(&change_points(&x, &sized), 1.0).is_empty() as u32;
            quiet_gate_alarms += !confirmed(&quiet, gate).is_empty() as u32;
            let x = series(&mut sim, 0.0, 0.01);
            let flat = change_points(&x, &o);
            sized_alarms += !confirmed(&change_points(&x, &sized), 1.0).is_empty() as u32;
            alarms += !confirmed(&flat, 1.0).is_empty() as u32;
            gate_alarms += !confirmed(&flat, gate).is_empty() as u32;
            let x = series(&mut sim, 0.15, 0.01);
            let stepped = change_points(&x, &o);
            sized_found += confirmed(&change_points(&x, &sized), 1.0)
                .iter()
                .any(|&i| (11..=13).contains(&i)) as u32;
            let at = |p: f64| confirmed(&stepped, p).iter().any(|&i| (11..=13).contains(&i));
            found += at(1.0) as u32;
            gate_found += at(gate) as u32;
        }
        let rate = |k: u32| f64::from(k) / f64::from(trials);
        eprintln!(
            "24 runs, {trials} series each way: without a change, a change point in {:.3} of series, {:.3} at the gate's p of {gate:e} (no run 30% off: {:.3} and {:.3}); a 15% step found at its run in {:.3}, {:.3} at the gate's p",
            rate(alarms),
            rate(gate_alarms),
            rate(quiet_alarms),
            rate(quiet_gate_alarms),
            rate(found),
            rate(gate_found)
        );
        eprintln!(
            "at a magnitude of 0.1: without a change, a change point in {:.3} of series (no run 30% off: {:.3}); the 15% step found at its run in {:.3}",
            rate(sized_alarms),
            rate(sized_quiet),
            rate(sized_found)
        );
        // A magnitude above the runs' spread: none in a thousand steady histories.
        assert!(
            sized_quiet == 0 && rate(sized_alarms) <= 0.02 && rate(sized_found) >= 0.9,
            "{sized_quiet} {} {}",
            rate(sized_alarms),
            rate(sized_found)
        );
        assert!(
            rate(alarms) <= 0.05 && rate(quiet_alarms) <= 0.05,
            "{} {}",
            rate(alarms),
            rate(quiet_alarms)
        );
        assert!(
            rate(gate_alarms) <= 0.005 && rate(quiet_gate_alarms) <= 0.005,
            "{} {}",
            rate(gate_alarms),
            rate(quiet_gate_alarms)
        );
        assert!(
            rate(found) >= 0.9 && rate(gate_found) >= 0.8,
            "{} {}",
            rate(found),
            rate(gate_found)
        );
    }

    #[test]
    fn numpy_sums_pairwise() {
        // Up to 7 values: in order; 8 to 128: eight running sums; beyond: halves.
        let a: Vec<f64> = (0..300).map(|i| 0.1 * f64::from(i) + 1e-3 / f64::from(i + 1)).collect();
        for n in [0, 3, 7, 8, 9, 17, 128, 129, 300] {
            let s = pairwise_sum(&a[..n]);
            let plain: f64 = a[..n].iter().sum();
            assert!((s - plain).abs() <= 1e-9 * plain.abs().max(1.0), "{n}");
        }
        assert_eq!(pairwise_sum(&[1e16, 1.0, -1e16]), 0.0);
        // Eight lanes: the 1.0 and the -1e16 fall in different lanes than the 1e16.
        let mut v = vec![0.0; 16];
        v[0] = 1e16;
        v[8] = -1e16;
        v[1] = 1.0;
        assert_eq!(pairwise_sum(&v), 1.0);
    }

    #[test]
    fn a_flat_series_has_no_change_point_and_a_step_in_a_long_one_is_found_once() {
        assert!(change_points(&[5.0; 120], &Options::default()).is_empty());
        let mut s: Vec<f64> = (0..200).map(|i| 100.0 + f64::from(i % 7) * 0.5).collect();
        for v in &mut s[130..] {
            *v *= 1.2;
        }
        let cps = change_points(&s, &Options::default());
        assert_eq!(cps.iter().map(|c| c.index).collect::<Vec<_>>(), vec![130]);
        assert!((cps[0].stats.forward_change() - 0.2).abs() < 0.01);
        // A minimum magnitude above the step removes it.
        let o = Options {
            min_magnitude: 0.25,
            ..Options::default()
        };
        assert!(change_points(&s, &o).is_empty());
        // The same step judged on the logarithms: a share of the values, not of their logarithms.
        let logs: Vec<f64> = s.iter().map(|v| v.ln()).collect();
        let at = |min_magnitude: f64| {
            let o = Options {
                min_magnitude,
                logarithms: true,
                ..Options::default()
            };
            change_points(&logs, &o).iter().map(|c| c.index).collect::<Vec<_>>()
        };
        assert_eq!(at(0.15), vec![130]);
        assert!(at(0.25).is_empty());
    }

    #[test]
    fn a_drop_has_the_larger_of_its_two_changes_as_magnitude() {
        let s = Stats {
            mean_before: 100.0,
            mean_after: 95.0,
            std_before: 0.0,
            std_after: 0.0,
            pvalue: 0.0,
        };
        assert!((s.forward_change() + 0.05).abs() < 1e-12);
        assert!((s.magnitude() - (1.0 / 0.95 - 1.0)).abs() < 1e-12);
    }
}
