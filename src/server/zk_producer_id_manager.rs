//! The controller's half of producer ids (Kafka's `ZkProducerIdManager.getNewProducerIdBlock`
//! and the ZooKeeper-mode controller's `processAllocateProducerIds`): blocks of 1000
//! consecutive ids claimed from `/latest_producer_id_block` for the broker that asks with
//! AllocateProducerIds. Brokers hand the ids out one by one (`rpc_producer_id_manager.rs`).
//!
//! Claiming a block reads the znode (Kafka's JSON `{"version":1,"broker":B,"block_start":"S",
//! "block_end":"E"}`, start and end inclusive and written as strings) and writes the next block
//! with a conditional `setData` on the version it read; a lost race (`BadVersion`) reads again.
//! The znode is created empty at startup with the other persistent paths; empty means no block
//! was ever taken and the first is 0..=999. So ids are unique across brokers and restarts: a
//! restarted broker gets a new block (the unused rest of its old one is never reused), as
//! Kafka does. In single-node mode the embedded store, which persists, plays ZooKeeper's part
//! through the same `ZkClient` trait.
//!
//! No lock is held here: the conditional write serialises concurrent claims.

use std::sync::Arc;

use crate::cluster::BrokerId;
use crate::zk::zk_data::{
    CONTROLLER_PATH, ControllerRegistration, LATEST_PRODUCER_ID_BLOCK_PATH, ProducerIdBlock,
    ZkDataError, broker_id_path,
};
use crate::zk::{CreateMode, ZkClient, ZkError};

/// `ProducerIdsBlock.PRODUCER_ID_BLOCK_SIZE`.
pub(crate) const PRODUCER_ID_BLOCK_SIZE: i64 = 1000;

