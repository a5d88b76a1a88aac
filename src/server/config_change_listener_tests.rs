//! Tests of the config change listener over the embedded store: what a second broker's session
//! writes reaches the first broker's handlers (a recording one, then the real topic manager and
//! dynamic broker config over a hosted log), in sequence order and once each; old notifications
//! are purged; after a new session every entity config is read again.

use std::sync::atomic::{AtomicI64, Ordering};
use std::time::Duration;

use tokio::sync::mpsc::{UnboundedReceiver, UnboundedSender, unbounded_channel};
use tokio::time::timeout;

use crate::cluster::{LeaderAndIsr, TopicPartition};
use crate::config::BrokerConfig;
use crate::replication::ReplicaManager;
use crate::server::dynamic_broker_config::DynamicLayers;
use crate::server::metadata_cache::{MetadataCache, PartitionMetadata, PartitionUpdate};
use crate::storage::log_manager::{LogManager, LogManagerConfig, now_ms};
use crate::zk::recipes::{create_recursive, ensure_persistent_paths};
use crate::zk::{CreateMode, EmbeddedStore};

use super::*;

const WAIT: Duration = Duration::from_secs(10);

/// Reports each call as `name {k=v,...}`.
struct Recorder(UnboundedSender<String>);

impl ConfigHandler for Recorder {
    fn process_config_changes<'a>(
        &'a self,
        entity_name: &'a str,
        props: BTreeMap<String, String>,
    ) -> HandlerFuture<'a> {
        let _ = self.0.send(format!("{entity_name} {props:?}"));
        Box::pin(async {})
    }
}

async fn next(rx: &mut UnboundedReceiver<String>) -> String {
    timeout(WAIT, rx.recv()).await.unwrap().unwrap()
}

/// What a broker's AlterConfigs writes: the entity's config, then the notification.
async fn alter(zk: &dyn ZkClient, entity_type: &str, entity: &str, props: &[(&str, &str)]) {
    let config: BTreeMap<String, String> = props
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    let path = zk_data::config_entity_path(entity_type, entity);
    let data = zk_data::encode_entity_config(&config);
    match zk.set_data(&path, &data, -1).await {
        Ok(_) => {}
        Err(ZkError::NoNode(_)) => create_recursive(zk, &path, &data).await.unwrap(),
        Err(e) => panic!("{e}"),
    }
    notify(zk, &format!("{entity_type}/{entity}")).await;
}

async fn notify(zk: &dyn ZkClient, entity_path: &str) {
    zk.create(
        zk_data::CONFIG_CHANGE_PREFIX,
        &zk_data::encode_config_change(entity_path),
        CreateMode::PersistentSequential,
    )
    .await
    .unwrap();
}

async fn changes(zk: &dyn ZkClient) -> Vec<String> {
    zk.get_children(CONFIG_CHANGES_PATH, false).await.unwrap().0
}

struct Fixture {
    store: EmbeddedStore,
    watches: WatchDispatcher,
    tasks: TaskTracker,
    stop: CancellationToken,
}

async fn fixture() -> Fixture {
    let store = EmbeddedStore::in_memory();
    let zk: Arc<dyn ZkClient> = Arc::new(store.session());
    ensure_persistent_paths(zk.as_ref()).await.unwrap();
    let tasks = TaskTracker::new();
    let stop = CancellationToken::new();
    let watches = WatchDispatcher::start(zk, &tasks, stop.clone()).unwrap();
    Fixture {
        store,
        watches,
        tasks,
        stop,
    }
}

