//! The client quotas' metrics as Kafka's JMX reporter names them: per sensor,
//! `kafka.server:type=Produce|Fetch,user=<user>,client-id=<client-id>` with `byte-rate` and
//! `throttle-time`, and `kafka.server:type=Request,...` with `request-time` and
//! `throttle-time`, and `kafka.server:type=ControllerMutation,...` with `mutation-rate`,
//! `tokens` and `throttle-time`. Empty tags are left out of the name, as Kafka's `JmxReporter`
//! leaves them out (a user's shared quota is `kafka.server:type=Produce,user=alice`).

use crate::metrics::{MBeanName, MetricSample, MetricsSource, Reading};

use super::QuotaManagers;
use super::client_quota_manager::{ClientQuotaManager, QuotaType};
use super::request_quotas::now_ms;

impl MetricsSource for QuotaManagers {
    fn collect(&self, out: &mut Vec<MetricSample>) {
        let now = now_ms();
        for manager in [
            &self.produce,
            &self.fetch,
            &self.request,
            self.controller_mutation.manager(),
        ] {
            collect_manager(manager, now, out);
        }
    }
}

fn collect_manager(manager: &ClientQuotaManager, now: i64, out: &mut Vec<MetricSample>) {
    let quota_type = manager.quota_type();
    let rate_name = match quota_type {
        QuotaType::Produce | QuotaType::Fetch => "byte-rate",
        QuotaType::Request => "request-time",
        QuotaType::ControllerMutation => "mutation-rate",
    };
    for reading in manager.readings(now) {
        let tags: Vec<(&'static str, &str)> = [
            ("user", reading.tags.user.as_str()),
            ("client-id", reading.tags.client_id.as_str()),
        ]
        .into_iter()
        .filter(|(_, v)| !v.is_empty())
        .collect();
        out.push(MetricSample {
            mbean: MBeanName::kafka_group("kafka.server", quota_type.name(), &tags),
            reading: Reading::KafkaMetrics(
                [
                    Some((rate_name, reading.rate)),
                    reading.tokens.map(|tokens| ("tokens", tokens)),
                    Some(("throttle-time", reading.throttle_time_avg_ms)),
                ]
                .into_iter()
                .flatten()
                .collect(),
            ),
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metrics::sampled_stat::QuotaWindow;
    use crate::server::quota::client_quota_manager::{
        ClientIdEntity, KafkaQuotaEntity, UserEntity,
    };

    #[test]
    fn each_sensor_is_an_mbean_named_by_its_non_empty_tags() {
        let quotas = QuotaManagers::new(QuotaWindow::DEFAULT, QuotaWindow::DEFAULT);
        quotas.produce.update_quota(
            KafkaQuotaEntity {
                user: Some(UserEntity::Named("alice".into())),
                client_id: None,
            },
            Some(1000.0),
        );
        quotas.request.update_quota(
            KafkaQuotaEntity {
                user: None,
                client_id: Some(ClientIdEntity::Default),
            },
            Some(50.0),
        );
        let now = now_ms();
        quotas
            .produce
            .maybe_record_and_get_throttle_time_ms("alice", "c", 20_000.0, now);
        quotas
            .request
            .maybe_record_and_get_throttle_time_ms("bob", "d", 1.0, now);
        let mut out = Vec::new();
        quotas.collect(&mut out);
        let names: Vec<String> = out.iter().map(|s| s.mbean.to_string()).collect();
        assert_eq!(
            names,
            [
                "kafka.server:type=Produce,user=alice",
                "kafka.server:type=Request,client-id=d",
            ]
        );
        let Reading::KafkaMetrics(produce) = &out[0].reading else {
            panic!("{:?}", out[0].reading);
        };
        assert_eq!(produce[0].0, "byte-rate");
        assert!(produce[0].1 > 1000.0, "{produce:?}");
        let Reading::KafkaMetrics(request) = &out[1].reading else {
            panic!("{:?}", out[1].reading);
        };
        assert_eq!(request[0].0, "request-time");
    }
}
