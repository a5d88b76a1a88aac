// kafka-clients 3.9.1: a transactional producer writing to every partition of TOPIC until the
// file STOP exists, each transaction holding one record per partition valued with the
// transaction's number; every fourth transaction is aborted, the others committed. Run beside a
// cluster whose brokers are replaced one at a time (tests/it/mixed_cluster/migration.rs).
//
// Errors a transaction may meet while a broker goes away are retried as the client allows: an
// abortable error aborts the transaction (its number is then "aborted"); a commit whose outcome
// is unknown (a timeout) is retried, as KafkaProducer allows, until it is decided; a fatal
// error (fenced, say) fails the run.
//
// Usage: TransactionalLoad BOOTSTRAP TOPIC PARTITIONS STOP
// Prints one JSON line on stdout: {"ok": true, "committed": [n...], "aborted": [n...]} and
// exits 0; otherwise "FAIL: ..." on stderr and exit 1.

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;

import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.errors.AuthorizationException;
import org.apache.kafka.common.errors.OutOfOrderSequenceException;
import org.apache.kafka.common.errors.ProducerFencedException;
import org.apache.kafka.common.errors.TimeoutException;
import org.apache.kafka.common.serialization.ByteArraySerializer;

public class TransactionalLoad {
  public static void main(String[] args) throws Exception {
    if (args.length != 4) {
      System.err.println("usage: TransactionalLoad BOOTSTRAP TOPIC PARTITIONS STOP");
      System.exit(2);
    }
    String topic = args[1];
    int partitions = Integer.parseInt(args[2]);
    Path stop = Path.of(args[3]);
    Properties props = new Properties();
    props.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, args[0]);
    props.put(ProducerConfig.TRANSACTIONAL_ID_CONFIG, "migrating-load");
    props.put(ProducerConfig.TRANSACTION_TIMEOUT_CONFIG, "60000");
    props.put(ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, "120000");
    props.put(ProducerConfig.MAX_BLOCK_MS_CONFIG, "120000");
    props.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
    props.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
    List<Long> committed = new ArrayList<>();
    List<Long> aborted = new ArrayList<>();
    try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(props)) {
      producer.initTransactions();
      for (long n = 0; !Files.exists(stop); n++) {
        byte[] value = Long.toString(n).getBytes(StandardCharsets.UTF_8);
        producer.beginTransaction();
        try {
          for (int p = 0; p < partitions; p++) {
            producer.send(new ProducerRecord<>(topic, p, null, value));
          }
          if (n % 4 == 3) {
            producer.abortTransaction();
            aborted.add(n);
          } else {
            commit(producer);
            committed.add(n);
          }
        } catch (ProducerFencedException | OutOfOrderSequenceException | AuthorizationException e) {
          throw e;
        } catch (KafkaException e) {
          // Abortable: the transaction is rolled back and the next one begins.
          producer.abortTransaction();
          aborted.add(n);
        }
        Thread.sleep(20);
      }
    } catch (Exception e) {
      System.err.println("FAIL: " + e);
      System.exit(1);
    }
    System.out.println("{\"ok\": true, \"committed\": " + committed + ", \"aborted\": " + aborted + "}");
  }

  // A commit that times out (max.block.ms) has not failed: KafkaProducer lets it be retried
  // until it is decided.
  static void commit(KafkaProducer<byte[], byte[]> producer) {
    for (int attempt = 0; ; attempt++) {
      try {
        producer.commitTransaction();
        return;
      } catch (TimeoutException e) {
        if (attempt >= 3) throw e;
      }
    }
  }
}
