// Package hostile holds the end-to-end test of the sandbox: it builds the
// real agentcraft binary, starts `agentcraft serve`, and sends it the
// inputs that took the server down before scripts and file parsers ran in
// a child process (a code node filling a 40-million-element array, a PDF
// whose page tree loops), while /health is polled every 100 ms. It checks
// that each request ends with a clear error within its limit, that /health
// always answered, and that the server's peak resident memory stayed
// within a bound, and logs the times and the peak.
//
//	go test -v ./e2e/hostile
//
// -short skips it (building the binary takes a while).
package hostile
