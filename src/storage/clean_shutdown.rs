//! The clean-shutdown marker of a log dir.
