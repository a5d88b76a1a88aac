//! Where a request meets the client quotas (the quota half of Kafka's `RequestHandlerHelper`
//! and of `KafkaApis`' produce and fetch callbacks): what each response records against which
//! quota, the throttle time it carries, and the muting of its connection.
//!
//! - Every API but Produce, Fetch and the inter-broker ones Kafka exempts (`clusterAction`)
//!   records its I/O thread time, and later its network thread time, against
//!   `request_percentage` ([`RequestContext::respond`] calls [`throttle_request`]).
//! - Produce records the request's size against `producer_byte_rate` and, unless acks=0, its
//!   thread time against `request_percentage`; the larger throttle wins ([`throttle_produce`]).
//! - A consumer's Fetch records the response's size against `consumer_byte_rate` and its
//!   thread time against `request_percentage`; a throttled fetch is answered empty and its
//!   bytes are taken back ([`throttle_fetch`]). A follower's Fetch is exempt (replication
//!   quotas are separate).
//! - CreateTopics, CreatePartitions and DeleteTopics take the larger of their controller
//!   mutation quota's throttle and the request quota's ([`throttle_controller_mutation`]).

use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use super::client_quota_manager::ClientQuotaManager;
use super::controller_mutation_quota::ControllerMutationQuota;
use crate::network::NetworkTimeCallback;
use crate::protocol::messages::ApiKey;
use crate::server::request_context::RequestContext;

/// Kafka's `NanosToPercentagePerSecond`: a thread busy for a whole second is 100%.
fn nanos_to_percentage(time: Duration) -> f64 {
    time.as_nanos() as f64 * 100.0 / 1e9
}

/// Milliseconds on a monotonic clock, the time base of every quota sensor.
pub(crate) fn now_ms() -> i64 {
    static BASE: OnceLock<Instant> = OnceLock::new();
    let base = BASE.get_or_init(Instant::now);
    i64::try_from(base.elapsed().as_millis()).unwrap_or(i64::MAX)
}

/// APIs Kafka never throttles for the request quota: the controller's and other brokers'
/// (`ApiKeys.clusterAction`), which a client quota must not slow down.
fn exempt_from_request_quota(api_key: ApiKey) -> bool {
    matches!(
        api_key,
        ApiKey::LeaderAndIsr
            | ApiKey::StopReplica
            | ApiKey::UpdateMetadata
            | ApiKey::ControlledShutdown
            | ApiKey::WriteTxnMarkers
            | ApiKey::AlterPartition
    )
}

/// The request quota's throttle for a response being sent now (Kafka's
/// `sendResponseMaybeThrottle`), the connection muted for it; 0 when none. Produce and Fetch
/// take theirs in [`throttle_produce`] and [`throttle_fetch`].
pub(crate) fn throttle_request(ctx: &RequestContext) -> i32 {
    // Every response passes here: without a request quota it costs one atomic load.
    if !ctx.quotas.request.quotas_enabled()
        || matches!(ctx.api_key, ApiKey::Produce | ApiKey::Fetch)
        || exempt_from_request_quota(ctx.api_key)
    {
        return 0;
    }
    let now = now_ms();
    let throttle = record_request_time(ctx, now);
    mute(ctx, &ctx.quotas.request, throttle, now);
    throttle
}

/// The throttle of a response to a request that mutated topics (Kafka's
/// `sendResponseMaybeThrottleWithControllerQuota`): the controller mutation quota's throttle
/// still to run and the request quota's over the thread time; the larger one mutes the
/// connection and is the response's `throttle_time_ms`.
pub(crate) fn throttle_controller_mutation(
    ctx: &RequestContext,
    quota: &ControllerMutationQuota<'_>,
) -> i32 {
    let controller = quota.throttle_time();
    if controller <= 0 {
        return throttle_request(ctx);
    }
    let now = now_ms();
    let request = if ctx.quotas.request.quotas_enabled() {
        record_request_time(ctx, now)
    } else {
        0
    };
    match quota.manager() {
        Some(manager) if controller > request => mute(ctx, manager, controller, now),
        _ => mute(ctx, &ctx.quotas.request, request, now),
    }
    controller.max(request)
}

