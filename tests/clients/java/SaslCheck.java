// Produces and consumes over a SASL_PLAINTEXT listener with the real Java client (kafka-clients
// 3.9.1).
//
//   javac -cp '.tools/kafka-3.9.1/*' -d "$tmp" tests/clients/java/SaslCheck.java
//   java -cp "$tmp:.tools/kafka-3.9.1/*" SaslCheck 127.0.0.1:9093 topic SCRAM-SHA-512 alice secret
//
// The JAAS config is the client's sasl.jaas.config (ScramLoginModule for SCRAM, PlainLoginModule
// for PLAIN). AdminClient createTopics (1 partition), then a KafkaProducer with the default
// settings (idempotent: InitProducerId, acks=all) sends 20 keyed records, and a group-less
// KafkaConsumer assigns partition 0, seeks to the beginning and reads them back; keys, values
// and offsets are checked.
//
// With a sixth argument "denied" the user may not write to TOPIC: the default producer's send
// must fail with a TopicAuthorizationException, or a ClusterAuthorizationException when the
// broker refuses its InitProducerId (no Write on any topic, KIP-679); nothing else runs.
//
// Prints one JSON line on stdout and exits 0 when everything matches; otherwise one line starting
// with "FAIL:" on stderr and exit 1 (2 on a usage error, 3 when the 90 s deadline passes).

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Properties;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.AdminClient;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;

public class SaslCheck {
    static final int COUNT = 20;

    static void fail(String msg) {
        System.err.println("FAIL: SaslCheck: " + msg);
        System.exit(1);
    }

    static void expectWriteDenied(Properties common, String topic) throws Exception {
        Properties p = new Properties();
        p.putAll(common);
        p.put("key.serializer", StringSerializer.class.getName());
        p.put("value.serializer", StringSerializer.class.getName());
        p.put("delivery.timeout.ms", "30000");
        String refusal = null;
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(p)) {
            producer.send(new ProducerRecord<>(topic, 0, "k", "denied")).get(45, TimeUnit.SECONDS);
        } catch (java.util.concurrent.ExecutionException e) {
            Throwable cause = e.getCause();
            if (cause instanceof org.apache.kafka.common.errors.TopicAuthorizationException
                    || cause instanceof org.apache.kafka.common.errors.ClusterAuthorizationException) {
                refusal = cause.getClass().getSimpleName();
            } else {
                fail("expected an authorization error, got " + cause);
            }
        } catch (org.apache.kafka.common.errors.AuthorizationException e) {
            refusal = e.getClass().getSimpleName();
        }
        if (refusal == null) {
            fail("a denied write was acknowledged");
        }
        System.out.println("{\"ok\": true, \"write_denied\": true, \"error\": \"" + refusal + "\"}");
        System.exit(0);
    }

    public static void main(String[] args) throws Exception {
        if (args.length != 5 && !(args.length == 6 && args[5].equals("denied"))) {
            System.err.println("usage: SaslCheck BOOTSTRAP TOPIC MECHANISM USER PASSWORD [denied]");
            System.exit(2);
        }
        Thread deadline = new Thread(() -> {
            try {
                Thread.sleep(90_000);
            } catch (InterruptedException e) {
                return;
            }
            System.err.println("FAIL: SaslCheck: overall deadline of 90s passed");
            Runtime.getRuntime().halt(3);
        });
        deadline.setDaemon(true);
        deadline.start();
        String bootstrap = args[0], topic = args[1], mechanism = args[2];
        String module = mechanism.equals("PLAIN")
                ? "org.apache.kafka.common.security.plain.PlainLoginModule"
                : "org.apache.kafka.common.security.scram.ScramLoginModule";
        Properties common = new Properties();
        common.put("bootstrap.servers", bootstrap);
        common.put("security.protocol", "SASL_PLAINTEXT");
        common.put("sasl.mechanism", mechanism);
        common.put("sasl.jaas.config", module + " required username=\"" + args[3]
                + "\" password=\"" + args[4] + "\";");

        if (args.length == 6) {
            expectWriteDenied(common, topic);
            return;
        }
        try (AdminClient admin = AdminClient.create(common)) {
            admin.createTopics(Collections.singleton(new NewTopic(topic, 1, (short) 1)))
                    .all().get(30, TimeUnit.SECONDS);
        }
        Properties p = new Properties();
        p.putAll(common);
        p.put("key.serializer", StringSerializer.class.getName());
        p.put("value.serializer", StringSerializer.class.getName());
        List<Future<RecordMetadata>> sent = new ArrayList<>();
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(p)) {
            for (int i = 0; i < COUNT; i++) {
                sent.add(producer.send(new ProducerRecord<>(topic, 0, "k" + i, "value-" + i)));
            }
            producer.flush();
            for (int i = 0; i < COUNT; i++) {
                long offset = sent.get(i).get(30, TimeUnit.SECONDS).offset();
                if (offset != i) {
                    fail("record " + i + " at offset " + offset);
                }
            }
        }
        Properties c = new Properties();
        c.putAll(common);
        c.put("key.deserializer", StringDeserializer.class.getName());
        c.put("value.deserializer", StringDeserializer.class.getName());
        int consumed = 0;
        try (KafkaConsumer<String, String> consumer = new KafkaConsumer<>(c)) {
            TopicPartition tp = new TopicPartition(topic, 0);
            consumer.assign(Collections.singleton(tp));
            consumer.seekToBeginning(Collections.singleton(tp));
            long end = System.currentTimeMillis() + 30_000;
            while (consumed < COUNT && System.currentTimeMillis() < end) {
                for (ConsumerRecord<String, String> r : consumer.poll(Duration.ofMillis(500))) {
                    if (r.offset() != consumed || !r.key().equals("k" + consumed)
                            || !r.value().equals("value-" + consumed)) {
                        fail("record " + consumed + ": " + r);
                    }
                    consumed++;
                }
            }
        }
        if (consumed != COUNT) {
            fail("consumed " + consumed + " of " + COUNT);
        }
        String summary = String.format(
                "{\"ok\": true, \"mechanism\": \"%s\", \"produced\": %d, \"consumed\": %d}",
                mechanism, COUNT, consumed);
        System.out.println(new String(summary.getBytes(StandardCharsets.UTF_8), StandardCharsets.UTF_8));
        System.exit(0);
    }
}
