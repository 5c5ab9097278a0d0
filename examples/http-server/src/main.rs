//! An HTTP/1.1 server whose connections close after an idle timeout and whose requests have a
//! deadline, built once with tokio's timers and once with callwheel's (`--features
//! callwheel`) from this one source, so that `scripts/http-load.sh` can load both with the
//! same generator and compare them.
//!
//! Usage: `callwheel-http-server PORT`. Every request gets a short plain-text body; its
//! handler runs under a 1 s deadline (a timeout around work that is ready at once, as most
//! handlers' deadlines are); a connection with no request for 10 s is closed gracefully.

use std::convert::Infallible;
use std::pin::pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use http_body_util::Full;
use hyper::body::{Bytes, Incoming};
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use tokio::net::{TcpListener, TcpStream};

/// A connection with no request for this long is closed.
const IDLE: Duration = Duration::from_secs(10);
/// A request's handler must finish within this.
const DEADLINE: Duration = Duration::from_secs(1);

/// The timers, from one library or the other: a sleep that can be moved, and a timeout.
#[cfg(feature = "callwheel")]
mod timers {
    use std::future::Future;
    use std::time::{Duration, Instant};

    pub const NAME: &str = "callwheel-async";

    pub type Sleep = callwheel_async::Sleep;

    pub fn sleep_until(at: Instant) -> Sleep {
        callwheel_async::sleep_until(at)
    }

    pub fn reset(sleep: std::pin::Pin<&mut Sleep>, at: Instant) {
        sleep.get_mut().reset(at);
    }

    pub async fn timeout<F: Future>(d: Duration, f: F) -> Option<F::Output> {
        callwheel_async::timeout(d, f).await.ok()
    }
}

#[cfg(not(feature = "callwheel"))]
mod timers {
    use std::future::Future;
    use std::time::{Duration, Instant};

    pub const NAME: &str = "tokio::time";

    pub type Sleep = tokio::time::Sleep;

    pub fn sleep_until(at: Instant) -> Sleep {
        tokio::time::sleep_until(tokio::time::Instant::from_std(at))
    }

    pub fn reset(sleep: std::pin::Pin<&mut Sleep>, at: Instant) {
        sleep.reset(tokio::time::Instant::from_std(at));
    }

    pub async fn timeout<F: Future>(d: Duration, f: F) -> Option<F::Output> {
        tokio::time::timeout(d, f).await.ok()
    }
}

/// The process's start: activity is kept as nanoseconds after it, in one atomic word.
fn epoch() -> Instant {
    static EPOCH: OnceLock<Instant> = OnceLock::new();
    *EPOCH.get_or_init(Instant::now)
}

fn since_epoch(at: Instant) -> u64 {
    at.saturating_duration_since(epoch()).as_nanos() as u64
}

async fn respond(_req: Request<Incoming>) -> Response<Full<Bytes>> {
    Response::new(Full::new(Bytes::from_static(
        b"hello from callwheel's load test\n",
    )))
}

async fn handle(req: Request<Incoming>) -> Result<Response<Full<Bytes>>, Infallible> {
    Ok(match timers::timeout(DEADLINE, respond(req)).await {
        Some(response) => response,
        None => {
            let mut late = Response::new(Full::new(Bytes::from_static(b"deadline passed\n")));
            *late.status_mut() = StatusCode::SERVICE_UNAVAILABLE;
            late
        }
    })
}

/// Serves one connection until the client closes it or it stays idle for [`IDLE`].
async fn serve(stream: TcpStream) {
    let last = Arc::new(AtomicU64::new(since_epoch(Instant::now())));
    let seen = Arc::clone(&last);
    let service = service_fn(move |req| {
        seen.store(since_epoch(Instant::now()), Ordering::Relaxed);
        handle(req)
    });
    let mut conn = pin!(http1::Builder::new().serve_connection(TokioIo::new(stream), service));
    let mut idle = pin!(timers::sleep_until(Instant::now() + IDLE));
    loop {
        tokio::select! {
            _ = conn.as_mut() => return,
            () = idle.as_mut() => {
                let last = epoch() + Duration::from_nanos(last.load(Ordering::Relaxed));
                if last.elapsed() >= IDLE {
                    conn.as_mut().graceful_shutdown();
                    let _ = conn.as_mut().await;
                    return;
                }
                timers::reset(idle.as_mut(), last + IDLE);
            }
        }
    }
}

fn main() -> std::io::Result<()> {
    let port: u16 = std::env::args()
        .nth(1)
        .and_then(|p| p.parse().ok())
        .unwrap_or(8080);
    let _ = epoch();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    runtime.block_on(async move {
        let listener = TcpListener::bind(("127.0.0.1", port)).await?;
        eprintln!("listening on 127.0.0.1:{port} with {}", timers::NAME);
        loop {
            let (stream, _) = listener.accept().await?;
            let _ = stream.set_nodelay(true);
            tokio::spawn(serve(stream));
        }
    })
}
