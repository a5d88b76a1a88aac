//! The APIs this broker advertises in ApiVersions, with their version ranges: exactly those it
//! implements, among the ones Kafka 3.9 serves on a ZooKeeper-mode broker, each up to its highest
//! stable version in the specs. Clients pick features from this list (librdkafka enables
//! compression codecs from it), so it must never claim more than the handlers do.

use crate::protocol::codec::VersionRange;
use crate::protocol::messages::ApiKey;

/// The implemented APIs and the lowest version each serves.
const IMPLEMENTED: &[(ApiKey, i16)] = &[
    // Produce from v0: librdkafka 2.0 (Debian's kcat) enables gzip and snappy only when the
    // broker's minimum Produce version is 0. v0-2 carry message sets of magic 0/1, converted.
    (ApiKey::Produce, 0),
    // Fetch from v0: v0-3 are down-converted to magic 0/1 message sets.
    (ApiKey::Fetch, 0),
    (ApiKey::ListOffsets, 0),
    (ApiKey::Metadata, 0),
    (ApiKey::FindCoordinator, 0),
    (ApiKey::ApiVersions, 0),
    // SASL, exchanged before a SASL listener's requests reach the handler
    // (server/sasl_authenticator.rs); afterwards, and on other listeners, ILLEGAL_SASL_STATE.
    (ApiKey::SaslHandshake, 0),
    (ApiKey::SaslAuthenticate, 0),
    (ApiKey::CreateTopics, 0),
    (ApiKey::DeleteTopics, 0),
    (ApiKey::DeleteRecords, 0),
    (ApiKey::OffsetForLeaderEpoch, 0),
    (ApiKey::DescribeConfigs, 0),
    (ApiKey::AlterConfigs, 0),
    (ApiKey::CreatePartitions, 0),
    (ApiKey::IncrementalAlterConfigs, 0),
    (ApiKey::DescribeCluster, 0),
    // Preferred and unclean elections, answered by the controller (apis::elect_leaders).
    (ApiKey::ElectLeaders, 0),
    // Reassignment, carried out by the controller (apis::alter_partition_reassignments,
    // apis::list_partition_reassignments).
    (ApiKey::AlterPartitionReassignments, 0),
    (ApiKey::ListPartitionReassignments, 0),
    // The broker's log dirs and moves between them (apis::describe_log_dirs,
    // apis::alter_replica_log_dirs).
    (ApiKey::DescribeLogDirs, 0),
    (ApiKey::AlterReplicaLogDirs, 0),
    // SCRAM credentials in /config/users: described by any broker, altered by the controller
    // only (apis::describe_user_scram_credentials, apis::alter_user_scram_credentials).
    (ApiKey::DescribeUserScramCredentials, 0),
    (ApiKey::AlterUserScramCredentials, 0),
    // Client quota configs in /config/{users,clients,ips}, described and altered by any broker
    // (apis::describe_client_quotas, apis::alter_client_quotas); enforced by server::quota and
    // the socket server's connection quotas.
    (ApiKey::DescribeClientQuotas, 0),
    (ApiKey::AlterClientQuotas, 0),
    // Idempotent producers, and transactional ids through the transaction coordinator
    // (src/coordinator/transaction/).
    (ApiKey::InitProducerId, 0),
    (ApiKey::AddPartitionsToTxn, 0),
    (ApiKey::AddOffsetsToTxn, 0),
    (ApiKey::EndTxn, 0),
    // Offsets committed in a transaction, by the group coordinator (apis::txn_offset_commit).
    (ApiKey::TxnOffsetCommit, 0),
    // The transactions admin APIs of KIP-664 (apis::describe_transactions, list_transactions,
    // describe_producers).
    (ApiKey::DescribeTransactions, 0),
    (ApiKey::ListTransactions, 0),
    (ApiKey::DescribeProducers, 0),
    // Coordinator-to-leader: the markers that end a transaction (apis::write_txn_markers).
    (ApiKey::WriteTxnMarkers, 0),
    // Broker-to-controller: the controller hands out producer id blocks (ZooKeeper mode, IBP
    // 3.0+); a single node is its own controller.
    (ApiKey::AllocateProducerIds, 0),
    // Broker-to-controller: a leader's ISR changes (apis::alter_partition, served by the
    // controller's queue), every version a Kafka 3.9 broker may send.
    (ApiKey::AlterPartition, 0),
    // Broker-to-controller: a stopping broker's leaderships move first (apis::controlled_shutdown,
    // served by the controller's queue), every version a Kafka 3.9 broker may send.
    (ApiKey::ControlledShutdown, 0),
    // Controller-to-broker (src/controller/ sends them; apis::leader_and_isr, update_metadata
    // and stop_replica serve them), every version a Kafka 3.9 controller may send.
    (ApiKey::LeaderAndIsr, 0),
    (ApiKey::StopReplica, 0),
    (ApiKey::UpdateMetadata, 0),
    // The classic group coordinator (src/server/group/).
    (ApiKey::OffsetCommit, 0),
    (ApiKey::OffsetFetch, 0),
    (ApiKey::JoinGroup, 0),
    (ApiKey::Heartbeat, 0),
    (ApiKey::LeaveGroup, 0),
    (ApiKey::SyncGroup, 0),
    (ApiKey::DescribeGroups, 0),
    (ApiKey::ListGroups, 0),
    (ApiKey::DeleteGroups, 0),
    (ApiKey::OffsetDelete, 0),
    // ACLs in the authorizer's store (apis::create_acls, describe_acls, delete_acls);
    // SECURITY_DISABLED without `authorizer.class.name`, as Kafka answers.
    (ApiKey::DescribeAcls, 0),
    (ApiKey::CreateAcls, 0),
    (ApiKey::DeleteAcls, 0),
];

