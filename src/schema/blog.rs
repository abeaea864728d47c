//! Blog articles with a category index (seed 002): table `blog`, family `d`, the empty
//! qualifier, the serialized article as the value. Each article has two rows, written and
//! deleted together in one batch with the seed's explicit timestamps (`postAt` on post,
//! `updateAt` on update, `deleteAt` on delete):
//!
//! - `hash(uid) uid 0x00 MAX-postAt articleId`: the user's articles, newest first;
//! - `hash(uid) uid 0x01 categoryId MAX-postAt articleId`: the same, by category.
//!
//! # Serialized article (version 1)
//!
//! All integers big-endian; each string a `u32` byte length then UTF-8.
//!
//! | bytes | field |
//! |---|---|
//! | 1 | format version, `0x01` |
//! | 8 | articleId (i64) |
//! | 8 | userId (i64) |
//! | 4 | categoryId (i32) |
//! | 8 | postAt (i64, epoch ms) |
//! | 8 | updateAt (i64, epoch ms) |
//! | 4 + n | userName |
//! | 4 + n | title |
//! | 4 + n | content |
//! | 4 + n | categoryName |

use super::{Page, Result, corrupt, newest_first_in};
use crate::keys::{
    KeyOptions,
    blog::{self as keys, ArticleKey, IndexKey},
};
use crate::store::{Column, Get, Mutation, Row, RowMutation, Store, TableDescriptor};
use std::sync::Arc;

/// Table name.
pub const TABLE: &str = "blog";
/// Column family.
pub const FAMILY: &str = "d";
/// Qualifier: HBase's empty byte array.
pub const QUALIFIER: &[u8] = b"";
const FORMAT: u8 = 1;

/// An article, as the seed serializes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Article {
    /// Id.
    pub article_id: i64,
    /// Author.
    pub uid: i64,
    /// Author's name.
    pub user_name: String,
    /// Title.
    pub title: String,
    /// Body.
    pub content: String,
    /// Category id.
    pub category: i32,
    /// Category name.
    pub category_name: String,
    /// Posted (epoch ms).
    pub post_at: i64,
    /// Last updated (epoch ms).
    pub update_at: i64,
}

impl Article {
    /// The serialized form (see the module docs).
    pub fn serialize(&self) -> Vec<u8> {
        let strings = [&self.user_name, &self.title, &self.content, &self.category_name];
        let mut out = Vec::with_capacity(37 + strings.iter().map(|s| 4 + s.len()).sum::<usize>());
        out.push(FORMAT);
        out.extend_from_slice(&self.article_id.to_be_bytes());
        out.extend_from_slice(&self.uid.to_be_bytes());
        out.extend_from_slice(&self.category.to_be_bytes());
        out.extend_from_slice(&self.post_at.to_be_bytes());
        out.extend_from_slice(&self.update_at.to_be_bytes());
        for s in strings {
            out.extend_from_slice(&(s.len() as u32).to_be_bytes());
            out.extend_from_slice(s.as_bytes());
        }
        out
    }

    /// Reads the serialized form; the error says what is wrong.
    pub fn deserialize(bytes: &[u8]) -> std::result::Result<Article, String> {
        let mut r = bytes;
        let mut take = |n: usize, what: &str| -> std::result::Result<&[u8], String> {
            if r.len() < n {
                return Err(format!("truncated at {what}"));
            }
            let (head, tail) = r.split_at(n);
            r = tail;
            Ok(head)
        };
        let version = take(1, "format version")?[0];
        if version != FORMAT {
            return Err(format!("unknown format version {version}"));
        }
        let i64_at = |b: &[u8]| i64::from_be_bytes(b.try_into().expect("8 bytes"));
        let article_id = i64_at(take(8, "articleId")?);
        let uid = i64_at(take(8, "userId")?);
        let category = i32::from_be_bytes(take(4, "categoryId")?.try_into().expect("4 bytes"));
        let post_at = i64_at(take(8, "postAt")?);
        let update_at = i64_at(take(8, "updateAt")?);
        let mut strings = Vec::with_capacity(4);
        for what in ["userName", "title", "content", "categoryName"] {
            let n = u32::from_be_bytes(take(4, what)?.try_into().expect("4 bytes")) as usize;
            let s = String::from_utf8(take(n, what)?.to_vec()).map_err(|_| format!("{what} is not UTF-8"))?;
            strings.push(s);
        }
        if !r.is_empty() {
            return Err(format!("{} trailing bytes", r.len()));
        }
        let [user_name, title, content, category_name] = <[String; 4]>::try_from(strings).expect("four strings");
        Ok(Article {
            article_id,
            uid,
            user_name,
            title,
            content,
            category,
            category_name,
            post_at,
            update_at,
        })
    }
}

