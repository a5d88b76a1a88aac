//! The two min-cost flows behind `minimize_movement`, and the ordering of their result.
//!
//! [`replica_sets`]: source → partition (`rf` units, or `rf - 1` around a fixed leader) →
//! partition's rack (one unit free; more, when the racks are fewer than the replicas, at a
//! penalty each) → broker (one unit: distinct brokers; cost 0 when the partition already has a
//! replica there, 1 when the replica would move) → sink (the broker's lower replica bound free,
//! up to its upper bound at a penalty). A penalty outweighs all moves together, and Kafka's
//! assignment pays the least penalty possible (every lower bound met), so the optimum meets the
//! bounds and, among the assignments that do, moves the fewest replicas.
//!
//! [`leaders`]: source → partition (one unit) → candidate broker (cost 2 if the broker would be
//! a new replica, plus 1 if it is not the partition's current preferred leader) → sink (the
//! leader bounds, as above).
//!
//! Neither flow sees the other's constraint, so sets chosen first may admit no balanced leaders
//! and leaders chosen first may admit no sets; `minimize_movement` tries both orders.

use std::collections::{BTreeMap, BTreeSet};

use crate::cluster::BrokerId;

use super::min_cost_flow::MinCostFlow;
use super::minimize_movement::Constraints;
use super::replica_assignment::Assignment;

const SOURCE: usize = 0;
const SINK: usize = 1;
const FIRST_NODE: usize = 2;

fn to_i64(n: usize) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}

fn had(current: &Assignment, p: i32) -> &[BrokerId] {
    current.get(&p).map(Vec::as_slice).unwrap_or(&[])
}

/// Adds a broker's sink edges for a bound `lo..=hi`; returns the free (lower bound) edge.
fn bounded_sink(g: &mut MinCostFlow, node: usize, lo: usize, hi: usize, penalty: i64) -> usize {
    let free = g.add_edge(node, SINK, to_i64(lo), 0);
    if hi > lo {
        g.add_edge(node, SINK, to_i64(hi - lo), penalty);
    }
    free
}

/// Each partition's replica set (leader included, unordered) with the fewest moves meeting
/// constraints 1-3, around `leaders` when given (each partition's leader fixed and counted).
pub(super) fn replica_sets(
    current: &Assignment,
    c: &Constraints,
    leaders: Option<&BTreeMap<i32, BrokerId>>,
) -> Option<BTreeMap<i32, Vec<BrokerId>>> {
    let rf = c.replication_factor;
    let parts = &c.partitions;
    let targets: Vec<BrokerId> = c.brokers.iter().map(|b| b.id).collect();
    let racks: Vec<&String> = c
        .rack_of
        .values()
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    let rack_index = |b: BrokerId| {
        c.rack_of
            .get(&b)
            .and_then(|r| racks.iter().position(|x| *x == r))
    };
    let rack_aware = !racks.is_empty();
    let every_rack = rack_aware && rf >= racks.len();
    let leader_of = |p: i32| leaders.and_then(|l| l.get(&p)).copied();
    let per_partition = rf - usize::from(leaders.is_some());
    let units = to_i64(parts.len() * per_partition);
    let penalty = units + 1;
    let first_rack = FIRST_NODE + parts.len();
    let first_broker = first_rack
        + if rack_aware {
            parts.len() * racks.len()
        } else {
            0
        };
    let mut g = MinCostFlow::new(first_broker + targets.len());

    let (rmin, rmax) = c.replicas_per_broker;
    let mut led = vec![0usize; targets.len()];
    for p in parts {
        if let Some(l) = leader_of(*p) {
            led[targets.iter().position(|t| *t == l)?] += 1;
        }
    }
    let mut broker_free = Vec::with_capacity(targets.len());
    for (i, n) in led.iter().enumerate() {
        if *n > rmax {
            return None;
        }
        let lo = rmin.saturating_sub(*n);
        broker_free.push(bounded_sink(
            &mut g,
            first_broker + i,
            lo,
            rmax - n,
            penalty,
        ));
    }
    let mut rack_size = vec![0usize; racks.len()];
    for b in &targets {
        if let Some(r) = rack_index(*b) {
            rack_size[r] += 1;
        }
    }

    let mut source_edges = Vec::with_capacity(parts.len());
    let mut rack_free: Vec<Vec<Option<usize>>> = Vec::with_capacity(parts.len());
    let mut broker_edges: Vec<Vec<Option<usize>>> = Vec::with_capacity(parts.len());
    for (pi, p) in parts.iter().enumerate() {
        let pnode = FIRST_NODE + pi;
        let leader = leader_of(*p);
        let leader_rack = leader.and_then(rack_index);
        source_edges.push(g.add_edge(SOURCE, pnode, to_i64(per_partition), 0));
        let mut free = Vec::new();
        if rack_aware {
            for (ri, size) in rack_size.iter().enumerate() {
                let rnode = first_rack + pi * racks.len() + ri;
                // The leader's rack already has its replica: more there only as extras.
                let taken = usize::from(leader_rack == Some(ri));
                if taken == 0 {
                    free.push(Some(g.add_edge(pnode, rnode, 1, 0)));
                } else {
                    free.push(None);
                }
                if rf > racks.len() && *size > 1 {
                    g.add_edge(pnode, rnode, to_i64(size - 1), penalty);
                }
            }
        }
        let mut edges = Vec::with_capacity(targets.len());
        for (bi, b) in targets.iter().enumerate() {
            if leader == Some(*b) {
                edges.push(None);
                continue;
            }
            let from = match rack_index(*b) {
                Some(ri) if rack_aware => first_rack + pi * racks.len() + ri,
                _ => pnode,
            };
            let cost = i64::from(!had(current, *p).contains(b));
            edges.push(Some(g.add_edge(from, first_broker + bi, 1, cost)));
        }
        rack_free.push(free);
        broker_edges.push(edges);
    }

    // Start from the replicas that can stay at no cost; the solver moves only the rest.
    let mut placed = 0i64;
    for (pi, p) in parts.iter().enumerate() {
        for b in had(current, *p) {
            let Some(bi) = targets.iter().position(|t| t == b) else {
                continue;
            };
            let Some(edge) = broker_edges[pi][bi] else {
                continue;
            };
            let mut path = vec![source_edges[pi]];
            if rack_aware {
                match rack_free[pi][rack_index(*b)?] {
                    Some(e) => path.push(e),
                    None => continue,
                }
            }
            path.push(edge);
            path.push(broker_free[bi]);
            if g.push_initial(&path) {
                placed += 1;
            }
        }
    }
    if placed + g.run(SOURCE, SINK, units - placed) != units {
        return None;
    }
    // The lower bounds hold when their free edges are full.
    if broker_free.iter().any(|e| g.residual(*e) > 0) {
        return None;
    }
    if every_rack
        && rack_free
            .iter()
            .flatten()
            .flatten()
            .any(|e| g.residual(*e) > 0)
    {
        return None;
    }
    let mut sets = BTreeMap::new();
    for (pi, p) in parts.iter().enumerate() {
        let mut chosen: Vec<BrokerId> = leader_of(*p).into_iter().collect();
        for (edge, b) in broker_edges[pi].iter().zip(&targets) {
            if edge.is_some_and(|e| g.flow(e) > 0) {
                chosen.push(*b);
            }
        }
        sets.insert(*p, chosen);
    }
    Some(sets)
}