#[tokio::test]
async fn another_brokers_changes_are_applied_in_order_once_each() {
    let f = fixture().await;
    let other = f.store.session();
    // Written before this broker started: applied by the first pass.
    alter(&other, "topics", "early", &[("retention.ms", "1")]).await;
    let (tx, mut rx) = unbounded_channel();
    let listener = ConfigChangeListener::start(
        &f.watches,
        vec![(
            "topics",
            Arc::new(Recorder(tx.clone())) as Arc<dyn ConfigHandler>,
        )],
        now_ms,
        &f.tasks,
        f.stop.clone(),
    );
    assert_eq!(next(&mut rx).await, r#"early {"retention.ms": "1"}"#);
    alter(&other, "topics", "a", &[("segment.ms", "5")]).await;
    assert_eq!(next(&mut rx).await, r#"a {"segment.ms": "5"}"#);
    // A burst: each in sequence order; types without a handler and unreadable ones skipped;
    // a vanished entity config reads as empty.
    notify(&other, "clients/c1").await;
    other
        .create(
            zk_data::CONFIG_CHANGE_PREFIX,
            b"not json",
            CreateMode::PersistentSequential,
        )
        .await
        .unwrap();
    alter(&other, "topics", "b", &[("cleanup.policy", "compact")]).await;
    notify(&other, "topics/gone").await;
    alter(&other, "topics", "a", &[]).await;
    assert_eq!(next(&mut rx).await, r#"b {"cleanup.policy": "compact"}"#);
    assert_eq!(next(&mut rx).await, "gone {}");
    assert_eq!(next(&mut rx).await, "a {}");
    // A pass with nothing new applies nothing again.
    listener.wake();
    tokio::time::sleep(Duration::from_millis(50)).await;
    assert!(rx.try_recv().is_err());
    // Young notifications are kept.
    assert_eq!(changes(&other).await.len(), 7);
    f.stop.cancel();
    f.tasks.close();
    timeout(WAIT, f.tasks.wait()).await.unwrap();
}

/// 16 minutes ahead of the wall clock, once set.
static CLOCK_OFFSET_MS: AtomicI64 = AtomicI64::new(0);

fn shifted_now_ms() -> i64 {
    now_ms() + CLOCK_OFFSET_MS.load(Ordering::SeqCst)
}

#[tokio::test]
async fn notifications_older_than_fifteen_minutes_are_purged() {
    let f = fixture().await;
    let other = f.store.session();
    alter(&other, "topics", "t", &[("retention.ms", "1")]).await;
    alter(&other, "topics", "t", &[("retention.ms", "2")]).await;
    let (tx, mut rx) = unbounded_channel();
    let listener = ConfigChangeListener::start(
        &f.watches,
        vec![("topics", Arc::new(Recorder(tx)) as Arc<dyn ConfigHandler>)],
        shifted_now_ms,
        &f.tasks,
        f.stop.clone(),
    );
    // Each notification re-reads the config as it is now.
    assert_eq!(next(&mut rx).await, r#"t {"retention.ms": "2"}"#);
    assert_eq!(next(&mut rx).await, r#"t {"retention.ms": "2"}"#);
    assert_eq!(changes(&other).await.len(), 2);
    CLOCK_OFFSET_MS.store(CHANGE_EXPIRATION_MS + 60_000, Ordering::SeqCst);
    listener.wake();
    let deadline = tokio::time::Instant::now() + WAIT;
    while !changes(&other).await.is_empty() {
        assert!(tokio::time::Instant::now() < deadline, "not purged");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    // Purged notifications are not applied again, and numbering goes on past them.
    alter(&other, "topics", "u", &[]).await;
    assert_eq!(next(&mut rx).await, "u {}");
    assert!(rx.try_recv().is_err());
    f.stop.cancel();
}

#[tokio::test]
async fn a_new_session_reads_every_entity_again_and_rearms_the_watch() {
    let f = fixture().await;
    let other = f.store.session();
    let (tx, mut rx) = unbounded_channel();
    let listener = ConfigChangeListener::start(
        &f.watches,
        vec![
            (
                "topics",
                Arc::new(Recorder(tx.clone())) as Arc<dyn ConfigHandler>,
            ),
            ("brokers", Arc::new(Recorder(tx)) as Arc<dyn ConfigHandler>),
        ],
        now_ms,
        &f.tasks,
        f.stop.clone(),
    );
    alter(&other, "topics", "t", &[]).await;
    assert_eq!(next(&mut rx).await, "t {}");
    // Changed while the session was gone, its notification already purged.
    let data = zk_data::encode_entity_config(&BTreeMap::from([(
        "log.retention.ms".to_string(),
        "9".to_string(),
    )]));
    create_recursive(
        &other,
        &zk_data::config_entity_path("brokers", DEFAULT_ENTITY),
        &data,
    )
    .await
    .unwrap();
    listener.inner.after_new_session();
    let mut seen = vec![next(&mut rx).await, next(&mut rx).await];
    seen.sort();
    assert_eq!(
        seen,
        vec![
            r#"<default> {"log.retention.ms": "9"}"#.to_string(),
            "t {}".to_string()
        ]
    );
    alter(&other, "topics", "after", &[]).await;
    assert_eq!(next(&mut rx).await, "after {}");
    f.stop.cancel();
}

#[tokio::test]
async fn a_topic_and_broker_config_written_by_another_broker_reach_the_hosted_log() {
    let dir = tempfile::tempdir().unwrap();
    let f = fixture().await;
    let zk = Arc::clone(f.watches.client());
    let static_config = Arc::new(BrokerConfig::load(None, &["broker.id=0".to_string()]).unwrap());
    let log_manager = Arc::new(
        LogManager::startup(
            LogManagerConfig::new(vec![dir.path().join("data")], 0, "cluster"),
            now_ms(),
        )
        .unwrap(),
    );
    let replica_manager = Arc::new(ReplicaManager::new(0, log_manager));
    let tp = TopicPartition::new("t", 0);
    let partition = replica_manager
        .become_leader_or_follower(
            &tp,
            None,
            vec![0],
            LeaderAndIsr::new(0, vec![0]),
            static_config.log_config(),
        )
        .unwrap();
    let cache = Arc::new(MetadataCache::new("cluster".into()));
    cache.apply_update_metadata(
        0,
        Vec::new(),
        vec![PartitionUpdate {
            topic: "t".into(),
            topic_id: uuid::Uuid::nil(),
            is_internal: false,
            partition: 0,
            metadata: Some(PartitionMetadata {
                leader: 0,
                leader_epoch: 0,
                replicas: vec![0],
                isr: vec![0],
                offline_replicas: Vec::new(),
            }),
        }],
    );
    let topic_manager = Arc::new(TopicManager::new(
        Arc::clone(&zk),
        Arc::clone(&static_config),
        Arc::clone(&cache),
        Arc::clone(&replica_manager),
    ));
    let layers = DynamicLayers::from_persisted(&static_config, &BTreeMap::new(), &BTreeMap::new());
    let dynamic_config = Arc::new(DynamicBrokerConfig::new(
        Arc::clone(&zk),
        Arc::clone(&static_config),
        layers,
        Arc::clone(&topic_manager),
    ));
    let _listener = ConfigChangeListener::start(
        &f.watches,
        vec![
            (
                "topics",
                Arc::new(TopicConfigHandler {
                    topic_manager: Arc::clone(&topic_manager),
                    controller: crate::controller::ControllerHandle::detached(0),
                }) as Arc<dyn ConfigHandler>,
            ),
            (
                "brokers",
                Arc::new(BrokerConfigHandler {
                    broker_id: 0,
                    dynamic_config: Arc::clone(&dynamic_config),
                }),
            ),
        ],
        now_ms,
        &f.tasks,
        f.stop.clone(),
    );
    let log_config = || lock_log_config(&partition);
    let other = f.store.session();
    alter(&other, "topics", "t", &[("retention.ms", "1234")]).await;
    wait_for(|| log_config().retention_ms == 1234).await;
    assert_eq!(topic_manager.topic_overrides("t").len(), 1);
    // Another broker's own layer is not ours; the cluster default and ours are.
    alter(&other, "brokers", "7", &[("log.segment.bytes", "4096")]).await;
    alter(
        &other,
        "brokers",
        DEFAULT_ENTITY,
        &[("log.segment.bytes", "2048")],
    )
    .await;
    wait_for(|| log_config().segment_bytes == 2048).await;
    alter(&other, "brokers", "0", &[("log.segment.bytes", "3072")]).await;
    wait_for(|| log_config().segment_bytes == 3072).await;
    assert_eq!(dynamic_config.current().log_segment_bytes, 3072);
    // The topic's override stays on top of the new defaults.
    assert_eq!(log_config().retention_ms, 1234);
    f.stop.cancel();
}

fn lock_log_config(
    partition: &crate::replication::Partition,
) -> crate::storage::log_config::LogConfig {
    crate::cluster::sync::lock(partition.log()).config().clone()
}

async fn wait_for(done: impl Fn() -> bool) {
    let deadline = tokio::time::Instant::now() + WAIT;
    while !done() {
        assert!(
            tokio::time::Instant::now() < deadline,
            "not applied in time"
        );
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
}

#[tokio::test]
async fn quota_configs_are_loaded_at_start_followed_and_reloaded_after_a_new_session() {
    use crate::cluster::client_quota::{ClientQuotaEntity, QuotaEntity, QuotaEntityName, QuotaKey};
    use crate::server::client_quota_configs::{ClientQuotaConfigs, QuotaEntityConfigHandler};
    use crate::zk::quota_configs::{change_entity_config, entity_config_path};

    let f = fixture().await;
    let other = f.store.session();
    let named = |n: &str| Some(QuotaEntityName::Named(n.into()));
    let alice_app = QuotaEntity::Client(ClientQuotaEntity {
        user: named("alice"),
        client_id: named("app"),
    });
    let ip = QuotaEntity::Ip(QuotaEntityName::Default);
    let set = |entity: &QuotaEntity, key: &str, value: &str| {
        let path = entity_config_path(entity).unwrap();
        let config = BTreeMap::from([(key.to_string(), value.to_string())]);
        let other = &other;
        async move { change_entity_config(other, &path, &config).await.unwrap() }
    };
    // Stored before the broker starts: loaded at start, a user's client id included.
    set(&alice_app, "request_percentage", "12.5").await;
    let quotas = ClientQuotaConfigs::new();
    let handlers = QuotaEntityConfigHandler::all(&quotas);
    load_all_entity_configs(Arc::clone(f.watches.client()), handlers.clone())
        .await
        .unwrap();
    assert_eq!(
        quotas.quotas_of(&alice_app),
        BTreeMap::from([(QuotaKey::RequestPercentage, 12.5)])
    );
    // Then each change.
    let listener =
        ConfigChangeListener::start(&f.watches, handlers, now_ms, &f.tasks, f.stop.clone());
    set(&ip, "connection_creation_rate", "5").await;
    wait_for(|| quotas.quotas_of(&ip) == BTreeMap::from([(QuotaKey::ConnectionCreationRate, 5.0)]))
        .await;
    // Written while the session was gone, its notification purged: read again after a new one.
    let path = entity_config_path(&alice_app).unwrap();
    other
        .set_data(
            &path.znode(),
            &zk_data::encode_entity_config(&BTreeMap::from([(
                "producer_byte_rate".to_string(),
                "7".to_string(),
            )])),
            -1,
        )
        .await
        .unwrap();
    listener.inner.after_new_session();
    wait_for(|| {
        quotas.quotas_of(&alice_app) == BTreeMap::from([(QuotaKey::ProducerByteRate, 7.0)])
    })
    .await;
    f.stop.cancel();
}
