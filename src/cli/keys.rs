//! `tallrow keys`: encoding and decoding row keys, and `keys compare`'s arguments and what
//! it prints ([`crate::session::variants`] runs it).

use super::{KeysCommand, KeysCompareArgs, VariantArgs};
use crate::design::Design;
use crate::design::key::{Key, Value};
use crate::design::seeds;
use crate::keys::{self, KeyOptions, Layout, Salt};
use crate::session::variants::Comparison;
use crate::workload::Workload;
use anyhow::{Context, bail};
use std::io::Write;
use std::path::Path;
use std::process::ExitCode;

impl VariantArgs {
    fn salt(&self) -> anyhow::Result<Option<Salt>> {
        let Some(salt) = &self.salt else {
            return Ok(None);
        };
        Ok(Some(match salt.as_str() {
            "none" => Salt::None,
            "hash" => Salt::Hash,
            n => {
                let n: u16 = n
                    .parse()
                    .ok()
                    .with_context(|| format!("--salt: {n:?} is not none, hash or a bucket count"))?;
                Salt::Buckets(n).validate().context("--salt")?
            }
        }))
    }

    fn options(&self, layout: Layout) -> anyhow::Result<KeyOptions> {
        let mut opts = layout.seed_options();
        if let Some(order) = self.order {
            opts.order = order;
        }
        if let Some(salt) = self.salt()? {
            opts.salt = salt;
        }
        Ok(opts)
    }

    /// The key `layout` names: a seed layout's description with these options, or a table of
    /// `design` with those given.
    fn key(&self, layout: &str, design: Option<&Path>) -> anyhow::Result<Key> {
        match design {
            None => {
                let l: Layout = layout.parse().map_err(|e: String| anyhow::anyhow!(e))?;
                Ok(seeds::key(l, self.options(l)?))
            }
            Some(file) => {
                let d = Design::from_file(file)?;
                let key = d
                    .named_key(layout)
                    .map_err(|e| anyhow::anyhow!("{}: {e}", file.display()))?;
                Ok(key.with_options(self.order, self.salt()?))
            }
        }
    }
}

/// Runs `tallrow keys ...`: every key, a seed layout's too, through its description.
pub(super) fn command(cmd: KeysCommand) -> anyhow::Result<ExitCode> {
    let (key, bytes) = match cmd {
        KeysCommand::Encode {
            layout,
            design,
            fields,
            variant,
        } => {
            let key = variant.key(&layout, design.as_deref())?;
            let mut pairs = Vec::with_capacity(fields.len());
            for f in &fields {
                let Some((name, value)) = f.split_once('=') else {
                    bail!("{layout}: argument {f:?} is not field=value");
                };
                pairs.push((name, value));
            }
            let values = key.values_of(&pairs)?;
            let values: Vec<Value> = values.iter().map(|v| v.as_value()).collect();
            let bytes = key.encode(&values)?;
            (key, bytes)
        }
        KeysCommand::Decode {
            layout,
            design,
            hex,
            variant,
        } => {
            let key = variant.key(&layout, design.as_deref())?;
            let bytes = keys::parse_hex(hex.trim()).map_err(|e| anyhow::anyhow!("{layout}: {e}"))?;
            (key, bytes)
        }
        KeysCommand::Compare(args) => return compare(args),
    };
    let fields = key.decode(&bytes)?;
    let mut out = std::io::stdout().lock();
    writeln!(out, "hex: {}", keys::hex(&bytes))?;
    writeln!(out, "binary: {}", keys::to_string_binary(&bytes))?;
    for (name, value) in fields {
        writeln!(out, "{name}: {value}")?;
    }
    Ok(ExitCode::SUCCESS)
}

fn compare(args: KeysCompareArgs) -> anyhow::Result<ExitCode> {
    let mut flags = args.settings.sets();
    flags.extend(super::regions_set(args.regions));
    let w = Workload::from_file_with(&args.workload, &flags)?;
    args.settings.check(&w)?;
    let labels = args.settings.labels()?;
    let mut out = std::io::stdout().lock();
    let (report, dir) = Comparison {
        file: &args.workload,
        workload: w,
        regions_given: args.regions.is_some(),
        variants: &args.variants,
        backend: args.backend.as_deref(),
        interval: args.settings.interval,
        labels: &labels,
        replace: args.replace,
        keep: args.keep,
        reports: &args.reports,
    }
    .run(&mut out)?;
    writeln!(out)?;
    write!(out, "{}", report.text_table().render())?;
    for f in &report.findings {
        writeln!(out, "{}", f.text)?;
    }
    writeln!(out, "report: {}", dir.display())?;
    super::all_valid(
        report
            .variants
            .iter()
            .filter(|v| v.run.invalid_reason.is_some())
            .map(|v| v.name.as_str()),
    )
}
