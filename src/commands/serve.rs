//! `kcli serve`: loads the broker config (Kafka's defaults, kcli's base, the file, the
//! overrides, `--zookeeper`; the base of a cluster broker leaves `broker.id` at Kafka's -1),
//! reports unknown keys as Kafka does, runs the broker on a multi-threaded
//! runtime and shuts it down cleanly on Ctrl-C or SIGTERM. When every log dir has failed the
//! process halts at once with status 1, as Kafka's broker does (`Exit.halt(1)`). The soft open
//! file limit is raised to the hard one first.

use anyhow::Context;

use crate::cli::ServeArgs;
use crate::config::{BrokerConfig, KCLI_CLUSTER_BASE, KCLI_SERVE_BASE};
use crate::server::KafkaServer;

use super::Outcome;

pub(crate) fn run(args: &ServeArgs) -> anyhow::Result<Outcome> {
    let mut overrides = args.overrides.clone();
    if let Some(connect) = &args.zookeeper {
        overrides.push(format!("zookeeper.connect={connect}"));
    }
    let mut config =
        BrokerConfig::load_with_base(KCLI_SERVE_BASE, args.config.as_deref(), &overrides)?;
    if config.zookeeper_connect.is_some() {
        config =
            BrokerConfig::load_with_base(KCLI_CLUSTER_BASE, args.config.as_deref(), &overrides)?;
    }
    for warning in config.warnings() {
        tracing::warn!("{warning}");
    }
    raise_open_file_limit();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .thread_name("kcli-broker")
        .build()
        .context("cannot start the async runtime")?;
    runtime.block_on(async move {
        let server = KafkaServer::startup(config).await?;
        tokio::select! {
            signal = wait_for_signal() => signal?,
            reason = server.fatal_error() => {
                // The reason is logged already; no clean shutdown is possible without a dir.
                eprintln!("kcli serve: halting: {reason}");
                std::process::exit(1);
            }
        }
        server.shutdown().await?;
        anyhow::Ok(())
    })?;
    Ok(Outcome::Success)
}

/// A broker holds a descriptor per connection and per open segment file, so the soft
/// `ulimit -n` (often 1024) is raised to the hard one, as far as this process may go without
/// privileges; then the open `.log` files are bounded to four fifths of it, so that partitions
/// past the limit are hosted with their idle files closed.
fn raise_open_file_limit() {
    use crate::storage::descriptors;
    let (soft_limit, hard_limit) = match descriptors::raise_open_file_limit() {
        Ok(limits) => limits,
        Err(err) => {
            let limits = descriptors::open_file_limits().unwrap_or((0, 0));
            tracing::warn!(%err, soft_limit = limits.0, hard_limit = limits.1, "cannot raise the open file limit");
            limits
        }
    };
    if soft_limit == 0 {
        return;
    }
    let open_log_files = descriptors::bound_log_files(soft_limit);
    tracing::info!(
        soft_limit,
        hard_limit,
        open_log_files,
        "open file limit (RLIMIT_NOFILE); segment files kept open at most"
    );
}

/// Ctrl-C (SIGINT) or SIGTERM.
async fn wait_for_signal() -> anyhow::Result<()> {
    use tokio::signal::unix::{SignalKind, signal};
    let mut term = signal(SignalKind::terminate()).context("cannot listen for SIGTERM")?;
    tokio::select! {
        r = tokio::signal::ctrl_c() => r.context("cannot listen for Ctrl-C")?,
        _ = term.recv() => {}
    }
    Ok(())
}
