//! Opening a partition directory (Kafka's `LogLoader.load`): leftover temporary files removed,
//! segments loaded in offset order, broken or missing indexes rebuilt, and, after an unclean
//! shutdown, every segment from the recovery point on re-validated batch by batch with the log
//! cut at the first invalid byte. Last, the producer state is rebuilt from the newest snapshot
//! and the batches after it (`producer_state::rebuild`).
//!
//! Files of an interrupted swap of cleaned segments are resolved first, as Kafka does: the swap
//! is either completed or undone ([`complete_interrupted_swaps`]).
//!
//! Guarantee: every whole, valid batch before the first damaged byte survives; nothing after
//! the damage is kept (a later segment cannot be trusted once an earlier one was torn).

use std::path::{Path, PathBuf};

use super::StorageError;
use super::file_names::{
    self, CLEANED_FILE_SUFFIX, DELETED_FILE_SUFFIX, INDEX_FILE_SUFFIX, LOG_FILE_SUFFIX,
    SWAP_FILE_SUFFIX, TIME_INDEX_FILE_SUFFIX, TXN_INDEX_FILE_SUFFIX,
};
use super::file_records::FileRecords;
use super::leader_epoch_cache::LeaderEpochFileCache;
use super::log_config::LogConfig;
use super::log_segment::{LogSegment, delete_if_exists};
use super::log_segments::LogSegments;
use super::producer_state::ProducerStateManager;
use super::producer_state::rebuild::{rebuild_producer_state, replay_segment};

/// What [`load`] needs.
#[derive(Debug)]
pub(crate) struct LoadParams<'a> {
    pub dir: &'a Path,
    pub config: &'a LogConfig,
    /// From `recovery-point-offset-checkpoint`: everything below was fsynced.
    pub recovery_point: i64,
    /// From `log-start-offset-checkpoint` (or 0).
    pub log_start_offset: i64,
    /// Whether the log dir had its clean-shutdown marker.
    pub had_clean_shutdown: bool,
    pub leader_epoch_cache: &'a mut LeaderEpochFileCache,
    /// Empty on entry; loaded from the snapshots and the log on return.
    pub producer_state: &'a mut ProducerStateManager,
    pub now_ms: i64,
}

/// A loaded partition: at least one segment, the last one active with full-size indexes.
#[derive(Debug)]
pub(crate) struct LoadedLog {
    pub segments: LogSegments,
    pub log_start_offset: i64,
    pub recovery_point: i64,
    pub next_offset: i64,
}

/// Loads and, when needed, recovers the partition directory `params.dir`.
pub(crate) fn load(params: LoadParams<'_>) -> Result<LoadedLog, StorageError> {
    let LoadParams {
        dir,
        config,
        recovery_point,
        log_start_offset,
        had_clean_shutdown,
        leader_epoch_cache,
        producer_state,
        now_ms,
    } = params;
    remove_temp_files_and_orphan_indexes(dir)?;
    let mut recovery = Recovery {
        dir,
        log_start_offset,
        leader_epoch_cache,
        producer_state,
        now_ms,
    };
    let mut segments = load_segment_files(config, &mut recovery)?;

    if !had_clean_shutdown {
        recover_from(&mut segments, recovery_point, &mut recovery)?;
    }
    let Recovery {
        leader_epoch_cache,
        producer_state,
        ..
    } = recovery;

    let mut next_offset = match segments.last_segment() {
        Some(active) => active.read_next_offset()?,
        None => log_start_offset,
    };
    if next_offset < log_start_offset && !segments.is_empty() {
        tracing::warn!(dir = %dir.display(), next_offset, log_start_offset, "log end below the log start offset, deleting all segments");
        for segment in segments.clear() {
            segment.delete_files()?;
        }
        leader_epoch_cache.clear_and_flush()?;
        next_offset = log_start_offset;
    }
    if segments.is_empty() {
        let segment = LogSegment::open(dir, log_start_offset, config, true, 0, now_ms)?;
        segments.add(segment);
        next_offset = log_start_offset;
    }
    if let Some(active) = segments.last_segment_mut() {
        active.resize_indexes()?;
    }
    let first_base = segments
        .first_segment_base_offset()
        .unwrap_or(log_start_offset);
    // Kafka's LogLoader: stray snapshots go, then the state is rebuilt up to the log end
    // (see `producer_state::rebuild`).
    let bases: Vec<i64> = segments.base_offsets().collect();
    producer_state.remove_stray_snapshots(&bases)?;
    rebuild_producer_state(
        producer_state,
        &segments,
        log_start_offset.max(first_base),
        next_offset,
        had_clean_shutdown,
        now_ms,
    )?;
    let recovery_point = if had_clean_shutdown {
        next_offset
    } else {
        recovery_point.min(next_offset)
    };
    Ok(LoadedLog {
        segments,
        log_start_offset: log_start_offset.max(first_base),
        recovery_point,
        next_offset,
    })
}

