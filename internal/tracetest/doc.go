// Package tracetest helps the tests that change the kernel's tracing
// (calibrate's -trace-late): a lock that keeps them from overlapping when
// go test runs packages side by side, and a check that no trigger was
// left behind.
//
//	func TestSomethingTraced(t *testing.T) {
//		tracetest.Lock(t)
//		... arm and close a trace ...
//		tracetest.NoTrigger(t, triggerFileText)
//	}
//
// It is for tests only; nothing else imports it.
package tracetest
