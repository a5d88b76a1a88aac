//! The epochs a broker checks controller requests against (Kafka's `ZkBrokerEpochManager` and
//! `ReplicaManager.controllerEpoch`): its own broker epoch, the czxid of its registration, and
//! the newest controller epoch it has obeyed. A request from an older controller, or addressed
//! to an older registration of this broker, is refused, so a controller that lost its session
//! cannot steer the broker, nor can requests meant for its previous life.

use std::sync::atomic::{AtomicI32, AtomicI64, Ordering};

/// -1: the broker epoch is not known yet, or a request that does not carry one.
const UNKNOWN_EPOCH: i64 = -1;

#[derive(Debug)]
pub struct BrokerEpochManager {
    broker_epoch: AtomicI64,
    controller_epoch: AtomicI32,
}

impl Default for BrokerEpochManager {
    fn default() -> Self {
        BrokerEpochManager {
            broker_epoch: AtomicI64::new(UNKNOWN_EPOCH),
            controller_epoch: AtomicI32::new(0),
        }
    }
}

impl BrokerEpochManager {
    pub fn set_broker_epoch(&self, epoch: i64) {
        self.broker_epoch.store(epoch, Ordering::Release);
    }

    pub fn broker_epoch(&self) -> i64 {
        self.broker_epoch.load(Ordering::Acquire)
    }

    /// `isBrokerEpochStale`: a request epoch of -1 (old versions) is accepted; otherwise it
    /// must not be older than this broker's current registration.
    pub fn is_broker_epoch_stale(&self, request_epoch: i64) -> bool {
        request_epoch != UNKNOWN_EPOCH && request_epoch < self.broker_epoch()
    }

    /// Checks a controller request's epoch and, when it is current or newer, records it.
    /// `false`: STALE_CONTROLLER_EPOCH.
    pub fn accept_controller_epoch(&self, request_epoch: i32) -> bool {
        let mut current = self.controller_epoch.load(Ordering::Acquire);
        loop {
            if request_epoch < current {
                return false;
            }
            match self.controller_epoch.compare_exchange(
                current,
                request_epoch,
                Ordering::AcqRel,
                Ordering::Acquire,
            ) {
                Ok(_) => return true,
                Err(now) => current = now,
            }
        }
    }

    pub fn controller_epoch(&self) -> i32 {
        self.controller_epoch.load(Ordering::Acquire)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn older_controllers_and_older_registrations_are_refused() {
        let m = BrokerEpochManager::default();
        assert!(m.accept_controller_epoch(2));
        assert!(m.accept_controller_epoch(2));
        assert!(!m.accept_controller_epoch(1));
        assert_eq!(m.controller_epoch(), 2);
        m.set_broker_epoch(100);
        assert!(m.is_broker_epoch_stale(99));
        assert!(!m.is_broker_epoch_stale(100));
        assert!(!m.is_broker_epoch_stale(-1));
    }
}
