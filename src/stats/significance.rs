//! Whether two runs differ by more than noise: the Mann–Whitney U test over two latency
//! histograms (rank-based, so it suits skewed latency distributions), and Welch's t-test over
//! per-interval throughput samples.

use super::Histogram;

/// The Mann–Whitney U test of `a` against `b`: the two-sided p-value (normal approximation
/// with tie correction; values equal within the histogram's precision are ties) and the
/// probability that a value of `b` exceeds one of `a` (0.5: no shift). `None` when either is
/// empty.
pub fn mann_whitney(a: &Histogram, b: &Histogram) -> Option<(f64, f64)> {
    let (na, nb) = (a.len() as f64, b.len() as f64);
    if na == 0.0 || nb == 0.0 {
        return None;
    }
    // Both histograms have the same layout, so bucket values line up.
    let mut buckets: Vec<(u64, f64, f64)> = Vec::new();
    for v in a.iter_recorded() {
        buckets.push((v.value_iterated_to(), v.count_at_value() as f64, 0.0));
    }
    for v in b.iter_recorded() {
        buckets.push((v.value_iterated_to(), 0.0, v.count_at_value() as f64));
    }
    buckets.sort_by_key(|&(v, _, _)| v);
    let mut u_b = 0.0; // pairs where b's value is above a's, ties half
    let mut a_below = 0.0;
    let mut ties = 0.0;
    let mut i = 0;
    while i < buckets.len() {
        let v = buckets[i].0;
        let (mut ca, mut cb) = (0.0, 0.0);
        while i < buckets.len() && buckets[i].0 == v {
            ca += buckets[i].1;
            cb += buckets[i].2;
            i += 1;
        }
        u_b += cb * (a_below + 0.5 * ca);
        a_below += ca;
        let t = ca + cb;
        ties += t * t * t - t;
    }
    let n = na + nb;
    let mean = na * nb / 2.0;
    let var = na * nb / 12.0 * ((n + 1.0) - ties / (n * (n - 1.0)).max(1.0));
    let effect = u_b / (na * nb);
    if var <= 0.0 {
        return Some((1.0, effect));
    }
    let z = (u_b - mean) / var.sqrt();
    Some((erfc(z.abs() / std::f64::consts::SQRT_2).min(1.0), effect))
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
        (n, mean, var)
    };
    let (na, ma, va) = stats(a);
    let (nb, mb, vb) = stats(b);
    let se2 = va / na + vb / nb;
    if se2 <= 0.0 {
        return Some(if ma == mb { 1.0 } else { 0.0 });
    }
    let t = (ma - mb) / se2.sqrt();
    let df = se2 * se2 / ((va / na).powi(2) / (na - 1.0) + (vb / nb).powi(2) / (nb - 1.0));
    // Two-sided p of Student's t: I_{df/(df+t^2)}(df/2, 1/2).
    Some(incomplete_beta(df / 2.0, 0.5, df / (df + t * t)))
}

/// The complementary error function (Numerical Recipes' erfcc, relative error < 1.2e-7).
fn erfc(x: f64) -> f64 {
    let z = x.abs();
    let t = 1.0 / (1.0 + 0.5 * z);
    let r = t
        * (-z * z - 1.265_512_23
            + t * (1.000_023_68
                + t * (0.374_091_96
                    + t * (0.096_784_18
                        + t * (-0.186_288_06
                            + t * (0.278_868_07
                                + t * (-1.135_203_98
                                    + t * (1.488_515_87 + t * (-0.822_152_23 + t * 0.170_872_77)))))))))
            .exp();
    if x >= 0.0 { r } else { 2.0 - r }
}

fn ln_gamma(x: f64) -> f64 {
    // Lanczos approximation (g = 7, n = 9).
    const C: [f64; 9] = [
        0.999_999_999_999_809_9,
        676.520_368_121_885_1,
        -1_259.139_216_722_402_8,
        771.323_428_777_653_1,
        -176.615_029_162_140_6,
        12.507_343_278_686_905,
        -0.138_571_095_265_720_12,
        9.984_369_578_019_572e-6,
        1.505_632_735_149_311_6e-7,
    ];
    let x = x - 1.0;
    let mut a = C[0];
    let t = x + 7.5;
    for (i, c) in C.iter().enumerate().skip(1) {
        a += c / (x + i as f64);
    }
    0.5 * (2.0 * std::f64::consts::PI).ln() + (x + 0.5) * t.ln() - t + a.ln()
}

