//! Administrative algorithms that need no I/O: where a topic's replicas go, and how to move
//! them.
//!
//! - [`replica_assignment`]: Kafka's `AdminUtils.assignReplicasToBrokers`, `BrokerMetadata`.
//! - [`rack_aware`]: its rack-aware half (`getRackAlternatedBrokerList`) and `RackAwareMode`.
//! - [`random`]: the seedable random source of its two draws (start index, replica shift).
//! - `balance`: replicas and leaders per broker and per rack, and the skew.
//! - [`minimize_movement`]: a proposal meeting Kafka's constraints with the fewest moves,
//!   over the min-cost flow solver of `min_cost_flow`.
//! - [`reassignment_json`]: Kafka's reassignment JSON and topics-to-move JSON.
//!
//! Layering: uses only `cluster`.

#[cfg(test)]
mod assignment_properties;
pub(crate) mod balance;
mod min_cost_flow;
pub mod minimize_movement;
mod movement_flows;
pub mod rack_aware;
pub mod random;
pub mod reassignment_json;
pub mod replica_assignment;
