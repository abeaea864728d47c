//! Workload files: the TOML model, validated into a typed form with errors that name the
//! file, line, column and field. `workloads/README.md` documents every field.

mod op;
mod raw;
mod set;
pub mod storage;
mod validate;

pub use set::Set;

pub use op::{Needs, Op, Own as OwnOp};
pub use validate::parse_duration;

use crate::keys::KeyOptions;
pub use crate::tomlfile::Error;
use crate::tomlfile::locate;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Most worker threads a load or run starts.
pub const MAX_THREADS: usize = 4096;

/// Most regions a workload asks a table to be created with.
pub const MAX_REGIONS: usize = 1024;

/// A validated workload.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Workload {
    /// Name: report folders and the default data directory use it.
    pub name: String,
    /// The random seed every generated value derives from.
    pub seed: u64,
    /// The data shape.
    pub data: Data,
    /// Key-design variants.
    pub keys: Keys,
    /// Microblog settings.
    pub microblog: Microblog,
    /// The load phase.
    pub load: Load,
    /// The run phase.
    pub run: Run,
    /// How created families sit on disk (`[storage]`).
    #[serde(default)]
    pub storage: storage::StorageSettings,
    /// The workload's own table design (`design = "FILE"`), written in place of the seed
    /// designs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub design: Option<OwnDesign>,
}

/// A table design of the workload's own: the file it names, and the file's text.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct OwnDesign {
    /// The file, resolved against the workload's folder.
    pub file: PathBuf,
    /// Its text, which the data digest covers and report folders keep.
    pub text: String,
}

impl OwnDesign {
    /// The design, parsed (the workload was validated with it).
    pub fn design(&self) -> crate::design::Design {
        crate::design::Design::parse(&self.text).unwrap_or_else(|(at, why)| {
            panic!(
                "{}: {at}: {why} (validated when the workload was read)",
                self.file.display()
            )
        })
    }

    /// The design `field` (`design = "FILE"`) of the workload at `workload` names, read and
    /// validated; `at` places an error on the field.
    fn read(
        workload: &Path,
        field: &str,
        at: impl Fn(String) -> Error,
    ) -> Result<(OwnDesign, crate::design::Design), Error> {
        let file = workload.parent().unwrap_or(Path::new("")).join(field);
        if field.is_empty() {
            return Err(at(
                "names no file: the path of a design file, from the workload's folder".into(),
            ));
        }
        let text = match Error::read_toml(&file) {
            Err(Error::Read { reason, .. }) => return Err(at(format!("cannot read {}: {reason}", file.display()))),
            other => other?,
        };
        let design = crate::design::Design::from_text(&file, &text)?;
        Ok((OwnDesign { file, text }, design))
    }
}

/// The shape of the synthetic data.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Data {
    /// Number of users, ids 1 to `users`.
    pub users: u64,
    /// Start of the time span (epoch ms).
    pub start_ms: i64,
    /// Length of the time span (ms).
    pub span_ms: i64,
    /// The follow graph, when the workload has one.
    pub follows: Option<Follows>,
    /// Microblog posts.
    pub posts: Option<Posts>,
    /// User actions.
    pub actions: Option<Actions>,
    /// Blog articles.
    pub articles: Option<Articles>,
    /// Series points.
    pub series: Option<Series>,
    /// The ratio DEFLATE reaches on generated text (posts, article titles and bodies);
    /// `None` leaves the text as the vocabulary gives it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub compressibility: Option<f64>,
}

/// The follow graph.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Follows {
    /// Mean followees per user (the effective value when the file leaves it to the rule).
    pub mean: f64,
    /// Spread (lognormal sigma) of followees per user.
    pub degree_sigma: f64,
    /// Most followees a user has.
    pub max_followees: u32,
    /// Most followers a user has (absolute, from the file's fraction of users).
    pub max_followers: u64,
    /// Exponent of the Zipf draw over the popularity ranking.
    pub zipf_exponent: f64,
    /// Share of follows to users with nearby ids.
    pub community_share: f64,
    /// Half-width of the community window, in ids.
    pub community_window: u64,
    /// Share of follows to uniformly drawn users.
    pub uniform_share: f64,
}

