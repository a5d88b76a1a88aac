//! Errors that stop the broker from starting or shutting down cleanly. Per-request problems
//! never come here: they are error codes in responses.

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
    #[error("{0}")]
    Unsupported(String),
}
