//! Kafka's `CheckedEphemeral` (`KafkaZkClient.registerEphemeralAndGetStat`): create an ephemeral
//! node so that a retry, or a re-registration after an expiry, never mistakes its own node for
//! someone else's. The create is one `multi(create(path, empty), setData(path, data, 0))`, as
//! Kafka's; on NODEEXISTS the node is read: owned by this session it is ours (success, its stat),
//! owned by another it is `NodeExists`, gone meanwhile it is created again.

use super::client::{CreateMode, Op, OpResult, Stat, ZkClient, ZkError};

/// How many times a node that vanishes between the failed create and the read is created again
/// before giving up (Kafka loops; a bound keeps a flapping owner from holding us forever).
const MAX_ATTEMPTS: usize = 16;

/// Creates the ephemeral `path` holding `data`, or accepts the one this session already owns;
/// returns its stat (the broker epoch is its `czxid`).
pub async fn create_checked_ephemeral(
    zk: &dyn ZkClient,
    path: &str,
    data: &[u8],
) -> Result<Stat, ZkError> {
    for _ in 0..MAX_ATTEMPTS {
        // Kafka creates with null data and sets the data at version 0 in the same multi; the
        // crate has no null data, so the create carries an empty payload.
        let ops = vec![
            Op::Create {
                path: path.to_string(),
                data: Vec::new(),
                mode: CreateMode::Ephemeral,
            },
            Op::SetData {
                path: path.to_string(),
                data: data.to_vec(),
                version: 0,
            },
        ];
        match zk.multi(ops).await {
            Ok(results) => {
                return match results.get(1) {
                    Some(OpResult::SetData { stat }) => Ok(*stat),
                    _ => Err(ZkError::Other(-1)),
                };
            }
            Err(ZkError::NodeExists(_)) => {}
            Err(e) => return Err(e),
        }
        match zk.get_data(path, false).await {
            Ok((_, stat)) if stat.ephemeral_owner == zk.session_id() => return Ok(stat),
            Ok((_, stat)) => {
                tracing::error!(
                    path,
                    owner = format_args!("{:#x}", stat.ephemeral_owner),
                    session = format_args!("{:#x}", zk.session_id()),
                    "ephemeral node exists and its owner is not this session"
                );
                return Err(ZkError::NodeExists(path.to_string()));
            }
            Err(ZkError::NoNode(_)) => {
                tracing::info!(
                    path,
                    "ephemeral node went away while reading it; creating again"
                );
            }
            Err(e) => return Err(e),
        }
    }
    Err(ZkError::NodeExists(path.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::zk::EmbeddedStore;

    #[tokio::test]
    async fn own_node_is_success_anothers_is_node_exists() {
        let store = EmbeddedStore::in_memory();
        let ours = store.session();
        let theirs = store.session();
        ours.create("/brokers", b"", CreateMode::Persistent)
            .await
            .unwrap();
        let first = create_checked_ephemeral(&ours, "/brokers/1", b"{\"v\":1}")
            .await
            .unwrap();
        assert_eq!(first.ephemeral_owner, ours.session_id());
        // Kafka's shape: created, then set at version 0, so the node is at version 1.
        assert_eq!(first.version, 1);
        let (data, _) = ours.get_data("/brokers/1", false).await.unwrap();
        assert_eq!(data, b"{\"v\":1}");
        // Again from the owning session (a retried create): its node, same stat.
        let again = create_checked_ephemeral(&ours, "/brokers/1", b"other")
            .await
            .unwrap();
        assert_eq!(again.czxid, first.czxid);
        // From another session: someone else's node.
        assert_eq!(
            create_checked_ephemeral(&theirs, "/brokers/1", b"x").await,
            Err(ZkError::NodeExists("/brokers/1".into()))
        );
        // Once the owner is gone the node is free.
        ours.close().await.unwrap();
        let taken = create_checked_ephemeral(&theirs, "/brokers/1", b"x")
            .await
            .unwrap();
        assert_eq!(taken.ephemeral_owner, theirs.session_id());
        assert!(taken.czxid > first.czxid);
        // A missing parent is the store's error, unchanged.
        assert_eq!(
            create_checked_ephemeral(&theirs, "/missing/1", b"x").await,
            Err(ZkError::NoNode("/missing/1".into()))
        );
    }
}
