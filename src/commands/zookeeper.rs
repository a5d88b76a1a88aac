//! How the CLI's ZooKeeper-mode commands (`assign`, `users`, `acls`) open their session: within
//! a timeout, with the chroot checked, each failure one line naming the ensemble.

use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context, bail};

use crate::zk::{ZkClient, ZooKeeperClient};

/// Connects to `connect` within `timeout`; a chroot in `connect` that does not exist is an
/// error (Kafka's tools would silently work on an empty tree).
pub(crate) async fn connect(connect: &str, timeout: Duration) -> anyhow::Result<Arc<dyn ZkClient>> {
    // A session timeout below ZooKeeper's minimum is raised by the server.
    let session_timeout = timeout.max(Duration::from_secs(4));
    let client =
        match tokio::time::timeout(timeout, ZooKeeperClient::connect(connect, session_timeout))
            .await
        {
            Err(_) => bail!(
                "cannot reach ZooKeeper {connect} within {} ms",
                timeout.as_millis()
            ),
            Ok(result) => {
                result.with_context(|| format!("cannot connect to ZooKeeper {connect}"))?
            }
        };
    let client: Arc<dyn ZkClient> = Arc::new(client);
    if connect.contains('/') {
        match tokio::time::timeout(timeout, client.exists("/", false)).await {
            Ok(Ok(Some(_))) => {}
            Ok(Ok(None)) => bail!("the chroot of {connect} does not exist in ZooKeeper"),
            Ok(Err(e)) => {
                return Err(anyhow::Error::new(e).context(format!("ZooKeeper {connect}")));
            }
            Err(_) => bail!(
                "ZooKeeper {connect} did not answer within {} ms",
                timeout.as_millis()
            ),
        }
    }
    Ok(client)
}
