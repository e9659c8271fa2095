//! The log server's wire protocol, spoken byte by byte as minikafka's client does: frames are a
//! 4-byte big-endian length and a payload, the first names the topic, each published frame is
//! acknowledged with one `K`, and a subscriber receives the log's frames from its start.
//! Malformed input closes only the connection that sent it.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::Duration;

use support::{free_addrs, scratch, Server};

fn frame(payload: &[u8]) -> Vec<u8> {
    let mut out = (payload.len() as u32).to_be_bytes().to_vec();
    out.extend_from_slice(payload);
    out
}

fn connect(addr: &str, topic: &str) -> TcpStream {
    let s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    (&s).write_all(&frame(topic.as_bytes())).unwrap();
    s
}

fn read_frames(s: &mut TcpStream, n: usize) -> Vec<Vec<u8>> {
    (0..n)
        .map(|_| {
            let mut len = [0u8; 4];
            s.read_exact(&mut len).unwrap();
            let mut payload = vec![0u8; u32::from_be_bytes(len) as usize];
            s.read_exact(&mut payload).unwrap();
            payload
        })
        .collect()
}

/// Publishes `payloads` on one connection, all in one write, and waits for their acks.
fn publish(server: &Server, topic: &str, payloads: &[&[u8]]) {
    let mut s = connect(&server.publish, topic);
    let all: Vec<u8> = payloads.iter().flat_map(|p| frame(p)).collect();
    s.write_all(&all).unwrap();
    let mut acks = vec![0u8; payloads.len()];
    s.read_exact(&mut acks).unwrap();
    assert!(acks.iter().all(|&b| b == b'K'), "{acks:?}");
}

/// True once the server has closed `s` (EOF or reset) within the read timeout.
fn closed(s: &mut TcpStream) -> bool {
    let mut b = [0u8; 1];
    matches!(s.read(&mut b), Ok(0) | Err(_))
}

#[test]
fn published_frames_are_acked_and_subscribers_get_them_from_the_start_then_live() {
    let (_dir, data) = scratch();
    let server = Server::start(&data, &free_addrs());
    publish(&server, "t", &[b"one", b"", b"three"]);
    let mut sub = connect(&server.subscribe, "t");
    assert_eq!(read_frames(&mut sub, 3), [&b"one"[..], b"", b"three"]);
    // A heartbeat byte, as minikafka's subscriber sends each second, is ignored.
    sub.write_all(&[0]).unwrap();
    publish(&server, "t", &[b"four"]);
    assert_eq!(read_frames(&mut sub, 1), [b"four"]);
    // Other topics are separate logs.
    publish(&server, "u", &[b"other"]);
    let mut other = connect(&server.subscribe, "u");
    assert_eq!(read_frames(&mut other, 1), [b"other"]);
}

#[test]
fn an_oversize_frame_closes_its_connection_without_an_ack_and_the_server_goes_on() {
    let (_dir, data) = scratch();
    let server = Server::start(&data, &free_addrs());
    let mut bad = connect(&server.publish, "t");
    bad.write_all(&[0xff, 0xff, 0xff, 0xff, 1, 2, 3]).unwrap();
    assert!(closed(&mut bad));
    let mut bad_topic = TcpStream::connect(&server.subscribe).unwrap();
    bad_topic
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    bad_topic.write_all(&[0x7f, 0, 0, 0]).unwrap();
    assert!(closed(&mut bad_topic));
    publish(&server, "t", &[b"fine"]);
    let mut sub = connect(&server.subscribe, "t");
    assert_eq!(read_frames(&mut sub, 1), [b"fine"]);
}

#[test]
fn a_frame_cut_short_by_the_publisher_closing_is_neither_acked_nor_kept() {
    let (_dir, data) = scratch();
    let server = Server::start(&data, &free_addrs());
    {
        let mut s = connect(&server.publish, "t");
        let mut partial = frame(b"whole");
        partial.extend_from_slice(&frame(b"cut short")[..6]);
        s.write_all(&partial).unwrap();
        let mut ack = [0u8; 1];
        s.read_exact(&mut ack).unwrap();
        assert_eq!(&ack, b"K");
        s.shutdown(std::net::Shutdown::Write).unwrap();
        assert!(closed(&mut s));
    }
    publish(&server, "t", &[b"after"]);
    let mut sub = connect(&server.subscribe, "t");
    assert_eq!(read_frames(&mut sub, 2), [&b"whole"[..], b"after"]);
}

#[test]
fn an_empty_or_nul_topic_name_is_refused() {
    let (_dir, data) = scratch();
    let server = Server::start(&data, &free_addrs());
    for name in ["", "a\0b"] {
        let mut s = connect(&server.publish, name);
        s.write_all(&frame(b"x")).unwrap();
        assert!(closed(&mut s), "{name:?}");
    }
}

#[test]
fn with_sync_many_publishers_share_commits_and_each_gets_its_acks() {
    let (_dir, data) = scratch();
    let server = Server::start_with(&data, &free_addrs(), &["--sync"]);
    let publishers: Vec<_> = (0..4u8)
        .map(|w| {
            let addr = server.publish.clone();
            std::thread::spawn(move || {
                let mut s = connect(&addr, "t");
                for i in 0..50u8 {
                    s.write_all(&frame(&[w, i])).unwrap();
                    let mut ack = [0u8; 1];
                    s.read_exact(&mut ack).unwrap();
                    assert_eq!(&ack, b"K");
                }
            })
        })
        .collect();
    for p in publishers {
        p.join().unwrap();
    }
    let mut sub = connect(&server.subscribe, "t");
    let mut next = [0u8; 4];
    for f in read_frames(&mut sub, 200) {
        let (w, i) = (f[0] as usize, f[1]);
        assert_eq!(i, next[w], "publisher {w}'s records in order");
        next[w] += 1;
    }
    assert_eq!(next, [50; 4]);
}
