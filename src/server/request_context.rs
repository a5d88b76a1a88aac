//! What a handler knows of the request it answers (Kafka's `RequestContext`), and the framing
//! of its response: the response header of the right version, the body at the request's
//! version, one buffer — or segments, so a Fetch response's records go out by reference.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;

use super::quota::QuotaManagers;
use super::quota::controller_mutation_quota::ControllerMutationQuota;
use super::quota::request_quotas;
use crate::cluster::kafka_principal::KafkaPrincipal;
use crate::network::{ChannelThrottle, RequestRecorder, Response, ResponsePart};
use crate::protocol::codec::Segment;
use crate::protocol::error_counts::{count_runs, error_counts};
use crate::protocol::messages::{self, ApiKey, ProduceResponse, ResponseKind};

/// One decoded request's header facts.
#[derive(Debug, Clone)]
pub struct RequestContext {
    pub api_key: ApiKey,
    pub api_version: i16,
    pub correlation_id: i32,
    /// The client's `client.id`, empty when null.
    pub client_id: String,
    pub listener_name: Arc<str>,
    pub peer: SocketAddr,
    /// Who the connection authenticated as (`User:ANONYMOUS` without authentication).
    pub principal: Arc<KafkaPrincipal>,
    /// Where the request metrics learn what only the handler knows.
    pub recorder: RequestRecorder,
    /// The size of the request frame (Kafka's `request.sizeInBytes`, what the produce quota
    /// counts).
    pub request_size: usize,
    /// When the handler took the request up; the request quota counts the time since.
    pub dequeued_at: Instant,
    /// The handler's time, fixed when it handed its answer to a deferred future: the time a
    /// request waits in a purgatory is not thread time (Kafka's `apiLocalCompleteTimeNanos`).
    pub handled_for: Option<Duration>,
    /// The client quotas, and the connection's mute deadline for throttling.
    pub(crate) quotas: Arc<QuotaManagers>,
    pub throttle: ChannelThrottle,
}

impl RequestContext {
    /// The controller mutation quota that a topic created on the client's behalf (auto-created
    /// by Metadata, an internal topic by FindCoordinator) counts against: Kafka's permissive
    /// one, which never refuses.
    pub(crate) fn permissive_mutation_quota(&self) -> ControllerMutationQuota<'_> {
        self.quotas
            .controller_mutation
            .new_permissive_quota_for(&self.principal.name, &self.client_id)
    }

    /// A copy for a future that answers after the handler returned: its thread time stops
    /// counting now.
    pub(crate) fn deferred(&self) -> RequestContext {
        RequestContext {
            handled_for: Some(self.thread_time()),
            ..self.clone()
        }
    }

    /// The handler's time on this request so far, or until it deferred its answer (Kafka's
    /// `requestThreadTimeNanos`).
    pub(crate) fn thread_time(&self) -> Duration {
        self.handled_for
            .unwrap_or_else(|| self.dequeued_at.elapsed())
    }

    /// Frames `body` as the answer to this request. An encoding failure (a value the version
    /// cannot carry) is a broker bug, logged; the connection is closed so the client does not
    /// wait for an answer that will never come.
    pub fn respond(&self, body: ResponseKind) -> Response {
        let throttle_ms = request_quotas::throttle_request(self);
        self.respond_throttled(body, throttle_ms)
    }

    /// As [`RequestContext::respond`] for a request that mutated topics under `quota`: the
    /// larger of its throttle and the request quota's goes out and mutes the connection.
    pub(crate) fn respond_with_controller_quota(
        &self,
        body: ResponseKind,
        quota: &ControllerMutationQuota<'_>,
    ) -> Response {
        let throttle_ms = request_quotas::throttle_controller_mutation(self, quota);
        self.respond_throttled(body, throttle_ms)
    }

    fn respond_throttled(&self, mut body: ResponseKind, throttle_ms: i32) -> Response {
        self.count_errors(&body);
        if throttle_ms > 0 {
            body.set_throttle_time_ms(throttle_ms);
        }
        match messages::encode_response_frame(self.correlation_id, &body, self.api_version) {
            Ok(frame) => Response::bytes(frame.freeze()),
            Err(err) => {
                tracing::error!(api = ?self.api_key, version = self.api_version, %err, "cannot encode response");
                Response::CloseConnection
            }
        }
    }

    /// As [`RequestContext::respond`], with every `records` field left as its own segment for
    /// `replace` to turn into a response part (the fetch path swaps in file ranges). Neither
    /// counts the response's errors nor throttles: the fetch path does both once it knows
    /// which response goes out.
    pub fn respond_segments(
        &self,
        body: &ResponseKind,
        mut replace: impl FnMut(Bytes) -> ResponsePart,
    ) -> Response {
        match messages::encode_response_segments(self.correlation_id, body, self.api_version) {
            Ok(segments) => Response::Send(
                segments
                    .into_iter()
                    .map(|s| match s {
                        Segment::Inline(b) => ResponsePart::Bytes(b),
                        Segment::Records(b) => replace(b),
                    })
                    .collect(),
            ),
            Err(err) => {
                tracing::error!(api = ?self.api_key, version = self.api_version, %err, "cannot encode response");
                Response::CloseConnection
            }
        }
    }

    /// Counts the errors of `body` in the request metrics' `ErrorsPerSec`, as Kafka counts a
    /// response's `errorCounts()` (see [`error_counts`]).
    pub(crate) fn count_errors(&self, body: &ResponseKind) {
        error_counts(body, |code, n| self.recorder.errors(self.api_key, code, n));
    }

    /// [`RequestContext::count_errors`] of a Produce response not sent (acks=0): each
    /// partition's error.
    pub(crate) fn count_produce_errors(&self, response: &ProduceResponse) {
        let codes = response
            .responses
            .iter()
            .flat_map(|t| &t.partition_responses)
            .map(|p| p.error_code);
        count_runs(codes, |code, n| self.recorder.errors(self.api_key, code, n));
    }
}
