//! kcli's one integration test binary: tests that read the sources, run the `kcli` binary as a
//! real process on real files, and (later) start brokers against a real ZooKeeper.

mod cli;
mod codegen;
mod tidy;
#[rustfmt::skip]
mod messages;
mod protocol_arb;
mod protocol_capture;
mod protocol_hostile;
mod protocol_java_oracle;
mod protocol_json;
mod protocol_roundtrip;
