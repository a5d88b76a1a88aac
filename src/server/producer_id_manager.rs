//! Producer ids for InitProducerId (Kafka's `ZkProducerIdManager`): the broker takes blocks of
//! 1000 consecutive ids from `/latest_producer_id_block` and hands them out one by one.
//!
//! Taking a block reads the znode (Kafka's JSON `{"version":1,"broker":B,"block_start":"S",
//! "block_end":"E"}`, start and end inclusive and written as strings) and writes the next block
//! with a conditional `setData` on the version it read; a lost race (`BadVersion`) reads again.
//! The znode is created empty at startup with the other persistent paths; empty means no block
//! was ever taken and the first is 0..=999. So ids are unique across brokers and restarts: a
//! restarted broker takes a new block (the unused rest of its old one is never reused), as
//! Kafka does. In single-node mode the embedded store, which persists, plays ZooKeeper's part
//! through the same `ZkClient` trait.
//!
//! Lock order: the manager's own async mutex is held across the store round trips of a block
//! allocation (one allocation at a time); it is never taken while holding another lock.

use std::sync::Arc;

use tokio::sync::Mutex;

use crate::cluster::BrokerId;
use crate::zk::zk_data::{
    CONTROLLER_PATH, ControllerRegistration, LATEST_PRODUCER_ID_BLOCK_PATH, ProducerIdBlock,
    ZkDataError, broker_id_path,
};
use crate::zk::{CreateMode, ZkClient, ZkError};

/// `ProducerIdsBlock.PRODUCER_ID_BLOCK_SIZE`.
pub const PRODUCER_ID_BLOCK_SIZE: i64 = 1000;

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

/// The ids still available to this broker: `next..=block.block_end`.
#[derive(Debug)]
struct Current {
    block: Option<ProducerIdBlock>,
    next: i64,
}

/// Hands out producer ids; see the module doc.
pub struct ProducerIdManager {
    broker_id: BrokerId,
    zk: Arc<dyn ZkClient>,
    current: Mutex<Current>,
}

impl std::fmt::Debug for ProducerIdManager {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ProducerIdManager")
            .field("broker_id", &self.broker_id)
            .finish_non_exhaustive()
    }
}

impl ProducerIdManager {
    /// A manager with no block yet; the first id takes one (see [`startup`](Self::startup)).
    pub fn new(broker_id: BrokerId, zk: Arc<dyn ZkClient>) -> Self {
        ProducerIdManager {
            broker_id,
            zk,
            current: Mutex::new(Current {
                block: None,
                next: 0,
            }),
        }
    }

    /// Takes the first block now, as Kafka's manager does when the broker starts.
    pub async fn startup(&self) -> Result<(), ProducerIdError> {
        let mut current = self.current.lock().await;
        let block = get_new_producer_id_block(self.broker_id, self.zk.as_ref()).await?;
        current.next = block.block_start;
        current.block = Some(block);
        Ok(())
    }

    /// The next unused producer id, taking a new block when this one is used up.
    pub async fn generate_producer_id(&self) -> Result<i64, ProducerIdError> {
        let mut current = self.current.lock().await;
        let exhausted = current.block.is_none_or(|b| current.next > b.block_end);
        if exhausted {
            let block = get_new_producer_id_block(self.broker_id, self.zk.as_ref()).await?;
            current.next = block.block_start;
            current.block = Some(block);
        }
        let id = current.next;
        current.next += 1;
        Ok(id)
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

impl ProducerIdManager {
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
pub async fn get_new_producer_id_block(
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
        let manager = ProducerIdManager::new(3, Arc::clone(&zk));
        manager.startup().await.unwrap();
        let (data, _) = zk
            .get_data(LATEST_PRODUCER_ID_BLOCK_PATH, false)
            .await
            .unwrap();
        assert_eq!(
            String::from_utf8(data).unwrap(),
            r#"{"version":1,"broker":3,"block_start":"0","block_end":"999"}"#
        );
        let mut ids = Vec::new();
        for _ in 0..1001 {
            ids.push(manager.generate_producer_id().await.unwrap());
        }
        assert_eq!(ids[0], 0);
        assert_eq!(ids[999], 999);
        // The 1001st id needed the next block.
        assert_eq!(ids[1000], 1000);
        let (data, stat) = zk
            .get_data(LATEST_PRODUCER_ID_BLOCK_PATH, false)
            .await
            .unwrap();
        assert_eq!(
            ProducerIdBlock::decode(&data).unwrap(),
            ProducerIdBlock {
                broker: 3,
                block_start: 1000,
                block_end: 1999
            }
        );
        assert_eq!(stat.version, 2);
        drop(manager);
        drop(zk);
        drop(store);
        // A restart (the store reopened from disk) takes a fresh block.
        let store = EmbeddedStore::open(dir.path()).unwrap();
        let zk: Arc<dyn ZkClient> = Arc::new(store.session());
        let manager = ProducerIdManager::new(3, Arc::clone(&zk));
        manager.startup().await.unwrap();
        assert_eq!(manager.generate_producer_id().await.unwrap(), 2000);
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
