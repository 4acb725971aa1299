//! Command-line flags, and the quinn and rustls settings made from them.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use quinn::congestion::{Bbr, BbrConfig, Controller, ControllerFactory, Cubic, CubicConfig, NewReno, NewRenoConfig};
use quinn::{IdleTimeout, TransportConfig, VarInt};

use crate::json::Obj;
use crate::socket::Segmentation;

pub const USAGE: &str = "usage:
  quicbench-quinn server --listen IP:PORT --cert FILE --key FILE --targets ADDR,ADDR,... --cc CTRL --stats FILE [common flags]
  quicbench-quinn client --server IP:PORT --cert FILE --channels N --cc CTRL --stats FILE [--listen IP] [--server-name NAME] [common flags]
common flags:
  --datagram N            UDP payload size, bytes (1400)
  --connection-window N   connection flow-control window, bytes (16777216)
  --stream-window N       stream flow-control window, bytes (8388608)
  --initial-window N      the controller's initial window, bytes (0: quinn's default for it)
  --priorities P,P,...    each channel's stream priority, higher first (all 0)
  --segmentation MODE     off: one datagram per packet; kernel: quinn's own offload batches (off)
  --idle-timeout-ms N     QUIC idle timeout (60000)
  --keep-alive-ms N       QUIC keep-alive period (5000)
CTRL is cubic, bbr or newreno.";

/// The role's flags, checked.
#[derive(Debug)]
pub struct Config {
    pub role: Role,
    pub cc: String,
    pub datagram: u16,
    pub connection_window: u64,
    pub stream_window: u64,
    pub initial_window: u64,
    pub priorities: Vec<i32>,
    pub segmentation: Segmentation,
    pub idle_timeout: Duration,
    pub keep_alive: Duration,
    pub cert: String,
    pub stats: String,
    pub channels: usize,
}

#[derive(Debug)]
pub enum Role {
    Server { listen: SocketAddr, key: String, targets: Vec<String> },
    Client { server: SocketAddr, server_name: String, listen: std::net::IpAddr },
}

/// The application protocol both ends name in TLS.
pub const ALPN: &[u8] = b"quicbench-quinn";

fn number<T: std::str::FromStr>(flag: &str, v: &str) -> Result<T, String> {
    v.parse().map_err(|_| format!("{flag} {v:?}: not a number of the right size"))
}

impl Config {
    pub fn parse(args: &[String]) -> Result<Config, String> {
        let role = args.first().map(String::as_str).unwrap_or("");
        if role != "server" && role != "client" {
            return Err(format!("the first argument must be server or client, not {role:?}"));
        }
        let mut flags = std::collections::HashMap::new();
        let mut it = args[1..].iter();
        while let Some(f) = it.next() {
            let name = f.strip_prefix("--").ok_or_else(|| format!("{f:?}: expected a --flag"))?;
            let v = it.next().ok_or_else(|| format!("--{name} needs a value"))?;
            if flags.insert(name.to_string(), v.clone()).is_some() {
                return Err(format!("--{name} given twice"));
            }
        }
        let mut take = |name: &str| flags.remove(name);
        let need = |v: Option<String>, name: &str| v.ok_or_else(|| format!("--{name} is required for the {role}"));

        let cc = need(take("cc"), "cc")?;
        if !matches!(cc.as_str(), "cubic" | "bbr" | "newreno") {
            return Err(format!("--cc {cc:?}: use cubic, bbr or newreno"));
        }
        let datagram: u16 = number("--datagram", &take("datagram").unwrap_or("1400".into()))?;
        if datagram < 1200 {
            return Err(format!("--datagram {datagram}: QUIC needs at least 1200"));
        }
        let connection_window = number("--connection-window", &take("connection-window").unwrap_or("16777216".into()))?;
        let stream_window = number("--stream-window", &take("stream-window").unwrap_or("8388608".into()))?;
        let initial_window = number("--initial-window", &take("initial-window").unwrap_or("0".into()))?;
        let segmentation = Segmentation::parse(&take("segmentation").unwrap_or("off".into()))?;
        let idle: u64 = number("--idle-timeout-ms", &take("idle-timeout-ms").unwrap_or("60000".into()))?;
        let keep: u64 = number("--keep-alive-ms", &take("keep-alive-ms").unwrap_or("5000".into()))?;
        let cert = need(take("cert"), "cert")?;
        let stats = need(take("stats"), "stats")?;
        let priorities = take("priorities");

        let (role, channels) = if role == "server" {
            let listen = need(take("listen"), "listen")?;
            let listen = listen.parse().map_err(|_| format!("--listen {listen:?}: give IP:PORT"))?;
            let key = need(take("key"), "key")?;
            let targets: Vec<String> = need(take("targets"), "targets")?.split(',').map(str::to_string).collect();
            if targets.iter().any(|t| t.is_empty()) {
                return Err("--targets: an empty address; give one TCP address per channel, comma-separated".into());
            }
            let n = targets.len();
            (Role::Server { listen, key, targets }, n)
        } else {
            let server = need(take("server"), "server")?;
            let server = server.parse().map_err(|_| format!("--server {server:?}: give IP:PORT"))?;
            let server_name = take("server-name").unwrap_or("quicbench.invalid".into());
            let listen = take("listen").unwrap_or("127.0.0.1".into());
            let listen = listen.parse().map_err(|_| format!("--listen {listen:?}: give an IP address"))?;
            let n: usize = number("--channels", &need(take("channels"), "channels")?)?;
            (Role::Client { server, server_name, listen }, n)
        };
        if channels == 0 || channels > 1000 {
            return Err(format!("{channels} channels: give between 1 and 1000"));
        }
        let priorities = match priorities {
            None => vec![0; channels],
            Some(p) => {
                let p: Vec<i32> = p.split(',').map(|v| number("--priorities", v)).collect::<Result<_, _>>()?;
                if p.len() != channels {
                    return Err(format!("--priorities has {} values for {channels} channels", p.len()));
                }
                p
            }
        };
        if let Some(k) = flags.keys().next() {
            return Err(format!("--{k} is not a flag of the {}", if matches!(role, Role::Server { .. }) { "server" } else { "client" }));
        }
        Ok(Config {
            role,
            cc,
            datagram,
            connection_window,
            stream_window,
            initial_window,
            priorities,
            segmentation,
            idle_timeout: Duration::from_millis(idle),
            keep_alive: Duration::from_millis(keep),
            cert,
            stats,
            channels,
        })
    }

