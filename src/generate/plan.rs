//! What the per-user generation cannot know on its own: every user's follower count, and so
//! who is a celebrity. One pass over every user's followees, 4 bytes per user.

use super::Generator;
use rayon::prelude::*;
use std::collections::{BTreeSet, HashSet};
use std::sync::atomic::{AtomicU32, Ordering};

/// Follower counts and the celebrity set of a workload.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Plan {
    followers: Vec<u32>,
    celebrities: BTreeSet<u64>,
}

impl Plan {
    /// A plan without follower counts: nobody is a celebrity.
    pub fn empty() -> Self {
        Plan::default()
    }

    /// Counts every user's followers, in parallel on the current rayon pool.
    pub fn build(g: &Generator) -> Self {
        let users = g.workload().data.users;
        if g.workload().data.follows.is_none() {
            return Plan::empty();
        }
        let counts: Vec<AtomicU32> = (0..=users).map(|_| AtomicU32::new(0)).collect();
        (0..g.blocks()).into_par_iter().for_each_init(
            || (Vec::new(), HashSet::new()),
            |(list, seen), b| {
                for uid in g.block_users(b) {
                    g.followees(uid, list, seen);
                    for f in list.iter() {
                        counts[f.target as usize].fetch_add(1, Ordering::Relaxed);
                    }
                }
            },
        );
        let followers: Vec<u32> = counts.into_iter().map(AtomicU32::into_inner).collect();
        let celebrities = match g.workload().microblog.celebrity_threshold {
            Some(t) => (1..=users).filter(|&u| u64::from(followers[u as usize]) > t).collect(),
            None => BTreeSet::new(),
        };
        Plan { followers, celebrities }
    }

    /// `uid`'s follower count; 0 in an empty plan.
    pub fn followers(&self, uid: u64) -> u64 {
        self.followers.get(uid as usize).copied().map_or(0, u64::from)
    }

    /// Whether `uid` is not fanned out on write.
    pub fn is_celebrity(&self, uid: u64) -> bool {
        self.celebrities.contains(&uid)
    }

    /// The celebrity set.
    pub fn celebrities(&self) -> &BTreeSet<u64> {
        &self.celebrities
    }
}
