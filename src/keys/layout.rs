//! Layouts by name, with their fields as text: what `tallrow keys encode|decode` works on.

use super::{Error, KeyOptions, Result, actions, blog, series, weibo};
use std::str::FromStr;

/// One of the seed designs' row-key layouts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Layout {
    /// `useractions` rows (seeds 000, 003).
    Actions,
    /// `weibo:content` rows (seed 001).
    WeiboContent,
    /// `blog` article rows (seed 002).
    Blog,
    /// `blog` category index rows (seed 002).
    BlogIndex,
    /// Time-series rows (seed 004).
    Series,
}

/// A field of a layout: its name and the values it takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Field {
    /// The name used on the command line.
    pub name: &'static str,
    /// Smallest value.
    pub min: i128,
    /// Largest value.
    pub max: i128,
}

const I32: (i128, i128) = (i32::MIN as i128, i32::MAX as i128);
const I64: (i128, i128) = (i64::MIN as i128, i64::MAX as i128);
const STAMP: (i128, i128) = (0, i64::MAX as i128);
const U64: (i128, i128) = (0, u64::MAX as i128);

const fn field(name: &'static str, range: (i128, i128)) -> Field {
    Field {
        name,
        min: range.0,
        max: range.1,
    }
}

impl Layout {
    /// Every layout, in the order help texts list them.
    pub const ALL: [Layout; 5] = [
        Layout::Actions,
        Layout::WeiboContent,
        Layout::Blog,
        Layout::BlogIndex,
        Layout::Series,
    ];

    /// The layout's command-line name.
    pub fn name(self) -> &'static str {
        match self {
            Layout::Actions => "actions",
            Layout::WeiboContent => "weibo-content",
            Layout::Blog => "blog",
            Layout::BlogIndex => "blog-index",
            Layout::Series => "series",
        }
    }

    /// The fields, in key order.
    pub fn fields(self) -> &'static [Field] {
        const ACTIONS: [Field; 3] = [field("userid", I32), field("stamp", STAMP), field("actionid", I32)];
        const WEIBO: [Field; 2] = [field("uid", U64), field("stamp", STAMP)];
        const BLOG: [Field; 3] = [field("uid", I64), field("post_at", STAMP), field("article_id", I64)];
        const INDEX: [Field; 4] = [
            field("uid", I64),
            field("category", I32),
            field("post_at", STAMP),
            field("article_id", I64),
        ];
        const SERIES: [Field; 3] = [field("userid", I32), field("time", STAMP), field("nanos", STAMP)];
        match self {
            Layout::Actions => &ACTIONS,
            Layout::WeiboContent => &WEIBO,
            Layout::Blog => &BLOG,
            Layout::BlogIndex => &INDEX,
            Layout::Series => &SERIES,
        }
    }

    /// The seed's own key options for this layout.
    pub fn seed_options(self) -> KeyOptions {
        match self {
            Layout::Blog | Layout::BlogIndex => KeyOptions::BLOG_SEED,
            _ => KeyOptions::SEED,
        }
    }

    /// Encodes `field=value` assignments; every field must be given once.
    pub fn encode(self, opts: KeyOptions, assignments: &[(&str, &str)]) -> Result<Vec<u8>> {
        let fields = self.fields();
        let mut values: Vec<Option<i128>> = vec![None; fields.len()];
        for &(name, text) in assignments {
            let Some(i) = fields.iter().position(|f| f.name == name) else {
                return Err(self.malformed(format!("unknown field {name:?} (fields: {})", self.field_list())));
            };
            let f = fields[i];
            if values[i].is_some() {
                return Err(self.malformed(format!("field {name} is given twice")));
            }
            let v: i128 = text
                .trim()
                .parse()
                .map_err(|_| self.malformed(format!("{name}: {text:?} is not an integer")))?;
            if v < f.min || v > f.max {
                return Err(Error::OutOfRange {
                    field: f.name,
                    value: text.to_string(),
                    allowed: range_text(f),
                });
            }
            values[i] = Some(v);
        }
        if let Some(i) = values.iter().position(Option::is_none) {
            return Err(self.malformed(format!(
                "field {} is missing (fields: {})",
                fields[i].name,
                self.field_list()
            )));
        }
        let v: Vec<i128> = values.into_iter().flatten().collect();
        // Every value was range-checked against its field above, so these casts are exact.
        match self {
            Layout::Actions => actions::Key {
                userid: v[0] as i32,
                stamp: v[1] as i64,
                actionid: v[2] as i32,
            }
            .encode(opts),
            Layout::WeiboContent => weibo::ContentKey {
                uid: v[0] as u64,
                stamp: v[1] as i64,
            }
            .encode(opts),
            Layout::Blog => blog::ArticleKey {
                uid: v[0] as i64,
                post_at: v[1] as i64,
                article_id: v[2] as i64,
            }
            .encode(opts),
            Layout::BlogIndex => blog::IndexKey {
                uid: v[0] as i64,
                category: v[1] as i32,
                post_at: v[2] as i64,
                article_id: v[3] as i64,
            }
            .encode(opts),
            Layout::Series => series::Key {
                userid: v[0] as i32,
                time: v[1] as i64,
                nanos: v[2] as i64,
            }
            .encode(opts),
        }
    }

    /// Decodes a key into `(field, value)` pairs in key order.
    pub fn decode(self, opts: KeyOptions, key: &[u8]) -> Result<Vec<(&'static str, String)>> {
        let values: Vec<String> = match self {
            Layout::Actions => {
                let k = actions::Key::decode(opts, key)?;
                vec![k.userid.to_string(), k.stamp.to_string(), k.actionid.to_string()]
            }
            Layout::WeiboContent => {
                let k = weibo::ContentKey::decode(opts, key)?;
                vec![k.uid.to_string(), k.stamp.to_string()]
            }
            Layout::Blog => {
                let k = blog::ArticleKey::decode(opts, key)?;
                vec![k.uid.to_string(), k.post_at.to_string(), k.article_id.to_string()]
            }
            Layout::BlogIndex => {
                let k = blog::IndexKey::decode(opts, key)?;
                vec![
                    k.uid.to_string(),
                    k.category.to_string(),
                    k.post_at.to_string(),
                    k.article_id.to_string(),
                ]
            }
            Layout::Series => {
                let k = series::Key::decode(opts, key)?;
                vec![k.userid.to_string(), k.time.to_string(), k.nanos.to_string()]
            }
        };
        Ok(self.fields().iter().map(|f| f.name).zip(values).collect())
    }

    fn field_list(self) -> String {
        self.fields().iter().map(|f| f.name).collect::<Vec<_>>().join(", ")
    }

    fn malformed(self, reason: String) -> Error {
        Error::Malformed {
            layout: self.name(),
            reason,
        }
    }
}

