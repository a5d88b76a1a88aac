// Writes a partition directory with Apache Kafka 3.9.1's own storage classes, so kcli's
// dump-segment can be compared with Kafka's DumpLogSegments on files Kafka itself wrote:
//   <dir>/00000000000000000000.log, .index, .timeindex (LogSegment.append with a small
//   index.interval.bytes, then rolled: indexes trimmed, final time-index entry written),
//   <dir>/00000000000000000000.txnindex (TransactionIndex), <dir>/<offset>.snapshot
//   (ProducerStateManager.writeSnapshot).
// Used by tests/it/dump_segment.rs, which compiles it against .tools/kafka-3.9.1/*.

import java.io.File;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.TreeMap;

import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.internals.RecordHeader;
import org.apache.kafka.common.record.ControlRecordType;
import org.apache.kafka.common.record.EndTransactionMarker;
import org.apache.kafka.common.record.MemoryRecords;
import org.apache.kafka.common.record.MutableRecordBatch;
import org.apache.kafka.common.record.RecordBatch;
import org.apache.kafka.common.record.SimpleRecord;
import org.apache.kafka.common.record.TimestampType;
import org.apache.kafka.common.utils.Time;
import org.apache.kafka.storage.internals.log.AbortedTxn;
import org.apache.kafka.storage.internals.log.BatchMetadata;
import org.apache.kafka.storage.internals.log.LogConfig;
import org.apache.kafka.storage.internals.log.LogSegment;
import org.apache.kafka.storage.internals.log.ProducerStateEntry;
import org.apache.kafka.storage.internals.log.ProducerStateManager;
import org.apache.kafka.storage.internals.log.TransactionIndex;

public class WriteSegments {
    private static final long TS = 1_700_000_000_000L;

    private static byte[] b(String s) {
        return s == null ? null : s.getBytes(StandardCharsets.UTF_8);
    }

    private static void append(LogSegment segment, MemoryRecords records) throws Exception {
        long largestOffset = -1;
        for (MutableRecordBatch batch : records.batches())
            largestOffset = batch.lastOffset();
        segment.append(largestOffset, records);
    }

    public static void main(String[] args) throws Exception {
        File dir = new File(args[0]);
        Map<String, Object> props = new HashMap<>();
        props.put("index.interval.bytes", 200);
        LogConfig config = new LogConfig(props);
        LogSegment segment = LogSegment.open(dir, 0L, config, Time.SYSTEM, 0, false);
        Compression[] codecs = {
            Compression.NONE, Compression.gzip().build(), Compression.snappy().build(),
            Compression.lz4().build(), Compression.zstd().build()
        };
        long offset = 0;
        for (int i = 0; i < 40; i++) {
            int n = 1 + i % 4;
            SimpleRecord[] records = new SimpleRecord[n];
            for (int j = 0; j < n; j++) {
                Header[] headers = j == 0
                    ? new Header[] {new RecordHeader("trace", b("t" + i)), new RecordHeader("nil", null)}
                    : new Header[0];
                String key = (i + j) % 3 == 0 ? null : "key-" + i + "-" + j;
                String value = (i + j) % 7 == 0 ? null : "value " + i + " " + j + " " + "x".repeat(30 * j);
                records[j] = new SimpleRecord(TS + i * 10 + j, b(key), b(value), headers);
            }
            Compression codec = codecs[i % codecs.length];
            MemoryRecords batch;
            if (i % 9 == 4) {
                batch = MemoryRecords.withIdempotentRecords(RecordBatch.CURRENT_MAGIC_VALUE, offset, codec,
                    7000L + i, (short) 1, i * 3, 5, records);
            } else if (i % 11 == 6) {
                batch = MemoryRecords.withRecords(RecordBatch.CURRENT_MAGIC_VALUE, offset, codec,
                    TimestampType.LOG_APPEND_TIME, -1L, (short) -1, -1, 5, false, records);
            } else {
                batch = MemoryRecords.withRecords(offset, codec, 5, records);
            }
            append(segment, batch);
            offset += n;
            if (i % 13 == 12) {
                // A transaction and its marker.
                MemoryRecords txn = MemoryRecords.withTransactionalRecords(offset, codec, 9000L, (short) 2, 0, 5,
                    new SimpleRecord(TS + i * 10, b("tk"), b("tv")));
                append(segment, txn);
                offset += 1;
                ControlRecordType type = i % 2 == 0 ? ControlRecordType.COMMIT : ControlRecordType.ABORT;
                append(segment, MemoryRecords.withEndTransactionMarker(offset, TS + i * 10 + 1, 5, 9000L,
                    (short) 2, new EndTransactionMarker(type, 3)));
                offset += 1;
            }
        }
        segment.onBecomeInactiveSegment();
        segment.close();

        TransactionIndex txnIndex = new TransactionIndex(0L, new File(dir, "00000000000000000000.txnindex"));
        txnIndex.append(new AbortedTxn(9000L, 10L, 11L, 10L));
        txnIndex.append(new AbortedTxn(9001L, 20L, 25L, 21L));
        txnIndex.close();

        Map<Long, ProducerStateEntry> producers = new TreeMap<>();
        producers.put(7004L, new ProducerStateEntry(7004L, (short) 1, -1, TS + 40, OptionalLong.empty(),
            Optional.of(new BatchMetadata(14, 12L, 2, TS + 40))));
        producers.put(9000L, new ProducerStateEntry(9000L, (short) 2, 3, TS + 120, OptionalLong.of(55L),
            Optional.empty()));
        ProducerStateManager.writeSnapshot(new File(dir, String.format("%020d.snapshot", offset)), producers, true);
        System.out.println(offset);
    }
}
