//! `KafkaServer`: the broker's lifecycle (Kafka's `KafkaServer.startup` and `shutdown`).
//!
//! Startup, in Kafka's order where it matters: open the metadata store (the embedded store,
//! whose files `zk-snapshot`, `zk-log` and `zk.lock` sit in the first log dir beside Kafka's
//! own checkpoint files), create the persistent paths, get or create the cluster id, read the
//! dynamic broker configs, load the logs, read the SASL users (`/config/users`; the listeners'
//! JAAS configs), bind the listeners (requests wait until startup is done), register the broker as an
//! ephemeral `/brokers/ids/<id>` (its czxid is the broker epoch), become the controller
//! (ephemeral `/controller` and `/controller_epoch` + 1, in one multi), load the topics and
//! lead their partitions, get the first block of producer ids from the controller
//! (AllocateProducerIds, in process when this broker is the controller), start listening for
//! config change notifications, start the log manager's background jobs, and open for requests.
//! Each phase is a function in `startup` (what it starts and needs in its doc); what the
//! components are set up with, derived from the config alone, is in `settings`. The metadata
//! store and the clock come from outside the phases: `kcli serve` opens the store its config
//! names and reads the system clock, and a test hands `startup_with` an embedded store and a
//! clock of its own, to run a broker in process.
//!
//! Shutdown: a cluster broker first has the controller move its leaderships away (controlled
//! shutdown, `controlled.shutdown.enable`), then: end the purgatory's waits (parked fetches and produces answer with what they have),
//! stop accepting and answer the requests in flight, stop the background jobs, close
//! every log (checkpoints, trimmed indexes, the clean-shutdown marker), close the store session
//! (its ephemerals go).

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::watch;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use crate::cluster::time::{self, Time};
use crate::config::BrokerConfig;
use crate::metrics::MetricsSource;
use crate::network::{BoundEndPoint, SocketServer};
use crate::replication::ReplicaSelector;
use crate::storage::log_manager::LogManager;
use crate::zk::session::ZkSession;
use crate::zk::{EmbeddedStore, WatchDispatcher, ZkClient};

use super::broker_epoch_manager::BrokerEpochManager;
use super::broker_to_controller_channel::BrokerToControllerChannelManager;
use super::controlled_shutdown::{ControlledShutdownSettings, controlled_shutdown};
use super::error::ServerError;
use super::kafka_apis::KafkaApis;
use super::zk_producer_id_manager::ZkProducerIdManager;

mod broker_metrics;
mod settings;
mod startup;

/// A running broker.
#[derive(Debug)]
pub struct KafkaServer {
    config: Arc<BrokerConfig>,
    socket_server: SocketServer,
    log_manager: Arc<LogManager>,
    zk: Arc<dyn ZkClient>,
    apis: Arc<KafkaApis>,
    broker_epoch: i64,
    /// This broker's epoch as it is now (a re-registration after a session expiry changes it).
    epochs: Arc<BrokerEpochManager>,
    to_controller: Arc<BrokerToControllerChannelManager>,
    /// Routes the store session's watch events; dropped last, with the server.
    _watches: WatchDispatcher,
    background: CancellationToken,
    tasks: TaskTracker,
    _ready: watch::Sender<bool>,
    /// The clock the broker was started with; the logs close at its time.
    time: Arc<dyn Time>,
    /// Set when the broker must halt (every log dir failed).
    fatal: watch::Receiver<Option<String>>,
    /// The metrics sources the registry holds weakly, alive as long as the server.
    _metric_sources: Vec<Arc<dyn MetricsSource>>,
    metrics_address: Option<std::net::SocketAddr>,
}

impl KafkaServer {
    /// Starts a broker with `config`; returns once it serves requests.
    ///
    /// The phases (in `startup`, one function each) run in Kafka's order where it matters: the
    /// identity before the logs (the broker id names the logs' `meta.properties`, the dynamic
    /// configs set the log defaults); the listeners bound before the registration (it
    /// advertises their resolved ports), with requests held until the end; the registration
    /// before the controller (a single broker elects itself from it); the controller before
    /// the producer ids and the config listeners (both may reach it); the background jobs last.
    pub async fn startup(config: BrokerConfig) -> Result<KafkaServer, ServerError> {
        config.validate()?;
        let log_dirs = log_dirs(&config)?;
        let Some(first_dir) = log_dirs.first() else {
            return Err(crate::storage::StorageError::NoLogDirs.into());
        };
        let store = MetadataStore::open(&config, first_dir).await?;
        Self::start(config, log_dirs, store, time::system()).await
    }

