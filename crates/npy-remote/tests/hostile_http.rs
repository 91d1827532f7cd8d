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
    assert!(matches!(err, npy_remote::Error::Changed { .. }), "{err:?}");
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
    assert!(matches!(err, npy_remote::Error::Store { .. }), "{err:?}");
    assert!(
        text.to_ascii_lowercase().contains("timed out") || text.contains("timeout"),
        "{text}"
    );
    assert_eq!(StoreOptions::default().timeout, Duration::from_secs(30));
}
