//! Raw workload to typed workload: defaults filled in, every value range-checked. An error is
//! the dotted path of the field and what is wrong with it.

use super::MAX_REGIONS;
use super::{
    Actions, Arrival, Articles, Data, Follows, Keys, Level, Load, Microblog, Op, Posts, Run, Series, Skew, Stage,
    Workload, raw,
};
use crate::keys::{KeyOptions, Order, Salt};
use std::time::Duration;

type Result<T> = std::result::Result<T, (String, String)>;

fn bad<T>(field: &str, message: impl Into<String>) -> Result<T> {
    Err((field.to_string(), message.into()))
}

/// The value or its default, checked to lie in `[lo, hi]`.
fn num<T: PartialOrd + Copy + std::fmt::Display>(field: &str, v: Option<T>, default: T, lo: T, hi: T) -> Result<T> {
    let v = v.unwrap_or(default);
    if v.partial_cmp(&lo).is_none_or(|o| o.is_lt()) || v.partial_cmp(&hi).is_none_or(|o| o.is_gt()) {
        return bad(field, format!("must be between {lo} and {hi}, got {v}"));
    }
    Ok(v)
}

/// The LDBC Facebook-like rule for the mean degree of a network of `n` persons:
/// `n^(0.512 - 0.028 log10 n)` (about 40 at 10k, about 116 at 1M).
pub(super) fn ldbc_mean_degree(n: u64) -> f64 {
    let n = n.max(2) as f64;
    n.powf(0.512 - 0.028 * n.log10())
}

const MS_PER_DAY: i64 = 86_400_000;

/// The validated workload of `w`; `design` is the design its `design` field names, read
/// by the caller (which knows the workload's folder).
pub(super) fn workload(
    w: raw::Workload,
    design: Option<(super::OwnDesign, crate::design::Design)>,
) -> Result<Workload> {
    if w.name.is_empty()
        || w.name.len() > 64
        || !w.name.chars().all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c))
        || w.name.starts_with('.')
    {
        return bad(
            "name",
            format!(
                "{:?} must be 1 to 64 characters of letters, digits, '-', '_' or '.'",
                w.name
            ),
        );
    }
    let data = data(w.data)?;
    let keys = keys(w.keys)?;
    let mb = w.microblog.unwrap_or(raw::Microblog {
        inbox_versions: None,
        celebrity_threshold: None,
    });
    let microblog = Microblog {
        inbox_versions: num("microblog.inbox_versions", mb.inbox_versions, 3, 1, 1000)?,
        celebrity_threshold: match mb.celebrity_threshold.unwrap_or(10_000) {
            0 => None,
            t => Some(t),
        },
    };
    let l = w.load.unwrap_or(raw::Load {
        batch: None,
        threads: None,
        regions: None,
    });
    let load = Load {
        batch: num("load.batch", l.batch, 4000, 1, 100_000)? as usize,
        threads: num("load.threads", l.threads, 0, 0, super::MAX_THREADS as u32)? as usize,
        regions: num("load.regions", l.regions, 1, 1, MAX_REGIONS as u32)? as usize,
    };
    // A design's operation may take a seed operation's name (the shipped descriptions do),
    // as long as it writes where that one writes: an older report's writes are known by name.
    if let Some((_, d)) = &design
        && let Some((o, seed)) = d.operations.iter().find_map(|o| {
            Op::from_name(&o.name)
                .filter(|s| s.writes() != o.writes())
                .map(|s| (o, s))
        })
    {
        let does = |w: bool| if w { "writes" } else { "reads" };
        return bad(
            "design",
            format!(
                "the design's operation {} {}, and the seed operation of that name {}: name it otherwise",
                o.name,
                does(o.writes()),
                does(seed.writes())
            ),
        );
    }
    let run = run(w.run, &data, design.as_ref().map(|(_, d)| d))?;
    // Post stamps are kept distinct by stepping back from the span's start by at most 1 s.
    let oldest = data.start_ms - 1000;
    let tables = match &design {
        Some((_, d)) => d.descriptors(),
        None => crate::schema::all_tables(),
    };
    let storage = super::storage::validate(w.storage, &tables, oldest, crate::store::now_millis())?;
    if let Some((_, d)) = &design {
        own_design(d, &data)?;
    }
    Ok(Workload {
        name: w.name,
        seed: w.seed,
        data,
        keys,
        microblog,
        load,
        run,
        storage,
        design: design.map(|(own, _)| own),
    })
}

