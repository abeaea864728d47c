//! A run's level over time: the rate (open loop) or the worker threads (closed loop) it asks
//! for at each moment, from the start of its warm-up. Piecewise linear: the warm-up at the
//! first stage's starting level, then each stage flat or ramping, then the last level on.
//!
//! Under a rate, operation `c` (counting from 0 over all workers) is due when the integral of
//! the rate reaches `c`; a worker's schedule walks that count, so a ramp thickens the
//! schedule smoothly and a stage at 0 holds it. Under threads, worker `k` works while the
//! level is at least `k + 0.5`: a ramp from 0 to 4 threads over 4 s starts them at 0.5,
//! 1.5, 2.5 and 3.5 s, two on average, as asked.

use crate::workload::{Run, Stage};
use std::time::Duration;

/// One straight piece.
#[derive(Debug, Clone, PartialEq)]
struct Piece {
    /// Start, seconds from the start of the warm-up.
    start: f64,
    /// Length, seconds (infinite for the last).
    len: f64,
    from: f64,
    to: f64,
    /// The integral of the level up to `start`.
    before: f64,
}

impl Piece {
    fn level(&self, t: f64) -> f64 {
        if self.from == self.to || !self.len.is_finite() {
            return self.from;
        }
        self.from + (self.to - self.from) * ((t - self.start) / self.len).clamp(0.0, 1.0)
    }

    /// The integral of the level over its first `x` seconds.
    fn area(&self, x: f64) -> f64 {
        let slope = if self.len.is_finite() {
            (self.to - self.from) / self.len
        } else {
            0.0
        };
        self.from * x + slope * x * x / 2.0
    }

    fn end(&self) -> f64 {
        self.start + self.len
    }
}

/// The level over time.
#[derive(Debug, Clone, PartialEq)]
pub struct Profile {
    pieces: Vec<Piece>,
}

impl Profile {
    /// One level from start to end.
    pub fn flat(level: f64) -> Profile {
        Profile::from_pieces(&[(f64::INFINITY, level, level)])
    }

    /// `run`'s stages after its warm-up; `None` without stages.
    pub fn of(run: &Run) -> Option<Profile> {
        let first = run.stages.first()?;
        let mut pieces = Vec::with_capacity(run.stages.len() + 2);
        let start = first.from(None);
        if !run.warmup.is_zero() {
            pieces.push((run.warmup.as_secs_f64(), start, start));
        }
        let mut before: Option<&Stage> = None;
        for s in &run.stages {
            pieces.push((s.duration.as_secs_f64(), s.from(before), s.level.value()));
            before = Some(s);
        }
        let last = run.stages[run.stages.len() - 1].level.value();
        pieces.push((f64::INFINITY, last, last));
        Some(Profile::from_pieces(&pieces))
    }

    fn from_pieces(spec: &[(f64, f64, f64)]) -> Profile {
        let mut pieces: Vec<Piece> = Vec::with_capacity(spec.len());
        let (mut start, mut before) = (0.0, 0.0);
        for &(len, from, to) in spec {
            let p = Piece {
                start,
                len,
                from,
                to,
                before,
            };
            if len.is_finite() {
                before += p.area(len);
                start += len;
            }
            pieces.push(p);
        }
        Profile { pieces }
    }

    fn piece(&self, t: f64) -> &Piece {
        let i = self.pieces.partition_point(|p| p.end() <= t);
        &self.pieces[i.min(self.pieces.len() - 1)]
    }

    /// The level `t` seconds from the start.
    pub fn level(&self, t: f64) -> f64 {
        self.piece(t).level(t)
    }

    /// When the integral of the level reaches `count`: the time operation `count` is due
    /// under a rate; `None` when it never does (the level stays at 0).
    pub fn time_of(&self, count: f64) -> Option<f64> {
        for p in &self.pieces {
            let total = if p.len.is_finite() {
                p.area(p.len)
            } else if p.from > 0.0 {
                f64::INFINITY
            } else {
                0.0
            };
            let need = count - p.before;
            // An operation due exactly where a piece ends is the next piece's first.
            if need >= total || total <= 0.0 {
                continue;
            }
            // from*x + k*x^2 = need with k = slope/2, in the form that keeps its precision
            // whether the level rises, falls or holds.
            let k = if p.len.is_finite() {
                (p.to - p.from) / p.len / 2.0
            } else {
                0.0
            };
            let disc = (p.from * p.from + 4.0 * k * need).max(0.0);
            let denom = p.from + disc.sqrt();
            let x = if denom > 0.0 { 2.0 * need / denom } else { 0.0 };
            return Some(p.start + x.min(p.len));
        }
        None
    }

    /// Whether worker `k` works at `t`.
    pub fn active(&self, k: usize, t: f64) -> bool {
        self.level(t) >= k as f64 + 0.5
    }

