//! The seed designs as descriptions (`workloads/designs/*.toml`, built into the binary), and
//! each seed layout's key read from them.

use super::Design;
use super::key::Key;
use crate::keys::{KeyOptions, Layout};
use std::sync::OnceLock;

/// The shipped seed designs: name and text.
pub const FILES: [(&str, &str); 4] = [
    ("actions", include_str!("../../workloads/designs/actions.toml")),
    ("microblog", include_str!("../../workloads/designs/microblog.toml")),
    ("blog", include_str!("../../workloads/designs/blog.toml")),
    ("series", include_str!("../../workloads/designs/series.toml")),
];

/// A shipped design by name, parsed once.
pub fn design(name: &str) -> &'static Design {
    static PARSED: OnceLock<Vec<(&'static str, Design)>> = OnceLock::new();
    let all = PARSED.get_or_init(|| {
        FILES
            .iter()
            .map(|(n, src)| {
                let d =
                    Design::parse(src).unwrap_or_else(|(at, why)| panic!("workloads/designs/{n}.toml: {at}: {why}"));
                (*n, d)
            })
            .collect()
    });
    &all.iter()
        .find(|(n, _)| *n == name)
        .unwrap_or_else(|| panic!("no shipped design {name}"))
        .1
}

/// Where a seed layout's key is declared: design, table, row kind.
pub fn place(layout: Layout) -> (&'static str, &'static str, &'static str) {
    match layout {
        Layout::Actions => ("actions", "useractions", "useractions"),
        Layout::WeiboContent => ("microblog", "content", "content"),
        Layout::Blog => ("blog", "blog", "article"),
        Layout::BlogIndex => ("blog", "blog", "category"),
        Layout::Series => ("series", "series", "series"),
    }
}

/// A seed layout's key from its description, with a workload's key options applied.
pub fn key(layout: Layout, opts: KeyOptions) -> Key {
    let (file, table, rows) = place(layout);
    let key = design(file)
        .key(table, rows)
        .unwrap_or_else(|| panic!("workloads/designs/{file}.toml declares no {table}.{rows}"));
    let mut k = key.with_options(Some(opts.order), Some(opts.salt));
    k.name = layout.name().to_string();
    k
}

/// The four seed designs as one, in the order of the tables of [`crate::generate::Table::SEEDS`],
/// each design's row keys with a workload's key options for it applied: `[weibo, actions,
/// blog, series]`; with their operations, under the seed operations' names, and seed 001's
/// inbox keeping (and its lookup reading) `inbox_versions` versions, the workload's
/// `[microblog] inbox_versions`.
pub fn combined(keys: [KeyOptions; 4], inbox_versions: u32) -> Design {
    let mut tables: Vec<super::Table> = Vec::new();
    let mut operations = Vec::new();
    for (file, opts) in ["microblog", "actions", "blog", "series"].into_iter().zip(keys) {
        let d = design(file);
        let (at, ops) = (tables.len(), operations.len());
        for t in &d.tables {
            let mut t = t.clone();
            for r in &mut t.rows {
                let name = std::mem::take(&mut r.key.name);
                r.key = r.key.with_options(Some(opts.order), Some(opts.salt));
                r.key.name = name;
            }
            if file == "microblog" && t.id == "inbox" {
                t.versions.iter_mut().for_each(|v| *v = inbox_versions);
            }
            tables.push(t);
        }
        for op in &d.operations {
            let mut op = op.moved(at, ops);
            if let super::ops::Does::Lookup { index, .. } = &mut op.does
                && tables[index.target.table].id == "inbox"
            {
                index.versions = inbox_versions;
            }
            operations.push(op);
        }
    }
    Design { tables, operations }
}