/// Microblog posts.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Posts {
    /// Mean posts per user per month, for a user of mean degree.
    pub per_month: f64,
    /// Shortest post, in characters.
    pub min_chars: u32,
    /// Longest ordinary post.
    pub max_chars: u32,
    /// Share of long posts.
    pub long_share: f64,
    /// Longest long post.
    pub long_max_chars: u32,
}

/// User actions.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Actions {
    /// Mean actions per user.
    pub per_user: f64,
    /// Probability of the newest candidate post at each step of the "latest" draw.
    pub latest: f64,
    /// Mean delay from a post to an action on it, in hours.
    pub delay_hours: f64,
    /// Action names.
    pub verbs: Vec<String>,
}

/// Blog articles.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Articles {
    /// Mean articles per user.
    pub per_user: f64,
    /// Number of categories.
    pub categories: u32,
    /// Zipf exponent of category popularity.
    pub category_zipf: f64,
    /// Median body size in bytes.
    pub size_median: u32,
    /// Lognormal sigma of the body size.
    pub size_sigma: f64,
    /// Share of articles updated after posting.
    pub update_share: f64,
}

/// Series points.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Series {
    /// Mean points per user over the span.
    pub per_user: f64,
}

/// Key-design variants per design.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Keys {
    /// `useractions` rows.
    #[serde(serialize_with = "as_text", deserialize_with = "from_text")]
    pub actions: KeyOptions,
    /// `weibo:content` rows.
    #[serde(serialize_with = "as_text", deserialize_with = "from_text")]
    pub weibo: KeyOptions,
    /// `blog` rows.
    #[serde(serialize_with = "as_text", deserialize_with = "from_text")]
    pub blog: KeyOptions,
    /// `series` rows.
    #[serde(serialize_with = "as_text", deserialize_with = "from_text")]
    pub series: KeyOptions,
}

impl Keys {
    /// The seed layouts: reverse stamps everywhere, seed 002's `hash(id)` for the blog, no
    /// salt elsewhere.
    pub const SEED: Keys = Keys {
        actions: KeyOptions::SEED,
        weibo: KeyOptions::SEED,
        blog: KeyOptions::BLOG_SEED,
        series: KeyOptions::SEED,
    };

