//! A tokio TCP echo server whose timers come from callwheel-async: each connection is closed
//! after an idle timeout (reset by every request), and each request must be answered before a
//! per-request deadline. The example starts the server on a loopback port, runs clients
//! against it — busy ones that keep their connection alive, idle ones that stop talking, slow
//! ones that start a request and never finish it — and prints what happened to each kind.
//!
//! `cargo run --release -p callwheel-examples --example echo_timeouts`

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use callwheel_async::{sleep, timeout};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::net::{TcpListener, TcpStream};

/// A connection with no request for this long is closed.
const IDLE: Duration = Duration::from_millis(150);
/// A request (one line) must be read completely within this long of its first byte.
const REQUEST_DEADLINE: Duration = Duration::from_millis(50);

#[derive(Default)]
struct Counts {
    echoed: AtomicU64,
    idle_closed: AtomicU64,
    deadline_closed: AtomicU64,
}

async fn serve(stream: TcpStream, counts: Arc<Counts>) {
    let (read, mut write) = stream.into_split();
    let mut lines = BufReader::new(read);
    loop {
        // Wait for the first byte of the next request, at most IDLE. Dropping the timeout's
        // future when data arrives cancels its timer in O(1); when data is already buffered
        // the timer is never registered at all.
        let ready = timeout(IDLE, lines.fill_buf()).await;
        match ready {
            Err(_) => {
                counts.idle_closed.fetch_add(1, Ordering::Relaxed);
                return;
            }
            Ok(Err(_)) => return,
            Ok(Ok([])) => return, // the client closed
            Ok(Ok(_)) => {}
        }
        let mut line = String::new();
        match timeout(REQUEST_DEADLINE, lines.read_line(&mut line)).await {
            Err(_) => {
                counts.deadline_closed.fetch_add(1, Ordering::Relaxed);
                return;
            }
            Ok(Err(_)) | Ok(Ok(0)) => return,
            Ok(Ok(_)) => {}
        }
        if write.write_all(line.as_bytes()).await.is_err() {
            return;
        }
        counts.echoed.fetch_add(1, Ordering::Relaxed);
    }
}

/// A client that sends `requests` lines, `gap` apart, then waits to be closed or closes.
async fn busy(addr: std::net::SocketAddr, requests: u32, gap: Duration) -> u32 {
    let Ok(stream) = TcpStream::connect(addr).await else {
        return 0;
    };
    let (read, mut write) = stream.into_split();
    let mut lines = BufReader::new(read);
    let mut answered = 0;
    for i in 0..requests {
        if write
            .write_all(format!("ping {i}\n").as_bytes())
            .await
            .is_err()
        {
            break;
        }
        let mut back = String::new();
        if lines.read_line(&mut back).await.unwrap_or(0) == 0 {
            break;
        }
        answered += 1;
        sleep(gap).await;
    }
    answered
}

/// A client that connects and then says nothing: the idle timeout closes it.
async fn idle(addr: std::net::SocketAddr) -> Duration {
    let start = Instant::now();
    if let Ok(mut stream) = TcpStream::connect(addr).await {
        let mut buf = [0u8; 1];
        let _ = tokio::io::AsyncReadExt::read(&mut stream, &mut buf).await;
    }
    start.elapsed()
}

/// A client that starts a request and never finishes the line: the request deadline closes it.
async fn slow(addr: std::net::SocketAddr) -> Duration {
    let start = Instant::now();
    if let Ok(mut stream) = TcpStream::connect(addr).await {
        let _ = stream.write_all(b"half a requ").await;
        let mut buf = [0u8; 1];
        let _ = tokio::io::AsyncReadExt::read(&mut stream, &mut buf).await;
    }
    start.elapsed()
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() -> std::io::Result<()> {
    let listener = TcpListener::bind("127.0.0.1:0").await?;
    let addr = listener.local_addr()?;
    let counts = Arc::new(Counts::default());
    let server_counts = Arc::clone(&counts);
    tokio::spawn(async move {
        while let Ok((stream, _)) = listener.accept().await {
            tokio::spawn(serve(stream, Arc::clone(&server_counts)));
        }
    });

    let busy_clients: Vec<_> = (0..20)
        .map(|_| tokio::spawn(busy(addr, 10, Duration::from_millis(20))))
        .collect();
    let idle_clients: Vec<_> = (0..10).map(|_| tokio::spawn(idle(addr))).collect();
    let slow_clients: Vec<_> = (0..10).map(|_| tokio::spawn(slow(addr))).collect();

    let mut answered = 0;
    for c in busy_clients {
        answered += c.await.unwrap_or(0);
    }
    let mut idle_times = Vec::new();
    for c in idle_clients {
        idle_times.push(c.await.unwrap_or_default());
    }
    let mut slow_times = Vec::new();
    for c in slow_clients {
        slow_times.push(c.await.unwrap_or_default());
    }
    // Let the busy clients' connections reach their idle timeout too.
    sleep(IDLE + Duration::from_millis(50)).await;

    let max = |v: &[Duration]| v.iter().max().copied().unwrap_or_default();
    let min = |v: &[Duration]| v.iter().min().copied().unwrap_or_default();
    println!(
        "busy clients: {answered} of 200 requests echoed (server counted {})",
        counts.echoed.load(Ordering::Relaxed)
    );
    println!(
        "idle clients: closed after {:.1} to {:.1} ms (idle timeout {} ms); \
         idle closes {}",
        min(&idle_times).as_secs_f64() * 1e3,
        max(&idle_times).as_secs_f64() * 1e3,
        IDLE.as_millis(),
        counts.idle_closed.load(Ordering::Relaxed)
    );
    println!(
        "slow clients: closed after {:.1} to {:.1} ms (request deadline {} ms); \
         deadline closes {}",
        min(&slow_times).as_secs_f64() * 1e3,
        max(&slow_times).as_secs_f64() * 1e3,
        REQUEST_DEADLINE.as_millis(),
        counts.deadline_closed.load(Ordering::Relaxed)
    );
    let ok = answered == 200
        && counts.deadline_closed.load(Ordering::Relaxed) == 10
        && min(&idle_times) >= IDLE
        && min(&slow_times) >= REQUEST_DEADLINE;
    if !ok {
        eprintln!("echo_timeouts: an outcome differs from what the timeouts promise");
        std::process::exit(1);
    }
    Ok(())
}
