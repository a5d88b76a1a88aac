//! kcli's one integration test binary: tests that read the sources, run the `kcli` binary as a
//! real process on real files, and (later) start brokers against a real ZooKeeper.

// Test code: a failed unwrap is a failed test, with its location.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod acls;
mod assign;
mod cli;
mod cluster;
mod codegen;
mod controller_mutation_quota;
mod describe_cluster;
mod dump_segment;
mod ip_connection_rate;
mod kafka_tools;
mod network;
mod network_client;
mod network_sasl;
mod quota_enforcement;
mod quota_java_clients;
mod quota_precedence;
mod quotas;
mod rebuild_index;
mod rebuild_index_kafka;
mod record_interop;
mod serve_admin_raw;
mod serve_bad_input;
mod serve_clients;
mod serve_controller_requests;
mod serve_fetch_sessions;
mod serve_groups;
mod serve_hostile_load;
mod serve_idempotence;
mod serve_log_dirs;
mod serve_metrics;
mod serve_restart;
mod serve_sasl_clients;
mod serve_stress;
mod serve_support;
mod serve_tls;
mod serve_txn_verification;
mod storage_compaction;
mod storage_disk_full;
mod storage_follower_append;
mod storage_log;
mod storage_log_dirs;
mod storage_manager;
mod storage_model;
mod storage_producer_state;
mod storage_support;
mod storage_transactions;
mod support;
mod tidy;
mod users;
#[rustfmt::skip]
mod messages;
mod mixed_cluster;
mod protocol_arb;
mod protocol_capture;
mod protocol_hostile;
mod protocol_java_oracle;
mod protocol_json;
mod protocol_roundtrip;
mod zk_session;
mod zk_zookeeper;