    /// The designs by name, as `[keys]` and variant specs name them.
    pub const DESIGNS: [&'static str; 4] = ["actions", "weibo", "blog", "series"];

    /// The options of the seed designs, in the order `[weibo, actions, blog, series]`.
    pub fn seeds(&self) -> [KeyOptions; 4] {
        [self.weibo, self.actions, self.blog, self.series]
    }

    /// The options of a design named in [`Keys::DESIGNS`].
    pub fn design(&self, name: &str) -> Option<KeyOptions> {
        match name {
            "actions" => Some(self.actions),
            "weibo" => Some(self.weibo),
            "blog" => Some(self.blog),
            "series" => Some(self.series),
            _ => None,
        }
    }

    fn design_mut(&mut self, name: &str) -> Option<&mut KeyOptions> {
        match name {
            "actions" => Some(&mut self.actions),
            "weibo" => Some(&mut self.weibo),
            "blog" => Some(&mut self.blog),
            "series" => Some(&mut self.series),
            _ => None,
        }
    }

    /// The seed layouts changed by `spec`: comma-separated settings `order=reverse|forward`
    /// and `salt=none|hash|N` (1 to 256 buckets), each for every design or, prefixed with
    /// `actions.`, `weibo.`, `blog.` or `series.`, for one; `seed` alone changes nothing.
    pub fn from_spec(spec: &str) -> Result<Keys, String> {
        let mut keys = Keys::SEED;
        let spec = spec.trim();
        if spec.is_empty() || spec == "seed" {
            return Ok(keys);
        }
        for part in spec.split(',') {
            let part = part.trim();
            let Some((name, value)) = part.split_once('=') else {
                return Err(format!(
                    "{part:?} is not SETTING=VALUE (order=forward, salt=hash, actions.salt=16)"
                ));
            };
            let (design, setting) = match name.split_once('.') {
                Some((d, s)) => {
                    if keys.design(d).is_none() {
                        return Err(format!("{d:?} is not a design (one of {})", Keys::DESIGNS.join(", ")));
                    }
                    (Some(d), s)
                }
                None => (None, name),
            };
            let apply: Box<dyn Fn(&mut KeyOptions)> = match (setting, value) {
                ("order", value) => {
                    let order: crate::keys::Order = value
                        .parse()
                        .map_err(|_| format!("order: {value:?} is not reverse or forward"))?;
                    Box::new(move |o| o.order = order)
                }
                ("salt", "none") => Box::new(|o| o.salt = crate::keys::Salt::None),
                ("salt", "hash") => Box::new(|o| o.salt = crate::keys::Salt::Hash),
                ("salt", n) => {
                    let salt = n
                        .parse::<u16>()
                        .ok()
                        .and_then(|n| crate::keys::Salt::Buckets(n).validate().ok())
                        .ok_or_else(|| format!("salt: {n:?} is not none, hash or a bucket count from 1 to 256"))?;
                    Box::new(move |o| o.salt = salt)
                }
                (other, _) => return Err(format!("{other:?} is not order or salt")),
            };
            match design {
                Some(d) => apply(keys.design_mut(d).expect("checked above")),
                None => {
                    for d in Keys::DESIGNS {
                        apply(keys.design_mut(d).expect("a design"));
                    }
                }
            }
        }
        Ok(keys)
    }
}

fn as_text<S: serde::Serializer>(v: &KeyOptions, s: S) -> Result<S::Ok, S::Error> {
    s.collect_str(v)
}

/// Key options as [`as_text`] writes them: `order=forward salt=16`.
fn from_text<'de, D: serde::Deserializer<'de>>(d: D) -> Result<KeyOptions, D::Error> {
    let text = String::deserialize(d)?;
    Keys::from_spec(&text.split_whitespace().collect::<Vec<_>>().join(","))
        .map(|k| k.actions)
        .map_err(serde::de::Error::custom)
}

/// Microblog settings.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Microblog {
    /// The inbox family's VERSIONS.
    pub inbox_versions: u32,
    /// Producers with more followers than this are not fanned out on write; `None`: all are.
    pub celebrity_threshold: Option<u64>,
}

/// The load phase.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Load {
    /// Rows per store call.
    pub batch: usize,
    /// Worker threads; 0 uses every core.
    pub threads: usize,
    /// Regions each table is created with (split points from the key design and the
    /// generated keys); 1 leaves the table unsplit.
    pub regions: usize,
}

/// How a run schedules operations under a target rate.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum Arrival {
    /// Evenly spaced.
    Fixed,
    /// Exponential gaps.
    Poisson,
}

/// How a run picks users.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum Skew {
    /// Zipf over the popularity ranking.
    Zipf,
    /// Newest (highest) ids most often.
    Latest,
    /// Every user alike.
    Uniform,
}

/// Which copies a run's reads may come from (`run.consistency`): HBase's `Consistency`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum Consistency {
    /// The primary alone.
    #[default]
    Strong,
    /// The primary, then every secondary replica once the primary is late (region replicas).
    Timeline,
}

/// HBase's `hbase.client.primaryCallTimeout.get`: 10 ms.
pub const PRIMARY_TIMEOUT: Duration = Duration::from_millis(10);
/// HBase's `hbase.client.replicaCallTimeout.scan`: 1 s.
pub const SCAN_PRIMARY_TIMEOUT: Duration = Duration::from_secs(1);

fn primary_timeout() -> Duration {
    PRIMARY_TIMEOUT
}

fn scan_primary_timeout() -> Duration {
    SCAN_PRIMARY_TIMEOUT
}

fn is_strong(c: &Consistency) -> bool {
    *c == Consistency::Strong
}

