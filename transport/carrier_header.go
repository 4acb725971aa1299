package transport

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"io"
	"time"
)

// Every channel starts with a carrier header, written by the client and
// consumed by the server: magic "QBD2" (4 bytes), carrier id (8), channel
// index (2), the client's Unix time in ns (8), a random nonce (16) and a
// proof (32): HMAC-SHA256(Options.CarrierSecret, "quicbench carrier" |
// bytes 0-37), zero without a secret. A listener with a secret refuses a
// wrong proof, a time further than CarrierClockSkew from its own, and a
// nonce seen within that window. docs/transport.md has it as a table.
const (
	carrierHeaderLen = 70
	carrierProofAt   = 38
	carrierNonceLen  = 16
)

var (
	carrierMagic    = [4]byte{'Q', 'B', 'D', '2'}
	carrierMagicV1  = [4]byte{'Q', 'B', 'D', '1'}
	carrierProofTag = []byte("quicbench carrier")
)

// MinCarrierSecretLen is the shortest Options.CarrierSecret accepted, in
// bytes.
const MinCarrierSecretLen = 16

// CarrierClockSkew is how far the time in a carrier header may be from the
// listener's clock when the listener has a secret.
const CarrierClockSkew = 5 * time.Minute

// carrierHead is a carrier header's fields.
type carrierHead struct {
	id    uint64
	index int
	at    time.Time
	nonce [carrierNonceLen]byte
	proof [sha256.Size]byte
}

func carrierHeader(id uint64, index int, secret []byte) ([]byte, error) {
	b := make([]byte, carrierHeaderLen)
	copy(b, carrierMagic[:])
	binary.BigEndian.PutUint64(b[4:], id)
	binary.BigEndian.PutUint16(b[12:], uint16(index))
	binary.BigEndian.PutUint64(b[14:], uint64(time.Now().UnixNano()))
	if _, err := rand.Read(b[22:carrierProofAt]); err != nil {
		return nil, fmt.Errorf("transport: carrier header nonce: %w", err)
	}
	if len(secret) > 0 {
		copy(b[carrierProofAt:], carrierProof(secret, b[:carrierProofAt]))
	}
	return b, nil
}

func carrierProof(secret, signed []byte) []byte {
	m := hmac.New(sha256.New, secret)
	m.Write(carrierProofTag)
	m.Write(signed)
	return m.Sum(nil)
}

func readCarrierHeader(r io.Reader) (carrierHead, []byte, error) {
	var h carrierHead
	b := make([]byte, carrierHeaderLen)
	if _, err := io.ReadFull(r, b[:4]); err != nil {
		return h, nil, fmt.Errorf("reading the carrier header: %w", err)
	}
	switch [4]byte(b[:4]) {
	case carrierMagic:
	case carrierMagicV1:
		return h, nil, fmt.Errorf("carrier header has magic %q, an older version's (without a proof of the secret): "+
			"run the same version of quicbench at both ends", b[:4])
	default:
		return h, nil, fmt.Errorf("carrier header has magic %q, want %q: the peer is not a quicbench carrier of this version "+
			"(a fixed-size session's client talks to Listen, not ListenCarrier)", b[:4], carrierMagic[:])
	}
	if _, err := io.ReadFull(r, b[4:]); err != nil {
		return h, nil, fmt.Errorf("reading the carrier header: %w", err)
	}
	h.id = binary.BigEndian.Uint64(b[4:12])
	h.index = int(binary.BigEndian.Uint16(b[12:14]))
	h.at = time.Unix(0, int64(binary.BigEndian.Uint64(b[14:22])))
	copy(h.nonce[:], b[22:carrierProofAt])
	copy(h.proof[:], b[carrierProofAt:])
	return h, b, nil
}
