//! `kcli describe-cluster`: the cluster as ZooKeeper records it (brokers, controller, topics,
//! partition states with health flags), read from ZooKeeper alone, so it works with every broker
//! down; or from a single-node broker's embedded store on disk (`data_dir`); or from a live
//! broker (`bootstrap`). `snapshot` reads the znodes, `flags` computes each partition's flags,
//! `view` applies the filters, `text` and `json` render, leaving out what the snapshot's source
//! cannot know. Exit 1 when a shown partition is OFFLINE or UNDER-MIN-ISR (a health check);
//! errors (ZooKeeper or the broker unreachable within the connection timeout, a missing chroot,
//! a malformed znode, a dir without a store) exit 2 naming what failed.

mod bootstrap;
mod data_dir;
mod flags;
mod json;
mod snapshot;
mod text;
mod view;

use std::io::Write;
use std::time::Duration;

use anyhow::Context;

use super::Outcome;
use crate::cli::{DescribeClusterArgs, DescribeFormat};
use crate::zk::{ZkClient, ZkError, ZooKeeperClient};

/// What stops describe-cluster before it has a snapshot.
#[derive(Debug, thiserror::Error)]
pub(crate) enum DescribeClusterError {
    #[error("cannot reach ZooKeeper {connect} within {timeout_ms} ms")]
    Unreachable { connect: String, timeout_ms: u64 },
    #[error("cannot connect to ZooKeeper {connect}: {source}")]
    Connect {
        connect: String,
        #[source]
        source: ZkError,
    },
    #[error("reading ZooKeeper {connect} did not finish within {timeout_ms} ms")]
    ReadTimeout { connect: String, timeout_ms: u64 },
    #[error("the chroot of {connect} does not exist in ZooKeeper")]
    MissingChroot { connect: String },
}

/// Runs the command; the rendered output goes to `out`.
pub(crate) fn run(args: &DescribeClusterArgs, out: &mut dyn Write) -> anyhow::Result<Outcome> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("starting the runtime")?;
    let source = &args.source;
    let snapshot = if let Some(connect) = &source.zookeeper {
        runtime.block_on(read(connect, args.connection_timeout_ms))?
    } else if let Some(dir) = &source.data_dir {
        runtime.block_on(data_dir::read(dir))?
    } else if let Some(bootstrap) = &source.bootstrap_server {
        let timeout = Duration::from_millis(args.connection_timeout_ms);
        runtime.block_on(bootstrap::read(bootstrap, timeout))?
    } else {
        anyhow::bail!("give one of --zookeeper, --data-dir and --bootstrap-server");
    };
    let filters = view::Filters {
        topics: args.topic.clone(),
        under_replicated: args.under_replicated,
        offline: args.offline,
        min_isr: args.min_isr,
    };
    let view = view::build(&snapshot, &filters)?;
    let rendered = match args.format {
        DescribeFormat::Text => text::render(&view),
        DescribeFormat::Json => json::render(&view).context("encoding JSON")? + "\n",
    };
    out.write_all(rendered.as_bytes())
        .and_then(|()| out.flush())
        .context("writing to stdout")?;
    Ok(if view.unhealthy() {
        Outcome::CheckFailed
    } else {
        Outcome::Success
    })
}

/// Connects (bounded by the connection timeout), checks the chroot and reads the snapshot
/// (bounded by the same timeout again: a server that accepts and then stalls).
async fn read(connect: &str, timeout_ms: u64) -> anyhow::Result<snapshot::ClusterSnapshot> {
    let timeout = Duration::from_millis(timeout_ms);
    let connect = connect.to_string();
    // The session only lives while we read; a session timeout shorter than ZooKeeper's minimum
    // is raised by the server.
    let session_timeout = timeout.max(Duration::from_secs(4));
    let client =
        match tokio::time::timeout(timeout, ZooKeeperClient::connect(&connect, session_timeout))
            .await
        {
            Err(_) => {
                return Err(DescribeClusterError::Unreachable {
                    connect,
                    timeout_ms,
                }
                .into());
            }
            Ok(Err(source)) => return Err(DescribeClusterError::Connect { connect, source }.into()),
            Ok(Ok(client)) => client,
        };
    let result = tokio::time::timeout(timeout, async {
        if connect.contains('/') && client.exists("/", false).await?.is_none() {
            return Ok(Err(DescribeClusterError::MissingChroot {
                connect: connect.clone(),
            }));
        }
        Ok::<_, ZkError>(Ok(()))
    })
    .await;
    match result {
        Err(_) => {
            return Err(DescribeClusterError::ReadTimeout {
                connect,
                timeout_ms,
            }
            .into());
        }
        Ok(Err(source)) => return Err(DescribeClusterError::Connect { connect, source }.into()),
        Ok(Ok(Err(e))) => return Err(e.into()),
        Ok(Ok(Ok(()))) => {}
    }
    let snapshot = tokio::time::timeout(timeout, snapshot::read_snapshot(&client)).await;
    let _ = client.close().await;
    match snapshot {
        Err(_) => Err(DescribeClusterError::ReadTimeout {
            connect,
            timeout_ms,
        }
        .into()),
        Ok(result) => Ok(result?),
    }
}