    /// Starts a broker with `config` on a metadata store and a clock given by the caller, as
    /// [`startup`](Self::startup) does on the store its config names and the system clock: so
    /// a test can run a broker in process, on an embedded store it keeps a session of, at a
    /// time it sets. The clock is the one startup and shutdown read and hand to the components
    /// that take one (the controller, the config and ACL change listeners, the log loading and
    /// closing, the registration's timestamp).
    #[cfg(test)]
    pub(crate) async fn startup_with(
        config: BrokerConfig,
        store: MetadataStore,
        time: Arc<dyn Time>,
    ) -> Result<KafkaServer, ServerError> {
        config.validate()?;
        let log_dirs = log_dirs(&config)?;
        Self::start(config, log_dirs, store, time).await
    }

    /// The phases of startup, after the config is validated and the store opened.
    async fn start(
        config: BrokerConfig,
        log_dirs: Vec<PathBuf>,
        store: MetadataStore,
        time: Arc<dyn Time>,
    ) -> Result<KafkaServer, ServerError> {
        let MetadataStore {
            client: zk,
            metrics: zk_metrics,
        } = store;
        let identity = startup::identify(config, &log_dirs, zk.as_ref()).await?;
        let config = Arc::clone(&identity.config);
        let cluster_id = identity.cluster_id.clone();
        let current = Arc::clone(&identity.layers.current);
        let log_manager = startup::start_log_manager(
            &config,
            &current,
            log_dirs,
            &identity.cluster_id,
            time.milliseconds(),
        )?;
        let shared = startup::Shared {
            config: Arc::clone(&config),
            current,
            zk,
            time,
            epochs: Arc::new(BrokerEpochManager::default()),
            background: CancellationToken::new(),
            tasks: TaskTracker::new(),
        };
        let mut metrics = startup::BrokerMetrics::new();
        let core = startup::create_replica_manager(
            &shared,
            identity,
            &log_manager,
            zk_metrics,
            &mut metrics,
        );
        let zk_producer_id_manager = Arc::new(ZkProducerIdManager::new(
            config.broker_id,
            Arc::clone(&shared.zk),
        ));
        let security = startup::listener_security(&config, shared.zk.as_ref()).await?;
        let controller = startup::create_controller(
            &shared,
            &security.client_security,
            &core.metadata_cache,
            &zk_producer_id_manager,
            &mut metrics,
        );
        startup::start_isr_management(&shared, &core, &controller.to_controller);
        // `replica.selector.class` (KIP-392), validated with the config: an unknown class never
        // gets here. Replicas are offered where the metadata cache has them.
        if let Some(selector) = ReplicaSelector::from_class_name(&config.replica_selector_class) {
            core.replica_manager
                .set_replica_selector(selector, Arc::clone(&core.metadata_cache) as _);
        }
        let coordinators = startup::create_coordinators(
            &shared,
            &core,
            &controller.to_controller,
            &security.client_security,
            &mut metrics,
        )
        .await?;
        let producer_id_manager = Arc::clone(&coordinators.producer_id_manager);
        let group_coordinator = Arc::clone(&coordinators.group);
        let txn_coordinator = Arc::clone(&coordinators.txn);
        let (ready_tx, ready_rx) = watch::channel(false);
        startup::configure_replica_fetchers(&shared, &core, security.client_security);
        let access = startup::create_authorizer_and_quotas(&shared, &mut metrics)?;
        let apis = startup::create_apis(
            &shared,
            &core,
            &controller,
            coordinators,
            &access,
            zk_producer_id_manager,
            ready_rx,
        );
        let socket_server = startup::start_socket_server(
            &config,
            security.listeners,
            &apis,
            &access.quota_configs,
            &mut metrics,
        )
        .await?;
        let (broker_epoch, topics) = startup::register_this_broker(
            &shared,
            &core,
            socket_server.bound_endpoints(),
            &controller.handle,
        )
        .await?;
        let watches = startup::start_controller(
            &shared,
            controller.controller,
            &controller.handle,
            &core.metadata_cache,
        )
        .await?;
        startup::request_first_producer_ids(&config, &producer_id_manager).await;
        startup::start_config_listeners(
            &shared,
            &watches,
            &core,
            &controller.handle,
            &security.sasl,
            &access,
        )
        .await?;
        // Moves between log dirs interrupted by the last stop resume.
        core.replica_manager.maybe_add_log_dir_fetchers();
        group_coordinator.startup(Vec::new());
        txn_coordinator.startup();
        let fatal = startup::start_background_jobs(&shared, &log_manager, &core.replica_manager);
        let metrics_address = startup::start_metrics_endpoint(&shared, &metrics).await?;
        let _ = ready_tx.send(true);
        tracing::info!(
            broker_id = config.broker_id,
            // Kafka logs it as the czxid of the registration: the broker epoch.
            broker_epoch,
            %cluster_id,
            topics,
            listeners = ?socket_server.bound_endpoints(),
            "started kcli broker"
        );
        let startup::Shared {
            zk,
            time,
            epochs,
            background,
            tasks,
            ..
        } = shared;
        Ok(KafkaServer {
            config,
            socket_server,
            log_manager,
            zk,
            apis,
            broker_epoch,
            epochs,
            to_controller: controller.to_controller,
            _watches: watches,
            background,
            tasks,
            _ready: ready_tx,
            time,
            fatal,
            _metric_sources: metrics.sources,
            metrics_address,
        })
    }

