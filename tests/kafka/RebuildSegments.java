// Writes a partition directory with Apache Kafka 3.9.1's own LogSegment, one batch per append
// (what a broker does with produce requests), so that `kcli rebuild-index` can be checked
// against the indexes Kafka itself writes online:
//   00000000000000000000.*  magic-2 batches of every codec, headers, null keys and values,
//                           idempotent, LogAppendTime, transactional and control batches;
//                           rolled (onBecomeInactiveSegment: final time entry, trimmed), closed
//   <n>.*                   legacy magic 0 then magic 1 messages, rolled and closed
//   <m>.*                   magic-2 batches, closed as the active segment at shutdown
// index.interval.bytes is 512. Used by tests/it/rebuild_index_kafka.rs, which compiles it
// against .tools/kafka-3.9.1/* (tests/install-kafka-tools).

import java.io.File;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.Map;

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
import org.apache.kafka.storage.internals.log.LogConfig;
import org.apache.kafka.storage.internals.log.LogSegment;

public class RebuildSegments {
    private static final long TS = 1_700_000_000_000L;

    private static byte[] b(String s) {
        return s == null ? null : s.getBytes(StandardCharsets.UTF_8);
    }

    private static long append(LogSegment segment, MemoryRecords records) throws Exception {
        long largestOffset = -1;
        for (MutableRecordBatch batch : records.batches())
            largestOffset = batch.lastOffset();
        segment.append(largestOffset, records);
        return largestOffset + 1;
    }

    private static SimpleRecord[] records(int i, boolean headers) {
        int n = 1 + i % 4;
        SimpleRecord[] records = new SimpleRecord[n];
        for (int j = 0; j < n; j++) {
            Header[] hs = headers && j == 0
                ? new Header[] {new RecordHeader("trace", b("t" + i)), new RecordHeader("nil", null)}
                : new Header[0];
            String key = (i + j) % 3 == 0 ? null : "key-" + i + "-" + j;
            String value = (i + j) % 7 == 0 ? null : "value " + i + " " + j + " " + "x".repeat(40 * j + i % 5);
            // Timestamps go back and forth, so the time index skips some batches.
            long ts = TS + ((i * 7) % 13) * 1000 + j;
            records[j] = new SimpleRecord(ts, b(key), b(value), hs);
        }
        return records;
    }

    public static void main(String[] args) throws Exception {
        File dir = new File(args[0]);
        Map<String, Object> props = new HashMap<>();
        props.put("index.interval.bytes", 512);
        LogConfig config = new LogConfig(props);
        Compression[] codecs = {
            Compression.NONE, Compression.gzip().build(), Compression.snappy().build(),
            Compression.lz4().build(), Compression.zstd().build()
        };

        long offset = 0;
        LogSegment segment = LogSegment.open(dir, offset, config, Time.SYSTEM, 0, false);
        for (int i = 0; i < 120; i++) {
            Compression codec = codecs[i % codecs.length];
            SimpleRecord[] records = records(i, true);
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
            offset = append(segment, batch);
            if (i % 13 == 12) {
                offset = append(segment, MemoryRecords.withTransactionalRecords(offset, codec, 9000L,
                    (short) 2, 0, 5, new SimpleRecord(TS + i * 10, b("tk"), b("tv"))));
                ControlRecordType type = i % 2 == 0 ? ControlRecordType.COMMIT : ControlRecordType.ABORT;
                offset = append(segment, MemoryRecords.withEndTransactionMarker(offset, TS + i * 10 + 1, 5,
                    9000L, (short) 2, new EndTransactionMarker(type, 3)));
            }
        }
        segment.onBecomeInactiveSegment();
        segment.close();

        segment = LogSegment.open(dir, offset, config, Time.SYSTEM, 0, false);
        for (int i = 0; i < 80; i++) {
            byte magic = i < 40 ? RecordBatch.MAGIC_VALUE_V0 : RecordBatch.MAGIC_VALUE_V1;
            Compression codec = codecs[i % 4];
            offset = append(segment, MemoryRecords.withRecords(magic, offset, codec, records(i, false)));
        }
        segment.onBecomeInactiveSegment();
        segment.close();

        segment = LogSegment.open(dir, offset, config, Time.SYSTEM, 0, false);
        for (int i = 0; i < 50; i++) {
            offset = append(segment, MemoryRecords.withRecords(offset, codecs[i % codecs.length], 6,
                records(i + 3, true)));
        }
        segment.close();
        System.out.println(offset);
    }
}
