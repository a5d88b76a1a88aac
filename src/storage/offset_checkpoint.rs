//! Offset checkpoint files.
