//! Calendar dates and times in UTC from Unix time, for the places that print a timestamp for a
//! person (`dump-segment --summary`) or in Java's `Date.toString()` form (`meta.properties`).
//! No time zones, no leap seconds: Unix time is a count of 86,400-second days.

/// A moment in UTC, split into its proleptic Gregorian calendar fields.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct UtcDateTime {
    pub year: i64,
    /// 1..=12.
    pub month: u32,
    /// 1..=31.
    pub day: u32,
    pub hour: u32,
    pub minute: u32,
    pub second: u32,
    pub millisecond: u32,
    /// 0 = Sunday .. 6 = Saturday.
    pub weekday: u32,
}

impl UtcDateTime {
    /// The moment `ms` milliseconds after (or, negative, before) 1970-01-01T00:00:00Z.
    pub(crate) fn from_unix_ms(ms: i64) -> UtcDateTime {
        let secs = ms.div_euclid(1000);
        let days = secs.div_euclid(86_400);
        let rem = secs.rem_euclid(86_400);
        // Howard Hinnant's days-to-civil conversion (days since the epoch → y/m/d).
        let z = days + 719_468;
        let era = z.div_euclid(146_097);
        let doe = z.rem_euclid(146_097);
        let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
        let mp = (5 * doy + 2) / 153;
        let day = doy - (153 * mp + 2) / 5 + 1;
        let month = if mp < 10 { mp + 3 } else { mp - 9 };
        UtcDateTime {
            year: yoe + era * 400 + i64::from(month <= 2),
            month: month as u32,
            day: day as u32,
            hour: (rem / 3600) as u32,
            minute: (rem % 3600 / 60) as u32,
            second: (rem % 60) as u32,
            millisecond: ms.rem_euclid(1000) as u32,
            // 1970-01-01 was a Thursday.
            weekday: (days + 4).rem_euclid(7) as u32,
        }
    }

    /// ISO 8601 with milliseconds: `2023-11-14T22:13:20.000Z`.
    pub(crate) fn to_iso8601(self) -> String {
        format!(
            "{:04}-{:02}-{:02}T{:02}:{:02}:{:02}.{:03}Z",
            self.year, self.month, self.day, self.hour, self.minute, self.second, self.millisecond
        )
    }

    /// Java's `Date.toString()` in UTC: `EEE MMM dd HH:mm:ss zzz yyyy`.
    pub(crate) fn to_java_date(self) -> String {
        const WEEKDAYS: [&str; 7] = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"];
        const MONTHS: [&str; 12] = [
            "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
        ];
        format!(
            "{} {} {:02} {:02}:{:02}:{:02} UTC {}",
            WEEKDAYS[self.weekday as usize % 7],
            MONTHS[(self.month as usize + 11) % 12],
            self.day,
            self.hour,
            self.minute,
            self.second,
            self.year
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_moments() {
        let cases = [
            (
                0,
                "1970-01-01T00:00:00.000Z",
                "Thu Jan 01 00:00:00 UTC 1970",
            ),
            (
                1_700_000_000_123,
                "2023-11-14T22:13:20.123Z",
                "Tue Nov 14 22:13:20 UTC 2023",
            ),
            (
                951_782_400_000,
                "2000-02-29T00:00:00.000Z",
                "Tue Feb 29 00:00:00 UTC 2000",
            ),
            (
                -1,
                "1969-12-31T23:59:59.999Z",
                "Wed Dec 31 23:59:59 UTC 1969",
            ),
            (
                253_402_300_799_999,
                "9999-12-31T23:59:59.999Z",
                "Fri Dec 31 23:59:59 UTC 9999",
            ),
        ];
        for (ms, iso, java) in cases {
            let t = UtcDateTime::from_unix_ms(ms);
            assert_eq!(t.to_iso8601(), iso, "{ms}");
            assert_eq!(t.to_java_date(), java, "{ms}");
        }
    }

    #[test]
    fn every_day_follows_the_previous_one() {
        // From 1600 to 2400: each day is the next calendar date and the next weekday.
        let day = 86_400_000i64;
        let mut prev = UtcDateTime::from_unix_ms(-11_676_096_000_000);
        assert_eq!((prev.year, prev.month, prev.day), (1600, 1, 1));
        for d in 1..292_000i64 {
            let t = UtcDateTime::from_unix_ms(-11_676_096_000_000 + d * day);
            assert_eq!(t.weekday, (prev.weekday + 1) % 7);
            let next_day = t.day == prev.day + 1 && t.month == prev.month && t.year == prev.year;
            let next_month = t.day == 1 && t.month == prev.month + 1 && t.year == prev.year;
            let next_year =
                t.day == 1 && t.month == 1 && prev.month == 12 && t.year == prev.year + 1;
            assert!(next_day || next_month || next_year, "{prev:?} -> {t:?}");
            prev = t;
        }
    }
}
