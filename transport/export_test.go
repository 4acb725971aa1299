package transport

// Limits the external tests check.
const (
	MaxMuxRefusalsQueued = maxMuxRefusalsQueued
	MuxCarrierChannels   = muxCarrierChannels
	MuxMaxPayload        = muxMaxPayload
	MuxWindow            = muxWindow
	MaxEndedListed       = maxEndedListed
)
