//! kcli's one integration test binary: tests that read the sources, run the `kcli` binary as a
//! real process on real files, and (later) start brokers against a real ZooKeeper.

mod cli;
mod record_interop;
mod tidy;
mod storage_log;
mod storage_support;
mod storage_manager;
