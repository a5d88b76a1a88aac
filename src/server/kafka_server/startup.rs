//! The phases of [`KafkaServer::startup`](super::KafkaServer::startup), one function each, named
//! as the steps of Kafka's `KafkaServer.startup`: the broker's identity from the metadata store,
//! the log manager, the replica manager and metadata cache, the listeners' security, the
//! controller, the coordinators, the replica fetchers, the authorizer and quotas, the request
//! handlers and socket server, the broker's registration, the controller's start, the config
//! listeners, the background jobs and the metrics endpoint.
//!
//! Each phase's doc says what it starts and what it needs from the phases before it; `startup`
//! calls them in its order, which is the order things started in before the split (its doc says
//! where the order matters). What the phases after the metadata store all need travels in
//! [`Shared`], and every metrics source goes through [`BrokerMetrics`], so the registry keeps its
//! order of registration.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::watch;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use crate::cluster::time::Time;
use crate::config::BrokerConfig;
use crate::controller::channel_manager::BrokerChannel;
use crate::controller::event_for_watch;
use crate::controller::{ControllerEvent, ControllerHandle, KafkaController};
use crate::coordinator::CoordinatorLeadership;
use crate::coordinator::group::GroupCoordinator;
use crate::coordinator::transaction::TransactionCoordinator;
use crate::metrics::MetricsSource;
use crate::metrics::sampled_stat::QuotaWindow;
use crate::network::{BoundEndPoint, ClientSecurity, EndPoint, SocketServer, SocketServerConfig};
use crate::replication::ReplicaManager;
use crate::replication::alter_partition::{AlterPartitionManager, ReplicaEligibility};
use crate::replication::metrics::ReplicaManagerMetrics;
use crate::replication::replica_fetcher::ReplicaFetcherConfig;
use crate::storage::log_manager::LogManager;
use crate::zk::kafka_zk_client::KafkaZkClient;
use crate::zk::zk_data;
use crate::zk::{WatchDispatcher, ZkClient, recipes};

pub(super) use super::broker_metrics::BrokerMetrics;
use super::settings;
use super::{clock, millis};
use crate::server::acl_authorizer::AclAuthorizer;
use crate::server::add_partitions_to_txn_manager::AddPartitionsToTxnManager;
use crate::server::alter_partition_manager::{AlterPartitionChannel, DefaultAlterPartitionManager};
use crate::server::auth_helper::AuthHelper;
use crate::server::broker_epoch_manager::BrokerEpochManager;
use crate::server::broker_registration::{
    SessionExpiryHandler, get_or_generate_broker_id, register_broker,
};
use crate::server::broker_to_controller_channel::{
    BrokerToControllerChannel, BrokerToControllerChannelManager,
};
use crate::server::client_quota_admin::ClientQuotaAdmin;
use crate::server::client_quota_configs::{
    ClientQuotaConfigs, QuotaConfigHandler, QuotaEntityConfigHandler,
};
use crate::server::config_change_listener::{
    BrokerConfigHandler, ConfigChangeListener, ConfigHandler, TopicConfigHandler,
    load_all_entity_configs,
};
use crate::server::controller_channel::ControllerChannel;
use crate::server::coordinators::{new_group_coordinator, new_transaction_coordinator};
use crate::server::dynamic_broker_config::{DynamicBrokerConfig, DynamicLayers};
use crate::server::error::ServerError;
use crate::server::fetch_session::FetchManager;
use crate::server::kafka_apis::KafkaApis;
use crate::server::log_dir_failure_handler::LogDirFailureHandler;
use crate::server::metadata_cache::{BrokerMetadata, MetadataCache};
use crate::server::quota::{IpConnectionRateHandler, QuotaManagers, connection_limits};
use crate::server::remote_leader_end_point::{RemoteLeaderEndPoints, ReplicaFetchSettings};
use crate::server::rpc_producer_id_manager::RpcProducerIdManager;
use crate::server::sasl_listeners::SaslListeners;
use crate::server::scram_credential_cache::{USERS_ENTITY_TYPE, UserConfigHandler};
use crate::server::ssl_listeners::{inter_broker_client_tls, listener_tls};
use crate::server::topic_manager::TopicManager;
use crate::server::user_scram_admin::UserScramAdmin;
use crate::server::zk_producer_id_manager::ZkProducerIdManager;

