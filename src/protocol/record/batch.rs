//! The magic-2 record batch header (61 bytes): parsing, CRC-32C, in-place patches.
