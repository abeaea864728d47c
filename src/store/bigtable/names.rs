//! HBase table names as Cloud Bigtable table ids, and back.
//!
//! Bigtable ids are 1 to 50 characters of `[-_.a-zA-Z0-9]`, not starting with `-` or `.`.
//! HBase names are `namespace:qualifier`, the namespace of `[a-zA-Z0-9_]` and the qualifier of
//! `[-_.a-zA-Z0-9]`. The mapping must be one-to-one, so a `-` in the qualifier is doubled and
//! the namespace is followed by `-.`, which a doubled qualifier never contains after a lone
//! `-`:
//!
//! | HBase | Bigtable id |
//! |---|---|
//! | `useractions` | `useractions` |
//! | `weibo:user` | `weibo-.user` |
//! | `a-b` | `a--b` |
//! | `ns:a-.b` | `ns-.a--.b` |

use super::{Error, Result, canonical_table_name};

/// The longest table id Bigtable accepts.
pub const MAX_ID: usize = 50;

/// The Bigtable table id of an HBase table name (`default:` is implied when absent).
pub fn table_id(name: &str) -> Result<String> {
    let name = canonical_table_name(name)?;
    let (ns, qualifier) = match name.split_once(':') {
        Some((ns, q)) => (Some(ns), q),
        None => (None, name.as_str()),
    };
    let mut id = String::with_capacity(name.len() + 2);
    if let Some(ns) = ns {
        id.push_str(ns);
        id.push_str("-.");
    }
    for c in qualifier.chars() {
        if c == '-' {
            id.push('-');
        }
        id.push(c);
    }
    if id.len() > MAX_ID {
        return Err(Error::BadArgument(format!(
            "table {name} maps to Bigtable table id {id:?}, longer than Bigtable's {MAX_ID} characters"
        )));
    }
    Ok(id)
}

/// The HBase table name of a Bigtable table id, or `None` for an id this mapping never
/// produces (a table some other tool created).
pub fn table_name(id: &str) -> Option<String> {
    let mut ns = None;
    let mut qualifier = String::with_capacity(id.len());
    let mut chars = id.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '-' {
            qualifier.push(c);
            continue;
        }
        match chars.next() {
            Some('-') => qualifier.push('-'),
            Some('.') if ns.is_none() && !qualifier.is_empty() => ns = Some(std::mem::take(&mut qualifier)),
            _ => return None,
        }
    }
    let name = match ns {
        Some(ns) => format!("{ns}:{qualifier}"),
        None => qualifier,
    };
    // Only names that map back to the same id: `default-.x` is not `x`'s id, for one.
    let canonical = canonical_table_name(&name).ok()?;
    (table_id(&canonical).ok()? == id).then_some(canonical)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn the_seeds_tables_and_the_escapes() {
        for (name, id) in [
            ("useractions", "useractions"),
            ("weibo:user", "weibo-.user"),
            ("weibo:inbox", "weibo-.inbox"),
            ("default:blog", "blog"),
            ("a-b", "a--b"),
            ("ns:a-.b", "ns-.a--.b"),
            ("_x.y", "_x.y"),
        ] {
            assert_eq!(table_id(name).unwrap(), id, "{name}");
            assert_eq!(table_name(id), Some(canonical_table_name(name).unwrap()), "{id}");
        }
    }

    #[test]
    fn ids_of_other_tools_and_long_names() {
        for id in ["my-table", "a-", "-.x", "x-.y-.z", "default-.blog", "a-.-x"] {
            assert_eq!(table_name(id), None, "{id}");
        }
        let long = "n".repeat(MAX_ID + 1);
        assert!(
            table_id(&long)
                .unwrap_err()
                .to_string()
                .contains("longer than Bigtable's 50")
        );
        assert_eq!(table_id(&"n".repeat(MAX_ID)).unwrap().len(), MAX_ID);
        assert!(table_id("ns:").is_err());
    }

    fn hbase_name() -> impl Strategy<Value = String> {
        (
            proptest::option::of("[a-zA-Z0-9_]{1,6}"),
            "[a-zA-Z0-9_][-_.a-zA-Z0-9]{0,12}",
        )
            .prop_map(|(ns, q)| match ns {
                Some(ns) => format!("{ns}:{q}"),
                None => q,
            })
    }

    proptest! {
        #[test]
        fn ids_are_valid_and_one_to_one(a in hbase_name(), b in hbase_name()) {
            let (ia, ib) = (table_id(&a).unwrap(), table_id(&b).unwrap());
            prop_assert!(ia.len() <= MAX_ID);
            prop_assert!(ia.chars().all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c)));
            prop_assert!(!ia.starts_with(['-', '.']));
            let (ca, cb) = (canonical_table_name(&a).unwrap(), canonical_table_name(&b).unwrap());
            prop_assert_eq!(ia == ib, ca == cb);
            prop_assert_eq!(table_name(&ia), Some(ca));
        }
    }
}
