//! What the per-user generation cannot know on its own: every user's follower count, where
//! the follower cap cuts, and so who is a celebrity. Counting takes one parallel pass over
//! every user's follows and 4 bytes per user; when some user draws more followers than the
//! cap, one more pass in id order finds the id at which its cap is reached.

use super::Generator;
use rayon::prelude::*;
use std::collections::{BTreeSet, HashMap};
use std::sync::atomic::{AtomicU32, Ordering};

/// Follower counts, follower-cap cutoffs and the celebrity set of a workload.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Plan {
    followers: Vec<u32>,
    cutoffs: HashMap<u64, u64>,
    celebrities: BTreeSet<u64>,
}

impl Plan {
    /// A plan without follows.
    pub fn empty() -> Self {
        Plan::default()
    }

    /// Counts followers on the current rayon pool. `g`'s own plan is not consulted.
    pub(super) fn build(g: &Generator) -> Self {
        let w = g.workload();
        let Some(follows) = &w.data.follows else {
            return Plan::empty();
        };
        let users = w.data.users;
        let counts: Vec<AtomicU32> = (0..=users).map(|_| AtomicU32::new(0)).collect();
        (0..g.blocks()).into_par_iter().for_each_init(
            || (Vec::new(), super::Seen::default()),
            |(list, seen), b| {
                for uid in g.block_users(b) {
                    g.followees_drawn(uid, list, seen);
                    for f in list.iter() {
                        counts[f.target as usize].fetch_add(1, Ordering::Relaxed);
                    }
                }
            },
        );
        let mut followers: Vec<u32> = counts.into_iter().map(AtomicU32::into_inner).collect();
        let cap = follows.max_followers.min(u64::from(u32::MAX)) as u32;
        let over: HashMap<u64, u32> = (1..=users)
            .filter(|&u| followers[u as usize] > cap)
            .map(|u| (u, 0))
            .collect();
        let mut cutoffs = HashMap::new();
        if !over.is_empty() {
            let mut seen_count = over;
            let (mut list, mut seen) = (Vec::new(), super::Seen::default());
            for uid in 1..=users {
                g.followees_drawn(uid, &mut list, &mut seen);
                for f in &list {
                    if let Some(n) = seen_count.get_mut(&f.target) {
                        *n += 1;
                        if *n == cap {
                            cutoffs.insert(f.target, uid);
                        }
                    }
                }
                if cutoffs.len() == seen_count.len() {
                    break;
                }
            }
            for &v in cutoffs.keys() {
                followers[v as usize] = cap;
            }
        }
        let celebrities = match w.microblog.celebrity_threshold {
            Some(t) => (1..=users).filter(|&u| u64::from(followers[u as usize]) > t).collect(),
            None => BTreeSet::new(),
        };
        Plan {
            followers,
            cutoffs,
            celebrities,
        }
    }

    /// `uid`'s follower count.
    pub fn followers(&self, uid: u64) -> u64 {
        self.followers.get(uid as usize).copied().map_or(0, u64::from)
    }

    /// The highest id whose follow of `uid` counts, when `uid` drew more followers than the cap.
    pub fn cutoff(&self, uid: u64) -> Option<u64> {
        self.cutoffs.get(&uid).copied()
    }

    /// Whether any user's followers are cut at the cap.
    pub fn has_cutoffs(&self) -> bool {
        !self.cutoffs.is_empty()
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
