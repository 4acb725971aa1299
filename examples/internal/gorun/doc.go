// Package gorun makes an example command end when the go run that started
// it is killed.
//
// go run builds a command and starts it as a child. Killed with SIGKILL,
// go run cannot pass the signal on, and the command goes on alone (with
// the emulator's spinners, namespaces and traces it holds) until it
// finishes. Follow, called first in main, asks the kernel to send the
// command SIGTERM when go run ends, so that it stops as it does on
// Ctrl-C and cleans up. A command started any other way (its own binary,
// a shell, a test) is left alone.
//
//	func main() {
//		gorun.Follow()
//		...
//	}
//
// It is for the commands under examples/; nothing else imports it.
package gorun