/// What every phase after the broker's identity needs: the static config (its broker id
/// resolved), the config as the dynamic layers make it now, the metadata store, the clock, the
/// broker's epoch, and the tracker and token every background task is spawned on and ended by.
pub(super) struct Shared {
    pub(super) config: Arc<BrokerConfig>,
    pub(super) current: Arc<BrokerConfig>,
    pub(super) zk: Arc<dyn ZkClient>,
    pub(super) time: Arc<dyn Time>,
    pub(super) epochs: Arc<BrokerEpochManager>,
    pub(super) background: CancellationToken,
    pub(super) tasks: TaskTracker,
}

/// Who this broker is, as the metadata store and its log dirs say.
pub(super) struct Identity {
    /// The static config with the broker id resolved.
    pub(super) config: Arc<BrokerConfig>,
    pub(super) cluster_id: String,
    /// The dynamic broker configs stored for this broker and the cluster.
    pub(super) layers: DynamicLayers,
}

/// The broker's identity (Kafka's `getOrGenerateClusterId`, `getOrGenerateBrokerId` and
/// `DynamicBrokerConfig.initialize`): creates the persistent paths and the cluster id when the
/// store has none, resolves the broker id (from `meta.properties` in `log_dirs` or the store's
/// sequence) and reads the dynamic broker configs. Needs the open store.
pub(super) async fn identify(
    config: BrokerConfig,
    log_dirs: &[PathBuf],
    zk: &dyn ZkClient,
) -> Result<Identity, ServerError> {
    recipes::ensure_persistent_paths(zk).await?;
    let proposed = zk_data::topic_id_to_string(zk_data::random_uuid());
    let cluster_id = recipes::create_or_get_cluster_id(zk, &proposed).await?;
    let broker_id = get_or_generate_broker_id(
        config.broker_id,
        config.broker_id_generation_enable,
        config.reserved_broker_max_id,
        log_dirs,
        zk,
    )
    .await?;
    let config = Arc::new(config.with_broker_id(broker_id));
    // Dynamic broker configs apply from the start, as Kafka's `DynamicBrokerConfig
    // .initialize` reads them before the log manager starts.
    let (per_broker, cluster_default) =
        DynamicBrokerConfig::load_persisted(zk, config.broker_id).await?;
    let layers = DynamicLayers::from_persisted(&config, &per_broker, &cluster_default);
    Ok(Identity {
        config,
        cluster_id,
        layers,
    })
}

/// Starts the log manager (Kafka's `LogManager.startup`): locks every log dir and loads its
/// logs, recovering those not closed cleanly. Needs the broker and cluster ids, the log
/// config as the dynamic layers make it (`current`) and the time to load at.
pub(super) fn start_log_manager(
    config: &BrokerConfig,
    current: &BrokerConfig,
    log_dirs: Vec<PathBuf>,
    cluster_id: &str,
    now_ms: i64,
) -> Result<Arc<LogManager>, ServerError> {
    let log_config = settings::log_manager_config(config, current, log_dirs, cluster_id);
    Ok(Arc::new(LogManager::startup(log_config, now_ms)?))
}

/// The broker's view of the cluster and its partitions, and the admin paths over them.
pub(super) struct Core {
    pub(super) metadata_cache: Arc<MetadataCache>,
    pub(super) replica_manager: Arc<ReplicaManager>,
    pub(super) topic_manager: Arc<TopicManager>,
    pub(super) dynamic_config: Arc<DynamicBrokerConfig>,
    /// The fetch sessions (KIP-227) of this broker's leaders.
    pub(super) fetch_manager: Arc<FetchManager>,
}

