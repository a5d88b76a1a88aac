//! Protobuf zigzag varints as used inside v2 records.