/// The advertised range of `key`, or `None` when it is not advertised.
pub(crate) fn advertised(key: ApiKey) -> Option<VersionRange> {
    let (_, min) = IMPLEMENTED.iter().find(|(k, _)| *k == key)?;
    let info = key.info();
    Some(VersionRange {
        min: (*min).max(info.valid.min),
        max: info.max_stable_version(),
    })
}

/// Every advertised API, ordered by key as Kafka lists them.
pub(crate) fn all_advertised() -> Vec<(ApiKey, VersionRange)> {
    let mut out: Vec<(ApiKey, VersionRange)> = IMPLEMENTED
        .iter()
        .filter_map(|(k, _)| advertised(*k).map(|r| (*k, r)))
        .collect();
    out.sort_by_key(|(k, _)| *k as i16);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_zk_broker_apis_within_their_stable_versions() {
        for (key, range) in all_advertised() {
            let info = key.info();
            assert!(
                info.zk_broker(),
                "{key:?} is not a ZooKeeper-mode broker API"
            );
            assert!(range.min <= range.max, "{key:?}");
            assert!(info.valid.contains(range.min) && info.valid.contains(range.max));
            assert!(range.max <= info.max_stable_version());
        }
        assert_eq!(advertised(ApiKey::Produce).map(|r| r.min), Some(0));
        let group_apis = [
            (ApiKey::JoinGroup, 9),
            (ApiKey::SyncGroup, 5),
            (ApiKey::Heartbeat, 4),
            (ApiKey::LeaveGroup, 5),
            (ApiKey::OffsetCommit, 9),
            (ApiKey::OffsetFetch, 9),
            (ApiKey::ListGroups, 5),
            (ApiKey::DescribeGroups, 5),
            (ApiKey::DeleteGroups, 2),
            (ApiKey::OffsetDelete, 0),
            (ApiKey::FindCoordinator, 6),
        ];
        for (key, max) in group_apis {
            assert_eq!(
                advertised(key),
                Some(VersionRange { min: 0, max }),
                "{key:?}"
            );
        }
        for key in [ApiKey::DescribeClientQuotas, ApiKey::AlterClientQuotas] {
            assert_eq!(
                advertised(key),
                Some(VersionRange { min: 0, max: 1 }),
                "{key:?}"
            );
        }
        assert_eq!(
            advertised(ApiKey::InitProducerId),
            Some(VersionRange { min: 0, max: 5 })
        );
        assert_eq!(
            advertised(ApiKey::DescribeLogDirs),
            Some(VersionRange { min: 0, max: 4 })
        );
        assert_eq!(
            advertised(ApiKey::AlterReplicaLogDirs),
            Some(VersionRange { min: 0, max: 2 })
        );
        assert_eq!(
            advertised(ApiKey::ControlledShutdown),
            Some(VersionRange { min: 0, max: 3 })
        );
        assert_eq!(
            advertised(ApiKey::ElectLeaders),
            Some(VersionRange { min: 0, max: 2 })
        );
        assert_eq!(
            advertised(ApiKey::AlterPartitionReassignments),
            Some(VersionRange { min: 0, max: 0 })
        );
        assert_eq!(
            advertised(ApiKey::ListPartitionReassignments),
            Some(VersionRange { min: 0, max: 0 })
        );
        // The transaction coordinator's APIs, every version Kafka 3.9 serves.
        for (key, max) in [
            (ApiKey::AddPartitionsToTxn, 5),
            (ApiKey::AddOffsetsToTxn, 4),
            (ApiKey::EndTxn, 4),
            (ApiKey::WriteTxnMarkers, 1),
        ] {
            assert_eq!(
                advertised(key),
                Some(VersionRange { min: 0, max }),
                "{key:?}"
            );
        }
        assert_eq!(
            advertised(ApiKey::TxnOffsetCommit),
            Some(VersionRange { min: 0, max: 4 })
        );
        for (key, max) in [
            (ApiKey::DescribeTransactions, 0),
            (ApiKey::ListTransactions, 1),
            (ApiKey::DescribeProducers, 0),
        ] {
            assert_eq!(
                advertised(key),
                Some(VersionRange { min: 0, max }),
                "{key:?}"
            );
        }
    }
}
