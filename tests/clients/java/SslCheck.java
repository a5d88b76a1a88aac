// Drives a broker's SSL listener with kafka-clients 3.9.1: a KafkaProducer with its default
// settings (idempotent, acks=all) and a KafkaConsumer that assigns partition 0 and reads from
// the beginning, both with security.protocol=SSL, the CA as a PEM trust store
// (ssl.truststore.type=PEM) and, when given, a PKCS12 key store as the client certificate.
//
//   java SslCheck <bootstrap> <topic> <ca.pem> [<client.p12> <password>]
//
// Prints one JSON line {"ok":true,"records":N} when every record came back in order; otherwise
// {"ok":false,"error":"..."} and exit 1.

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;

import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;

public class SslCheck {
  static final int RECORDS = 100;

  static Properties ssl(String[] args) {
    Properties p = new Properties();
    p.put("bootstrap.servers", args[0]);
    p.put("security.protocol", "SSL");
    p.put("ssl.truststore.type", "PEM");
    p.put("ssl.truststore.location", args[2]);
    if (args.length >= 5) {
      p.put("ssl.keystore.type", "PKCS12");
      p.put("ssl.keystore.location", args[3]);
      p.put("ssl.keystore.password", args[4]);
    }
    return p;
  }

  public static void main(String[] args) {
    try {
      String topic = args[1];
      Properties pp = ssl(args);
      pp.put("key.serializer", StringSerializer.class.getName());
      pp.put("value.serializer", StringSerializer.class.getName());
      pp.put("delivery.timeout.ms", "60000");
      try (KafkaProducer<String, String> producer = new KafkaProducer<>(pp)) {
        for (int i = 0; i < RECORDS; i++) {
          producer.send(new ProducerRecord<>(topic, 0, "k" + i, "value-" + i)).get();
        }
      }
      Properties cp = ssl(args);
      cp.put("key.deserializer", StringDeserializer.class.getName());
      cp.put("value.deserializer", StringDeserializer.class.getName());
      cp.put("enable.auto.commit", "false");
      List<ConsumerRecord<String, String>> got = new ArrayList<>();
      try (KafkaConsumer<String, String> consumer = new KafkaConsumer<>(cp)) {
        TopicPartition tp = new TopicPartition(topic, 0);
        consumer.assign(List.of(tp));
        consumer.seekToBeginning(List.of(tp));
        long deadline = System.currentTimeMillis() + 60_000;
        while (got.size() < RECORDS && System.currentTimeMillis() < deadline) {
          for (ConsumerRecord<String, String> r : consumer.poll(Duration.ofMillis(500))) {
            got.add(r);
          }
        }
      }
      if (got.size() != RECORDS) {
        throw new IllegalStateException("consumed " + got.size() + " of " + RECORDS);
      }
      for (int i = 0; i < RECORDS; i++) {
        ConsumerRecord<String, String> r = got.get(i);
        if (r.offset() != i || !r.key().equals("k" + i) || !r.value().equals("value-" + i)) {
          throw new IllegalStateException("record " + i + " came back as " + r);
        }
      }
      System.out.println("{\"ok\":true,\"records\":" + got.size() + "}");
    } catch (Exception e) {
      String msg = String.valueOf(e).replace("\\", "\\\\").replace("\"", "'");
      System.out.println("{\"ok\":false,\"error\":\"" + msg + "\"}");
      System.exit(1);
    }
  }
}
