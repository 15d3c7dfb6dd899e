package cli

import (
	"context"
	"net"
	"net/http"
	"sync"
	"time"
)

// shutdownServer is hs.Shutdown that does not wait for connections that
// never sent a request. http.Server.Shutdown counts such a connection
// (StateNew) as active until it is 5 s old, and clients open them ahead
// of need: Go's transport keeps a connection it dialled for a request
// another connection served, and browsers open speculative ones. Each
// held a shutdown of serve up to 5 s (about one in ten under load in the
// tests). Closing them loses nothing: a request whose reading ends after
// the shutdown began is dropped by http.Server unanswered. silent is
// trackSilent(hs).
func shutdownServer(ctx context.Context, hs *http.Server, silent *silentConns) error {
	done := make(chan struct{})
	defer close(done)
	go func() {
		// Again until Shutdown returns: a connection accepted just before
		// it closed the listener is tracked after the first pass.
		t := time.NewTicker(100 * time.Millisecond)
		defer t.Stop()
		for {
			silent.closeAll()
			select {
			case <-done:
				return
			case <-t.C:
			}
		}
	}()
	return hs.Shutdown(ctx)
}

// silentConns tracks a server's connections that have not yet sent a
// request (http.StateNew).
type silentConns struct {
	mu    sync.Mutex
	conns map[net.Conn]struct{}
}

// trackSilent sets hs.ConnState to track its silent connections.
func trackSilent(hs *http.Server) *silentConns {
	s := &silentConns{conns: map[net.Conn]struct{}{}}
	hs.ConnState = s.track
	return s
}

func (s *silentConns) track(c net.Conn, st http.ConnState) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if st == http.StateNew {
		s.conns[c] = struct{}{}
	} else {
		delete(s.conns, c)
	}
}

// closeAll closes the silent connections.
func (s *silentConns) closeAll() {
	s.mu.Lock()
	old := make([]net.Conn, 0, len(s.conns))
	for c := range s.conns {
		old = append(old, c)
	}
	clear(s.conns)
	s.mu.Unlock()
	for _, c := range old {
		_ = c.Close()
	}
}
