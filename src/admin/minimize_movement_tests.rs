//! Tests of `minimize_movement`: worked cases (adding and removing a broker, racks), optimality
//! against exhaustive search on small inputs, and proptest invariants (the constraints hold, no
//! more moves than Kafka's assignment with the same draws, nothing moved when nothing needs to).

use proptest::prelude::*;

use super::*;
use crate::admin::random::JavaRandom;

fn unracked(ids: &[BrokerId]) -> Vec<BrokerMetadata> {
    ids.iter()
        .map(|id| BrokerMetadata::new(*id, None))
        .collect()
}

fn racked(pairs: &[(BrokerId, &str)]) -> Vec<BrokerMetadata> {
    pairs
        .iter()
        .map(|(id, r)| BrokerMetadata::new(*id, Some(r)))
        .collect()
}

fn kafka(brokers: &[BrokerMetadata], n: i32, rf: i32, start: usize) -> Assignment {
    assign_replicas_to_brokers(brokers, n, rf, AssignmentStart::fixed(start), 0).unwrap()
}

#[test]
fn an_assignment_that_meets_the_constraints_stays() {
    let brokers = unracked(&[0, 1, 2, 3, 4]);
    let current = kafka(&brokers, 10, 3, 0);
    // Other draws give Kafka a different assignment, balanced the same way.
    let p = minimize_movement(&current, &brokers, 3, AssignmentStart::fixed(2)).unwrap();
    assert_eq!(p.source, ProposalSource::Current);
    assert_eq!(p.replicas_moved, 0);
    assert_eq!(p.assignment, current);
    assert!(p.kafka_replicas_moved > 0);
}

#[test]
fn adding_a_broker_moves_only_what_it_must_take() {
    // 8 partitions, rf 2 on brokers 0-2; broker 3 joins: Kafka's balance puts 4 replicas and
    // 2 leaders on each broker, so broker 3 must take 4 replicas and nothing else need move.
    let old = unracked(&[0, 1, 2]);
    let current = kafka(&old, 8, 2, 0);
    let brokers = unracked(&[0, 1, 2, 3]);
    for start in 0..4 {
        let p = minimize_movement(&current, &brokers, 2, AssignmentStart::fixed(start)).unwrap();
        assert_eq!(p.source, ProposalSource::Minimized);
        assert_eq!(p.replicas_moved, 4, "start {start}");
        assert!(p.kafka_replicas_moved > 4);
        assert_eq!(p.constraints.check(&p.assignment), Ok(()));
    }
}

#[test]
fn removing_a_broker_moves_only_its_replicas() {
    let old = unracked(&[0, 1, 2, 3]);
    let current = kafka(&old, 12, 3, 1);
    let on_3 = current.values().filter(|r| r.contains(&3)).count();
    let brokers = unracked(&[0, 1, 2]);
    let p = minimize_movement(&current, &brokers, 3, AssignmentStart::fixed(0)).unwrap();
    assert_eq!(p.replicas_moved, on_3);
    assert!(p.assignment.values().all(|r| !r.contains(&3)));
}

#[test]
fn racks_are_respected_when_replicas_must_move() {
    // Everything on rack a's brokers: the rack rule forces one replica of each partition to b.
    let brokers = racked(&[(0, "a"), (1, "a"), (2, "b"), (3, "b")]);
    let current: Assignment = (0..4).map(|p| (p, vec![0, 1])).collect();
    let p = minimize_movement(&current, &brokers, 2, AssignmentStart::fixed(0)).unwrap();
    assert_eq!(p.constraints.check(&p.assignment), Ok(()));
    assert_eq!(p.replicas_moved, 4, "{:?}", p.assignment);
    assert!(matches!(
        p.current_violation,
        Some(Violation::RackRule { partition: 0, .. })
    ));
}

#[test]
fn violations_name_what_is_wrong() {
    let brokers = unracked(&[0, 1, 2]);
    let k = kafka(&brokers, 3, 2, 0);
    let c = Constraints::new(&brokers, &k, 2);
    let with = |p: i32, r: Vec<BrokerId>| {
        let mut a = k.clone();
        a.insert(p, r);
        a
    };
    assert_eq!(c.check(&k), Ok(()));
    assert_eq!(
        c.check(&with(1, vec![1])).unwrap_err().to_string(),
        "partition 1 has 1 replicas, not 2"
    );
    assert_eq!(
        c.check(&with(1, vec![1, 1])).unwrap_err().to_string(),
        "partition 1 has broker 1 twice"
    );
    assert_eq!(
        c.check(&with(1, vec![1, 7])).unwrap_err().to_string(),
        "partition 1 has a replica on broker 7, which is not a target broker"
    );
    assert_eq!(
        c.check(&with(3, vec![0, 1])).unwrap_err().to_string(),
        "partition 3 is not one of the topic's"
    );
    // Kafka's 3 partitions x 2 replicas over 3 brokers: exactly 2 replicas and 1 leader each.
    assert_eq!(
        c.check(&with(1, vec![0, 2])).unwrap_err().to_string(),
        "broker 0 has 3 replicas, outside Kafka's 2..=2"
    );
    let mut a = k.clone();
    a.insert(0, vec![1, 0]);
    a.insert(1, vec![1, 2]);
    a.insert(2, vec![2, 0]);
    assert_eq!(
        c.check(&a).unwrap_err().to_string(),
        "broker 0 leads 0 partitions, outside Kafka's 1..=1"
    );
    let mut missing = k.clone();
    missing.remove(&2);
    assert_eq!(
        c.check(&missing).unwrap_err().to_string(),
        "partition 2 is missing"
    );
}

