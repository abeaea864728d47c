//! The module graph of `src/` has no cycles: a module may use its ancestors' items (that is
//! how a parent's types reach its children), but no other path of `crate::`, `super::` or
//! child references leads from a module back to itself.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Module path ("store::hbase") to its file, for every file under `src/` but the generated IDL.
fn modules(root: &Path) -> BTreeMap<String, PathBuf> {
    let mut out = BTreeMap::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for e in std::fs::read_dir(&dir).expect("src/ is readable") {
            let p = e.expect("an entry").path();
            if p.is_dir() {
                stack.push(p);
                continue;
            }
            if p.extension().is_none_or(|x| x != "rs") {
                continue;
            }
            let rel = p.strip_prefix(root).expect("under src/").with_extension("");
            let mut parts: Vec<String> = rel.iter().map(|c| c.to_string_lossy().into_owned()).collect();
            if parts.last().is_some_and(|l| l == "mod") {
                parts.pop();
            }
            if parts == ["main"] {
                // The binary's root: a crate of its own.
                continue;
            }
            if parts == ["lib"] {
                parts.clear();
            }
            if parts.first().is_some_and(|p| p == "idl") {
                continue;
            }
            out.insert(parts.join("::"), p);
        }
    }
    out
}

/// The code of a file without comments and without its `#[cfg(test)] mod tests`.
fn code(path: &Path) -> String {
    let text = std::fs::read_to_string(path).expect("a source file");
    let text = match text.find("#[cfg(test)]\nmod tests") {
        Some(at) => &text[..at],
        None => &text[..],
    };
    text.lines()
        .map(|l| match l.find("//") {
            Some(at) => &l[..at],
            None => l,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// Each module's edges to the other modules it names, less those to its own ancestors.
fn edges(mods: &BTreeMap<String, PathBuf>) -> BTreeMap<String, BTreeSet<String>> {
    let path_re = regex_lite::Regex::new(r"\b(crate|super|self)((?:::\w+)+)(::\{([^;]*?)\})?").expect("a regex");
    let child_re = regex_lite::Regex::new(r"(?:^|[^:\w])(\w+)::").expect("a regex");
    let resolve = |parts: &[String]| -> Option<String> {
        (1..=parts.len())
            .rev()
            .map(|i| parts[..i].join("::"))
            .find(|k| mods.contains_key(k))
    };
    let mut out = BTreeMap::new();
    for (m, file) in mods {
        let here: Vec<String> = if m.is_empty() {
            Vec::new()
        } else {
            m.split("::").map(String::from).collect()
        };
        let src = code(file);
        let mut to = BTreeSet::new();
        for c in path_re.captures_iter(&src) {
            let start: Vec<String> = match &c[1] {
                "crate" => Vec::new(),
                "self" => here.clone(),
                _ => here[..here.len().saturating_sub(1)].to_vec(),
            };
            let base: Vec<String> = start
                .iter()
                .cloned()
                .chain(c[2].split("::").filter(|p| !p.is_empty()).map(String::from))
                .collect();
            let mut targets = vec![base.clone()];
            if let Some(items) = c.get(4) {
                for item in items.as_str().split(',') {
                    let item = item.split(" as ").next().unwrap_or("").replace(['{', '}'], "");
                    let extra: Vec<String> = item
                        .split("::")
                        .map(str::trim)
                        .filter(|p| !p.is_empty() && *p != "self")
                        .map(String::from)
                        .collect();
                    if !extra.is_empty() {
                        targets.push(base.iter().cloned().chain(extra).collect());
                    }
                }
            }
            to.extend(targets.iter().filter_map(|t| resolve(t)));
        }
        for c in child_re.captures_iter(&src) {
            let name = &c[1];
            if matches!(name, "crate" | "super" | "self") {
                continue;
            }
            let child = if m.is_empty() {
                name.to_string()
            } else {
                format!("{m}::{name}")
            };
            if mods.contains_key(&child) {
                to.insert(child);
            }
        }
        to.retain(|t| t != m && !t.is_empty() && !m.starts_with(&format!("{t}::")));
        out.insert(m.clone(), to);
    }
    out
}

/// The cycles: strongly connected components of more than one module (Tarjan's algorithm).
fn cycles(edges: &BTreeMap<String, BTreeSet<String>>) -> Vec<Vec<String>> {
    struct State<'a> {
        edges: &'a BTreeMap<String, BTreeSet<String>>,
        index: BTreeMap<&'a str, usize>,
        low: BTreeMap<&'a str, usize>,
        stack: Vec<&'a str>,
        on: BTreeSet<&'a str>,
        out: Vec<Vec<String>>,
    }
    fn visit<'a>(s: &mut State<'a>, v: &'a str) {
        let n = s.index.len();
        s.index.insert(v, n);
        s.low.insert(v, n);
        s.stack.push(v);
        s.on.insert(v);
        for w in &s.edges[v] {
            let w = w.as_str();
            if !s.index.contains_key(w) {
                visit(s, w);
                let lw = s.low[w];
                let lv = s.low.get_mut(v).expect("visited");
                *lv = (*lv).min(lw);
            } else if s.on.contains(w) {
                let iw = s.index[w];
                let lv = s.low.get_mut(v).expect("visited");
                *lv = (*lv).min(iw);
            }
        }
        if s.low[v] == s.index[v] {
            let mut comp = Vec::new();
            loop {
                let w = s.stack.pop().expect("on the stack");
                s.on.remove(w);
                comp.push(w.to_string());
                if w == v {
                    break;
                }
            }
            if comp.len() > 1 {
                comp.sort();
                s.out.push(comp);
            }
        }
    }
    let mut s = State {
        edges,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on: BTreeSet::new(),
        out: Vec::new(),
    };
    for v in edges.keys() {
        if !s.index.contains_key(v.as_str()) {
            visit(&mut s, v);
        }
    }
    s.out
}

#[test]
fn no_module_imports_its_way_back_to_itself() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mods = modules(&src);
    assert!(
        mods.contains_key("store::hbase") && mods.contains_key("cli"),
        "{mods:?}"
    );
    let e = edges(&mods);
    let found = cycles(&e);
    let shown: Vec<String> = found
        .iter()
        .map(|c| {
            c.iter()
                .map(|m| {
                    let to: Vec<&str> = e[m].iter().filter(|t| c.contains(t)).map(String::as_str).collect();
                    format!("{m} -> {}", to.join(", "))
                })
                .collect::<Vec<_>>()
                .join("; ")
        })
        .collect();
    assert!(found.is_empty(), "import cycles:\n{}", shown.join("\n"));
}

#[test]
fn the_cycle_finder_finds_a_cycle_and_passes_a_tree() {
    let graph = |pairs: &[(&str, &str)]| {
        let mut e: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
        for (a, b) in pairs {
            e.entry(a.to_string()).or_default().insert(b.to_string());
            e.entry(b.to_string()).or_default();
        }
        e
    };
    assert_eq!(
        cycles(&graph(&[("a", "b"), ("b", "c"), ("c", "a"), ("c", "d")])),
        vec![vec!["a".to_string(), "b".into(), "c".into()]]
    );
    assert!(cycles(&graph(&[("a", "b"), ("a", "c"), ("b", "c")])).is_empty());
}
