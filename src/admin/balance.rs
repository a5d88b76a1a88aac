//! How an assignment loads the brokers and racks: replicas and (preferred) leaders per broker
//! and per rack, and the skew, the largest difference between two brokers (or racks).
//!
//! The leader counted is each partition's first replica, the preferred leader the controller
//! elects when it can; the elected leader of the moment is not part of an assignment.

use std::collections::BTreeMap;

use crate::cluster::BrokerId;

use super::replica_assignment::BrokerMetadata;

/// One broker's load.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct BrokerLoad {
    pub id: BrokerId,
    /// `None` for a broker without a rack, and for one the assignment names that is not among
    /// the brokers given (a replica on a broker being left).
    pub rack: Option<String>,
    /// Whether the broker was among those given.
    pub known: bool,
    pub replicas: usize,
    pub leaders: usize,
}

/// One rack's load.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct RackLoad {
    pub rack: String,
    pub brokers: usize,
    pub replicas: usize,
    pub leaders: usize,
}

/// The load of an assignment. `brokers` holds every broker given (with 0 when unused) and every
/// other broker the assignment names, by id; `racks` every rack of the brokers given, by name.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub(crate) struct Balance {
    pub brokers: Vec<BrokerLoad>,
    pub racks: Vec<RackLoad>,
}

/// The smallest and largest of some counts, `(0, 0)` when there are none.
pub(crate) fn range(counts: impl Iterator<Item = usize>) -> (usize, usize) {
    counts
        .fold(None, |acc: Option<(usize, usize)>, c| match acc {
            None => Some((c, c)),
            Some((lo, hi)) => Some((lo.min(c), hi.max(c))),
        })
        .unwrap_or((0, 0))
}

impl Balance {
    /// The load `replica_lists` (one per partition) put on `brokers`.
    pub(crate) fn of<'a>(
        replica_lists: impl IntoIterator<Item = &'a Vec<BrokerId>>,
        brokers: &[BrokerMetadata],
    ) -> Balance {
        let mut loads: BTreeMap<BrokerId, BrokerLoad> = brokers
            .iter()
            .map(|b| {
                (
                    b.id,
                    BrokerLoad {
                        id: b.id,
                        rack: b.rack.clone(),
                        known: true,
                        replicas: 0,
                        leaders: 0,
                    },
                )
            })
            .collect();
        for replicas in replica_lists {
            for (i, b) in replicas.iter().enumerate() {
                let load = loads.entry(*b).or_insert_with(|| BrokerLoad {
                    id: *b,
                    rack: None,
                    known: false,
                    replicas: 0,
                    leaders: 0,
                });
                load.replicas += 1;
                if i == 0 {
                    load.leaders += 1;
                }
            }
        }
        let mut racks: BTreeMap<String, RackLoad> = BTreeMap::new();
        for load in loads.values().filter(|l| l.known) {
            if let Some(rack) = &load.rack {
                let r = racks.entry(rack.clone()).or_insert_with(|| RackLoad {
                    rack: rack.clone(),
                    brokers: 0,
                    replicas: 0,
                    leaders: 0,
                });
                r.brokers += 1;
                r.replicas += load.replicas;
                r.leaders += load.leaders;
            }
        }
        Balance {
            brokers: loads.into_values().collect(),
            racks: racks.into_values().collect(),
        }
    }

    fn known(&self) -> impl Iterator<Item = &BrokerLoad> {
        self.brokers.iter().filter(|b| b.known)
    }

    /// Least and most replicas on one of the brokers given.
    pub(crate) fn replica_range(&self) -> (usize, usize) {
        range(self.known().map(|b| b.replicas))
    }

    /// Least and most leaders on one of the brokers given.
    pub(crate) fn leader_range(&self) -> (usize, usize) {
        range(self.known().map(|b| b.leaders))
    }

    /// Most minus least replicas over the brokers given.
    pub(crate) fn replica_skew(&self) -> usize {
        let (lo, hi) = self.replica_range();
        hi - lo
    }

    /// Most minus least leaders over the brokers given.
    pub(crate) fn leader_skew(&self) -> usize {
        let (lo, hi) = self.leader_range();
        hi - lo
    }

    /// Most minus least replicas over the racks (0 without racks).
    pub(crate) fn rack_replica_skew(&self) -> usize {
        let (lo, hi) = range(self.racks.iter().map(|r| r.replicas));
        hi - lo
    }

    /// Most minus least leaders over the racks (0 without racks).
    pub(crate) fn rack_leader_skew(&self) -> usize {
        let (lo, hi) = range(self.racks.iter().map(|r| r.leaders));
        hi - lo
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_replicas_leaders_racks_and_strangers() {
        let brokers = vec![
            BrokerMetadata::new(0, Some("a")),
            BrokerMetadata::new(1, Some("a")),
            BrokerMetadata::new(2, Some("b")),
            BrokerMetadata::new(3, Some("b")),
        ];
        let lists = [vec![0, 2], vec![2, 0], vec![9, 2]];
        let b = Balance::of(&lists, &brokers);
        let row = |id: BrokerId| b.brokers.iter().find(|l| l.id == id).unwrap().clone();
        assert_eq!((row(0).replicas, row(0).leaders), (2, 1));
        assert_eq!((row(2).replicas, row(2).leaders), (3, 1));
        assert_eq!((row(1).replicas, row(3).replicas), (0, 0));
        assert!(!row(9).known && row(9).leaders == 1);
        assert_eq!(b.replica_range(), (0, 3));
        assert_eq!(b.leader_skew(), 1);
        assert_eq!(
            b.racks,
            [
                RackLoad {
                    rack: "a".into(),
                    brokers: 2,
                    replicas: 2,
                    leaders: 1
                },
                RackLoad {
                    rack: "b".into(),
                    brokers: 2,
                    replicas: 3,
                    leaders: 1
                }
            ]
        );
        assert_eq!(b.rack_replica_skew(), 1);
        assert_eq!(b.rack_leader_skew(), 0);
        assert_eq!(range(std::iter::empty()), (0, 0));
    }
}