    /// The first moment from `t` on when worker `k` works; `None` when it never does again.
    pub fn next_active(&self, k: usize, t: f64) -> Option<f64> {
        let need = k as f64 + 0.5;
        let first = self.pieces.partition_point(|p| p.end() <= t);
        for p in &self.pieces[first.min(self.pieces.len())..] {
            let from = t.max(p.start);
            if p.level(from) >= need {
                return Some(from);
            }
            if p.to > p.from && p.to >= need && p.len.is_finite() {
                let at = p.start + (need - p.from) / (p.to - p.from) * p.len;
                return Some(at.max(from));
            }
        }
        None
    }
}

/// A stage's bounds from the start of measuring.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Bounds {
    /// Start.
    pub start: Duration,
    /// End.
    pub end: Duration,
}

/// `run`'s stages' bounds from the start of measuring.
pub fn bounds(run: &Run) -> Vec<Bounds> {
    let mut at = Duration::ZERO;
    run.stages
        .iter()
        .map(|s| {
            let b = Bounds {
                start: at,
                end: at + s.duration,
            };
            at = b.end;
            b
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::Level;

    fn run(warmup_s: u64, stages: &[(u64, Level, bool)]) -> Run {
        let w = crate::workload::Workload::from_file(std::path::Path::new("workloads/quickstart.toml")).unwrap();
        let mut r = w.run;
        r.warmup = Duration::from_secs(warmup_s);
        r.stages = stages
            .iter()
            .map(|&(s, level, ramp)| Stage {
                duration: Duration::from_secs(s),
                level,
                ramp,
            })
            .collect();
        r
    }

    #[test]
    fn a_flat_rate_is_due_every_gap() {
        let p = Profile::flat(200.0);
        for c in [0.0, 1.0, 7.0, 1000.0] {
            assert!((p.time_of(c).unwrap() - c / 200.0).abs() < 1e-12, "{c}");
        }
    }

    #[test]
    fn a_ramp_is_due_where_its_integral_says() {
        // 1 s warm-up at 100/s, then 2 s at 100/s, then 100 -> 300/s over 2 s, then 300/s.
        let p = Profile::of(&run(
            1,
            &[(2, Level::Rate(100.0), false), (2, Level::Rate(300.0), true)],
        ))
        .unwrap();
        assert_eq!(p.time_of(100.0), Some(1.0));
        assert_eq!(p.time_of(300.0), Some(3.0));
        // The ramp holds 100*2 + 100*2 = 400 operations: the 400th past 300 is due at 5 s.
        assert!((p.time_of(700.0).unwrap() - 5.0).abs() < 1e-9);
        // Halfway through the ramp's operations (200 of 400): 100x + 50x^2 = 200.
        let x = (-100.0 + (100.0f64 * 100.0 + 4.0 * 50.0 * 200.0).sqrt()) / 100.0;
        assert!((p.time_of(500.0).unwrap() - (3.0 + x)).abs() < 1e-9);
        assert!((p.time_of(1000.0).unwrap() - 6.0).abs() < 1e-9, "300/s after the ramp");
        assert!((p.level(4.0) - 200.0).abs() < 1e-9);
    }

    #[test]
    fn a_stage_at_zero_holds_the_schedule_and_a_last_zero_ends_it() {
        let p = Profile::of(&run(
            0,
            &[
                (1, Level::Rate(10.0), false),
                (2, Level::Rate(0.0), false),
                (1, Level::Rate(10.0), false),
                (1, Level::Rate(0.0), true),
            ],
        ))
        .unwrap();
        assert_eq!(p.time_of(9.0), Some(0.9));
        // The 10th waits out the pause.
        assert_eq!(p.time_of(10.0), Some(3.0));
        assert!((p.time_of(15.0).unwrap() - 3.5).abs() < 1e-9);
        // The ramp down holds 5 more; past them, nothing is ever due.
        // 10x - 5x^2 = 4.9 in the ramp from 10 to 0.
        assert!((p.time_of(24.9).unwrap() - 4.0 - (1.0 - 0.02f64.sqrt())).abs() < 1e-6);
        assert_eq!(p.time_of(25.5), None);
    }

    #[test]
    fn threads_start_at_each_half_step_of_a_ramp_and_stop_when_it_falls() {
        let p = Profile::of(&run(
            0,
            &[
                (4, Level::Threads(4), true),
                (2, Level::Threads(4), false),
                (2, Level::Threads(1), false),
            ],
        ))
        .unwrap();
        for k in 0..4 {
            let at = p.next_active(k, 0.0).unwrap();
            assert!((at - (k as f64 + 0.5)).abs() < 1e-9, "worker {k} at {at}");
            assert!(!p.active(k, at - 1e-6) && p.active(k, at + 1e-6));
        }
        assert!(p.active(3, 5.0) && !p.active(3, 6.5) && p.active(0, 7.0));
        assert_eq!(p.next_active(3, 6.5), None);
        assert_eq!(p.next_active(0, 6.5), Some(6.5));
    }

    #[test]
    fn bounds_follow_the_stages() {
        let r = run(3, &[(2, Level::Rate(1.0), false), (5, Level::Rate(2.0), true)]);
        let b = bounds(&r);
        assert_eq!(
            b.iter()
                .map(|b| (b.start.as_secs(), b.end.as_secs()))
                .collect::<Vec<_>>(),
            [(0, 2), (2, 7)]
        );
    }
}