/// The blog DAO.
#[derive(Clone)]
pub struct Blog {
    store: Arc<dyn Store>,
    opts: KeyOptions,
}

impl Blog {
    /// A DAO over `store` with the key variant `opts` (the seed's is `KeyOptions::BLOG_SEED`).
    pub fn new(store: Arc<dyn Store>, opts: KeyOptions) -> Self {
        Blog { store, opts }
    }

    /// The table layout.
    pub fn tables() -> Vec<TableDescriptor> {
        vec![TableDescriptor::new(TABLE, &[FAMILY], 1)]
    }

    /// Creates the table unless it exists.
    pub fn create_tables(&self) -> Result<()> {
        super::create_tables(&*self.store, &Self::tables())
    }

    fn keys(&self, a: &Article) -> Result<(Vec<u8>, Vec<u8>)> {
        row_keys(self.opts, a)
    }

    /// The article row and its index row, stamped `ts`: one batch, as the seed writes it.
    pub fn mutations(&self, a: &Article, ts: i64) -> Result<[RowMutation; 2]> {
        mutations(self.opts, a, ts)
    }

    /// Posts an article: both rows at `postAt`.
    pub fn post(&self, a: &Article) -> Result<()> {
        Ok(self.store.mutate(TABLE, &self.mutations(a, a.post_at)?)?)
    }

    /// Updates title and content at `update_at`: both rows rewritten. Returns the new article.
    pub fn update(&self, a: &Article, title: &str, content: &str, update_at: i64) -> Result<Article> {
        let updated = Article {
            title: title.to_string(),
            content: content.to_string(),
            update_at,
            ..a.clone()
        };
        self.store.mutate(TABLE, &self.mutations(&updated, update_at)?)?;
        Ok(updated)
    }

    /// Deletes the article and its index row at `delete_at`, in one batch.
    pub fn delete(&self, a: &Article, delete_at: i64) -> Result<()> {
        let (article, index) = self.keys(a)?;
        let del = || {
            vec![Mutation::DeleteRow {
                timestamp: Some(delete_at),
            }]
        };
        Ok(self.store.mutate(
            TABLE,
            &[RowMutation::new(article, del()), RowMutation::new(index, del())],
        )?)
    }

    /// One article by its key fields.
    pub fn get(&self, uid: i64, post_at: i64, article_id: i64) -> Result<Option<Article>> {
        let key = ArticleKey {
            uid,
            post_at,
            article_id,
        }
        .encode(self.opts)?;
        let row = self.store.get(TABLE, &[Get::new(key)])?.pop().flatten();
        row.map(|r| decode(&r)).transpose()
    }

    /// A user's articles, newest first, one page after `cursor`.
    pub fn list(&self, uid: i64, cursor: Option<&[u8]>, limit: usize) -> Result<Page<Article>> {
        let mut prefix = Vec::with_capacity(13);
        keys::user_prefix(self.opts, uid, keys::ARTICLE_TAG, &mut prefix);
        self.page(prefix, cursor, limit)
    }