/// Every ordered list of `rf` distinct brokers out of `ids`.
fn lists(ids: &[BrokerId], rf: usize) -> Vec<Vec<BrokerId>> {
    if rf == 0 {
        return vec![Vec::new()];
    }
    let mut out = Vec::new();
    for (i, b) in ids.iter().enumerate() {
        let rest: Vec<BrokerId> = ids
            .iter()
            .enumerate()
            .filter(|(j, _)| *j != i)
            .map(|(_, x)| *x)
            .collect();
        for mut tail in lists(&rest, rf - 1) {
            tail.insert(0, *b);
            out.push(tail);
        }
    }
    out
}

/// The fewest moves of any assignment meeting `c`, by trying them all.
fn fewest_moves(current: &Assignment, c: &Constraints) -> usize {
    let ids: Vec<BrokerId> = c.brokers.iter().map(|b| b.id).collect();
    let options = lists(&ids, c.replication_factor);
    let mut best = usize::MAX;
    let mut pick = vec![0usize; c.partitions.len()];
    loop {
        let a: Assignment = c
            .partitions
            .iter()
            .zip(&pick)
            .map(|(p, i)| (*p, options[*i].clone()))
            .collect();
        if c.check(&a).is_ok() {
            best = best.min(replicas_moved(current, &a));
        }
        // Next combination, odometer style.
        let mut i = 0;
        loop {
            if i == pick.len() {
                return best;
            }
            pick[i] += 1;
            if pick[i] < options.len() {
                break;
            }
            pick[i] = 0;
            i += 1;
        }
    }
}

#[test]
fn as_few_moves_as_exhaustive_search_finds() {
    let cases: Vec<(Vec<BrokerMetadata>, Assignment, usize)> = vec![
        (
            unracked(&[0, 1, 2, 3]),
            [(0, vec![0, 1]), (1, vec![0, 1]), (2, vec![0, 2])]
                .into_iter()
                .collect(),
            2,
        ),
        (
            unracked(&[1, 2, 3]),
            [(0, vec![5, 1, 2]), (1, vec![1, 2, 5]), (2, vec![2, 2, 2])]
                .into_iter()
                .collect(),
            3,
        ),
        (
            racked(&[(0, "a"), (1, "a"), (2, "b"), (3, "c")]),
            [(0, vec![0, 1]), (1, vec![1, 0]), (2, vec![2, 3])]
                .into_iter()
                .collect(),
            2,
        ),
        (
            racked(&[(0, "a"), (1, "a"), (2, "b"), (3, "b")]),
            [(0, vec![0, 1, 2]), (1, vec![0, 1, 3]), (2, vec![2, 3, 0])]
                .into_iter()
                .collect(),
            3,
        ),
        (
            racked(&[(0, "a"), (1, "b"), (2, "c"), (3, "c")]),
            [
                (0, vec![2, 3]),
                (1, vec![3, 2]),
                (2, vec![0, 1]),
                (3, vec![3, 0]),
            ]
            .into_iter()
            .collect(),
            2,
        ),
    ];
    for (brokers, current, rf) in cases {
        for start in 0..brokers.len() {
            let p =
                minimize_movement(&current, &brokers, rf, AssignmentStart::fixed(start)).unwrap();
            assert_eq!(p.constraints.check(&p.assignment), Ok(()));
            let best = fewest_moves(&current, &p.constraints);
            assert_eq!(
                p.replicas_moved, best,
                "{brokers:?} {current:?} start {start}: {:?}",
                p.assignment
            );
        }
    }
}