/// Creates the metadata cache, the replica manager over the logs, the topic admin and the
/// dynamic broker config (Kafka's `MetadataCache`, `createReplicaManager`, `AdminZkClient`),
/// applies the replication throttles and quota window, and registers the replica manager's,
/// the server's and the store client's (`zk_metrics`) metrics. Starts no task.
pub(super) fn create_replica_manager(
    shared: &Shared,
    identity: Identity,
    log_manager: &Arc<LogManager>,
    zk_metrics: Option<Arc<dyn MetricsSource>>,
    metrics: &mut BrokerMetrics,
) -> Core {
    let config = &shared.config;
    let metadata_cache = Arc::new(MetadataCache::new(identity.cluster_id));
    let replica_manager = Arc::new(ReplicaManager::new(
        config.broker_id,
        Arc::clone(log_manager),
    ));
    metrics.add(replica_manager.topic_stats());
    metrics.add(Arc::new(ReplicaManagerMetrics::new(&replica_manager)));
    let fetch_manager = Arc::new(FetchManager::with_slots(
        config.max_incremental_fetch_session_cache_slots,
    ));
    metrics.add(Arc::clone(&fetch_manager.cache) as Arc<dyn MetricsSource>);
    metrics.add(Arc::new(
        crate::server::metrics::kafka_server_metrics::KafkaServerMetrics,
    ));
    metrics.add(Arc::new(replica_manager.replication_quotas().clone()));
    if let Some(source) = zk_metrics {
        metrics.add(source);
    }
    let topic_manager = Arc::new(TopicManager::new(
        Arc::clone(&shared.zk),
        Arc::clone(&shared.current),
        Arc::clone(&metadata_cache),
        Arc::clone(&replica_manager),
    ));
    let dynamic_config = Arc::new(DynamicBrokerConfig::new(
        Arc::clone(&shared.zk),
        Arc::clone(config),
        identity.layers,
        Arc::clone(&topic_manager),
    ));
    dynamic_config.apply_replication_throttles();
    replica_manager
        .replication_quotas()
        .set_window(QuotaWindow {
            samples: u32::try_from(config.replication_quota_window_num).unwrap_or(11),
            window_ms: i64::from(config.replication_quota_window_size_seconds) * 1000,
        });
    Core {
        metadata_cache,
        replica_manager,
        topic_manager,
        dynamic_config,
        fetch_manager,
    }
}

/// The listeners' and the inter-broker client's security.
pub(super) struct ListenerSecurity {
    /// How this broker connects to the others (TLS, SASL credentials).
    pub(super) client_security: ClientSecurity,
    pub(super) sasl: SaslListeners,
    /// The listeners to bind, each with its TLS and SASL authenticator.
    pub(super) listeners: Vec<EndPoint>,
}

/// Reads the TLS stores and the SASL listeners' configs and users (`/config/users`), before any
/// listener accepts: a bad store stops the broker before anything is written. Needs the store.
pub(super) async fn listener_security(
    config: &BrokerConfig,
    zk: &dyn ZkClient,
) -> Result<ListenerSecurity, ServerError> {
    let client_tls = inter_broker_client_tls(config)?;
    // The broker's own credentials too, when the inter-broker listener is a SASL one.
    let sasl = SaslListeners::from_config(config)?;
    sasl.scram_cache.load_all(zk).await?;
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
        if let Some(tls) = listener_tls(config, l)? {
            endpoint = endpoint.with_tls(tls);
        }
        if let Some(authenticator) = sasl.authenticators.get(&l.listener_name) {
            endpoint = endpoint.with_authenticator(authenticator.clone());
        }
        listeners.push(endpoint);
    }
    Ok(ListenerSecurity {
        client_security,
        sasl,
        listeners,
    })
}

/// The controller, not yet running, and the broker's channels to and from it.
pub(super) struct ControllerParts {
    /// The controller's requests to the brokers (this one in process).
    pub(super) channel: Arc<ControllerChannel>,
    pub(super) controller: KafkaController,
    pub(super) handle: ControllerHandle,
    /// This broker's requests to the controller (AlterPartition, AllocateProducerIds,
    /// ControlledShutdown).
    pub(super) to_controller: Arc<BrokerToControllerChannelManager>,
}

/// Creates the controller (Kafka's `KafkaController`, started later by [`start_controller`])
/// with its channel to the brokers, and this broker's channel to the controller; registers the
/// controller's metrics. Needs the store, the metadata cache (where the controller is) and
/// the inter-broker client's security.
pub(super) fn create_controller(
    shared: &Shared,
    client_security: &ClientSecurity,
    metadata_cache: &Arc<MetadataCache>,
    zk_producer_id_manager: &Arc<ZkProducerIdManager>,
    metrics: &mut BrokerMetrics,
) -> ControllerParts {
    let config = &shared.config;
    let channel = Arc::new(
        ControllerChannel::new(config.broker_id).with_client_security(client_security.clone()),
    );
    let (controller, handle) = KafkaController::new(
        settings::controller_config(config),
        KafkaZkClient::new(Arc::clone(&shared.zk)),
        Arc::clone(&channel) as Arc<dyn BrokerChannel>,
        Arc::new(clock(&shared.time)),
    );
    metrics.add(controller.metrics());
    let to_controller = Arc::new(
        BrokerToControllerChannelManager::new(
            config.broker_id,
            config.inter_broker_listener_name(),
            Arc::clone(metadata_cache),
            Arc::clone(zk_producer_id_manager),
            handle.clone(),
        )
        .with_client_security(client_security.clone()),
    );
    ControllerParts {
        channel,
        controller,
        handle,
        to_controller,
    }
}