/// A design of the workload's own: each entity its tables name is one the workload's data
/// makes, and a timeline has followees to read.
fn own_design(d: &crate::design::Design, data: &Data) -> Result<()> {
    use crate::design::Entity;
    if data.follows.is_none()
        && let Some(o) = d
            .operations
            .iter()
            .find(|o| matches!(o.does, crate::design::ops::Does::Timeline(_)))
    {
        return bad(
            "design",
            format!(
                "operation {} is a timeline of the users each user follows: it needs [data.follows]",
                o.name
            ),
        );
    }
    for e in d.entities() {
        let (made, section) = match e {
            Entity::User => (true, ""),
            Entity::Follow | Entity::Celebrity => (data.follows.is_some(), "[data.follows]"),
            Entity::Delivery => (
                data.follows.is_some() && data.posts.is_some(),
                "[data.follows] and [data.posts]",
            ),
            Entity::Post => (data.posts.is_some(), "[data.posts]"),
            Entity::Action => (data.actions.is_some(), "[data.actions]"),
            Entity::Article => (data.articles.is_some(), "[data.articles]"),
            Entity::Point => (data.series.is_some(), "[data.series]"),
        };
        if !made {
            let t = d
                .tables
                .iter()
                .find(|t| t.rows.iter().any(|r| r.entity == Some(e)))
                .expect("an entity of the design");
            return bad(
                "design",
                format!(
                    "table {} (tables.{}) is made of {} rows, which the workload makes none of: it needs {section}",
                    t.name,
                    t.id,
                    e.name()
                ),
            );
        }
    }
    Ok(())
}

fn data(d: raw::Data) -> Result<Data> {
    let users = num("data.users", Some(d.users), 0, 1, 100_000_000)?;
    let start_ms = match d.start {
        None => 1_767_225_600_000, // 2026-01-01T00:00:00Z
        Some(dt) => start(&dt)?,
    };
    let span_days = num("data.span_days", d.span_days, 90, 1, 3650)?;
    let span_ms = i64::from(span_days) * MS_PER_DAY;
    // Generated times stay in the past: unfollow and deletes act at the store's clock, and
    // would not cover cells stamped in the future.
    if start_ms + span_ms > crate::store::now_millis() {
        return bad(
            "data.start",
            format!(
                "the span ends at {}, in the future; generated data must lie in the past",
                crate::date::iso(start_ms + span_ms)
            ),
        );
    }
    let follows = d.follows.map(|f| follows(f, users)).transpose()?;
    let posts = d.posts.map(posts).transpose()?;
    let actions = d.actions.map(actions).transpose()?;
    if actions.is_some() && posts.is_none() {
        return bad(
            "data.actions",
            "actions target posts: the workload needs a [data.posts] section",
        );
    }
    let articles = d.articles.map(articles).transpose()?;
    let series = d
        .series
        .map(|s| -> Result<Series> {
            Ok(Series {
                per_user: num("data.series.per_user", s.per_user, 200.0, 0.0, 100_000.0)?,
            })
        })
        .transpose()?;
    let compressibility = match d.compressibility {
        None => None,
        Some(r) if !(r > 1.0 && r <= 100.0) => {
            return bad(
                "data.compressibility",
                format!("must be above 1 and at most 100, got {r}"),
            );
        }
        Some(r) => {
            crate::generate::text::texture_for(r).or_else(|e| bad("data.compressibility", e))?;
            Some(r)
        }
    };
    Ok(Data {
        users,
        start_ms,
        span_ms,
        follows,
        posts,
        actions,
        articles,
        series,
        compressibility,
    })
}

fn start(dt: &toml::value::Datetime) -> Result<i64> {
    let Some(date) = dt.date else {
        return bad(
            "data.start",
            "must be a date or a date and time, e.g. 2026-01-01T00:00:00Z",
        );
    };
    if !(1970..=2200).contains(&date.year) {
        return bad(
            "data.start",
            format!("year must be between 1970 and 2200, got {}", date.year),
        );
    }
    let days = crate::date::days_from_civil(i64::from(date.year), u32::from(date.month), u32::from(date.day));
    let mut ms = days * MS_PER_DAY;
    if let Some(t) = dt.time {
        ms += i64::from(t.hour) * 3_600_000
            + i64::from(t.minute) * 60_000
            + i64::from(t.second.unwrap_or(0)) * 1000
            + i64::from(t.nanosecond.unwrap_or(0) / 1_000_000);
    }
    if let Some(toml::value::Offset::Custom { minutes }) = dt.offset {
        ms -= i64::from(minutes) * 60_000;
    }
    Ok(ms)
}

