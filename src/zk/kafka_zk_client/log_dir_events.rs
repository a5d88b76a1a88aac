//! `/log_dir_event_notification`: how a broker whose log dir failed tells the controller
//! (Kafka's `propagateLogDirEvent`), and how the controller reads and removes the
//! notifications (`getAllLogDirEventNotifications`, `getBrokerIdsFromLogDirEvents`,
//! `deleteLogDirEventNotifications`).
//!
//! Each notification is a persistent sequential child `log_dir_event_<%010d>` holding
//! `{"version":1,"broker":b,"event":1}`. It says only "something failed on broker b": the
//! controller then sends that broker a LeaderAndIsr for every replica it hosts and learns the
//! offline ones from the KAFKA_STORAGE_ERROR answers.

use crate::cluster::BrokerId;
use crate::zk::client::{CreateMode, Op, ZkError};
use crate::zk::zk_data;

use super::{ControllerEpoch, KafkaZkClient, KafkaZkError};

impl KafkaZkClient {
    /// A broker's notification that one of its log dirs failed; returns the znode's name.
    pub async fn propagate_log_dir_event(&self, broker: BrokerId) -> Result<String, KafkaZkError> {
        let data = zk_data::encode_log_dir_event(broker);
        let (path, _) = self
            .zk
            .create(
                zk_data::LOG_DIR_EVENT_PREFIX,
                &data,
                CreateMode::PersistentSequential,
            )
            .await?;
        Ok(path)
    }

    /// The notifications' names in sequence order, watching the children when `watch`; none
    /// when the parent does not exist.
    pub async fn get_all_log_dir_event_notifications(
        &self,
        watch: bool,
    ) -> Result<Vec<String>, KafkaZkError> {
        match self
            .zk
            .get_children(zk_data::LOG_DIR_EVENT_NOTIFICATION_PATH, watch)
            .await
        {
            // `get_children` sorts, so the zero-padded sequence numbers come in order.
            Ok((children, _)) => Ok(children),
            Err(ZkError::NoNode(_)) => Ok(Vec::new()),
            Err(e) => Err(e.into()),
        }
    }

    /// The brokers the named notifications report, in their order. A notification that is
    /// gone or unreadable is skipped, as Kafka's `getBrokerIdsFromLogDirEvents` does.
    pub async fn get_broker_ids_from_log_dir_events(
        &self,
        names: &[String],
    ) -> Result<Vec<BrokerId>, KafkaZkError> {
        let mut brokers = Vec::new();
        for name in names {
            let path = format!("{}/{name}", zk_data::LOG_DIR_EVENT_NOTIFICATION_PATH);
            match self.zk.get_data(&path, false).await {
                Ok((data, _)) => match zk_data::decode_log_dir_event(&data) {
                    Ok(broker) => brokers.push(broker),
                    Err(err) => tracing::warn!(%path, %err, "ignoring a malformed log dir event"),
                },
                Err(ZkError::NoNode(_)) => {}
                Err(e) => return Err(e.into()),
            }
        }
        Ok(brokers)
    }

    /// Removes the named notifications once handled, each delete fenced; one already gone is
    /// fine.
    pub async fn delete_log_dir_event_notifications(
        &self,
        epoch: ControllerEpoch,
        names: &[String],
    ) -> Result<(), KafkaZkError> {
        for name in names {
            let op = Op::Delete {
                path: format!("{}/{name}", zk_data::LOG_DIR_EVENT_NOTIFICATION_PATH),
                version: -1,
            };
            match self.fenced(epoch, op).await {
                Ok(_) | Err(KafkaZkError::Zk(ZkError::NoNode(_))) => {}
                Err(e) => return Err(e),
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use crate::zk::EmbeddedStore;
    use crate::zk::client::ZkClient;
    use crate::zk::recipes::ensure_persistent_paths;

    use super::*;

    async fn listed(zk: &KafkaZkClient) -> Vec<String> {
        zk.get_all_log_dir_event_notifications(false).await.unwrap()
    }

    #[tokio::test]
    async fn notifications_are_created_in_sequence_read_and_deleted_fenced() {
        let store = EmbeddedStore::in_memory();
        let session: Arc<dyn ZkClient> = Arc::new(store.session());
        ensure_persistent_paths(session.as_ref()).await.unwrap();
        let zk = KafkaZkClient::new(session);
        let epoch = zk
            .register_controller_and_increment_controller_epoch(1, 0)
            .await
            .unwrap();
        assert!(listed(&zk).await.is_empty());
        let first = zk.propagate_log_dir_event(3).await.unwrap();
        let second = zk.propagate_log_dir_event(2).await.unwrap();
        assert_eq!(
            first,
            "/log_dir_event_notification/log_dir_event_0000000000"
        );
        assert!(second > first);
        let names = listed(&zk).await;
        assert_eq!(
            names,
            ["log_dir_event_0000000000", "log_dir_event_0000000001"]
        );
        assert_eq!(
            zk.get_broker_ids_from_log_dir_events(&names).await.unwrap(),
            [3, 2]
        );

        // A successor's epoch fences the old controller's deletes.
        let stale = epoch;
        zk.zk().delete(zk_data::CONTROLLER_PATH, -1).await.unwrap();
        zk.register_controller_and_increment_controller_epoch(2, 0)
            .await
            .unwrap();
        assert!(matches!(
            zk.delete_log_dir_event_notifications(stale, &names).await,
            Err(KafkaZkError::ControllerMoved { .. })
        ));
        assert_eq!(listed(&zk).await, names, "a fenced delete removes nothing");
        let current = zk.get_controller_epoch().await.unwrap().unwrap();
        zk.delete_log_dir_event_notifications(current, &names)
            .await
            .unwrap();
        assert!(listed(&zk).await.is_empty());
    }
}
