//! partition.metadata.