fn range_text(f: Field) -> &'static str {
    match (f.min, f.max) {
        I32 => "-2147483648 to 2147483647",
        I64 => "-9223372036854775808 to 9223372036854775807",
        STAMP => "0 to 9223372036854775807",
        _ => "0 to 18446744073709551615",
    }
}

impl FromStr for Layout {
    type Err = String;

    fn from_str(s: &str) -> std::result::Result<Self, String> {
        Layout::ALL.into_iter().find(|l| l.name() == s).ok_or_else(|| {
            let names: Vec<&str> = Layout::ALL.iter().map(|l| l.name()).collect();
            format!("unknown layout {s:?} (layouts: {})", names.join(", "))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::keys::hex;

    #[test]
    fn every_layout_round_trips_through_fields() {
        let cases: [(Layout, &[(&str, &str)]); 5] = [
            (
                Layout::Actions,
                &[("userid", "1"), ("stamp", "1600000000000"), ("actionid", "7")],
            ),
            (Layout::WeiboContent, &[("uid", "1001"), ("stamp", "1600000000000")]),
            (
                Layout::Blog,
                &[
                    ("uid", "123456789012"),
                    ("post_at", "1600000000000"),
                    ("article_id", "42"),
                ],
            ),
            (
                Layout::BlogIndex,
                &[
                    ("uid", "123456789012"),
                    ("category", "5"),
                    ("post_at", "1600000000000"),
                    ("article_id", "42"),
                ],
            ),
            (
                Layout::Series,
                &[("userid", "352"), ("time", "1400657685457"), ("nanos", "81234567890")],
            ),
        ];
        for (layout, fields) in cases {
            let opts = layout.seed_options();
            let key = layout.encode(opts, fields).unwrap();
            let back = layout.decode(opts, &key).unwrap();
            let back: Vec<(&str, &str)> = back.iter().map(|(f, v)| (*f, v.as_str())).collect();
            assert_eq!(back, fields, "{}", layout.name());
        }
        let key = Layout::Actions
            .encode(
                KeyOptions::SEED,
                &[("actionid", "7"), ("userid", "1"), ("stamp", "1600000000000")],
            )
            .unwrap();
        assert_eq!(hex(&key), "000000017ffffe8b78917fff00000007");
    }

    #[test]
    fn field_errors_name_the_field() {
        let l = Layout::Actions;
        let o = KeyOptions::SEED;
        let err = |a: &[(&str, &str)]| l.encode(o, a).unwrap_err().to_string();
        assert!(err(&[("user", "1")]).contains("unknown field \"user\""));
        assert!(err(&[("userid", "1"), ("stamp", "1")]).contains("actionid is missing"));
        assert!(err(&[("userid", "1"), ("userid", "2")]).contains("userid is given twice"));
        assert!(err(&[("userid", "x"), ("stamp", "1"), ("actionid", "1")]).contains("userid: \"x\" is not an integer"));
        assert_eq!(
            err(&[("userid", "2147483648"), ("stamp", "1"), ("actionid", "1")]),
            "userid: 2147483648 is out of range (-2147483648 to 2147483647)"
        );
        assert_eq!(
            err(&[("userid", "1"), ("stamp", "-5"), ("actionid", "1")]),
            "stamp: -5 is out of range (0 to 9223372036854775807)"
        );
        assert!(
            "nope"
                .parse::<Layout>()
                .unwrap_err()
                .contains("layouts: actions, weibo-content")
        );
    }
}
