//! Hostile HTTP servers, each a few lines of `std::net` in a thread: one
//! that ignores `If-Match` and serves a changed object (its ETag differs:
//! the read must fail with `Error::Changed`, not mix versions), and one that
//! never answers (the request must be abandoned after the configured
//! timeout, with an error that says so, not after object_store's 3 minutes).

use std::io::{BufRead, BufReader, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use npy_core::{DType, Header, Order};
use npy_remote::ErrorKind;
use npy_remote::{RemoteArray, Store, StoreOptions};

/// The request line and headers of one request, lower-cased header names.
fn read_request(stream: &TcpStream) -> Vec<String> {
    let mut reader = BufReader::new(stream);
    let mut lines = Vec::new();
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).unwrap_or(0) == 0 {
            break;
        }
        let line = line.trim_end().to_string();
        if line.is_empty() {
            break;
        }
        lines.push(line.to_ascii_lowercase());
    }
    lines
}

/// An `.npy` of 100 little-endian u32 (0..100), as `np.save` writes it.
fn object() -> Vec<u8> {
    let header = Header::new(DType::parse("<u4").unwrap(), Order::C, vec![100]);
    let mut file = header.to_bytes(None).unwrap();
    file.extend((0u32..100).flat_map(u32::to_le_bytes));
    file
}

/// Serves `file` at any path, ranged, ignoring `If-Match`: the first
/// response carries ETag "v1", every later one "v2" (the object was
/// replaced). Returns the port and the requests seen.
fn server_ignoring_if_match(file: Vec<u8>) -> (u16, Arc<Mutex<Vec<Vec<String>>>>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let seen = Arc::new(Mutex::new(Vec::new()));
    let log = seen.clone();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            let request = read_request(&stream);
            let served = {
                let mut log = log.lock().unwrap();
                log.push(request.clone());
                log.len()
            };
            let e_tag = if served == 1 { "\"v1\"" } else { "\"v2\"" };
            let range = request
                .iter()
                .find_map(|line| line.strip_prefix("range: bytes="))
                .and_then(|r| r.split_once('-'))
                .map(|(a, b)| (a.parse::<usize>().unwrap(), b.parse::<usize>().ok()));
            let total = file.len();
            let (start, end) = match range {
                Some((a, b)) => (a, b.map_or(total, |b| (b + 1).min(total))),
                None => (0, total),
            };
            let body = &file[start.min(total)..end];
            let status = if range.is_some() {
                format!(
                    "HTTP/1.1 206 Partial Content\r\nContent-Range: bytes {start}-{}/{total}\r\n",
                    end - 1
                )
            } else {
                "HTTP/1.1 200 OK\r\n".to_string()
            };
            let head = format!(
                "{status}Content-Length: {}\r\nETag: {e_tag}\r\nConnection: close\r\n\r\n",
                body.len()
            );
            let _ = stream.write_all(head.as_bytes());
            let _ = stream.write_all(body);
        }
    });
    (port, seen)
}

#[tokio::test]
async fn a_server_ignoring_if_match_cannot_hand_over_a_changed_object() {
    let file = object();
    let (port, seen) = server_ignoring_if_match(file.clone());
    let url = format!("http://127.0.0.1:{port}/a.npy");
    let (store, path) = Store::from_url(&url).unwrap();
    let array = RemoteArray::open(store.objects().clone(), path)
        .await
        .unwrap();
    assert_eq!(array.header().shape, [100]);
    let err = array.read_rows(0..10).await.unwrap_err();
    assert!(matches!(err.kind(), ErrorKind::Changed { .. }), "{err:?}");
    assert!(
        err.to_string().ends_with(
            "the object changed since it was opened (its ETag no longer matches); open it again"
        ),
        "{err}"
    );
    // The read asked for the pinned version, and the server ignored it.
    let requests = seen.lock().unwrap();
    assert!(
        requests[1].iter().any(|line| line == "if-match: \"v1\""),
        "{requests:?}"
    );
}

/// Accepts connections and reads the request, then says nothing, holding
/// each connection open for a minute.
fn silent_server() -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(stream) = stream else { continue };
            std::thread::spawn(move || {
                let _request = read_request(&stream);
                std::thread::sleep(Duration::from_secs(60));
                drop(stream);
            });
        }
    });
    port
}

#[tokio::test]
async fn a_silent_server_is_abandoned_after_the_timeout() {
    let port = silent_server();
    let url = format!("http://127.0.0.1:{port}/a.npy");
    let options = StoreOptions {
        timeout: Duration::from_millis(300),
    };
    let (store, path) = Store::from_url_with(&url, &options).unwrap();
    // Bounded by the timeout (and its retries), well inside the server's
    // minute: a hang would keep the server's connection until it closes.
    let err = RemoteArray::open(store.objects().clone(), path)
        .await
        .unwrap_err();
    let text = format!("{err} {:?}", std::error::Error::source(&err));
    assert!(matches!(err.kind(), ErrorKind::Store { .. }), "{err:?}");
    assert!(
        text.to_ascii_lowercase().contains("timed out") || text.contains("timeout"),
        "{text}"
    );
    assert_eq!(StoreOptions::default().timeout, Duration::from_secs(30));
}

