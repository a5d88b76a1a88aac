//! The versions of the controller's and the replica fetchers' requests, chosen by
//! `inter.broker.protocol.version` as Kafka's `ControllerChannelManager` and `MetadataVersion`
//! choose them (no ApiVersions exchange between brokers: the operator's IBP is the contract, so
//! a rolling upgrade can hold every broker to the oldest).

pub(crate) use crate::cluster::inter_broker_protocol::InterBrokerProtocolVersion;

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

/// The versions of the replica fetchers' requests at one IBP (Kafka's `MetadataVersion
/// .fetchRequestVersion` and `listOffsetRequestVersion`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct ReplicaFetcherRequestVersions {
    pub fetch: i16,
    pub list_offsets: i16,
}

impl ReplicaFetcherRequestVersions {
    /// Fetch 17 from 3.9-IV0, 16 from 3.7-IV4, 15 from 3.5-IV1, 14 from 3.5-IV0, 13 from
    /// 3.1-IV0, else 12; ListOffsets 9 from 3.9-IV0, 8 from 3.5-IV0, else 7.
    pub(crate) fn for_ibp(ibp: InterBrokerProtocolVersion) -> Self {
        let fetch = [
            ((3, 9, 0), 17),
            ((3, 7, 4), 16),
            ((3, 5, 1), 15),
            ((3, 5, 0), 14),
            ((3, 1, 0), 13),
        ]
        .iter()
        .find(|((major, minor, iv), _)| ibp.at_least(*major, *minor, *iv))
        .map_or(12, |(_, v)| *v);
        let list_offsets = if ibp.at_least(3, 9, 0) {
            9
        } else if ibp.at_least(3, 5, 0) {
            8
        } else {
            7
        };
        ReplicaFetcherRequestVersions {
            fetch,
            list_offsets,
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

    #[test]
    fn replica_fetcher_versions_follow_the_ibp() {
        let at = |s| {
            ReplicaFetcherRequestVersions::for_ibp(InterBrokerProtocolVersion::parse(s).unwrap())
        };
        assert_eq!(at("3.9").fetch, 17);
        assert_eq!(at("3.9").list_offsets, 9);
        assert_eq!(at("3.8").fetch, 16);
        assert_eq!(at("3.7-IV3").fetch, 15);
        assert_eq!(at("3.5-IV0").fetch, 14);
        assert_eq!(at("3.5-IV0").list_offsets, 8);
        assert_eq!(at("3.1").fetch, 13);
        assert_eq!(at("3.0").fetch, 12);
        assert_eq!(at("3.4").list_offsets, 7);
    }
}
