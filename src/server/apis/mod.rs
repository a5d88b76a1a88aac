//! One module per Kafka API, each with a `handle` function taking the shared [`KafkaApis`]
//! state, the request's context and its decoded body, and returning the network layer's
//! `Response`.
//!
//! [`KafkaApis`]: super::KafkaApis

pub mod api_versions;
mod authorized_operations;
pub mod fetch;
pub mod find_coordinator;
pub mod list_offsets;
pub mod message_format;
pub mod metadata;
pub mod produce;
