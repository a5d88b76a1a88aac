//! The broker's membership in ZooKeeper: its id (Kafka's `KafkaServer.getOrGenerateBrokerId`),
//! its ephemeral `/brokers/ids/<id>` (`KafkaZkClient.registerBroker`, with CheckedEphemeral
//! semantics), and what happens when its session expires: the controller resigns before the new
//! session exists, and once it does the broker registers again (a new czxid, so a new broker
//! epoch) and the election runs again (Kafka's `controller-state-change-handler` with its
//! `RegisterBrokerAndReelect` event).
//!
//! The id: a configured `broker.id` must match every `meta.properties` that names one; `-1`
//! takes the id those files agree on, else, with `broker.id.generation.enable`, the next of
//! ZooKeeper's sequence: `reserved.broker.max.id` plus the new zkVersion of `/brokers/seqid`
//! (so the first generated id is 1001).

use std::path::PathBuf;
use std::sync::{Arc, Weak};

use crate::cluster::BrokerId;
use crate::controller::{ControllerEvent, ControllerHandle};
use crate::storage::meta_properties::MetaProperties;
use crate::zk::checked_ephemeral::create_checked_ephemeral;
use crate::zk::client::{HandlerFuture, StateChangeHandler};
use crate::zk::zk_data::BROKER_SEQUENCE_ID_PATH;
use crate::zk::zk_data::{self, BrokerRegistration};
use crate::zk::{ZkClient, ZkError, recipes};

use super::broker_epoch_manager::BrokerEpochManager;
use super::error::ServerError;

/// Kafka's `getOrGenerateBrokerId` over the log dirs' `meta.properties` and ZooKeeper.
pub(crate) async fn get_or_generate_broker_id(
    configured: BrokerId,
    generation_enable: bool,
    reserved_broker_max_id: i32,
    log_dirs: &[PathBuf],
    zk: &dyn ZkClient,
) -> Result<BrokerId, ServerError> {
    let mut stored: Option<(BrokerId, PathBuf)> = None;
    for dir in log_dirs {
        let meta = match MetaProperties::read(dir) {
            Ok(meta) => meta,
            // An unreadable dir (a dead disk) is the log manager's to take offline, as Kafka's
            // `MetaPropertiesEnsemble` loader lists it among its error dirs and goes on.
            Err(err @ crate::storage::StorageError::Io { .. }) => {
                tracing::warn!(log_dir = %dir.display(), %err, "cannot read meta.properties");
                continue;
            }
            Err(err) => return Err(err.into()),
        };
        let Some(meta) = meta else {
            continue;
        };
        let Some(id) = meta.broker_id else {
            continue;
        };
        match &stored {
            Some((other, other_dir)) if *other != id => {
                return Err(ServerError::InconsistentBrokerId {
                    first: (*other, other_dir.clone()),
                    second: (id, dir.clone()),
                });
            }
            _ => stored = Some((id, dir.clone())),
        }
    }
    match (configured, stored) {
        (configured, Some((id, dir))) if configured >= 0 && configured != id => {
            Err(ServerError::ConfiguredBrokerIdMismatch {
                configured,
                stored: id,
                dir,
            })
        }
        (configured, _) if configured >= 0 => Ok(configured),
        (_, Some((id, _))) => Ok(id),
        (_, None) if generation_enable => {
            let sequence = generate_broker_sequence_id(zk).await?;
            Ok(reserved_broker_max_id.saturating_add(sequence))
        }
        (_, None) => Err(ServerError::NoBrokerId),
    }
}

/// `KafkaZkClient.generateBrokerSequenceId`: an unconditional set of `/brokers/seqid` (created
/// when missing) whose new version is the sequence number.
async fn generate_broker_sequence_id(zk: &dyn ZkClient) -> Result<i32, ZkError> {
    match zk.set_data(BROKER_SEQUENCE_ID_PATH, b"", -1).await {
        Ok(stat) => Ok(stat.version),
        Err(ZkError::NoNode(_)) => {
            match recipes::create_recursive(zk, BROKER_SEQUENCE_ID_PATH, b"").await {
                Ok(()) | Err(ZkError::NodeExists(_)) => {}
                Err(e) => return Err(e),
            }
            zk.set_data(BROKER_SEQUENCE_ID_PATH, b"", -1)
                .await
                .map(|stat| stat.version)
        }
        Err(e) => Err(e),
    }
}

/// Creates `/brokers/ids/<id>` holding `registration`; returns the broker epoch (its czxid). A
/// node of this session (a retried create, or a re-registration) is success; another session's
/// node is [`ServerError::BrokerIdRegistered`], naming the path, as Kafka's startup fails.
pub(crate) async fn register_broker(
    zk: &dyn ZkClient,
    broker_id: BrokerId,
    registration: &BrokerRegistration,
) -> Result<i64, ServerError> {
    let path = zk_data::broker_id_path(broker_id);
    match create_checked_ephemeral(zk, &path, &registration.encode()).await {
        Ok(stat) => Ok(stat.czxid),
        Err(ZkError::NodeExists(path)) => Err(ServerError::BrokerIdRegistered { broker_id, path }),
        Err(e) => Err(e.into()),
    }
}

