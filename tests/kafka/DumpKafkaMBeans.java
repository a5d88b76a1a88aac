// Dumps a Kafka broker's MBeans over remote JMX, with the JMX exporter javaagent's scrape of the
// same broker taken between two passes, so kcli's JMX exporter rule engine can be compared with the
// real one on the very MBeans the real one saw (src/server/metrics/jmx_exporter.rs's golden test).
//
//   java DumpKafkaMBeans.java JMX_PORT METRICS_URL MBEANS_OUT SCRAPE_OUT
//
// Pass 1 reads every kafka* MBean; then METRICS_URL (the agent's /metrics) is fetched into
// SCRAPE_OUT; then pass 2 reads them again. MBEANS_OUT holds pass 1, one MBean per `M` line and
// one numeric (or boolean) attribute per `A` line under it, tab-separated:
//
//   M <domain> <key property list, as ObjectName.getKeyPropertyListString() gives it>
//   A <attribute> <Java class of the value> <value, String.valueOf> <=|~> <description>
//
// `=` when pass 2 read the same value (so the scrape between saw it too), `~` when it moved.
// Attributes in MBeanInfo order (the order the exporter reads them in); MBeans sorted by name.
// Descriptions escape backslash, tab and newline as \\, \t, \n. String and other non-numeric
// attributes are left out: the rule engine under test sees numbers only.
// Needs only the JDK; tests/kafka/capture-jmx-metrics.sh runs it.

import java.io.IOException;
import java.io.InputStream;
import java.io.PrintWriter;
import java.net.URL;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import javax.management.Attribute;
import javax.management.AttributeList;
import javax.management.MBeanAttributeInfo;
import javax.management.MBeanServerConnection;
import javax.management.ObjectName;
import javax.management.remote.JMXConnector;
import javax.management.remote.JMXConnectorFactory;
import javax.management.remote.JMXServiceURL;

public class DumpKafkaMBeans {

    record Attr(String name, String type, String value, String description) {}

    public static void main(String[] args) throws Exception {
        if (args.length != 4) {
            System.err.println("usage: DumpKafkaMBeans JMX_PORT METRICS_URL MBEANS_OUT SCRAPE_OUT");
            System.exit(2);
        }
        JMXServiceURL url =
                new JMXServiceURL("service:jmx:rmi:///jndi/rmi://127.0.0.1:" + args[0] + "/jmxrmi");
        try (JMXConnector connector = JMXConnectorFactory.connect(url)) {
            MBeanServerConnection conn = connector.getMBeanServerConnection();
            Map<ObjectName, List<Attr>> first = dump(conn);
            try (InputStream in = new URL(args[1]).openStream()) {
                Files.write(Paths.get(args[3]), in.readAllBytes());
            }
            Map<ObjectName, List<Attr>> second = dump(conn);
            try (PrintWriter out =
                    new PrintWriter(Files.newBufferedWriter(Paths.get(args[2]), StandardCharsets.UTF_8))) {
                for (Map.Entry<ObjectName, List<Attr>> bean : first.entrySet()) {
                    ObjectName name = bean.getKey();
                    if (bean.getValue().isEmpty()) {
                        continue;
                    }
                    out.print("M\t" + name.getDomain() + "\t" + name.getKeyPropertyListString() + "\n");
                    List<Attr> again = second.getOrDefault(name, List.of());
                    for (Attr attr : bean.getValue()) {
                        boolean same = again.stream().anyMatch(a -> a.equals(attr));
                        out.print("A\t" + attr.name() + "\t" + attr.type() + "\t" + attr.value() + "\t"
                                + (same ? "=" : "~") + "\t" + escape(attr.description()) + "\n");
                    }
                }
            }
        }
    }

    static Map<ObjectName, List<Attr>> dump(MBeanServerConnection conn) throws Exception {
        Map<ObjectName, List<Attr>> out =
                new TreeMap<>((a, b) -> a.toString().compareTo(b.toString()));
        for (ObjectName name : conn.queryNames(new ObjectName("kafka*:*"), null)) {
            List<Attr> attrs = new ArrayList<>();
            try {
                MBeanAttributeInfo[] infos = conn.getMBeanInfo(name).getAttributes();
                List<String> names = new ArrayList<>();
                Map<String, MBeanAttributeInfo> byName = new TreeMap<>();
                for (MBeanAttributeInfo info : infos) {
                    if (info.isReadable()) {
                        names.add(info.getName());
                        byName.put(info.getName(), info);
                    }
                }
                AttributeList values = conn.getAttributes(name, names.toArray(new String[0]));
                for (Object o : values) {
                    Attribute a = (Attribute) o;
                    Object v = a.getValue();
                    String value;
                    if (v instanceof Number) {
                        value = String.valueOf(v);
                    } else if (v instanceof Boolean) {
                        value = ((Boolean) v) ? "1" : "0";
                    } else {
                        continue;
                    }
                    attrs.add(new Attr(a.getName(), v.getClass().getSimpleName(), value,
                            byName.get(a.getName()).getDescription()));
                }
            } catch (Exception e) {
                // An MBean unregistered between the query and the read: not in this pass.
                continue;
            }
            out.put(name, attrs);
        }
        return out;
    }

    static String escape(String s) {
        if (s == null) {
            return "\\N";
        }
        return s.replace("\\", "\\\\").replace("\t", "\\t").replace("\n", "\\n");
    }
}
