//! The controller's errors. `ControllerMoved` is the one that changes its course: another broker
//! holds a newer controller epoch, so this one resigns.

use crate::zk::kafka_zk_client::KafkaZkError;

#[derive(Debug, thiserror::Error)]
pub(crate) enum ControllerError {
    /// A fenced write found `/controller_epoch` moved on, or a state znode carries a newer
    /// controller epoch than this controller's.
    #[error("controller moved: epoch {controller_epoch} is no longer the active controller's")]
    ControllerMoved { controller_epoch: i32 },
    #[error(transparent)]
    Zk(KafkaZkError),
}

impl From<KafkaZkError> for ControllerError {
    fn from(e: KafkaZkError) -> Self {
        match e {
            KafkaZkError::ControllerMoved { .. } => ControllerError::ControllerMoved {
                controller_epoch: -1,
            },
            other => ControllerError::Zk(other),
        }
    }
}
