// Package quiccross carries a shaped link's QUIC cross flows (the profile
// option cross=NxKIND with KIND quic) with quic-go: importing it registers
// its runner with shapedlink, which carries TCP cross flows itself.
//
//	import _ "github.com/shakenfist/quicbench/shapedlink/quiccross"
//
//	p, _ := shapedlink.ParseProfile("80:10,down.cross=1xquic")
//	link, err := shapedlink.New(ctx, p, shapedlink.Options{})
//
// Each flow is one quic-go connection with one stream, sent as fast as
// its controller allows (quic-go's NewReno, pacing on), with the QUIC
// arms' settings: 1400-byte datagrams, path MTU discovery off, the
// arms' flow-control windows, TLS 1.3, and no UDP segmentation offload
// (transport.WithoutGSO).
package quiccross
