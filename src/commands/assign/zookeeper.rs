//! The live inputs from ZooKeeper (`--zookeeper`): brokers and racks from `/brokers/ids`,
//! topics' assignments from `/brokers/topics/<t>`, and the legacy `/admin/reassign_partitions`
//! znode that starts a reassignment without the broker API. Every call is bounded by the
//! connection timeout.

use std::collections::BTreeMap;
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context, anyhow};

use crate::admin::replica_assignment::BrokerMetadata;
use crate::cluster::{BrokerId, TopicPartition};
use crate::zk::kafka_zk_client::{KafkaZkClient, KafkaZkError};
use crate::zk::zk_data::TopicAssignment;
use crate::zk::{ZkClient, ZkError};

/// One session with the ensemble.
#[derive(Debug)]
pub(super) struct Zk {
    client: Arc<dyn ZkClient>,
    kafka: KafkaZkClient,
    connect: String,
    timeout: Duration,
}

/// Whether `/admin/reassign_partitions` could be created.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Started {
    Yes,
    /// It exists: a reassignment started that way is still in progress.
    InProgress,
}

impl Zk {
    /// Connects within `timeout` and checks the chroot exists.
    pub(super) async fn connect(connect: &str, timeout: Duration) -> anyhow::Result<Zk> {
        let client = crate::commands::zookeeper::connect(connect, timeout).await?;
        Ok(Zk::over(client, connect, timeout))
    }

    /// Over any client (the embedded store in tests); `connect` names it in messages.
    pub(super) fn over(client: Arc<dyn ZkClient>, connect: &str, timeout: Duration) -> Zk {
        Zk {
            kafka: KafkaZkClient::new(Arc::clone(&client)),
            client,
            connect: connect.to_string(),
            timeout,
        }
    }

    async fn bounded<T, E>(
        &self,
        what: &str,
        call: impl Future<Output = Result<T, E>>,
    ) -> anyhow::Result<T>
    where
        E: std::error::Error + Send + Sync + 'static,
    {
        match tokio::time::timeout(self.timeout, call).await {
            Err(_) => Err(anyhow!(
                "reading {what} from ZooKeeper {} did not finish within {} ms",
                self.connect,
                self.timeout.as_millis()
            )),
            Ok(result) => result.with_context(|| format!("{what} in ZooKeeper {}", self.connect)),
        }
    }

    /// Every registered broker with its rack, by id.
    pub(super) async fn brokers(&self) -> anyhow::Result<Vec<BrokerMetadata>> {
        let registered = self
            .bounded("/brokers/ids", self.kafka.get_all_brokers_and_epochs(false))
            .await?;
        Ok(registered
            .into_iter()
            .map(|(id, (registration, _))| BrokerMetadata {
                id,
                rack: registration.rack,
            })
            .collect())
    }

    /// The topic's assignment znode, `None` when the topic does not exist.
    pub(super) async fn topic(&self, topic: &str) -> anyhow::Result<Option<TopicAssignment>> {
        let path = format!("/brokers/topics/{topic}");
        let found = self
            .bounded(&path, self.kafka.get_topic(topic, false))
            .await?;
        Ok(found.map(|t| t.assignment))
    }

    /// The partitions `/admin/reassign_partitions` names, `None` when there is none.
    pub(super) async fn pending_reassignment(
        &self,
    ) -> anyhow::Result<Option<Vec<(TopicPartition, Vec<BrokerId>)>>> {
        self.bounded(
            "/admin/reassign_partitions",
            self.kafka.get_partition_reassignment(false),
        )
        .await
    }

    /// Creates `/admin/reassign_partitions` with the targets.
    pub(super) async fn start_reassignment(
        &self,
        targets: &BTreeMap<TopicPartition, Vec<BrokerId>>,
    ) -> anyhow::Result<Started> {
        let partitions: Vec<(TopicPartition, Vec<BrokerId>)> = targets
            .iter()
            .map(|(tp, r)| (tp.clone(), r.clone()))
            .collect();
        let call = self.kafka.create_partition_reassignment(&partitions);
        match tokio::time::timeout(self.timeout, call).await {
            Err(_) => Err(anyhow!(
                "writing /admin/reassign_partitions to ZooKeeper {} did not finish within {} ms",
                self.connect,
                self.timeout.as_millis()
            )),
            Ok(Ok(())) => Ok(Started::Yes),
            Ok(Err(KafkaZkError::Zk(ZkError::NodeExists(_)))) => Ok(Started::InProgress),
            Ok(Err(e)) => Err(anyhow::Error::new(e).context(format!(
                "writing /admin/reassign_partitions to ZooKeeper {}",
                self.connect
            ))),
        }
    }

    pub(super) async fn close(self) {
        let _ = tokio::time::timeout(self.timeout, self.client.close()).await;
    }
}
