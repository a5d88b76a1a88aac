//! One request's instants and size, as the connection takes them for the request metrics,
//! and the API key and version read from a frame.

use std::time::Instant;

/// One request's instants, as Kafka's `RequestChannel.Request` keeps them.
#[derive(Debug, Clone, Copy)]
pub(in crate::network) struct RequestTimes {
    /// The frame was read whole.
    pub received: Instant,
    /// A handler task took it off the request queue.
    pub dequeued: Instant,
    /// The handler returned (Kafka's `apiLocalCompleteTimeNanos`).
    pub local_done: Instant,
    /// The response was ready: when the handler returned, or a deferred answer resolved.
    pub response_done: Instant,
    /// The connection began writing it (Kafka's `responseDequeueTimeNanos`).
    pub send_start: Instant,
    /// The last byte was written.
    pub sent: Instant,
    /// The frame's size, header and body (Kafka's `RequestBytes` counts the body alone).
    pub request_bytes: u64,
}

impl RequestTimes {
    /// A request received at `received` whose other instants are not known yet.
    pub(in crate::network) fn new(received: Instant) -> Self {
        RequestTimes {
            received,
            dequeued: received,
            local_done: received,
            response_done: received,
            send_start: received,
            sent: received,
            request_bytes: 0,
        }
    }
}

/// The request's API key and version, read from the first four bytes of its header.
pub(in crate::network) fn api_of(frame: &[u8]) -> Option<(i16, i16)> {
    match frame {
        [k0, k1, v0, v1, ..] => Some((
            i16::from_be_bytes([*k0, *k1]),
            i16::from_be_bytes([*v0, *v1]),
        )),
        _ => None,
    }
}
