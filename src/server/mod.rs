//! The broker: `KafkaServer` wires configuration, the metadata store, the log manager, the
//! replica manager and the socket server together; `KafkaApis` answers every request, one
//! handler per API under `apis`.
//!
//! - `kafka_server`: startup (store, cluster id, logs, broker registration, controller
//!   election, topics), its phases in `kafka_server/startup.rs`, and clean shutdown.
//! - `kafka_apis`: the network layer's `RequestHandler`: header decoding, version checks,
//!   dispatch.
//! - `request_context`: what a handler knows of its request, and response framing.
//! - `ssl_listeners`: the TLS of SSL and SASL_SSL listeners and of the inter-broker client,
//!   from the `ssl.*` keys; the SSL principal builder.
//! - [`sasl_authenticator`]: Kafka's `SaslServerAuthenticator`, the SASL exchange a SASL
//!   listener runs on each connection before its first request.
//! - `sasl_listeners`: the SASL listeners' JAAS configs, users and authenticators, and the
//!   inter-broker client's credentials, built from the config; `credential_provider` and
//!   `scram_credential_cache` the users they look up (JAAS PLAIN users, `/config/users`).
//! - `sasl_client_authenticator`: the SASL exchange toward another broker's SASL listener.
//! - `api_versions`: the APIs and versions this broker advertises.
//! - `broker_registration`: the broker id, `/brokers/ids/<id>`, re-registration after a
//!   ZooKeeper session expiry.
//! - `alter_partition_manager`: the leaders' ISR changes, batched into AlterPartition to the
//!   controller over `broker_to_controller_channel`.
//! - `coordinators`: the group and transaction coordinators, built from the config.
//! - `controlled_shutdown`: a stopping cluster broker's leaderships moved first, with retries.
//! - `rpc_producer_id_manager`: producer ids in blocks the controller hands out
//!   (AllocateProducerIds), over `broker_to_controller_channel`.
//! - `zk_producer_id_manager`: the controller's half: blocks claimed from
//!   `/latest_producer_id_block`.
//! - `txn_marker_channel`: the transaction coordinator's wire to the partition leaders
//!   (WriteTxnMarkers over the inter-broker client).
//! - `add_partitions_to_txn_manager`: the leaders' wire to the transaction coordinators
//!   (KIP-890's verification of a transaction's first batch in a partition).
//! - `inter_broker_clients`: the clients both of these use, one per broker address.
//! - `log_dir_failure_handler`: a failed log dir's partitions offline; the halt when none is left.
//! - `fetch_session`, `fetch_session_cache`: incremental fetch sessions (KIP-227): each
//!   Fetch's context, the session cache with Kafka's eviction, and its metrics.
//! - `metadata_cache`: brokers, controller and topics as this broker knows them.
//! - `metrics`: the metrics endpoint's rendering: the Prometheus JMX exporter's rules applied
//!   to what the layers record.
//! - `quota`: client quotas (produce, fetch and request), their precedence, sliding-window
//!   measurement and throttling (Kafka's `QuotaFactory`, `ClientQuotaManager`).
//! - `replication_throttles`: the leader and follower replication throttle rates, from the
//!   dynamic broker configs.
//! - `remote_leader_end_point`: the replica fetchers' `LeaderEndPoint` over the inter-broker
//!   client (Fetch and ListOffsets to the leader).
//! - `dynamic_broker_config`: dynamic broker configs in `/config/brokers/*`, applied live.
//! - `config_change_listener`: applies the topic, broker, user, client and IP configs any
//!   broker or tool changed (`/config/changes`).
//! - `client_quota_admin`: DescribeClientQuotas' and AlterClientQuotas' semantics over
//!   `/config/{users,clients,ips}`.
//! - `client_quota_configs`: the quota configs read from `/config/{users,clients,ips}`, and
//!   the `QuotaConfigHandler` seam through which the quota managers receive them.
//! - `config_entries`: config entries, sources and synonyms as DescribeConfigs reports them.
//! - `config_ops`: AlterConfigs' shared checks and IncrementalAlterConfigs' operations.
//! - `topic_manager`: topic creation, deletion, partitions and configs in ZooKeeper's layout.
//! - `topic_assignment`: Kafka's checks of client-given replica assignments.
//! - `topic_validation`: Kafka's topic-name rules.
//! - `user_scram_admin`: SCRAM credentials in `/config/users` (AlterUserScramCredentials and
//!   DescribeUserScramCredentials).
//! - `acl_authorizer`: Kafka's `AclAuthorizer`: the ACL cache loaded from the store, ACL
//!   updates, change notifications.
//! - `auth_helper`: Kafka's `AuthHelper`, the authorization questions handlers ask.
//! - `apis`: one module per API.
//!
//! Layering: the server sits above every other module but `commands`.

pub(crate) mod acl_authorizer;
pub(crate) mod add_partitions_to_txn_manager;
pub(crate) mod alter_partition_manager;
pub(crate) mod api_versions;
pub(crate) mod apis;
pub(crate) mod auth_helper;
pub(crate) mod broker_epoch_manager;
pub(crate) mod broker_registration;
pub(crate) mod broker_to_controller_channel;
pub(crate) mod client_quota_admin;
pub(crate) mod client_quota_configs;
pub(crate) mod config_change_listener;
pub(crate) mod config_entries;
pub(crate) mod config_ops;
pub(crate) mod controlled_shutdown;
pub mod controller_channel;
pub(crate) mod coordinators;
pub(crate) mod credential_provider;
pub(crate) mod dynamic_broker_config;
pub(crate) mod error;
pub(crate) mod fetch_session;
pub(crate) mod fetch_session_cache;
pub(crate) mod inter_broker_clients;
pub(crate) mod kafka_apis;
pub(crate) mod kafka_server;
pub(crate) mod log_dir_failure_handler;
pub(crate) mod metadata_cache;
pub(crate) mod metrics;
pub(crate) mod quota;
pub(crate) mod remote_leader_end_point;
pub(crate) mod replication_throttles;
pub(crate) mod request_context;
pub(crate) mod rpc_producer_id_manager;
pub mod sasl_authenticator;
pub(crate) mod sasl_client_authenticator;
pub(crate) mod sasl_listeners;
pub(crate) mod scram_credential_cache;
pub(crate) mod ssl_listeners;
pub(crate) mod topic_assignment;
pub(crate) mod topic_manager;
pub(crate) mod topic_validation;
pub(crate) mod txn_marker_channel;
pub(crate) mod user_scram_admin;
pub(crate) mod zk_producer_id_manager;

pub use error::ServerError;
pub use kafka_apis::KafkaApis;
pub use kafka_server::KafkaServer;
