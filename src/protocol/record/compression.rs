//! Kafka's compression codecs with capped decompression.
