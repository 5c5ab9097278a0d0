//! The worker pool that runs deferred callbacks: calloutng's software-interrupt thread, here a
//! few threads sharing one queue, so that a slow callback holds up only its own worker.

use std::collections::VecDeque;
use std::sync::{Condvar, Mutex};
use std::thread::JoinHandle;

/// A deferred callback, ready to run: called with `true` on a worker, or with `false` when the
/// pool has shut down and will not run it (it then only settles its timer's bookkeeping, so a
/// `drain` does not wait for ever for a callback that will never run).
pub(crate) type Job = Box<dyn FnOnce(bool) + Send>;

#[derive(Default)]
struct Queue {
    jobs: VecDeque<Job>,
    shutdown: bool,
}

/// The pool's shared half.
#[derive(Default)]
pub(crate) struct Pool {
    queue: Mutex<Queue>,
    ready: Condvar,
}

impl std::fmt::Debug for Pool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Pool").finish_non_exhaustive()
    }
}

impl Pool {
    fn lock(&self) -> std::sync::MutexGuard<'_, Queue> {
        self.queue.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Queues a job. After shutdown the job is called at once with `false` (not run).
    pub(crate) fn submit(&self, job: Job) {
        let mut q = self.lock();
        if q.shutdown {
            drop(q);
            job(false);
            return;
        }
        q.jobs.push_back(job);
        drop(q);
        self.ready.notify_one();
    }

    /// One worker's loop: runs jobs until shutdown and an empty queue.
    pub(crate) fn work(&self) {
        loop {
            let mut q = self.lock();
            let job = loop {
                if let Some(job) = q.jobs.pop_front() {
                    break job;
                }
                if q.shutdown {
                    return;
                }
                q = self.ready.wait(q).unwrap_or_else(|p| p.into_inner());
            };
            drop(q);
            job(true);
        }
    }

    /// Makes the workers finish the queue and return.
    pub(crate) fn shutdown(&self) {
        self.lock().shutdown = true;
        self.ready.notify_all();
    }
}

/// Starts `n` workers on `pool`.
pub(crate) fn spawn(pool: &std::sync::Arc<Pool>, n: usize) -> std::io::Result<Vec<JoinHandle<()>>> {
    (0..n)
        .map(|i| {
            let pool = std::sync::Arc::clone(pool);
            std::thread::Builder::new()
                .name(format!("callwheel-rt-worker-{i}"))
                .spawn(move || pool.work())
        })
        .collect()
}
