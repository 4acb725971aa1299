//! quicbench-quinn: quicbench's quinn carrier.
//!
//! The client end listens on one local TCP port per channel and carries
//! every connection made to channel i's port as a new bidirectional stream
//! of one quinn connection to the server end, which connects to channel i's
//! target and relays. Settings come from flags and are printed back, read
//! from quinn where quinn can say, as one JSON line on stdout when the end
//! is ready; the connections' statistics are written as JSON to --stats
//! when the end stops (SIGTERM or SIGINT, or, at the client, when the
//! connection is lost). docs/quinn.md in quicbench says more.

mod config;
mod json;
mod relay;
mod socket;
mod tls;

use std::io::Write;
use std::net::{SocketAddr, UdpSocket};
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use quinn::{Connection, Endpoint, EndpointConfig, Runtime, TokioRuntime, VarInt};
use tokio::net::{TcpListener, TcpStream};
use tokio::signal::unix::{signal, SignalKind};

use config::{Config, Role};
use json::Obj;
use relay::ChannelCounters;
use socket::{OneDatagramSocket, SendCounters};

/// How long the client waits for the handshake.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);
/// How long an end waits, when stopping, for its close to be sent.
const CLOSE_WAIT: Duration = Duration::from_millis(300);

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.is_empty() || args[0] == "-h" || args[0] == "--help" {
        eprintln!("{}", config::USAGE);
        std::process::exit(2);
    }
    let cfg = match Config::parse(&args) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("quicbench-quinn: {e}\n{}", config::USAGE);
            std::process::exit(2);
        }
    };
    let rt = match tokio::runtime::Builder::new_current_thread().enable_all().build() {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("quicbench-quinn: starting the runtime: {e}");
            std::process::exit(1);
        }
    };
    let code = match rt.block_on(run(cfg)) {
        Ok(()) => 0,
        Err(e) => {
            eprintln!("quicbench-quinn: {e}");
            1
        }
    };
    rt.shutdown_timeout(Duration::from_millis(100));
    std::process::exit(code);
}

/// What an end keeps for its stats file.
struct Shared {
    socket: Arc<SendCounters>,
    channels: Vec<Arc<ChannelCounters>>,
    conns: Mutex<Vec<Connection>>,
}

