//! The leader-epoch cache.