/// Starts ISR management (Kafka's `AlterPartitionManager` and `isr-expiration`): the task that
/// sends AlterPartition to the controller and the task that shrinks lagging ISRs. Needs the
/// replica manager, the metadata cache (which replicas may join an ISR) and the channel to the
/// controller.
pub(super) fn start_isr_management(
    shared: &Shared,
    core: &Core,
    to_controller: &Arc<BrokerToControllerChannelManager>,
) {
    let alter_partition_manager = Arc::new(DefaultAlterPartitionManager::new(
        shared.config.broker_id,
        Arc::clone(&shared.epochs),
        Arc::clone(to_controller) as Arc<dyn AlterPartitionChannel>,
    ));
    core.replica_manager.set_isr_management(
        Arc::clone(&alter_partition_manager) as Arc<dyn AlterPartitionManager>,
        Arc::clone(&core.metadata_cache) as Arc<dyn ReplicaEligibility>,
        shared.config.replica_lag_time_max_ms,
    );
    shared
        .tasks
        .spawn(alter_partition_manager.run(shared.background.clone()));
    shared
        .tasks
        .spawn(Arc::clone(&core.replica_manager).run_isr_expiration(shared.background.clone()));
}

/// The coordinators and what they share with the request handlers.
pub(super) struct Coordinators {
    pub(super) producer_id_manager: Arc<RpcProducerIdManager>,
    pub(super) group: Arc<GroupCoordinator>,
    pub(super) txn: Arc<TransactionCoordinator>,
    /// Present from IBP 3.6, when every broker serves AddPartitionsToTxn v4.
    pub(super) add_partitions_to_txn_manager: Option<Arc<AddPartitionsToTxnManager>>,
}

/// Creates the producer id manager and the group and transaction coordinators (Kafka's
/// `GroupCoordinator`, `RPCProducerIdManager`, `TransactionCoordinator`), not yet loading
/// anything, and makes them follow this broker's leadership of their internal topics. Needs the
/// replica manager, the store (the internal topics' partition counts) and the channel to the
/// controller.
pub(super) async fn create_coordinators(
    shared: &Shared,
    core: &Core,
    to_controller: &Arc<BrokerToControllerChannelManager>,
    client_security: &ClientSecurity,
    metrics: &mut BrokerMetrics,
) -> Result<Coordinators, ServerError> {
    let config = &shared.config;
    let producer_id_manager = Arc::new(RpcProducerIdManager::new(
        config.broker_id,
        Arc::clone(&shared.epochs),
        Arc::clone(to_controller) as Arc<dyn BrokerToControllerChannel>,
        shared.tasks.clone(),
        shared.background.clone(),
    ));
    let group = new_group_coordinator(config, &core.replica_manager, &shared.zk).await?;
    metrics.add(Arc::new(
        crate::coordinator::group::metrics::GroupMetadataManagerMetrics::new(&group.manager),
    ));
    let txn = new_transaction_coordinator(
        config,
        &core.replica_manager,
        &shared.zk,
        &core.metadata_cache,
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
            let coordinator = Arc::clone(&txn);
            Arc::new(AddPartitionsToTxnManager::new(
                config.broker_id,
                config.inter_broker_listener_name(),
                millis(config.request_timeout_ms),
                Arc::clone(&core.metadata_cache),
                client_security.clone(),
                Box::new(move |id: &str| coordinator.partition_for(id)),
                shared.tasks.clone(),
            ))
        });
    core.replica_manager
        .set_leadership_listener(Arc::new(CoordinatorLeadership::new(
            Arc::clone(&group),
            Arc::clone(&txn),
        )));
    Ok(Coordinators {
        producer_id_manager,
        group,
        txn,
        add_partitions_to_txn_manager,
    })
}

