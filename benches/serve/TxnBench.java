// Transactional producer benchmark for benches/serve/run.sh (section txn): kafka-clients 3.9.1
// against one broker, one partition, 1 KiB records.
//
//   java -cp 'classes:.tools/kafka-3.9.1/*' TxnBench BOOTSTRAP TOPIC RECORDS PER_COMMIT COMMITS_B [RF]
//
// With RF, TOPIC is created first (one partition, RF replicas, min.insync.replicas RF-1 at least
// 1), for a cluster without automatic topic creation (benches/cluster/run.sh, MODE=txn).
//
// Phase A (throughput): RECORDS records in transactions of PER_COMMIT each, acks=all; each
// transaction's records are flushed, then commitTransaction() is timed alone (EndTxn: the
// coordinator writes PrepareCommit and answers; the markers follow).
// Phase B (visibility): COMMITS_B transactions of one record; the time from commitTransaction()
// until a read_committed ListOffsets sees the record below the last stable offset (EndTxn, the
// marker written and replicated), polled every 0.2 ms.
// Prints one JSON line: msgs_per_s, commit_ms_p50/p99, visible_ms_p50/p99.

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.TimeUnit;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.ListOffsetsOptions;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.IsolationLevel;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArraySerializer;

public class TxnBench {
    static double percentile(List<Double> values, double p) {
        List<Double> sorted = new ArrayList<>(values);
        Collections.sort(sorted);
        int i = (int) Math.ceil(p * sorted.size()) - 1;
        return sorted.get(Math.max(0, Math.min(i, sorted.size() - 1)));
    }

    static long lastStableOffset(Admin admin, TopicPartition tp) throws Exception {
        return admin.listOffsets(Map.of(tp, OffsetSpec.latest()),
                new ListOffsetsOptions(IsolationLevel.READ_COMMITTED))
            .partitionResult(tp).get().offset();
    }

    public static void main(String[] args) throws Exception {
        String bootstrap = args[0];
        String topic = args[1];
        long records = Long.parseLong(args[2]);
        int perCommit = Integer.parseInt(args[3]);
        int commitsB = Integer.parseInt(args[4]);
        TopicPartition tp = new TopicPartition(topic, 0);
        if (args.length > 5) {
            short rf = Short.parseShort(args[5]);
            Properties create = new Properties();
            create.put("bootstrap.servers", bootstrap);
            try (Admin admin = Admin.create(create)) {
                NewTopic newTopic = new NewTopic(topic, 1, rf)
                    .configs(Map.of("min.insync.replicas", Integer.toString(Math.max(1, rf - 1))));
                admin.createTopics(List.of(newTopic)).all().get();
            }
        }

        Properties props = new Properties();
        props.put("bootstrap.servers", bootstrap);
        props.put("transactional.id", "txn-bench-" + System.nanoTime());
        props.put("linger.ms", "5");
        props.put("key.serializer", ByteArraySerializer.class.getName());
        props.put("value.serializer", ByteArraySerializer.class.getName());
        Properties adminProps = new Properties();
        adminProps.put("bootstrap.servers", bootstrap);
        byte[] value = new byte[1024];

        try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(props);
             Admin admin = Admin.create(adminProps)) {
            producer.initTransactions();
            List<Double> commits = new ArrayList<>();
            long start = System.nanoTime();
            long sent = 0;
            while (sent < records) {
                producer.beginTransaction();
                for (int i = 0; i < perCommit && sent < records; i++, sent++) {
                    producer.send(new ProducerRecord<>(topic, 0, null, value));
                }
                producer.flush();
                long t0 = System.nanoTime();
                producer.commitTransaction();
                commits.add((System.nanoTime() - t0) / 1e6);
            }
            double seconds = (System.nanoTime() - start) / 1e9;

            List<Double> visible = new ArrayList<>();
            for (int i = 0; i < commitsB; i++) {
                producer.beginTransaction();
                producer.send(new ProducerRecord<>(topic, 0, null, value));
                producer.flush();
                long end = lastStableOffset(admin, tp);
                long t0 = System.nanoTime();
                producer.commitTransaction();
                // The record (at `end` or later, as the stable offset trails the open record)
                // is visible once the stable offset passes it and its marker.
                while (lastStableOffset(admin, tp) < end + 2) {
                    TimeUnit.MICROSECONDS.sleep(200);
                }
                visible.add((System.nanoTime() - t0) / 1e6);
            }
            System.out.printf(
                "{\"msgs_per_s\": %.0f, \"commit_ms_p50\": %.2f, \"commit_ms_p99\": %.2f, "
                    + "\"visible_ms_p50\": %.2f, \"visible_ms_p99\": %.2f}%n",
                records / seconds, percentile(commits, 0.5), percentile(commits, 0.99),
                percentile(visible, 0.5), percentile(visible, 0.99));
        }
    }
}
