//! Where a follower truncates when its leader answers a fetch with a diverging epoch (Kafka's
//! `AbstractFetcherThread.getOffsetTruncationState`, KIP-101 and KIP-279), as a pure function
//! of the leader's answer, the follower's own end of that epoch and its fetch offset.
//!
//! The leader answers `(epoch, end)`: the largest epoch it has at most the follower's last
//! fetched epoch, and where that epoch ends in its log. The follower looks the same epoch up
//! in its own leader-epoch cache (the largest local epoch at most it, and where it ends here):
//!
//! | leader's answer | follower's lookup | truncate to | done |
//! |---|---|---|---|
//! | end undefined (-1) | — | the fetch offset | yes |
//! | epoch undefined (-1), an end | — | min(leader end, fetch offset) | yes |
//! | `epoch` | `Some((epoch, follower_end))`, same epoch | min(leader end, follower end, fetch offset) | yes |
//! | `epoch` | `Some((older, follower_end))`: the follower never had `epoch` | min(follower end, fetch offset) | no: fetch again (KIP-279) |
//! | `epoch` | `None`: no local epoch that old | min(leader end, fetch offset) | yes |
//!
//! A follower always fetches from its log end, so the fetch offset is the log end here (Kafka
//! uses the fetch state's offset, which for a fetching partition is the same). "Not done" only
//! means the next fetch carries the follower's new latest epoch and the leader checks again;
//! with truncation on fetch the partition keeps fetching either way.

use crate::replication::partition::EpochEndOffset;
use crate::storage::leader_epoch_cache::{UNDEFINED_EPOCH, UNDEFINED_EPOCH_OFFSET};

/// Where to truncate, and whether the logs then agree up to there (Kafka's
/// `OffsetTruncationState`). Invariant: `offset` is at most the fetch offset it was computed
/// from, so a truncation never grows the log.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct OffsetTruncationState {
    pub offset: i64,
    pub truncation_completed: bool,
}

/// Kafka's `getOffsetTruncationState`. `follower_end_for_epoch` is the local log's
/// `endOffsetForEpoch(leader.leader_epoch)`: the largest local epoch `<=` the leader's and the
/// offset it ends at here, `None` when the local cache has no epoch that old.
pub(crate) fn offset_truncation_state(
    leader: EpochEndOffset,
    follower_end_for_epoch: Option<(i32, i64)>,
    fetch_offset: i64,
) -> OffsetTruncationState {
    if leader.end_offset == UNDEFINED_EPOCH_OFFSET {
        return OffsetTruncationState {
            offset: fetch_offset,
            truncation_completed: true,
        };
    }
    if leader.leader_epoch == UNDEFINED_EPOCH {
        return OffsetTruncationState {
            offset: leader.end_offset.min(fetch_offset),
            truncation_completed: true,
        };
    }
    match follower_end_for_epoch {
        Some((follower_epoch, follower_end)) if follower_epoch != leader.leader_epoch => {
            OffsetTruncationState {
                offset: follower_end.min(fetch_offset),
                truncation_completed: false,
            }
        }
        Some((_, follower_end)) => OffsetTruncationState {
            offset: follower_end.min(leader.end_offset).min(fetch_offset),
            truncation_completed: true,
        },
        None => OffsetTruncationState {
            offset: leader.end_offset.min(fetch_offset),
            truncation_completed: true,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn leader(leader_epoch: i32, end_offset: i64) -> EpochEndOffset {
        EpochEndOffset {
            leader_epoch,
            end_offset,
        }
    }

    fn state(offset: i64, truncation_completed: bool) -> OffsetTruncationState {
        OffsetTruncationState {
            offset,
            truncation_completed,
        }
    }

    #[test]
    fn an_undefined_end_offset_keeps_the_fetch_offset() {
        assert_eq!(
            offset_truncation_state(leader(3, -1), Some((3, 5)), 12),
            state(12, true)
        );
        assert_eq!(
            offset_truncation_state(leader(-1, -1), None, 12),
            state(12, true)
        );
    }

    #[test]
    fn an_undefined_epoch_truncates_to_the_leaders_end_at_most() {
        assert_eq!(
            offset_truncation_state(leader(-1, 7), Some((2, 3)), 12),
            state(7, true),
            "the follower's own end is not consulted"
        );
        assert_eq!(
            offset_truncation_state(leader(-1, 20), None, 12),
            state(12, true)
        );
    }

    #[test]
    fn a_shared_epoch_truncates_to_the_smaller_end() {
        // Both logs have epoch 4; the leader's ends first.
        assert_eq!(
            offset_truncation_state(leader(4, 8), Some((4, 12)), 12),
            state(8, true)
        );
        // The follower's ends first (it then lacks what the leader wrote in epoch 4 after it).
        assert_eq!(
            offset_truncation_state(leader(4, 15), Some((4, 10)), 12),
            state(10, true)
        );
        // Never above the fetch offset.
        assert_eq!(
            offset_truncation_state(leader(4, 30), Some((4, 30)), 12),
            state(12, true)
        );
    }

    #[test]
    fn an_epoch_the_follower_never_had_truncates_to_its_own_older_epochs_end_and_asks_again() {
        // The leader answers epoch 1 ending at 12; the follower has 0 then 2 (from 10): its
        // largest epoch <= 1 is 0, ending at 10.
        assert_eq!(
            offset_truncation_state(leader(1, 12), Some((0, 10)), 15),
            state(10, false)
        );
        assert_eq!(
            offset_truncation_state(leader(1, 12), Some((0, 20)), 15),
            state(15, false)
        );
    }

    #[test]
    fn no_local_epoch_that_old_truncates_to_the_leaders_end() {
        assert_eq!(
            offset_truncation_state(leader(1, 6), None, 15),
            state(6, true)
        );
        assert_eq!(
            offset_truncation_state(leader(1, 60), None, 15),
            state(15, true)
        );
    }
}
