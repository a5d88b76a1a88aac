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

use crate::config::{BrokerConfig, ConfigError};
use crate::controller::channel_manager::BrokerChannel;
use crate::controller::controller_request_batch::BatchConfig;
use crate::controller::event_for_watch;
use crate::controller::inter_broker_versions::ControllerRequestVersions;
use crate::controller::{ControllerConfig, ControllerEvent, ControllerHandle, KafkaController};
use crate::metrics::{MetricsRegistry, MetricsSource};
use crate::network::{BoundEndPoint, ClientSecurity, EndPoint, SocketServer, SocketServerConfig};
use crate::replication::ReplicaManager;
use crate::replication::metrics::ReplicaManagerMetrics;
use crate::replication::replica_fetcher::ReplicaFetcherConfig;
use crate::storage::log_manager::{LogManager, LogManagerConfig, now_ms};
use crate::zk::kafka_zk_client::KafkaZkClient;
use crate::zk::session::ZkSession;
use crate::zk::zk_data::{self, BrokerRegistration};
use crate::zk::{EmbeddedStore, WatchDispatcher, ZkClient, recipes};

use super::acl_authorizer::AclAuthorizer;
use super::add_partitions_to_txn_manager::AddPartitionsToTxnManager;
use super::alter_partition_manager::{AlterPartitionChannel, DefaultAlterPartitionManager};
use super::auth_helper::AuthHelper;
use super::broker_epoch_manager::BrokerEpochManager;
use super::broker_registration::{
    SessionExpiryHandler, get_or_generate_broker_id, register_broker,
};
use super::broker_to_controller_channel::{
    BrokerToControllerChannel, BrokerToControllerChannelManager,
};
use super::client_quota_admin::ClientQuotaAdmin;
use super::client_quota_configs::{
    ClientQuotaConfigs, QuotaConfigHandler, QuotaEntityConfigHandler,
};
use super::config_change_listener::{
    BrokerConfigHandler, ConfigChangeListener, ConfigHandler, TopicConfigHandler,
    load_all_entity_configs,
};
use super::controlled_shutdown::{ControlledShutdownSettings, controlled_shutdown};
use super::controller_channel::ControllerChannel;
use super::coordinators::{new_group_coordinator, new_transaction_coordinator};
use super::dynamic_broker_config::{DynamicBrokerConfig, DynamicLayers};
use super::error::ServerError;
use super::kafka_apis::KafkaApis;
use super::log_dir_failure_handler::LogDirFailureHandler;
use super::metadata_cache::{BrokerEndPoint, BrokerMetadata, MetadataCache};
use super::quota::{IpConnectionRateHandler, QuotaManagers, connection_limits};
use super::remote_leader_end_point::{RemoteLeaderEndPoints, ReplicaFetchSettings};
use super::rpc_producer_id_manager::RpcProducerIdManager;
use super::sasl_listeners::SaslListeners;
use super::scram_credential_cache::{USERS_ENTITY_TYPE, UserConfigHandler};
use super::ssl_listeners::{inter_broker_client_tls, listener_tls};
use super::topic_manager::TopicManager;
use super::user_scram_admin::UserScramAdmin;
use super::zk_producer_id_manager::ZkProducerIdManager;
use crate::coordinator::CoordinatorLeadership;
use crate::metrics::sampled_stat::QuotaWindow;
use crate::replication::alter_partition::{AlterPartitionManager, ReplicaEligibility};
use crate::security::acl::AuthorizerSettings;