fn follows(f: raw::Follows, users: u64) -> Result<Follows> {
    let max_followees = num("data.follows.max_followees", f.max_followees, 1000, 1, 100_000)?;
    let rule = ldbc_mean_degree(users).min(f64::from(max_followees));
    let mean = num("data.follows.mean", f.mean, rule, 0.0, f64::from(max_followees))?;
    let fraction = num("data.follows.max_followers", f.max_followers, 0.2, 0.0, 1.0)?;
    if fraction == 0.0 {
        return bad(
            "data.follows.max_followers",
            "must be above 0 (a fraction of the users)",
        );
    }
    let community_share = num("data.follows.community_share", f.community_share, 0.3, 0.0, 1.0)?;
    let uniform_share = num("data.follows.uniform_share", f.uniform_share, 0.1, 0.0, 1.0)?;
    if community_share + uniform_share > 1.0 {
        return bad(
            "data.follows.uniform_share",
            format!(
                "community_share + uniform_share must be at most 1, got {}",
                community_share + uniform_share
            ),
        );
    }
    Ok(Follows {
        mean,
        degree_sigma: num("data.follows.degree_sigma", f.degree_sigma, 1.0, 0.0, 3.0)?,
        max_followees,
        max_followers: ((fraction * users as f64).ceil() as u64).max(1),
        zipf_exponent: num("data.follows.zipf_exponent", f.zipf_exponent, 0.7, 0.01, 3.0)?,
        community_share,
        community_window: u64::from(num(
            "data.follows.community_window",
            f.community_window,
            100,
            1,
            1_000_000,
        )?),
        uniform_share,
    })
}

fn posts(p: raw::Posts) -> Result<Posts> {
    let min_chars = num("data.posts.min_chars", p.min_chars, 85, 1, 100_000)?;
    let max_chars = num("data.posts.max_chars", p.max_chars, 250, min_chars, 100_000)?;
    Ok(Posts {
        per_month: num("data.posts.per_month", p.per_month, 4.0, 0.0, 10_000.0)?,
        min_chars,
        max_chars,
        long_share: num("data.posts.long_share", p.long_share, 0.01, 0.0, 1.0)?,
        long_max_chars: num(
            "data.posts.long_max_chars",
            p.long_max_chars,
            2000,
            max_chars,
            1_000_000,
        )?,
    })
}

fn actions(a: raw::Actions) -> Result<Actions> {
    let verbs = a
        .verbs
        .unwrap_or_else(|| ["view", "like", "comment", "share"].map(String::from).to_vec());
    if verbs.is_empty() {
        return bad("data.actions.verbs", "must name at least one action");
    }
    if let Some(v) = verbs
        .iter()
        .find(|v| v.is_empty() || v.len() > 64 || v.contains(char::is_whitespace))
    {
        return bad(
            "data.actions.verbs",
            format!("{v:?} must be 1 to 64 characters without spaces"),
        );
    }
    let latest = num("data.actions.latest", a.latest, 0.3, 0.0, 1.0)?;
    if latest == 0.0 {
        return bad("data.actions.latest", "must be above 0");
    }
    Ok(Actions {
        per_user: num("data.actions.per_user", a.per_user, 20.0, 0.0, 100_000.0)?,
        latest,
        delay_hours: num("data.actions.delay_hours", a.delay_hours, 24.0, 0.0, 10_000.0)?,
        verbs,
    })
}

fn articles(a: raw::Articles) -> Result<Articles> {
    Ok(Articles {
        per_user: num("data.articles.per_user", a.per_user, 2.0, 0.0, 10_000.0)?,
        categories: num("data.articles.categories", a.categories, 16, 1, 1_000_000)?,
        category_zipf: num("data.articles.category_zipf", a.category_zipf, 1.0, 0.0, 3.0)?,
        size_median: num("data.articles.size_median", a.size_median, 1500, 1, 1_000_000)?,
        size_sigma: num("data.articles.size_sigma", a.size_sigma, 0.7, 0.0, 3.0)?,
        update_share: num("data.articles.update_share", a.update_share, 0.2, 0.0, 1.0)?,
    })
}

