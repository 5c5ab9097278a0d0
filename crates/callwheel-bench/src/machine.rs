//! What the report says about the machine it ran on: read from /proc and /sys, each fact
//! "unknown" when the file is not there (another OS, a container without /sys).

use std::fs;

use serde::{Deserialize, Serialize};

/// The machine facts the report prints.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Machine {
    /// The CPU model name.
    pub cpu: String,
    /// Cores available to this process.
    pub cores: usize,
    /// The kernel release.
    pub kernel: String,
    /// The current clocksource (tsc, hpet, kvm-clock, ...).
    pub clocksource: String,
    /// This process's timer slack, in nanoseconds.
    pub timer_slack_ns: String,
    /// The run's date, UTC, as YYYY-MM-DD HH:MM:SS.
    pub date: String,
}

fn read_trimmed(path: &str) -> String {
    fs::read_to_string(path)
        .map(|s| s.trim().to_string())
        .unwrap_or_else(|_| "unknown".to_string())
}

impl Machine {
    /// Reads the facts now.
    pub fn read() -> Machine {
        let cpu = fs::read_to_string("/proc/cpuinfo")
            .ok()
            .and_then(|info| {
                info.lines()
                    .find(|l| l.starts_with("model name"))
                    .and_then(|l| l.split_once(':'))
                    .map(|(_, v)| v.trim().to_string())
            })
            .unwrap_or_else(|| "unknown".to_string());
        Machine {
            cpu,
            cores: std::thread::available_parallelism().map_or(1, |n| n.get()),
            kernel: read_trimmed("/proc/sys/kernel/osrelease"),
            clocksource: read_trimmed(
                "/sys/devices/system/clocksource/clocksource0/current_clocksource",
            ),
            timer_slack_ns: read_trimmed("/proc/self/timerslack_ns"),
            date: utc_now(),
        }
    }
}

/// The current UTC time as `YYYY-MM-DD HH:MM:SS`.
pub fn utc_now() -> String {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let (y, m, d) = civil_from_days((secs / 86_400) as i64);
    let s = secs % 86_400;
    format!(
        "{y:04}-{m:02}-{d:02} {:02}:{:02}:{:02}",
        s / 3600,
        s / 60 % 60,
        s % 60
    )
}

/// The proleptic Gregorian date of a day count since 1970-01-01 (Howard Hinnant's
/// days-to-civil algorithm, written from its description: shift to eras of 400 years that
/// start on March 1, so the leap day ends a year).
pub fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let month = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let year = yoe + era * 400 + i64::from(month <= 2);
    (year, month, day)
}
