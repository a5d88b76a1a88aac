//! The pure half of `fetch_response_reader`: a flexible-version Fetch response parsed stretch
//! by stretch, each stretch running from where the last one stopped up to the next non-empty
//! records field (or the end). A stretch either parses whole from the bytes given or reports
//! that it needs more; nothing is kept of a partial parse, so the reader peeks more and parses
//! the stretch again.

use bytes::Bytes;
use uuid::Uuid;

use crate::protocol::codec::{self as c, Codec as _, DecodeError, DecodeErrorKind, StrBytes};
use crate::protocol::messages::fetch_response::{
    AbortedTransaction, EpochEndOffset, LeaderIdAndEpoch, PartitionData, SnapshotId,
};

use super::{FetchResponseHead, FetchedTopic};

/// Where the parse of a response stands, between two stretches.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum At {
    Start,
    /// Before a topic (or the response's tagged fields once none is left).
    Topic {
        topics: u32,
    },
    /// Before a partition of the current topic.
    Partition {
        topics: u32,
        partitions: u32,
    },
    /// After a partition's records, before its tagged fields.
    PartitionTail {
        topics: u32,
        partitions: u32,
    },
    /// After a topic's partitions, before its tagged fields.
    TopicTail {
        topics: u32,
    },
    Done,
}

/// What one stretch held.
#[derive(Debug)]
pub(super) enum Event {
    Head {
        correlation_id: i32,
        head: FetchResponseHead,
    },
    Topic(FetchedTopic),
    /// A partition's fields before its records, and its records' length (0 for null).
    Partition {
        data: PartitionData,
        records_len: usize,
    },
    PartitionTail(PartitionTags),
}

/// A partition's tagged fields.
#[derive(Debug, Default)]
pub(super) struct PartitionTags {
    diverging_epoch: Option<EpochEndOffset>,
    current_leader: Option<LeaderIdAndEpoch>,
    snapshot_id: Option<SnapshotId>,
}

impl PartitionTags {
    pub(super) fn apply(self, data: &mut PartitionData) {
        if let Some(v) = self.diverging_epoch {
            data.diverging_epoch = v;
        }
        if let Some(v) = self.current_leader {
            data.current_leader = v;
        }
        if let Some(v) = self.snapshot_id {
            data.snapshot_id = v;
        }
    }
}

/// Parses from `at` up to and including the next non-empty records field's length, or to the
/// end of the response. `Ok(None)`: `buf` ends first. Returns where the parse stands after,
/// what it read and how many bytes.
pub(super) fn parse_stretch(
    mut at: At,
    version: i16,
    buf: &[u8],
) -> Result<Option<(At, Vec<Event>, usize)>, DecodeError> {
    let mut cur = Cursor { buf, pos: 0 };
    let mut events = Vec::new();
    loop {
        let step = match at {
            At::Start => parse_head(&mut cur, &mut events),
            At::Topic { topics: 0 } => cur.tagged_fields(|_, _| Ok(())).map(|()| At::Done),
            At::Topic { topics } => {
                parse_topic(&mut cur, version, &mut events).map(|partitions| At::Partition {
                    topics: topics - 1,
                    partitions,
                })
            }
            At::Partition {
                topics,
                partitions: 0,
            } => Ok(At::TopicTail { topics }),
            At::Partition { topics, partitions } => {
                match parse_partition(&mut cur, &mut events) {
                    Ok(records_len) => {
                        let next = At::PartitionTail {
                            topics,
                            partitions: partitions - 1,
                        };
                        if records_len > 0 {
                            // The records follow: the stretch ends here.
                            return Ok(Some((next, events, cur.pos)));
                        }
                        Ok(next)
                    }
                    Err(err) => Err(err),
                }
            }
            At::PartitionTail { topics, partitions } => {
                let mut tags = PartitionTags::default();
                cur.tagged_fields(|tag, data| tags.read(tag, data, version))
                    .map(|()| {
                        events.push(Event::PartitionTail(tags));
                        At::Partition { topics, partitions }
                    })
            }
            At::TopicTail { topics } => cur
                .tagged_fields(|_, _| Ok(()))
                .map(|()| At::Topic { topics }),
            At::Done => return Ok(Some((At::Done, events, cur.pos))),
        };
        at = match step {
            Ok(next) => next,
            Err(Short::Incomplete) => return Ok(None),
            Err(Short::Bad(err)) => return Err(err),
        };
    }
}

fn parse_head(cur: &mut Cursor<'_>, events: &mut Vec<Event>) -> Result<At, Short> {
    // Response header v1: the correlation id and tagged fields.
    let correlation_id = cur.i32()?;
    cur.tagged_fields(|_, _| Ok(()))?;
    let throttle_time_ms = cur.i32()?;
    let error_code = cur.i16()?;
    let session_id = cur.i32()?;
    let topics = cur.count("FetchResponse.responses")?;
    events.push(Event::Head {
        correlation_id,
        head: FetchResponseHead {
            throttle_time_ms,
            error_code,
            session_id,
        },
    });
    Ok(At::Topic { topics })
}

