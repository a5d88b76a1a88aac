//! kcli's one integration test binary: tests that read the sources, run the `kcli` binary as a
//! real process on real files, and (later) start brokers against a real ZooKeeper.

mod cli;
mod dump_segment;
mod record_interop;
mod tidy;
