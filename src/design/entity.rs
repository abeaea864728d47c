//! The generator's entities as a design names them: what each one is, and its fields, in the
//! order the emitter hands their values over.

/// Whether a field holds an integer or bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FieldKind {
    /// An integer (ids, counts, epoch milliseconds).
    Int,
    /// Text or bytes.
    Bytes,
}

/// A kind of thing the generator makes, each yielding rows in the tables that name it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Entity {
    /// A user's profile: one per user.
    User,
    /// A follow edge: `uid` follows `followee` at `at`.
    Follow,
    /// A user above the workload's follower threshold, whose posts are read at read time.
    Celebrity,
    /// One of a followee's newest posts delivered to a reader (the fan-out on write): per
    /// follow of a user who is not a celebrity, the followee's `inbox_versions` newest posts.
    Delivery,
    /// A post.
    Post,
    /// An action on a post.
    Action,
    /// A blog article.
    Article,
    /// A point of a user's time series.
    Point,
}

use FieldKind::{Bytes, Int};

impl Entity {
    /// Every entity, in the order a user's rows are made.
    pub const ALL: [Entity; 8] = [
        Entity::User,
        Entity::Follow,
        Entity::Celebrity,
        Entity::Delivery,
        Entity::Post,
        Entity::Action,
        Entity::Article,
        Entity::Point,
    ];

    /// Its name in a design.
    pub fn name(self) -> &'static str {
        match self {
            Entity::User => "user",
            Entity::Follow => "follow",
            Entity::Celebrity => "celebrity",
            Entity::Delivery => "delivery",
            Entity::Post => "post",
            Entity::Action => "action",
            Entity::Article => "article",
            Entity::Point => "point",
        }
    }

    /// The entity a design's `entity = "..."` names.
    pub fn parse(name: &str) -> Option<Entity> {
        Entity::ALL.into_iter().find(|e| e.name() == name)
    }

    /// Every entity's name, for an error.
    pub fn names() -> String {
        Entity::ALL.map(Entity::name).join(", ")
    }

    /// Its fields, in the order their values are given.
    pub fn fields(self) -> &'static [(&'static str, FieldKind)] {
        match self {
            Entity::User => &[("uid", Int), ("name", Bytes), ("sex", Bytes), ("at", Int)],
            Entity::Follow => &[("uid", Int), ("followee", Int), ("at", Int)],
            Entity::Celebrity => &[("uid", Int), ("followers", Int), ("at", Int)],
            Entity::Delivery => &[("reader", Int), ("uid", Int), ("stamp", Int)],
            Entity::Post => &[("uid", Int), ("stamp", Int), ("content", Bytes)],
            Entity::Action => &[("userid", Int), ("stamp", Int), ("actionid", Int), ("name", Bytes)],
            Entity::Article => &[
                ("article_id", Int),
                ("uid", Int),
                ("category", Int),
                ("post_at", Int),
                ("update_at", Int),
                ("user_name", Bytes),
                ("title", Bytes),
                ("content", Bytes),
                ("category_name", Bytes),
            ],
            Entity::Point => &[("userid", Int), ("time", Int), ("nanos", Int), ("value", Bytes)],
        }
    }

    /// The fields every instance of one user shares: a key made of these alone names one
    /// row per user, which gathers the cells of all of them (a reader's inbox).
    pub fn per_user(self) -> &'static [&'static str] {
        match self {
            Entity::User | Entity::Celebrity => &["uid", "name", "sex", "at", "followers"],
            Entity::Follow | Entity::Post => &["uid"],
            Entity::Delivery => &["reader"],
            Entity::Action | Entity::Point => &["userid"],
            Entity::Article => &["uid", "user_name"],
        }
    }

    /// Its fields that hold a user's id, in some role (a follow's follower and followee).
    pub fn user_ids(self) -> &'static [&'static str] {
        match self {
            Entity::User | Entity::Celebrity | Entity::Post | Entity::Article => &["uid"],
            Entity::Follow => &["uid", "followee"],
            Entity::Delivery => &["reader", "uid"],
            Entity::Action | Entity::Point => &["userid"],
        }
    }

    /// Its fields that hold a time (epoch milliseconds): what a new instance, written by
    /// `run`, takes the time of the write in.
    pub fn times(self) -> &'static [&'static str] {
        match self {
            Entity::User | Entity::Follow | Entity::Celebrity => &["at"],
            Entity::Delivery | Entity::Post | Entity::Action => &["stamp"],
            Entity::Article => &["post_at", "update_at"],
            Entity::Point => &["time"],
        }
    }

    /// The time fields an update of an instance sets to now: an article keeps the time it
    /// was posted; anything else is made again at a new time.
    pub fn updated(self) -> &'static [&'static str] {
        match self {
            Entity::Article => &["update_at"],
            e => e.times(),
        }
    }

    /// Ids for the `n`th new instance of the run, in place of `values`' own (as the seeds'
    /// writes make them, above every generated one): an article's, past the user's
    /// generated articles (indexes below 500,000); an action's, above every generated one
    /// (below a million). Other entities are told apart by their user and time.
    pub fn fresh_ids(self, values: &[super::key::Owned], n: u64) -> Vec<(usize, i128)> {
        use super::key::Owned;
        match self {
            Entity::Article => {
                let uid = match values[1] {
                    Owned::Int(u) => u,
                    Owned::Bytes(_) => 0,
                };
                vec![(0, uid * 1_000_000 + 500_000 + i128::from(n % 500_000))]
            }
            Entity::Action => vec![(2, 1_000_000_000 + i128::from(n % 1_000_000_000))],
            _ => Vec::new(),
        }
    }

    /// The position of field `name`.
    pub fn field(self, name: &str) -> Option<usize> {
        self.fields().iter().position(|(n, _)| *n == name)
    }

    /// Its fields' names, for an error.
    pub fn field_names(self) -> String {
        self.fields().iter().map(|(n, _)| *n).collect::<Vec<_>>().join(", ")
    }
}
