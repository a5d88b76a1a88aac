//! `--data-dir`: the cluster as a single-node `kcli serve` keeps it in its data dir (the
//! embedded store's `zk-snapshot` and `zk-log`), read from disk into memory. The broker may be
//! running: its `zk.lock` is not taken and nothing is written, and a log being appended is read
//! up to its last complete record (`EmbeddedStore::read_only_copy`). Ephemeral znodes live only
//! in the running broker's memory, so the brokers shown are the broker running on this dir (its
//! log dir `.lock` is held, tested without taking it) with its id from `meta.properties`, and
//! the controller's id is not known.

use std::path::Path;

use anyhow::Context;

use super::snapshot::{self, BrokerSnapshot, ClusterSnapshot, Source};
use crate::storage::log_dir_lock::is_locked;
use crate::storage::meta_properties::MetaProperties;
use crate::zk::EmbeddedStore;
use crate::zk::broker_znode::BrokerZNode;
use crate::zk::zk_data::BrokerRegistration;

/// What stops `--data-dir` before it has a snapshot.
#[derive(Debug, thiserror::Error)]
pub(super) enum DataDirError {
    #[error(
        "{dir} holds no embedded metadata store (no zk-snapshot): give the first log dir of a \
         `kcli serve` without ZooKeeper; a broker with zookeeper.connect keeps its metadata in \
         ZooKeeper (--zookeeper)"
    )]
    NoStore { dir: String },
}

/// Reads the snapshot of the store in `dir`.
pub(super) async fn read(dir: &Path) -> anyhow::Result<ClusterSnapshot> {
    let shown = dir.display().to_string();
    let metadata = std::fs::metadata(dir).with_context(|| format!("cannot open {shown}"))?;
    anyhow::ensure!(metadata.is_dir(), "{shown} is not a directory");
    let store = EmbeddedStore::read_only_copy(dir)
        .with_context(|| format!("reading the embedded metadata store in {shown}"))?
        .ok_or(DataDirError::NoStore { dir: shown.clone() })?;
    let session = store.session();
    let mut snapshot = snapshot::read_snapshot(&session)
        .await
        .with_context(|| format!("reading the embedded metadata store in {shown}"))?;
    snapshot.source = Source::DataDir;
    let running = is_locked(dir).with_context(|| format!("cannot check the lock of {shown}"))?;
    let meta = MetaProperties::read(dir)?;
    if let Some(id) = meta.and_then(|m| m.broker_id.or(m.node_id))
        && running
    {
        snapshot.brokers = vec![running_broker(id)];
    }
    Ok(snapshot)
}

/// The broker running on the dir: its id is all that is known (the renderers show no more).
fn running_broker(id: i32) -> BrokerSnapshot {
    BrokerSnapshot {
        id,
        znode: BrokerZNode {
            version: 0,
            host: None,
            port: -1,
            registration: BrokerRegistration {
                endpoints: Vec::new(),
                rack: None,
                jmx_port: -1,
                timestamp_ms: -1,
            },
            features: Default::default(),
        },
        broker_epoch: -1,
    }
}
