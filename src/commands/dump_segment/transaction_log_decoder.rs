//! `--transaction-log-decoder`: a `__transaction_state` record's key and value as Kafka 3.9's
//! `DumpLogSegments.TransactionLogMessageParser` prints them (`TransactionLog.formatRecordKeyAndValue`):
//! the key as `transaction_metadata::transactionalId=<id>`, the value as
//! `producerId:<id>,producerEpoch:<epoch>,state=<state>,partitions=[<topic-partition>,...],
//! txnLastUpdateTimestamp=<ms>,txnTimeoutMs=<ms>`, a tombstone as `<DELETE>`, and a key of a
//! version Kafka does not know as `unknown::version=<version>` with no payload. Partitions are
//! listed in the record's order (Kafka lists them in its hash set's order, which agrees when a
//! transaction holds one partition).

use crate::coordinator::transaction::transaction_log::{read_key, read_value};

use super::offsets_decoder::DecodedRecord;
use super::segment::SegmentError;

/// Decodes one `__transaction_state` record at `offset`.
pub(crate) fn decode(
    offset: i64,
    key: Option<&[u8]>,
    value: Option<&[u8]>,
) -> Result<DecodedRecord, SegmentError> {
    let corrupt = |why: String| {
        SegmentError::Corrupt(format!(
            "Failed to decode message at offset {offset} using the transaction log decoder ({why})"
        ))
    };
    let key = key.ok_or_else(|| corrupt("message had a missing key".into()))?;
    let Some(id) = read_key(key).map_err(|e| corrupt(e.to_string()))? else {
        let version = key
            .get(..2)
            .map_or(-1, |b| i16::from_be_bytes([b[0], b[1]]));
        return Ok(DecodedRecord {
            key: format!("unknown::version={version}"),
            payload: None,
        });
    };
    let payload = match value {
        None => "<DELETE>".to_string(),
        Some(v) => {
            let e = read_value(v).map_err(|e| corrupt(e.to_string()))?;
            let partitions: Vec<String> = e
                .partitions
                .iter()
                .map(|tp| format!("{}-{}", tp.topic, tp.partition))
                .collect();
            format!(
                "producerId:{},producerEpoch:{},state={},partitions=[{}],txnLastUpdateTimestamp={},txnTimeoutMs={}",
                e.producer_id,
                e.producer_epoch,
                e.state.name(),
                partitions.join(","),
                e.last_update_timestamp_ms,
                e.transaction_timeout_ms
            )
        }
    };
    Ok(DecodedRecord {
        key: format!("transaction_metadata::transactionalId={id}"),
        payload: Some(payload),
    })
}
