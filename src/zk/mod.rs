//! ZooKeeper: the `ZkClient` trait every metadata user talks to; the embedded in-process store
//! that implements it for the single-node default (persisted in the data dir); `ZooKeeperClient`,
//! the same trait over one session of a real ensemble, and `ZkSession`, the client that rebuilds
//! its session after an expiry and runs the after-new-session handlers; the `WatchDispatcher`
//! that routes watch events to per-path handlers; the `WatchRegistry` of a session's armed
//! watches, which a resumed session arms again; `checked_ephemeral`, Kafka's CheckedEphemeral
//! create; `recipes` (recursive create, the pre-created paths, the
//! cluster id); `zk_data`, Kafka's znode paths and JSON payloads byte for byte as Kafka 3.9
//! writes them; `sanitizer`, Kafka's URL-encoding of entity names; `user_configs`,
//! `AdminZkClient`'s reads and writes of `/config/users` with their change notifications;
//! `quota_configs`, the same for the quota entities (users, user and client id, client ids,
//! IPs); and
//! `acl_store`, the ACL znodes and change notifications of Kafka's `ZkAclStore`; `metrics`,
//! the client's request latency and session state meters; `zk_node_change_notification_listener`,
//! Kafka's follower of a path of sequential change notifications (configs, ACLs).
//!
//! Layering: this module uses only `crate::cluster` and `crate::metrics`.

pub(crate) mod acl_store;
pub(crate) mod broker_znode;
pub(crate) mod checked_ephemeral;
pub mod client;
pub(crate) mod embedded;
mod json_order;
pub mod kafka_zk_client;
pub(crate) mod metrics;
pub(crate) mod quota_configs;
pub mod recipes;
pub(crate) mod sanitizer;
pub mod session;
mod snapshot;
mod tree;
mod txn_log;
pub(crate) mod user_configs;
pub(crate) mod watch_dispatcher;
pub(crate) mod watch_registry;
pub mod zk_data;
pub(crate) mod zk_node_change_notification_listener;
mod zk_paths;
pub mod zookeeper;

pub use checked_ephemeral::create_checked_ephemeral;
pub use client::{
    CreateMode, HandlerFuture, Op, OpResult, SessionState, Stat, StateChangeHandler, WatchedEvent,
    WatchedEventType, ZkClient, ZkError, ZkFuture,
};
pub use embedded::{EmbeddedSession, EmbeddedStore};
pub use session::ZkSession;
pub use watch_dispatcher::{WatchDispatcher, ZNodeChangeHandler, ZNodeChildChangeHandler};
pub use zookeeper::ZooKeeperClient;