/// The run phase.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Run {
    /// Worker threads; 0 uses every core.
    pub threads: usize,
    /// How long to measure (after warm-up), unless `ops` is set.
    #[serde(with = "humantime_serde")]
    pub duration: Duration,
    /// Stop after this many measured operations.
    pub ops: Option<u64>,
    /// Target operations per second (open loop); `None`: closed loop.
    pub rate: Option<f64>,
    /// Schedule under a target rate.
    pub arrival: Arrival,
    /// Unmeasured time before measuring.
    #[serde(with = "humantime_serde")]
    pub warmup: Duration,
    /// How users are picked.
    pub skew: Skew,
    /// Exponent of the Zipf user pick.
    pub skew_exponent: f64,
    /// Operation weights, positive only.
    pub mix: Vec<(Op, f64)>,
    /// The stages the measured time is cut into, in order (`[[run.stages]]`); none: one
    /// stage at `rate` or `threads` for `duration`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub stages: Vec<Stage>,
    /// Which copies reads may come from.
    #[serde(default, skip_serializing_if = "is_strong")]
    pub consistency: Consistency,
    /// TIMELINE reads: how long a get waits on the primary before the secondaries are asked.
    #[serde(default = "primary_timeout", with = "humantime_serde")]
    pub primary_timeout: Duration,
    /// TIMELINE reads: how long a scan's call waits on the primary before the secondaries
    /// are asked.
    #[serde(default = "scan_primary_timeout", with = "humantime_serde")]
    pub scan_primary_timeout: Duration,
}

/// One stage of a run: a length, and the rate (open loop) or the worker threads (closed
/// loop) it runs at, reached at once or, with `ramp`, linearly from the stage before's
/// (the first stage's ramp starts from 0).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Stage {
    /// How long it lasts.
    #[serde(with = "humantime_serde")]
    pub duration: Duration,
    /// What it runs at.
    #[serde(flatten)]
    pub level: Level,
    /// Whether it goes linearly from the level before to its own.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub ramp: bool,
}

/// What a stage runs at.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Level {
    /// Operations per second, scheduled (open loop).
    Rate(f64),
    /// Worker threads, each issuing its next operation when the last returns (closed loop).
    Threads(u32),
}

impl Level {
    /// The level as a number: operations per second or threads.
    pub fn value(self) -> f64 {
        match self {
            Level::Rate(r) => r,
            Level::Threads(t) => f64::from(t),
        }
    }

    /// Its unit: `ops/s` or `threads`.
    pub fn unit(self) -> &'static str {
        match self {
            Level::Rate(_) => "ops/s",
            Level::Threads(_) => "threads",
        }
    }
}

/// A level's number as written: whole, or to two places.
fn number(v: f64) -> String {
    if v.fract() == 0.0 {
        format!("{v:.0}")
    } else {
        format!("{v:.2}")
    }
}

impl Stage {
    /// Where its level starts, after a stage at `before` (`None` for the first stage).
    pub fn from(&self, before: Option<&Stage>) -> f64 {
        match (self.ramp, before) {
            (false, _) => self.level.value(),
            (true, Some(b)) => b.level.value(),
            (true, None) => 0.0,
        }
    }

    /// `30s at 1000 ops/s` or `30s ramp 100 to 1000 ops/s`.
    pub fn describe(&self, before: Option<&Stage>) -> String {
        let unit = match self.level {
            Level::Threads(1) if !self.ramp || self.from(before) == 1.0 => "thread",
            l => l.unit(),
        };
        let to = number(self.level.value());
        let d = humantime::format_duration(self.duration);
        if self.ramp {
            format!("{d} ramp {} to {to} {unit}", number(self.from(before)))
        } else {
            format!("{d} at {to} {unit}")
        }
    }
}

/// Worker threads for a count of `n`: `n`, or every core for 0.
pub fn workers(n: usize) -> usize {
    if n > 0 {
        n
    } else {
        std::thread::available_parallelism().map_or(1, |n| n.get())
    }
}

impl Load {
    /// The worker threads the load starts.
    pub fn workers(&self) -> usize {
        workers(self.threads)
    }
}

impl Run {
    /// The consistency the store reads with.
    pub fn read_consistency(&self) -> crate::store::Consistency {
        match self.consistency {
            Consistency::Strong => crate::store::Consistency::Strong,
            Consistency::Timeline => crate::store::Consistency::Timeline {
                get: self.primary_timeout,
                scan: self.scan_primary_timeout,
            },
        }
    }

