//! The offset index.
