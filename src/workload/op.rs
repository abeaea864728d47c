//! The operations a run's mix can weigh, by the names workload files use.

use serde::{Deserialize, Serialize};

/// One kind of operation of the run phase: a seed design's DAO call on existing data, or
/// an operation a workload's own design declares.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Op {
    /// Home timeline, first page (push, celebrity posts merged at read).
    Timeline,
    /// Home timeline, a later page.
    TimelineLater,
    /// Home timeline, first page, pulled: every followee's newest posts merged at read time.
    TimelinePull,
    /// A user's own posts.
    OwnPosts,
    /// An action page by offset, at a geometric page depth.
    ActionsOffset,
    /// An action page by cursor, at a geometric page depth.
    ActionsCursor,
    /// A user's actions in a time range.
    ActionsRange,
    /// A user's series points in a time range.
    SeriesRange,
    /// A page of a user's followers.
    Followers,
    /// A page of the users a user follows.
    Followees,
    /// A user's articles in one category.
    Category,
    /// Publish a post, with fan-out.
    Publish,
    /// Record an action.
    ActionWrite,
    /// Follow a user.
    Follow,
    /// Unfollow a user.
    Unfollow,
    /// Post an article.
    ArticlePost,
    /// Update an article.
    ArticleUpdate,
    /// Delete an article.
    ArticleDelete,
    /// An operation of the workload's own design.
    Own(Own),
}

/// An operation of a workload's own design: its place among the design's operations, its
/// name (interned: a run's few names live as long as the process), and whether it writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Own {
    /// Its place in the design's operations.
    pub index: u8,
    /// Its name.
    pub name: &'static str,
    /// Whether it writes.
    pub writes: bool,
}

impl Own {
    /// The design's operation `index`, named `name`.
    pub fn new(index: usize, name: &str, writes: bool) -> Own {
        Own {
            index: u8::try_from(index).expect("a design's operations are counted in a byte"),
            name: crate::design::intern(name),
            writes,
        }
    }
}

impl Serialize for Op {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.name())
    }
}

/// A seed design's operation by its name; a design's own operations are named only with
/// the design at hand (`validate`).
impl<'de> Deserialize<'de> for Op {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let name = String::deserialize(d)?;
        Op::from_name(&name).ok_or_else(|| serde::de::Error::custom(format!("unknown operation {name:?}")))
    }
}

/// The data an operation needs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Needs {
    /// `[data.follows]` and `[data.posts]`.
    Timeline,
    /// `[data.follows]`.
    Follows,
    /// `[data.posts]`.
    Posts,
    /// `[data.actions]`.
    Actions,
    /// `[data.articles]`.
    Articles,
    /// `[data.series]`.
    Series,
}

impl Op {
    /// Every operation, in report order.
    pub const ALL: [Op; 18] = [
        Op::Timeline,
        Op::TimelineLater,
        Op::TimelinePull,
        Op::OwnPosts,
        Op::ActionsOffset,
        Op::ActionsCursor,
        Op::ActionsRange,
        Op::SeriesRange,
        Op::Followers,
        Op::Followees,
        Op::Category,
        Op::Publish,
        Op::ActionWrite,
        Op::Follow,
        Op::Unfollow,
        Op::ArticlePost,
        Op::ArticleUpdate,
        Op::ArticleDelete,
    ];

    /// The name in workload files and reports.
    pub fn name(self) -> &'static str {
        match self {
            Op::Timeline => "timeline",
            Op::TimelineLater => "timeline_later",
            Op::TimelinePull => "timeline_pull",
            Op::OwnPosts => "own_posts",
            Op::ActionsOffset => "actions_offset",
            Op::ActionsCursor => "actions_cursor",
            Op::ActionsRange => "actions_range",
            Op::SeriesRange => "series_range",
            Op::Followers => "followers",
            Op::Followees => "followees",
            Op::Category => "category",
            Op::Publish => "publish",
            Op::ActionWrite => "action_write",
            Op::Follow => "follow",
            Op::Unfollow => "unfollow",
            Op::ArticlePost => "article_post",
            Op::ArticleUpdate => "article_update",
            Op::ArticleDelete => "article_delete",
            Op::Own(o) => o.name,
        }
    }

    /// Its place in [`Op::ALL`]; none for a design's own.
    pub fn seed_index(self) -> Option<usize> {
        Some(match self {
            Op::Timeline => 0,
            Op::TimelineLater => 1,
            Op::TimelinePull => 2,
            Op::OwnPosts => 3,
            Op::ActionsOffset => 4,
            Op::ActionsCursor => 5,
            Op::ActionsRange => 6,
            Op::SeriesRange => 7,
            Op::Followers => 8,
            Op::Followees => 9,
            Op::Category => 10,
            Op::Publish => 11,
            Op::ActionWrite => 12,
            Op::Follow => 13,
            Op::Unfollow => 14,
            Op::ArticlePost => 15,
            Op::ArticleUpdate => 16,
            Op::ArticleDelete => 17,
            Op::Own(_) => return None,
        })
    }

    /// The operation of a name.
    pub fn from_name(name: &str) -> Option<Op> {
        Op::ALL.into_iter().find(|op| op.name() == name)
    }

    /// The data section the operation works on; none for a design's own, whose entity's
    /// section the design's check asks for.
    pub fn needs(self) -> Option<Needs> {
        Some(match self {
            Op::Timeline | Op::TimelineLater | Op::TimelinePull => Needs::Timeline,
            Op::Followers | Op::Followees | Op::Follow | Op::Unfollow => Needs::Follows,
            Op::OwnPosts | Op::Publish => Needs::Posts,
            Op::ActionsOffset | Op::ActionsCursor | Op::ActionsRange | Op::ActionWrite => Needs::Actions,
            Op::Category | Op::ArticlePost | Op::ArticleUpdate | Op::ArticleDelete => Needs::Articles,
            Op::SeriesRange => Needs::Series,
            Op::Own(_) => return None,
        })
    }

    /// Whether the operation writes.
    pub fn writes(self) -> bool {
        matches!(
            self,
            Op::Publish
                | Op::ActionWrite
                | Op::Follow
                | Op::Unfollow
                | Op::ArticlePost
                | Op::ArticleUpdate
                | Op::ArticleDelete
                | Op::Own(Own { writes: true, .. })
        )
    }
}

impl Needs {
    /// The section's name in workload files.
    pub fn section(self) -> &'static str {
        match self {
            Needs::Timeline => "data.follows] and [data.posts",
            Needs::Follows => "data.follows",
            Needs::Posts => "data.posts",
            Needs::Actions => "data.actions",
            Needs::Articles => "data.articles",
            Needs::Series => "data.series",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for (i, op) in Op::ALL.into_iter().enumerate() {
            assert_eq!(Op::from_name(op.name()), Some(op));
            assert_eq!(op.seed_index(), Some(i));
        }
        assert_eq!(Op::from_name("timelines"), None);
    }
}
