//! Distributions over the counter-based random source: Zipf ranks, Poisson counts,
//! geometric depths, and the scrambled popularity ranking.

use super::rng::{Stream, mix};

/// Ranks `1..=n` with `P(k)` proportional to `k^-s`, drawn by inverting the continuous
/// power law (exact in the limit, within a rank or so at the head).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Zipf {
    n: u64,
    s: f64,
    span: f64,
}

impl Zipf {
    /// Ranks `1..=n` (`n >= 1`) with exponent `s >= 0`.
    pub fn new(n: u64, s: f64) -> Self {
        let top = (n as f64) + 1.0;
        let span = if (s - 1.0).abs() < 1e-9 {
            top.ln()
        } else {
            top.powf(1.0 - s) - 1.0
        };
        Zipf { n: n.max(1), s, span }
    }

    /// The rank at draw `index` of `stream`.
    pub fn sample(&self, stream: &Stream, index: u64) -> u64 {
        let u = stream.unit(index);
        let x = if (self.s - 1.0).abs() < 1e-9 {
            (u * self.span).exp()
        } else {
            (u * self.span + 1.0).powf(1.0 / (1.0 - self.s))
        };
        (x as u64).clamp(1, self.n)
    }
}

/// A bijection of `1..=n` onto itself (`k -> (k-1) a + b mod n, + 1` with `a` coprime to
/// `n`): turns popularity ranks into user ids so that popular users are spread over the ids.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Scramble {
    n: u64,
    a: u64,
    b: u64,
}

fn gcd(mut a: u64, mut b: u64) -> u64 {
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a
}

impl Scramble {
    /// The bijection of `1..=n` for `seed`.
    pub fn new(n: u64, seed: u64) -> Self {
        let n = n.max(1);
        let mut a = (mix(seed ^ 0x5ca1_ab1e) % n).max(1);
        // Far from 1 so neighbours in rank are not neighbours in id.
        if n > 16 && a < n / 4 {
            a += n / 3;
        }
        while gcd(a, n) != 1 {
            a += 1;
        }
        Scramble {
            n,
            a: a % n,
            b: mix(seed ^ 0xb0b) % n,
        }
    }

    /// The id of rank `k` (1-based).
    pub fn apply(&self, k: u64) -> u64 {
        ((u128::from(k - 1) * u128::from(self.a) + u128::from(self.b)) % u128::from(self.n)) as u64 + 1
    }
}

/// A Poisson count with mean `mean`: exact (Knuth's product method) below 30, the rounded
/// normal approximation above. Uses draws from `index * 64` on.
pub fn poisson(stream: &Stream, index: u64, mean: f64) -> u64 {
    if mean <= 0.0 {
        return 0;
    }
    let base = index.wrapping_mul(64);
    if mean < 30.0 {
        let limit = (-mean).exp();
        let mut p = 1.0;
        let mut k = 0;
        loop {
            p *= stream.unit(base + k);
            if p <= limit || k >= 63 {
                return k;
            }
            k += 1;
        }
    }
    (mean + mean.sqrt() * stream.normal(base)).round().max(0.0) as u64
}

/// A geometric depth: 0 with probability `p`, 1 with `p (1 - p)`, and so on.
pub fn geometric(stream: &Stream, index: u64, p: f64) -> u64 {
    if p >= 1.0 {
        return 0;
    }
    let u = 1.0 - stream.unit(index);
    (u.ln() / (1.0 - p).ln()).floor().max(0.0) as u64
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::generate::rng::{Kind, Rng};

    #[test]
    fn scramble_is_a_bijection() {
        for n in [1u64, 2, 3, 10, 97, 1000, 4096] {
            let s = Scramble::new(n, 42);
            let mut seen: Vec<u64> = (1..=n).map(|k| s.apply(k)).collect();
            seen.sort_unstable();
            assert_eq!(seen, (1..=n).collect::<Vec<_>>(), "n={n}");
        }
    }

    #[test]
    fn zipf_head_follows_the_power_law() {
        let s = Rng::new(3).stream(Kind::Run, 0, 0);
        let z = Zipf::new(10_000, 0.7);
        let n = 400_000u64;
        let mut counts = vec![0u64; 10_001];
        for i in 0..n {
            counts[z.sample(&s, i) as usize] += 1;
        }
        assert_eq!(counts[0], 0);
        // P(rank <= k) = ((k+1)^0.3 - 1) / (10001^0.3 - 1) for the continuous law.
        let cdf = |k: f64| ((k + 1.0).powf(0.3) - 1.0) / (10_001f64.powf(0.3) - 1.0);
        let top100: u64 = counts[1..=100].iter().sum();
        assert!((top100 as f64 / n as f64 - cdf(100.0)).abs() < 0.01);
        // Rank 10 is drawn about (10/100)^-0.7 = 5 times as often as rank 100.
        let ratio = counts[10] as f64 / counts[100] as f64;
        assert!((3.5..7.0).contains(&ratio), "{ratio}");
    }

    #[test]
    fn poisson_and_geometric_means() {
        let s = Rng::new(5).stream(Kind::Run, 1, 0);
        let n = 50_000u64;
        for mean in [0.5, 4.0, 25.0, 200.0] {
            let m = (0..n).map(|i| poisson(&s, i, mean) as f64).sum::<f64>() / n as f64;
            assert!((m - mean).abs() < mean * 0.03 + 0.02, "{mean}: {m}");
        }
        let m = (0..n).map(|i| geometric(&s, i, 0.25) as f64).sum::<f64>() / n as f64;
        assert!((m - 3.0).abs() < 0.1, "{m}");
        assert_eq!(geometric(&s, 0, 1.0), 0);
    }
}
