package cli

import (
	"net"
	"net/http"
	"sync"
)

// closeSilentOnShutdown makes hs.Shutdown close the connections that have
// not sent a request instead of waiting for them. http.Server.Shutdown
// counts such a connection (StateNew) as active until it is 5 s old, and
// clients open them ahead of need: Go's transport keeps a connection it
// dialled for a request another connection served, and browsers open
// speculative ones. Each held a shutdown of serve up to 5 s (about one in
// ten under load in the tests). Closing them loses nothing: a request
// whose reading ends after the shutdown began is dropped by http.Server
// unanswered. It sets hs.ConnState.
func closeSilentOnShutdown(hs *http.Server) {
	s := &silentConns{conns: map[net.Conn]struct{}{}}
	hs.ConnState = s.track
	hs.RegisterOnShutdown(s.closeAll)
}

// silentConns tracks a server's connections that have not yet sent a
// request (http.StateNew); once closing, it closes each as it comes (one
// accepted just before Shutdown closed the listener is tracked after
// closeAll ran).
type silentConns struct {
	mu      sync.Mutex
	closing bool
	conns   map[net.Conn]struct{}
}

func (s *silentConns) track(c net.Conn, st http.ConnState) {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case st == http.StateNew && s.closing:
		_ = c.Close()
	case st == http.StateNew:
		s.conns[c] = struct{}{}
	default:
		delete(s.conns, c)
	}
}

// closeAll closes the silent connections, and those that come after.
func (s *silentConns) closeAll() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closing = true
	for c := range s.conns {
		_ = c.Close()
	}
	clear(s.conns)
}
