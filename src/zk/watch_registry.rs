//! The one-shot watches a session has armed and that have not fired, with what each saw when it
//! was armed: what a resumed session needs to re-arm them (ZooKeeper's `SetWatches`). The crate
//! re-arms its own watches when it reconnects within one client, but a session resumed on a new
//! client (after the crate gave up on the connection while the ensemble still held the session)
//! starts with none. [`PendingWatch::change_since`] names the event a watch would have fired
//! for a change made while the session was away, as the server does for `SetWatches` with the
//! last zxid the client saw.
//!
//! Keyed by (kind, path): ZooKeeper keeps one watch per kind and path for a session, and fires
//! it once for all who asked.

use std::collections::BTreeMap;
use std::sync::Mutex;

use crate::cluster::sync::lock;

use super::client::{Stat, WatchedEventType};

/// Which read armed a watch, and so which changes fire it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum WatchKind {
    /// `get_data`: the node's data changing or the node going.
    Data,
    /// `exists`: the node appearing, changing or going.
    Exists,
    /// `get_children`: a child added or removed, or the node going.
    Children,
}

/// One armed watch: its kind and path, and the node's stat when it was armed (`None` for an
/// `exists` on a missing node).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PendingWatch {
    pub kind: WatchKind,
    pub path: String,
    pub seen: Option<Stat>,
}

impl PendingWatch {
    /// The event this watch owes for the node's state now (`None` when missing), or `None` when
    /// nothing it watches changed.
    pub fn change_since(&self, now: Option<&Stat>) -> Option<WatchedEventType> {
        match (self.seen.as_ref(), now) {
            (None, None) => None,
            (None, Some(_)) => Some(WatchedEventType::NodeCreated),
            (Some(_), None) => Some(WatchedEventType::NodeDeleted),
            (Some(seen), Some(now)) => match self.kind {
                WatchKind::Children => {
                    (now.pzxid != seen.pzxid).then_some(WatchedEventType::NodeChildrenChanged)
                }
                WatchKind::Data | WatchKind::Exists => {
                    (now.mzxid != seen.mzxid).then_some(WatchedEventType::NodeDataChanged)
                }
            },
        }
    }
}

/// The armed watches of one session, shared by the clients that carry it.
#[derive(Debug, Default)]
pub struct WatchRegistry {
    pending: Mutex<BTreeMap<(WatchKind, String), Option<Stat>>>,
}

impl WatchRegistry {
    /// A watch of `kind` on `path` is armed, the node then as `seen`. The earliest stat of an
    /// armed watch is kept: a change after it is one the watch still owes.
    pub fn armed(&self, kind: WatchKind, path: &str, seen: Option<Stat>) {
        lock(&self.pending)
            .entry((kind, path.to_string()))
            .or_insert(seen);
    }

    /// The watch of `kind` on `path` fired.
    pub fn fired(&self, kind: WatchKind, path: &str) {
        lock(&self.pending).remove(&(kind, path.to_string()));
    }

    /// Every armed watch, leaving none: re-arming one records it again.
    pub fn take_all(&self) -> Vec<PendingWatch> {
        std::mem::take(&mut *lock(&self.pending))
            .into_iter()
            .map(|((kind, path), seen)| PendingWatch { kind, path, seen })
            .collect()
    }

    /// Forgets every watch (a new session: its users arm theirs again).
    pub fn clear(&self) {
        lock(&self.pending).clear();
    }

    pub fn len(&self) -> usize {
        lock(&self.pending).len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stat(mzxid: i64, pzxid: i64) -> Stat {
        Stat {
            mzxid,
            pzxid,
            ..Stat::default()
        }
    }

    fn watch(kind: WatchKind, seen: Option<Stat>) -> PendingWatch {
        PendingWatch {
            kind,
            path: "/p".into(),
            seen,
        }
    }

    #[test]
    fn a_watch_owes_the_event_of_the_change_it_watches() {
        use WatchedEventType::*;
        let data = watch(WatchKind::Data, Some(stat(5, 5)));
        assert_eq!(data.change_since(Some(&stat(5, 9))), None, "children only");
        assert_eq!(data.change_since(Some(&stat(7, 5))), Some(NodeDataChanged));
        assert_eq!(data.change_since(None), Some(NodeDeleted));
        let children = watch(WatchKind::Children, Some(stat(5, 5)));
        assert_eq!(children.change_since(Some(&stat(7, 5))), None, "data only");
        assert_eq!(
            children.change_since(Some(&stat(5, 8))),
            Some(NodeChildrenChanged)
        );
        assert_eq!(children.change_since(None), Some(NodeDeleted));
        let absent = watch(WatchKind::Exists, None);
        assert_eq!(absent.change_since(None), None);
        assert_eq!(absent.change_since(Some(&stat(9, 9))), Some(NodeCreated));
        let present = watch(WatchKind::Exists, Some(stat(5, 5)));
        assert_eq!(present.change_since(Some(&stat(5, 5))), None);
        assert_eq!(
            present.change_since(Some(&stat(6, 5))),
            Some(NodeDataChanged)
        );
        assert_eq!(present.change_since(None), Some(NodeDeleted));
    }

    #[test]
    fn the_registry_keeps_one_watch_per_kind_and_path_until_it_fires() {
        let r = WatchRegistry::default();
        r.armed(WatchKind::Data, "/a", Some(stat(1, 1)));
        r.armed(WatchKind::Data, "/a", Some(stat(2, 2)));
        r.armed(WatchKind::Children, "/a", Some(stat(1, 1)));
        r.armed(WatchKind::Exists, "/b", None);
        assert_eq!(r.len(), 3);
        r.fired(WatchKind::Data, "/a");
        let left = r.take_all();
        assert!(r.is_empty());
        assert_eq!(
            left,
            vec![
                PendingWatch {
                    kind: WatchKind::Exists,
                    path: "/b".into(),
                    seen: None
                },
                PendingWatch {
                    kind: WatchKind::Children,
                    path: "/a".into(),
                    seen: Some(stat(1, 1))
                },
            ]
        );
    }
}
