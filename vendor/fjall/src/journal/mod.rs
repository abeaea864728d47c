// Copyright (c) 2024-present, fjall-rs
// This source code is licensed under both the Apache 2.0 and MIT License
// (found in the LICENSE-* files in the repository)

pub mod batch_reader;
pub mod entry;
pub mod error;
pub mod manager;
pub mod reader;
mod recovery;
pub mod writer;

#[cfg(test)]
mod test;

use self::writer::PersistMode;
use crate::file::fsync_directory;
use batch_reader::JournalBatchReader;
use lsm_tree::CompressionType;
use reader::JournalReader;
use recovery::{recover_journals, RecoveryResult};
use std::{
    path::{Path, PathBuf},
    sync::{Mutex, MutexGuard, RwLock, RwLockReadGuard, RwLockWriteGuard},
};
use writer::Writer;

pub struct Journal {
    writer: Mutex<Writer>,

    /// Held shared by each batch while it applies to memtables after leaving the journal
    /// lock, and exclusively by everything else that takes the journal lock: rotating a
    /// memtable or the journal, ingesting, single writes. So nothing rotates a memtable a
    /// batch is still inserting into, and the seqno map of a journal rotation covers every
    /// batch the journal holds.
    applies: RwLock<()>,
}

/// The journal writer, held with no batch applying to memtables.
pub struct JournalGuard<'a> {
    _applies: RwLockWriteGuard<'a, ()>,
    writer: MutexGuard<'a, Writer>,
}

impl std::ops::Deref for JournalGuard<'_> {
    type Target = Writer;

    fn deref(&self) -> &Writer {
        &self.writer
    }
}

impl std::ops::DerefMut for JournalGuard<'_> {
    fn deref_mut(&mut self) -> &mut Writer {
        &mut self.writer
    }
}

impl std::fmt::Debug for Journal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{}",
            self.path()
                .map(|p| p.display().to_string())
                .unwrap_or_else(|_| String::from("<failed to read path>"))
        )
    }
}

impl Drop for Journal {
    fn drop(&mut self) {
        log::trace!("Dropping journal, trying to flush");

        match self.persist(PersistMode::SyncAll) {
            Ok(()) => {
                log::trace!("Flushed journal successfully");
            }
            Err(e) => {
                log::error!("Flush error on drop: {e:?}");
            }
        }

        #[cfg(feature = "__internal_whitebox")]
        crate::drop::decrement_drop_counter();
    }
}

impl Journal {
    pub fn with_compression(self, comp: CompressionType, threshold: usize) -> Self {
        {
            let mut writer = self.writer.lock().expect("lock is poisoned");
            writer.set_compression(comp, threshold);
        }
        self
    }

    fn from_file<P: AsRef<Path>>(path: P) -> crate::Result<Self> {
        Ok(Self {
            writer: Mutex::new(Writer::from_file(path)?),
            applies: RwLock::default(),
        })
    }

    pub fn create_new<P: AsRef<Path>>(path: P) -> crate::Result<Self> {
        let path = path.as_ref();
        log::trace!("Creating new journal at {}", path.display());

        let folder = path.parent().expect("parent should exist");

        std::fs::create_dir_all(folder).inspect_err(|e| {
            log::error!(
                "Failed to create journal folder at {}: {e:?}",
                path.display(),
            );
        })?;

        let writer = Writer::create_new(path)?;

        // IMPORTANT: fsync folder on Unix
        fsync_directory(folder)?;

        #[cfg(feature = "__internal_whitebox")]
        crate::drop::increment_drop_counter();

        Ok(Self {
            writer: Mutex::new(writer),
            applies: RwLock::default(),
        })
    }

    /// Hands out write access to the journal.
    ///
    /// # Errors
    ///
    /// Returns an error if the journal writer is poisoned.
    /// Waits for batches applying to memtables to finish.
    pub(crate) fn get_writer(&self) -> crate::Result<JournalGuard<'_>> {
        let writer = self.writer.lock().map_err(|_| crate::Error::Poisoned)?;
        let applies = self.applies.write().map_err(|_| crate::Error::Poisoned)?;
        Ok(JournalGuard {
            _applies: applies,
            writer,
        })
    }

    /// Hands out write access to the journal for a batch, which applies to memtables after
    /// releasing it under [`Journal::begin_apply`].
    pub(crate) fn get_batch_writer(&self) -> crate::Result<MutexGuard<'_, Writer>> {
        self.writer.lock().map_err(|_| crate::Error::Poisoned)
    }

    /// Marks a batch as applying to memtables; taken while holding the batch writer, so
    /// that whoever next takes [`Journal::get_writer`] waits for it.
    pub(crate) fn begin_apply(
        &self,
        _writer: &MutexGuard<'_, Writer>,
    ) -> crate::Result<RwLockReadGuard<'_, ()>> {
        self.applies.read().map_err(|_| crate::Error::Poisoned)
    }

    pub fn path(&self) -> crate::Result<PathBuf> {
        Ok(self.get_batch_writer()?.path.clone())
    }

    pub fn get_reader(&self) -> crate::Result<JournalBatchReader> {
        let raw_reader = JournalReader::new(self.path()?)?;
        Ok(JournalBatchReader::new(raw_reader))
    }

    /// Persists the journal.
    pub fn persist(&self, mode: PersistMode) -> crate::Result<()> {
        let mut journal_writer = self.get_batch_writer()?;
        journal_writer.persist(mode).map_err(Into::into)
    }

    pub fn recover<P: AsRef<Path>>(
        path: P,
        compression: CompressionType,
        compression_threshold: usize,
    ) -> crate::Result<RecoveryResult> {
        recover_journals(path, compression, compression_threshold)
    }
}
