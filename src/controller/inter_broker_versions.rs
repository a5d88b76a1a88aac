//! The versions of the controller's requests, chosen by `inter.broker.protocol.version` as
//! Kafka's `ControllerChannelManager` chooses them (no ApiVersions exchange between brokers: the
//! operator's IBP is the contract, so a rolling upgrade can hold every broker to the oldest).

pub use crate::cluster::inter_broker_protocol::{IbpError, InterBrokerProtocolVersion};

/// The request versions the controller sends at one IBP.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ControllerRequestVersions {
    pub leader_and_isr: i16,
    pub update_metadata: i16,
    pub stop_replica: i16,
}

impl ControllerRequestVersions {
    /// Kafka's choice (reference §2.5): from 3.4-IV0 LeaderAndIsr 7, UpdateMetadata 8,
    /// StopReplica 4; from 3.2-IV0 LeaderAndIsr 6; below, the 2.8 versions.
    pub fn for_ibp(ibp: InterBrokerProtocolVersion) -> Self {
        if ibp.at_least(3, 4, 0) {
            ControllerRequestVersions {
                leader_and_isr: 7,
                update_metadata: 8,
                stop_replica: 4,
            }
        } else if ibp.at_least(3, 2, 0) {
            ControllerRequestVersions {
                leader_and_isr: 6,
                update_metadata: 7,
                stop_replica: 3,
            }
        } else {
            ControllerRequestVersions {
                leader_and_isr: 5,
                update_metadata: 7,
                stop_replica: 3,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_follow_the_ibp() {
        let at =
            |s| ControllerRequestVersions::for_ibp(InterBrokerProtocolVersion::parse(s).unwrap());
        assert_eq!(at("3.9").leader_and_isr, 7);
        assert_eq!(at("3.4-IV0").update_metadata, 8);
        assert_eq!(at("3.3").stop_replica, 3);
        assert_eq!(at("3.2-IV0").leader_and_isr, 6);
        assert_eq!(at("3.1").leader_and_isr, 5);
    }
}