/// Deletes `.deleted` and `.cleaned` files left by a crash, completes an interrupted swap of
/// cleaned segments (see [`complete_interrupted_swaps`]) and deletes index files whose `.log`
/// is gone.
fn remove_temp_files_and_orphan_indexes(dir: &Path) -> Result<(), StorageError> {
    complete_interrupted_swaps(dir)?;
    for name in &list_file_names(dir)? {
        let path = dir.join(name);
        if [
            INDEX_FILE_SUFFIX,
            TIME_INDEX_FILE_SUFFIX,
            TXN_INDEX_FILE_SUFFIX,
        ]
        .iter()
        .any(|suffix| name.ends_with(suffix))
            && let Some(offset) = file_names::offset_from_file_name(name)
            && !file_names::log_file(dir, offset).exists()
        {
            tracing::info!(file = %path.display(), "deleting index file without a log");
            delete_if_exists(&[path])?;
        }
    }
    Ok(())
}

/// Kafka's `LogLoader` handling of the cleaner's temporary files (the protocol is in
/// `replace_segments`):
///
/// 1. `.deleted` files are removed; `.cleaned` files too, and with them every `.swap` file at
///    or above the lowest `.cleaned` offset (a swap whose commit was not complete).
/// 2. The remaining `.swap` logs cover `[lowest base, highest end)`, where a swap segment's end
///    is `max(next offset, base + 1)`: every other segment file in that range is one the swap
///    replaces, and is deleted.
/// 3. Every `.swap` file is renamed to its final name.
pub(crate) fn complete_interrupted_swaps(dir: &Path) -> Result<(), StorageError> {
    let names = list_file_names(dir)?;
    let mut swaps = Vec::new();
    let mut cleaned = Vec::new();
    for name in names {
        if name.ends_with(DELETED_FILE_SUFFIX) {
            delete_if_exists(&[dir.join(&name)])?;
        } else if name.ends_with(CLEANED_FILE_SUFFIX) {
            cleaned.push(name);
        } else if name.ends_with(SWAP_FILE_SUFFIX) {
            swaps.push(name);
        }
    }
    let min_cleaned = cleaned
        .iter()
        .filter_map(|n| file_names::offset_from_file_name(n))
        .min()
        .unwrap_or(i64::MAX);
    let (invalid, valid): (Vec<String>, Vec<String>) = swaps.into_iter().partition(|n| {
        file_names::offset_from_file_name(n).is_none_or(|offset| offset >= min_cleaned)
    });
    for name in invalid.iter().chain(&cleaned) {
        tracing::info!(file = name, "deleting a file of an unfinished segment swap");
        delete_if_exists(&[dir.join(name)])?;
    }
    let log_swap_suffix = format!("{LOG_FILE_SUFFIX}{SWAP_FILE_SUFFIX}");
    let mut range = (i64::MAX, i64::MIN);
    for name in valid.iter().filter(|n| n.ends_with(&log_swap_suffix)) {
        let Some(base) = file_names::offset_from_file_name(name) else {
            continue;
        };
        let records = FileRecords::open_read_only(dir.join(name))?;
        let mut scanner = records.scanner(0, 64 * 1024);
        let mut next = base;
        while let Some(entry) = scanner.next_entry(false)? {
            next = entry.last_offset() + 1;
        }
        range = (range.0.min(base), range.1.max(next.max(base + 1)));
    }
    for name in list_file_names(dir)? {
        if name.ends_with(SWAP_FILE_SUFFIX) {
            continue;
        }
        if let Some(offset) = file_names::offset_from_file_name(&name)
            && offset >= range.0
            && offset < range.1
        {
            tracing::info!(
                file = name,
                "deleting a segment file replaced by a cleaned segment"
            );
            delete_if_exists(&[dir.join(&name)])?;
        }
    }
    for name in valid {
        if let Some(stem) = name.strip_suffix(SWAP_FILE_SUFFIX) {
            tracing::info!(file = name, "completing an interrupted segment swap");
            let from = dir.join(&name);
            std::fs::rename(&from, dir.join(stem)).map_err(|e| StorageError::io(&from, e))?;
        }
    }
    Ok(())
}

/// What recovering a segment needs besides the segments.
struct Recovery<'a> {
    dir: &'a Path,
    log_start_offset: i64,
    leader_epoch_cache: &'a mut LeaderEpochFileCache,
    /// The log's own producer state; recoveries use fresh ones beside it, as Kafka does.
    producer_state: &'a mut ProducerStateManager,
    now_ms: i64,
}

