// A Java consumer (kafka-clients 3.9.1) with `client.rack` set, reporting the bytes it read
// from each broker by its own per-node counters (consumer-node-metrics incoming-byte-total),
// which Kafka's ConsumerPerformance cannot print: it reads them after closing the consumer,
// which removes them.
//
//   javac -cp '.tools/kafka-3.9.1/*' -d "$tmp" tests/clients/java/RackConsumer.java
//   java -cp "$tmp:.tools/kafka-3.9.1/*" RackConsumer 127.0.0.1:9092 topic rack-3 client-id 100 200 120000
//
// Arguments: bootstrap, topic, rack, client id (also the group id), the records of the first
// phase, the records in all, a timeout in ms. Subscribes from the earliest offset, polls until
// the first phase is read and prints {"phase":1,"consumed":n,"node_bytes":{"<id>":bytes,...}},
// then until all are read and prints the same for the end with "ok":true as its last line,
// before closing. Bootstrap connections (negative node ids) are left out. Exits 1 with a line
// starting with "FAIL:" on stderr when the timeout passes first.

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.TreeMap;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.Metric;
import org.apache.kafka.common.MetricName;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;

public class RackConsumer {
    /// incoming-byte-total per broker id, from the consumer's live metrics.
    static String nodeBytes(KafkaConsumer<byte[], byte[]> consumer) {
        Map<Integer, Double> bytes = new TreeMap<>();
        for (Map.Entry<MetricName, ? extends Metric> e : consumer.metrics().entrySet()) {
            MetricName name = e.getKey();
            if (!name.group().equals("consumer-node-metrics")
                || !name.name().equals("incoming-byte-total")) {
                continue;
            }
            String node = name.tags().getOrDefault("node-id", "");
            if (!node.startsWith("node-")) {
                continue;
            }
            int id = Integer.parseInt(node.substring("node-".length()));
            if (id < 0) {
                continue;
            }
            bytes.merge(id, ((Number) e.getValue().metricValue()).doubleValue(), Double::sum);
        }
        StringBuilder json = new StringBuilder("{");
        for (Map.Entry<Integer, Double> e : bytes.entrySet()) {
            if (json.length() > 1) {
                json.append(',');
            }
            json.append('"').append(e.getKey()).append("\":").append(e.getValue().longValue());
        }
        return json.append('}').toString();
    }

    public static void main(String[] args) {
        String bootstrap = args[0], topic = args[1], rack = args[2], client = args[3];
        long first = Long.parseLong(args[4]), total = Long.parseLong(args[5]);
        long deadline = System.currentTimeMillis() + Long.parseLong(args[6]);
        Properties props = new Properties();
        props.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        props.put(ConsumerConfig.CLIENT_ID_CONFIG, client);
        props.put(ConsumerConfig.GROUP_ID_CONFIG, client);
        props.put(ConsumerConfig.CLIENT_RACK_CONFIG, rack);
        props.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        props.put(ConsumerConfig.FETCH_MAX_WAIT_MS_CONFIG, 200);
        props.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class);
        props.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class);
        try (KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(props)) {
            consumer.subscribe(List.of(topic));
            long consumed = 0;
            boolean reported = false;
            while (consumed < total) {
                if (System.currentTimeMillis() > deadline) {
                    System.err.println("FAIL: read " + consumed + " of " + total);
                    System.exit(1);
                }
                consumed += consumer.poll(Duration.ofMillis(200)).count();
                if (!reported && consumed >= first) {
                    System.out.println("{\"phase\":1,\"consumed\":" + consumed
                        + ",\"node_bytes\":" + nodeBytes(consumer) + "}");
                    System.out.flush();
                    reported = true;
                }
            }
            System.out.println("{\"ok\":true,\"consumed\":" + consumed
                + ",\"node_bytes\":" + nodeBytes(consumer) + "}");
        }
    }
}
