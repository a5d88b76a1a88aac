//! Segment and checkpoint file names.
