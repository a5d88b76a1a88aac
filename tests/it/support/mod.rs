//! The cluster test harness: a real ZooKeeper ([`zookeeper`]) and a real Kafka 3.9.1 broker in
//! ZooKeeper mode ([`kafka_broker`]), each a separate process on 127.0.0.1 with a free port and
//! a temp dir, stopped by PID; kcli clusters on a real ZooKeeper ([`cluster`]), one at a time;
//! and test certificates ([`tls`]).

pub mod cluster;
pub mod kafka_broker;
pub mod tls;
pub mod zookeeper;
