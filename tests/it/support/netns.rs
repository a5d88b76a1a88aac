//! Real network partitions for fault tests: each broker in a network namespace of its own, joined
//! by veth pairs to a bridge in the test's namespace, on a /24 that exists only on that bridge
//! (`10.77.<n>.0/24`, `n` picked per network). The bridge's address is the test's host: the
//! ZooKeeper it starts and the clients it runs are there. A cut is nftables rules in a host's
//! namespace that drop (not refuse) every packet to and from a peer, or only to and from a port
//! of it, both ways, as a failed link or switch does: connections hang until their timeouts.
//! [`TestNetwork::connects`] probes a path, so a test checks that a cut really drops traffic
//! before it relies on it. Slow links are relays that every connection between the hosts goes
//! through from the start ([`TestNetwork::relay_between_hosts`]), delayed on demand
//! ([`TestNetwork::slow_down`]), since this kernel has no `sch_netem`.
//!
//! Everything is removed on drop: the relays, the namespaces (and with them their veths and
//! rules) and the bridge. Needs root, `ip` (iproute2) and `nft` (nftables); tests/run installs them.

use std::net::{Ipv4Addr, SocketAddr};
use std::process::{Command, Output, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use super::delay_relay::DelayRelay;

/// The port a broker in a namespace listens on: each namespace has ports of its own, and a
/// port known before the brokers start lets [`TestNetwork::relay_between_hosts`] route their
/// links before they connect.
pub const NETNS_PORT: u16 = 9092;

/// A bridge and `n` namespaces on it; hosts are numbered from 1.
pub struct TestNetwork {
    tag: String,
    subnet: u8,
    hosts: usize,
    /// `(from, to)` host pairs whose connections to `to`'s [`NETNS_PORT`] go through a relay.
    relays: Vec<((usize, usize), DelayRelay)>,
}

/// What a cut separates a host from: another host, or one port of the test's host (its
/// ZooKeeper; its clients stay connected).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Peer {
    Host(usize),
    /// The bridge's address (the test's namespace), one port of it.
    TestPort(u16),
}

