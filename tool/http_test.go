package tool

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/agentcraftlab/agentcraft/internal/egress"
)

func egressClient(t *testing.T, allow ...string) *http.Client {
	t.Helper()
	g, err := (&egress.Policy{Allow: allow}).Compile()
	if err != nil {
		t.Fatal(err)
	}
	return g.Client()
}

func TestHTTPRequest(t *testing.T) {
	mux := http.NewServeMux()
	mux.HandleFunc("/echo", func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"method":%q,"ctype":%q,"x":%q,"body":%q}`, r.Method, r.Header.Get("Content-Type"), r.Header.Get("X-Test"), body)
	})
	mux.HandleFunc("/big", func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, strings.Repeat("a", 5000)) })
	mux.HandleFunc("/missing", func(w http.ResponseWriter, r *http.Request) { http.Error(w, "no such item", http.StatusNotFound) })
	mux.HandleFunc("/png", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "image/png")
		w.Write([]byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR"))
	})
	mux.HandleFunc("/redirect", func(w http.ResponseWriter, r *http.Request) { http.Redirect(w, r, "/echo", http.StatusFound) })
	mux.HandleFunc("/slow", func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-time.After(5 * time.Second):
		}
	})
	mux.HandleFunc("/empty", func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusNoContent) })
	srv := httptest.NewServer(mux)
	defer srv.Close()

	h, err := NewHTTPRequest(egressClient(t, "127.0.0.1"), &HTTPOptions{MaxResponseBytes: 1000, Timeout: 300 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		args    string
		want    string // substring
		wantErr bool
	}{
		{args: `{"url":"` + srv.URL + `/echo"}`, want: "HTTP 200 OK\nContent-Type: application/json\n\n{\"method\":\"GET\",\"ctype\":\"\",\"x\":\"\",\"body\":\"\"}"},
		{args: `{"url":"` + srv.URL + `/echo","method":"POST","body":"{\"a\":1}","headers":{"X-Test":"yes"}}`, want: `{"method":"POST","ctype":"application/json","x":"yes","body":"{\"a\":1}"}`},
		{args: `{"url":"` + srv.URL + `/echo","method":"PUT","body":"plain","headers":{"Content-Type":"text/plain"}}`, want: `"method":"PUT","ctype":"text/plain"`},
		{args: `{"url":"` + srv.URL + `/echo","method":"DELETE"}`, want: `"method":"DELETE"`},
		{args: `{"url":"` + srv.URL + `/redirect"}`, want: `"method":"GET"`},
		{args: `{"url":"` + srv.URL + `/big"}`, want: strings.Repeat("a", 1000) + "\n[body truncated at 1000 bytes]"},
		{args: `{"url":"` + srv.URL + `/png"}`, want: "(binary body, image/png, 16 bytes read: not shown)"},
		{args: `{"url":"` + srv.URL + `/empty"}`, want: "HTTP 204 No Content\n\n(empty body)"},
		{args: `{"url":"` + srv.URL + `/missing"}`, want: "HTTP 404 Not Found", wantErr: true},
		{args: `{"url":"` + srv.URL + `/slow"}`, want: "did not finish within 300ms", wantErr: true},
		{args: `{"url":"` + srv.URL + `/echo","method":"HEAD"}`, want: `"method"`, wantErr: true},
		{args: `{"url":"file:///etc/passwd"}`, want: "not an absolute http or https URL", wantErr: true},
		{args: `{"url":"/relative"}`, want: "not an absolute http or https URL", wantErr: true},
		{args: `{"url":"` + srv.URL + `","headers":{"X-A":"b\r\nX-Injected: 1"}}`, want: "not a valid HTTP header", wantErr: true},
		{args: `{"url":"` + srv.URL + `","headers":{"X-A":1}}`, want: `"headers.X-A" must be string`, wantErr: true},
	}
	for _, tt := range tests {
		res := call(t, h, tt.args)
		if res.IsError != tt.wantErr || !strings.Contains(res.Content, tt.want) {
			t.Errorf("http_request %s = %+v, want %q (error %v)", tt.args, res, tt.want, tt.wantErr)
		}
	}
}

// TestHTTPRequestEgress: with the default policy the loopback server is
// refused at dial time, directly and through a redirect from an allowed
// host.
func TestHTTPRequestEgress(t *testing.T) {
	hits := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { hits++ }))
	defer srv.Close()
	h, err := NewHTTPRequest(egressClient(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, u := range []string{srv.URL, strings.Replace(srv.URL, "127.0.0.1", "localhost", 1), "http://169.254.169.254/latest/meta-data/"} {
		res := call(t, h, `{"url":"`+u+`"}`)
		if !res.IsError || !strings.Contains(res.Content, "refused by the server's outbound policy") {
			t.Errorf("http_request %s = %+v, want a policy refusal", u, res)
		}
	}
	if hits != 0 {
		t.Errorf("the loopback server was reached %d times", hits)
	}
}

func TestNewHTTPRequestNeedsClient(t *testing.T) {
	if _, err := NewHTTPRequest(nil, nil); err == nil || !strings.Contains(err.Error(), "egress") {
		t.Errorf("NewHTTPRequest(nil) error = %v, want one pointing to the egress client", err)
	}
}

func TestHTTPRequestCancelled(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { <-r.Context().Done() }))
	defer srv.Close()
	h, err := NewHTTPRequest(egressClient(t, "127.0.0.1"), nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if _, err := h.Call(ctx, json.RawMessage(`{"url":"`+srv.URL+`"}`)); err == nil {
		t.Error("a cancelled call returned no Go error")
	}
}