/// Brokers 0..n, racked round-robin over `racks` racks (0: none), current assignments drawn
/// over 0..n+2 (so some replicas sit on brokers being left) with `rf` distinct brokers.
fn scenario() -> impl Strategy<Value = (Vec<BrokerMetadata>, Assignment, usize, AssignmentStart)> {
    (2usize..8, 0usize..4, 1usize..20).prop_flat_map(|(n, racks, partitions)| {
        let brokers: Vec<BrokerMetadata> = (0..n)
            .map(|i| {
                let id = BrokerId::try_from(i).unwrap_or(0);
                let rack = (racks > 0).then(|| format!("r{}", i % racks));
                BrokerMetadata { id, rack }
            })
            .collect();
        let rf = 1..=n.min(4);
        (Just(brokers), rf, Just(partitions), 0..n, 0..n).prop_flat_map(
            move |(brokers, rf, partitions, s, shift)| {
                let pool: Vec<BrokerId> = (0..n + 2)
                    .map(|i| BrokerId::try_from(i).unwrap_or(0))
                    .collect();
                let list = proptest::sample::subsequence(pool, rf).prop_shuffle();
                let current = proptest::collection::vec(list, partitions).prop_map(|lists| {
                    lists
                        .into_iter()
                        .enumerate()
                        .map(|(p, r)| (i32::try_from(p).unwrap_or(0), r))
                        .collect::<Assignment>()
                });
                let start = AssignmentStart {
                    start_index: s,
                    replica_shift: shift,
                };
                (Just(brokers), current, Just(rf), Just(start))
            },
        )
    })
}

proptest! {
    #[test]
    fn proposals_meet_the_constraints_and_never_move_more_than_kafka(
        (brokers, current, rf, start) in scenario()
    ) {
        let p = minimize_movement(&current, &brokers, rf, start).unwrap();
        prop_assert_eq!(p.constraints.check(&p.assignment), Ok(()));
        prop_assert_eq!(p.constraints.check(&p.kafka), Ok(()));
        prop_assert!(p.replicas_moved <= p.kafka_replicas_moved);
        prop_assert_eq!(p.replicas_moved, replicas_moved(&current, &p.assignment));
        // What meets the constraints moves nothing: the proposal itself, and Kafka's.
        let again = minimize_movement(&p.assignment, &brokers, rf, start).unwrap();
        prop_assert_eq!(again.source, ProposalSource::Current);
        prop_assert_eq!(again.replicas_moved, 0);
        let on_kafka = minimize_movement(&p.kafka, &brokers, rf, start).unwrap();
        prop_assert_eq!(on_kafka.replicas_moved, 0);
        prop_assert_eq!(on_kafka.assignment, p.kafka);
    }
}

/// A seeded random case: up to `max_brokers` brokers (racked round-robin over 0-3 racks, so
/// racks are often uneven), up to `max_partitions` partitions currently on brokers drawn from the
/// targets and two more, and random draws.
fn seeded_case(
    rng: &mut JavaRandom,
    max_brokers: usize,
    max_partitions: usize,
    max_rf: usize,
) -> (Vec<BrokerMetadata>, Assignment, usize, AssignmentStart) {
    let n = 2 + rng.next_index(max_brokers - 1);
    let racks = rng.next_index(4);
    let partitions = 1 + rng.next_index(max_partitions);
    let rf = 1 + rng.next_index(n.min(max_rf));
    let id = |i: usize| BrokerId::try_from(i).unwrap_or(0);
    let brokers: Vec<BrokerMetadata> = (0..n)
        .map(|i| BrokerMetadata {
            id: id(i),
            rack: (racks > 0).then(|| format!("r{}", i % racks)),
        })
        .collect();
    let mut current = Assignment::new();
    for p in 0..partitions {
        let mut pool: Vec<BrokerId> = (0..n + 2).map(id).collect();
        let replicas = (0..rf)
            .map(|_| pool.remove(rng.next_index(pool.len())))
            .collect();
        current.insert(i32::try_from(p).unwrap_or(0), replicas);
    }
    let start = AssignmentStart {
        start_index: rng.next_index(n),
        replica_shift: rng.next_index(n),
    };
    (brokers, current, rf, start)
}

#[test]
fn seeded_cases_never_need_kafkas_assignment_as_the_fallback() {
    let mut rng = JavaRandom::new(1);
    for _ in 0..2000 {
        let (brokers, current, rf, start) = seeded_case(&mut rng, 8, 24, 4);
        let p = minimize_movement(&current, &brokers, rf, start).unwrap();
        assert_ne!(
            p.source,
            ProposalSource::Kafka,
            "{brokers:?} {current:?} rf {rf} {start:?}"
        );
    }
}

#[test]
fn seeded_small_cases_move_as_few_as_exhaustive_search() {
    let mut rng = JavaRandom::new(5);
    for _ in 0..100 {
        let (brokers, current, rf, start) = seeded_case(&mut rng, 4, 3, 3);
        let p = minimize_movement(&current, &brokers, rf, start).unwrap();
        assert_eq!(
            p.replicas_moved,
            fewest_moves(&current, &p.constraints),
            "{brokers:?} {current:?} rf {rf} {start:?}: {:?}",
            p.assignment
        );
    }
}
