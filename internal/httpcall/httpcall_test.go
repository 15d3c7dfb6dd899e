package httpcall

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
)

func TestDo(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		w.Header().Set("X-Ctype", r.Header.Get("Content-Type"))
		io.WriteString(w, r.Method+" "+string(body)+" "+strings.Repeat("x", 20))
	}))
	defer srv.Close()
	tests := []struct {
		req       Request
		wantBody  string
		wantCtype string
		truncated bool
	}{
		{Request{URL: srv.URL, MaxResponseBytes: 100}, "GET  " + strings.Repeat("x", 20), "", false},
		{Request{Method: "POST", URL: srv.URL, Body: []byte(`{"a":1}`), MaxResponseBytes: 100}, `POST {"a":1} ` + strings.Repeat("x", 20), "application/json", false},
		{Request{Method: "POST", URL: srv.URL, Body: []byte(`{}`), Header: map[string]string{"Content-Type": "text/plain"}, MaxResponseBytes: 100}, "POST {} " + strings.Repeat("x", 20), "text/plain", false},
		{Request{URL: srv.URL, MaxResponseBytes: 10}, "GET  xxxxx", "", true},
	}
	for _, tt := range tests {
		resp, err := Do(context.Background(), srv.Client(), &tt.req)
		if err != nil {
			t.Fatalf("Do(%+v): %v", tt.req, err)
		}
		if string(resp.Body) != tt.wantBody || resp.Header.Get("X-Ctype") != tt.wantCtype || resp.Truncated != tt.truncated {
			t.Errorf("Do(%+v) = %q ctype %q truncated %v; want %q, %q, %v", tt.req, resp.Body, resp.Header.Get("X-Ctype"), resp.Truncated, tt.wantBody, tt.wantCtype, tt.truncated)
		}
	}
	_, err := Do(context.Background(), srv.Client(), &Request{URL: srv.URL, MaxResponseBytes: 10, Header: map[string]string{"X-A": "b\r\nX-Injected: 1"}})
	var herr *HeaderError
	if !errors.As(err, &herr) || herr.Name != "X-A" {
		t.Errorf("Do with a header holding a line break: error %v, want a *HeaderError naming X-A", err)
	}
}

func TestRetry(t *testing.T) {
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if calls.Add(1) < 3 {
			w.WriteHeader(http.StatusBadGateway)
			return
		}
		io.WriteString(w, "ok")
	}))
	defer srv.Close()
	do := func() (*Response, error) {
		return Do(context.Background(), srv.Client(), &Request{URL: srv.URL, MaxResponseBytes: 10})
	}
	resp, err := Retry(context.Background(), 1, do)
	if err != nil || resp.StatusCode != http.StatusBadGateway || calls.Load() != 2 {
		t.Fatalf("Retry(1) = %v, %v after %d calls; want the second 502", resp, err, calls.Load())
	}
	calls.Store(0)
	resp, err = Retry(context.Background(), 3, do)
	if err != nil || string(resp.Body) != "ok" || calls.Load() != 3 {
		t.Errorf("Retry(3) = %v, %v after %d calls; want ok on the third", resp, err, calls.Load())
	}
	// A refused header is not retried: no attempt could succeed.
	calls.Store(0)
	_, err = Retry(context.Background(), 3, func() (*Response, error) {
		calls.Add(1)
		return Do(context.Background(), srv.Client(), &Request{URL: srv.URL, MaxResponseBytes: 10, Header: map[string]string{"X": "\n"}})
	})
	if err == nil || calls.Load() != 1 {
		t.Errorf("Retry of a refused header: %v after %d attempts, want an error after 1", err, calls.Load())
	}
}
