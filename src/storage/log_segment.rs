//! One log segment.
