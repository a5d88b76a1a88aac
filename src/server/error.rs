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
    #[error("metadata store: {0}")]
    KafkaZk(#[from] crate::zk::kafka_zk_client::KafkaZkError),
    #[error("authorizer: {0}")]
    Acl(#[from] super::acl_authorizer::AclError),
    #[error(transparent)]
    Sasl(#[from] super::sasl_listeners::SaslSetupError),
    #[error(transparent)]
    Metrics(#[from] super::metrics::endpoint::MetricsEndpointError),
    #[error("loading topics: {0}")]
    Topics(#[from] super::topic_manager::TopicError),
    /// The log dirs' `meta.properties` name different broker ids.
    #[error(
        "failed to match broker.id across log.dirs: {} in {} and {} in {}",
        first.0, first.1.display(), second.0, second.1.display()
    )]
    InconsistentBrokerId {
        first: (BrokerId, std::path::PathBuf),
        second: (BrokerId, std::path::PathBuf),
    },
    /// `broker.id` differs from the id a log dir's `meta.properties` holds.
    #[error(
        "configured broker.id {configured} doesn't match stored broker.id {stored} in \
         meta.properties of {}",
        dir.display()
    )]
    ConfiguredBrokerIdMismatch {
        configured: BrokerId,
        stored: BrokerId,
        dir: std::path::PathBuf,
    },
    /// `broker.id=-1` with generation off and no `meta.properties` to take it from.
    #[error("broker.id is -1 and broker.id.generation.enable is false: set broker.id")]
    NoBrokerId,
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
