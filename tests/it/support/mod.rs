//! The cluster test harness: a real ZooKeeper ([`zookeeper`]) and a real Kafka 3.9.1 broker in
//! ZooKeeper mode ([`kafka_broker`]), each a separate process on 127.0.0.1 with a free port and
//! a temp dir, stopped by PID. Later cluster helpers (kcli brokers on ZooKeeper) join them here.

pub mod kafka_broker;
pub mod zookeeper;
