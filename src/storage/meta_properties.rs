//! meta.properties of a log dir.