/// Opens every segment; a segment with a missing or insane index is rebuilt on the spot.
fn load_segment_files(
    config: &LogConfig,
    recovery: &mut Recovery<'_>,
) -> Result<LogSegments, StorageError> {
    let dir = recovery.dir;
    let mut segments = LogSegments::new();
    for name in list_file_names(dir)? {
        if !name.ends_with(LOG_FILE_SUFFIX) {
            continue;
        }
        let Some(base_offset) = file_names::offset_from_file_name(&name) else {
            continue;
        };
        let indexes_present = file_names::offset_index_file(dir, base_offset).exists()
            && file_names::time_index_file(dir, base_offset).exists();
        let segment = LogSegment::open(dir, base_offset, config, false, 0, recovery.now_ms)?;
        let needs_rebuild = if !indexes_present {
            tracing::info!(segment = %name, "index file missing, rebuilding the indexes");
            true
        } else if let Err(err) = segment.sanity_check() {
            tracing::warn!(segment = %name, %err, "corrupt index, rebuilding the indexes");
            true
        } else {
            false
        };
        segments.add(segment);
        if needs_rebuild {
            recover_segment(&mut segments, base_offset, recovery)?;
        }
    }
    Ok(segments)
}

/// Recovers every segment holding offsets at or above `recovery_point`; after the first one
/// that had to be cut, the later ones are deleted.
fn recover_from(
    segments: &mut LogSegments,
    recovery_point: i64,
    recovery: &mut Recovery<'_>,
) -> Result<(), StorageError> {
    let dir = recovery.dir;
    let unflushed: Vec<i64> = segments
        .values_from(recovery_point)
        .map(LogSegment::base_offset)
        .collect();
    for (i, base) in unflushed.iter().enumerate() {
        let truncated = recover_segment(segments, *base, recovery)?;
        if truncated > 0 {
            tracing::warn!(dir = %dir.display(), base_offset = base, truncated, "corrupt or torn data, log truncated");
            for later in &unflushed[i + 1..] {
                if let Some(segment) = segments.remove(*later) {
                    tracing::warn!(dir = %dir.display(), base_offset = later, "deleting segment after truncation");
                    segment.delete_files()?;
                }
            }
            break;
        }
    }
    Ok(())
}

/// Kafka's `LogLoader.recoverSegment`: a fresh producer state is brought to the segment's base
/// (which deletes the snapshots above it: they are not trusted past a recovery), the segment is
/// re-validated and its indexes rebuilt, and the state replayed over it is snapshotted at its
/// end, so the next segment's recovery starts from there.
fn recover_segment(
    segments: &mut LogSegments,
    base: i64,
    recovery: &mut Recovery<'_>,
) -> Result<u64, StorageError> {
    let mut state = ProducerStateManager::new(
        recovery.dir,
        recovery.producer_state.topic_partition().to_string(),
        recovery.producer_state.producer_id_expiration_ms(),
    )?;
    rebuild_producer_state(
        &mut state,
        segments,
        recovery.log_start_offset,
        base,
        false,
        recovery.now_ms,
    )?;
    let Some(segment) = segments.get_mut(base) else {
        return Ok(0);
    };
    // Only epochs newer than the cache's latest are added (`LogSegment.recover`); the caller
    // truncates the cache to the recovered log end afterwards.
    let truncated = segment.recover(Some(&mut *recovery.leader_epoch_cache))?;
    // The `.txnindex` is rebuilt with the producer state replayed over the segment: an abort
    // whose marker reached the `.log` before a crash but not the index is indexed now.
    segment.txn_index_mut().reset()?;
    let aborted = replay_segment(&mut state, segment, base, segment.size())?;
    for txn in aborted {
        segment.txn_index_mut().append(txn)?;
    }
    let end = segment.read_next_offset()?;
    // Replayed to its end: the rebuild only snapshots it there.
    state.update_map_end_offset(end);
    rebuild_producer_state(
        &mut state,
        segments,
        recovery.log_start_offset,
        end,
        false,
        recovery.now_ms,
    )?;
    Ok(truncated)
}

/// The file names in `dir`, sorted (so segments load in offset order).
fn list_file_names(dir: &Path) -> Result<Vec<String>, StorageError> {
    let entries = std::fs::read_dir(dir).map_err(|e| StorageError::io(dir, e))?;
    let mut names = Vec::new();
    for entry in entries {
        let entry = entry.map_err(|e| StorageError::io(dir, e))?;
        let path: PathBuf = entry.path();
        if path.is_file()
            && let Some(name) = entry.file_name().to_str()
        {
            names.push(name.to_string());
        }
    }
    names.sort();
    Ok(names)
}