/// Re-registers the broker and re-runs the election around every new session after an expiry.
pub(crate) struct SessionExpiryHandler {
    pub zk: Weak<dyn ZkClient>,
    pub broker_id: BrokerId,
    pub registration: BrokerRegistration,
    pub epochs: Arc<BrokerEpochManager>,
    pub controller: ControllerHandle,
}

impl std::fmt::Debug for SessionExpiryHandler {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SessionExpiryHandler")
            .field("broker_id", &self.broker_id)
            .finish_non_exhaustive()
    }
}

impl SessionExpiryHandler {
    /// Its name in the session's handler registry.
    pub(crate) const NAME: &'static str = "broker-registration";
}

impl StateChangeHandler for SessionExpiryHandler {
    fn name(&self) -> &str {
        Self::NAME
    }

    fn before_initializing_session(&self) -> HandlerFuture<'_> {
        Box::pin(async move {
            // The old session's `/controller` is gone (or going): stop acting as controller
            // before anything runs on the new session.
            self.controller.put(ControllerEvent::Expire);
        })
    }

    fn after_initializing_session(&self) -> HandlerFuture<'_> {
        Box::pin(async move {
            let Some(zk) = self.zk.upgrade() else {
                return;
            };
            match register_broker(zk.as_ref(), self.broker_id, &self.registration).await {
                Ok(epoch) => {
                    self.epochs.set_broker_epoch(epoch);
                    tracing::info!(
                        broker_id = self.broker_id,
                        broker_epoch = epoch,
                        "registered again after the ZooKeeper session expired"
                    );
                }
                Err(e) => {
                    // Kafka's handler fails the same way and the broker keeps running
                    // unregistered; the next expiry tries again.
                    tracing::error!(broker_id = self.broker_id, %e,
                        "cannot register again after the ZooKeeper session expired");
                }
            }
            self.controller.put(ControllerEvent::Reelect);
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::zk::EmbeddedStore;

    #[tokio::test]
    async fn ids_come_from_config_meta_properties_or_the_sequence() {
        let store_dir = tempfile::tempdir().unwrap();
        let store = EmbeddedStore::open(store_dir.path()).unwrap();
        let zk = store.session();
        recipes::ensure_persistent_paths(&zk).await.unwrap();
        let a = tempfile::tempdir().unwrap();
        let b = tempfile::tempdir().unwrap();
        let dirs = vec![a.path().to_path_buf(), b.path().to_path_buf()];
        // Nothing stored: configured, else generated from 1001 on.
        assert_eq!(
            get_or_generate_broker_id(7, true, 1000, &dirs, &zk)
                .await
                .unwrap(),
            7
        );
        assert_eq!(
            get_or_generate_broker_id(-1, true, 1000, &dirs, &zk)
                .await
                .unwrap(),
            1001
        );
        assert_eq!(
            get_or_generate_broker_id(-1, true, 1000, &dirs, &zk)
                .await
                .unwrap(),
            1002
        );
        assert!(matches!(
            get_or_generate_broker_id(-1, false, 1000, &dirs, &zk).await,
            Err(ServerError::NoBrokerId)
        ));
        // Stored: -1 takes it, a different configured id is refused.
        MetaProperties::zk(1001, "c").write(a.path()).unwrap();
        assert_eq!(
            get_or_generate_broker_id(-1, true, 1000, &dirs, &zk)
                .await
                .unwrap(),
            1001
        );
        let err = get_or_generate_broker_id(5, true, 1000, &dirs, &zk)
            .await
            .unwrap_err();
        assert!(
            err.to_string().contains("5") && err.to_string().contains("1001"),
            "{err}"
        );
        // Two dirs that disagree are refused, naming both.
        MetaProperties::zk(1002, "c").write(b.path()).unwrap();
        let err = get_or_generate_broker_id(-1, true, 1000, &dirs, &zk)
            .await
            .unwrap_err();
        assert!(
            matches!(err, ServerError::InconsistentBrokerId { .. }),
            "{err}"
        );
    }

    #[tokio::test]
    async fn a_registration_of_our_own_session_is_ours_and_another_sessions_is_refused() {
        let store_dir = tempfile::tempdir().unwrap();
        let store = EmbeddedStore::open(store_dir.path()).unwrap();
        let zk = store.session();
        recipes::ensure_persistent_paths(&zk).await.unwrap();
        let registration = BrokerRegistration {
            endpoints: vec![zk_data::EndPoint {
                listener_name: "PLAINTEXT".into(),
                host: "127.0.0.1".into(),
                port: 9092,
                security_protocol: "PLAINTEXT".into(),
            }],
            rack: Some("r1".into()),
            jmx_port: -1,
            timestamp_ms: 1,
        };
        let epoch = register_broker(&zk, 3, &registration).await.unwrap();
        assert_eq!(register_broker(&zk, 3, &registration).await.unwrap(), epoch);
        let (data, _) = zk.get_data("/brokers/ids/3", false).await.unwrap();
        assert!(String::from_utf8(data).unwrap().contains(r#""rack":"r1""#));
        let other = store.session();
        match register_broker(&other, 3, &registration).await {
            Err(ServerError::BrokerIdRegistered { path, .. }) => {
                assert_eq!(path, "/brokers/ids/3")
            }
            other => panic!("{other:?}"),
        }
    }
}
