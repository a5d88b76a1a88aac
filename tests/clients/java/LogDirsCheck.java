// Moves a partition between a broker's log dirs with the Java Admin client (kafka-clients
// 3.9.1) and checks what the broker reports along the way.
//
//   javac -cp '.tools/kafka-3.9.1/*' -d "$tmp" tests/clients/java/LogDirsCheck.java
//   java -cp "$tmp:.tools/kafka-3.9.1/*" LogDirsCheck 127.0.0.1:9092 topic /dir/a /dir/b
//
// The topic's partition 0 must be in the first dir. describeLogDirs (every dir with its
// partitions, total and usable bytes), describeReplicaLogDirs (current dir, no future), then
// alterReplicaLogDirs to the second dir, polled with describeReplicaLogDirs until the current
// dir is the second and no future dir is left; then alterReplicaLogDirs to a dir the broker
// does not have, whose error is reported as bad_dir_error.
//
// Prints one JSON line on stdout and exits 0 when everything matches; otherwise prints one line
// starting with "FAIL:" on stderr and exits 1.

import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.DescribeReplicaLogDirsResult.ReplicaLogDirInfo;
import org.apache.kafka.clients.admin.LogDirDescription;
import org.apache.kafka.clients.admin.ReplicaInfo;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.TopicPartitionReplica;

public class LogDirsCheck {
    static void check(boolean ok, String what) {
        if (!ok) {
            System.err.println("FAIL: " + what);
            System.exit(1);
        }
    }

    public static void main(String[] args) throws Exception {
        String bootstrap = args[0], topic = args[1], from = args[2], to = args[3];
        Properties props = new Properties();
        props.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        props.put(AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG, 15000);
        props.put(AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, 20000);
        try (Admin admin = Admin.create(props)) {
            int broker = admin.describeCluster().nodes().get().iterator().next().id();
            Map<String, LogDirDescription> dirs =
                admin.describeLogDirs(List.of(broker)).allDescriptions().get().get(broker);
            check(dirs.keySet().equals(Set.of(from, to)), "dirs " + dirs.keySet());
            LogDirDescription first = dirs.get(from);
            check(first.error() == null, "error " + first.error());
            ReplicaInfo info = first.replicaInfos().get(new TopicPartition(topic, 0));
            check(info != null && info.size() > 0 && !info.isFuture() && info.offsetLag() == 0,
                "replica info " + first.replicaInfos());
            check(first.totalBytes().isPresent() && first.usableBytes().isPresent()
                && first.usableBytes().getAsLong() <= first.totalBytes().getAsLong(),
                "space " + first.totalBytes() + " " + first.usableBytes());
            long size = info.size();

            TopicPartitionReplica replica = new TopicPartitionReplica(topic, 0, broker);
            ReplicaLogDirInfo before =
                admin.describeReplicaLogDirs(List.of(replica)).all().get().get(replica);
            check(from.equals(before.getCurrentReplicaLogDir()) && before.getFutureReplicaLogDir() == null,
                "before " + before);

            admin.alterReplicaLogDirs(Map.of(replica, to)).all().get();
            long deadline = System.currentTimeMillis() + 30000;
            ReplicaLogDirInfo after;
            while (true) {
                after = admin.describeReplicaLogDirs(List.of(replica)).all().get().get(replica);
                if (to.equals(after.getCurrentReplicaLogDir()) && after.getFutureReplicaLogDir() == null) break;
                check(System.currentTimeMillis() < deadline, "not moved: " + after);
                Thread.sleep(50);
            }
            Map<String, LogDirDescription> moved =
                admin.describeLogDirs(List.of(broker)).allDescriptions().get().get(broker);
            ReplicaInfo movedInfo = moved.get(to).replicaInfos().get(new TopicPartition(topic, 0));
            check(movedInfo != null && movedInfo.size() == size, "moved " + moved);
            check(!moved.get(from).replicaInfos().containsKey(new TopicPartition(topic, 0)), "left " + moved);

            String badDirError = "none";
            try {
                admin.alterReplicaLogDirs(Map.of(replica, "/no/such/dir")).all().get();
            } catch (ExecutionException e) {
                badDirError = e.getCause().getClass().getSimpleName();
            }
            System.out.println("{\"ok\":true,\"broker\":" + broker + ",\"size\":" + size
                + ",\"bad_dir_error\":\"" + badDirError + "\"}");
        }
    }
}
