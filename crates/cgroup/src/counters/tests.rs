use super::*;

const V2_CPU: &str = "usage_usec 2500000\nuser_usec 2000000\nsystem_usec 500000\n\
nr_periods 40\nnr_throttled 12\nthrottled_usec 750000\nnr_bursts 0\nburst_usec 0\n";
const V1_CPU: &str = "nr_periods 40\nnr_throttled 12\nthrottled_time 750000000\n\
nr_bursts 0\nburst_time 0\n";
const EVENTS: &str = "low 0\nhigh 0\nmax 17\noom 2\noom_kill 1\noom_group_kill 0\n";
const OOM_CONTROL: &str = "oom_kill_disable 0\nunder_oom 0\noom_kill 3\n";

fn p() -> &'static Path {
    Path::new("/fake/cpu.stat")
}

#[test]
fn v2_cpu_stat_in_microseconds() {
    let mut c = Counters::default();
    v2_cpu(V2_CPU, p(), true, &mut c).unwrap();
    assert_eq!(c.cpu, Duration::from_millis(2500));
    assert_eq!((c.periods, c.throttled_periods), (40, 12));
    assert_eq!(c.throttled, Duration::from_millis(750));
}

#[test]
fn v2_cpu_stat_without_the_cpu_controller_is_cpu_time_only() {
    let mut c = Counters::default();
    v2_cpu(
        "usage_usec 2500000\nuser_usec 1\nsystem_usec 1\n",
        p(),
        false,
        &mut c,
    )
    .unwrap();
    assert_eq!(c.cpu, Duration::from_millis(2500));
    assert_eq!((c.periods, c.throttled_periods), (0, 0));
    let e = v2_cpu("user_usec 1\n", p(), false, &mut c).unwrap_err();
    assert!(matches!(e, CgroupError::Malformed { .. }), "{e}");
}

#[test]
fn v1_cpu_stat_in_nanoseconds() {
    let mut c = Counters::default();
    v1_cpu_stat(V1_CPU, p(), &mut c).unwrap();
    assert_eq!(c.throttled, Duration::from_millis(750));
    assert_eq!(c.throttled_periods, 12);
}

#[test]
fn oom_kills_from_either_file() {
    assert_eq!(oom_kills(EVENTS, p()).unwrap(), 1);
    assert_eq!(oom_kills(OOM_CONTROL, p()).unwrap(), 3);
}

#[test]
fn every_parser_refuses_a_malformed_file() {
    let mut c = Counters::default();
    let bad_cpu = [
        "usage_usec twelve\n",                              // not a number
        "usage_usec 1 2\n",                                 // three fields
        "usage_usec\n",                                     // one field
        "nr_periods 1\nnr_throttled 1\nthrottled_usec 1\n", // no usage
        "usage_usec 1\nnr_periods 1\nnr_throttled 1\n",     // no throttled
        "usage_usec -1\nnr_periods 1\nnr_throttled 1\nthrottled_usec 1\n",
    ];
    for t in bad_cpu {
        let e = v2_cpu(t, p(), true, &mut c).unwrap_err();
        assert!(matches!(e, CgroupError::Malformed { .. }), "{t:?} gave {e}");
        assert!(
            e.to_string().starts_with("/fake/cpu.stat: malformed"),
            "{e}"
        );
    }
    for t in ["nr_periods 1\nnr_throttled 1\n", "throttled_time 1.5\n"] {
        assert!(v1_cpu_stat(t, p(), &mut c).is_err(), "{t:?}");
    }
    for t in ["", "max", "12 13", "0x10", "-5", "4096\n4096"] {
        assert!(single(t, p()).is_err(), "{t:?}");
    }
    for t in ["oom 1\n", "oom_kill\n", "oom_kill many\n"] {
        assert!(oom_kills(t, p()).is_err(), "{t:?}");
    }
}

#[test]
fn single_values_may_end_with_a_newline() {
    assert_eq!(single("1048576\n", p()).unwrap(), 1_048_576);
}

#[test]
fn delta_between_two_reads() {
    let a = Counters {
        cpu: Duration::from_secs(1),
        periods: 10,
        throttled_periods: 2,
        throttled: Duration::from_millis(100),
        memory_current: 10,
        memory_peak: Some(50),
        oom_kills: 0,
    };
    let b = Counters {
        cpu: Duration::from_secs(3),
        periods: 30,
        throttled_periods: 12,
        throttled: Duration::from_millis(600),
        memory_current: 20,
        memory_peak: Some(70),
        oom_kills: 1,
    };
    let d = b.since(&a);
    assert_eq!(d.cpu, Duration::from_secs(2));
    assert_eq!((d.periods, d.throttled_periods, d.oom_kills), (20, 10, 1));
    assert_eq!(d.throttled, Duration::from_millis(500));
    assert_eq!(d.memory_peak, Some(70));
    assert!((d.cpus_over(Duration::from_secs(4)) - 0.5).abs() < 1e-9);
    assert_eq!(d.cpus_over(Duration::ZERO), 0.0);
    // Reads in the wrong order saturate rather than wrap.
    assert_eq!(a.since(&b).cpu, Duration::ZERO);
}
