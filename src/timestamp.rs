//! UTC timestamps for results files, file names and log lines (formatted by `humantime`).

use std::time::SystemTime;

/// `2026-11-22T09:59:00Z`.
pub fn iso8601_utc(t: SystemTime) -> String {
    humantime::format_rfc3339_seconds(t).to_string()
}

/// `20261122-095900` (UTC), for file names.
pub fn compact_utc(t: SystemTime) -> String {
    iso8601_utc(t).replace(['-', ':', 'Z'], "").replace('T', "-")
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::{Duration, UNIX_EPOCH};

    #[test]
    fn utc_formatting() {
        let t = UNIX_EPOCH + Duration::from_secs(951_782_400 + 3661); // 2000-02-29 01:01:01
        assert_eq!(iso8601_utc(t), "2000-02-29T01:01:01Z");
        assert_eq!(compact_utc(t), "20000229-010101");
        assert_eq!(iso8601_utc(UNIX_EPOCH), "1970-01-01T00:00:00Z");
        let t = UNIX_EPOCH + Duration::from_secs(1_798_761_599); // 2026-12-31 23:59:59
        assert_eq!(iso8601_utc(t), "2026-12-31T23:59:59Z");
    }
}