fn parse_topic(cur: &mut Cursor<'_>, version: i16, events: &mut Vec<Event>) -> Result<u32, Short> {
    let mut topic = FetchedTopic::default();
    if version >= 13 {
        let id = cur.take(16)?;
        let mut bytes = [0u8; 16];
        bytes.copy_from_slice(id);
        topic.topic_id = Uuid::from_bytes(bytes);
    } else {
        let len = cur
            .compact_len("FetchableTopicResponse.topic")?
            .ok_or_else(|| {
                bad(
                    "FetchableTopicResponse.topic",
                    DecodeErrorKind::NullNotAllowed,
                )
            })?;
        topic.name = StrBytes::from_bytes(Bytes::copy_from_slice(cur.take(len)?));
    }
    let partitions = cur.count("FetchableTopicResponse.partitions")?;
    events.push(Event::Topic(topic));
    Ok(partitions)
}

/// A partition up to its records' length; returns that length (0 for null or empty).
fn parse_partition(cur: &mut Cursor<'_>, events: &mut Vec<Event>) -> Result<usize, Short> {
    let mut data = PartitionData {
        partition_index: cur.i32()?,
        error_code: cur.i16()?,
        high_watermark: cur.i64()?,
        last_stable_offset: cur.i64()?,
        log_start_offset: cur.i64()?,
        ..PartitionData::default()
    };
    if let Some(count) = cur.compact_len("PartitionData.aborted_transactions")? {
        let mut aborted = Vec::new();
        for _ in 0..count {
            aborted.push(AbortedTransaction {
                producer_id: cur.i64()?,
                first_offset: cur.i64()?,
                ..AbortedTransaction::default()
            });
            cur.tagged_fields(|_, _| Ok(()))?;
        }
        data.aborted_transactions = Some(aborted);
    }
    data.preferred_read_replica = cur.i32()?;
    let records_len = cur.compact_len("PartitionData.records")?.unwrap_or(0);
    events.push(Event::Partition { data, records_len });
    Ok(records_len)
}

impl PartitionTags {
    fn read(&mut self, tag: u32, data: &[u8], version: i16) -> Result<(), Short> {
        let mut r = c::Reader::new(Bytes::copy_from_slice(data));
        let cx = c::cx(version, true);
        match tag {
            0 => self.diverging_epoch = Some(EpochEndOffset::read(&mut r, cx).map_err(Short::Bad)?),
            1 => {
                self.current_leader = Some(LeaderIdAndEpoch::read(&mut r, cx).map_err(Short::Bad)?)
            }
            2 => self.snapshot_id = Some(SnapshotId::read(&mut r, cx).map_err(Short::Bad)?),
            _ => {}
        }
        Ok(())
    }
}

/// Why a stretch did not parse.
enum Short {
    /// The buffer ends before the stretch does.
    Incomplete,
    Bad(DecodeError),
}

fn bad(field: &'static str, kind: DecodeErrorKind) -> Short {
    Short::Bad(DecodeError::new(field, kind))
}

/// A read position in a peeked buffer.
struct Cursor<'a> {
    buf: &'a [u8],
    pos: usize,
}

impl<'a> Cursor<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8], Short> {
        let end = self.pos.checked_add(n).ok_or(Short::Incomplete)?;
        let bytes = self.buf.get(self.pos..end).ok_or(Short::Incomplete)?;
        self.pos = end;
        Ok(bytes)
    }

    fn array<const N: usize>(&mut self) -> Result<[u8; N], Short> {
        let mut out = [0u8; N];
        out.copy_from_slice(self.take(N)?);
        Ok(out)
    }

    fn i16(&mut self) -> Result<i16, Short> {
        self.array().map(i16::from_be_bytes)
    }

    fn i32(&mut self) -> Result<i32, Short> {
        self.array().map(i32::from_be_bytes)
    }

    fn i64(&mut self) -> Result<i64, Short> {
        self.array().map(i64::from_be_bytes)
    }

    fn uvarint(&mut self, field: &'static str) -> Result<u32, Short> {
        let mut value = 0u32;
        for i in 0..5 {
            let byte = self.take(1)?[0];
            value |= u32::from(byte & 0x7f) << (7 * i);
            if byte & 0x80 == 0 {
                return Ok(value);
            }
        }
        Err(bad(field, DecodeErrorKind::VarintTooLong))
    }

    /// A compact length or count: the varint is N + 1, 0 for null.
    fn compact_len(&mut self, field: &'static str) -> Result<Option<usize>, Short> {
        Ok(self
            .uvarint(field)?
            .checked_sub(1)
            .map(|n| usize::try_from(n).unwrap_or(usize::MAX)))
    }

    /// A non-nullable compact array's count.
    fn count(&mut self, field: &'static str) -> Result<u32, Short> {
        let n = self
            .compact_len(field)?
            .ok_or_else(|| bad(field, DecodeErrorKind::NullNotAllowed))?;
        u32::try_from(n).map_err(|_| {
            bad(
                field,
                DecodeErrorKind::CountTooLarge {
                    count: n as i64,
                    remaining: 0,
                },
            )
        })
    }

    /// A tagged-fields section, each field handed to `each` as (tag, bytes).
    fn tagged_fields(
        &mut self,
        mut each: impl FnMut(u32, &[u8]) -> Result<(), Short>,
    ) -> Result<(), Short> {
        let count = self.uvarint("tagged fields")?;
        for _ in 0..count {
            let tag = self.uvarint("tag")?;
            let size = self.uvarint("tagged field size")?;
            let data = self.take(usize::try_from(size).unwrap_or(usize::MAX))?;
            each(tag, data)?;
        }
        Ok(())
    }
}
