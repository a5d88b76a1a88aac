//! The coordinators' side of leadership changes (Kafka's `onLeadershipChange` in `KafkaApis`):
//! the replica manager reports, once per LeaderAndIsr or StopReplica, the partitions this
//! broker came to lead and those it follows or stopped hosting, and each coordinator loads or
//! unloads the partitions of its internal topic, at their leader epochs (its coordinator
//! epochs).

use std::sync::Arc;

use crate::cluster::{GROUP_METADATA_TOPIC_NAME, TRANSACTION_STATE_TOPIC_NAME};
use crate::replication::replica_manager::{LeadershipChange, LeadershipListener};

use super::group::GroupCoordinator;
use super::transaction::TransactionCoordinator;

/// Every coordinator of this broker, told of the leadership of their partitions.
#[derive(Debug)]
pub struct CoordinatorLeadership {
    group: Arc<GroupCoordinator>,
    transaction: Arc<TransactionCoordinator>,
}

impl CoordinatorLeadership {
    pub fn new(group: Arc<GroupCoordinator>, transaction: Arc<TransactionCoordinator>) -> Self {
        CoordinatorLeadership { group, transaction }
    }
}

impl LeadershipListener for CoordinatorLeadership {
    fn on_leadership_change(&self, change: &LeadershipChange) {
        // Resignations first: a partition led and then resigned within one request is not.
        for (tp, epoch) in &change.resigned {
            if tp.topic == GROUP_METADATA_TOPIC_NAME {
                // No longer its coordinator (Kafka's `onResignation`): its groups are
                // unloaded, and a later election here loads the partition afresh.
                self.group.on_resignation(tp.partition, *epoch);
            } else if tp.topic == TRANSACTION_STATE_TOPIC_NAME {
                self.transaction.on_resignation(tp.partition, *epoch);
            }
        }
        let elected: Vec<(i32, i32)> = change
            .leaders
            .iter()
            .filter(|(tp, _)| tp.topic == GROUP_METADATA_TOPIC_NAME)
            .map(|(tp, epoch)| (tp.partition, *epoch))
            .collect();
        if !elected.is_empty() {
            self.group.on_elected(elected);
        }
        for (tp, epoch) in &change.leaders {
            if tp.topic == TRANSACTION_STATE_TOPIC_NAME {
                self.transaction.on_election(tp.partition, *epoch);
            }
        }
    }
}