    /// The worker threads the run starts: the most its closed-loop stages ask for, or
    /// `threads`.
    pub fn workers(&self) -> usize {
        let most = self
            .stages
            .iter()
            .filter_map(|s| match s.level {
                Level::Threads(t) => Some(t as usize),
                Level::Rate(_) => None,
            })
            .max();
        match most {
            Some(t) => t.max(1),
            None => workers(self.threads),
        }
    }

    /// Whether operations are scheduled at a rate (open loop).
    pub fn open_loop(&self) -> bool {
        self.rate.is_some() || self.stages.iter().any(|s| matches!(s.level, Level::Rate(_)))
    }

    /// How the run drives the store, in words: `closed loop`, `open loop at 100 ops/s
    /// (fixed)`, or its stages.
    pub fn describe_loop(&self) -> String {
        if !self.stages.is_empty() {
            let parts: Vec<String> = self
                .stages
                .iter()
                .enumerate()
                .map(|(i, s)| s.describe(i.checked_sub(1).map(|b| &self.stages[b])))
                .collect();
            let kind = if self.open_loop() {
                format!("open loop ({})", self.arrival)
            } else {
                "closed loop".into()
            };
            return format!("{kind} in {} stages: {}", self.stages.len(), parts.join(", "));
        }
        match self.rate {
            Some(rate) => format!("open loop at {rate} ops/s ({})", self.arrival),
            None => "closed loop".into(),
        }
    }
}

named_values!(Arrival, "arrival");
named_values!(Skew, "skew");

/// Durations as `humantime` writes and reads them ("1m 30s"), in reports and back.
mod humantime_serde {
    use serde::{Deserialize, Deserializer, Serializer};
    use std::time::Duration;

    pub fn serialize<S: Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(&humantime::format_duration(*d))
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Duration, D::Error> {
        let text = String::deserialize(d)?;
        humantime::parse_duration(&text).map_err(serde::de::Error::custom)
    }
}

impl Workload {
    /// Reads and validates a workload file.
    pub fn from_file(path: &Path) -> Result<Workload, Error> {
        let src = Error::read_toml(path)?;
        Workload::from_str(path, &src)
    }

    /// Reads and validates `path` with `sets` applied in order. The file must be valid by
    /// itself; each setting is then validated as the same value in the file would be, and
    /// an error it causes names it.
    pub fn from_file_with(path: &Path, sets: &[Set]) -> Result<Workload, Error> {
        let w = Workload::from_file(path)?;
        if sets.is_empty() {
            return Ok(w);
        }
        let src = std::fs::read_to_string(path).map_err(|e| Error::Read {
            file: path.to_path_buf(),
            reason: e.to_string(),
        })?;
        let mut doc: toml::Table =
            toml::from_str(src.strip_prefix('\u{feff}').unwrap_or(&src)).map_err(|e| Error::Read {
                file: path.to_path_buf(),
                reason: e.message().to_string(),
            })?;
        let mut w = w;
        // One at a time: the file is valid, so the first setting that fails is the culprit.
        for s in sets {
            let refused = |message: String| Error::Set {
                set: s.to_string(),
                message,
            };
            s.apply(&mut doc).map_err(|e| Error::Set {
                set: s.to_string(),
                message: e.strip_prefix(&format!("{s}: ")).unwrap_or(&e).to_string(),
            })?;
            let raw: raw::Workload = toml::Value::Table(doc.clone())
                .try_into()
                .map_err(|e: toml::de::Error| refused(e.message().trim().replace('\n', " ")))?;
            let design = match &raw.design {
                None => None,
                Some(f) => Some(OwnDesign::read(path, f, |m| refused(format!("design: {m}")))?),
            };
            w = validate::workload(raw, design).map_err(|(field, message)| {
                // A flag stands for its own field: naming the field again says nothing.
                if s.from_flag && field == s.key() {
                    refused(message)
                } else {
                    refused(format!("{field}: {message}"))
                }
            })?;
        }
        Ok(w)
    }

