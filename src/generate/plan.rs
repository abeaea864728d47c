//! What the per-user generation cannot know on its own: every user's follower count, where
//! the follower cap cuts, and so who is a celebrity. Counting takes one parallel pass over
//! every user's follows and 4 bytes per user; when some user draws more followers than the
//! cap, one more pass in id order finds the id at which its cap is reached.
//!
//! A plan can be kept in a file ([`Plan::write`], [`Plan::read`]) so that a resumed load
//! reads it instead of counting again.

use super::Generator;
use rayon::prelude::*;
use std::collections::{BTreeSet, HashMap};
use std::io::{Read, Write};
use std::sync::atomic::{AtomicU32, Ordering};

/// The first bytes of a plan file; the number is its format.
const MAGIC: &[u8; 8] = b"TRPLAN1\n";

/// The users with more followers than `threshold`.
fn celebrities(followers: &[u32], threshold: Option<u64>) -> BTreeSet<u64> {
    match threshold {
        Some(t) => (1..followers.len() as u64)
            .filter(|&u| u64::from(followers[u as usize]) > t)
            .collect(),
        None => BTreeSet::new(),
    }
}

/// A reader that sums what it reads.
struct Checked<'a, R> {
    input: &'a mut R,
    crc: u32,
}

impl<R: Read> Checked<'_, R> {
    fn take(&mut self, buf: &mut [u8]) -> Option<()> {
        self.input.read_exact(buf).ok()?;
        self.crc = crc32c::crc32c_append(self.crc, buf);
        Some(())
    }

    fn u64(&mut self) -> Option<u64> {
        let mut b = [0u8; 8];
        self.take(&mut b)?;
        Some(u64::from_le_bytes(b))
    }
}

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
        let celebrities = celebrities(&followers, w.microblog.celebrity_threshold);
        Plan {
            followers,
            cutoffs,
            celebrities,
        }
    }

    /// Writes the plan of the data whose digest is `digest` to `out`, checksummed.
    pub fn write(&self, digest: &str, out: &mut impl Write) -> std::io::Result<()> {
        let mut crc = 0u32;
        let mut put = |out: &mut dyn Write, bytes: &[u8]| {
            crc = crc32c::crc32c_append(crc, bytes);
            out.write_all(bytes)
        };
        put(out, MAGIC)?;
        put(out, &(digest.len() as u64).to_le_bytes())?;
        put(out, digest.as_bytes())?;
        put(out, &(self.followers.len() as u64).to_le_bytes())?;
        let mut cutoffs: Vec<(u64, u64)> = self.cutoffs.iter().map(|(&k, &v)| (k, v)).collect();
        cutoffs.sort_unstable();
        put(out, &(cutoffs.len() as u64).to_le_bytes())?;
        for (uid, at) in cutoffs {
            put(out, &uid.to_le_bytes())?;
            put(out, &at.to_le_bytes())?;
        }
        let mut chunk = Vec::with_capacity(1 << 16);
        for part in self.followers.chunks(1 << 14) {
            chunk.clear();
            chunk.extend(part.iter().flat_map(|n| n.to_le_bytes()));
            put(out, &chunk)?;
        }
        out.write_all(&crc.to_le_bytes())
    }

    /// The plan [`Plan::write`] wrote to `input` for the data of `g`'s workload, or `None`
    /// when it is of other data (another digest or user count), cut short or damaged.
    pub fn read(g: &Generator, input: &mut impl Read) -> Option<Plan> {
        let w = g.workload();
        let mut r = Checked { input, crc: 0 };
        let mut magic = [0u8; 8];
        r.take(&mut magic)?;
        if &magic != MAGIC {
            return None;
        }
        let digest = w.data_digest();
        let len = r.u64()?;
        if len != digest.len() as u64 {
            return None;
        }
        let mut was = vec![0u8; digest.len()];
        r.take(&mut was)?;
        let len = r.u64()?;
        if was != digest.as_bytes() || len != w.data.users + 1 {
            return None;
        }
        let n = r.u64()?;
        if n > w.data.users {
            return None;
        }
        let mut cutoffs = HashMap::new();
        for _ in 0..n {
            let (uid, at) = (r.u64()?, r.u64()?);
            cutoffs.insert(uid, at);
        }
        let mut followers = Vec::with_capacity(len as usize);
        let mut chunk = vec![0u8; 1 << 16];
        while (followers.len() as u64) < len {
            let want = ((len - followers.len() as u64) as usize * 4).min(chunk.len());
            r.take(&mut chunk[..want])?;
            followers.extend(
                chunk[..want]
                    .chunks_exact(4)
                    .map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]])),
            );
        }
        let sum = r.crc;
        let mut tail = [0u8; 4];
        r.input.read_exact(&mut tail).ok()?;
        if u32::from_le_bytes(tail) != sum || r.input.read(&mut [0u8; 1]).ok()? != 0 {
            return None;
        }
        let celebrities = celebrities(&followers, w.microblog.celebrity_threshold);
        Some(Plan {
            followers,
            cutoffs,
            celebrities,
        })
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
