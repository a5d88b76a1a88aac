//! Per-topic log settings.
