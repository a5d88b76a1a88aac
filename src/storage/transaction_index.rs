//! A segment's aborted transactions (Kafka's `TransactionIndex`, the `.txnindex` file): one
//! entry per transaction aborted by a marker in the segment, in marker order.
//!
//! Format: 34-byte entries `{version: i16 = 0, producer_id: i64, first_offset: i64,
//! last_offset: i64, last_stable_offset: i64}`, big-endian: the producer, the transaction's
//! first offset and its ABORT marker's offset, and the partition's last stable offset when the
//! marker was written. Invariant: last offsets strictly increase.
//!
//! The file exists only once a transaction was aborted in the segment (Kafka creates it
//! lazily too), so a segment of a topic without aborts costs no descriptor and no file. The
//! entries are kept in memory as well (an abort is rare and an entry small), which is what a
//! read_committed fetch reads; the file is opened only to append, truncate or flush. A torn
//! tail (a crash mid-append) is cut back to whole entries on open.

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};

use super::StorageError;

/// The size of one entry.
pub const ABORTED_TXN_SIZE: usize = 34;

/// One aborted transaction (Kafka's `AbortedTxn`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AbortedTxn {
    pub producer_id: i64,
    pub first_offset: i64,
    pub last_offset: i64,
    pub last_stable_offset: i64,
}

impl AbortedTxn {
    fn encode(&self) -> [u8; ABORTED_TXN_SIZE] {
        let mut b = [0u8; ABORTED_TXN_SIZE];
        b[2..10].copy_from_slice(&self.producer_id.to_be_bytes());
        b[10..18].copy_from_slice(&self.first_offset.to_be_bytes());
        b[18..26].copy_from_slice(&self.last_offset.to_be_bytes());
        b[26..34].copy_from_slice(&self.last_stable_offset.to_be_bytes());
        b
    }

    fn decode(b: &[u8]) -> Option<(i16, AbortedTxn)> {
        let i64_at = |at: usize| Some(i64::from_be_bytes(b.get(at..at + 8)?.try_into().ok()?));
        let version = i16::from_be_bytes(b.get(0..2)?.try_into().ok()?);
        Some((
            version,
            AbortedTxn {
                producer_id: i64_at(2)?,
                first_offset: i64_at(10)?,
                last_offset: i64_at(18)?,
                last_stable_offset: i64_at(26)?,
            },
        ))
    }
}

/// What a search of one index found (Kafka's `TxnIndexSearchResult`).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct TxnIndexSearchResult {
    pub aborted: Vec<AbortedTxn>,
    /// An entry's last stable offset reached the upper bound: no later segment can hold a
    /// transaction that matters.
    pub complete: bool,
}

/// The index; see the module doc.
#[derive(Debug)]
pub struct TransactionIndex {
    path: PathBuf,
    entries: Vec<AbortedTxn>,
}

impl TransactionIndex {
    /// The index at `path`, read if the file exists; a torn tail is cut off. Entries of a
    /// version newer than 0 are refused, as Kafka refuses them.
    pub fn open(path: &Path) -> Result<Self, StorageError> {
        let bytes = match std::fs::read(path) {
            Ok(bytes) => bytes,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Vec::new(),
            Err(e) => return Err(StorageError::io(path, e)),
        };
        let mut entries = Vec::with_capacity(bytes.len() / ABORTED_TXN_SIZE);
        for chunk in bytes.chunks_exact(ABORTED_TXN_SIZE) {
            let Some((version, txn)) = AbortedTxn::decode(chunk) else {
                break;
            };
            if version != 0 {
                return Err(StorageError::MalformedFile {
                    path: path.to_path_buf(),
                    reason: format!("transaction index entry of version {version}"),
                });
            }
            entries.push(txn);
        }
        let index = TransactionIndex {
            path: path.to_path_buf(),
            entries,
        };
        if bytes.len() % ABORTED_TXN_SIZE != 0 {
            index.rewrite()?;
        }
        Ok(index)
    }

    /// Points the index at `parent_dir/<same name>` after its directory was renamed.
    pub fn update_parent_dir(&mut self, parent_dir: &Path) {
        if let Some(name) = self.path.file_name() {
            self.path = parent_dir.join(name);
        }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    pub fn entries(&self) -> &[AbortedTxn] {
        &self.entries
    }

    /// Appends an aborted transaction; its last offset must follow the previous entry's.
    pub fn append(&mut self, txn: AbortedTxn) -> Result<(), StorageError> {
        if let Some(last) = self.entries.last()
            && last.last_offset >= txn.last_offset
        {
            return Err(StorageError::InvalidArgument {
                reason: format!(
                    "the last offset of appended transactions must increase sequentially, but {} is not greater than the current last offset {} of index {}",
                    txn.last_offset,
                    last.last_offset,
                    self.path.display()
                ),
            });
        }
        let mut file = OpenOptions::new()
            .create(true)
            .append(true)
            .open(&self.path)
            .map_err(|e| StorageError::io(&self.path, e))?;
        file.write_all(&txn.encode())
            .map_err(|e| StorageError::io(&self.path, e))?;
        self.entries.push(txn);
        Ok(())
    }

    /// Drops the entries whose marker is at or above `offset` (Kafka's `truncateTo`).
    pub fn truncate_to(&mut self, offset: i64) -> Result<(), StorageError> {
        let keep = self.entries.partition_point(|t| t.last_offset < offset);
        if keep == self.entries.len() {
            return Ok(());
        }
        self.entries.truncate(keep);
        self.rewrite()
    }

    /// Forgets every entry and removes the file (recovery rebuilds it).
    pub fn reset(&mut self) -> Result<(), StorageError> {
        self.entries.clear();
        delete_if_exists(&self.path)
    }

    /// Fsyncs the file, if there is one.
    pub fn flush(&self) -> Result<(), StorageError> {
        if self.entries.is_empty() {
            return Ok(());
        }
        match File::open(&self.path) {
            Ok(f) => f.sync_all().map_err(|e| StorageError::io(&self.path, e)),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
            Err(e) => Err(StorageError::io(&self.path, e)),
        }
    }

    /// Renames the file (if there is one) to `to`.
    pub fn rename_to(&mut self, to: PathBuf) -> Result<(), StorageError> {
        match std::fs::rename(&self.path, &to) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(StorageError::io(&self.path, e)),
        }
        self.path = to;
        Ok(())
    }

