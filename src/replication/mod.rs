//! Replication: the leader side of every partition this broker hosts (Kafka's `Partition` and
//! `ReplicaManager`), and the waits of its purgatory (an acks=all produce waiting for the high
//! watermark, a long-poll fetch waiting for data).
//!
//! - `partition`: one partition's leadership state (leader epoch, replicas, ISR), its log, the
//!   high watermark, and the waiters woken when either log offset moves.
//! - `replica_manager`: every partition of the broker; leadership changes; the produce path
//!   (`append_records`, the acks=-1 wait) and the fetch path (`fetch_messages`, the long poll).
//! - `leader_end_point`: the `LeaderEndPoint` trait a fetcher reaches its leader through
//!   (implemented by `server` over the inter-broker client).
//! - `fetch_session_handler`: a fetcher's side of its fetch session with its leader (KIP-227):
//!   full, then incremental fetches.
//! - `replica_fetcher_manager`, `replica_fetcher`: the follower side, one fetcher task per
//!   leader broker appending the leader's batches unchanged, and truncating where the leader
//!   answers that the logs diverged.
//! - `replication_quota_manager`: the leader and follower replication throttles a
//!   reassignment sets (Kafka's `ReplicationQuotaManager`).
//! - `replica_selector`: follower fetching (KIP-392): which replica a leader points a consumer
//!   in another rack at (`replica.selector.class`).
//! - `alter_partition`: the seam through which leaders propose ISR changes to the controller.
//! - `alter_log_dirs`: moving a partition's log to another log dir while it serves.
//! - `error`: per-partition failures, each with its Kafka error code.
//!
//! Layering: uses `storage`, `protocol` (error codes) and `cluster` only.
//!
//! Locking: a partition's state mutex is taken before its log's; neither is held across an
//! `.await`. The replica manager's map lock is never held while a partition's lock is taken.
//! The fetcher manager's map, then a fetcher's partition map, come before both.

pub(crate) mod alter_log_dirs;
pub(crate) mod alter_partition;
pub(crate) mod broker_topic_stats;
pub(crate) mod delayed;
pub(crate) mod error;
pub(crate) mod fetch_session_handler;
pub(crate) mod leader_end_point;
pub(crate) mod metrics;
pub(crate) mod partition;
pub(crate) mod replica_fetcher;
pub(crate) mod replica_fetcher_manager;
pub(crate) mod replica_manager;
pub(crate) mod replica_selector;
pub(crate) mod replication_quota_manager;

/// A range of a segment file, as fetch results carry records for `sendfile(2)`.
pub use crate::storage::file_records::FileSlice;
pub use crate::storage::log_reads::FetchIsolation;
pub use crate::storage::producer_state::VerificationGuard;
pub use error::PartitionError;
pub use leader_end_point::{LeaderEndPoint, LeaderEndPointFactory};
pub use partition::{EpochEndOffset, LogOffsets, LogReadResult, Partition};
pub use replica_manager::{
    AppendEntry, AppendOrigin, AppendParams, DelayedFetch, DelayedProduce, FetchParams,
    FetchPartitionData, FetchPartitionInfo, FetchResult, PartitionResponse, ProduceResult,
    ReplicaManager,
};
pub use replica_selector::{
    ClientMetadata, RACK_AWARE_REPLICA_SELECTOR, ReplicaEndpoint, ReplicaEndpoints, ReplicaSelector,
};
