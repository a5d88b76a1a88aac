//! Errors that stop the broker from starting or shutting down cleanly. Per-request problems
//! never come here: they are error codes in responses.

use crate::cluster::BrokerId;
use crate::config::ConfigError;
use crate::network::NetworkError;
use crate::storage::StorageError;
use crate::zk::ZkError;

#[derive(Debug, thiserror::Error)]
pub enum ServerError {
    #[error(transparent)]
    Config(#[from] ConfigError),
    #[error(transparent)]
    Storage(#[from] StorageError),
    #[error(transparent)]
    Network(#[from] NetworkError),
    #[error("metadata store: {0}")]
    Zk(#[from] ZkError),
    #[error("metadata store: {0}")]
    ZkData(#[from] crate::zk::zk_data::ZkDataError),
    #[error("loading topics: {0}")]
    Topics(#[from] super::topic_manager::TopicError),
    /// `zookeeper.connect` names an ensemble, but this build runs only the single-node broker.
    #[error(
        "zookeeper.connect is set ({zookeeper_connect}), but cluster mode is not available yet; \
         unset it to run the single-node broker"
    )]
    ClusterModeUnavailable { zookeeper_connect: String },
    /// Another live broker holds `/brokers/ids/<id>`.
    #[error("broker.id {broker_id} is already registered in the metadata store at {path}")]
    BrokerIdRegistered { broker_id: BrokerId, path: String },
    /// Someone took the store session's watch events before the dispatcher.
    #[error(transparent)]
    Watches(#[from] crate::zk::watch_dispatcher::EventsTaken),
    /// A blocking task of the startup or shutdown sequence panicked or was cancelled.
    #[error("the {task} task failed")]
    TaskFailed {
        task: &'static str,
        #[source]
        source: tokio::task::JoinError,
    },
}
