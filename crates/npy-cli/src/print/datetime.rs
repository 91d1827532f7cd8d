//! datetime64 as numpy's `datetime_as_string` writes it, and timedelta64's `str()`.

use npy_core::{DateTimeUnit, TimeUnit};

/// `value` ticks of `unit` since 1970-01-01 as an ISO string at the unit's
/// resolution (`2020-01-01T00:00:00` for seconds, `2020-01` for months).
/// `value` is not NaT. Arithmetic is in i128, so no value overflows.
pub fn iso(value: i64, unit: DateTimeUnit) -> String {
    let ticks = i128::from(value) * i128::from(unit.multiple);
    match unit.unit {
        TimeUnit::Year => year(1970 + ticks),
        TimeUnit::Month => {
            let years = ticks.div_euclid(12);
            format!("{}-{:02}", year(1970 + years), ticks.rem_euclid(12) + 1)
        }
        TimeUnit::Week => date(ticks * 7),
        TimeUnit::Day => date(ticks),
        sub_day => {
            let (per_day, fraction_digits) = match sub_day {
                TimeUnit::Hour => (24, 0),
                TimeUnit::Minute => (24 * 60, 0),
                TimeUnit::Second => (86_400, 0),
                TimeUnit::Millisecond => (86_400 * 10i128.pow(3), 3),
                TimeUnit::Microsecond => (86_400 * 10i128.pow(6), 6),
                TimeUnit::Nanosecond => (86_400 * 10i128.pow(9), 9),
                TimeUnit::Picosecond => (86_400 * 10i128.pow(12), 12),
                TimeUnit::Femtosecond => (86_400 * 10i128.pow(15), 15),
                TimeUnit::Attosecond => (86_400 * 10i128.pow(18), 18),
                TimeUnit::Year | TimeUnit::Month | TimeUnit::Week | TimeUnit::Day => {
                    unreachable!("handled above")
                }
            };
            let days = ticks.div_euclid(per_day);
            let within_day = ticks.rem_euclid(per_day);
            let mut text = date(days);
            match sub_day {
                TimeUnit::Hour => text += &format!("T{within_day:02}"),
                TimeUnit::Minute => {
                    text += &format!("T{:02}:{:02}", within_day / 60, within_day % 60)
                }
                _ => {
                    let per_second = 10i128.pow(fraction_digits);
                    let seconds = within_day / per_second;
                    text += &format!(
                        "T{:02}:{:02}:{:02}",
                        seconds / 3600,
                        seconds / 60 % 60,
                        seconds % 60
                    );
                    if fraction_digits > 0 {
                        let fraction = within_day % per_second;
                        text += &format!(".{fraction:0width$}", width = fraction_digits as usize);
                    }
                }
            }
            text
        }
    }
}

/// numpy writes at least four digits, the sign inside the width (`-001`).
fn year(year: i128) -> String {
    format!("{year:04}")
}

/// Proleptic Gregorian date of `days` since 1970-01-01.
fn date(days: i128) -> String {
    // Days since 0000-03-01 split into 400-year eras (Hinnant's civil_from_days).
    let shifted = days + 719_468;
    let era = shifted.div_euclid(146_097);
    let day_of_era = shifted.rem_euclid(146_097);
    let year_of_era =
        (day_of_era - day_of_era / 1460 + day_of_era / 36_524 - day_of_era / 146_096) / 365;
    let day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
    let month_index = (5 * day_of_year + 2) / 153;
    let day = day_of_year - (153 * month_index + 2) / 5 + 1;
    let month = if month_index < 10 {
        month_index + 3
    } else {
        month_index - 9
    };
    let year_number = year_of_era + era * 400 + i128::from(month <= 2);
    format!("{}-{month:02}-{day:02}", year(year_number))
}