/// The regularized incomplete beta function `I_x(a, b)`.
fn incomplete_beta(a: f64, b: f64, x: f64) -> f64 {
    if x <= 0.0 {
        return 0.0;
    }
    if x >= 1.0 {
        return 1.0;
    }
    let front = (ln_gamma(a + b) - ln_gamma(a) - ln_gamma(b) + a * x.ln() + b * (1.0 - x).ln()).exp();
    if x < (a + 1.0) / (a + b + 2.0) {
        front * beta_fraction(a, b, x) / a
    } else {
        1.0 - front * beta_fraction(b, a, 1.0 - x) / b
    }
}

/// Lentz's continued fraction for the incomplete beta function.
fn beta_fraction(a: f64, b: f64, x: f64) -> f64 {
    const TINY: f64 = 1e-300;
    let mut c = 1.0;
    let mut d = 1.0 - (a + b) * x / (a + 1.0);
    if d.abs() < TINY {
        d = TINY;
    }
    d = 1.0 / d;
    let mut h = d;
    for m in 1..300 {
        let m = f64::from(m);
        let m2 = 2.0 * m;
        let num = m * (b - m) * x / ((a + m2 - 1.0) * (a + m2));
        d = 1.0 + num * d;
        d = if d.abs() < TINY { 1.0 / TINY } else { 1.0 / d };
        c = 1.0 + num / c;
        if c.abs() < TINY {
            c = TINY;
        }
        h *= d * c;
        let num = -(a + m) * (a + b + m) * x / ((a + m2) * (a + m2 + 1.0));
        d = 1.0 + num * d;
        d = if d.abs() < TINY { 1.0 / TINY } else { 1.0 / d };
        c = 1.0 + num / c;
        if c.abs() < TINY {
            c = TINY;
        }
        let delta = d * c;
        h *= delta;
        if (delta - 1.0).abs() < 1e-12 {
            break;
        }
    }
    h
}

#[cfg(test)]
mod tests {
    use super::super::{histogram, record};
    use super::*;

    #[test]
    fn mann_whitney_sees_a_shift_and_not_noise() {
        let (mut a, mut b, mut c) = (histogram(), histogram(), histogram());
        for i in 0..2000u64 {
            let jitter = (i * 7919) % 1000;
            record(&mut a, 1_000_000 + jitter * 100);
            record(&mut b, 1_000_000 + ((i * 104_729) % 1000) * 100);
            record(&mut c, 1_200_000 + jitter * 100);
        }
        let (p_same, e_same) = mann_whitney(&a, &b).unwrap();
        assert!(p_same > 0.05, "{p_same}");
        assert!((e_same - 0.5).abs() < 0.05, "{e_same}");
        let (p_slow, e_slow) = mann_whitney(&a, &c).unwrap();
        assert!(p_slow < 1e-6, "{p_slow}");
        assert!(e_slow > 0.9, "{e_slow}");
        let (p_fast, e_fast) = mann_whitney(&c, &a).unwrap();
        assert!(p_fast < 1e-6 && e_fast < 0.1);
        assert!(mann_whitney(&a, &histogram()).is_none());
        assert_eq!(mann_whitney(&a, &a).unwrap(), (1.0, 0.5));
    }

    #[test]
    fn welch_matches_reference_values() {
        // Two-sided p of t = -2.0 with 10 degrees of freedom is 0.07339.
        let p = incomplete_beta(5.0, 0.5, 10.0 / (10.0 + 4.0));
        assert!((p - 0.07339).abs() < 1e-4, "{p}");
        let a = [10.0, 11.0, 9.0, 10.5, 9.5, 10.0];
        let b = [10.2, 10.8, 9.1, 10.4, 9.6, 10.1];
        assert!(welch(&a, &b).unwrap() > 0.5);
        let c = [14.0, 15.0, 13.0, 14.5, 13.5, 14.0];
        assert!(welch(&a, &c).unwrap() < 1e-4);
        assert_eq!(welch(&[1.0, 1.0], &[1.0, 1.0]), Some(1.0));
        assert_eq!(welch(&[1.0], &[2.0, 3.0]), None);
        assert!((erfc(0.0) - 1.0).abs() < 1e-7 && (erfc(1.0) - 0.157_299_2).abs() < 1e-6);
    }
}