fn run(args: &[&str]) -> Output {
    let out = Command::new(args[0])
        .args(&args[1..])
        .stdin(Stdio::null())
        .output()
        .unwrap_or_else(|e| panic!("{}: {e}", args.join(" ")));
    assert!(
        out.status.success(),
        "{}: {}",
        args.join(" "),
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

impl TestNetwork {
    /// A bridge with `hosts` namespaces on it, each with its address and a route to the bridge,
    /// and an empty nftables table for cuts.
    pub fn create(hosts: usize) -> TestNetwork {
        // Names and subnet differ between processes and between the networks of one process: a
        // namespace goes (and its veths with it) only once the kernel has released it, after
        // `ip netns del` returns.
        static NETWORKS: AtomicU32 = AtomicU32::new(0);
        let n = NETWORKS.fetch_add(1, Ordering::Relaxed);
        let id = (std::process::id() & 0xfff) * 16 + (n & 0xf);
        let network = TestNetwork {
            tag: format!("{id:04x}"),
            subnet: u8::try_from(id % 200).unwrap() + 20,
            hosts,
            relays: Vec::new(),
        };
        network.remove();
        let bridge = network.bridge();
        run(&["ip", "link", "add", &bridge, "type", "bridge"]);
        run(&[
            "ip",
            "addr",
            "add",
            &format!("{}/24", network.test_addr()),
            "dev",
            &bridge,
        ]);
        run(&["ip", "link", "set", &bridge, "up"]);
        for host in 1..=hosts {
            let ns = network.ns(host);
            let outside = format!("kv{}{host}", network.tag);
            run(&["ip", "netns", "add", &ns]);
            run(&[
                "ip", "link", "add", &outside, "type", "veth", "peer", "name", "eth0", "netns", &ns,
            ]);
            run(&["ip", "link", "set", &outside, "master", &bridge, "up"]);
            let in_ns = |args: &[&str]| {
                let mut all = vec!["ip", "netns", "exec", &ns];
                all.extend_from_slice(args);
                run(&all);
            };
            in_ns(&["ip", "link", "set", "lo", "up"]);
            in_ns(&[
                "ip",
                "addr",
                "add",
                &format!("{}/24", network.addr(host)),
                "dev",
                "eth0",
            ]);
            in_ns(&["ip", "link", "set", "eth0", "up"]);
            in_ns(&["nft", "add", "table", "inet", "kcli"]);
            in_ns(&[
                "nft",
                "add chain inet kcli kin { type filter hook input priority 0; }",
            ]);
            in_ns(&[
                "nft",
                "add chain inet kcli kout { type filter hook output priority 0; }",
            ]);
            in_ns(&["nft", "add", "table", "ip", "kclinat"]);
            in_ns(&[
                "nft",
                "add chain ip kclinat kdnat { type nat hook output priority -100; }",
            ]);
        }
        network
    }

    fn bridge(&self) -> String {
        format!("kb{}", self.tag)
    }

    /// Host `host`'s namespace.
    pub fn ns(&self, host: usize) -> String {
        format!("kcli-{}-{host}", self.tag)
    }

    /// The test's address on the bridge: where its ZooKeeper listens and its clients come from.
    pub fn test_addr(&self) -> Ipv4Addr {
        Ipv4Addr::new(10, 77, self.subnet, 1)
    }

    /// Host `host`'s address.
    pub fn addr(&self, host: usize) -> Ipv4Addr {
        Ipv4Addr::new(10, 77, self.subnet, u8::try_from(10 + host).unwrap())
    }

    /// `program` to run inside host `host`'s namespace.
    pub fn command(&self, host: usize, program: &str) -> Command {
        let mut cmd = Command::new("ip");
        cmd.args(["netns", "exec", &self.ns(host), program]);
        cmd
    }

    fn nft(&self, host: usize, rule: &str) {
        run(&["ip", "netns", "exec", &self.ns(host), "nft", rule]);
    }

    /// Drops every packet between `host` and `peer`, both ways, from now on.
    pub fn cut(&self, host: usize, peer: Peer) {
        let (addr, port) = match peer {
            Peer::Host(other) => (self.addr(other), None),
            Peer::TestPort(port) => (self.test_addr(), Some(port)),
        };
        let (to, from) = match port {
            Some(port) => (format!("tcp dport {port}"), format!("tcp sport {port}")),
            None => (String::new(), String::new()),
        };
        self.nft(
            host,
            &format!("add rule inet kcli kout ip daddr {addr} {to} drop"),
        );
        self.nft(
            host,
            &format!("add rule inet kcli kin ip saddr {addr} {from} drop"),
        );
    }

    /// Routes every connection from one host to another's [`NETNS_PORT`] through a relay of
    /// that pair in the test's namespace (`dnat` in the first host's namespace), with no delay
    /// yet: the brokers' links, made before they start so that every connection between them
    /// goes through a relay from the first. Cuts do not apply to relayed connections (their
    /// packets leave for the relay).
    pub fn relay_between_hosts(&mut self) {
        for from in 1..=self.hosts {
            for to in (1..=self.hosts).filter(|to| *to != from) {
                let target = SocketAddr::from((self.addr(to), NETNS_PORT));
                let relay = DelayRelay::start(self.test_addr(), target);
                self.nft(
                    from,
                    &format!(
                        "add rule ip kclinat kdnat ip daddr {} tcp dport {NETNS_PORT} dnat to {}",
                        self.addr(to),
                        relay.addr()
                    ),
                );
                self.relays.push(((from, to), relay));
            }
        }
    }

    /// Delays everything between `host` and the other hosts by `delay` each way, on the
    /// connections that are open and those to come, as `tc netem delay` on its link would
    /// (this kernel has no `sch_netem`). Needs [`TestNetwork::relay_between_hosts`].
    pub fn slow_down(&self, host: usize, delay: Duration) {
        assert!(!self.relays.is_empty(), "no relays: relay_between_hosts");
        for ((from, to), relay) in &self.relays {
            if *from == host || *to == host {
                relay.set_delay(delay);
            }
        }
    }

    /// Removes every cut of `host`, and the delay of its links.
    pub fn heal(&self, host: usize) {
        self.nft(host, "flush chain inet kcli kin");
        self.nft(host, "flush chain inet kcli kout");
        for ((from, to), relay) in &self.relays {
            if *from == host || *to == host {
                relay.set_delay(Duration::ZERO);
            }
        }
    }

    /// Removes every cut.
    pub fn heal_all(&self) {
        for host in 1..=self.hosts {
            self.heal(host);
        }
    }

    /// Whether a TCP connection from `host` to `addr:port` opens within half a second, ages on
    /// a bridge (a listener must be there: a cut shows as a connect that hangs).
    pub fn connects(&self, host: usize, addr: Ipv4Addr, port: u16) -> bool {
        let script = format!("exec 3<>/dev/tcp/{addr}/{port}");
        self.command(host, "timeout")
            .args(["0.5", "bash", "-c", &script])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success())
    }

    fn remove(&self) {
        for host in 1..=self.hosts {
            let _ = Command::new("ip")
                .args(["link", "del", &format!("kv{}{host}", self.tag)])
                .stderr(Stdio::null())
                .status();
            let _ = Command::new("ip")
                .args(["netns", "del", &self.ns(host)])
                .stderr(Stdio::null())
                .status();
        }
        let _ = Command::new("ip")
            .args(["link", "del", &self.bridge()])
            .stderr(Stdio::null())
            .status();
    }
}

impl Drop for TestNetwork {
    fn drop(&mut self) {
        self.remove();
    }
}
