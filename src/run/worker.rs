//! One worker: prepares, schedules, times and records its own operations, and hands its
//! histograms to the collector once per interval. No lock and no message per operation.

use super::ops::{Ctx, Scratch, error_kind};
use super::pick::Mix;
use super::schedule::Schedule;
use super::{Msg, Plan};
use crate::generate::rng::{Kind, Rng};
use crate::stats::{OpStats, record};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::Sender;
use std::time::{Duration, Instant};

/// Operations a worker claims at a time when the run stops after a count.
const CLAIM: u64 = 16;
/// Starting later than this after the scheduled time makes an operation late.
pub const LATE: Duration = Duration::from_secs(1);

/// Runs worker `id` to the end of the plan.
pub(super) fn work(id: usize, plan: &Plan, ctx: &Ctx, mix: &Mix, claimed: &AtomicU64, tx: Sender<Msg>) {
    let clock = &*plan.clock;
    let _part = crate::clock::Part::enter(clock);
    let rng = Rng::new(ctx.generator().workload().seed);
    let draws = rng.stream(Kind::Run, plan.stream, id as u64);
    let mut schedule = plan.rate.as_ref().map(|rate| {
        Schedule::new(
            plan.start,
            rate,
            plan.arrival,
            id,
            plan.threads,
            rng.stream(Kind::Run, plan.stream, 1 << 32 | id as u64),
        )
    });
    let mut scratch = Scratch::new(id);
    let mut stats: Vec<OpStats> = mix.ops().iter().map(|_| OpStats::default()).collect();
    let interval_ns = plan.interval.as_nanos().max(1);
    let mut current = 0u64; // interval the recorded stats belong to
    let mut allowance = 0u64; // claimed operations not yet run
    let mut i = 0u64;
    let staged = !plan.stage_ends.is_empty();
    let mut stage = 0usize; // the stage `stage_stats` belong to
    let mut finished = vec![vec![0u64; mix.ops().len()]; plan.stage_ends.len()];
    let mut stage_stats: Vec<OpStats> = if staged {
        mix.ops().iter().map(|_| OpStats::default()).collect()
    } else {
        Vec::new()
    };
    let flush = |stats: &mut Vec<OpStats>, index: u64| {
        let taken = stats.iter_mut().map(OpStats::take).collect();
        // The collector outlives the workers; a closed channel only means it gave up.
        let _ = tx.send(Msg::Flush {
            worker: id,
            index,
            stats: taken,
        });
    };
    let flush_stage = |stats: &mut Vec<OpStats>, index: usize| {
        let _ = tx.send(Msg::Stage {
            index,
            stats: stats.iter_mut().map(OpStats::take).collect(),
        });
    };
    // Before idling until `wake`: the intervals that end before it are done for this worker,
    // so that live output flows while it waits.
    let idle = |stats: &mut Vec<OpStats>, current: &mut u64, wake: Instant| {
        if wake <= plan.measure_start {
            return;
        }
        let idx = interval_of(plan, wake, interval_ns);
        if idx > *current {
            flush(stats, *current);
            if idx > *current + 1 {
                flush(&mut mix.ops().iter().map(|_| OpStats::default()).collect(), idx - 1);
            }
            *current = idx;
        }
    };
    loop {
        if plan.denied.get().is_some() || super::interrupt::requested() {
            break;
        }
        if let Some(levels) = &plan.threads_over_time {
            // Closed-loop stages: this worker works while the level of threads reaches it.
            let now = clock.now();
            let t = now.saturating_duration_since(plan.start).as_secs_f64();
            if !levels.active(id, t) {
                let wake = levels
                    .next_active(id, t)
                    .map(|at| plan.start + Duration::from_secs_f64(at))
                    .filter(|&at| plan.end.is_none_or(|end| at < end));
                let Some(wake) = wake else { break };
                idle(&mut stats, &mut current, wake);
                clock.sleep_until(wake.max(now + Duration::from_nanos(1)));
                continue;
            }
        }
        let s = draws.child(i);
        i += 1;
        let op_index = mix.pick(s.unit(u64::MAX));
        let call = ctx.prepare(mix.ops()[op_index], &s, &mut scratch);
        let intended = match &mut schedule {
            Some(sch) => match sch.next_start() {
                Some(at) => at,
                None => break,
            },
            None => clock.now(),
        };
        if plan.end.is_some_and(|end| intended >= end) {
            break;
        }
        let measured = intended >= plan.measure_start;
        if measured && let Some(limit) = plan.ops {
            if allowance == 0 {
                let first = claimed.fetch_add(CLAIM, Ordering::Relaxed);
                if first >= limit {
                    break;
                }
                allowance = CLAIM.min(limit - first);
            }
            allowance -= 1;
        }
        if schedule.is_some() {
            let now = clock.now();
            if intended > now {
                // Idle until due: hand over finished intervals first so live output flows.
                idle(&mut stats, &mut current, intended);
                clock.sleep_until(intended);
            }
        }
        let stale_before = crate::store::stale_reads();
        let started = clock.now();
        let result = ctx.execute(&call);
        let done = clock.now();
        let stale = crate::store::stale_reads() != stale_before;
        if let Err(crate::schema::Error::Store(crate::store::Error::Denied(why))) = &result {
            let _ = plan.denied.set(why.clone());
            break;
        }
        if !measured {
            continue;
        }
        let idx = interval_of(plan, done, interval_ns);
        if idx > current {
            flush(&mut stats, current);
            current = idx;
        }
        let late = started.duration_since(intended) > LATE;
        let service = schedule.is_some().then(|| nanos(done - started));
        let response = nanos(done - intended);
        note(&mut stats[op_index], late, stale, response, service, &result);
        if staged {
            // An operation counts in the stage it was due in.
            let from_start = intended.saturating_duration_since(plan.measure_start);
            let k = plan.stage_ends.partition_point(|&end| end <= from_start);
            let k = k.min(plan.stage_ends.len() - 1);
            if k != stage {
                flush_stage(&mut stage_stats, stage);
                stage = k;
            }
            note(&mut stage_stats[op_index], late, stale, response, service, &result);
            let at = done.saturating_duration_since(plan.measure_start);
            let f = plan.stage_ends.partition_point(|&end| end <= at);
            if result.is_ok()
                && let Some(n) = finished.get_mut(f)
            {
                n[op_index] += 1;
            }
        }
    }
    flush(&mut stats, current);
    if staged {
        flush_stage(&mut stage_stats, stage);
    }
    let _ = tx.send(Msg::Done { worker: id, finished });
}

/// Records one measured operation in `st`; `stale`: it read an answer a secondary replica
/// gave.
fn note(
    st: &mut OpStats,
    late: bool,
    stale: bool,
    response: u64,
    service: Option<u64>,
    result: &crate::schema::Result<()>,
) {
    if late {
        st.late += 1;
    }
    match result {
        Ok(()) => {
            record(&mut st.response, response);
            if stale {
                record(st.stale.get_or_insert_with(crate::stats::histogram), response);
            }
            if let Some(s) = service {
                record(&mut st.service, s);
            }
        }
        Err(e) => st.error(error_kind(e), || e.to_string()),
    }
}

/// The interval a completion at `t` counts in (the last one for completions past the end).
fn interval_of(plan: &Plan, t: Instant, interval_ns: u128) -> u64 {
    let idx = (t.saturating_duration_since(plan.measure_start).as_nanos() / interval_ns) as u64;
    plan.last_interval.map_or(idx, |last| idx.min(last))
}

fn nanos(d: Duration) -> u64 {
    u64::try_from(d.as_nanos()).unwrap_or(u64::MAX)
}