/// Configures the replica fetchers (Kafka's `ReplicaFetcherManager` and its leader end points):
/// their backoff, their number (`num.replica.fetchers`, dynamic) and how they reach a leader.
/// Starts no fetcher: LeaderAndIsr does. Needs the replica manager, the metadata cache (where
/// leaders are) and the inter-broker client's security.
pub(super) fn configure_replica_fetchers(
    shared: &Shared,
    core: &Core,
    client_security: ClientSecurity,
) {
    let config = &shared.config;
    let fetchers = core.replica_manager.replica_fetcher_manager();
    fetchers.set_config(ReplicaFetcherConfig {
        fetch_backoff: millis(config.replica_fetch_backoff_ms),
    });
    fetchers.resize_thread_pool(shared.current.num_replica_fetchers);
    core.replica_manager.set_leader_end_points(Arc::new(
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
            Arc::clone(&shared.epochs),
            Arc::clone(&core.metadata_cache),
        )
        .with_client_security(client_security),
    ));
}

/// Who may do what, and how fast.
pub(super) struct Access {
    pub(super) authorizer: Option<Arc<AclAuthorizer>>,
    /// The quota configs, delivered to `quotas` as they change.
    pub(super) quota_configs: Arc<ClientQuotaConfigs>,
    pub(super) user_scram_admin: Arc<UserScramAdmin>,
    pub(super) quotas: Arc<QuotaManagers>,
}

/// Creates the authorizer (`authorizer.class.name`; its ACLs load with the config listeners) and
/// the client quota managers (Kafka's `QuotaFactory`), and registers the quotas' metrics.
/// Needs the store.
pub(super) fn create_authorizer_and_quotas(
    shared: &Shared,
    metrics: &mut BrokerMetrics,
) -> Result<Access, ServerError> {
    let config = &shared.config;
    let authorizer = new_authorizer(config, &shared.zk)?;
    let quota_configs = ClientQuotaConfigs::new();
    let user_scram_admin = Arc::new(UserScramAdmin::new(Arc::clone(&shared.zk)));
    let (client_window, controller_window) = settings::quota_windows(config);
    let quotas = Arc::new(QuotaManagers::new(client_window, controller_window));
    metrics.add(Arc::clone(&quotas) as Arc<dyn MetricsSource>);
    quota_configs.subscribe(Arc::clone(&quotas) as Arc<dyn QuotaConfigHandler>);
    Ok(Access {
        authorizer,
        quota_configs,
        user_scram_admin,
        quotas,
    })
}

/// Kafka's `AclAuthorizer` when `authorizer.class.name` names it, over the broker's metadata
/// store.
fn new_authorizer(
    config: &BrokerConfig,
    zk: &Arc<dyn ZkClient>,
) -> Result<Option<Arc<AclAuthorizer>>, ServerError> {
    Ok(settings::authorizer_settings(config)?
        .map(|settings| AclAuthorizer::new(Arc::clone(zk), settings)))
}

/// Creates the request handlers (Kafka's `KafkaApis`) over everything before, and binds the
/// controller's in-process channel to them. Requests wait on `ready` until startup is done.
pub(super) fn create_apis(
    shared: &Shared,
    core: &Core,
    controller: &ControllerParts,
    coordinators: Coordinators,
    access: &Access,
    zk_producer_id_manager: Arc<ZkProducerIdManager>,
    ready: watch::Receiver<bool>,
) -> Arc<KafkaApis> {
    let apis = Arc::new(KafkaApis {
        config: Arc::clone(&shared.current),
        metadata_cache: Arc::clone(&core.metadata_cache),
        replica_manager: Arc::clone(&core.replica_manager),
        topic_manager: core.topic_manager.clone(),
        dynamic_config: Arc::clone(&core.dynamic_config),
        fetch_manager: Arc::clone(&core.fetch_manager),
        user_scram_admin: Arc::clone(&access.user_scram_admin),
        client_quota_admin: Arc::new(ClientQuotaAdmin::new(
            Arc::clone(&shared.zk),
            Arc::clone(&access.user_scram_admin),
        )),
        producer_id_manager: coordinators.producer_id_manager,
        zk_producer_id_manager,
        group_coordinator: coordinators.group,
        txn_coordinator: coordinators.txn,
        add_partitions_to_txn_manager: coordinators.add_partitions_to_txn_manager,
        epochs: Arc::clone(&shared.epochs),
        controller: controller.handle.clone(),
        auth: AuthHelper::new(access.authorizer.clone()),
        quotas: Arc::clone(&access.quotas),
        ready,
    });
    controller.channel.bind(&apis);
    apis
}

