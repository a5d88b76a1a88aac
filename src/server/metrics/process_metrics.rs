//! The process series the Prometheus Java client adds beside a JVM's MBeans, which Kafka
//! dashboards chart next to Kafka's own (`process_cpu_seconds_total`, `process_open_fds`, ...),
//! read from `/proc` for this process, with the client's names, HELP texts and value format.
//!
//! The JVM's own series (`jvm_*`: heap, GC, threads) have no honest equivalent in kcli and are
//! not served.

use std::fmt::Write;
use std::fs;

use crate::storage::log_config_values::java_double_string;

/// One process series: name, HELP text, TYPE.
struct Series {
    name: &'static str,
    help: &'static str,
    kind: &'static str,
}

const CPU: Series = Series {
    name: "process_cpu_seconds_total",
    help: "Total user and system CPU time spent in seconds.",
    kind: "counter",
};
const MAX_FDS: Series = Series {
    name: "process_max_fds",
    help: "Maximum number of open file descriptors.",
    kind: "gauge",
};
const OPEN_FDS: Series = Series {
    name: "process_open_fds",
    help: "Number of open file descriptors.",
    kind: "gauge",
};
const RESIDENT: Series = Series {
    name: "process_resident_memory_bytes",
    help: "Resident memory size in bytes.",
    kind: "gauge",
};
const START: Series = Series {
    name: "process_start_time_seconds",
    help: "Start time of the process since unix epoch in seconds.",
    kind: "gauge",
};
const VIRTUAL: Series = Series {
    name: "process_virtual_memory_bytes",
    help: "Virtual memory size in bytes.",
    kind: "gauge",
};

/// This process's figures, as read from `/proc`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct ProcessStats {
    pub cpu_seconds: f64,
    pub max_fds: f64,
    pub open_fds: f64,
    pub resident_bytes: f64,
    pub start_time_seconds: f64,
    pub virtual_bytes: f64,
}

impl ProcessStats {
    /// Reads this process's figures; `None` where `/proc` cannot be read (then no process
    /// series are served rather than made-up ones).
    pub(crate) fn read() -> Option<Self> {
        let stat = fs::read_to_string("/proc/self/stat").ok()?;
        // Fields after the command name, which is in parentheses and may hold spaces.
        let after = &stat[stat.rfind(')')? + 2..];
        let fields: Vec<&str> = after.split_whitespace().collect();
        // `state` is field 3 of proc(5), so field N is at index N - 3.
        let field = |n: usize| fields.get(n - 3).and_then(|f| f.parse::<f64>().ok());
        let ticks = nix::unistd::sysconf(nix::unistd::SysconfVar::CLK_TCK)
            .ok()
            .flatten()
            .map_or(100.0, |t| t as f64);
        let page = nix::unistd::sysconf(nix::unistd::SysconfVar::PAGE_SIZE)
            .ok()
            .flatten()
            .map_or(4096.0, |p| p as f64);
        let boot_time = fs::read_to_string("/proc/stat")
            .ok()?
            .lines()
            .find_map(|l| l.strip_prefix("btime "))
            .and_then(|v| v.trim().parse::<f64>().ok())?;
        let open_fds = fs::read_dir("/proc/self/fd").ok()?.count() as f64;
        let (soft, _) =
            nix::sys::resource::getrlimit(nix::sys::resource::Resource::RLIMIT_NOFILE).ok()?;
        Some(ProcessStats {
            cpu_seconds: (field(14)? + field(15)?) / ticks,
            max_fds: soft as f64,
            open_fds,
            resident_bytes: field(24)? * page,
            start_time_seconds: boot_time + field(22)? / ticks,
            virtual_bytes: field(23)?,
        })
    }

    /// Appends the series in the Prometheus text format, as the Java client writes them.
    pub(crate) fn render(&self, out: &mut String) {
        for (series, value) in [
            (CPU, self.cpu_seconds),
            (MAX_FDS, self.max_fds),
            (OPEN_FDS, self.open_fds),
            (RESIDENT, self.resident_bytes),
            (START, self.start_time_seconds),
            (VIRTUAL, self.virtual_bytes),
        ] {
            // Writing to a String cannot fail.
            let _ = write!(
                out,
                "# HELP {name} {help}\n# TYPE {name} {kind}\n{name} {value}\n",
                name = series.name,
                help = series.help,
                kind = series.kind,
                value = java_double_string(value),
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_this_process_and_renders_the_java_clients_series() {
        let stats = ProcessStats::read().expect("/proc is readable on Linux");
        assert!(stats.open_fds >= 3.0, "{stats:?}");
        assert!(stats.max_fds >= stats.open_fds);
        assert!(stats.resident_bytes > 1e6 && stats.virtual_bytes >= stats.resident_bytes);
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_secs_f64();
        assert!(
            stats.start_time_seconds <= now + 1.0
                && stats.start_time_seconds > now - 86_400.0 * 365.0
        );
        let mut text = String::new();
        stats.render(&mut text);
        assert!(text.starts_with(
            "# HELP process_cpu_seconds_total Total user and system CPU time spent in seconds.\n\
             # TYPE process_cpu_seconds_total counter\nprocess_cpu_seconds_total "
        ));
        assert_eq!(text.lines().count(), 18);
        let sample = ProcessStats {
            cpu_seconds: 2.68,
            max_fds: 20000.0,
            open_fds: 202.0,
            resident_bytes: 363_556_864.0,
            start_time_seconds: 1_796_463_895.466,
            virtual_bytes: 4_100_046_848.0,
        };
        let mut text = String::new();
        sample.render(&mut text);
        // The values as Kafka's exporter prints them (tests/fixtures/metrics).
        for line in [
            "process_cpu_seconds_total 2.68",
            "process_max_fds 20000.0",
            "process_resident_memory_bytes 3.63556864E8",
            "process_start_time_seconds 1.796463895466E9",
        ] {
            assert!(text.lines().any(|l| l == line), "{line} in\n{text}");
        }
    }
}
