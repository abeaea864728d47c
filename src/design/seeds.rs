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
/// blog, series]`.
pub fn combined(keys: [KeyOptions; 4]) -> Design {
    let mut tables = Vec::new();
    for (file, opts) in ["microblog", "actions", "blog", "series"].into_iter().zip(keys) {
        for t in &design(file).tables {
            let mut t = t.clone();
            for r in &mut t.rows {
                let name = std::mem::take(&mut r.key.name);
                r.key = r.key.with_options(Some(opts.order), Some(opts.salt));
                r.key.name = name;
            }
            tables.push(t);
        }
    }
    Design {
        tables,
        operations: Vec::new(),
    }
}