/// Kafka's `AclAuthorizer` when `authorizer.class.name` names it (validated with the
/// config), over the broker's metadata store.
fn new_authorizer(
    config: &BrokerConfig,
    zk: &Arc<dyn ZkClient>,
) -> Result<Option<Arc<AclAuthorizer>>, ServerError> {
    if config.authorizer_class_name.trim().is_empty() {
        return Ok(None);
    }
    let super_users =
        AuthorizerSettings::parse_super_users(config.super_users.as_deref().unwrap_or(""))
            .map_err(|reason| ConfigError::InvalidValue {
                key: "super.users".to_string(),
                value: config.super_users.clone().unwrap_or_default(),
                reason,
            })?;
    let settings = AuthorizerSettings {
        super_users,
        allow_everyone_if_no_acl_found: config.allow_everyone_if_no_acl_found,
    };
    Ok(Some(AclAuthorizer::new(Arc::clone(zk), settings)))
}

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
    /// Set when the broker must halt (every log dir failed).
    fatal: watch::Receiver<Option<String>>,
    /// The metrics sources the registry holds weakly, alive as long as the server.
    _metric_sources: Vec<Arc<dyn MetricsSource>>,
    metrics_address: Option<std::net::SocketAddr>,
}

impl KafkaServer {
    /// Starts a broker with `config`; returns once it serves requests.
    pub async fn startup(config: BrokerConfig) -> Result<KafkaServer, ServerError> {
        config.validate()?;
        let log_dirs: Vec<PathBuf> = config.log_dirs().into_iter().map(PathBuf::from).collect();
        let Some(first_dir) = log_dirs.first() else {
            return Err(crate::storage::StorageError::NoLogDirs.into());
        };
        let (zk, zk_metrics) = open_metadata_store(&config, first_dir).await?;
        recipes::ensure_persistent_paths(zk.as_ref()).await?;
        let proposed = zk_data::topic_id_to_string(zk_data::random_uuid());
        let cluster_id = recipes::create_or_get_cluster_id(zk.as_ref(), &proposed).await?;
        let broker_id = get_or_generate_broker_id(
            config.broker_id,
            config.broker_id_generation_enable,
            config.reserved_broker_max_id,
            &log_dirs,
            zk.as_ref(),
        )
        .await?;
        let config = Arc::new(config.with_broker_id(broker_id));
        // Dynamic broker configs apply from the start, as Kafka's `DynamicBrokerConfig
        // .initialize` reads them before the log manager starts.
        let (per_broker, cluster_default) =
            DynamicBrokerConfig::load_persisted(zk.as_ref(), config.broker_id).await?;
        let layers = DynamicLayers::from_persisted(&config, &per_broker, &cluster_default);
        let current = Arc::clone(&layers.current);

        let mut log_config = LogManagerConfig::new(log_dirs, config.broker_id, cluster_id.clone());
        log_config.default_log_config = current.log_config();
        log_config.retention_check_interval_ms =
            u64::try_from(config.log_retention_check_interval_ms).unwrap_or(300_000);
        log_config.cleaner = config.cleaner_config();
        log_config.high_watermark_checkpoint_interval_ms =
            u64::try_from(config.replica_high_watermark_checkpoint_interval_ms).unwrap_or(5_000);
        // Dynamic in Kafka: the stored dynamic layers apply from the start.
        log_config.producer_id_expiration_ms = i64::from(current.producer_id_expiration_ms);
        log_config.producer_id_expiration_check_interval_ms =
            u64::try_from(config.producer_id_expiration_check_interval_ms).unwrap_or(600_000);
        // Kafka schedules a non-positive period once, as it does `Long.MAX_VALUE`.
        log_config.log_flush_scheduler_interval_ms =
            u64::try_from(config.log_flush_scheduler_interval_ms)
                .ok()
                .filter(|ms| *ms > 0)
                .unwrap_or(u64::MAX);
        let log_manager = Arc::new(LogManager::startup(log_config, now_ms())?);

        let metadata_cache = Arc::new(MetadataCache::new(cluster_id.clone()));
        let replica_manager = Arc::new(ReplicaManager::new(
            config.broker_id,
            Arc::clone(&log_manager),
        ));
        let metrics = Arc::new(MetricsRegistry::new());
        let mut metric_sources: Vec<Arc<dyn MetricsSource>> = vec![
            replica_manager.topic_stats(),
            Arc::new(ReplicaManagerMetrics::new(&replica_manager)),
            Arc::new(super::metrics::kafka_server_metrics::KafkaServerMetrics),
        ];
        metric_sources.push(Arc::new(replica_manager.replication_quotas().clone()));
        metric_sources.extend(zk_metrics);
        for source in &metric_sources {
            metrics.register(source);
        }
        let topic_manager = Arc::new(TopicManager::new(
            Arc::clone(&zk),
            Arc::clone(&current),
            Arc::clone(&metadata_cache),
            Arc::clone(&replica_manager),
        ));
        let dynamic_config = Arc::new(DynamicBrokerConfig::new(
            Arc::clone(&zk),
            Arc::clone(&config),
            layers,
            Arc::clone(&topic_manager),
        ));
        dynamic_config.apply_replication_throttles();
        replica_manager
            .replication_quotas()
            .set_window(QuotaWindow {
                samples: u32::try_from(config.replication_quota_window_num).unwrap_or(11),
                window_ms: i64::from(config.replication_quota_window_size_seconds) * 1000,
            });
        let background = CancellationToken::new();
        let tasks = TaskTracker::new();
        let epochs = Arc::new(BrokerEpochManager::default());
        let zk_producer_id_manager =
            Arc::new(ZkProducerIdManager::new(config.broker_id, Arc::clone(&zk)));
        // Read the TLS stores first: a bad one stops the broker before anything is written.
        let client_tls = inter_broker_client_tls(&config)?;
        // SASL listeners' authenticators and users (loaded before any listener accepts), and
        // the broker's own credentials when the inter-broker listener is a SASL one.
        let sasl = SaslListeners::from_config(&config)?;
        sasl.scram_cache.load_all(zk.as_ref()).await?;
        let client_security = ClientSecurity {
            tls: client_tls,
            authenticator: sasl.inter_broker_client.clone(),
        };
        let mut listeners = Vec::with_capacity(config.listeners.len());
        for l in &config.listeners {
            let mut endpoint = EndPoint::new(
                l.listener_name.clone(),
                l.host.clone().unwrap_or_default(),
                l.port,
            );
            // SASL_SSL: the TLS handshake first, then the SASL exchange over it.
            if let Some(tls) = listener_tls(&config, l)? {
                endpoint = endpoint.with_tls(tls);
            }
            if let Some(authenticator) = sasl.authenticators.get(&l.listener_name) {
                endpoint = endpoint.with_authenticator(authenticator.clone());
            }
            listeners.push(endpoint);
        }
        let channel = Arc::new(
            ControllerChannel::new(config.broker_id).with_client_security(client_security.clone()),
        );
        let (controller, controller_handle) = KafkaController::new(
            controller_config(&config),
            KafkaZkClient::new(Arc::clone(&zk)),
            Arc::clone(&channel) as Arc<dyn BrokerChannel>,
            Arc::new(now_ms),
        );
        let controller_metrics = controller.metrics();
        metrics.register(&controller_metrics);
        metric_sources.push(controller_metrics);
        let to_controller = Arc::new(
            BrokerToControllerChannelManager::new(
                config.broker_id,
                config.inter_broker_listener_name(),
                Arc::clone(&metadata_cache),
                Arc::clone(&zk_producer_id_manager),
                controller_handle.clone(),
            )
            .with_client_security(client_security.clone()),
        );
        let alter_partition_manager = Arc::new(DefaultAlterPartitionManager::new(
            config.broker_id,
            Arc::clone(&epochs),
            Arc::clone(&to_controller) as Arc<dyn AlterPartitionChannel>,
        ));
        replica_manager.set_isr_management(
            Arc::clone(&alter_partition_manager) as Arc<dyn AlterPartitionManager>,
            Arc::clone(&metadata_cache) as Arc<dyn ReplicaEligibility>,
            config.replica_lag_time_max_ms,
        );
        tasks.spawn(Arc::clone(&alter_partition_manager).run(background.clone()));
        tasks.spawn(Arc::clone(&replica_manager).run_isr_expiration(background.clone()));
        let producer_id_manager = Arc::new(RpcProducerIdManager::new(
            config.broker_id,
            Arc::clone(&epochs),
            Arc::clone(&to_controller) as Arc<dyn BrokerToControllerChannel>,
            tasks.clone(),
            background.clone(),
        ));
        let group_coordinator = new_group_coordinator(&config, &replica_manager, &zk).await?;
        let group_metrics: Arc<dyn MetricsSource> = Arc::new(
            crate::coordinator::group::metrics::GroupMetadataManagerMetrics::new(
                &group_coordinator.manager,
            ),
        );
        metrics.register(&group_metrics);
        metric_sources.push(group_metrics);
        let txn_coordinator = new_transaction_coordinator(
            &config,
            &replica_manager,
            &zk,
            &metadata_cache,
            &producer_id_manager,
            client_security.clone(),
        )
        .await?;
        // Kafka's version-mismatch fallback, decided once: from 3.6 every broker serves
        // AddPartitionsToTxn v4 (see the manager's module doc).
        let add_partitions_to_txn_manager = config
            .inter_broker_protocol_version
            .at_least(3, 6, 0)
            .then(|| {
                let coordinator = Arc::clone(&txn_coordinator);
                Arc::new(AddPartitionsToTxnManager::new(
                    config.broker_id,
                    config.inter_broker_listener_name(),
                    millis(config.request_timeout_ms),
                    Arc::clone(&metadata_cache),
                    client_security.clone(),
                    Box::new(move |id: &str| coordinator.partition_for(id)),
                    tasks.clone(),
                ))
            });
        replica_manager.set_leadership_listener(Arc::new(CoordinatorLeadership::new(
            Arc::clone(&group_coordinator),
            Arc::clone(&txn_coordinator),
        )));
        let (ready_tx, ready_rx) = watch::channel(false);
        replica_manager
            .replica_fetcher_manager()
            .set_config(ReplicaFetcherConfig {
                fetch_backoff: millis(config.replica_fetch_backoff_ms),
            });
        replica_manager
            .replica_fetcher_manager()
            .resize_thread_pool(current.num_replica_fetchers);
        replica_manager.set_leader_end_points(Arc::new(
            RemoteLeaderEndPoints::new(
                config.broker_id,
                config.inter_broker_listener_name(),
                config.inter_broker_protocol_version,
                ReplicaFetchSettings {
                    max_wait_ms: config.replica_fetch_wait_max_ms,
                    min_bytes: config.replica_fetch_min_bytes,
                    max_bytes: config.replica_fetch_response_max_bytes,
                    partition_max_bytes: config.replica_fetch_max_bytes,
                    socket_timeout: millis(config.replica_socket_timeout_ms),
                    request_timeout: millis(config.request_timeout_ms),
                },
                Arc::clone(&epochs),
                Arc::clone(&metadata_cache),
            )
            .with_client_security(client_security),
        ));
        let authorizer = new_authorizer(&config, &zk)?;
        let quota_configs = ClientQuotaConfigs::new();
        let user_scram_admin = Arc::new(UserScramAdmin::new(Arc::clone(&zk)));
        let quotas = Arc::new(QuotaManagers::new(
            QuotaWindow {
                samples: u32::try_from(config.quota_window_num).unwrap_or(11),
                window_ms: i64::from(config.quota_window_size_seconds) * 1000,
            },
            QuotaWindow {
                samples: u32::try_from(config.controller_quota_window_num).unwrap_or(11),
                window_ms: i64::from(config.controller_quota_window_size_seconds) * 1000,
            },
        ));
        let quota_metrics: Arc<dyn MetricsSource> = Arc::clone(&quotas) as Arc<dyn MetricsSource>;
        metrics.register(&quota_metrics);
        metric_sources.push(quota_metrics);
        quota_configs.subscribe(Arc::clone(&quotas) as Arc<dyn QuotaConfigHandler>);
        let apis = Arc::new(KafkaApis {
            config: Arc::clone(&current),
            metadata_cache: Arc::clone(&metadata_cache),
            replica_manager: Arc::clone(&replica_manager),
            topic_manager: topic_manager.clone(),
            dynamic_config: Arc::clone(&dynamic_config),
            user_scram_admin: Arc::clone(&user_scram_admin),
            client_quota_admin: Arc::new(ClientQuotaAdmin::new(Arc::clone(&zk), user_scram_admin)),
            producer_id_manager: Arc::clone(&producer_id_manager),
            zk_producer_id_manager,
            group_coordinator: Arc::clone(&group_coordinator),
            txn_coordinator: Arc::clone(&txn_coordinator),
            add_partitions_to_txn_manager,
            epochs: Arc::clone(&epochs),
            controller: controller_handle.clone(),
            auth: AuthHelper::new(authorizer.clone()),
            quotas: Arc::clone(&quotas),
            ready: ready_rx,
        });
        channel.bind(&apis);

        let socket_config = SocketServerConfig {
            listeners,
            num_io_threads: usize::try_from(config.num_io_threads).unwrap_or(8),
            queued_max_requests: usize::try_from(config.queued_max_requests).unwrap_or(500),
            socket_request_max_bytes: config.socket_request_max_bytes,
            limits: connection_limits(&config),
            ..SocketServerConfig::default()
        };
        let socket_server =
            SocketServer::startup(socket_config, Arc::clone(&apis), CancellationToken::new())
                .await?;
        for source in [
            socket_server.metrics(),
            socket_server.connection_quota_metrics(),
        ] {
            metrics.register(&source);
            metric_sources.push(source);
        }
        // `connection_creation_rate` of `/config/ips`: what was read so far, then each change.
        quota_configs.subscribe(Arc::new(IpConnectionRateHandler(
            socket_server.ip_connection_rate_quotas(),
        )) as Arc<dyn QuotaConfigHandler>);

        let endpoints = advertised_endpoints(&config, socket_server.bound_endpoints());
        metadata_cache.set_brokers(vec![BrokerMetadata {
            id: config.broker_id,
            rack: config.broker_rack.clone(),
            endpoints: endpoints.clone(),
        }]);
        let topics = topic_manager.load_topic_configs().await?;
        let registration = broker_registration(&config, &endpoints);
        let broker_epoch = register_broker(zk.as_ref(), config.broker_id, &registration).await?;
        epochs.set_broker_epoch(broker_epoch);
        zk.register_state_change_handler(Arc::new(SessionExpiryHandler {
            zk: Arc::downgrade(&zk),
            broker_id: config.broker_id,
            registration,
            epochs: Arc::clone(&epochs),
            controller: controller_handle.clone(),
        }));

        // The controller: its watches become its events, and it starts by trying to win the
        // election. A single broker wins it and makes itself the leader of every partition.
        let watches = WatchDispatcher::start(Arc::clone(&zk), &tasks, background.clone())?;
        watches.set_default_handler(controller_watch_forwarder(&controller_handle));
        tasks.spawn(controller.run(background.clone()));
        controller_handle.put(ControllerEvent::Startup);
        if config.zookeeper_connect.is_none() {
            // A restarted single broker is its own controller and serves its partitions when it
            // opens. A cluster broker, as Kafka's, opens at once; its partitions come with the
            // controller's LeaderAndIsr, and clients retry LEADER_NOT_AVAILABLE meanwhile.
            wait_for_leadership(zk.as_ref(), &metadata_cache).await?;
        }
        // The first block of producer ids, from the controller. A single broker is its own
        // controller and waits for it; a cluster broker must not, as the controller reaches it
        // only once it serves requests (InitProducerId answers COORDINATOR_LOAD_IN_PROGRESS
        // until the block arrives).
        let first_block = producer_id_manager.startup(if config.zookeeper_connect.is_none() {
            Duration::from_secs(30)
        } else {
            Duration::ZERO
        });
        if !first_block.await && config.zookeeper_connect.is_none() {
            tracing::warn!("no producer id block from the controller within 30 s of startup");
        }
        // Quota configs: every one stored, then each change (below) delivered to the quota
        // handlers through `quota_configs`.
        let quota_handlers = QuotaEntityConfigHandler::all(&quota_configs);
        load_all_entity_configs(Arc::clone(&zk), quota_handlers.clone()).await?;
        // Topic, broker, user, client and IP configs any broker or tool changes (Kafka's
        // `dynamicConfigManager`).
        let mut config_handlers: Vec<(&'static str, Arc<dyn ConfigHandler>)> = vec![
            (
                "topics",
                Arc::new(TopicConfigHandler {
                    topic_manager: Arc::clone(&topic_manager),
                    controller: controller_handle.clone(),
                }) as Arc<dyn ConfigHandler>,
            ),
            (
                "brokers",
                Arc::new(BrokerConfigHandler {
                    broker_id: config.broker_id,
                    dynamic_config,
                }),
            ),
            (
                USERS_ENTITY_TYPE,
                Arc::new(UserConfigHandler {
                    cache: Arc::clone(&sasl.scram_cache),
                }),
            ),
        ];
        config_handlers.extend(quota_handlers);
        ConfigChangeListener::start(
            &watches,
            config_handlers,
            now_ms,
            &tasks,
            background.clone(),
        );
        if let Some(authorizer) = &authorizer {
            authorizer
                .startup(&watches, now_ms, &tasks, background.clone())
                .await?;
        }
        // Moves between log dirs interrupted by the last stop resume.
        replica_manager.maybe_add_log_dir_fetchers();
        group_coordinator.startup(Vec::new());
        txn_coordinator.startup();

        log_manager.spawn_background_tasks(&tasks, background.clone());
        let (fatal_tx, fatal) = watch::channel(None);
        LogDirFailureHandler {
            broker_id: config.broker_id,
            replica_manager: Arc::clone(&replica_manager),
            zk: Arc::clone(&zk),
            fatal: Arc::new(fatal_tx),
        }
        .spawn(&tasks, background.clone());
        super::metrics::spawn_ticker(&metrics, background.clone(), &tasks);
        let metrics_address = match &config.kcli_metrics_listener {
            Some(address) => Some(
                super::metrics::start_endpoint(
                    address,
                    config.kcli_metrics_jmx_exporter_config.as_deref(),
                    &metrics,
                    background.clone(),
                    &tasks,
                )
                .await?,
            ),
            None => None,
        };
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
        Ok(KafkaServer {
            config,
            socket_server,
            log_manager,
            zk,
            apis,
            broker_epoch,
            epochs,
            to_controller,
            _watches: watches,
            background,
            tasks,
            _ready: ready_tx,
            fatal,
            _metric_sources: metric_sources,
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
        tokio::task::spawn_blocking(move || log_manager.shutdown(broker_epoch, now_ms()))
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

/// The controller's settings from the broker's.
fn controller_config(config: &BrokerConfig) -> ControllerConfig {
    ControllerConfig {
        batch: BatchConfig {
            controller_id: config.broker_id,
            versions: ControllerRequestVersions::for_ibp(config.inter_broker_protocol_version),
            inter_broker_listener: config.inter_broker_listener_name(),
        },
        unclean_leader_election_enable: config.unclean_leader_election_enable,
        delete_topic_enable: config.delete_topic_enable,
        auto_leader_rebalance_enable: config.auto_leader_rebalance_enable,
        leader_imbalance_check_interval: Duration::from_secs(
            u64::try_from(config.leader_imbalance_check_interval_seconds).unwrap_or(300),
        ),
        leader_imbalance_per_broker_percentage: config.leader_imbalance_per_broker_percentage,
    }
}

/// The controller's watches as the dispatcher's default handler: every event no other
/// component claims is mapped by its path to a controller event.
fn controller_watch_forwarder(
    controller: &ControllerHandle,
) -> crate::zk::watch_dispatcher::DefaultHandler {
    let controller = controller.clone();
    Arc::new(move |event: &crate::zk::WatchedEvent| {
        if let Some(e) = event_for_watch(&event.path, event.event_type) {
            controller.put(e);
        }
    })
}

/// Waits (bounded) until this broker has heard from the controller about every topic in
/// `/brokers/topics`, so a restarted single broker serves its partitions when it opens.
async fn wait_for_leadership(
    zk: &dyn ZkClient,
    metadata_cache: &MetadataCache,
) -> Result<(), ServerError> {
    let (topics, _) = zk.get_children(zk_data::TOPICS_PATH, false).await?;
    let mut partitions = std::collections::BTreeMap::new();
    for topic in &topics {
        let (data, _) = zk.get_data(&zk_data::topic_path(topic), false).await?;
        partitions.insert(
            topic.clone(),
            zk_data::TopicAssignment::decode(&data)?.partitions.len(),
        );
    }
    let known = metadata_cache
        .wait_for(std::time::Duration::from_secs(30), |cache| {
            cache.controller_id().is_some()
                && partitions
                    .iter()
                    .all(|(t, n)| cache.topic(t).is_some_and(|m| m.partitions.len() == *n))
        })
        .await;
    if !known {
        tracing::warn!("the controller's metadata did not arrive within 30 s of startup");
    }
    Ok(())
}

/// The endpoints clients are told: `advertised.listeners` (else `listeners`), a missing host
/// replaced by the bound address and port 0 by the bound port.
fn advertised_endpoints(config: &BrokerConfig, bound: &[BoundEndPoint]) -> Vec<BrokerEndPoint> {
    config
        .effective_advertised_listeners()
        .iter()
        .map(|l| {
            let bound = bound.iter().find(|b| b.listener_name == l.listener_name);
            let host = match l.host.as_deref() {
                Some(h) if !h.is_empty() => h.to_string(),
                _ => bound.map_or("localhost".to_string(), |b| {
                    if b.address.ip().is_unspecified() {
                        "localhost".to_string()
                    } else {
                        b.address.ip().to_string()
                    }
                }),
            };
            let port = if l.port == 0 {
                bound.map_or(0, |b| b.address.port())
            } else {
                l.port
            };
            BrokerEndPoint {
                listener_name: l.listener_name.clone(),
                host,
                port: i32::from(port),
            }
        })
        .collect()
}

/// What `/brokers/ids/<id>` holds: the advertised endpoints with their security protocols, the
/// rack, and the registration time.
fn broker_registration(config: &BrokerConfig, endpoints: &[BrokerEndPoint]) -> BrokerRegistration {
    BrokerRegistration {
        endpoints: endpoints
            .iter()
            .map(|e| zk_data::EndPoint {
                listener_name: e.listener_name.clone(),
                host: e.host.clone(),
                port: e.port,
                security_protocol: config
                    .listeners
                    .iter()
                    .find(|l| l.listener_name == e.listener_name)
                    .map_or("PLAINTEXT", |l| l.security_protocol.name())
                    .to_string(),
            })
            .collect(),
        rack: config.broker_rack.clone(),
        jmx_port: -1,
        timestamp_ms: now_ms(),
    }
}

/// The metadata store: a session with the ZooKeeper ensemble of `zookeeper.connect` (its chroot
/// created when missing), or, without it, the embedded store whose files sit in the first log
/// dir; with the ZooKeeper client's metrics source (the embedded store has none).
async fn open_metadata_store(
    config: &BrokerConfig,
    first_dir: &std::path::Path,
) -> Result<(Arc<dyn ZkClient>, Option<Arc<dyn MetricsSource>>), ServerError> {
    let Some(connect) = &config.zookeeper_connect else {
        // The embedded store lives in the first log dir. With ZooKeeper nothing is kept there,
        // and a dir that cannot be made is the log manager's to take offline.
        std::fs::create_dir_all(first_dir)
            .map_err(|e| crate::storage::StorageError::io(first_dir, e))?;
        let store = EmbeddedStore::open(first_dir)?;
        return Ok((Arc::new(store.session()), None));
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
    Ok((Arc::new(session), Some(metrics)))
}

/// A `*.ms` setting as a duration (negative values, which the config refuses, as zero).
fn millis(ms: i32) -> Duration {
    Duration::from_millis(u64::try_from(ms).unwrap_or(0))
}