async fn run(cfg: Config) -> Result<(), String> {
    let mut term = signal(SignalKind::terminate()).map_err(|e| format!("catching SIGTERM: {e}"))?;
    let mut int = signal(SignalKind::interrupt()).map_err(|e| format!("catching SIGINT: {e}"))?;
    let shared = Arc::new(Shared {
        socket: Arc::new(SendCounters::default()),
        channels: (0..cfg.channels).map(|_| Arc::new(ChannelCounters::default())).collect(),
        conns: Mutex::new(Vec::new()),
    });
    let bind = match &cfg.role {
        Role::Server { listen, .. } => *listen,
        Role::Client { server, .. } if server.is_ipv6() => "[::]:0".parse().unwrap(),
        Role::Client { .. } => "0.0.0.0:0".parse().unwrap(),
    };
    let udp = UdpSocket::bind(bind).map_err(|e| format!("binding UDP {bind}: {e}"))?;
    let inner = TokioRuntime.wrap_udp_socket(udp).map_err(|e| format!("setting up the UDP socket: {e}"))?;
    let sock = OneDatagramSocket::new(inner, cfg.segmentation, shared.socket.clone());
    let transport = Arc::new(cfg.transport()?);

    let end = async {
        match &cfg.role {
            Role::Server { key, targets, .. } => {
                let mut sc = tls::server(&cfg.cert, key)?;
                sc.transport_config(transport);
                let ep = Endpoint::new_with_abstract_socket(EndpointConfig::default(), Some(sc), sock, TokioRuntime)
                    .map_err(|e| format!("making the endpoint: {e}"))?;
                let addr = ep.local_addr().map_err(|e| e.to_string())?;
                let mut ready = Obj::new();
                ready.str("event", "ready").str("role", "server").str("quic", &addr.to_string());
                say_ready(ready, &cfg);
                tokio::spawn(serve(ep.clone(), targets.clone(), cfg.priorities.clone(), shared.clone()));
                Ok::<_, String>((ep, None))
            }
            Role::Client { server, server_name, listen } => {
                let mut cc = tls::client(&cfg.cert)?;
                cc.transport_config(transport);
                let ep = Endpoint::new_with_abstract_socket(EndpointConfig::default(), None, sock, TokioRuntime)
                    .map_err(|e| format!("making the endpoint: {e}"))?;
                let connecting =
                    ep.connect_with(cc, *server, server_name).map_err(|e| format!("connecting to {server}: {e}"))?;
                let conn = tokio::time::timeout(CONNECT_TIMEOUT, connecting)
                    .await
                    .map_err(|_| format!("no handshake with {server} within {CONNECT_TIMEOUT:?}"))?
                    .map_err(|e| format!("connecting to {server}: {e}"))?;
                shared.conns.lock().unwrap().push(conn.clone());
                let mut addrs = Vec::new();
                for i in 0..cfg.channels {
                    let ln = TcpListener::bind(SocketAddr::new(*listen, 0))
                        .await
                        .map_err(|e| format!("listening for channel {i} on {listen}: {e}"))?;
                    addrs.push(json::string(&ln.local_addr().map_err(|e| e.to_string())?.to_string()));
                    tokio::spawn(carry_channel(ln, i, conn.clone(), cfg.priorities[i], shared.clone()));
                }
                let mut ready = Obj::new();
                ready
                    .str("event", "ready")
                    .str("role", "client")
                    .str("quic", &ep.local_addr().map_err(|e| e.to_string())?.to_string())
                    .str("server", &server.to_string())
                    .raw("channels", &json::array(&addrs))
                    .obj("connection", &connection(&conn));
                say_ready(ready, &cfg);
                Ok((ep, Some(conn)))
            }
        }
    };
    let (ep, conn) = tokio::select! {
        r = end => r?,
        _ = term.recv() => return stop(&cfg, &shared, None, "SIGTERM").await,
        _ = int.recv() => return stop(&cfg, &shared, None, "SIGINT").await,
    };
    let lost = async {
        match &conn {
            Some(c) => c.closed().await.to_string(),
            None => std::future::pending().await,
        }
    };
    let ended = tokio::select! {
        _ = term.recv() => "SIGTERM".to_string(),
        _ = int.recv() => "SIGINT".to_string(),
        why = lost => format!("connection lost: {why}"),
    };
    stop(&cfg, &shared, Some(ep), &ended).await?;
    if conn.is_some() && ended.starts_with("connection lost") {
        return Err(ended);
    }
    Ok(())
}

fn say_ready(mut ready: Obj, cfg: &Config) {
    ready.num("pid", u64::from(std::process::id())).obj("settings", &cfg.settings());
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "{}", ready.render());
    let _ = out.flush();
}

/// The server end: every connection's every stream, to its channel's target.
async fn serve(ep: Endpoint, targets: Vec<String>, priorities: Vec<i32>, shared: Arc<Shared>) {
    let targets = Arc::new(targets);
    let priorities = Arc::new(priorities);
    while let Some(connecting) = ep.accept().await {
        let (targets, priorities, shared) = (targets.clone(), priorities.clone(), shared.clone());
        tokio::spawn(async move {
            let conn = match connecting.await {
                Ok(c) => c,
                Err(e) => {
                    eprintln!("quicbench-quinn: a handshake failed: {e}");
                    return;
                }
            };
            shared.conns.lock().unwrap().push(conn.clone());
            while let Ok((mut send, mut recv)) = conn.accept_bi().await {
                let (targets, priorities, shared) = (targets.clone(), priorities.clone(), shared.clone());
                tokio::spawn(async move {
                    let i = match relay::accept(&mut recv, targets.len()).await {
                        Ok(i) => i,
                        Err(e) => {
                            eprintln!("quicbench-quinn: refusing a stream: {e}");
                            let _ = recv.stop(VarInt::from_u32(2));
                            return;
                        }
                    };
                    let _ = send.set_priority(priorities[i]);
                    match TcpStream::connect(&targets[i]).await {
                        Ok(tcp) => relay::carry(tcp, send, recv, shared.channels[i].clone()).await,
                        Err(e) => {
                            eprintln!("quicbench-quinn: channel {i}: connecting to {}: {e}", targets[i]);
                            let _ = send.reset(VarInt::from_u32(3));
                            let _ = recv.stop(VarInt::from_u32(3));
                        }
                    }
                });
            }
        });
    }
}