fn keys(k: Option<raw::Keys>) -> Result<Keys> {
    let k = k.unwrap_or(raw::Keys {
        actions: None,
        weibo: None,
        blog: None,
        series: None,
    });
    Ok(Keys {
        actions: variant("keys.actions", k.actions, KeyOptions::SEED)?,
        weibo: variant("keys.weibo", k.weibo, KeyOptions::SEED)?,
        blog: variant("keys.blog", k.blog, KeyOptions::BLOG_SEED)?,
        series: variant("keys.series", k.series, KeyOptions::SEED)?,
    })
}

fn variant(field: &str, v: Option<raw::Variant>, seed: KeyOptions) -> Result<KeyOptions> {
    let Some(v) = v else { return Ok(seed) };
    let mut opts = seed;
    if let Some(order) = v.order {
        opts.order = match order.as_str() {
            "reverse" => Order::Reverse,
            "forward" => Order::Forward,
            other => {
                return bad(
                    &format!("{field}.order"),
                    format!("{other:?} is not \"reverse\" or \"forward\""),
                );
            }
        };
    }
    if let Some(salt) = v.salt {
        let path = format!("{field}.salt");
        opts.salt = match salt {
            raw::Salt::Name(s) if s == "none" => Salt::None,
            raw::Salt::Name(s) if s == "hash" => Salt::Hash,
            raw::Salt::Name(s) => return bad(&path, format!("{s:?} is not \"none\", \"hash\" or a bucket count")),
            raw::Salt::Buckets(n) if (1..=256).contains(&n) => Salt::Buckets(n as u16),
            raw::Salt::Buckets(n) => return bad(&path, format!("bucket count must be between 1 and 256, got {n}")),
        };
    }
    Ok(opts)
}

/// `500ms`, `30s`, `5m`, `1h`, up to a week.
pub fn parse_duration(text: &str) -> std::result::Result<Duration, String> {
    duration("", text).map_err(|(_, message)| message)
}

/// `500ms`, `30s`, `5m`, `1h` (humantime's forms, such as `1m 30s`, too).
fn duration(field: &str, text: &str) -> Result<Duration> {
    let Ok(d) = humantime::parse_duration(text) else {
        return bad(field, format!("{text:?} is not a duration like 500ms, 30s, 5m or 1h"));
    };
    if d > Duration::from_secs(7 * 24 * 3600) {
        return bad(field, format!("{text:?} is longer than a week"));
    }
    Ok(d)
}

