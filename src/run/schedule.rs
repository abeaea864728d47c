//! When each worker's operations are due under a target rate. Each of `T` workers takes
//! every `T`th operation of the run's count: evenly spaced and staggered (fixed), or with
//! exponential gaps in the count (Poisson; independent Poisson streams add up to one of the
//! full rate). The count becomes a time through the rate's [`Profile`], flat or staged.
//! Nothing is shared.

use super::profile::Profile;
use crate::generate::rng::Stream;
use crate::workload::Arrival;
use std::time::{Duration, Instant};

/// One worker's schedule.
#[derive(Debug, Clone)]
pub struct Schedule<'a> {
    start: Instant,
    rate: &'a Profile,
    arrival: Arrival,
    /// The workers: the mean gap in the run's count between this worker's operations.
    workers: f64,
    /// The next operation's place in the run's count.
    next: f64,
    draws: Stream,
    index: u64,
}

impl<'a> Schedule<'a> {
    /// Worker `worker` of `workers` sharing `rate` operations per second from `start`.
    pub fn new(
        start: Instant,
        rate: &'a Profile,
        arrival: Arrival,
        worker: usize,
        workers: usize,
        draws: Stream,
    ) -> Self {
        let mut s = Schedule {
            start,
            rate,
            arrival,
            workers: workers as f64,
            next: 0.0,
            draws,
            index: 0,
        };
        s.next = match arrival {
            // Worker k's first is the run's kth: the workers' slots interleave evenly.
            Arrival::Fixed => worker as f64,
            Arrival::Poisson => s.gap(),
        };
        s
    }

    fn gap(&mut self) -> f64 {
        self.index += 1;
        match self.arrival {
            Arrival::Fixed => self.workers,
            Arrival::Poisson => self.draws.exponential(self.index, self.workers),
        }
    }

    /// The next operation's intended start; the schedule moves on whether or not the worker
    /// keeps up (a late worker does not skip operations, it runs them late). `None`: the
    /// rate stays at 0 from here on.
    pub fn next_start(&mut self) -> Option<Instant> {
        let secs = self.rate.time_of(self.next)?;
        self.next += self.gap();
        Some(self.start + Duration::from_nanos((secs * 1e9) as u64))
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
            let rate = Profile::flat(1000.0);
            let mut s = Schedule::new(t0, &rate, Arrival::Fixed, w, 4, draws);
            for _ in 0..5 {
                all.push(s.next_start().unwrap().duration_since(t0).as_micros());
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
        let rate = Profile::flat(500.0);
        let mut s = Schedule::new(t0, &rate, Arrival::Poisson, 0, 2, draws);
        let mut last = t0;
        let mut gaps = Vec::new();
        for _ in 0..20_000 {
            let at = s.next_start().unwrap();
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
