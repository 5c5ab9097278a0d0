//! One run of every measurement: precision, coalescing, the churn here, each storm in a child.

use std::process::Command;
use std::time::Duration;

use super::churn::{churn, ChurnCell, CASES};
use super::plan::{AsyncPlan, COALESCING_PERCENT};
use super::scaling::{self, Scaling};
use super::storm::{StormCase, StormResult};
use crate::async_coalescing::{self, Coalescing};
use crate::async_precision::{self, Precision};
use crate::smol_pool::SmolPool;

/// The whole report.
#[derive(Clone, Debug)]
pub struct AsyncReport {
    /// The sizes.
    pub plan: AsyncPlan,
    /// The precision sweep.
    pub precision: Precision,
    /// The coalescing runs, at 0 % and at [`COALESCING_PERCENT`] tolerance.
    pub coalescing: Vec<Coalescing>,
    /// The churn cells.
    pub churn: Vec<ChurnCell>,
    /// The storms.
    pub storms: Vec<StormResult>,
    /// Registration scaling, measured and modelled.
    pub scaling: Scaling,
}

/// Runs every measurement.
///
/// # Errors
///
/// When a runtime cannot start or a storm child fails.
pub fn measure(plan: &AsyncPlan, tick: &dyn Fn()) -> Result<AsyncReport, String> {
    // First, while nothing else of this run loads the CPUs.
    let precision = async_precision::measure(plan.samples, &plan.requests_us, tick)?;
    let coalescing = [0, COALESCING_PERCENT]
        .into_iter()
        .map(|pct| async_coalescing::measure(plan.intervals, pct, plan.coalescing_ms))
        .collect::<Result<Vec<_>, _>>()?;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(|e| format!("cannot start tokio: {e}"))?;
    // pingora-timeout starts a thread of its own, ticking every 10 ms, at its first timer: it
    // is started before any cell, so that every cell runs beside it.
    runtime.block_on(async {
        pingora_timeout::fast_timeout::fast_sleep(Duration::from_millis(1)).await;
    });
    let smol = SmolPool::new(2, || {}).map_err(|e| format!("cannot start smol: {e}"))?;
    let mut churn_cells = Vec::new();
    for variant in ['A', 'B'] {
        for &tasks in &plan.tasks {
            for (executor, timer) in CASES {
                churn_cells.push(ChurnCell {
                    executor,
                    variant,
                    tasks,
                    timer,
                    ops_per_sec: churn(
                        (&runtime, &smol),
                        executor,
                        timer,
                        variant,
                        tasks,
                        plan.ops,
                    ),
                });
            }
        }
    }
    drop(smol);
    drop(runtime);
    let scaling = scaling::measure(plan.ops)?;
    let exe = std::env::current_exe().map_err(|e| format!("cannot find this program: {e}"))?;
    let mut storms = Vec::new();
    for case in StormCase::ALL {
        let out = Command::new(&exe)
            .args(["async", "--storm-child", case.key(), "--sleepers"])
            .arg(plan.sleepers.to_string())
            .args(if plan.span_ms < 1_000 {
                &["--tiny"][..]
            } else {
                &[]
            })
            .output()
            .map_err(|e| format!("cannot run the storm child: {e}"))?;
        if !out.status.success() {
            return Err(format!(
                "the {} storm failed: {}",
                case.key(),
                String::from_utf8_lossy(&out.stderr).trim()
            ));
        }
        let line = String::from_utf8_lossy(&out.stdout);
        let result: StormResult = serde_json::from_str(line.trim())
            .map_err(|e| format!("the {} storm's result: {e}", case.key()))?;
        storms.push(result);
    }
    Ok(AsyncReport {
        plan: plan.clone(),
        precision,
        coalescing,
        churn: churn_cells,
        storms,
        scaling,
    })
}
