//! Kafka's znode paths and JSON payloads, byte for byte as Kafka 3.9 writes them.
