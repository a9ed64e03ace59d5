//! The `/updates` checks: each answer's values are in the table afterwards
//! (Persisted), the clamping cases, and TechEmpower's `verify_updates`
//! (Changed): across the cases up to `queries=501`, at least 90% of the 500
//! rows the largest case answers must differ from the table before them;
//! none at all is "No items were updated", up to 95% only a warning (a row
//! may be set to the value it held).

use std::collections::HashMap;
use std::net::SocketAddr;
use std::time::Duration;

use postgres::Client;

use super::failure::{Failure, Tfb};
use super::model::{Aspect, Check, Column};
use super::response::{basics, get, verdict};
use super::world::{
    check_clamping, describe, fetch_rows, row_count, table_values, whole_table, World,
};
use shootout_contract::spec::{clamp_queries, ScenarioName};

/// The row counts of the Persisted checks.
const UPDATE_COUNTS: [usize; 3] = [1, 5, 20];
/// The rows of the first `/updates` request.
const QUERIES: usize = 20;
/// The clamping cases; the last is TechEmpower's largest, after which it
/// counts the changed rows.
const CLAMPS: [Option<&str>; 3] = [Some("0"), Some("foo"), Some("501")];

const NAME: ScenarioName = ScenarioName::Updates;

/// `/updates?queries=N` for N = 1, 5, 20: the answered values are in the
/// table afterwards; then clamping, and whether the table changed enough.
pub(super) fn check_updates(
    addr: SocketAddr,
    timeout: Duration,
    client: &mut Client,
) -> Vec<Check> {
    let col = Column::Route(NAME);
    let path = NAME.route().path_with_queries(QUERIES);
    let mut checks = match get(addr, &path, timeout) {
        Ok(resp) => basics(NAME, &resp),
        Err(f) => return vec![Check::fail(col, Aspect::Request, f)],
    };
    checks = checks.into_iter().map(|c| c.on("GET", &path)).collect();
    for n in UPDATE_COUNTS {
        checks.push(check_update(addr, timeout, client, n));
    }
    checks.extend(check_changed(addr, timeout, client));
    checks
}

/// One `/updates?queries=n`: the answered values are the table's now.
fn check_update(addr: SocketAddr, timeout: Duration, client: &mut Client, n: usize) -> Check {
    let col = Column::Route(NAME);
    let path = NAME.route().path_with_queries(n);
    let result = fetch_rows(addr, &path, timeout)
        .and_then(|(_, rows)| row_count(&path, rows?, n))
        .and_then(|rows| updates_in_table(client, &rows));
    verdict(col, Aspect::Persisted, result).on("GET", &path)
}

/// The clamping cases between two copies of the table, and TechEmpower's
/// count of the rows that changed.
fn check_changed(addr: SocketAddr, timeout: Duration, client: &mut Client) -> Vec<Check> {
    let col = Column::Route(NAME);
    let before = match whole_table(client) {
        Ok(table) => table,
        Err(f) => return vec![Check::fail(col, Aspect::Changed, f)],
    };
    let mut checks = {
        let mut judge = |rows: &[World]| updates_in_table(client, rows);
        check_clamping(addr, timeout, NAME, &CLAMPS, &mut judge)
    };
    let largest = CLAMPS[CLAMPS.len() - 1];
    let expected = clamp_queries(largest);
    let (result, note) = match whole_table(client) {
        Ok(after) => changed_enough(&before, &after, expected),
        Err(f) => (Err(f), None),
    };
    let path = NAME.route().path_with_queries(largest.unwrap_or_default());
    checks.push(Check {
        note,
        ..verdict(col, Aspect::Changed, result).on("GET", &path)
    });
    checks
}

/// TechEmpower's thresholds on the rows whose value changed: none fails,
/// at most 90% of `expected` fails, at most 95% passes with its warning.
fn changed_enough(
    before: &HashMap<i32, i32>,
    after: &HashMap<i32, i32>,
    expected: usize,
) -> (Result<(), Failure>, Option<String>) {
    let updated = before
        .iter()
        .filter(|(id, v)| after.get(id).is_some_and(|now| now != *v))
        .count();
    if updated == 0 {
        return (Err(Failure::Tfb(Tfb::NothingUpdated)), None);
    }
    if updated * 10 <= expected * 9 {
        return (
            Err(Failure::Tfb(Tfb::FewUpdated { updated, expected })),
            None,
        );
    }
    let note = (updated * 100 <= expected * 95).then(|| {
        format!("There may have been an error updating the database. Only {updated} items were updated in the database out of the roughly {expected} expected.")
    });
    (Ok(()), note)
}

/// The answered updates are what the table holds now.
fn updates_in_table(client: &mut Client, rows: &[World]) -> Result<(), Failure> {
    let ids: Vec<i32> = rows.iter().map(|r| r.id).collect();
    persisted(rows, &table_values(client, &ids)?)
}

/// Every answered id holds an answered value. An id drawn twice in one
/// request may be answered with two values of which the table keeps one
/// (the batched UPDATE applies one), so either is accepted.
fn persisted(rows: &[World], after: &HashMap<i32, i32>) -> Result<(), Failure> {
    let wrong: Vec<String> = rows
        .iter()
        .filter(|r| {
            let now = after.get(&r.id);
            !rows
                .iter()
                .any(|o| o.id == r.id && Some(&o.random_number) == now)
        })
        .take(3)
        .map(|r| describe(r, after.get(&r.id)))
        .collect();
    match wrong.is_empty() {
        true => Ok(()),
        false => Err(Failure::NotPersisted(wrong.join("; "))),
    }
}

#[cfg(test)]
mod unit {
    use super::*;

    #[test]
    fn duplicate_ids_may_keep_either_value() {
        let rows = [
            World {
                id: 5,
                random_number: 1,
            },
            World {
                id: 5,
                random_number: 2,
            },
        ];
        assert_eq!(persisted(&rows, &HashMap::from([(5, 2)])), Ok(()));
        assert!(persisted(&rows, &HashMap::from([(5, 3)])).is_err());
    }

    #[test]
    fn changed_rows_meet_techempowers_thresholds() {
        let before: HashMap<i32, i32> = (1..=1000).map(|id| (id, 0)).collect();
        let with = |changed: i32| -> HashMap<i32, i32> {
            (1..=1000)
                .map(|id| (id, i32::from(id <= changed)))
                .collect()
        };
        let fail = |n| {
            changed_enough(&before, &with(n), 500)
                .0
                .unwrap_err()
                .to_string()
        };
        assert_eq!(fail(0), "No items were updated in the database.");
        assert_eq!(
            fail(450),
            "Only 450 items were updated in the database out of roughly 500 expected."
        );
        let (ok, note) = changed_enough(&before, &with(451), 500);
        assert_eq!(ok, Ok(()));
        assert!(note.is_some_and(|n| n.contains("Only 451 items")));
        assert_eq!(changed_enough(&before, &with(476), 500), (Ok(()), None));
    }
}
