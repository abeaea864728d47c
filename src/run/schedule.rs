//! When each worker's operations are due under a target rate. Each of `T` workers runs its
//! own schedule at `rate / T`: evenly spaced and staggered (fixed), or with exponential gaps
//! (Poisson; independent Poisson streams add up to one of the full rate). Nothing is shared.

use crate::generate::rng::Stream;
use crate::workload::Arrival;
use std::time::{Duration, Instant};

/// One worker's schedule.
#[derive(Debug, Clone)]
pub struct Schedule {
    start: Instant,
    arrival: Arrival,
    /// Mean gap between this worker's operations, in nanoseconds.
    gap_ns: f64,
    /// Offset of the next operation from `start`, in nanoseconds.
    next_ns: f64,
    draws: Stream,
    index: u64,
}

impl Schedule {
    /// Worker `worker` of `workers` sharing `rate` operations per second from `start`.
    pub fn new(start: Instant, rate: f64, arrival: Arrival, worker: usize, workers: usize, draws: Stream) -> Self {
        let gap_ns = 1e9 * workers as f64 / rate;
        let mut s = Schedule {
            start,
            arrival,
            gap_ns,
            next_ns: 0.0,
            draws,
            index: 0,
        };
        s.next_ns = match arrival {
            // Worker k's first slot is k/rate: the workers' slots interleave evenly.
            Arrival::Fixed => 1e9 * worker as f64 / rate,
            Arrival::Poisson => s.gap(),
        };
        s
    }

    fn gap(&mut self) -> f64 {
        self.index += 1;
        match self.arrival {
            Arrival::Fixed => self.gap_ns,
            Arrival::Poisson => self.draws.exponential(self.index, self.gap_ns),
        }
    }

    /// The next operation's intended start; the schedule moves on whether or not the worker
    /// keeps up (a late worker does not skip operations, it runs them late).
    pub fn next_start(&mut self) -> Instant {
        let at = self.start + Duration::from_nanos(self.next_ns as u64);
        self.next_ns += self.gap();
        at
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::generate::rng::{Kind, Rng};

    #[test]
    fn fixed_workers_interleave_evenly() {
        let t0 = Instant::now();
        let draws = Rng::new(1).stream(Kind::Run, 0, 0);
        let mut all = Vec::new();
        for w in 0..4 {
            let mut s = Schedule::new(t0, 1000.0, Arrival::Fixed, w, 4, draws);
            for _ in 0..5 {
                all.push(s.next_start().duration_since(t0).as_micros());
            }
        }
        all.sort();
        let want: Vec<u128> = (0..20).map(|i| i * 1000).collect();
        assert_eq!(all, want);
    }

    #[test]
    fn poisson_keeps_the_mean_rate() {
        let t0 = Instant::now();
        let draws = Rng::new(2).stream(Kind::Run, 0, 1);
        let mut s = Schedule::new(t0, 500.0, Arrival::Poisson, 0, 2, draws);
        let mut last = t0;
        let mut gaps = Vec::new();
        for _ in 0..20_000 {
            let at = s.next_start();
            assert!(at >= last);
            gaps.push(at.duration_since(last).as_secs_f64());
            last = at;
        }
        let mean = gaps.iter().sum::<f64>() / gaps.len() as f64;
        // 250 operations per second for this worker: 4 ms apart on average.
        assert!((mean - 0.004).abs() < 0.0002, "{mean}");
        let sd = (gaps.iter().map(|g| (g - mean).powi(2)).sum::<f64>() / gaps.len() as f64).sqrt();
        assert!((sd / mean - 1.0).abs() < 0.05, "exponential gaps: sd = mean, got {sd}");
    }
}
