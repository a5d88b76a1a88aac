//! The broker: `KafkaServer` wires configuration, the metadata store, the log manager, the
//! replica manager and the socket server together; `KafkaApis` answers every request, one
//! handler per API under [`apis`].
//!
//! - [`kafka_server`]: startup (store, cluster id, logs, broker registration, controller
//!   election, topics) and clean shutdown.
//! - [`kafka_apis`]: the network layer's `RequestHandler`: header decoding, version checks,
//!   dispatch.
//! - [`request_context`]: what a handler knows of its request, and response framing.
//! - [`api_versions`]: the APIs and versions this broker advertises.
//! - [`metadata_cache`]: brokers, controller and topics as this broker knows them.
//! - [`topic_manager`]: topic creation, deletion, partitions and configs in ZooKeeper's layout.
//! - [`topic_validation`]: Kafka's topic-name rules.
//! - [`apis`]: one module per API.
//!
//! Layering: the server sits above every other module but `commands`.

pub mod api_versions;
pub mod apis;
pub mod error;
pub mod kafka_apis;
pub mod kafka_server;
pub mod metadata_cache;
pub mod request_context;
pub mod topic_manager;
pub mod topic_validation;

pub use error::ServerError;
pub use kafka_apis::KafkaApis;
pub use kafka_server::KafkaServer;
