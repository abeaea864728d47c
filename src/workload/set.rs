//! `--set KEY=VALUE`: a workload field overridden from the command line, applied to the
//! file's document before it is validated, so that a set value is checked exactly as one
//! written in the file. Every flag that stands for a workload field (`--threads`, `--rate`,
//! `--batch`, ...) is lowered to one of these ([`Set::flag`]), so none is checked twice.

use std::fmt;
use std::str::FromStr;

/// One `--set KEY=VALUE`: a dotted key (`data.users`, `microblog.celebrity_threshold`) and a
/// TOML value (`200000`, `"zipf"`, `[1, 2]`); a value that is not TOML is taken as a string
/// (`run.skew=zipf`).
#[derive(Debug, Clone, PartialEq)]
pub struct Set {
    /// The key's parts.
    pub path: Vec<String>,
    /// The value; `None` removes the key (`--duration` removes the file's `run.ops`).
    pub value: Option<toml::Value>,
    /// As given, for errors: `--set data.users=5`, or the flag it was lowered from.
    pub text: String,
    /// Lowered from a flag: errors name the flag and its value only.
    pub from_flag: bool,
}

impl FromStr for Set {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        let (key, value) = s
            .split_once('=')
            .ok_or_else(|| format!("{s:?} is not KEY=VALUE, e.g. data.users=200000"))?;
        let path: Vec<String> = key.trim().split('.').map(|p| p.trim().to_string()).collect();
        if let Some(bad) = path.iter().find(|p| {
            p.is_empty()
                || !p
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-' || c == ':')
        }) {
            return Err(format!(
                "{s:?}: {bad:?} is not a key part; a key is dotted words, e.g. data.posts.per_month"
            ));
        }
        let value = value.trim();
        let value = match toml::from_str::<toml::Table>(&format!("v = {value}")) {
            Ok(mut t) => t.remove("v").expect("parsed"),
            Err(_) => toml::Value::String(value.to_string()),
        };
        Ok(Set {
            path,
            value: Some(value),
            text: format!("--set {s}"),
            from_flag: false,
        })
    }
}

impl fmt::Display for Set {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

impl Set {
    /// The flag `flag` given `shown`, lowered to the dotted `key` set to `value` (`None`
    /// removes it); errors name the flag as given.
    pub fn flag(flag: &str, shown: impl fmt::Display, key: &str, value: Option<toml::Value>) -> Set {
        Set {
            path: key.split('.').map(String::from).collect(),
            value,
            text: format!("{flag} {shown}"),
            from_flag: true,
        }
    }

    /// The dotted key.
    pub fn key(&self) -> String {
        self.path.join(".")
    }

    /// Puts the value into `doc`, making the tables on its way; a part of the key that
    /// holds a value other than a table is an error.
    pub fn apply(&self, doc: &mut toml::Table) -> Result<(), String> {
        let (last, tables) = self.path.split_last().expect("a key has a part");
        let mut at = doc;
        for (i, part) in tables.iter().enumerate() {
            let entry = at
                .entry(part.clone())
                .or_insert_with(|| toml::Value::Table(toml::Table::new()));
            at = match entry {
                toml::Value::Table(t) => t,
                other => {
                    return Err(format!(
                        "{self}: {} is a {}, not a table",
                        self.path[..=i].join("."),
                        other.type_str()
                    ));
                }
            };
        }
        match &self.value {
            Some(v) => {
                at.insert(last.clone(), v.clone());
            }
            None => {
                at.remove(last);
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_read_as_toml_or_else_as_text() {
        let s: Set = "data.users=200000".parse().unwrap();
        assert_eq!(
            (s.key().as_str(), &s.value),
            ("data.users", &Some(toml::Value::Integer(200_000)))
        );
        let s: Set = "run.skew = zipf".parse().unwrap();
        assert_eq!(s.value, Some(toml::Value::String("zipf".into())));
        let s: Set = "run.skew=\"latest\"".parse().unwrap();
        assert_eq!(s.value, Some(toml::Value::String("latest".into())));
        let s: Set = "data.posts.per_month=2.5".parse().unwrap();
        assert_eq!(s.value, Some(toml::Value::Float(2.5)));
        for bad in ["users", "=3", "data..users=3", "data.us ers=3"] {
            assert!(bad.parse::<Set>().is_err(), "{bad}");
        }
    }

    #[test]
    fn applies_into_the_document_making_tables_on_the_way() {
        let mut doc: toml::Table = toml::from_str("name = \"x\"\n[data]\nusers = 3\n").unwrap();
        "data.users=7".parse::<Set>().unwrap().apply(&mut doc).unwrap();
        "microblog.celebrity_threshold=500"
            .parse::<Set>()
            .unwrap()
            .apply(&mut doc)
            .unwrap();
        assert_eq!(doc["data"]["users"].as_integer(), Some(7));
        assert_eq!(doc["microblog"]["celebrity_threshold"].as_integer(), Some(500));
        let err = "name.first=1".parse::<Set>().unwrap().apply(&mut doc).unwrap_err();
        assert!(err.contains("name is a string, not a table"), "{err}");
    }
}
