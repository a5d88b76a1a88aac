//! ZooKeeper: the `ZkClient` trait every metadata user talks to; the embedded in-process store
//! that implements it for the single-node default (persisted in the data dir); `ZooKeeperClient`,
//! the same trait over a real ensemble; `recipes` (recursive create, the pre-created paths, the
//! cluster id); and `zk_data`, Kafka's znode paths and JSON payloads byte for byte as Kafka 3.9
//! writes them.
//!
//! Layering: this module uses only `crate::cluster`.

pub mod broker_znode;
pub mod client;
pub mod embedded;
mod json_order;
pub mod kafka_zk_client;
pub mod recipes;
mod snapshot;
mod tree;
mod txn_log;
pub mod zk_data;
mod zk_paths;
pub mod zookeeper;

pub use client::{
    CreateMode, Op, OpResult, Stat, WatchedEvent, WatchedEventType, ZkClient, ZkError, ZkFuture,
};
pub use embedded::{EmbeddedSession, EmbeddedStore};
pub use zookeeper::ZooKeeperClient;