/// The client end: every connection to channel i's port, as a new stream.
async fn carry_channel(ln: TcpListener, i: usize, conn: Connection, priority: i32, shared: Arc<Shared>) {
    while let Ok((tcp, _)) = ln.accept().await {
        let (conn, shared) = (conn.clone(), shared.clone());
        tokio::spawn(async move {
            let (mut send, recv) = match conn.open_bi().await {
                Ok(s) => s,
                Err(e) => {
                    eprintln!("quicbench-quinn: channel {i}: opening a stream: {e}");
                    return;
                }
            };
            let _ = send.set_priority(priority);
            if let Err(e) = relay::open(&mut send, i).await {
                eprintln!("quicbench-quinn: channel {i}: {e}");
                return;
            }
            relay::carry(tcp, send, recv, shared.channels[i].clone()).await;
        });
    }
}

/// A connection's state as quinn reports it.
fn connection(conn: &Connection) -> Obj {
    let c = config::controller(conn.congestion_state());
    let s = conn.stats();
    let udp = |datagrams: u64, bytes: u64, transmits: u64| {
        let mut o = Obj::new();
        o.num("datagrams", datagrams).num("bytes", bytes).num("transmits", transmits);
        o
    };
    let mut o = Obj::new();
    o.str("remote", &conn.remote_address().to_string())
        .str("controller", c.name)
        .num("initial_window", c.initial_window)
        .num("cwnd", s.path.cwnd)
        .num("rtt_us", s.path.rtt.as_micros() as u64)
        .num("congestion_events", s.path.congestion_events)
        .num("lost_packets", s.path.lost_packets)
        .num("lost_bytes", s.path.lost_bytes)
        .num("sent_packets", s.path.sent_packets)
        .obj("udp_tx", &udp(s.udp_tx.datagrams, s.udp_tx.bytes, s.udp_tx.transmits))
        .obj("udp_rx", &udp(s.udp_rx.datagrams, s.udp_rx.bytes, s.udp_rx.transmits));
    if let Some(why) = conn.close_reason() {
        o.str("closed", &why.to_string());
    }
    o
}

/// Writes the stats file, then closes the connections and the endpoint.
async fn stop(cfg: &Config, shared: &Shared, ep: Option<Endpoint>, ended: &str) -> Result<(), String> {
    let conns: Vec<Connection> = shared.conns.lock().unwrap().clone();
    let s = &shared.socket;
    let mut sock = Obj::new();
    sock.str("segmentation", cfg.segmentation.name())
        .num("transmits", s.transmits.load(Ordering::Relaxed))
        .num("batches", s.batches.load(Ordering::Relaxed))
        .num("datagrams", s.datagrams.load(Ordering::Relaxed))
        .num("max_datagram", s.max_datagram.load(Ordering::Relaxed))
        .num("quinn_gso_segments", s.quinn_gso_segments.load(Ordering::Relaxed));
    let channels: Vec<String> = shared
        .channels
        .iter()
        .enumerate()
        .map(|(i, c)| {
            let mut o = Obj::new();
            o.num("ch", i as u64)
                .num("streams", c.streams.load(Ordering::Relaxed))
                .num("bytes_from_tcp", c.from_tcp.load(Ordering::Relaxed))
                .num("bytes_to_tcp", c.to_tcp.load(Ordering::Relaxed));
            o.render()
        })
        .collect();
    let mut out = Obj::new();
    out.str("role", if matches!(cfg.role, Role::Server { .. }) { "server" } else { "client" })
        .str("ended", ended)
        .obj("settings", &cfg.settings())
        .obj("socket", &sock)
        .raw("connections", &json::array(&conns.iter().map(|c| connection(c).render()).collect::<Vec<_>>()))
        .raw("channels", &json::array(&channels));
    let written = write_file(&cfg.stats, &out.render());
    for c in &conns {
        c.close(VarInt::from_u32(0), b"stopped");
    }
    if let Some(ep) = ep {
        ep.close(VarInt::from_u32(0), b"stopped");
        let _ = tokio::time::timeout(CLOSE_WAIT, ep.wait_idle()).await;
    }
    written
}

/// Writes path whole or not at all: a temporary file beside it, renamed.
fn write_file(path: &str, body: &str) -> Result<(), String> {
    let tmp = format!("{path}.tmp");
    std::fs::write(&tmp, format!("{body}\n")).map_err(|e| format!("writing --stats {tmp}: {e}"))?;
    std::fs::rename(&tmp, path).map_err(|e| format!("renaming {tmp} to --stats {path}: {e}"))
}