/// A Produce response's throttle: the produce quota over the request's bytes and, unless
/// acks=0, the request quota over its thread time; the larger one mutes the connection.
pub(crate) fn throttle_produce(ctx: &RequestContext, acks: i16) -> i32 {
    let quotas = &ctx.quotas;
    if !quotas.produce.quotas_enabled() && !quotas.request.quotas_enabled() {
        return 0;
    }
    let now = now_ms();
    let bandwidth = quotas.produce.maybe_record_and_get_throttle_time_ms(
        &ctx.principal.name,
        &ctx.client_id,
        ctx.request_size as f64,
        now,
    );
    let request = if acks == 0 {
        0
    } else {
        record_request_time(ctx, now)
    };
    if bandwidth > request {
        mute(ctx, &quotas.produce, bandwidth, now);
    } else {
        mute(ctx, &quotas.request, request, now);
    }
    bandwidth.max(request)
}

/// The most bytes a consumer's fetch may return under its fetch quota (Kafka caps it at
/// `getMaxValueInQuotaWindow`; kcli at a twentieth of one window's quota, so that a throttled
/// consumer is paced in small steps).
pub(crate) fn fetch_max_bytes_for_quota(ctx: &RequestContext) -> i32 {
    let max = ctx
        .quotas
        .fetch
        .max_fetch_value(&ctx.principal.name, &ctx.client_id);
    if max >= f64::from(i32::MAX) {
        i32::MAX
    } else {
        max as i32
    }
}

/// A consumer's Fetch response of `response_size` bytes: the fetch quota over them and the
/// request quota over the thread time. When either throttles, the bytes are taken back (the
/// response goes out empty) and the connection is muted for the larger throttle.
pub(crate) fn throttle_fetch(ctx: &RequestContext, response_size: usize) -> i32 {
    let quotas = &ctx.quotas;
    if !quotas.fetch.quotas_enabled() && !quotas.request.quotas_enabled() {
        return 0;
    }
    let now = now_ms();
    let request = record_request_time(ctx, now);
    let bandwidth = quotas.fetch.maybe_record_and_get_throttle_time_ms(
        &ctx.principal.name,
        &ctx.client_id,
        response_size as f64,
        now,
    );
    let throttle = bandwidth.max(request);
    if throttle > 0 {
        quotas.fetch.unrecord(
            &ctx.principal.name,
            &ctx.client_id,
            response_size as f64,
            now,
        );
        if bandwidth > request {
            mute(ctx, &quotas.fetch, bandwidth, now);
        } else {
            mute(ctx, &quotas.request, request, now);
        }
    }
    throttle
}

/// Records the request's I/O thread time against the request quota, and asks the connection
/// for its network thread time once the answer is written; the throttle time (Kafka's
/// `ClientRequestQuotaManager.maybeRecordAndGetThrottleTimeMs`).
fn record_request_time(ctx: &RequestContext, now: i64) -> i32 {
    let quotas = &ctx.quotas;
    if !quotas.request.quotas_enabled() {
        return 0;
    }
    let network_quotas = Arc::clone(quotas);
    let user = ctx.principal.name.clone();
    let client_id = ctx.client_id.clone();
    ctx.throttle
        .on_network_time(NetworkTimeCallback::new(move |time| {
            network_quotas.request.record_no_throttle(
                &user,
                &client_id,
                nanos_to_percentage(time),
                now_ms(),
            );
        }));
    quotas.request.record_and_get_throttle_time_ms(
        &ctx.principal.name,
        &ctx.client_id,
        nanos_to_percentage(ctx.thread_time()),
        now,
    )
}

/// Notes the throttle on `manager`'s sensors and mutes the connection for it (Kafka's
/// `ClientQuotaManager.throttle`).
fn mute(ctx: &RequestContext, manager: &ClientQuotaManager, throttle_ms: i32, now: i64) {
    if throttle_ms <= 0 {
        return;
    }
    manager.record_throttle_time(&ctx.principal.name, &ctx.client_id, throttle_ms, now);
    ctx.throttle
        .throttle_for(Duration::from_millis(u64::from(throttle_ms.unsigned_abs())));
    tracing::debug!(
        quota_type = manager.quota_type().name(),
        client_id = %ctx.client_id,
        principal = %ctx.principal,
        throttle_ms,
        "client throttled"
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_busy_second_is_one_hundred_percent() {
        assert_eq!(nanos_to_percentage(Duration::from_secs(1)), 100.0);
        assert_eq!(nanos_to_percentage(Duration::from_millis(5)), 0.5);
    }

    #[test]
    fn inter_broker_apis_are_exempt_and_client_apis_are_not() {
        assert!(exempt_from_request_quota(ApiKey::LeaderAndIsr));
        assert!(exempt_from_request_quota(ApiKey::WriteTxnMarkers));
        assert!(!exempt_from_request_quota(ApiKey::Metadata));
        assert!(!exempt_from_request_quota(ApiKey::ApiVersions));
    }
}
