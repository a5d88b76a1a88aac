//! Small recipes over any `ZkClient` that Kafka's `KafkaZkClient` performs at startup:
//! `createRecursive` (create a path and its missing parents), the pre-created
//! `PersistentZkPaths`, and `createOrGetClusterId`.

use super::client::{CreateMode, ZkClient, ZkError, parent_of};
use super::zk_data::{self, CLUSTER_ID_PATH, PERSISTENT_ZK_PATHS};

/// Creates `path` (persistent, with `data`), creating missing parents with empty data first.
/// Fails with `NodeExists` if `path` itself exists, like Kafka's `createRecursive`.
pub async fn create_recursive(
    client: &dyn ZkClient,
    path: &str,
    data: &[u8],
) -> Result<(), ZkError> {
    let mut missing = Vec::new();
    let mut parent = parent_of(path);
    while let Some(p) = parent {
        if p == "/" || client.exists(p, false).await?.is_some() {
            break;
        }
        missing.push(p);
        parent = parent_of(p);
    }
    for p in missing.into_iter().rev() {
        match client.create(p, b"", CreateMode::Persistent).await {
            // Another client may create the same parent concurrently.
            Ok(_) | Err(ZkError::NodeExists(_)) => {}
            Err(e) => return Err(e),
        }
    }
    client
        .create(path, data, CreateMode::Persistent)
        .await
        .map(|_| ())
}

/// Creates every path of `ZkData.PersistentZkPaths` that is missing (empty data).
pub async fn ensure_persistent_paths(client: &dyn ZkClient) -> Result<(), ZkError> {
    for path in PERSISTENT_ZK_PATHS {
        match create_recursive(client, path, b"").await {
            Ok(()) | Err(ZkError::NodeExists(_)) => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

/// Returns the cluster id stored at `/cluster/id`, storing `proposed` first if there is none
/// (Kafka's `createOrGetClusterId`; the first broker to write wins).
pub async fn create_or_get_cluster_id(
    client: &dyn ZkClient,
    proposed: &str,
) -> Result<String, ZkError> {
    let decode = |data: &[u8]| {
        zk_data::decode_cluster_id(data).map_err(|e| ZkError::Io(format!("/cluster/id: {e}")))
    };
    match client.get_data(CLUSTER_ID_PATH, false).await {
        Ok((data, _)) => return decode(&data),
        Err(ZkError::NoNode(_)) => {}
        Err(e) => return Err(e),
    }
    match create_recursive(
        client,
        CLUSTER_ID_PATH,
        &zk_data::encode_cluster_id(proposed),
    )
    .await
    {
        Ok(()) => Ok(proposed.to_string()),
        Err(ZkError::NodeExists(_)) => decode(&client.get_data(CLUSTER_ID_PATH, false).await?.0),
        Err(e) => Err(e),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::zk::EmbeddedStore;

    #[tokio::test]
    async fn startup_recipes() {
        let store = EmbeddedStore::in_memory();
        let c = store.session();
        ensure_persistent_paths(&c).await.unwrap();
        ensure_persistent_paths(&c).await.unwrap();
        for p in PERSISTENT_ZK_PATHS {
            assert!(c.exists(p, false).await.unwrap().is_some(), "{p}");
        }
        assert_eq!(c.get_children("/config", false).await.unwrap().0.len(), 6);
        create_recursive(&c, "/brokers/topics/t/partitions/0/state", b"{}")
            .await
            .unwrap();
        assert_eq!(
            c.get_data("/brokers/topics/t/partitions/0/state", false)
                .await
                .unwrap()
                .0,
            b"{}"
        );
        assert_eq!(c.get_data("/brokers/topics/t", false).await.unwrap().0, b"");
        assert!(matches!(
            create_recursive(&c, "/brokers/topics/t", b"").await,
            Err(ZkError::NodeExists(_))
        ));
        assert_eq!(
            create_or_get_cluster_id(&c, "first").await.unwrap(),
            "first"
        );
        let other = store.session();
        assert_eq!(
            create_or_get_cluster_id(&other, "second").await.unwrap(),
            "first"
        );
        assert_eq!(
            c.get_data(CLUSTER_ID_PATH, false).await.unwrap().0,
            br#"{"version":"1","id":"first"}"#
        );
    }
}