/// Why no producer id could be handed out.
#[derive(Debug, thiserror::Error)]
pub enum ProducerIdError {
    #[error("reading or writing {LATEST_PRODUCER_ID_BLOCK_PATH}: {0}")]
    Zk(#[from] ZkError),
    #[error("malformed {LATEST_PRODUCER_ID_BLOCK_PATH}: {0}")]
    Data(#[from] ZkDataError),
    /// Kafka's "Have exhausted all producerIds."
    #[error("have exhausted all producer ids (the last block ends at {block_end})")]
    Exhausted { block_end: i64 },
}

/// The controller's half of producer ids; see the module doc.
pub struct ZkProducerIdManager {
    broker_id: BrokerId,
    zk: Arc<dyn ZkClient>,
}

impl std::fmt::Debug for ZkProducerIdManager {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ZkProducerIdManager")
            .field("broker_id", &self.broker_id)
            .finish_non_exhaustive()
    }
}

impl ZkProducerIdManager {
    /// The manager of broker `broker_id`, which claims blocks only while it is the controller.
    pub fn new(broker_id: BrokerId, zk: Arc<dyn ZkClient>) -> Self {
        ZkProducerIdManager { broker_id, zk }
    }
}

/// Why the controller refused another broker's AllocateProducerIds.
#[derive(Debug, thiserror::Error)]
pub enum AllocateError {
    /// This broker does not hold `/controller`.
    #[error("this broker is not the controller")]
    NotController,
    /// The requester has no `/brokers/ids/<id>`.
    #[error("broker {0} is not registered")]
    BrokerIdNotRegistered(BrokerId),
    /// The requester's epoch is not the czxid of its registration.
    #[error("broker {broker_id}'s epoch {given} is stale (registered at {registered})")]
    StaleBrokerEpoch {
        broker_id: BrokerId,
        given: i64,
        registered: i64,
    },
    #[error(transparent)]
    Block(#[from] ProducerIdError),
}

impl ZkProducerIdManager {
    /// The ZooKeeper-mode controller's `processAllocateProducerIds`: when this broker is the
    /// controller and the requester is registered under the epoch it gives (the czxid of its
    /// `/brokers/ids/<id>`, which is how Kafka numbers broker epochs), claims the next block for
    /// it from `/latest_producer_id_block`.
    pub async fn allocate_block_for(
        &self,
        broker_id: BrokerId,
        broker_epoch: i64,
    ) -> Result<ProducerIdBlock, AllocateError> {
        let zk = self.zk.as_ref();
        let controller = match zk.get_data(CONTROLLER_PATH, false).await {
            Ok((data, _)) => ControllerRegistration::decode(&data).ok(),
            Err(ZkError::NoNode(_)) => None,
            Err(e) => return Err(ProducerIdError::Zk(e).into()),
        };
        if controller.map(|c| c.broker_id) != Some(self.broker_id) {
            return Err(AllocateError::NotController);
        }
        let registered = match zk.exists(&broker_id_path(broker_id), false).await {
            Ok(Some(stat)) => stat.czxid,
            Ok(None) => return Err(AllocateError::BrokerIdNotRegistered(broker_id)),
            Err(e) => return Err(ProducerIdError::Zk(e).into()),
        };
        if registered != broker_epoch {
            return Err(AllocateError::StaleBrokerEpoch {
                broker_id,
                given: broker_epoch,
                registered,
            });
        }
        Ok(get_new_producer_id_block(broker_id, zk).await?)
    }
}

/// `ZkProducerIdManager.getNewProducerIdBlock`: claims the block after the one in the znode.
pub(crate) async fn get_new_producer_id_block(
    broker_id: BrokerId,
    zk: &dyn ZkClient,
) -> Result<ProducerIdBlock, ProducerIdError> {
    loop {
        let (data, version) = match zk.get_data(LATEST_PRODUCER_ID_BLOCK_PATH, false).await {
            Ok((data, stat)) => (data, Some(stat.version)),
            Err(ZkError::NoNode(_)) => (Vec::new(), None),
            Err(e) => return Err(e.into()),
        };
        let block_start = if data.is_empty() {
            0
        } else {
            let current = ProducerIdBlock::decode(&data)?;
            if current.block_end > i64::MAX - PRODUCER_ID_BLOCK_SIZE {
                tracing::error!(block_end = current.block_end, "exhausted all producer ids");
                return Err(ProducerIdError::Exhausted {
                    block_end: current.block_end,
                });
            }
            current.block_end + 1
        };
        let block = ProducerIdBlock {
            broker: broker_id,
            block_start,
            block_end: block_start + PRODUCER_ID_BLOCK_SIZE - 1,
        };
        let bytes = block.encode();
        let written = match version {
            Some(version) => zk
                .set_data(LATEST_PRODUCER_ID_BLOCK_PATH, &bytes, version)
                .await
                .map(|_| ()),
            None => zk
                .create(
                    LATEST_PRODUCER_ID_BLOCK_PATH,
                    &bytes,
                    CreateMode::Persistent,
                )
                .await
                .map(|_| ()),
        };
        match written {
            Ok(()) => {
                tracing::info!(
                    broker_id,
                    block_start = block.block_start,
                    block_end = block.block_end,
                    "acquired a new producer id block"
                );
                return Ok(block);
            }
            // Another broker took a block meanwhile: read again.
            Err(ZkError::BadVersion(_) | ZkError::NodeExists(_)) => continue,
            Err(e) => return Err(e.into()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::zk::EmbeddedStore;
    use crate::zk::recipes::ensure_persistent_paths;

    #[tokio::test]
    async fn blocks_of_a_thousand_in_kafkas_json_and_never_reused_across_restarts() {
        let dir = tempfile::tempdir().unwrap();
        let store = EmbeddedStore::open(dir.path()).unwrap();
        let zk: Arc<dyn ZkClient> = Arc::new(store.session());
        ensure_persistent_paths(zk.as_ref()).await.unwrap();
        let first = get_new_producer_id_block(3, zk.as_ref()).await.unwrap();
        assert_eq!((first.block_start, first.block_end), (0, 999));
        let (data, _) = zk
            .get_data(LATEST_PRODUCER_ID_BLOCK_PATH, false)
            .await
            .unwrap();
        assert_eq!(
            String::from_utf8(data).unwrap(),
            r#"{"version":1,"broker":3,"block_start":"0","block_end":"999"}"#
        );
        let second = get_new_producer_id_block(3, zk.as_ref()).await.unwrap();
        assert_eq!((second.block_start, second.block_end), (1000, 1999));
        let (_, stat) = zk
            .get_data(LATEST_PRODUCER_ID_BLOCK_PATH, false)
            .await
            .unwrap();
        assert_eq!(stat.version, 2);
        drop(zk);
        drop(store);
        // A restart (the store reopened from disk) continues after the last block.
        let store = EmbeddedStore::open(dir.path()).unwrap();
        let zk: Arc<dyn ZkClient> = Arc::new(store.session());
        let third = get_new_producer_id_block(3, zk.as_ref()).await.unwrap();
        assert_eq!(third.block_start, 2000);
    }

    #[tokio::test]
    async fn only_the_controller_allocates_and_only_for_a_current_registration() {
        let store = EmbeddedStore::in_memory();
        let zk: Arc<dyn ZkClient> = Arc::new(store.session());
        ensure_persistent_paths(zk.as_ref()).await.unwrap();
        let manager = ZkProducerIdManager::new(1, Arc::clone(&zk));
        assert!(matches!(
            manager.allocate_block_for(2, 5).await,
            Err(AllocateError::NotController)
        ));
        let controller = ControllerRegistration {
            broker_id: 1,
            timestamp_ms: 0,
            kraft_controller_epoch: -1,
        };
        zk.create(CONTROLLER_PATH, &controller.encode(), CreateMode::Ephemeral)
            .await
            .unwrap();
        assert!(matches!(
            manager.allocate_block_for(2, 5).await,
            Err(AllocateError::BrokerIdNotRegistered(2))
        ));
        let (_, stat) = zk
            .create(&broker_id_path(2), b"{}", CreateMode::Ephemeral)
            .await
            .unwrap();
        assert!(matches!(
            manager.allocate_block_for(2, stat.czxid + 1).await,
            Err(AllocateError::StaleBrokerEpoch { broker_id: 2, .. })
        ));
        let block = manager.allocate_block_for(2, stat.czxid).await.unwrap();
        assert_eq!((block.broker, block.block_start), (2, 0));
        // Another controller's broker is refused again.
        let other = ZkProducerIdManager::new(3, Arc::clone(&zk));
        assert!(matches!(
            other.allocate_block_for(2, stat.czxid).await,
            Err(AllocateError::NotController)
        ));
    }

    #[tokio::test]
    async fn a_lost_race_reads_again_and_a_missing_znode_is_created() {
        let dir = tempfile::tempdir().unwrap();
        let store = EmbeddedStore::open(dir.path()).unwrap();
        let zk: Arc<dyn ZkClient> = Arc::new(store.session());
        // No persistent paths: the znode is missing.
        let first = get_new_producer_id_block(1, zk.as_ref()).await.unwrap();
        assert_eq!((first.block_start, first.block_end), (0, 999));
        // Another broker writes a block behind our back; ours follows it.
        let other = ProducerIdBlock {
            broker: 2,
            block_start: 5000,
            block_end: 5999,
        };
        zk.set_data(LATEST_PRODUCER_ID_BLOCK_PATH, &other.encode(), -1)
            .await
            .unwrap();
        let next = get_new_producer_id_block(1, zk.as_ref()).await.unwrap();
        assert_eq!((next.block_start, next.block_end), (6000, 6999));
        let exhausted = ProducerIdBlock {
            broker: 2,
            block_start: i64::MAX - 1500,
            block_end: i64::MAX - 501,
        };
        zk.set_data(LATEST_PRODUCER_ID_BLOCK_PATH, &exhausted.encode(), -1)
            .await
            .unwrap();
        assert!(matches!(
            get_new_producer_id_block(1, zk.as_ref()).await,
            Err(ProducerIdError::Exhausted { .. })
        ));
    }
}