/// numpy's `str()` of a timedelta64 scalar: `5 seconds`, `1 days`,
/// `5 generic time units`. `value` is not NaT.
pub fn timedelta_scalar(value: i64, unit: Option<DateTimeUnit>) -> String {
    let Some(unit) = unit else {
        return format!("{value} generic time units");
    };
    let name = match unit.unit {
        TimeUnit::Year => "years",
        TimeUnit::Month => "months",
        TimeUnit::Week => "weeks",
        TimeUnit::Day => "days",
        TimeUnit::Hour => "hours",
        TimeUnit::Minute => "minutes",
        TimeUnit::Second => "seconds",
        TimeUnit::Millisecond => "milliseconds",
        TimeUnit::Microsecond => "microseconds",
        TimeUnit::Nanosecond => "nanoseconds",
        TimeUnit::Picosecond => "picoseconds",
        TimeUnit::Femtosecond => "femtoseconds",
        TimeUnit::Attosecond => "attoseconds",
    };
    format!("{} {name}", i128::from(value) * i128::from(unit.multiple))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn unit(unit: TimeUnit, multiple: u32) -> DateTimeUnit {
        DateTimeUnit { unit, multiple }
    }

    // Expected strings are numpy 2.4's output for the same values.
    #[test]
    fn dates_match_numpy() {
        assert_eq!(iso(0, unit(TimeUnit::Year, 1)), "1970");
        assert_eq!(iso(-1970, unit(TimeUnit::Year, 1)), "0000");
        assert_eq!(iso(-1971, unit(TimeUnit::Year, 1)), "-001");
        assert_eq!(iso(-3000, unit(TimeUnit::Year, 1)), "-1030");
        assert_eq!(iso(-1, unit(TimeUnit::Month, 1)), "1969-12");
        assert_eq!(iso(3, unit(TimeUnit::Month, 13)), "1973-04");
        assert_eq!(iso(-1, unit(TimeUnit::Week, 1)), "1969-12-25");
        assert_eq!(iso(1, unit(TimeUnit::Day, 7)), "1970-01-08");
        assert_eq!(iso(-719_528, unit(TimeUnit::Day, 1)), "0000-01-01");
        assert_eq!(iso(-719_529, unit(TimeUnit::Day, 1)), "-001-12-31");
        assert_eq!(iso(-1_000_000, unit(TimeUnit::Day, 1)), "-768-02-04");
        assert_eq!(iso(1_000_000_000, unit(TimeUnit::Day, 1)), "2739877-01-03");
        assert_eq!(iso(100_000, unit(TimeUnit::Day, 1)), "2243-10-17");
        assert_eq!(iso(18_262, unit(TimeUnit::Day, 1)), "2020-01-01");
    }

    #[test]
    fn times_match_numpy() {
        assert_eq!(
            iso(1_577_836_800, unit(TimeUnit::Second, 1)),
            "2020-01-01T00:00:00"
        );
        assert_eq!(iso(1, unit(TimeUnit::Second, 10)), "1970-01-01T00:00:10");
        assert_eq!(iso(2, unit(TimeUnit::Hour, 25)), "1970-01-03T02");
        assert_eq!(iso(-1, unit(TimeUnit::Hour, 1)), "1969-12-31T23");
        assert_eq!(iso(0, unit(TimeUnit::Minute, 1)), "1970-01-01T00:00");
        assert_eq!(
            iso(-1, unit(TimeUnit::Millisecond, 1)),
            "1969-12-31T23:59:59.999"
        );
        assert_eq!(
            iso(1, unit(TimeUnit::Nanosecond, 1)),
            "1970-01-01T00:00:00.000000001"
        );
        assert_eq!(
            iso(1 << 62, unit(TimeUnit::Second, 1)),
            "146138514283-06-19T07:45:04"
        );
        assert_eq!(
            iso(-(1 << 62), unit(TimeUnit::Nanosecond, 1)),
            "1823-11-12T00:06:21.572612096"
        );
        assert_eq!(
            iso(i64::MAX, unit(TimeUnit::Attosecond, 1)),
            "1970-01-01T00:00:09.223372036854775807"
        );
        assert_eq!(
            iso(i64::MIN + 1, unit(TimeUnit::Attosecond, 1)),
            "1969-12-31T23:59:50.776627963145224193"
        );
        assert_eq!(
            iso(i64::MAX, unit(TimeUnit::Day, 1)),
            "25252734927768524-07-27"
        );
    }

    #[test]
    fn timedelta_scalars_name_their_unit() {
        assert_eq!(
            timedelta_scalar(5, Some(unit(TimeUnit::Second, 1))),
            "5 seconds"
        );
        assert_eq!(
            timedelta_scalar(3, Some(unit(TimeUnit::Second, 10))),
            "30 seconds"
        );
        assert_eq!(timedelta_scalar(1, Some(unit(TimeUnit::Day, 1))), "1 days");
        assert_eq!(timedelta_scalar(5, None), "5 generic time units");
    }
}
