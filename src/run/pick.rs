//! Choosing the next operation by weight, and the user it acts for by the workload's skew.

use crate::generate::rng::Stream;
use crate::generate::{Generator, Zipf};
use crate::workload::{Op, Skew};

/// The operation mix as cumulative weights.
#[derive(Debug, Clone)]
pub struct Mix {
    ops: Vec<Op>,
    cumulative: Vec<f64>,
}

impl Mix {
    /// The mix of `(operation, weight)` pairs (weights positive).
    pub fn new(weights: &[(Op, f64)]) -> Self {
        let total: f64 = weights.iter().map(|(_, w)| w).sum();
        let mut acc = 0.0;
        let cumulative = weights
            .iter()
            .map(|(_, w)| {
                acc += w / total;
                acc
            })
            .collect();
        Mix {
            ops: weights.iter().map(|(op, _)| *op).collect(),
            cumulative,
        }
    }

    /// The operations, in the mix's order; [`Mix::pick`] returns indexes into it.
    pub fn ops(&self) -> &[Op] {
        &self.ops
    }

    /// The index of the operation for the uniform draw `u` in `[0, 1)`.
    #[inline]
    pub fn pick(&self, u: f64) -> usize {
        self.cumulative.partition_point(|&c| c <= u).min(self.ops.len() - 1)
    }
}

/// Picks users `1..=users` by skew.
#[derive(Debug, Clone)]
pub struct Users {
    skew: Skew,
    users: u64,
    zipf: Zipf,
}

impl Users {
    /// The picker of `users` users.
    pub fn new(skew: Skew, exponent: f64, users: u64) -> Self {
        Users {
            skew,
            users,
            zipf: Zipf::new(users, exponent),
        }
    }

    /// The user of draw `index` of `s`: Zipf over the generator's popularity ranking (the
    /// users with the most followers come up most), Zipf over ids from the newest down
    /// ("latest"), or uniform. Always an existing user.
    #[inline]
    pub fn pick(&self, g: &Generator, s: &Stream, index: u64) -> u64 {
        match self.skew {
            Skew::Zipf => g.by_popularity(self.zipf.sample(s, index)),
            Skew::Latest => self.users + 1 - self.zipf.sample(s, index),
            Skew::Uniform => s.below(index, self.users) + 1,
        }
    }

    /// The user `uid` follows anew, as seed 001's follow draws one: picked as any user is
    /// (draw [`FOLLOWEE_DRAW`] of `s`), the next one where that is `uid` itself.
    pub fn followee(&self, g: &Generator, s: &Stream, uid: u64) -> u64 {
        match self.pick(g, s, FOLLOWEE_DRAW) {
            f if f == uid => uid % self.users + 1,
            f => f,
        }
    }
}

/// The draw of a new follow's followee.
const FOLLOWEE_DRAW: u64 = 28;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::generate::rng::{Kind, Rng};
    use crate::workload::Workload;
    use std::path::Path;

    #[test]
    fn mix_follows_the_weights() {
        let mix = Mix::new(&[(Op::Timeline, 3.0), (Op::Publish, 1.0)]);
        assert_eq!(mix.pick(0.0), 0);
        assert_eq!(mix.pick(0.7499), 0);
        assert_eq!(mix.pick(0.75), 1);
        assert_eq!(mix.pick(0.999_999), 1);
        let s = Rng::new(3).stream(Kind::Run, 0, 0);
        let n = 100_000;
        let timelines = (0..n).filter(|&i| mix.pick(s.unit(i)) == 0).count();
        assert!((timelines as f64 / n as f64 - 0.75).abs() < 0.01);
    }

    #[test]
    fn users_exist_and_follow_the_skew() {
        let src = "name = \"u\"\nseed = 1\n[data]\nusers = 1000\nstart = 2026-01-01T00:00:00Z\n[data.follows]\n[data.posts]\n";
        let w = Workload::from_str(Path::new("u.toml"), src).unwrap();
        let g = Generator::new(&w);
        let s = Rng::new(5).stream(Kind::Run, 0, 0);
        for skew in [Skew::Zipf, Skew::Latest, Skew::Uniform] {
            let p = Users::new(skew, 0.99, 1000);
            let mut hits = vec![0u32; 1001];
            for i in 0..50_000 {
                let u = p.pick(&g, &s, i);
                assert!((1..=1000).contains(&u), "{skew:?} picked {u}");
                hits[u as usize] += 1;
            }
            let top = match skew {
                Skew::Zipf => g.by_popularity(1),
                Skew::Latest => 1000,
                Skew::Uniform => continue,
            };
            // Zipf(0.99) over 1,000 gives rank 1 about 13% of draws; uniform would give 0.1%.
            assert!(hits[top as usize] > 3000, "{skew:?}: {}", hits[top as usize]);
        }
    }
}
