//! Kafka's `LogDirFailureChannel`: where an I/O error on a log dir's files (an append, a roll,
//! a flush, a checkpoint) is reported, so the dir is taken offline once, whoever hit the error.
//!
//! The first report of a dir marks it offline and queues it for the broker's failure handler
//! (Kafka's `LogDirFailureHandler` thread), which takes the dir's partitions offline; later
//! reports of the same dir only log. A dir never comes back online while the broker runs, as in
//! Kafka.

use std::collections::{BTreeSet, VecDeque};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use tokio::sync::Notify;

use crate::cluster::sync::lock;

#[derive(Debug, Default)]
struct State {
    offline: BTreeSet<PathBuf>,
    queue: VecDeque<PathBuf>,
}

/// The offline log dirs and the queue of those not yet handled.
#[derive(Debug, Default)]
pub struct LogDirFailureChannel {
    state: Mutex<State>,
    queued: Notify,
}

impl LogDirFailureChannel {
    pub fn new() -> Self {
        Self::default()
    }

    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        lock(&self.state)
    }

    /// Marks `log_dir` offline because of `reason`; returns whether it was online until now.
    pub fn maybe_add_offline_log_dir(
        &self,
        log_dir: &Path,
        reason: &dyn std::fmt::Display,
    ) -> bool {
        let mut state = self.state();
        if !state.offline.insert(log_dir.to_path_buf()) {
            return false;
        }
        state.queue.push_back(log_dir.to_path_buf());
        drop(state);
        tracing::error!(log_dir = %log_dir.display(), %reason, "log dir failed: taking it offline");
        self.queued.notify_one();
        true
    }

    pub fn is_offline(&self, log_dir: &Path) -> bool {
        self.state().offline.contains(log_dir)
    }

    /// Every dir marked offline so far.
    pub fn offline_dirs(&self) -> Vec<PathBuf> {
        self.state().offline.iter().cloned().collect()
    }

    /// The next offline dir not yet handled, waiting for one.
    pub async fn take_next_offline_log_dir(&self) -> PathBuf {
        loop {
            // Registered before the queue is looked at, so a report in between is not missed.
            let notified = self.queued.notified();
            if let Some(dir) = self.state().queue.pop_front() {
                return dir;
            }
            notified.await;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_dir_is_queued_once() {
        let channel = LogDirFailureChannel::new();
        assert!(channel.maybe_add_offline_log_dir(Path::new("/a"), &"disk"));
        assert!(!channel.maybe_add_offline_log_dir(Path::new("/a"), &"again"));
        assert!(channel.is_offline(Path::new("/a")));
        assert!(!channel.is_offline(Path::new("/b")));
        assert_eq!(
            channel.take_next_offline_log_dir().await,
            PathBuf::from("/a")
        );
        assert!(channel.maybe_add_offline_log_dir(Path::new("/b"), &"disk"));
        assert_eq!(
            channel.take_next_offline_log_dir().await,
            PathBuf::from("/b")
        );
        assert_eq!(channel.offline_dirs().len(), 2);
    }
}
