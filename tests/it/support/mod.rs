//! The cluster test harness: a real ZooKeeper ([`zookeeper`]) and a real Kafka 3.9.1 broker in
//! ZooKeeper mode ([`kafka_broker`]), each a separate process on 127.0.0.1 with a free port and
//! a temp dir, stopped by PID, or a three-server ZooKeeper ensemble to fail ([`zk_ensemble`]); brokers in network namespaces
//! whose links tests cut ([`netns`]) or slow down ([`delay_relay`]); kcli clusters on a real ZooKeeper ([`cluster`]), one at a time;
//! Kafka and kcli brokers in one cluster ([`mixed_cluster`]); an idempotent produce load and its
//! check that nothing acknowledged was lost ([`produce_load`]); a real Prometheus ([`prometheus`])
//! and a scraper and parser of `/metrics` endpoints ([`exposition`]); client quotas set
//! with Kafka's tool and what its windowed rate allows a client ([`client_quotas`]); one request on the wire
//! ([`requests`]); and test certificates ([`tls`]).

pub mod availability;
pub mod client_quotas;
pub mod cluster;
pub mod delay_relay;
pub mod exposition;
pub mod kafka_broker;
pub mod mixed_cluster;
pub mod netns;
pub mod produce_load;
pub mod prometheus;
pub mod requests;
pub mod tls;
pub mod zk_ensemble;
pub mod zookeeper;
