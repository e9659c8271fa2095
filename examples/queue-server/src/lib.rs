//! A queue server on ShaleDB's durable queues, speaking Kestrel's memcache text protocol, so
//! memcache clients and Kestrel's, darner's and siberite's load tools drive it.
//!
//! `STORED` means the item reached the operating system (`set q/sync`: stable storage); a
//! reliable read (`get q/open`) stays reserved for its client until `/close` (acknowledged,
//! gone) or `/abort` (back at the head); it goes back by itself when the client disconnects,
//! and a crash keeps it (the core redelivers every open reservation after reopen).
//!
//! Layers: [`protocol`] (bytes to requests, pure), [`session`] (one client's requests against
//! the queues), [`connection`] (the socket loop), [`server`] (accepting connections).
#![deny(unsafe_code)]

pub mod config;
pub mod connection;
pub mod protocol;
pub mod queues;
pub mod server;
pub mod session;
pub mod stats;
