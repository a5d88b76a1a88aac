//! What a handler knows of the request it answers (Kafka's `RequestContext`), and the framing
//! of its response: the response header of the right version, the body at the request's
//! version, one buffer — or segments, so a Fetch response's records go out by reference.

use std::net::SocketAddr;
use std::sync::Arc;

use bytes::Bytes;

use crate::cluster::kafka_principal::KafkaPrincipal;
use crate::network::{Response, ResponsePart};
use crate::protocol::codec::Segment;
use crate::protocol::messages::{self, ApiKey, ResponseKind};

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
}

impl RequestContext {
    /// Frames `body` as the answer to this request. An encoding failure (a value the version
    /// cannot carry) is a broker bug, logged; the connection is closed so the client does not
    /// wait for an answer that will never come.
    pub fn respond(&self, body: ResponseKind) -> Response {
        match messages::encode_response_frame(self.correlation_id, &body, self.api_version) {
            Ok(frame) => Response::bytes(frame.freeze()),
            Err(err) => {
                tracing::error!(api = ?self.api_key, version = self.api_version, %err, "cannot encode response");
                Response::CloseConnection
            }
        }
    }

    /// As [`RequestContext::respond`], with every `records` field left as its own segment for
    /// `replace` to turn into a response part (the fetch path swaps in file ranges).
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
}
