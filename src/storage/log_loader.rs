//! Opening and recovering a partition directory.