fn run(r: Option<raw::Run>, data: &Data, design: Option<&crate::design::Design>) -> Result<Run> {
    let r = r.unwrap_or(raw::Run {
        threads: None,
        duration: None,
        ops: None,
        rate: None,
        arrival: None,
        warmup: None,
        skew: None,
        skew_exponent: None,
        mix: None,
        stages: None,
        consistency: None,
        primary_timeout: None,
        scan_primary_timeout: None,
    });
    let stages = stages(&r)?;
    let dur = match &r.duration {
        Some(t) => duration("run.duration", t)?,
        None => Duration::from_secs(60),
    };
    if dur.is_zero() && r.ops.is_none() {
        return bad("run.duration", "must be above zero unless run.ops is set");
    }
    if r.ops == Some(0) {
        return bad("run.ops", "must be at least 1");
    }
    let rate = match r.rate {
        None => None,
        Some(x) if x > 0.0 && x <= 10_000_000.0 => Some(x),
        Some(x) => {
            return bad(
                "run.rate",
                format!("must be above 0 and at most 10000000 operations/s, got {x}"),
            );
        }
    };
    let arrival = named("run.arrival", r.arrival.as_deref(), Arrival::Fixed)?;
    let skew = named("run.skew", r.skew.as_deref(), Skew::Zipf)?;
    let mix = match r.mix {
        Some(m) => {
            let mut out = Vec::new();
            for (name, weight) in m {
                let field = format!("run.mix.{name}");
                let op = match design {
                    Some(d) => {
                        let Some(i) = d.operations.iter().position(|o| o.name == name) else {
                            let known: Vec<&str> = d.operations.iter().map(|o| o.name.as_str()).collect();
                            return bad(
                                &field,
                                match known[..] {
                                    [] => "the workload's own design declares no operations".to_string(),
                                    _ => format!(
                                        "the workload's own design has no such operation; its operations: {}",
                                        known.join(", ")
                                    ),
                                },
                            );
                        };
                        Op::Own(super::op::Own::new(i, &name, d.operations[i].writes()))
                    }
                    None => {
                        let Some(op) = Op::from_name(&name) else {
                            let known: Vec<&str> = Op::ALL.iter().map(|o| o.name()).collect();
                            return bad(&field, format!("unknown operation; known: {}", known.join(", ")));
                        };
                        op
                    }
                };
                if !(0.0..=1e6).contains(&weight) {
                    return bad(&field, format!("weight must be between 0 and 1000000, got {weight}"));
                }
                if weight > 0.0 {
                    if let Some(needs) = op.needs()
                        && !has(data, needs)
                    {
                        return bad(&field, format!("needs a [{}] section", needs.section()));
                    }
                    out.push((op, weight));
                }
            }
            if out.is_empty() {
                return bad("run.mix", "needs at least one operation with a positive weight");
            }
            out.sort_by_key(|(op, _)| *op);
            out
        }
        // A design's own operations alike; none where it declares none (`run` says so).
        None => match design {
            Some(d) => d
                .operations
                .iter()
                .enumerate()
                .map(|(i, o)| (Op::Own(super::op::Own::new(i, &o.name, o.writes())), 1.0))
                .collect(),
            None => default_mix(data),
        },
    };
    if mix.is_empty() && design.is_none() {
        return bad("run.mix", "the workload's data supports no operation");
    }
    Ok(Run {
        threads: num("run.threads", r.threads, 0, 0, super::MAX_THREADS as u32)? as usize,
        duration: if stages.is_empty() {
            dur
        } else {
            stages.iter().map(|s| s.duration).sum()
        },
        ops: r.ops,
        rate,
        arrival,
        warmup: match &r.warmup {
            Some(t) => duration("run.warmup", t)?,
            None => Duration::from_secs(5),
        },
        skew,
        skew_exponent: num("run.skew_exponent", r.skew_exponent, 0.99, 0.01, 3.0)?,
        mix,
        stages,
        consistency: named("run.consistency", r.consistency.as_deref(), super::Consistency::Strong)?,
        primary_timeout: timeout(
            "run.primary_timeout",
            r.primary_timeout.as_deref(),
            super::PRIMARY_TIMEOUT,
        )?,
        scan_primary_timeout: timeout(
            "run.scan_primary_timeout",
            r.scan_primary_timeout.as_deref(),
            super::SCAN_PRIMARY_TIMEOUT,
        )?,
    })
}

/// A TIMELINE primary timeout: from 0 (every read hedged at once) to a minute.
fn timeout(field: &str, text: Option<&str>, default: Duration) -> Result<Duration> {
    let Some(text) = text else { return Ok(default) };
    let d = duration(field, text)?;
    if d > Duration::from_secs(60) {
        return bad(field, format!("{text:?} is longer than a minute"));
    }
    Ok(d)
}

/// `[[run.stages]]`: each a length and a rate or a thread count, all of one kind, the run's
/// length and level theirs alone.
fn stages(r: &raw::Run) -> Result<Vec<Stage>> {
    let Some(list) = &r.stages else { return Ok(Vec::new()) };
    if list.is_empty() {
        return bad("run.stages", "is empty: give at least one stage, or none at all");
    }
    let owned = "the stages set the run's length and level";
    for (field, set) in [
        ("run.duration", r.duration.is_some()),
        ("run.ops", r.ops.is_some()),
        ("run.rate", r.rate.is_some()),
    ] {
        if set {
            return bad(field, format!("cannot be set with run.stages: {owned}"));
        }
    }
    let mut out: Vec<Stage> = Vec::with_capacity(list.len());
    for (i, s) in list.iter().enumerate() {
        let at = format!("run.stages[{}]", i + 1);
        let duration = match &s.duration {
            Some(t) => duration(&format!("{at}.duration"), t)?,
            None => return bad(&format!("{at}.duration"), "is missing: each stage has a length"),
        };
        if duration.is_zero() {
            return bad(&format!("{at}.duration"), "must be above zero");
        }
        let level = match (s.rate, s.threads) {
            (Some(rate), None) if (0.0..=10_000_000.0).contains(&rate) => Level::Rate(rate),
            (Some(rate), None) => {
                return bad(
                    &format!("{at}.rate"),
                    format!("must be from 0 to 10000000 operations/s, got {rate}"),
                );
            }
            (None, Some(t)) => Level::Threads(num(&format!("{at}.threads"), Some(t), 0, 0, super::MAX_THREADS as u32)?),
            (Some(_), Some(_)) => return bad(&at, "gives both rate and threads: a stage has one"),
            (None, None) => return bad(&at, "needs a rate (open loop) or threads (closed loop)"),
        };
        if let Some(first) = out.first()
            && std::mem::discriminant(&first.level) != std::mem::discriminant(&level)
        {
            return bad(
                &at,
                format!(
                    "gives {} where run.stages[1] gives {}: a run's stages are all open loop (rate) or all closed loop (threads)",
                    level.unit(),
                    first.level.unit()
                ),
            );
        }
        if matches!(level, Level::Threads(_)) && r.threads.is_some() {
            return bad(
                "run.threads",
                format!("cannot be set with closed-loop run.stages: {owned}"),
            );
        }
        out.push(Stage {
            duration,
            level,
            ramp: s.ramp.unwrap_or(false),
        });
    }
    let total: Duration = out.iter().map(|s| s.duration).sum();
    if total > Duration::from_secs(7 * 24 * 3600) {
        return bad("run.stages", "last longer than a week together");
    }
    if out.iter().all(|s| s.level.value() == 0.0) {
        return bad("run.stages", "every stage is at 0: nothing would run");
    }
    Ok(out)
}

