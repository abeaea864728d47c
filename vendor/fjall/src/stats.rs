// Copyright (c) 2024-present, fjall-rs
// This source code is licensed under both the Apache 2.0 and MIT License
// (found in the LICENSE-* files in the repository)

use std::collections::VecDeque;
use std::sync::atomic::{AtomicU64, AtomicUsize};
use std::sync::Mutex;
use std::time::SystemTime;

/// The most finished flushes and compactions kept until taken; older ones are dropped first.
const ACTIVITY_KEPT: usize = 4096;

/// What a flush or compaction did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ActivityKind {
    /// A memtable written out as a table.
    Flush {
        /// Bytes of the memtable written.
        bytes: u64,
    },
    /// Tables rewritten into others.
    Compaction {
        /// Tables it took.
        tables_in: usize,
        /// Tables it wrote (a table a flush added meanwhile counts here too).
        tables_out: usize,
        /// Bytes of the tables it took.
        bytes_in: u64,
        /// Whether it took every table of the keyspace.
        whole: bool,
    },
}

/// A finished flush or compaction of a keyspace.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Activity {
    /// The keyspace.
    pub keyspace: String,
    /// When it started.
    pub started: SystemTime,
    /// When it ended.
    pub ended: SystemTime,
    /// What it did.
    pub kind: ActivityKind,
}

/// Ephemeral, runtime stats
#[derive(Default)]
pub struct Stats {
    /// Active compaction conter
    pub(crate) active_compaction_count: AtomicUsize,

    /// Time spent in compactions (in µs)
    pub(crate) time_compacting: AtomicU64,

    /// Number of completed compactions
    pub(crate) compactions_completed: AtomicUsize,

    /// Flushes and compactions finished and not yet taken
    pub(crate) activity: Mutex<VecDeque<Activity>>,
}

impl Stats {
    pub(crate) fn record(&self, activity: Activity) {
        let mut log = self
            .activity
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if log.len() == ACTIVITY_KEPT {
            log.pop_front();
        }
        log.push_back(activity);
    }

    pub(crate) fn take_activity(&self) -> Vec<Activity> {
        self.activity
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .drain(..)
            .collect()
    }
}
