package transport

// Limits the external tests check.
const (
	MaxMuxRefusalsQueued = maxMuxRefusalsQueued
	MuxCarrierChannels   = muxCarrierChannels
)
