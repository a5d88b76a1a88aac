//! Kafka's tools and Admin client on the log dirs.