/// A leader for each partition out of its `candidates`, within the leader bounds (constraint
/// 4), preferring brokers that already hold the partition and then its current preferred
/// leader.
pub(super) fn leaders(
    current: &Assignment,
    c: &Constraints,
    candidates: &BTreeMap<i32, Vec<BrokerId>>,
) -> Option<BTreeMap<i32, BrokerId>> {
    let targets: Vec<BrokerId> = c.brokers.iter().map(|b| b.id).collect();
    let parts: Vec<i32> = candidates.keys().copied().collect();
    let units = to_i64(parts.len());
    let penalty = 3 * units + 1;
    let first_broker = FIRST_NODE + parts.len();
    let mut g = MinCostFlow::new(first_broker + targets.len());
    let (lmin, lmax) = c.leaders_per_broker;
    let broker_free: Vec<usize> = (0..targets.len())
        .map(|i| bounded_sink(&mut g, first_broker + i, lmin, lmax, penalty))
        .collect();
    let mut options: Vec<Vec<(BrokerId, usize)>> = Vec::with_capacity(parts.len());
    for (pi, p) in parts.iter().enumerate() {
        let source = g.add_edge(SOURCE, FIRST_NODE + pi, 1, 0);
        let held = had(current, *p);
        let preferred = held.first().copied();
        let mut list = Vec::new();
        for b in &candidates[p] {
            let bi = targets.iter().position(|t| t == b)?;
            let cost = 2 * i64::from(!held.contains(b)) + i64::from(preferred != Some(*b));
            let e = g.add_edge(FIRST_NODE + pi, first_broker + bi, 1, cost);
            if cost == 0 {
                g.push_initial(&[source, e, broker_free[bi]]);
            }
            list.push((*b, e));
        }
        options.push(list);
    }
    let placed: i64 = options.iter().flatten().map(|(_, e)| g.flow(*e)).sum();
    if placed + g.run(SOURCE, SINK, units - placed) != units
        || broker_free.iter().any(|e| g.residual(*e) > 0)
    {
        return None;
    }
    parts
        .iter()
        .zip(&options)
        .map(|(p, list)| {
            let (b, _) = list.iter().find(|(_, e)| g.flow(*e) > 0)?;
            Some((*p, *b))
        })
        .collect()
}

/// Each set as a replica list: its leader, then the replicas that stay in their current order,
/// then the new ones by id.
pub(super) fn ordered(
    current: &Assignment,
    sets: &BTreeMap<i32, Vec<BrokerId>>,
    leaders: &BTreeMap<i32, BrokerId>,
) -> Assignment {
    let mut out = Assignment::new();
    for (p, set) in sets {
        let mut list: Vec<BrokerId> = leaders.get(p).copied().into_iter().collect();
        for b in had(current, *p) {
            if set.contains(b) && !list.contains(b) {
                list.push(*b);
            }
        }
        let mut fresh: Vec<BrokerId> = set.iter().filter(|b| !list.contains(b)).copied().collect();
        fresh.sort_unstable();
        list.extend(fresh);
        out.insert(*p, list);
    }
    out
}
