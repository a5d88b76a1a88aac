//! The broker's half of a controlled shutdown (Kafka's `KafkaServer.controlledShutdown`): before
//! a cluster broker stops serving, it asks the controller to move the leaderships it holds, and
//! asks again while the answer still lists partitions it leads, up to
//! `controlled.shutdown.max.retries` attempts `controlled.shutdown.retry.backoff.ms` apart. An
//! error answer, no known controller or a failed send count as an attempt too. When every
//! attempt fails the broker stops anyway (an unclean shutdown: the controller moves the
//! leaderships once the registration disappears).

use std::future::Future;
use std::time::Duration;

use crate::protocol::errors::ErrorCode;
use crate::protocol::messages::controlled_shutdown_response::ControlledShutdownResponse;

use super::broker_to_controller_channel::BrokerToControllerError;

/// `controlled.shutdown.max.retries` and `controlled.shutdown.retry.backoff.ms`, and how long
/// one attempt may wait for its answer (`controller.socket.timeout.ms`).
#[derive(Debug, Clone, Copy)]
pub(crate) struct ControlledShutdownSettings {
    pub max_retries: i32,
    pub retry_backoff: Duration,
    pub attempt_timeout: Duration,
}

/// Runs the attempts with `send`; whether the controller moved every leadership.
pub(crate) async fn controlled_shutdown<F, Fut>(
    settings: ControlledShutdownSettings,
    mut send: F,
) -> bool
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<ControlledShutdownResponse, BrokerToControllerError>>,
{
    tracing::info!("starting controlled shutdown");
    let mut remaining_retries = settings.max_retries;
    while remaining_retries > 0 {
        remaining_retries -= 1;
        match tokio::time::timeout(settings.attempt_timeout, send()).await {
            Ok(Ok(response)) if response.error_code != ErrorCode::None.code() => {
                tracing::info!(
                    error_code = response.error_code,
                    "controlled shutdown request returned an error"
                );
            }
            Ok(Ok(response)) if response.remaining_partitions.is_empty() => {
                tracing::info!("controlled shutdown request returned successfully");
                return true;
            }
            Ok(Ok(response)) => {
                let remaining: Vec<String> = response
                    .remaining_partitions
                    .iter()
                    .map(|p| format!("{}-{}", p.topic_name, p.partition_index))
                    .collect();
                tracing::info!(?remaining, "controlled shutdown left partitions to move");
            }
            Ok(Err(e)) => tracing::warn!(%e, "error during controlled shutdown"),
            Err(_) => tracing::warn!(
                timeout_ms = settings.attempt_timeout.as_millis(),
                "controlled shutdown request timed out"
            ),
        }
        if remaining_retries > 0 {
            tokio::time::sleep(settings.retry_backoff).await;
            tracing::info!(remaining_retries, "retrying controlled shutdown");
        }
    }
    tracing::warn!(
        "proceeding to do an unclean shutdown as all the controlled shutdown attempts failed"
    );
    false
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};

    use super::*;
    use crate::protocol::messages::controlled_shutdown_response::RemainingPartition;

    fn settings(max_retries: i32) -> ControlledShutdownSettings {
        ControlledShutdownSettings {
            max_retries,
            retry_backoff: Duration::from_millis(5000),
            attempt_timeout: Duration::from_millis(30_000),
        }
    }

    fn remaining(n: usize) -> ControlledShutdownResponse {
        ControlledShutdownResponse {
            remaining_partitions: (0..n)
                .map(|p| RemainingPartition {
                    topic_name: "t".into(),
                    partition_index: i32::try_from(p).unwrap(),
                    ..RemainingPartition::default()
                })
                .collect(),
            ..ControlledShutdownResponse::default()
        }
    }

    #[tokio::test(start_paused = true)]
    async fn retries_while_partitions_remain_then_succeeds_with_backoff_between() {
        let calls = Arc::new(AtomicUsize::new(0));
        let start = tokio::time::Instant::now();
        let counter = Arc::clone(&calls);
        let ok = controlled_shutdown(settings(3), move || {
            let n = counter.fetch_add(1, Ordering::SeqCst);
            async move {
                match n {
                    0 => Err(BrokerToControllerError::NoController),
                    1 => Ok(remaining(2)),
                    _ => Ok(remaining(0)),
                }
            }
        })
        .await;
        assert!(ok);
        assert_eq!(calls.load(Ordering::SeqCst), 3);
        assert_eq!(start.elapsed(), Duration::from_millis(10_000));
    }

    #[tokio::test(start_paused = true)]
    async fn gives_up_after_max_retries_without_a_last_backoff() {
        let calls = Arc::new(AtomicUsize::new(0));
        let start = tokio::time::Instant::now();
        let counter = Arc::clone(&calls);
        let ok = controlled_shutdown(settings(2), move || {
            counter.fetch_add(1, Ordering::SeqCst);
            async {
                Ok(ControlledShutdownResponse {
                    error_code: ErrorCode::NotController.code(),
                    ..ControlledShutdownResponse::default()
                })
            }
        })
        .await;
        assert!(!ok);
        assert_eq!(calls.load(Ordering::SeqCst), 2);
        assert_eq!(start.elapsed(), Duration::from_millis(5000));
        // No attempts at all with max.retries 0, as Kafka.
        assert!(!controlled_shutdown(settings(0), || async { Ok(remaining(0)) }).await);
    }

    #[tokio::test(start_paused = true)]
    async fn an_attempt_that_hangs_times_out_and_counts() {
        let calls = Arc::new(AtomicUsize::new(0));
        let counter = Arc::clone(&calls);
        let ok = controlled_shutdown(settings(2), move || {
            let n = counter.fetch_add(1, Ordering::SeqCst);
            async move {
                if n == 0 {
                    std::future::pending::<()>().await;
                }
                Ok(remaining(0))
            }
        })
        .await;
        assert!(ok);
        assert_eq!(calls.load(Ordering::SeqCst), 2);
    }
}
