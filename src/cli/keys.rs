//! `tallrow keys`: encoding and decoding row keys, and `keys compare`'s arguments and what
//! it prints ([`crate::session::variants`] runs it).

use super::{KeysCommand, KeysCompareArgs, VariantArgs};
use crate::keys::{self, KeyOptions, Layout, Salt};
use crate::session::variants::Comparison;
use crate::workload::Workload;
use anyhow::{Context, bail};
use std::io::Write;
use std::process::ExitCode;

impl VariantArgs {
    fn options(&self, layout: Layout) -> anyhow::Result<KeyOptions> {
        let mut opts = layout.seed_options();
        if let Some(order) = self.order {
            opts.order = order;
        }
        if let Some(salt) = &self.salt {
            opts.salt = match salt.as_str() {
                "none" => Salt::None,
                "hash" => Salt::Hash,
                n => {
                    let n: u16 = n
                        .parse()
                        .ok()
                        .with_context(|| format!("--salt: {n:?} is not none, hash or a bucket count"))?;
                    Salt::Buckets(n).validate().context("--salt")?
                }
            };
        }
        Ok(opts)
    }
}

/// Runs `tallrow keys ...`.
pub(super) fn command(cmd: KeysCommand) -> anyhow::Result<ExitCode> {
    let (layout, key, opts) = match cmd {
        KeysCommand::Encode {
            layout,
            fields,
            variant,
        } => {
            let opts = variant.options(layout)?;
            let mut pairs = Vec::with_capacity(fields.len());
            for f in &fields {
                let Some((name, value)) = f.split_once('=') else {
                    bail!("{}: argument {f:?} is not field=value", layout.name());
                };
                pairs.push((name, value));
            }
            (layout, layout.encode(opts, &pairs)?, opts)
        }
        KeysCommand::Decode { layout, hex, variant } => {
            let opts = variant.options(layout)?;
            let key = keys::parse_hex(hex.trim()).map_err(|e| anyhow::anyhow!("{}: {e}", layout.name()))?;
            (layout, key, opts)
        }
        KeysCommand::Compare(args) => return compare(args),
    };
    let fields = layout.decode(opts, &key)?;
    let mut out = std::io::stdout().lock();
    writeln!(out, "hex: {}", keys::hex(&key))?;
    writeln!(out, "binary: {}", keys::to_string_binary(&key))?;
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
    let mut out = std::io::stdout().lock();
    let (report, dir) = Comparison {
        file: &args.workload,
        workload: w,
        regions_given: args.regions.is_some(),
        variants: &args.variants,
        backend: args.backend.as_deref(),
        interval: args.settings.interval,
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
