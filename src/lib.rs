//! kcli: a Kafka-compatible broker (ZooKeeper mode, byte-compatible with Apache Kafka 3.9) and an
//! admin/inspection toolkit, in one binary.
//!
//! # Layout
//!
//! - [`cli`]: the clap types of the command line; every flag documented.
//! - [`commands`]: one module per subcommand; turns arguments into library calls and renders output.
//! - [`cluster`]: shared vocabulary: `TopicPartition`, broker ids, epochs.
//! - [`protocol`]: Kafka's wire formats, sans-io: record batches (v2 and legacy v0/v1), and every
//!   request and response of Kafka 3.9, generated from its JSON message specs.
//! - [`config`]: the broker's settings: Kafka 3.9's `server.properties` keys and defaults, the
//!   file and `--override` layers, and the list `DescribeConfigs` reports.
//! - [`network`]: the socket server: listeners, connections, the request queue and handler
//!   tasks; writes responses with `writev` and `sendfile(2)`.
//! - [`admin`]: administrative algorithms without I/O: replica assignment.
//! - [`replication`]: the partitions this broker hosts: leadership, ISR, high watermark, the
//!   purgatory's waits; the replica manager.
//! - [`security`]: authentication without I/O: the SASL servers (PLAIN, SCRAM-SHA-256/512),
//!   SCRAM credentials in Kafka's ZooKeeper form, and the `sasl.jaas.config` parser.
//! - [`coordinator`]: the coordinators that own internal topics' partitions: the group
//!   coordinator and `__consumer_offsets`.
//! - [`server`]: the broker: startup and shutdown, the request handlers (one per API), the
//!   metadata cache, topic administration, producer ids.
//! - [`storage`]: the partition log: segments of record batches with offset and time indexes,
//!   recovery, retention, compaction (the log cleaner), idempotent producer state, checkpoints
//!   and the log manager over several log dirs.
//! - [`zk`]: the `ZkClient` trait, over a real ZooKeeper or the embedded store kcli uses on its
//!   own; Kafka's znode paths and JSON payloads.
//!
//! # Layering
//!
//! `protocol`, `cluster` and `security` depend on nothing in the crate; `storage` uses only
//! `protocol` and `cluster`; `zk` only `cluster`; `network` only `protocol` and `cluster`;
//! `config` builds on `storage`; `admin` uses only `cluster`; `replication` uses `storage`,
//! `protocol` and `cluster`; `coordinator` uses `replication`, `protocol`, `cluster` and `zk`;
//! `server` wires everything; `commands` sits on top. The rule is
//! enforced by `tests/it/tidy.rs`, which reads the sources.

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
pub mod network;
pub mod protocol;
pub mod replication;
pub mod security;
pub mod server;
pub mod storage;
pub mod zk;