/// Binds the listeners and starts the socket server (Kafka's `SocketServer` and
/// `KafkaRequestHandlerPool`: acceptors, connections, `num.io.threads` handlers), and registers
/// its metrics; `quota_configs` hands it `/config/ips`' `connection_creation_rate`. Requests
/// are read at once but answered only once startup is done.
pub(super) async fn start_socket_server(
    config: &BrokerConfig,
    listeners: Vec<EndPoint>,
    apis: &Arc<KafkaApis>,
    quota_configs: &ClientQuotaConfigs,
    metrics: &mut BrokerMetrics,
) -> Result<SocketServer, ServerError> {
    let socket_config = SocketServerConfig {
        listeners,
        num_io_threads: usize::try_from(config.num_io_threads).unwrap_or(8),
        queued_max_requests: usize::try_from(config.queued_max_requests).unwrap_or(500),
        socket_request_max_bytes: config.socket_request_max_bytes,
        limits: connection_limits(config),
        ..SocketServerConfig::default()
    };
    let socket_server =
        SocketServer::startup(socket_config, Arc::clone(apis), CancellationToken::new()).await?;
    metrics.add(socket_server.metrics());
    metrics.add(socket_server.connection_quota_metrics());
    quota_configs.subscribe(Arc::new(IpConnectionRateHandler(
        socket_server.ip_connection_rate_quotas(),
    )) as Arc<dyn QuotaConfigHandler>);
    Ok(socket_server)
}

/// Registers this broker (Kafka's `KafkaZkClient.registerBroker`): tells the metadata cache its
/// own endpoints, loads the topics' configs, creates the ephemeral `/brokers/ids/<id>` (its
/// czxid is the broker epoch) and re-registers after a session expiry. Needs the bound
/// listeners (for port 0) and the controller's handle (re-election after an expiry). Returns
/// the broker epoch and the number of topics.
pub(super) async fn register_this_broker(
    shared: &Shared,
    core: &Core,
    bound: &[BoundEndPoint],
    controller: &ControllerHandle,
) -> Result<(i64, usize), ServerError> {
    let config = &shared.config;
    let endpoints = settings::advertised_endpoints(config, bound);
    core.metadata_cache.set_brokers(vec![BrokerMetadata {
        id: config.broker_id,
        rack: config.broker_rack.clone(),
        endpoints: endpoints.clone(),
    }]);
    let topics = core.topic_manager.load_topic_configs().await?;
    let registration =
        settings::broker_registration(config, &endpoints, shared.time.milliseconds());
    let broker_epoch = register_broker(shared.zk.as_ref(), config.broker_id, &registration).await?;
    shared.epochs.set_broker_epoch(broker_epoch);
    shared
        .zk
        .register_state_change_handler(Arc::new(SessionExpiryHandler {
            zk: Arc::downgrade(&shared.zk),
            broker_id: config.broker_id,
            registration,
            epochs: Arc::clone(&shared.epochs),
            controller: controller.clone(),
        }));
    Ok((broker_epoch, topics))
}

/// Starts the controller (Kafka's `KafkaController.startup`): the store's watch dispatcher,
/// whose unclaimed events become controller events, and the controller's event loop, which
/// begins by trying to win the election. A single broker wins it, leads every partition, and
/// this waits until it has. Needs the registered broker. Returns the watch dispatcher.
pub(super) async fn start_controller(
    shared: &Shared,
    controller: KafkaController,
    handle: &ControllerHandle,
    metadata_cache: &MetadataCache,
) -> Result<WatchDispatcher, ServerError> {
    let watches = WatchDispatcher::start(
        Arc::clone(&shared.zk),
        &shared.tasks,
        shared.background.clone(),
    )?;
    watches.set_default_handler(controller_watch_forwarder(handle));
    shared
        .tasks
        .spawn(controller.run(shared.background.clone()));
    handle.put(ControllerEvent::Startup);
    if shared.config.zookeeper_connect.is_none() {
        // A restarted single broker is its own controller and serves its partitions when it
        // opens. A cluster broker, as Kafka's, opens at once; its partitions come with the
        // controller's LeaderAndIsr, and clients retry LEADER_NOT_AVAILABLE meanwhile.
        wait_for_leadership(shared.zk.as_ref(), metadata_cache).await?;
    }
    Ok(watches)
}