    /// Validates a workload's text; `path` names it in errors.
    pub fn from_str(path: &Path, src: &str) -> Result<Workload, Error> {
        let at = |offset: usize, field: Option<String>, message: String| Error::at(path, src, offset, field, message);
        let raw: raw::Workload = toml::from_str(src).map_err(|e| {
            let message = e.message().trim().replace('\n', " ");
            if e.span().is_none() && message.contains("recursion limit") {
                // The reader gives no place for a key nested too deep: the longest dotted key is it.
                if let Some((offset, parts)) = locate::deepest_key(src) {
                    return at(
                        offset,
                        None,
                        format!("{message}: a key of {parts} dotted parts nests too deep"),
                    );
                }
            }
            let offset = e.span().map_or(0, |s| s.start);
            let field = locate::path_at(src, offset);
            at(offset, field, message)
        })?;
        let design = match &raw.design {
            None => None,
            Some(f) => {
                let offset = locate::span_of(src, "design").map_or(0, |s| s.start);
                Some(OwnDesign::read(path, f, |m| at(offset, Some("design".into()), m))?)
            }
        };
        validate::workload(raw, design).map_err(|(field, message)| {
            let offset = locate::span_of(src, &field).map_or(0, |s| s.start);
            at(offset, Some(field), message)
        })
    }

    /// The data directory of the embedded backend when `--backend` names none.
    pub fn default_data_dir(&self) -> PathBuf {
        PathBuf::from("data").join(&self.name)
    }

    /// A digest of everything that decides the generated data (seed, shape, keys, microblog
    /// settings), as 32 hex digits: equal digests, equal data.
    pub fn data_digest(&self) -> String {
        let shape = serde_json::to_vec(&(&self.seed, &self.data, &self.keys, &self.microblog)).expect("serializable");
        let mut d = crate::generate::digest::Digest::default();
        d.field(&shape);
        // The seed designs' digests stay what they were.
        if let Some(own) = &self.design {
            d.field(own.text.as_bytes());
        }
        d.hex()
    }

    /// The key designs ([`Keys::DESIGNS`]) whose rows the workload generates.
    pub fn designs(&self) -> Vec<&'static str> {
        let d = &self.data;
        [
            ("actions", d.actions.is_some()),
            ("weibo", d.posts.is_some()),
            ("blog", d.articles.is_some()),
            ("series", d.series.is_some()),
        ]
        .into_iter()
        .filter_map(|(name, has)| has.then_some(name))
        .collect()
    }

    /// The end of the time span (epoch ms, exclusive).
    pub fn end_ms(&self) -> i64 {
        self.data.start_ms + self.data.span_ms
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::keys::{Order, Salt};

    #[test]
    fn a_variant_spec_changes_the_seed_layouts_for_every_design_or_one() {
        assert_eq!(Keys::from_spec("seed").unwrap(), Keys::SEED);
        assert_eq!(Keys::from_spec("").unwrap(), Keys::SEED);
        let k = Keys::from_spec("order=forward, salt=16,blog.salt=none").unwrap();
        for d in ["actions", "weibo", "series"] {
            let o = k.design(d).unwrap();
            assert_eq!((o.order, o.salt), (Order::Forward, Salt::Buckets(16)), "{d}");
        }
        assert_eq!(k.blog.salt, Salt::None);
        assert_eq!(k.blog.order, Order::Forward);
        let k = Keys::from_spec("actions.salt=hash").unwrap();
        assert_eq!(k.actions.salt, Salt::Hash);
        assert_eq!(k.series, KeyOptions::SEED);
        for (bad, says) in [
            ("order=sideways", "order: \"sideways\" is not reverse or forward"),
            (
                "salt=0",
                "salt: \"0\" is not none, hash or a bucket count from 1 to 256",
            ),
            ("salt=257", "bucket count from 1 to 256"),
            ("pepper=1", "\"pepper\" is not order or salt"),
            (
                "users.salt=1",
                "\"users\" is not a design (one of actions, weibo, blog, series)",
            ),
            ("forward", "is not SETTING=VALUE"),
        ] {
            let e = Keys::from_spec(bad).unwrap_err();
            assert!(e.contains(says), "{bad}: {e}");
        }
    }
}
