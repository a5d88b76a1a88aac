//! A small min-cost flow solver for `minimize_movement`: integral capacities, non-negative
//! costs, primal-dual (Dijkstra over reduced costs for the potentials, then a Dinic max flow over
//! the edges of reduced cost zero), so one phase moves every unit whose cheapest path costs the
//! same. The costs `minimize_movement` uses take few distinct path lengths, so the phases are
//! few even when thousands of units flow.
//!
//! Invariant: between phases every residual edge with capacity left has a non-negative reduced
//! cost `cost + potential[from] - potential[to]`; an initial flow may be placed only on edges of
//! cost 0, which keeps it true (their reverse edges cost 0 as well).

use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};

#[derive(Debug, Clone)]
struct Edge {
    to: usize,
    cap: i64,
    cost: i64,
}

/// The network. Edge `e` and its reverse are `e` and `e ^ 1`.
#[derive(Debug, Clone, Default)]
pub(super) struct MinCostFlow {
    edges: Vec<Edge>,
    adjacency: Vec<Vec<usize>>,
    potential: Vec<i64>,
}

const UNREACHED: i64 = i64::MAX;

impl MinCostFlow {
    pub(super) fn new(nodes: usize) -> Self {
        MinCostFlow {
            edges: Vec::new(),
            adjacency: vec![Vec::new(); nodes],
            potential: vec![0; nodes],
        }
    }

    /// Adds an edge (`cost >= 0`) and returns its id.
    pub(super) fn add_edge(&mut self, from: usize, to: usize, cap: i64, cost: i64) -> usize {
        let id = self.edges.len();
        self.edges.push(Edge { to, cap, cost });
        self.edges.push(Edge {
            to: from,
            cap: 0,
            cost: -cost,
        });
        self.adjacency[from].push(id);
        self.adjacency[to].push(id + 1);
        id
    }

    /// The flow on edge `id`.
    pub(super) fn flow(&self, id: usize) -> i64 {
        self.edges[id ^ 1].cap
    }

    /// Whether edge `id` has capacity left.
    pub(super) fn residual(&self, id: usize) -> i64 {
        self.edges[id].cap
    }

    /// Pushes one unit along `path` (edge ids) before solving; every edge must cost 0 and have
    /// capacity left, else nothing is pushed and `false` returned.
    pub(super) fn push_initial(&mut self, path: &[usize]) -> bool {
        if path
            .iter()
            .any(|e| self.edges[*e].cap < 1 || self.edges[*e].cost != 0)
        {
            return false;
        }
        for e in path {
            self.edges[*e].cap -= 1;
            self.edges[*e ^ 1].cap += 1;
        }
        true
    }

    /// Sends up to `want` more units from `s` to `t` at the least cost; returns the units sent.
    pub(super) fn run(&mut self, s: usize, t: usize, want: i64) -> i64 {
        let mut sent = 0;
        while sent < want {
            if !self.update_potentials(s, t) {
                break;
            }
            let pushed = self.admissible_max_flow(s, t, want - sent);
            if pushed == 0 {
                break;
            }
            sent += pushed;
        }
        sent
    }

    fn reduced(&self, from: usize, e: usize) -> i64 {
        let edge = &self.edges[e];
        edge.cost + self.potential[from] - self.potential[edge.to]
    }

    /// Dijkstra over reduced costs; folds the distances into the potentials. `false` when `t`
    /// cannot be reached.
    fn update_potentials(&mut self, s: usize, t: usize) -> bool {
        let n = self.adjacency.len();
        let mut dist = vec![UNREACHED; n];
        let mut heap = BinaryHeap::new();
        dist[s] = 0;
        heap.push(Reverse((0i64, s)));
        while let Some(Reverse((d, u))) = heap.pop() {
            if d > dist[u] {
                continue;
            }
            for &e in &self.adjacency[u] {
                if self.edges[e].cap <= 0 {
                    continue;
                }
                let v = self.edges[e].to;
                let nd = d + self.reduced(u, e);
                if nd < dist[v] {
                    dist[v] = nd;
                    heap.push(Reverse((nd, v)));
                }
            }
        }
        if dist[t] == UNREACHED {
            return false;
        }
        let farthest = dist
            .iter()
            .filter(|d| **d != UNREACHED)
            .max()
            .copied()
            .unwrap_or(0);
        for (h, d) in self.potential.iter_mut().zip(&dist) {
            *h += if *d == UNREACHED { farthest } else { *d };
        }
        true
    }

    fn admissible(&self, from: usize, e: usize) -> bool {
        self.edges[e].cap > 0 && self.reduced(from, e) == 0
    }

