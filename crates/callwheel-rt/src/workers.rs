//! The worker pool that runs deferred callbacks: calloutng's software-interrupt thread, here a
//! few threads sharing one queue, so that a slow callback holds up only its own worker.
//!
//! The queue holds the jobs themselves (a fired timer and its firing), not boxed closures, so
//! queuing a callback allocates nothing while the queue has room; when it must grow, it grows
//! by fallible reservation, and a refusal hands the job back to the submitter, which runs it
//! itself. Memory running out then delays a callback; it never loses one or aborts.

use std::collections::VecDeque;
use std::sync::{Condvar, Mutex};
use std::thread::JoinHandle;

use crate::runs;
use crate::Error;

/// Why [`Workers::submit`] handed a job back.
#[derive(Debug)]
pub(crate) enum Refused<J> {
    /// The pool has shut down and runs no more jobs: the submitter settles it unrun.
    ShutDown(J),
    /// The queue could not grow: the submitter runs the job itself.
    NoMemory(J),
}

struct Queue<J> {
    jobs: VecDeque<J>,
    shutdown: bool,
    /// Refuse to grow, as an exhausted allocator would (the tests' way to reach that path).
    #[cfg(test)]
    refuse_growth: bool,
}

/// The pool's shared half.
pub(crate) struct Workers<J> {
    queue: Mutex<Queue<J>>,
    ready: Condvar,
}

impl<J> Default for Workers<J> {
    fn default() -> Self {
        Workers {
            queue: Mutex::new(Queue {
                jobs: VecDeque::new(),
                shutdown: false,
                #[cfg(test)]
                refuse_growth: false,
            }),
            ready: Condvar::new(),
        }
    }
}

impl<J> std::fmt::Debug for Workers<J> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Workers").finish_non_exhaustive()
    }
}

impl<J> Workers<J> {
    fn lock(&self) -> std::sync::MutexGuard<'_, Queue<J>> {
        self.queue.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Queues a job for a worker, or hands it back: after shutdown, or when the queue cannot
    /// grow.
    pub(crate) fn submit(&self, job: J) -> Result<(), Refused<J>> {
        let mut q = self.lock();
        if q.shutdown {
            return Err(Refused::ShutDown(job));
        }
        #[cfg(test)]
        let refuse = q.refuse_growth && q.jobs.len() == q.jobs.capacity();
        #[cfg(not(test))]
        let refuse = false;
        if refuse || q.jobs.try_reserve(1).is_err() {
            return Err(Refused::NoMemory(job));
        }
        q.jobs.push_back(job);
        drop(q);
        self.ready.notify_one();
        Ok(())
    }

    /// One worker's loop: runs jobs with `run` until shutdown and an empty queue.
    pub(crate) fn work(&self, run: impl Fn(J)) {
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
            run(job);
        }
    }

    /// Makes the workers finish the queue and return.
    pub(crate) fn shutdown(&self) {
        self.lock().shutdown = true;
        self.ready.notify_all();
    }

    /// From now on the queue refuses to grow past its present capacity.
    // For step_tests, which the loom build leaves out.
    #[cfg(all(test, not(callwheel_loom)))]
    pub(crate) fn refuse_growth(&self) {
        self.lock().refuse_growth = true;
    }
}

/// Starts `n` workers on `pool`, each running its jobs with `run`. Each worker's record of
/// the callback runs it holds (the `runs` module; one job at a time) is reserved here, where
/// a refusal can be returned.
///
/// # Errors
///
/// [`Error::Io`] when a thread cannot be created; [`Error::Wheel`] with
/// [`callwheel::Error::NoMemory`] when a record is refused.
pub(crate) fn spawn<J: Send + 'static>(
    pool: &std::sync::Arc<Workers<J>>,
    n: usize,
    run: impl Fn(J) + Clone + Send + 'static,
) -> Result<Vec<JoinHandle<()>>, Error> {
    (0..n)
        .map(|i| {
            let (pool, run) = (std::sync::Arc::clone(pool), run.clone());
            let record = runs::reserved(1)?;
            let worker = std::thread::Builder::new()
                .name(format!("callwheel-rt-worker-{i}"))
                .spawn(move || {
                    runs::adopt(record);
                    pool.work(run);
                })?;
            Ok(worker)
        })
        .collect()
}
