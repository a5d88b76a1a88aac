// Creates a burst of topics with the Java Admin client (kafka-clients 3.9.1) in one
// createTopics call, under a controller mutation quota (KIP-599) set for its client id.
//
//   javac -cp '.tools/kafka-3.9.1/*' -d "$tmp" tests/clients/java/MutationQuotaCheck.java
//   java -cp "$tmp:.tools/kafka-3.9.1/*" MutationQuotaCheck 127.0.0.1:9092 client-id prefix 40 retry
//
// Creates <count> topics named <prefix>0.. with one partition each. With "retry" the Admin
// client's default (retryOnQuotaViolation) retries the topics the broker refuses with
// THROTTLING_QUOTA_EXCEEDED after the throttle time, and every topic must be created; with
// "no-retry" the refused topics fail with ThrottlingQuotaExceededException and are counted.
//
// Prints one JSON line on stdout: ok, created (topics with the prefix the broker lists after),
// throttled (futures failed with ThrottlingQuotaExceededException), max_throttle_ms (their
// largest throttleTimeMs) and elapsed_ms (of the createTopics call). Other failures print one
// line starting with "FAIL:" on stderr and exit 1.

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.ExecutionException;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.CreateTopicsOptions;
import org.apache.kafka.clients.admin.CreateTopicsResult;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.common.KafkaFuture;
import org.apache.kafka.common.errors.ThrottlingQuotaExceededException;

public class MutationQuotaCheck {
    public static void main(String[] args) throws Exception {
        String bootstrap = args[0], clientId = args[1], prefix = args[2];
        int count = Integer.parseInt(args[3]);
        boolean retry = args[4].equals("retry");
        Properties props = new Properties();
        props.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        props.put(AdminClientConfig.CLIENT_ID_CONFIG, clientId);
        props.put(AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, "90000");
        props.put(AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG, "30000");
        try (Admin admin = Admin.create(props)) {
            // Connect and learn the controller before the clock starts.
            admin.describeCluster().controller().get();
            List<NewTopic> topics = new ArrayList<>();
            for (int i = 0; i < count; i++) {
                topics.add(new NewTopic(prefix + i, 1, (short) 1));
            }
            long start = System.nanoTime();
            CreateTopicsResult result =
                admin.createTopics(topics, new CreateTopicsOptions().retryOnQuotaViolation(retry));
            int throttled = 0;
            long maxThrottleMs = 0;
            for (Map.Entry<String, KafkaFuture<Void>> e : result.values().entrySet()) {
                try {
                    e.getValue().get();
                } catch (ExecutionException ex) {
                    if (!retry && ex.getCause() instanceof ThrottlingQuotaExceededException) {
                        throttled++;
                        maxThrottleMs = Math.max(maxThrottleMs,
                            ((ThrottlingQuotaExceededException) ex.getCause()).throttleTimeMs());
                    } else {
                        System.err.println("FAIL: " + e.getKey() + ": " + ex.getCause());
                        System.exit(1);
                    }
                }
            }
            long elapsedMs = (System.nanoTime() - start) / 1_000_000;
            long created = admin.listTopics().names().get().stream()
                .filter(n -> n.startsWith(prefix)).count();
            System.out.println("{\"ok\":true,\"created\":" + created + ",\"throttled\":" + throttled
                + ",\"max_throttle_ms\":" + maxThrottleMs + ",\"elapsed_ms\":" + elapsedMs + "}");
        }
    }
}
