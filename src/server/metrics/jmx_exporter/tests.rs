//! The rule engine's tests: its semantics one by one, the golden comparison with the real
//! javaagent on a real Kafka 3.9.1 broker's MBeans (tests/fixtures/metrics/, made by
//! tests/kafka/capture-jmx-metrics.sh), and the time of a 10,000-partition scrape.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::PathBuf;
use std::time::Instant;

use super::*;
use crate::metrics::{Attribute, Meter};

fn yammer(
    domain: &'static str,
    type_: &'static str,
    name: &'static str,
    tags: &[(&'static str, &str)],
    reading: Reading,
) -> MetricSample {
    MetricSample {
        mbean: MBeanName::yammer(domain, type_, name, tags),
        reading,
    }
}

#[test]
fn strimzis_rules_are_the_fixtures_and_compile() {
    let fixture = std::fs::read_to_string(fixtures().join("kafka-metrics.yaml")).unwrap();
    assert_eq!(STRIMZI_RULES, fixture);
    let rules = Rules::strimzi();
    assert!(rules.config.lowercase_output_name);
    assert_eq!(rules.config.rules.len(), 29);
}

#[test]
fn meters_are_counters_and_gauges_keep_their_type() {
    let meter = Meter::new();
    meter.mark(3);
    let samples = [
        yammer(
            "kafka.server",
            "BrokerTopicMetrics",
            "MessagesInPerSec",
            &[("topic", "t")],
            Reading::Meter(meter.snapshot()),
        ),
        yammer(
            "kafka.server",
            "ReplicaManager",
            "LeaderCount",
            &[],
            Reading::Gauge(2.0),
        ),
    ];
    let text = Rules::strimzi().render(&samples);
    assert_eq!(
        text,
        "# HELP kafka_server_brokertopicmetrics_messagesin_total Attribute exposed for management \
         kafka.server:name=MessagesInPerSec,type=BrokerTopicMetrics,attribute=Count\n\
         # TYPE kafka_server_brokertopicmetrics_messagesin_total counter\n\
         kafka_server_brokertopicmetrics_messagesin_total{topic=\"t\"} 3.0\n\
         # HELP kafka_server_replicamanager_leadercount Attribute exposed for management \
         kafka.server:name=LeaderCount,type=ReplicaManager,attribute=Value\n\
         # TYPE kafka_server_replicamanager_leadercount gauge\n\
         kafka_server_replicamanager_leadercount 2.0\n"
    );
}

/// The two rules both configs of `rules_substitute_anchor_and_take_the_first_match` open with.
const COMMON_RULES: &str = r#"
lowercaseOutputLabelNames: true
rules:
- pattern: "k<type=(\\w+), name=(.+)><>Value(x)?"
  name: first_$1_$2
  type: GAUGE
  valueFactor: 0.5
  help: "the $2 of $1"
  labels:
    Fixed: "x"
    "$1": "$2"
    empty: "$3"
- pattern: "k<type=(\\w+)><>(\\w+)"
  name: "a.b-c__$2_total"
  type: COUNTER
"#;

#[test]
fn rules_substitute_anchor_and_take_the_first_match() {
    let rules = Rules::from_yaml(&format!(
        r#"{COMMON_RULES}- pattern: "k<type=v, x=y><>OneMinuteRate"
  attrNameSnakeCase: true
- pattern: "k<type=v, x=y><>Value"
  value: "4$1"
- pattern: "nomatch"
  name: never
"#
    ));
    let bean = |properties: &[(&'static str, &str)]| MBeanName {
        domain: "k",
        properties: properties
            .iter()
            .map(|(k, v)| (*k, v.to_string()))
            .collect(),
    };
    let samples = [
        MetricSample {
            mbean: bean(&[("type", "T"), ("name", "n-1")]),
            reading: Reading::Gauge(4.0),
        },
        MetricSample {
            mbean: bean(&[("type", "T")]),
            reading: Reading::Attributes(vec![
                Attribute {
                    name: "Value".into(),
                    value: 1.0,
                    description: None,
                },
                Attribute {
                    name: "not a word".into(),
                    value: 9.0,
                    description: Some("d".into()),
                },
            ]),
        },
        MetricSample {
            mbean: bean(&[("type", "v"), ("x", "y")]),
            reading: Reading::Attributes(vec![
                Attribute {
                    name: "Value".into(),
                    value: 1.0,
                    description: None,
                },
                Attribute {
                    name: "OneMinuteRate".into(),
                    value: 2.0,
                    description: None,
                },
            ]),
        },
        MetricSample {
            mbean: MBeanName {
                domain: "other",
                ..bean(&[("type", "T")])
            },
            reading: Reading::Gauge(1.0),
        },
    ];
    // The value rule refers to a group its pattern lacks: a config error, not a scrape error.
    assert!(matches!(
        rules,
        Err(JmxRulesError::Replacement {
            index: 3,
            field: "value",
            ..
        })
    ));
    let rules = Rules::from_yaml(&format!(
        r#"{COMMON_RULES}- pattern: "k<type=v, x=y><>one_minute_rate"
  attrNameSnakeCase: true
- pattern: "k<type=v, x=(y)><>Value"
  value: "4$1" # "4y": no number, so the attribute is dropped, whatever rules follow
- pattern: "k<type=v, x=y><>Value"
  value: "42"
- pattern: "nomatch"
  name: never
"#
    ))
    .unwrap();
    assert_eq!(
        rules.render(&samples),
        "# HELP a_b_c_Value_total k:name=null,type=T,attribute=Value\n\
         # TYPE a_b_c_Value_total counter\n\
         a_b_c_Value_total 1.0\n\
         # HELP a_b_c_not_total d k:name=null,type=T,attribute=not a word\n\
         # TYPE a_b_c_not_total counter\n\
         a_b_c_not_total 9.0\n\
         # HELP first_T_n_1 the n-1 of T\n\
         # TYPE first_T_n_1 gauge\n\
         first_T_n_1{fixed=\"x\",t=\"n-1\"} 2.0\n\
         # HELP k_v_one_minute_rate k:name=null,type=v,attribute=OneMinuteRate\n\
         # TYPE k_v_one_minute_rate untyped\n\
         k_v_one_minute_rate{x=\"y\"} 2.0\n"
    );
}

#[test]
fn without_rules_every_attribute_is_exported_by_default() {
    let rules = Rules::from_yaml("excludeObjectNames: [\"kafka.x:type=Skip,*\"]\n").unwrap();
    let samples = [
        yammer("kafka.x", "Skip", "A", &[], Reading::Gauge(1.0)),
        MetricSample {
            mbean: MBeanName::kafka_group(
                "kafka.server",
                "socket-server-metrics",
                &[("listener", "PLAINTEXT")],
            ),
            reading: Reading::KafkaMetrics(vec![("connection-count", 3.0)]),
        },
    ];
    assert_eq!(
        rules.render(&samples),
        "# HELP kafka_server_socket_server_metrics_connection_count \
         kafka.server:name=null,type=socket-server-metrics,attribute=connection-count\n\
         # TYPE kafka_server_socket_server_metrics_connection_count untyped\n\
         kafka_server_socket_server_metrics_connection_count{listener=\"PLAINTEXT\"} 3.0\n"
    );
}

#[test]
fn equal_labels_in_a_family_get_the_object_name() {
    let rules =
        Rules::from_yaml("rules:\n- pattern: \"k<type=(.+), name=(.+)><>Value\"\n  name: same\n")
            .unwrap();
    let samples = [
        yammer("k", "B", "N", &[], Reading::Gauge(2.0)),
        yammer("k", "A", "N", &[], Reading::Gauge(1.0)),
    ];
    let text = rules.render(&samples);
    assert!(
        text.ends_with(
            "same{_objectname=\"k<type=A, name=N><>Value\"} 1.0\n\
         same{_objectname=\"k<type=B, name=N><>Value\"} 2.0\n"
        ),
        "{text}"
    );
}

#[test]
fn config_errors_name_the_rule() {
    let error =
        Rules::from_yaml("rules:\n- pattern: a\n- pattern: \"(?=x)\"\n  name: n\n").unwrap_err();
    assert!(
        matches!(error, JmxRulesError::Pattern { index: 1, ref pattern, .. } if pattern == "(?=x)"),
        "{error}"
    );
    let error = Rules::from_yaml("rules:\n- pattern: \"(a)\"\n  name: n_$2\n").unwrap_err();
    assert!(
        matches!(
            error,
            JmxRulesError::Replacement {
                index: 0,
                field: "name",
                ..
            }
        ),
        "{error}"
    );
    let error = Rules::from_yaml("rules:\n- pattern: a\n  labels: {x: y}\n").unwrap_err();
    assert!(
        matches!(
            error,
            JmxRulesError::LabelsOrHelpWithoutName { index: 0, .. }
        ),
        "{error}"
    );
    let error = Rules::from_yaml("rules:\n- name: n\n").unwrap_err();
    assert!(
        matches!(error, JmxRulesError::NameWithoutPattern { index: 0 }),
        "{error}"
    );
    let error = Rules::from_yaml("whitelistObjectNames: [\"nodomain\"]\n").unwrap_err();
    assert!(
        matches!(
            error,
            JmxRulesError::ObjectName {
                key: "whitelistObjectNames",
                ..
            }
        ),
        "{error}"
    );
    assert!(matches!(
        Rules::from_yaml("rules: 3\n").unwrap_err(),
        JmxRulesError::Yaml { .. }
    ));
}

#[test]
fn the_cache_follows_the_mbeans() {
    let rules = Rules::strimzi();
    let one = [yammer(
        "kafka.server",
        "ReplicaManager",
        "LeaderCount",
        &[],
        Reading::Gauge(2.0),
    )];
    assert!(rules.render(&one).contains("leadercount 2.0\n"));
    assert!(
        rules
            .render(&one.clone().map(|mut s| {
                s.reading = Reading::Gauge(5.0);
                s
            }))
            .contains("leadercount 5.0\n")
    );
    assert_eq!(lock(&rules.cache).beans.len(), 1);
    assert_eq!(rules.render(&[]), "");
    assert!(lock(&rules.cache).beans.is_empty());
}

// ---------------------------------------------------------------------------------------------
// Golden test: the real javaagent's scrape of a real broker, against the same broker's MBeans.

fn fixtures() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/metrics")
}

fn leak(s: &str, interned: &mut HashMap<String, &'static str>) -> &'static str {
    if let Some(s) = interned.get(s) {
        return s;
    }
    let leaked: &'static str = Box::leak(s.to_string().into_boxed_str());
    interned.insert(s.to_string(), leaked);
    leaked
}

fn unescape(s: &str) -> Option<String> {
    if s == "\\N" {
        return None;
    }
    let mut out = String::new();
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        if c == '\\' {
            match chars.next() {
                Some('t') => out.push('\t'),
                Some('n') => out.push('\n'),
                Some(c) => out.push(c),
                None => {}
            }
        } else {
            out.push(c);
        }
    }
    Some(out)
}

/// The key property list as the exporter's `JmxMBeanPropertyCache` splits it: on commas outside
/// quoted values, quotes kept.
fn split_key_properties(list: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut rest = list;
    while !rest.is_empty() {
        let (key, after) = rest.split_once('=').unwrap();
        let mut end = after.len();
        let mut quoted = false;
        let mut escaped = false;
        for (i, c) in after.char_indices() {
            match c {
                _ if escaped => escaped = false,
                '\\' if quoted => escaped = true,
                '"' => quoted = !quoted,
                ',' if !quoted => {
                    end = i;
                    break;
                }
                _ => {}
            }
        }
        out.push((key.to_string(), after[..end].to_string()));
        rest = after.get(end + 1..).unwrap_or("");
    }
    out
}

/// The dump's MBeans as samples; an attribute whose value moved across the scrape reads NaN,
/// so that its samples are recognised and their values not compared.
fn read_mbeans(file: &str) -> Vec<MetricSample> {
    let text = std::fs::read_to_string(fixtures().join(file)).unwrap();
    let mut interned = HashMap::new();
    let mut samples: Vec<MetricSample> = Vec::new();
    for line in text.lines() {
        let fields: Vec<&str> = line.split('\t').collect();
        match fields[0] {
            "M" => samples.push(MetricSample {
                mbean: MBeanName {
                    domain: leak(fields[1], &mut interned),
                    properties: split_key_properties(fields[2])
                        .into_iter()
                        .map(|(k, v)| (leak(&k, &mut interned), v))
                        .collect(),
                },
                reading: Reading::Attributes(Vec::new()),
            }),
            "A" => {
                let value = if fields[4] == "=" {
                    config::parse_java_double(fields[3]).unwrap()
                } else {
                    f64::NAN
                };
                let Some(MetricSample {
                    reading: Reading::Attributes(attributes),
                    ..
                }) = samples.last_mut()
                else {
                    panic!("attribute before an MBean: {line}");
                };
                attributes.push(Attribute {
                    name: fields[1].to_string(),
                    value,
                    description: unescape(fields[5]),
                });
            }
            _ => panic!("unexpected line {line:?}"),
        }
    }
    samples
}

#[derive(Debug, Default)]
struct Family {
    type_line: String,
    help: Option<String>,
    /// `name{labels}` and the value's text.
    samples: Vec<(String, String)>,
}

/// A scrape's families by name (as the TYPE line names them), less those not from MBeans the
/// engine sees (the JVM's, the exporter's own, the process's).
fn read_scrape(text: &str) -> BTreeMap<String, Family> {
    let mut families: BTreeMap<String, Family> = BTreeMap::new();
    let mut current = String::new();
    for line in text.lines() {
        if let Some(rest) = line.strip_prefix("# HELP ") {
            let (name, help) = rest.split_once(' ').unwrap();
            current = name.to_string();
            families.entry(current.clone()).or_default().help = Some(help.to_string());
        } else if let Some(rest) = line.strip_prefix("# TYPE ") {
            let (name, _) = rest.split_once(' ').unwrap();
            current = name.to_string();
            families.entry(current.clone()).or_default().type_line = line.to_string();
        } else if !line.is_empty() {
            let (series, value) = line.rsplit_once(' ').unwrap();
            families
                .get_mut(&current)
                .unwrap()
                .samples
                .push((series.to_string(), value.to_string()));
        }
    }
    families.retain(|name, _| {
        !["jvm_", "jmx_", "process_"]
            .iter()
            .any(|p| name.starts_with(p))
    });
    families
}

fn golden(rules_file: &str, name: &str) {
    let yaml = std::fs::read_to_string(fixtures().join(rules_file)).unwrap();
    let rules = Rules::from_yaml(&yaml).unwrap();
    let samples = read_mbeans(&format!("kafka-3.9.1-{name}-mbeans.txt"));
    let expected = read_scrape(
        &std::fs::read_to_string(fixtures().join(format!("kafka-3.9.1-{name}.prom"))).unwrap(),
    );
    let ours = read_scrape(&rules.render(&samples));
    // Every help a family's members could have given it (the exporter's pick varies).
    let mut helps: HashMap<String, HashSet<String>> = HashMap::new();
    for (matched, _) in rules.match_samples(&mut lock(&rules.cache), &samples) {
        let suffix = if matched.metric_type == MetricType::Counter {
            "_total"
        } else {
            ""
        };
        let mut help = String::new();
        write_escaped_help(&mut help, &matched.help);
        helps
            .entry(format!("{}{suffix}", matched.name))
            .or_default()
            .insert(help);
    }

    let mut problems = Vec::new();
    let names = |m: &BTreeMap<String, Family>| m.keys().cloned().collect::<HashSet<_>>();
    for missing in names(&expected).difference(&names(&ours)) {
        problems.push(format!("missing family {missing}"));
    }
    for extra in names(&ours).difference(&names(&expected)) {
        problems.push(format!("extra family {extra}"));
    }
    let (mut compared, mut moving) = (0, 0);
    for (family, want) in &expected {
        let Some(got) = ours.get(family) else {
            continue;
        };
        if got.type_line != want.type_line {
            problems.push(format!(
                "{family}: {:?}, want {:?}",
                got.type_line, want.type_line
            ));
        }
        if let Some(help) = &want.help
            && !helps.get(family).is_some_and(|h| h.contains(help))
        {
            problems.push(format!(
                "{family}: help {help:?} is none of {:?}",
                helps.get(family)
            ));
        }
        let series = |f: &Family| f.samples.iter().map(|s| s.0.clone()).collect::<Vec<_>>();
        if series(got) != series(want) {
            problems.push(format!(
                "{family}: samples\n  {:?}\nwant\n  {:?}",
                series(got),
                series(want)
            ));
            continue;
        }
        for ((series, got), (_, want)) in got.samples.iter().zip(&want.samples) {
            if got == "NaN" && want != "NaN" {
                moving += 1;
            } else if got != want {
                problems.push(format!("{series}: {got}, want {want}"));
            } else {
                compared += 1;
            }
        }
    }
    assert!(
        problems.is_empty(),
        "{} differences with the javaagent ({name}):\n{}",
        problems.len(),
        problems
            .iter()
            .take(40)
            .cloned()
            .collect::<Vec<_>>()
            .join("\n")
    );
    assert!(
        compared > 1000,
        "{compared} values compared, {moving} moving"
    );
    eprintln!(
        "{name}: {} families, {compared} values equal, {moving} moving across the scrape",
        expected.len()
    );
}

#[test]
fn strimzis_rules_render_kafkas_mbeans_as_the_javaagent_does() {
    golden("kafka-metrics.yaml", "strimzi");
}

#[test]
fn confluents_rules_render_kafkas_mbeans_as_the_javaagent_does() {
    golden("confluent-kafka_broker.yml", "confluent");
}

/// DeprecatedRequestsPerSec has four tags: Strimzi's two-pair per-second rule still matches it,
/// its greedy first key taking the first three pairs (the javaagent makes a label name of
/// them); Confluent's rules have one rule for it, whose five-minute rate the dashboard reads.
#[test]
fn deprecated_requests_render_as_each_rule_set_makes_them() {
    let meter = Meter::new();
    meter.mark(2);
    let samples = [yammer(
        "kafka.network",
        "RequestMetrics",
        "DeprecatedRequestsPerSec",
        &[
            ("request", "Metadata"),
            ("version", "1"),
            ("clientSoftwareName", "kcli-it"),
            ("clientSoftwareVersion", "0.1"),
        ],
        Reading::Meter(meter.snapshot()),
    )];
    let strimzi = Rules::strimzi().render(&samples);
    assert!(
        strimzi.contains(
            "\nkafka_network_requestmetrics_deprecatedrequests_total{\
             clientSoftwareVersion=\"0.1\",\
             request_Metadata_version_1_clientSoftwareName=\"kcli-it\"} 2.0\n"
        ),
        "{strimzi}"
    );
    let rules = std::fs::read_to_string(fixtures().join("confluent-kafka_broker.yml")).unwrap();
    let confluent = Rules::from_yaml(&rules).unwrap().render(&samples);
    let labels = "{api_name=\"Metadata\",api_version=\"1\",client_software_name=\"kcli-it\",\
                  client_software_version=\"0.1\"}";
    for line in [
        format!("kafka_network_requestmetrics_deprecatedrequestspersec_count_total{labels} 2.0"),
        format!("kafka_network_requestmetrics_deprecatedrequestspersec_fiveminuterate{labels} "),
    ] {
        assert!(confluent.contains(&line), "{line} not in:\n{confluent}");
    }
}

// ---------------------------------------------------------------------------------------------

/// A broker with 10,000 partitions: per partition the Partition and Log gauges Kafka registers
/// (10 attributes), about 100,000 attributes in all. Reports the first scrape (every regex
/// run) and a repeated one (all from the cache).
#[test]
fn a_scrape_of_ten_thousand_partitions() {
    let mut samples = Vec::new();
    for p in 0..10_000 {
        let topic = format!("topic-{}", p / 100);
        let partition = (p % 100).to_string();
        let tags = [("topic", topic.as_str()), ("partition", partition.as_str())];
        for name in [
            "UnderReplicated",
            "UnderMinIsr",
            "AtMinIsr",
            "InSyncReplicasCount",
            "ReplicasCount",
            "LastStableOffsetLag",
        ] {
            samples.push(yammer(
                "kafka.cluster",
                "Partition",
                name,
                &tags,
                Reading::Gauge(1.0),
            ));
        }
        for name in ["Size", "NumLogSegments", "LogStartOffset", "LogEndOffset"] {
            samples.push(yammer(
                "kafka.log",
                "Log",
                name,
                &tags,
                Reading::Gauge(p as f64),
            ));
        }
    }
    let rules = Rules::strimzi();
    let start = Instant::now();
    let first = rules.render(&samples);
    let cold = start.elapsed();
    let start = Instant::now();
    let again = rules.render(&samples);
    let warm = start.elapsed();
    assert_eq!(first, again);
    assert_eq!(
        first.lines().filter(|l| !l.starts_with('#')).count(),
        100_000
    );
    eprintln!(
        "10,000 partitions, 100,000 samples, {} bytes: first scrape {cold:?}, repeated {warm:?}",
        first.len()
    );
}
