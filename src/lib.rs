//! kcli: a Kafka-compatible broker (ZooKeeper mode, byte-compatible with Apache Kafka 3.9) and an
//! admin/inspection toolkit, in one binary.
//!
//! # Layout
//!
//! One line per top-level module, in layer order (each uses only those above it, as the
//! layering below says):
//!
//! - [`protocol`]: Kafka's wire formats, sans-io: record batches (v2 and legacy v0/v1), framing,
//!   error codes, and every request and response of Kafka 3.9, generated from its JSON specs.
//! - [`cluster`]: shared vocabulary: `TopicPartition`, broker ids, epochs, `LeaderAndIsr`, the
//!   inter-broker protocol version, principals, the clock and lock helpers.
//! - [`metrics`]: Kafka's metrics as its MBeans name them: meters, histograms and gauges
//!   recorded without locks, and the registry each layer adds its sources to; no I/O.
//! - [`security`]: authentication and authorization without I/O: SASL servers and clients
//!   (PLAIN, SCRAM-SHA-256/512), SCRAM credentials, `sasl.jaas.config`, TLS configuration and
//!   principals, and Kafka's ACL model and decision cache.
//! - [`storage`]: the partition log: segments of record batches with offset and time indexes,
//!   recovery, retention, compaction (the log cleaner), producer state, checkpoints and the log
//!   manager over several log dirs.
//! - [`zk`]: the `ZkClient` trait, over a real ZooKeeper (sessions rebuilt after expiry) or the
//!   embedded store kcli uses on its own; the watch dispatcher; Kafka's znode paths and JSON.
//! - [`admin`]: administrative algorithms without I/O: replica assignment, balance, reassignment
//!   JSON.
//! - [`config`]: the broker's settings: Kafka 3.9's `server.properties` keys and defaults, the
//!   file and `--override` layers, and the list `DescribeConfigs` reports.
//! - [`network`]: the socket server (listeners, connections, the request queue and handler
//!   tasks, `writev`/`sendfile(2)` responses) and the outbound inter-broker client.
//! - [`replication`]: the partitions this broker hosts: leadership, ISR, high watermark, the
//!   purgatory's waits; the replica manager and the replica fetchers.
//! - [`controller`]: `KafkaController`: one event queue electing partition leaders, its state
//!   machines, and the channels to the brokers (LeaderAndIsr, UpdateMetadata, StopReplica).
//! - [`coordinator`]: the coordinators that own internal topics' partitions: the group
//!   coordinator over `__consumer_offsets` and the transaction coordinator over
//!   `__transaction_state`.
//! - [`server`]: the broker: startup and shutdown, the request handlers (one per API), the
//!   metadata cache, topic administration, the authorizer, producer ids; wires every layer.
//! - [`cli`]: the clap types of the command line; every flag documented.
//! - [`commands`]: one module per subcommand; turns arguments into library calls and renders
//!   output.
//!
//! # Layering
//!
//! `protocol`, `cluster`, `metrics`, `security` and `cli` depend on nothing in the crate, and
//! every layer may record in `metrics`; `storage` uses
//! only `protocol` and `cluster`; `zk` and `admin` only `cluster`; `config` uses `storage`,
//! `protocol`, `cluster` and `security`; `network` only `protocol` and `cluster`; `replication`
//! uses `storage`, `protocol` and `cluster`; `controller` uses `zk`, `admin`, `cluster` and
//! `protocol`; `coordinator` uses `replication`, `protocol`, `cluster` and `zk`; `server` wires
//! everything; `commands` sits on top. The rule is enforced by `tests/it/tidy.rs`, which reads
//! the sources.

// `pub` means used outside the crate (main.rs, tests/it, benches); the rest is `pub(crate)` or
// private. Here rather than in Cargo.toml so that the test binary's helpers are not held to it.
#![warn(unreachable_pub)]

pub mod admin;
pub mod cli;
pub mod cluster;
pub mod commands;
pub mod config;
pub mod controller;
pub mod coordinator;
pub mod metrics;
pub mod network;
pub mod protocol;
pub mod replication;
pub mod security;
pub mod server;
pub mod storage;
pub mod zk;