    /// Where the metrics endpoint listens (its port resolved), when `kcli.metrics.listener`
    /// is set.
    pub fn metrics_address(&self) -> Option<std::net::SocketAddr> {
        self.metrics_address
    }

    /// The listeners with the addresses they were bound to (port 0 resolved).
    pub fn bound_endpoints(&self) -> &[BoundEndPoint] {
        self.socket_server.bound_endpoints()
    }

    pub fn config(&self) -> &BrokerConfig {
        &self.config
    }

    /// Waits until the broker must halt (every log dir failed) and returns why; Kafka halts
    /// the process without a shutdown then.
    pub async fn fatal_error(&self) -> String {
        let mut fatal = self.fatal.clone();
        match fatal.wait_for(Option::is_some).await {
            Ok(reason) => reason.clone().unwrap_or_default(),
            // The sender lives as long as the handler; it went with the broker's tasks.
            Err(_) => std::future::pending().await,
        }
    }

    /// Shuts down cleanly: in-flight requests are answered, the logs closed with their
    /// checkpoints and the clean-shutdown marker, the store session closed.
    pub async fn shutdown(self) -> Result<(), ServerError> {
        tracing::info!("shutting down");
        // Leaderships move while this broker still serves, so its followers and clients move to
        // the new leaders before its registration goes. A single broker has nowhere to move them.
        if self.config.zookeeper_connect.is_some() && self.config.controlled_shutdown_enable {
            let settings = ControlledShutdownSettings {
                max_retries: self.config.controlled_shutdown_max_retries,
                retry_backoff: Duration::from_millis(
                    u64::try_from(self.config.controlled_shutdown_retry_backoff_ms).unwrap_or(0),
                ),
                attempt_timeout: millis(self.config.controller_socket_timeout_ms),
            };
            controlled_shutdown(settings, || {
                self.to_controller
                    .controlled_shutdown(self.epochs.broker_epoch())
            })
            .await;
        }
        // Parked fetches and produces answer now, so the socket server's graceful stop does
        // not wait out their timeouts.
        self.apis.replica_manager.begin_shutdown();
        // Parked JoinGroup/SyncGroup answers go out (NOT_COORDINATOR) and the group timers stop.
        self.apis.group_coordinator.shutdown().await;
        // Timers stop; markers not yet written are sent again by the next coordinator's load.
        self.apis.txn_coordinator.shutdown().await;
        self.socket_server.shutdown().await;
        self.background.cancel();
        self.tasks.close();
        self.tasks.wait().await;
        // Moves stop; their future logs are closed with the others and resume at the next start.
        self.apis.replica_manager.alter_log_dirs().shutdown().await;
        // Follower appends stop before the logs close.
        self.apis
            .replica_manager
            .replica_fetcher_manager()
            .shutdown()
            .await;
        let log_manager = Arc::clone(&self.log_manager);
        let broker_epoch = self.broker_epoch;
        let time = Arc::clone(&self.time);
        tokio::task::spawn_blocking(move || {
            log_manager.shutdown(broker_epoch, time.milliseconds())
        })
        .await
        .map_err(|source| ServerError::TaskFailed {
            task: "log shutdown",
            source,
        })??;
        self.zk.close().await?;
        tracing::info!("shut down cleanly");
        Ok(())
    }
}

/// The broker's metadata store (Kafka's `KafkaZkClient`): the embedded store or a session with
/// a ZooKeeper ensemble, with the client's metrics source when it has one.
pub(crate) struct MetadataStore {
    pub(crate) client: Arc<dyn ZkClient>,
    pub(crate) metrics: Option<Arc<dyn MetricsSource>>,
}

