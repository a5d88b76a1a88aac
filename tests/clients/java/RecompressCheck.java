// Broker-side recompression with the real Java client (kafka-clients 3.9.1).
//
//   javac -cp '.tools/kafka-3.9.1/*' -d "$tmp" tests/clients/java/RecompressCheck.java
//   java -cp "$tmp:.tools/kafka-3.9.1/*" RecompressCheck 127.0.0.1:9092 prefix
//
// For each (producer codec, topic compression.type) pair below: AdminClient creates
// PREFIX-<codec>-<target> with that compression.type (and LogAppendTime for one pair) and reads
// the config back (value and source); an idempotent KafkaProducer (default settings) sends
// records with keys, a null key, a null value, repeated headers and explicit timestamps; a
// group-less KafkaConsumer reads them back and every field is compared, timestamps as Kafka
// sets them (the producer's under CreateTime, the broker's append time under LogAppendTime).
//
// Prints one JSON line on stdout and exits 0 when everything matches; otherwise prints one line
// starting with "FAIL:" on stderr and exits 1 (2 on a usage error, 3 past the deadline).

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.AdminClient;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.Config;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.apache.kafka.common.record.TimestampType;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;

public class RecompressCheck {
    static final int N = 120;
    // producer codec, topic compression.type, topic timestamp type
    static final String[][] PAIRS = {
        {"gzip", "lz4", "CreateTime"},
        {"none", "zstd", "CreateTime"},
        {"zstd", "uncompressed", "CreateTime"},
        {"lz4", "snappy", "LogAppendTime"},
    };

    static void check(boolean ok, String what) {
        if (!ok) throw new IllegalStateException(what);
    }

    static byte[] b(String s) {
        return s == null ? null : s.getBytes(StandardCharsets.UTF_8);
    }

    static String s(byte[] b) {
        return b == null ? null : new String(b, StandardCharsets.UTF_8);
    }

    public static void main(String[] args) throws Exception {
        if (args.length != 2) {
            System.err.println("usage: RecompressCheck BOOTSTRAP PREFIX");
            System.exit(2);
        }
        Thread deadline = new Thread(() -> {
            try {
                Thread.sleep(90_000);
                System.err.println("FAIL: deadline passed");
                System.exit(3);
            } catch (InterruptedException e) {
                // done in time
            }
        });
        deadline.setDaemon(true);
        deadline.start();
        try {
            System.out.println(run(args[0], args[1]));
        } catch (Throwable t) {
            System.err.println("FAIL: " + t);
            System.exit(1);
        }
        System.exit(0);
    }

    static String run(String bootstrap, String prefix) throws Exception {
        Properties ap = new Properties();
        ap.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        int records = 0;
        try (AdminClient admin = AdminClient.create(ap)) {
            for (String[] pair : PAIRS) {
                String topic = prefix + "-" + pair[0] + "-" + pair[1];
                NewTopic nt = new NewTopic(topic, 1, (short) 1)
                    .configs(Map.of("compression.type", pair[1], "message.timestamp.type", pair[2]));
                admin.createTopics(List.of(nt)).all().get(30, TimeUnit.SECONDS);
                ConfigResource res = new ConfigResource(ConfigResource.Type.TOPIC, topic);
                Config config = admin.describeConfigs(List.of(res)).all().get(30, TimeUnit.SECONDS).get(res);
                ConfigEntry ce = config.get("compression.type");
                check(pair[1].equals(ce.value()), topic + ": compression.type " + ce.value());
                check(ce.source() == ConfigEntry.ConfigSource.DYNAMIC_TOPIC_CONFIG, topic + ": source " + ce.source());
                records += produceAndConsume(bootstrap, topic, pair[0], pair[2].equals("LogAppendTime"));
            }
        }
        return "{\"ok\":true,\"pairs\":" + PAIRS.length + ",\"records\":" + records + "}";
    }

    static int produceAndConsume(String bootstrap, String topic, String codec, boolean appendTime) throws Exception {
        Properties pp = new Properties();
        pp.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        pp.put(ProducerConfig.COMPRESSION_TYPE_CONFIG, codec);
        pp.put(ProducerConfig.LINGER_MS_CONFIG, "20");
        pp.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
        pp.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
        long base = System.currentTimeMillis() - 30_000;
        List<ProducerRecord<byte[], byte[]>> sent = new ArrayList<>();
        long before = System.currentTimeMillis();
        try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(pp)) {
            for (int i = 0; i < N; i++) {
                RecordHeaders h = new RecordHeaders();
                h.add("h", b("a" + i));
                h.add("h", null);
                String key = i == 4 ? null : "key-" + i;
                String value = i == 9 ? null : codec + " value " + i + " " + "x".repeat(i * 5);
                ProducerRecord<byte[], byte[]> r =
                    new ProducerRecord<>(topic, 0, base + (i * 31L) % 900, b(key), b(value), h);
                sent.add(r);
                producer.send(r);
            }
            producer.flush();
        }
        long after = System.currentTimeMillis();
        Properties cp = new Properties();
        cp.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        cp.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        cp.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        List<ConsumerRecord<byte[], byte[]>> got = new ArrayList<>();
        try (KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(cp)) {
            TopicPartition tp = new TopicPartition(topic, 0);
            consumer.assign(Collections.singletonList(tp));
            consumer.seekToBeginning(Collections.singletonList(tp));
            long until = System.currentTimeMillis() + 30_000;
            while (got.size() < N && System.currentTimeMillis() < until) {
                for (ConsumerRecord<byte[], byte[]> r : consumer.poll(Duration.ofMillis(200))) got.add(r);
            }
        }
        check(got.size() == N, topic + ": read " + got.size() + " of " + N);
        for (int i = 0; i < N; i++) {
            ProducerRecord<byte[], byte[]> want = sent.get(i);
            ConsumerRecord<byte[], byte[]> r = got.get(i);
            String at = topic + " #" + i;
            check(r.offset() == i, at + ": offset " + r.offset());
            check(java.util.Objects.equals(s(want.key()), s(r.key())), at + ": key");
            check(java.util.Objects.equals(s(want.value()), s(r.value())), at + ": value");
            Header[] hs = r.headers().toArray();
            check(hs.length == 2 && hs[0].key().equals("h") && ("a" + i).equals(s(hs[0].value()))
                && hs[1].key().equals("h") && hs[1].value() == null, at + ": headers");
            if (appendTime) {
                check(r.timestampType() == TimestampType.LOG_APPEND_TIME, at + ": " + r.timestampType());
                check(r.timestamp() >= before && r.timestamp() <= after, at + ": append time " + r.timestamp());
            } else {
                check(r.timestampType() == TimestampType.CREATE_TIME, at + ": " + r.timestampType());
                check(r.timestamp() == want.timestamp(), at + ": timestamp " + r.timestamp());
            }
        }
        return N;
    }
}