    /// A user's articles in one category, newest first, one page after `cursor`.
    pub fn list_category(&self, uid: i64, category: i32, cursor: Option<&[u8]>, limit: usize) -> Result<Page<Article>> {
        let mut prefix = Vec::with_capacity(17);
        keys::category_prefix(self.opts, uid, category, &mut prefix);
        self.page(prefix, cursor, limit)
    }

    fn page(&self, prefix: Vec<u8>, cursor: Option<&[u8]>, limit: usize) -> Result<Page<Article>> {
        let mut scan = newest_first_in(self.opts.order, prefix)
            .columns(vec![Column::qualifier(FAMILY, QUALIFIER)])
            .limit(limit);
        if let Some(c) = cursor {
            scan = scan.after(c);
        }
        let rows = self.store.scan(TABLE, &scan)?;
        let last = rows.last().map(|r| r.key.clone());
        let items = rows.iter().map(decode).collect::<Result<Vec<_>>>()?;
        Ok(Page::new(items, last, limit))
    }
}

fn decode(row: &Row) -> Result<Article> {
    let value = row
        .value(FAMILY, QUALIFIER)
        .ok_or_else(|| corrupt(TABLE, &row.key, "no d: cell"))?;
    Article::deserialize(value).map_err(|reason| corrupt(TABLE, &row.key, reason))
}

/// The article and index row keys of `a` under the key variant `opts`.
pub fn row_keys(opts: KeyOptions, a: &Article) -> Result<(Vec<u8>, Vec<u8>)> {
    let article = ArticleKey {
        uid: a.uid,
        post_at: a.post_at,
        article_id: a.article_id,
    }
    .encode(opts)?;
    let index = IndexKey {
        uid: a.uid,
        category: a.category,
        post_at: a.post_at,
        article_id: a.article_id,
    }
    .encode(opts)?;
    Ok((article, index))
}

/// The article row and its index row, stamped `ts`: one batch, as the seed writes it.
pub fn mutations(opts: KeyOptions, a: &Article, ts: i64) -> Result<[RowMutation; 2]> {
    let (article, index) = row_keys(opts, a)?;
    let value = a.serialize();
    Ok([
        RowMutation::new(article, vec![Mutation::put(FAMILY, QUALIFIER, ts, value.clone())]),
        RowMutation::new(index, vec![Mutation::put(FAMILY, QUALIFIER, ts, value)]),
    ])
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn serialized_bytes_are_as_documented() {
        let a = Article {
            article_id: 42,
            uid: 7,
            user_name: "u".into(),
            title: "t".into(),
            content: "".into(),
            category: 5,
            category_name: "c".into(),
            post_at: 1,
            update_at: 2,
        };
        let mut expected = vec![1];
        expected.extend_from_slice(&42i64.to_be_bytes());
        expected.extend_from_slice(&7i64.to_be_bytes());
        expected.extend_from_slice(&5i32.to_be_bytes());
        expected.extend_from_slice(&1i64.to_be_bytes());
        expected.extend_from_slice(&2i64.to_be_bytes());
        for s in ["u", "t", "", "c"] {
            expected.extend_from_slice(&(s.len() as u32).to_be_bytes());
            expected.extend_from_slice(s.as_bytes());
        }
        assert_eq!(a.serialize(), expected);
        assert!(
            Article::deserialize(&expected[..expected.len() - 1])
                .unwrap_err()
                .contains("categoryName")
        );
        assert!(Article::deserialize(&[2]).unwrap_err().contains("version 2"));
    }

    proptest! {
        #[test]
        fn serialization_round_trips(id in any::<i64>(), uid in any::<i64>(), c in any::<i32>(), p in any::<i64>(), u in any::<i64>(), s in proptest::collection::vec(".{0,20}", 4)) {
            let a = Article { article_id: id, uid, user_name: s[0].clone(), title: s[1].clone(), content: s[2].clone(), category: c, category_name: s[3].clone(), post_at: p, update_at: u };
            prop_assert_eq!(Article::deserialize(&a.serialize()).unwrap(), a);
        }
    }
}