/// Asks the controller for the first block of producer ids (AllocateProducerIds). A single
/// broker is its own controller and waits for it; a cluster broker must not, as the controller
/// reaches it only once it serves requests (InitProducerId answers
/// COORDINATOR_LOAD_IN_PROGRESS until the block arrives). Needs the running controller.
pub(super) async fn request_first_producer_ids(
    config: &BrokerConfig,
    producer_id_manager: &RpcProducerIdManager,
) {
    let single = config.zookeeper_connect.is_none();
    let first_block = producer_id_manager.startup(if single {
        Duration::from_secs(30)
    } else {
        Duration::ZERO
    });
    if !first_block.await && single {
        tracing::warn!("no producer id block from the controller within 30 s of startup");
    }
}

/// Starts the config listeners (Kafka's `ZkConfigManager` and the authorizer's ACL change
/// listener): loads every stored quota config, then follows `/config/changes` for the topic,
/// broker, user, client and IP configs any broker or tool changes, and loads and follows the
/// ACLs. Needs the watch dispatcher and the components the changes go to.
pub(super) async fn start_config_listeners(
    shared: &Shared,
    watches: &WatchDispatcher,
    core: &Core,
    controller: &ControllerHandle,
    sasl: &SaslListeners,
    access: &Access,
) -> Result<(), ServerError> {
    // Quota configs: every one stored, then each change (below) delivered to the quota
    // handlers through `quota_configs`.
    let quota_handlers = QuotaEntityConfigHandler::all(&access.quota_configs);
    load_all_entity_configs(Arc::clone(&shared.zk), quota_handlers.clone()).await?;
    let mut config_handlers: Vec<(&'static str, Arc<dyn ConfigHandler>)> = vec![
        (
            "topics",
            Arc::new(TopicConfigHandler {
                topic_manager: Arc::clone(&core.topic_manager),
                controller: controller.clone(),
            }) as Arc<dyn ConfigHandler>,
        ),
        (
            "brokers",
            Arc::new(BrokerConfigHandler {
                broker_id: shared.config.broker_id,
                dynamic_config: Arc::clone(&core.dynamic_config),
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
        watches,
        config_handlers,
        clock(&shared.time),
        &shared.tasks,
        shared.background.clone(),
    );
    if let Some(authorizer) = &access.authorizer {
        authorizer
            .startup(
                watches,
                clock(&shared.time),
                &shared.tasks,
                shared.background.clone(),
            )
            .await?;
    }
    Ok(())
}

/// Starts the log manager's background jobs (retention, flushes, checkpoints, the cleaner) and
/// the log dir failure handler, which takes a failed dir offline and halts the broker when none
/// is left (Kafka's `LogManager` scheduler and `LogDirFailureHandler`). Returns where the halt
/// is signalled. Needs the replica manager and the store (the failure notification).
pub(super) fn start_background_jobs(
    shared: &Shared,
    log_manager: &Arc<LogManager>,
    replica_manager: &Arc<ReplicaManager>,
) -> watch::Receiver<Option<String>> {
    log_manager.spawn_background_tasks(&shared.tasks, shared.background.clone());
    let (fatal_tx, fatal) = watch::channel(None);
    LogDirFailureHandler {
        broker_id: shared.config.broker_id,
        replica_manager: Arc::clone(replica_manager),
        zk: Arc::clone(&shared.zk),
        fatal: Arc::new(fatal_tx),
    }
    .spawn(&shared.tasks, shared.background.clone());
    fatal
}

/// Starts the metrics ticker and, when `kcli.metrics.listener` is set, the HTTP metrics
/// endpoint; returns where it listens. Needs every metrics source registered.
pub(super) async fn start_metrics_endpoint(
    shared: &Shared,
    metrics: &BrokerMetrics,
) -> Result<Option<std::net::SocketAddr>, ServerError> {
    crate::server::metrics::spawn_ticker(
        &metrics.registry,
        shared.background.clone(),
        &shared.tasks,
    );
    let config = &shared.config;
    Ok(match &config.kcli_metrics_listener {
        Some(address) => Some(
            crate::server::metrics::start_endpoint(
                address,
                config.kcli_metrics_jmx_exporter_config.as_deref(),
                &metrics.registry,
                shared.background.clone(),
                &shared.tasks,
            )
            .await?,
        ),
        None => None,
    })
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
