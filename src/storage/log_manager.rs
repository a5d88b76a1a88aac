//! All partitions of all log dirs.
