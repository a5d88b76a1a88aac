//! Log dirs through the protocol, against the real binary with two (or one) log dirs:
//! DescribeLogDirs (v0–4) and AlterReplicaLogDirs (v0–2) over the raw protocol (`moves`), a move
//! under continuous produce and fetch and a kill -9 in the middle of one (`moves`), a failing
//! disk in one dir and in the only dir (`failure`, on a small tmpfs mounted by the test), a
//! broker hosting more partitions than its open file limit with the dir online
//! (`descriptors`), and Kafka's own tools and Admin client (`tools`).
//!
//! This file holds the helpers the three share.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use kcli::protocol::codec::StrBytes;
use kcli::protocol::messages::alter_replica_log_dirs_request::{
    AlterReplicaLogDir, AlterReplicaLogDirTopic, AlterReplicaLogDirsRequest,
};
use kcli::protocol::messages::describe_log_dirs_request::{
    DescribableLogDirTopic, DescribeLogDirsRequest,
};
use kcli::protocol::messages::describe_log_dirs_response::DescribeLogDirsResponse;
use kcli::protocol::messages::metadata_request::{self, MetadataRequest};
use kcli::protocol::messages::{RequestKind, ResponseKind};

use crate::serve_support::{KafkaConn, TestBroker, auto_create_topic};

mod descriptors;
mod failure;
mod moves;
mod tools;

const KAFKA_STORAGE_ERROR: i16 = 56;
const LOG_DIR_NOT_FOUND: i16 = 57;
const REPLICA_NOT_AVAILABLE: i16 = 9;
const LEADER_NOT_AVAILABLE: i16 = 5;

/// A broker over the given log dirs (`log.dirs` in that order), with `overrides`.
fn broker_on(dirs: &[&Path], overrides: &[(&str, &str)]) -> TestBroker {
    let joined = dirs
        .iter()
        .map(|d| d.display().to_string())
        .collect::<Vec<_>>()
        .join(",");
    let mut all: Vec<(&str, &str)> = vec![("log.dirs", joined.as_str())];
    all.extend_from_slice(overrides);
    TestBroker::start(&all)
}

/// DescribeLogDirs at `version` for `topics` (`None`: every partition).
fn describe(
    conn: &mut KafkaConn,
    version: i16,
    topics: Option<&[(&str, &[i32])]>,
) -> DescribeLogDirsResponse {
    let request = RequestKind::DescribeLogDirs(DescribeLogDirsRequest {
        topics: topics.map(|ts| {
            ts.iter()
                .map(|(t, ps)| DescribableLogDirTopic {
                    topic: StrBytes::from(*t),
                    partitions: ps.to_vec(),
                    ..Default::default()
                })
                .collect()
        }),
        ..Default::default()
    });
    let ResponseKind::DescribeLogDirs(r) = conn.call(&request, version) else {
        unreachable!()
    };
    r
}

/// AlterReplicaLogDirs of one partition at `version`: its error code.
fn alter(conn: &mut KafkaConn, version: i16, topic: &str, partition: i32, dir: &str) -> i16 {
    let request = RequestKind::AlterReplicaLogDirs(AlterReplicaLogDirsRequest {
        dirs: vec![AlterReplicaLogDir {
            path: StrBytes::from(dir),
            topics: vec![AlterReplicaLogDirTopic {
                name: StrBytes::from(topic),
                partitions: vec![partition],
                ..Default::default()
            }],
            ..Default::default()
        }],
        ..Default::default()
    });
    let ResponseKind::AlterReplicaLogDirs(r) = conn.call(&request, version) else {
        unreachable!()
    };
    assert_eq!(r.results.len(), 1, "{r:?}");
    assert_eq!(r.results[0].topic_name.to_string(), topic);
    assert_eq!(r.results[0].partitions.len(), 1, "{r:?}");
    assert_eq!(r.results[0].partitions[0].partition_index, partition);
    r.results[0].partitions[0].error_code
}

/// Where DescribeLogDirs places `topic-partition`: (dir, is_future) for each log of it.
fn placement(r: &DescribeLogDirsResponse, topic: &str, partition: i32) -> Vec<(String, bool)> {
    let mut out = Vec::new();
    for dir in &r.results {
        for t in dir
            .topics
            .iter()
            .filter(|t| t.name.to_string_lossy() == topic)
        {
            for p in t
                .partitions
                .iter()
                .filter(|p| p.partition_index == partition)
            {
                out.push((dir.log_dir.to_string(), p.is_future_key));
            }
        }
    }
    out
}

/// Polls DescribeLogDirs until `topic-partition` has its one log, current, in `dir`.
fn wait_moved(conn: &mut KafkaConn, topic: &str, partition: i32, dir: &Path, limit: Duration) {
    let start = Instant::now();
    let want = vec![(dir.display().to_string(), false)];
    loop {
        let r = describe(conn, 4, None);
        if placement(&r, topic, partition) == want {
            return;
        }
        assert!(
            start.elapsed() < limit,
            "{topic}-{partition} not moved to {} within {limit:?}: {r:?}",
            dir.display()
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// The entries of a log dir that are partition, future or deleted partition dirs.
fn partition_entries(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .filter_map(|e| {
            let e = e.unwrap();
            e.path()
                .is_dir()
                .then(|| e.file_name().to_string_lossy().into_owned())
        })
        .collect();
    names.sort();
    names
}

/// Waits until the old dir of a moved partition is gone from `dir`: it is renamed
/// `<tp>.<uuid>-delete` before the move shows in DescribeLogDirs, and removed just after.
fn wait_old_dir_gone(dir: &Path, tp: &str) {
    let start = Instant::now();
    loop {
        let left: Vec<String> = partition_entries(dir)
            .into_iter()
            .filter(|n| n == tp || n.starts_with(&format!("{tp}.")))
            .collect();
        if left.is_empty() {
            return;
        }
        assert!(
            left.iter().all(|n| n.ends_with("-delete")),
            "the old dir is still the partition's: {left:?}"
        );
        assert!(start.elapsed() < Duration::from_secs(10), "{left:?}");
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// Two log dirs in one temp dir: `<tmp>/a` and `<tmp>/b`.
fn two_dirs() -> (tempfile::TempDir, PathBuf, PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let a = tmp.path().join("a");
    let b = tmp.path().join("b");
    (tmp, a, b)
}