/// Serves `file` at any path, always whole (status 200, no Range support),
/// or, with `claimed_len`, announcing that length and sending only the
/// first bytes. Returns the port and the number of requests seen.
fn server_without_ranges(file: Vec<u8>, claimed_len: Option<usize>) -> (u16, Arc<Mutex<usize>>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let seen = Arc::new(Mutex::new(0));
    let count = seen.clone();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            let _request = read_request(&stream);
            *count.lock().unwrap() += 1;
            let head = format!(
                "HTTP/1.1 200 OK\r\nContent-Length: {}\r\nETag: \"v1\"\r\nConnection: close\r\n\r\n",
                claimed_len.unwrap_or(file.len())
            );
            let _ = stream.write_all(head.as_bytes());
            let _ = stream.write_all(&file);
        }
    });
    (port, seen)
}

#[tokio::test]
async fn a_small_object_on_a_server_without_ranges_is_read_with_one_plain_get() {
    let file = object();
    let (port, seen) = server_without_ranges(file.clone(), None);
    let url = format!("http://127.0.0.1:{port}/a.npy");
    let (store, path) = Store::from_url(&url).unwrap();
    let array = RemoteArray::open(store.objects().clone(), path)
        .await
        .unwrap();
    assert_eq!(array.header().shape, [100]);
    let rows = array.read_rows(10..20).await.unwrap();
    let expected: Vec<u8> = (10u32..20).flat_map(u32::to_le_bytes).collect();
    assert_eq!(rows.bytes(), expected);
    // The ranged GET that came back whole, then one plain GET; every
    // later read is answered from the kept object.
    assert_eq!(*seen.lock().unwrap(), 2);
    array.read_rows(0..100).await.unwrap();
    assert_eq!(*seen.lock().unwrap(), 2);
}

#[tokio::test]
async fn a_big_object_on_a_server_without_ranges_is_refused_saying_why() {
    let claimed = usize::try_from(npy_remote::UNRANGED_READ_LIMIT).unwrap() + 1;
    let (port, _) = server_without_ranges(object(), Some(claimed));
    let url = format!("http://127.0.0.1:{port}/big.npy");
    let (store, path) = Store::from_url(&url).unwrap();
    let err = RemoteArray::open(store.objects().clone(), path)
        .await
        .unwrap_err();
    let text = err.to_string();
    assert!(
        text.contains("the server does not support ranged reads")
            && text.contains(&format!(
                "the object is {claimed} bytes, more than the 64 MiB"
            )),
        "{text}"
    );
}

#[tokio::test]
async fn a_refused_connection_fails_without_retries() {
    // A port nothing listens on: bound, then closed.
    let port = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let url = format!("http://127.0.0.1:{port}/a.npy");
    let (store, path) = Store::from_url(&url).unwrap();
    let err = RemoteArray::open(store.objects().clone(), path)
        .await
        .unwrap_err();
    let mut text = err.to_string();
    let mut source = std::error::Error::source(&err);
    while let Some(cause) = source {
        text.push_str(&format!(" / {cause}"));
        source = cause.source();
    }
    assert!(matches!(err.kind(), ErrorKind::Store { .. }), "{err:?}");
    assert!(text.to_ascii_lowercase().contains("connect"), "{text}");
    // object_store says how many times it retried, when it did.
    assert!(!text.contains("retries"), "{text}");
}

/// Answers every request with 404 and an S3-style XML body over lines.
fn server_of_nothing() -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            let _request = read_request(&stream);
            let body = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<Error>\n  \
                        <Code>NoSuchKey</Code>\n  <Message>The specified key does not exist.\
                        </Message>\n</Error>\n";
            let head = format!(
                "HTTP/1.1 404 Not Found\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
                body.len()
            );
            let _ = stream.write_all(head.as_bytes());
            let _ = stream.write_all(body.as_bytes());
        }
    });
    port
}

#[tokio::test]
async fn a_missing_object_is_one_line_not_the_servers_body() {
    let port = server_of_nothing();
    let url = format!("http://127.0.0.1:{port}/missing.npy");
    let (store, path) = Store::from_url(&url).unwrap();
    let err = RemoteArray::open(store.objects().clone(), path)
        .await
        .unwrap_err();
    assert!(err.is_not_found(), "{err:?}");
    assert_eq!(err.to_string(), "open missing.npy: no such object");
}

/// Issue 29: a server that accepts the connection (the kernel does, for a
/// listener nobody `accept`s) and never answers is abandoned within one
/// deadline for the whole operation, twice the timeout, not after the
/// first request's timeout plus each retry's: 1 s gave up after about 4 s,
/// the default 30 s after 120 s. The error names the timeout.
#[tokio::test]
async fn a_server_that_never_answers_is_abandoned_within_twice_the_timeout() {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let url = format!("http://127.0.0.1:{port}/a.npy");
    let options = StoreOptions {
        timeout: Duration::from_secs(1),
    };
    let (store, path) = Store::from_url_with(&url, &options).unwrap();
    let started = std::time::Instant::now();
    let err = RemoteArray::open(store.objects().clone(), path)
        .await
        .unwrap_err();
    let took = started.elapsed();
    let text = format!("{err}");
    assert!(matches!(err.kind(), ErrorKind::Store { .. }), "{err:?}");
    assert!(
        took < Duration::from_secs(3),
        "gave up after {took:?}: {text}"
    );
    assert!(
        text.contains("no answer within 2 s (twice the 1 s timeout"),
        "{text}"
    );
    drop(listener);
}