/// A value of one of the workload's enums, by the name [`clap::ValueEnum`] gives it (the
/// one spelling files, flags and reports share); `default` when absent.
fn named<T: clap::ValueEnum + Copy>(field: &str, text: Option<&str>, default: T) -> Result<T> {
    let Some(text) = text else { return Ok(default) };
    T::from_str(text, false).or_else(|_| {
        let names: Vec<String> = T::value_variants()
            .iter()
            .filter_map(|v| v.to_possible_value())
            .map(|p| format!("{:?}", p.get_name()))
            .collect();
        let names = match names.split_last() {
            Some((last, [])) => last.clone(),
            Some((last, rest)) => format!("{} or {last}", rest.join(", ")),
            None => String::new(),
        };
        bad(field, format!("{text:?} is not {names}"))
    })
}

fn has(data: &Data, needs: super::Needs) -> bool {
    use super::Needs;
    match needs {
        Needs::Timeline => data.follows.is_some() && data.posts.is_some(),
        Needs::Follows => data.follows.is_some(),
        Needs::Posts => data.posts.is_some(),
        Needs::Actions => data.actions.is_some(),
        Needs::Articles => data.articles.is_some(),
        Needs::Series => data.series.is_some(),
    }
}

/// A read-mostly mix over whatever data the workload has.
fn default_mix(data: &Data) -> Vec<(Op, f64)> {
    let weights = [
        (Op::Timeline, 20.0),
        (Op::TimelineLater, 5.0),
        (Op::OwnPosts, 5.0),
        (Op::ActionsOffset, 8.0),
        (Op::ActionsCursor, 8.0),
        (Op::ActionsRange, 5.0),
        (Op::SeriesRange, 5.0),
        (Op::Followers, 3.0),
        (Op::Followees, 3.0),
        (Op::Category, 5.0),
        (Op::Publish, 3.0),
        (Op::ActionWrite, 5.0),
        (Op::Follow, 1.0),
        (Op::Unfollow, 0.5),
        (Op::ArticlePost, 1.0),
        (Op::ArticleUpdate, 0.5),
        (Op::ArticleDelete, 0.2),
    ];
    weights
        .into_iter()
        .filter(|(op, _)| op.needs().is_some_and(|n| has(data, n)))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ldbc_rule_matches_its_published_points() {
        assert!((ldbc_mean_degree(10_000) - 39.8).abs() < 0.5);
        assert!((ldbc_mean_degree(1_000_000) - 115.9).abs() < 0.5);
    }

    #[test]
    fn durations() {
        assert_eq!(duration("f", "500ms").unwrap(), Duration::from_millis(500));
        assert_eq!(duration("f", "2m").unwrap(), Duration::from_secs(120));
        // humantime's forms: compound, spelled out.
        assert_eq!(duration("f", "1m 30s").unwrap(), Duration::from_secs(90));
        assert_eq!(duration("f", "5 minutes").unwrap(), Duration::from_secs(300));
        assert!(duration("f", "2 parsecs").is_err());
        assert!(duration("f", "s").is_err());
        assert!(duration("f", "-1s").is_err());
        assert!(duration("f", "9999h").is_err());
    }
}
