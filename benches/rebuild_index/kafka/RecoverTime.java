// Times Kafka 3.9.1's LogSegment.recover (the broker's index rebuild) on a segment, N runs.
import java.io.File;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.utils.Time;
import org.apache.kafka.storage.internals.log.*;

public class RecoverTime {
    public static void main(String[] args) throws Exception {
        File dir = new File(args[0]);
        int runs = Integer.parseInt(args[1]);
        Map<String, Object> props = new HashMap<>();
        LogConfig config = new LogConfig(props);
        for (int r = 0; r < runs; r++) {
            new File(dir, "00000000000000000000.index").delete();
            new File(dir, "00000000000000000000.timeindex").delete();
            long start = System.nanoTime();
            LogSegment segment = LogSegment.open(dir, 0L, config, Time.SYSTEM, true, 0, false, "");
            ProducerStateManager psm = new ProducerStateManager(new TopicPartition("t", 0), dir, 900000,
                new ProducerStateManagerConfig(86400000, false), Time.SYSTEM);
            segment.recover(psm, Optional.empty());
            segment.onBecomeInactiveSegment();
            segment.close();
            long end = System.nanoTime();
            System.out.println((end - start) / 1e9);
        }
    }
}