    /// Kafka's `collectAbortedTxns`: the transactions that end at or after `fetch_offset` and
    /// begin before `upper_bound_offset`.
    pub fn collect_aborted_txns(
        &self,
        fetch_offset: i64,
        upper_bound_offset: i64,
    ) -> TxnIndexSearchResult {
        let mut result = TxnIndexSearchResult::default();
        for txn in &self.entries {
            if txn.last_offset >= fetch_offset && txn.first_offset < upper_bound_offset {
                result.aborted.push(*txn);
            }
            if txn.last_stable_offset >= upper_bound_offset {
                result.complete = true;
                return result;
            }
        }
        result
    }

    /// Writes the entries in memory over the file (removing it when there are none).
    fn rewrite(&self) -> Result<(), StorageError> {
        if self.entries.is_empty() {
            return delete_if_exists(&self.path);
        }
        let bytes: Vec<u8> = self.entries.iter().flat_map(|t| t.encode()).collect();
        std::fs::write(&self.path, bytes).map_err(|e| StorageError::io(&self.path, e))
    }
}

fn delete_if_exists(path: &Path) -> Result<(), StorageError> {
    match std::fs::remove_file(path) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(StorageError::io(path, e)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn txn(first: i64, last: i64, lso: i64) -> AbortedTxn {
        AbortedTxn {
            producer_id: 7,
            first_offset: first,
            last_offset: last,
            last_stable_offset: lso,
        }
    }

    #[test]
    fn entries_are_kafkas_34_bytes_and_the_file_appears_with_the_first() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("00000000000000000000.txnindex");
        let mut index = TransactionIndex::open(&path).unwrap();
        assert!(!path.exists());
        index.append(txn(3, 10, 3)).unwrap();
        let bytes = std::fs::read(&path).unwrap();
        let mut expected = vec![0, 0];
        for v in [7i64, 3, 10, 3] {
            expected.extend_from_slice(&v.to_be_bytes());
        }
        assert_eq!(bytes, expected);
        assert!(
            index.append(txn(11, 10, 11)).is_err(),
            "last offsets increase"
        );
        index.append(txn(12, 20, 12)).unwrap();
        let reopened = TransactionIndex::open(&path).unwrap();
        assert_eq!(reopened.entries(), &[txn(3, 10, 3), txn(12, 20, 12)]);
    }

    #[test]
    fn a_torn_tail_is_cut_and_truncation_drops_later_markers() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("x.txnindex");
        let mut index = TransactionIndex::open(&path).unwrap();
        index.append(txn(0, 5, 0)).unwrap();
        index.append(txn(6, 9, 6)).unwrap();
        let mut bytes = std::fs::read(&path).unwrap();
        bytes.extend_from_slice(&[0, 0, 1]);
        std::fs::write(&path, &bytes).unwrap();
        let mut index = TransactionIndex::open(&path).unwrap();
        assert_eq!(index.entries().len(), 2);
        assert_eq!(std::fs::metadata(&path).unwrap().len(), 68);
        index.truncate_to(9).unwrap();
        assert_eq!(index.entries(), &[txn(0, 5, 0)]);
        index.truncate_to(5).unwrap();
        assert!(index.entries().is_empty());
        assert!(!path.exists());
        // A newer version is refused.
        let mut newer = txn(0, 1, 0).encode();
        newer[1] = 1;
        std::fs::write(&path, newer).unwrap();
        assert!(TransactionIndex::open(&path).is_err());
    }

    #[test]
    fn a_search_returns_overlapping_transactions_and_stops_at_the_bound() {
        let dir = tempfile::tempdir().unwrap();
        let mut index = TransactionIndex::open(&dir.path().join("x.txnindex")).unwrap();
        index.append(txn(0, 5, 0)).unwrap();
        index.append(txn(2, 8, 2)).unwrap();
        index.append(txn(9, 12, 9)).unwrap();
        index.append(txn(20, 25, 20)).unwrap();
        let found = index.collect_aborted_txns(6, 10);
        assert_eq!(found.aborted, vec![txn(2, 8, 2), txn(9, 12, 9)]);
        assert!(
            found.complete,
            "an entry's last stable offset passed the bound"
        );
        let found = index.collect_aborted_txns(0, 100);
        assert_eq!(found.aborted.len(), 4);
        assert!(!found.complete);
    }
}