    /// Dinic over the edges of reduced cost 0.
    fn admissible_max_flow(&mut self, s: usize, t: usize, limit: i64) -> i64 {
        let n = self.adjacency.len();
        let mut total = 0;
        while total < limit {
            let mut level = vec![usize::MAX; n];
            level[s] = 0;
            let mut queue = VecDeque::from([s]);
            while let Some(u) = queue.pop_front() {
                for &e in &self.adjacency[u] {
                    let v = self.edges[e].to;
                    if level[v] == usize::MAX && self.admissible(u, e) {
                        level[v] = level[u] + 1;
                        queue.push_back(v);
                    }
                }
            }
            if level[t] == usize::MAX {
                break;
            }
            let mut next = vec![0usize; n];
            loop {
                let pushed = self.augment(s, t, limit - total, &level, &mut next);
                if pushed == 0 {
                    break;
                }
                total += pushed;
                if total >= limit {
                    break;
                }
            }
        }
        total
    }

    /// One augmenting path along increasing levels (iteratively, so deep networks cannot
    /// overflow the stack); the units pushed.
    fn augment(
        &mut self,
        s: usize,
        t: usize,
        limit: i64,
        level: &[usize],
        next: &mut [usize],
    ) -> i64 {
        let mut path: Vec<usize> = Vec::new();
        let mut u = s;
        loop {
            if u == t {
                let bottleneck = path
                    .iter()
                    .map(|e| self.edges[*e].cap)
                    .min()
                    .unwrap_or(0)
                    .min(limit);
                for e in &path {
                    self.edges[*e].cap -= bottleneck;
                    self.edges[*e ^ 1].cap += bottleneck;
                }
                return bottleneck;
            }
            let mut advanced = false;
            while next[u] < self.adjacency[u].len() {
                let e = self.adjacency[u][next[u]];
                let v = self.edges[e].to;
                if level[v] == level[u] + 1 && self.admissible(u, e) {
                    path.push(e);
                    u = v;
                    advanced = true;
                    break;
                }
                next[u] += 1;
            }
            if !advanced {
                // Dead end: retreat and skip the edge that led here.
                match path.pop() {
                    Some(e) => {
                        u = self.edges[e ^ 1].to;
                        next[u] += 1;
                    }
                    None => return 0,
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cheapest_paths_first_and_capacities_hold() {
        // s=0, t=3; two routes: 0-1-3 cost 1+1, 0-2-3 cost 5+0, each cap 1; a third unit has
        // no route.
        let mut g = MinCostFlow::new(4);
        let a = g.add_edge(0, 1, 1, 1);
        let b = g.add_edge(1, 3, 1, 1);
        let c = g.add_edge(0, 2, 1, 5);
        let d = g.add_edge(2, 3, 1, 0);
        assert_eq!(g.run(0, 3, 1), 1);
        assert_eq!((g.flow(a), g.flow(b), g.flow(c), g.flow(d)), (1, 1, 0, 0));
        assert_eq!(g.run(0, 3, 5), 1);
        assert_eq!(g.flow(c), 1);
    }

    #[test]
    fn reroutes_through_reverse_edges() {
        // The classic case where the greedy first path must be undone: s=0, t=5.
        let mut g = MinCostFlow::new(6);
        g.add_edge(0, 1, 1, 0);
        g.add_edge(0, 2, 1, 0);
        let x = g.add_edge(1, 3, 1, 0);
        g.add_edge(1, 4, 1, 3);
        g.add_edge(2, 3, 1, 1);
        g.add_edge(3, 5, 1, 0);
        g.add_edge(4, 5, 1, 0);
        assert_eq!(g.run(0, 5, 2), 2);
        // Total cost: either 1-3 (0) + 2-? (2 has only 3) → 2 must take 3, 1 takes 4: 3 + 1.
        assert_eq!(g.flow(x), 0);
    }

    #[test]
    fn an_initial_flow_on_free_edges_is_kept_optimal() {
        let mut g = MinCostFlow::new(3);
        let free = g.add_edge(0, 1, 2, 0);
        let out = g.add_edge(1, 2, 2, 0);
        let dear = g.add_edge(0, 2, 5, 7);
        assert!(g.push_initial(&[free, out]));
        assert!(!g.push_initial(&[dear]));
        // Two more units: the free route's last one, then one at cost 7.
        assert_eq!(g.run(0, 2, 2), 2);
        assert_eq!((g.flow(free), g.flow(out), g.flow(dear)), (2, 2, 1));
        assert_eq!(g.residual(free), 0);
    }
}
