//! The states of a transactional id as the transaction coordinator keeps them (Kafka 3.9's
//! `TransactionState`): their ids in `__transaction_state` (`TransactionStatus`), the names
//! DescribeTransactions and ListTransactions report, which states each may be entered from, and
//! which may expire (`transactional.id.expiration.ms`).
//!
//! | id | state | entered from |
//! |---|---|---|
//! | 0 | Empty | Empty, CompleteCommit, CompleteAbort |
//! | 1 | Ongoing | Ongoing, Empty, CompleteCommit, CompleteAbort |
//! | 2 | PrepareCommit | Ongoing |
//! | 3 | PrepareAbort | Ongoing, PrepareEpochFence |
//! | 4 | CompleteCommit | PrepareCommit |
//! | 5 | CompleteAbort | PrepareAbort |
//! | 6 | Dead | Empty, CompleteCommit, CompleteAbort |
//! | 7 | PrepareEpochFence | Ongoing |
//!
//! Dead is never written (an expired id is a tombstone) and PrepareEpochFence only ever pending.

/// One state; see the module doc.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum TransactionState {
    Empty,
    Ongoing,
    PrepareCommit,
    PrepareAbort,
    CompleteCommit,
    CompleteAbort,
    Dead,
    PrepareEpochFence,
}

/// A `TransactionStatus` no Kafka 3.9 state has (Kafka's `TransactionState.fromId` throws).
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("unknown transaction state id {id}")]
pub struct UnknownTransactionState {
    pub id: i8,
}

impl TransactionState {
    /// Every state, in id order.
    pub const ALL: [TransactionState; 8] = [
        TransactionState::Empty,
        TransactionState::Ongoing,
        TransactionState::PrepareCommit,
        TransactionState::PrepareAbort,
        TransactionState::CompleteCommit,
        TransactionState::CompleteAbort,
        TransactionState::Dead,
        TransactionState::PrepareEpochFence,
    ];

    /// The state's id, as `TransactionStatus` in `__transaction_state` holds it.
    pub fn id(self) -> i8 {
        match self {
            TransactionState::Empty => 0,
            TransactionState::Ongoing => 1,
            TransactionState::PrepareCommit => 2,
            TransactionState::PrepareAbort => 3,
            TransactionState::CompleteCommit => 4,
            TransactionState::CompleteAbort => 5,
            TransactionState::Dead => 6,
            TransactionState::PrepareEpochFence => 7,
        }
    }

    /// Kafka's `TransactionState.fromId`.
    pub fn from_id(id: i8) -> Result<Self, UnknownTransactionState> {
        usize::try_from(id)
            .ok()
            .and_then(|i| Self::ALL.get(i).copied())
            .ok_or(UnknownTransactionState { id })
    }

    /// The name DescribeTransactions and ListTransactions report (Kafka's `stateName`), which
    /// the admin client maps to its own `TransactionState`.
    pub fn name(self) -> &'static str {
        match self {
            TransactionState::Empty => "Empty",
            TransactionState::Ongoing => "Ongoing",
            TransactionState::PrepareCommit => "PrepareCommit",
            TransactionState::PrepareAbort => "PrepareAbort",
            TransactionState::CompleteCommit => "CompleteCommit",
            TransactionState::CompleteAbort => "CompleteAbort",
            TransactionState::Dead => "Dead",
            TransactionState::PrepareEpochFence => "PrepareEpochFence",
        }
    }

    /// The state a name stands for, as ListTransactions' `StateFilters` names them; `None` for
    /// a name no state has.
    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|s| s.name() == name)
    }

    /// The states this one may be entered from (Kafka's `validPreviousStates`).
    pub fn valid_previous_states(self) -> &'static [TransactionState] {
        use TransactionState::*;
        match self {
            Empty => &[Empty, CompleteCommit, CompleteAbort],
            Ongoing => &[Ongoing, Empty, CompleteCommit, CompleteAbort],
            PrepareCommit => &[Ongoing],
            PrepareAbort => &[Ongoing, PrepareEpochFence],
            CompleteCommit => &[PrepareCommit],
            CompleteAbort => &[PrepareAbort],
            Dead => &[Empty, CompleteAbort, CompleteCommit],
            PrepareEpochFence => &[Ongoing],
        }
    }

    /// Whether `from` may move to this state.
    pub fn can_enter_from(self, from: TransactionState) -> bool {
        self.valid_previous_states().contains(&from)
    }

    /// Whether an id in this state may expire (Kafka's `isExpirationAllowed`): no transaction
    /// of it is open.
    pub fn is_expiration_allowed(self) -> bool {
        matches!(
            self,
            TransactionState::Empty
                | TransactionState::CompleteCommit
                | TransactionState::CompleteAbort
        )
    }
}

#[cfg(test)]
mod tests {
    use super::TransactionState::*;
    use super::*;

    #[test]
    fn ids_and_names_are_kafkas_and_round_trip() {
        let names: Vec<(i8, &str)> = TransactionState::ALL
            .iter()
            .map(|s| (s.id(), s.name()))
            .collect();
        assert_eq!(
            names,
            vec![
                (0, "Empty"),
                (1, "Ongoing"),
                (2, "PrepareCommit"),
                (3, "PrepareAbort"),
                (4, "CompleteCommit"),
                (5, "CompleteAbort"),
                (6, "Dead"),
                (7, "PrepareEpochFence"),
            ]
        );
        for s in TransactionState::ALL {
            assert_eq!(TransactionState::from_id(s.id()), Ok(s));
            assert_eq!(TransactionState::from_name(s.name()), Some(s));
        }
        assert_eq!(
            TransactionState::from_id(8),
            Err(UnknownTransactionState { id: 8 })
        );
        assert_eq!(
            TransactionState::from_id(-1),
            Err(UnknownTransactionState { id: -1 })
        );
        assert_eq!(TransactionState::from_name("Unknown"), None);
    }

    #[test]
    fn transitions_are_kafkas() {
        // A commit and an abort, then a new transaction, then expiry.
        assert!(Ongoing.can_enter_from(Empty));
        assert!(PrepareCommit.can_enter_from(Ongoing));
        assert!(CompleteCommit.can_enter_from(PrepareCommit));
        assert!(Ongoing.can_enter_from(CompleteCommit));
        assert!(PrepareAbort.can_enter_from(Ongoing));
        assert!(PrepareAbort.can_enter_from(PrepareEpochFence));
        assert!(CompleteAbort.can_enter_from(PrepareAbort));
        assert!(Dead.can_enter_from(CompleteAbort));
        // What a coordinator must refuse.
        assert!(!PrepareCommit.can_enter_from(Empty));
        assert!(!CompleteCommit.can_enter_from(PrepareAbort));
        assert!(!CompleteAbort.can_enter_from(Ongoing));
        assert!(!Dead.can_enter_from(Ongoing));
        assert!(!Ongoing.can_enter_from(PrepareCommit));
        assert!(!PrepareEpochFence.can_enter_from(Empty));
        let expiring: Vec<TransactionState> = TransactionState::ALL
            .into_iter()
            .filter(|s| s.is_expiration_allowed())
            .collect();
        assert_eq!(expiring, vec![Empty, CompleteCommit, CompleteAbort]);
    }
}