impl MetadataStore {
    /// A session with the ZooKeeper ensemble of `zookeeper.connect` (its chroot created when
    /// missing), or, without it, the embedded store whose files sit in the first log dir; the
    /// embedded store has no metrics source.
    async fn open(config: &BrokerConfig, first_dir: &std::path::Path) -> Result<Self, ServerError> {
        let Some(connect) = &config.zookeeper_connect else {
            // The embedded store lives in the first log dir. With ZooKeeper nothing is kept
            // there, and a dir that cannot be made is the log manager's to take offline.
            std::fs::create_dir_all(first_dir)
                .map_err(|e| crate::storage::StorageError::io(first_dir, e))?;
            let store = EmbeddedStore::open(first_dir)?;
            return Ok(MetadataStore {
                client: Arc::new(store.session()),
                metrics: None,
            });
        };
        let session = ZkSession::connect(
            connect,
            millis(config.zookeeper_session_timeout_ms),
            millis(config.zookeeper_connection_timeout_ms()),
        )
        .await?;
        tracing::info!(zookeeper_connect = %connect, session_id = format!("{:#x}", session.session_id()),
            "connected to ZooKeeper");
        let metrics = session.metrics();
        Ok(MetadataStore {
            client: Arc::new(session),
            metrics: Some(metrics),
        })
    }
}

/// The log dirs of `config`; at least one.
fn log_dirs(config: &BrokerConfig) -> Result<Vec<PathBuf>, ServerError> {
    let log_dirs: Vec<PathBuf> = config.log_dirs().into_iter().map(PathBuf::from).collect();
    if log_dirs.is_empty() {
        return Err(crate::storage::StorageError::NoLogDirs.into());
    }
    Ok(log_dirs)
}

/// `time` as the components that take a clock take it: a function of no arguments.
fn clock(time: &Arc<dyn Time>) -> impl Fn() -> i64 + Send + Sync + 'static {
    let time = Arc::clone(time);
    move || time.milliseconds()
}

/// A `*.ms` setting as a duration (negative values, which the config refuses, as zero).
fn millis(ms: i32) -> Duration {
    Duration::from_millis(u64::try_from(ms).unwrap_or(0))
}

#[cfg(test)]
mod tests {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    use super::*;
    use crate::cluster::time::MockTime;
    use crate::config::KCLI_SERVE_BASE;
    use crate::storage::clean_shutdown::CLEAN_SHUTDOWN_FILENAME;
    use crate::zk::zk_data::{BrokerRegistration, broker_id_path};

    /// Registered at the mock clock's time, so the broker read the clock it was given.
    const NOW_MS: i64 = 1_700_000_000_000;

    /// ApiVersions v0 with correlation id `correlation_id` and a null client id, framed.
    fn api_versions_v0(correlation_id: i32) -> Vec<u8> {
        let mut frame = 10_i32.to_be_bytes().to_vec();
        frame.extend_from_slice(&18_i16.to_be_bytes());
        frame.extend_from_slice(&0_i16.to_be_bytes());
        frame.extend_from_slice(&correlation_id.to_be_bytes());
        frame.extend_from_slice(&(-1_i16).to_be_bytes());
        frame
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_broker_starts_in_process_on_an_embedded_store_and_a_given_clock() {
        let dir = tempfile::tempdir().unwrap();
        let overrides = [
            "listeners=PLAINTEXT://127.0.0.1:0".to_string(),
            format!("log.dirs={}", dir.path().display()),
        ];
        let config = BrokerConfig::load_with_base(KCLI_SERVE_BASE, None, &overrides).unwrap();
        let embedded = EmbeddedStore::open(dir.path()).unwrap();
        // A second session watches the broker's from outside.
        let observer = embedded.session();
        let store = MetadataStore {
            client: Arc::new(embedded.session()),
            metrics: None,
        };
        let server = KafkaServer::startup_with(config, store, Arc::new(MockTime::new(NOW_MS)))
            .await
            .unwrap();

        let address = server.bound_endpoints()[0].address;
        let mut socket = tokio::net::TcpStream::connect(address).await.unwrap();
        socket.write_all(&api_versions_v0(7)).await.unwrap();
        let size = socket.read_i32().await.unwrap();
        let mut response = vec![0; usize::try_from(size).unwrap()];
        socket.read_exact(&mut response).await.unwrap();
        assert_eq!(response[..4], 7_i32.to_be_bytes(), "correlation id");
        assert_eq!(response[4..6], 0_i16.to_be_bytes(), "error code");
        let api_count = i32::from_be_bytes(response[6..10].try_into().unwrap());
        assert!(api_count > 0, "{api_count} APIs advertised");

        let (data, _) = observer.get_data(&broker_id_path(0), false).await.unwrap();
        let registration = BrokerRegistration::decode(&data).unwrap();
        assert_eq!(registration.timestamp_ms, NOW_MS);

        drop(socket);
        server.shutdown().await.unwrap();
        assert_eq!(
            observer.exists(&broker_id_path(0), false).await.unwrap(),
            None
        );
        assert!(dir.path().join(CLEAN_SHUTDOWN_FILENAME).exists());
    }
}
