//! Shallow iteration over a buffer of record batches of any magic.
