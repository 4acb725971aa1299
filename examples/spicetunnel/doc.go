// Command spicetunnel runs one end of a SPICE tunnel: it carries a real
// SPICE client's channels to a real spice-server over one of the transport
// arms, passes every byte through unchanged, and writes a trace of every
// SPICE message it relays (see spicelike/spicetrace for the format).
//
// The server end listens for carriers and connects each carried channel to
// spice-server; the client end is what the SPICE client connects to (as if
// it were spice-server), and it opens a carrier channel for each of the
// client's connections (one per SPICE channel):
//
//	head -c 32 /dev/urandom | base64 > tunnel.secret; chmod 600 tunnel.secret
//	go run ./examples/spicetunnel -end server -arm quic -listen 198.18.0.1:4433 -secret-file tunnel.secret \
//	    -spice 127.0.0.1:5900 -cert tunnel-cert.pem -key tunnel-key.pem -trace server.jsonl
//	go run ./examples/spicetunnel -end client -arm quic -listen 127.0.0.1:5900 -secret-file tunnel.secret \
//	    -server 198.18.0.1:4433 -cert tunnel-cert.pem -trace client.jsonl
//	spicy -h 127.0.0.1 -p 5900 -w PASSWORD
//
// For the QUIC arms the server end needs a certificate and its key: when
// the two files named by -cert and -key do not exist, it makes a new
// self-signed pair and writes them there; give the certificate file (not
// the key) to the client end. The TCP arm needs neither. -cc pins the TCP
// congestion control of the carrier's connections (the tcp arm).
//
// Every channel the server end accepts becomes a plain connection to
// spice-server, so both ends need -secret-file, the same secret: the
// client end proves it holds it in every channel's header, and the server
// end refuses a channel without the proof (see
// measure/spicetunnel for what is and is not protected). The
// server end holds at most -limit channels at once, and -peer-limit from
// one address; beyond them a channel is refused, and the refusals are
// logged at a bounded rate.
//
// The spice-server must be reached without TLS (the tunnel follows the
// protocol, so it must see it) and with ticket (password) authentication,
// not SASL; a connection the tunnel cannot follow is still carried, and
// the summary says why it was not traced.
//
// Each end runs until SIGINT or SIGTERM, then flushes its trace, prints
// what every channel carried as JSON on stdout (an empty list when none
// was), and exits 0. It exits 2 for a usage error, and 1 when it could not
// run or its listener failed. To run a whole session
// over a shaped link, with Xspice, spicy, keystrokes and the latency
// figure, use examples/spicelive.
package main
