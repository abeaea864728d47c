//! Whether two runs differ by more than noise: for a percentile, a binomial test of how many
//! candidate values fall beyond the baseline's percentile (Mood's median test generalized);
//! for means, Welch's t-test, from raw samples (per-interval throughput) or from a
//! histogram's mean and standard deviation.

use super::Histogram;

/// One-sided p-value that the candidate's quantile `q` moved in the direction it moved from
/// the baseline's (1.0 when it did not move): under "no change", a share `1 - q` of candidate
/// values lies above the baseline's quantile (`q` below it), give or take both samples'
/// noise. `None` when either histogram is empty.
pub fn quantile_shift(base: &Histogram, cand: &Histogram, q: f64) -> Option<f64> {
    let (nb, nc) = (base.len() as f64, cand.len() as f64);
    if nb == 0.0 || nc == 0.0 {
        return None;
    }
    let (vb, vc) = (base.value_at_quantile(q), cand.value_at_quantile(q));
    let sd = (nc * q * (1.0 - q) * (1.0 + nc / nb)).sqrt();
    if vb == vc || sd == 0.0 {
        return Some(1.0);
    }
    let z = if vc > vb {
        let above = cand.len() - cand.count_between(0, base.highest_equivalent(vb));
        (above as f64 - nc * (1.0 - q)) / sd
    } else {
        let low = base.lowest_equivalent(vb);
        let below = if low == 0 { 0 } else { cand.count_between(0, low - 1) };
        (below as f64 - nc * q) / sd
    };
    Some((0.5 * erfc(z / std::f64::consts::SQRT_2)).min(1.0))
}

/// Welch's t-test of two histograms' means: the two-sided p-value, `None` with fewer than two
/// values on a side.
pub fn welch_histograms(a: &Histogram, b: &Histogram) -> Option<f64> {
    welch_summary(
        (a.len() as f64, a.mean(), a.stdev()),
        (b.len() as f64, b.mean(), b.stdev()),
    )
}

/// Welch's t-test of two samples' means: the two-sided p-value, `None` with fewer than two
/// values on a side. Two samples without spread are "different" (p = 0) unless equal.
pub fn welch(a: &[f64], b: &[f64]) -> Option<f64> {
    if a.len() < 2 || b.len() < 2 {
        return None;
    }
    let stats = |x: &[f64]| {
        let n = x.len() as f64;
        let mean = x.iter().sum::<f64>() / n;
        let var = x.iter().map(|v| (v - mean) * (v - mean)).sum::<f64>() / (n - 1.0);
        (n, mean, var.sqrt())
    };
    welch_summary(stats(a), stats(b))
}

/// Welch's t-test from `(count, mean, standard deviation)` of each side.
fn welch_summary((na, ma, sa): (f64, f64, f64), (nb, mb, sb): (f64, f64, f64)) -> Option<f64> {
    if na < 2.0 || nb < 2.0 {
        return None;
    }
    let (va, vb) = (sa * sa, sb * sb);
    let se2 = va / na + vb / nb;
    if se2 <= 0.0 {
        return Some(if ma == mb { 1.0 } else { 0.0 });
    }
    let t = (ma - mb) / se2.sqrt();
    let df = se2 * se2 / ((va / na).powi(2) / (na - 1.0) + (vb / nb).powi(2) / (nb - 1.0));
    Some(student_t(t, df))
}

/// The two-sided p-value of Student's t with `df` degrees of freedom:
/// `I_{df/(df+t^2)}(df/2, 1/2)`.
pub fn student_t(t: f64, df: f64) -> f64 {
    incomplete_beta(df / 2.0, 0.5, df / (df + t * t))
}

/// The complementary error function.
fn erfc(x: f64) -> f64 {
    statrs::function::erf::erfc(x)
}

/// The regularized incomplete beta function `I_x(a, b)`, for `a, b > 0`.
fn incomplete_beta(a: f64, b: f64, x: f64) -> f64 {
    statrs::function::beta::beta_reg(a, b, x.clamp(0.0, 1.0))
}

#[cfg(test)]
mod tests {
    use super::super::{histogram, record};
    use super::*;

    #[test]
    fn quantile_shifts_are_told_from_noise() {
        let (mut a, mut b, mut tail, mut c) = (histogram(), histogram(), histogram(), histogram());
        for i in 0..5000u64 {
            let jitter = (i * 7919) % 1000;
            record(&mut a, 1_000_000 + jitter * 100);
            record(&mut b, 1_000_000 + ((i * 104_729) % 1000) * 100);
            // The same body with a slower tail: 3% of values ten times slower.
            record(
                &mut tail,
                if i % 33 == 0 {
                    10_000_000
                } else {
                    1_000_000 + jitter * 100
                },
            );
            record(&mut c, 1_200_000 + jitter * 100);
        }
        for q in [0.5, 0.9, 0.99] {
            assert!(quantile_shift(&a, &b, q).unwrap() > 0.01, "noise at {q}");
            assert!(quantile_shift(&a, &c, q).unwrap() < 1e-6, "shift at {q}");
            assert!(quantile_shift(&c, &a, q).unwrap() < 1e-6, "shift back at {q}");
        }
        assert!(
            quantile_shift(&a, &tail, 0.5).unwrap() > 0.01,
            "the median did not move"
        );
        assert!(quantile_shift(&a, &tail, 0.99).unwrap() < 1e-6, "the tail did");
        assert_eq!(quantile_shift(&a, &a, 0.99), Some(1.0));
        assert!(quantile_shift(&a, &histogram(), 0.5).is_none());
        assert!(welch_histograms(&a, &b).unwrap() > 0.01);
        assert!(welch_histograms(&a, &c).unwrap() < 1e-6);
    }

    #[test]
    fn welch_matches_reference_values() {
        // Two-sided p of t = -2.0 with 10 degrees of freedom, and of t = 3 with 1.5 (a
        // fractional a): mpmath's betainc(df/2, 1/2, 0, df/(df+t^2), regularized=True) at 40
        // digits.
        let p = incomplete_beta(5.0, 0.5, 10.0 / (10.0 + 4.0));
        assert!((p - 0.073_388_034_770_740_37).abs() < 1e-13, "{p}");
        let p = incomplete_beta(0.75, 0.5, 1.5 / (1.5 + 9.0));
        assert!((p - 0.133_547_754_254_913_27).abs() < 1e-13, "{p}");
        let a = [10.0, 11.0, 9.0, 10.5, 9.5, 10.0];
        let b = [10.2, 10.8, 9.1, 10.4, 9.6, 10.1];
        assert!(welch(&a, &b).unwrap() > 0.5);
        let c = [14.0, 15.0, 13.0, 14.5, 13.5, 14.0];
        assert!(welch(&a, &c).unwrap() < 1e-4);
        assert_eq!(welch(&[1.0, 1.0], &[1.0, 1.0]), Some(1.0));
        assert_eq!(welch(&[1.0], &[2.0, 3.0]), None);
        // mpmath's erfc at 40 digits.
        assert!((erfc(0.0) - 1.0).abs() < 1e-15);
        assert!((erfc(1.0) / 0.157_299_207_050_285_13 - 1.0).abs() < 1e-10);
        assert!((erfc(5.0) / 1.537_459_794_428_034_8e-12 - 1.0).abs() < 1e-10);
    }
}
