//! Allocation bound of the protocol decoder (filled in below).
