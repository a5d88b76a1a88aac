// Runs a script of producer appends through Kafka 3.9.1's own ProducerStateManager, as
// UnifiedLog.append drives it for a leader (duplicate check on the last entry, then
// prepareUpdate / append / update / updateMapEndOffset), and prints one result line per step.
//
//   java -cp "$tmp:.tools/kafka-3.9.1/*" ProducerStateOracle DIR < script
//
// Script lines (offsets are assigned from 0 on, as a log would):
//   append PID EPOCH SEQ COUNT TS      a client batch: "ok FIRST LAST", "dup FIRST LAST" or
//                                      "err EXCEPTION_SIMPLE_NAME"
//   replicate PID EPOCH SEQ COUNT TS   a follower's batch (origin REPLICATION): "ok FIRST LAST"
//   expire NOW                         removeExpiredProducers(NOW): "producers N" left
//   snapshot                           takeSnapshot(true) into DIR: "snapshot MAP_END_OFFSET"
//
// Exits 0 after the script, 1 on a malformed line.

import java.io.BufferedReader;
import java.io.File;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.Optional;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.record.MemoryRecords;
import org.apache.kafka.common.record.RecordBatch;
import org.apache.kafka.common.record.SimpleRecord;
import org.apache.kafka.common.utils.Time;
import org.apache.kafka.storage.internals.log.AppendOrigin;
import org.apache.kafka.storage.internals.log.BatchMetadata;
import org.apache.kafka.storage.internals.log.LogOffsetMetadata;
import org.apache.kafka.storage.internals.log.ProducerAppendInfo;
import org.apache.kafka.storage.internals.log.ProducerStateManager;
import org.apache.kafka.storage.internals.log.ProducerStateManagerConfig;

public class ProducerStateOracle {
  public static void main(String[] args) throws Exception {
    File dir = new File(args[0]);
    ProducerStateManager psm =
        new ProducerStateManager(
            new TopicPartition("t", 0), dir, 900000,
            new ProducerStateManagerConfig(86400000, false), Time.SYSTEM);
    BufferedReader in =
        new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
    long next = 0;
    String line;
    while ((line = in.readLine()) != null) {
      String[] f = line.trim().split(" ");
      switch (f[0]) {
        case "append":
        case "replicate": {
          boolean client = f[0].equals("append");
          long pid = Long.parseLong(f[1]);
          short epoch = Short.parseShort(f[2]);
          int seq = Integer.parseInt(f[3]);
          int count = Integer.parseInt(f[4]);
          long ts = Long.parseLong(f[5]);
          SimpleRecord[] recs = new SimpleRecord[count];
          for (int i = 0; i < count; i++) recs[i] = new SimpleRecord(ts, ("v" + i).getBytes());
          RecordBatch batch =
              MemoryRecords.withIdempotentRecords(
                      RecordBatch.MAGIC_VALUE_V2, next, Compression.NONE, pid, epoch, seq, 0, recs)
                  .batches().iterator().next();
          if (client) {
            Optional<BatchMetadata> dup =
                psm.lastEntry(pid).flatMap(e -> e.findDuplicateBatch(batch));
            if (dup.isPresent()) {
              System.out.println("dup " + dup.get().firstOffset() + " " + dup.get().lastOffset);
              break;
            }
          }
          try {
            ProducerAppendInfo info =
                psm.prepareUpdate(pid, client ? AppendOrigin.CLIENT : AppendOrigin.REPLICATION);
            info.append(batch, Optional.of(new LogOffsetMetadata(next)));
            psm.update(info);
            psm.updateMapEndOffset(batch.lastOffset() + 1);
            System.out.println("ok " + next + " " + batch.lastOffset());
            next = batch.lastOffset() + 1;
          } catch (Exception e) {
            System.out.println("err " + e.getClass().getSimpleName());
          }
          break;
        }
        case "expire":
          psm.removeExpiredProducers(Long.parseLong(f[1]));
          System.out.println("producers " + psm.activeProducers().size());
          break;
        case "snapshot":
          psm.takeSnapshot(true);
          System.out.println("snapshot " + psm.mapEndOffset());
          break;
        default:
          System.err.println("bad line: " + line);
          System.exit(1);
      }
    }
    System.out.flush();
  }
}
