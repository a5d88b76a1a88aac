//! Kafka's versioned text checkpoint files, written atomically.