    /// The controller's factory: quinn's configuration for --cc, with the
    /// datagram size, and the initial window when given.
    fn factory(&self) -> Arc<dyn ControllerFactory + Send + Sync> {
        let d = u64::from(self.datagram);
        match self.cc.as_str() {
            "bbr" => {
                let mut c = BbrConfig::default();
                c.max_datagram_size(d).minimum_window(4 * d);
                if self.initial_window > 0 {
                    c.initial_window(self.initial_window);
                }
                Arc::new(Arc::new(c))
            }
            "newreno" => {
                let mut c = NewRenoConfig::default();
                c.max_datagram_size(d).minimum_window(2 * d);
                if self.initial_window > 0 {
                    c.initial_window(self.initial_window);
                }
                Arc::new(Arc::new(c))
            }
            _ => {
                let mut c = CubicConfig::default();
                c.max_datagram_size(d).minimum_window(2 * d);
                if self.initial_window > 0 {
                    c.initial_window(self.initial_window);
                }
                Arc::new(Arc::new(c))
            }
        }
    }

    pub fn transport(&self) -> Result<TransportConfig, String> {
        let mut t = TransportConfig::default();
        let window = |v: u64, flag: &str| VarInt::from_u64(v).map_err(|_| format!("{flag} {v}: too large"));
        t.initial_max_udp_payload_size(self.datagram)
            .receive_window(window(self.connection_window, "--connection-window")?)
            .stream_receive_window(window(self.stream_window, "--stream-window")?)
            .send_window(self.connection_window)
            .max_concurrent_bidi_streams(window(self.channels.max(100) as u64, "--channels")?)
            .max_concurrent_uni_streams(0u32.into())
            .keep_alive_interval(Some(self.keep_alive).filter(|d| !d.is_zero()))
            .max_idle_timeout(Some(
                IdleTimeout::try_from(self.idle_timeout).map_err(|_| "--idle-timeout-ms: too large".to_string())?,
            ))
            .congestion_controller_factory(FactoryRef(self.factory()));
        Ok(t)
    }

    /// The settings as a JSON object, with the controller a fresh one made
    /// by quinn from them is (read back from quinn, not from the flags).
    pub fn settings(&self) -> Obj {
        let probe = controller(self.factory().build(Instant::now()));
        let mut o = Obj::new();
        o.str("cc", &self.cc)
            .str("controller", probe.name)
            .num("initial_window", probe.initial_window)
            .num("controller_datagram", u64::from(self.datagram))
            .num("datagram", u64::from(self.datagram))
            .bool("pmtud", false)
            .num("connection_window", self.connection_window)
            .num("stream_window", self.stream_window)
            .num("send_window", self.connection_window)
            .raw("priorities", &crate::json::ints(&self.priorities))
            .str("segmentation", self.segmentation.name())
            .str("tls", "1.3")
            .str("alpn", std::str::from_utf8(ALPN).unwrap_or(""))
            .num("idle_timeout_ms", self.idle_timeout.as_millis() as u64)
            .num("keep_alive_ms", self.keep_alive.as_millis() as u64)
            .str("quinn", env!("QUICBENCH_QUINN_VERSION"))
            .str("quinn_proto", env!("QUICBENCH_QUINN_PROTO_VERSION"))
            .str("quinn_udp", env!("QUICBENCH_QUINN_UDP_VERSION"))
            .str("rustls", env!("QUICBENCH_RUSTLS_VERSION"))
            .str("tokio", env!("QUICBENCH_TOKIO_VERSION"));
        o
    }
}

/// A factory quinn can own that hands out the shared one's controllers.
struct FactoryRef(Arc<dyn ControllerFactory + Send + Sync>);

impl ControllerFactory for FactoryRef {
    fn build(&self, now: Instant) -> Box<dyn Controller> {
        self.0.build(now)
    }
}

/// What a controller is, read from the controller itself.
pub struct ControllerState {
    pub name: &'static str,
    pub initial_window: u64,
}

pub fn controller(c: Box<dyn Controller>) -> ControllerState {
    let initial_window = c.initial_window();
    let any = c.into_any();
    let name = if any.is::<Cubic>() {
        "cubic"
    } else if any.is::<Bbr>() {
        "bbr"
    } else if any.is::<NewReno>() {
        "newreno"
    } else {
        "unknown"
    };
    ControllerState { name, initial_window }
}
