//! The files a directory argument stands for. A partition directory stands for the files in it
//! that dump-segment reads (segments, indexes, producer snapshots, transaction indexes); a log
//! dir, which has none of those itself, for those of its partition directories. The directory
//! itself is never dumped, and the other files in it (checkpoints, `partition.metadata`,
//! `meta.properties`, the embedded metadata store) are passed over in silence: they are not
//! what was asked for. Kafka's tool takes files only.

use std::fs;
use std::path::{Path, PathBuf};

use anyhow::{Context, bail};

use super::FileKind;
use crate::storage::file_names::parse_topic_partition_name;

/// `paths` with each directory replaced by the files under it, in order: a partition's files by
/// base offset, each segment's `.log` before its indexes; partition directories by name. A
/// directory with nothing to dump under it is an error naming it.
pub(super) fn expand(paths: &[PathBuf]) -> anyhow::Result<Vec<PathBuf>> {
    let mut files = Vec::new();
    for path in paths {
        // A path that cannot be read is left to the dumper, which names it in its error.
        if !fs::metadata(path).is_ok_and(|m| m.is_dir()) {
            files.push(path.clone());
            continue;
        }
        let own = dumpable_files_in(path)?;
        if !own.is_empty() {
            files.extend(own);
            continue;
        }
        let mut found = false;
        for partition in partition_dirs_in(path)? {
            let partition_files = dumpable_files_in(&partition)?;
            found |= !partition_files.is_empty();
            files.extend(partition_files);
        }
        if !found {
            bail!(
                "{}: no segment, index, snapshot or transaction index files in it or in its \
                 partition directories",
                path.display()
            );
        }
    }
    Ok(files)
}

/// The regular files directly in `dir` whose suffix dump-segment reads.
fn dumpable_files_in(dir: &Path) -> anyhow::Result<Vec<PathBuf>> {
    let mut files = Vec::new();
    for entry in fs::read_dir(dir).with_context(|| format!("cannot list {}", dir.display()))? {
        let entry = entry.with_context(|| format!("cannot list {}", dir.display()))?;
        let name = entry.file_name().to_string_lossy().into_owned();
        let kind = FileKind::of(&name);
        if kind != FileKind::Unknown && entry.file_type().is_ok_and(|t| t.is_file()) {
            files.push((sort_key(&name, kind), entry.path()));
        }
    }
    files.sort();
    Ok(files.into_iter().map(|(_, path)| path).collect())
}

/// Base offset (the leading digits of the name), then the kind in the order a segment's files
/// are read, then the name.
fn sort_key(name: &str, kind: FileKind) -> (u64, u8, String) {
    let digits: String = name.chars().take_while(char::is_ascii_digit).collect();
    let offset = digits.parse().unwrap_or(u64::MAX);
    let rank = match kind {
        FileKind::Log | FileKind::KraftSnapshot => 0,
        FileKind::OffsetIndex => 1,
        FileKind::TimeIndex => 2,
        FileKind::TxnIndex => 3,
        FileKind::ProducerSnapshot => 4,
        FileKind::Unknown => 5,
    };
    (offset, rank, name.to_string())
}

/// The subdirectories of a log dir named `<topic>-<partition>`: partitions being deleted
/// (`-delete`), moved (`-future`) or stray are not the log's current state and are left out.
fn partition_dirs_in(dir: &Path) -> anyhow::Result<Vec<PathBuf>> {
    let mut dirs = Vec::new();
    for entry in fs::read_dir(dir).with_context(|| format!("cannot list {}", dir.display()))? {
        let entry = entry.with_context(|| format!("cannot list {}", dir.display()))?;
        let is_dir = entry.file_type().is_ok_and(|t| t.is_dir());
        let name = entry.file_name();
        if is_dir && name.to_str().and_then(parse_topic_partition_name).is_some() {
            dirs.push(entry.path());
        }
    }
    dirs.sort();
    Ok(dirs)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn touch(path: &Path) {
        if let Some(parent) = path.parent() {
            fs::create_dir_all(parent).unwrap();
        }
        fs::write(path, b"").unwrap();
    }

    fn names(base: &Path, files: &[PathBuf]) -> Vec<String> {
        files
            .iter()
            .map(|f| f.strip_prefix(base).unwrap().display().to_string())
            .collect()
    }

    #[test]
    fn a_partition_dir_stands_for_its_segment_files_in_offset_order() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("t-0");
        for name in [
            "00000000000000000100.timeindex",
            "00000000000000000100.log",
            "00000000000000000000.index",
            "00000000000000000000.log",
            "00000000000000000100.index",
            "00000000000000000100.snapshot",
            "00000000000000000000.log.deleted",
            "leader-epoch-checkpoint",
            "partition.metadata",
        ] {
            touch(&p.join(name));
        }
        let files = expand(std::slice::from_ref(&p)).unwrap();
        assert_eq!(
            names(&p, &files),
            [
                "00000000000000000000.log",
                "00000000000000000000.index",
                "00000000000000000100.log",
                "00000000000000000100.index",
                "00000000000000000100.timeindex",
                "00000000000000000100.snapshot",
            ]
        );
    }

    #[test]
    fn a_log_dir_stands_for_its_partitions_files() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        touch(&d.join("meta.properties"));
        touch(&d.join("recovery-point-offset-checkpoint"));
        touch(&d.join("b-1/00000000000000000000.log"));
        touch(&d.join("a-0/00000000000000000000.log"));
        touch(&d.join("a-0/00000000000000000000.index"));
        touch(&d.join("a-1.0123456789abcdef0123456789abcdef-delete/00000000000000000000.log"));
        touch(&d.join("zk-snapshot/snapshot.0"));
        fs::create_dir_all(d.join("c-0")).unwrap();
        let files = expand(&[d.to_path_buf(), d.join("b-1/00000000000000000000.log")]).unwrap();
        assert_eq!(
            names(d, &files),
            [
                "a-0/00000000000000000000.log",
                "a-0/00000000000000000000.index",
                "b-1/00000000000000000000.log",
                "b-1/00000000000000000000.log",
            ]
        );
    }

    #[test]
    fn a_dir_with_nothing_to_dump_is_an_error_naming_it() {
        let dir = tempfile::tempdir().unwrap();
        fs::create_dir_all(dir.path().join("t-0")).unwrap();
        let err = expand(&[dir.path().to_path_buf()]).unwrap_err();
        assert!(
            err.to_string()
                .starts_with(&dir.path().display().to_string()),
            "{err}"
        );
    }
}
