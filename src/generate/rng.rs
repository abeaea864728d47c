//! A counter-based random source: no state carried from one value to the next, so any value
//! can be computed on its own, in any order, on any thread.
//!
//! A draw hashes its coordinates with SplitMix64's finalizer (a bijection on `u64` with full
//! avalanche), chained over the seed, the entity kind, the entity id, the field and the index.

/// What a value belongs to; part of every draw's coordinates so that fields never share draws.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[repr(u64)]
pub enum Kind {
    /// A user and its profile.
    User = 1,
    /// A follow edge.
    Follow = 2,
    /// A microblog post.
    Post = 3,
    /// A user action.
    Action = 4,
    /// A blog article.
    Article = 5,
    /// A time-series point.
    Point = 6,
    /// The query runner's choices.
    Run = 7,
    /// A design's generated cell values (`{ size = ... }`).
    Cell = 8,
}

/// SplitMix64's output function.
#[inline]
pub fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

const GOLDEN: u64 = 0x9e37_79b9_7f4a_7c15;

/// The random source of one workload seed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rng {
    seed: u64,
}

/// The draws of one field of one entity: `index` picks the n-th value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stream {
    base: u64,
}

impl Rng {
    /// The source for `seed`.
    pub fn new(seed: u64) -> Self {
        Rng {
            seed: mix(seed ^ GOLDEN),
        }
    }

    /// The stream of `field` (a small constant per field) of entity `id` of `kind`.
    pub fn stream(&self, kind: Kind, id: u64, field: u64) -> Stream {
        let a = mix(self.seed ^ (kind as u64).wrapping_mul(GOLDEN));
        let b = mix(a ^ id.wrapping_mul(0xd6e8_feb8_6659_fd93));
        Stream {
            base: mix(b ^ field.wrapping_mul(0xa076_1d64_78bd_642f)),
        }
    }
}

impl Stream {
    /// An independent stream for the `index`-th sub-entity (a post's words, an article's
    /// fields).
    #[inline]
    pub fn child(&self, index: u64) -> Stream {
        Stream {
            base: mix(self.base ^ mix(index ^ 0x2545_f491_4f6c_dd1d)),
        }
    }

    /// The `index`-th raw 64-bit draw.
    #[inline]
    pub fn u64(&self, index: u64) -> u64 {
        mix(self.base ^ mix(index.wrapping_add(GOLDEN)))
    }

    /// A float in `[0, 1)` with 53 random bits.
    #[inline]
    pub fn unit(&self, index: u64) -> f64 {
        (self.u64(index) >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }

    /// An integer in `[0, n)`, without modulo bias (Lemire's multiply-shift); 0 when `n` is 0.
    #[inline]
    pub fn below(&self, index: u64, n: u64) -> u64 {
        ((u128::from(self.u64(index)) * u128::from(n)) >> 64) as u64
    }

    /// An exponential draw with the given mean (inverse CDF).
    pub fn exponential(&self, index: u64, mean: f64) -> f64 {
        -mean * (1.0 - self.unit(index)).ln()
    }

    /// A standard normal draw (Box-Muller over two sub-draws of `index`).
    pub fn normal(&self, index: u64) -> f64 {
        let u1 = 1.0 - self.unit(index.wrapping_mul(2));
        let u2 = self.unit(index.wrapping_mul(2).wrapping_add(1));
        (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos()
    }

    /// A lognormal draw: `exp(mu + sigma * N(0, 1))`.
    pub fn lognormal(&self, index: u64, mu: f64, sigma: f64) -> f64 {
        (mu + sigma * self.normal(index)).exp()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_coordinates_same_value_in_any_order() {
        let r = Rng::new(42);
        let forward: Vec<u64> = (0..1000).map(|i| r.stream(Kind::Post, 7, 1).u64(i)).collect();
        let backward: Vec<u64> = (0..1000)
            .rev()
            .map(|i| Rng::new(42).stream(Kind::Post, 7, 1).u64(i))
            .collect();
        assert_eq!(forward, backward.into_iter().rev().collect::<Vec<_>>());
        // Pinned values: a change here changes every generated data set.
        assert_eq!(mix(0), 0);
        assert_eq!(mix(1), 0x5692_161d_100b_05e5);
    }

    #[test]
    fn coordinates_do_not_collide() {
        let r = Rng::new(1);
        let mut seen = std::collections::HashSet::new();
        for kind in [Kind::User, Kind::Post, Kind::Action] {
            for id in 0..50 {
                for field in 0..4 {
                    for i in 0..5 {
                        assert!(
                            seen.insert(r.stream(kind, id, field).u64(i)),
                            "{kind:?} {id} {field} {i}"
                        );
                    }
                }
            }
        }
        assert_ne!(
            Rng::new(1).stream(Kind::User, 0, 0).u64(0),
            Rng::new(2).stream(Kind::User, 0, 0).u64(0)
        );
    }

    #[test]
    fn distributions_have_their_moments() {
        let s = Rng::new(9).stream(Kind::Run, 0, 0);
        let n = 200_000u64;
        let mean = |f: &dyn Fn(u64) -> f64| (0..n).map(f).sum::<f64>() / n as f64;
        assert!((mean(&|i| s.unit(i)) - 0.5).abs() < 0.005);
        assert!((mean(&|i| s.below(i, 10) as f64) - 4.5).abs() < 0.05);
        assert!((0..n).all(|i| s.below(i, 10) < 10));
        assert!((mean(&|i| s.exponential(i, 3.0)) - 3.0).abs() < 0.05);
        assert!(mean(&|i| s.normal(i)).abs() < 0.01);
        assert!((mean(&|i| s.normal(i).powi(2)) - 1.0).abs() < 0.02);
        // E[lognormal] = exp(mu + sigma^2 / 2).
        assert!((mean(&|i| s.lognormal(i, 1.0, 0.5)) - (1.125f64).exp()).abs() < 0.05);
        assert_eq!(s.below(3, 0), 0);
    }
}
