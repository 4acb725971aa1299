// Command singleflow runs one bulk flow at a time over a shaped link, for
// each of quic-go and kernel TCP with a chosen congestion control, and
// prints goodput, the window's back-off after a loss and the initial
// window per cell; package measure/singleflow is the measurement.
//
//	go run ./examples/singleflow -workdir results/singleflow
//
// Each run is added to -workdir's results.json as it ends; the same
// command run again resumes the directory (measured runs are kept, failed
// ones run again), and other settings are refused.
//
// Flows using quicreno (the BPF controller that copies quic-go's) need
// root in the initial user namespace.
package main
