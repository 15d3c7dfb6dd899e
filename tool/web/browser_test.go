package web

import (
	"context"
	"encoding/json"
	"fmt"
	"image/png"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentcraftlab/agentcraft/internal/egress"
	"github.com/agentcraftlab/agentcraft/internal/egress/egresstest"
)

// needChromium skips the test where Chromium is not installed; CI
// installs it (.ci/run), so there the tests run.
func needChromium(t *testing.T) {
	t.Helper()
	if _, err := os.Stat("/usr/bin/chromium"); err != nil {
		t.Skip("Chromium is not installed at /usr/bin/chromium (apt-get install chromium)")
	}
}

// hostPort is the host:port of a test server.
func hostPort(srv *httptest.Server) string {
	u, _ := url.Parse(srv.URL)
	return u.Host
}

// counting serves h and counts the requests it gets.
func counting(t *testing.T, h http.HandlerFunc) (*httptest.Server, *atomic.Int64) {
	t.Helper()
	var n atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n.Add(1)
		h(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv, &n
}

func newBrowser(t *testing.T, allow []string, opts *BrowserOptions) *Browser {
	t.Helper()
	b, err := NewBrowser(guard(t, allow...), opts)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func browse(t *testing.T, b *Browser, actions ...map[string]any) (string, bool) {
	t.Helper()
	args, _ := json.Marshal(map[string]any{"actions": actions})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	res, err := b.Call(ctx, args)
	if err != nil {
		t.Fatalf("Call: %v", err)
	}
	return res.Content, res.IsError
}

const buttonPage = `<!DOCTYPE html><html><head><title>Button test</title></head><body>
<p id="out">not clicked</p>
<button id="go" onclick="document.getElementById('out').textContent = 'clicked at ' + location.pathname">Go</button>
<input id="q"><button id="copy" onclick="document.getElementById('echo').textContent = 'you typed ' + document.getElementById('q').value">Copy</button>
<p id="echo"></p>
<form id="f" onsubmit="event.preventDefault(); document.getElementById('sent').textContent = 'submitted ' + this.elements.w.value"><input name="w"></form>
<p id="sent"></p>
<ul><li>one</li><li>two</li></ul>
</body></html>`

func TestBrowserClick(t *testing.T) {
	needChromium(t)
	srv, _ := counting(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, buttonPage)
	})
	b := newBrowser(t, []string{hostPort(srv)}, nil)
	out, isErr := browse(t, b,
		map[string]any{"open": srv.URL + "/page"},
		map[string]any{"extract": "#out"},
		map[string]any{"click": "#go"},
		map[string]any{"extract": "#out"},
		map[string]any{"type": map[string]any{"selector": "#q", "text": "otters"}},
		map[string]any{"click": "#copy"},
		map[string]any{"type": map[string]any{"selector": "input[name=w]", "text": "kelp", "submit": true}},
		map[string]any{"wait": "#sent:not(:empty)"},
		map[string]any{"extract": "#echo, #sent"},
		map[string]any{"extract": "li"},
	)
	if isErr {
		t.Fatalf("error result:\n%s", out)
	}
	want := "1. open " + srv.URL + "/page: HTTP 200, title \"Button test\"\n" +
		"2. extract \"#out\":\nnot clicked\n" +
		"3. click \"#go\": done\n" +
		"4. extract \"#out\":\nclicked at /page\n" +
		"5. type \"otters\" into \"#q\": done\n" +
		"6. click \"#copy\": done\n" +
		"7. type \"kelp\" into \"input[name=w]\" and press Enter: done\n" +
		"8. wait for \"#sent:not(:empty)\": visible\n" +
		"9. extract \"#echo, #sent\": 2 matches\n[1] you typed otters\n[2] submitted kelp\n" +
		"10. extract \"li\": 2 matches\n[1] one\n[2] two"
	if out != want {
		t.Errorf("transcript:\n%s\nwant:\n%s", out, want)
	}
}

// TestBrowserEgress: every request of the page follows the policy — a
// sub-resource at a refused address, one through a loopback name, a
// script's fetch, and one whose name resolves to an allowed address for
// the check and to a refused one when the proxy connects (DNS rebinding):
// none reaches its server, and the result lists them.
func TestBrowserEgress(t *testing.T) {
	needChromium(t)
	refusedSrv, refusedHits := counting(t, func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "secret") })
	// The rebinding target listens on 127.0.0.2, which the policy
	// refuses; the name's first answer, 127.0.0.1, it allows.
	ln, err := net.Listen("tcp", "127.0.0.2:0")
	if err != nil {
		t.Skipf("cannot listen on 127.0.0.2: %v", err)
	}
	var reboundHits atomic.Int64
	rebound := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { reboundHits.Add(1) }))
	rebound.Listener.Close()
	rebound.Listener = ln
	rebound.Start()
	defer rebound.Close()
	reboundPort := rebound.Listener.Addr().(*net.TCPAddr).Port
	var lookups atomic.Int64
	resolver := egresstest.Resolver(t, func(name string, n int) []string {
		if name != "rebind.test" {
			return nil
		}
		lookups.Add(1)
		if n == 1 {
			return []string{"127.0.0.1"}
		}
		return []string{"127.0.0.2"}
	})

	refused := hostPort(refusedSrv)
	refusedPort := refused[strings.LastIndex(refused, ":")+1:]
	page, _ := counting(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/redirect" {
			http.Redirect(w, r, refusedSrv.URL+"/admin", http.StatusFound)
			return
		}
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprintf(w, `<!DOCTYPE html><html><head><title>Egress</title></head><body>
<img src="http://%[1]s/pixel.png">
<img src="http://localhost:%[2]s/named.png">
<img src="http://rebind.test:%[3]d/rebound.png">
<p id="done"></p>
<script>
fetch("http://%[1]s/api").catch(() => {}).finally(() => { document.getElementById("done").textContent = "fetched"; });
</script></body></html>`, refused, refusedPort, reboundPort)
	})
	g, err := (&egress.Policy{Resolver: resolver, Allow: []string{hostPort(page), fmt.Sprintf("127.0.0.1:%d", reboundPort)}}).Compile()
	if err != nil {
		t.Fatal(err)
	}
	b, err := NewBrowser(g, nil)
	if err != nil {
		t.Fatal(err)
	}

	start := time.Now()
	out, isErr := browse(t, b, map[string]any{"open": page.URL + "/"}, map[string]any{"wait": "#done:not(:empty)"})
	t.Logf("%v:\n%s", time.Since(start), out)
	if isErr {
		t.Fatalf("error result:\n%s", out)
	}
	for _, want := range []string{
		"Refused by the outbound policy (4):",
		"- http://" + refused + "/pixel.png: loopback address",
		"- http://localhost:" + refusedPort + "/named.png: loopback host name",
		"- http://" + refused + "/api: loopback address",
		// Refused by the proxy, on the second answer.
		fmt.Sprintf("- http://rebind.test:%d/rebound.png: loopback address", reboundPort),
	} {
		if !strings.Contains(out, want) {
			t.Errorf("result does not list %q:\n%s", want, out)
		}
	}
	if n := refusedHits.Load(); n != 0 {
		t.Errorf("the refused server got %d requests", n)
	}
	if n := reboundHits.Load(); n != 0 {
		t.Errorf("the rebinding target got %d requests", n)
	}
	if n := lookups.Load(); n < 2 {
		t.Errorf("rebind.test was looked up %d times, want the check's and the proxy's", n)
	}

	// Opening a refused address is refused before Chromium is asked to,
	// and so is a page that redirects there.
	for _, open := range []string{refusedSrv.URL + "/admin", "http://localhost:" + refusedPort + "/admin", page.URL + "/redirect"} {
		out, isErr = browse(t, b, map[string]any{"open": open}, map[string]any{"extract": "body"})
		if !isErr || !strings.Contains(out, "1. open "+open+": FAILED: ") || !strings.Contains(out, "outbound policy") || !strings.Contains(out, "(1 later actions not run)") {
			t.Errorf("open %s: (error %v)\n%s\nwant a refusal", open, isErr, out)
		}
	}
	if n := refusedHits.Load(); n != 0 {
		t.Errorf("the refused server got %d requests", n)
	}
}

func TestBrowserScreenshotAndFailures(t *testing.T) {
	needChromium(t)
	srv, _ := counting(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, buttonPage)
	})
	dir := t.TempDir()
	b := newBrowser(t, []string{hostPort(srv)}, &BrowserOptions{FilesDir: dir, ActionTimeout: time.Second})
	out, isErr := browse(t, b, map[string]any{"open": srv.URL}, map[string]any{"screenshot": true})
	if isErr {
		t.Fatalf("error result:\n%s", out)
	}
	_, after, ok := strings.Cut(out, "2. screenshot: saved as ")
	name, _, _ := strings.Cut(after, " ")
	if !ok || !strings.HasPrefix(name, "screenshots/") || !strings.Contains(out, "(1280×800, ") {
		t.Fatalf("result:\n%s\nwant a screenshot saved under screenshots/, 1280×800", out)
	}
	f, err := os.Open(filepath.Join(dir, filepath.FromSlash(name)))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := png.Decode(f); err != nil {
		t.Errorf("%s is not a PNG: %v", name, err)
	}

	out, isErr = browse(t, b, map[string]any{"open": srv.URL}, map[string]any{"click": "#missing"}, map[string]any{"extract": "body"})
	want := "1. open " + srv.URL + ": HTTP 200, title \"Button test\"\n" +
		"2. click \"#missing\": FAILED: no visible element matched \"#missing\" within 1s\n(1 later actions not run)"
	if !isErr || out != want {
		t.Errorf("missing element: (error %v)\n%s\nwant:\n%s", isErr, out, want)
	}

	b = newBrowser(t, []string{hostPort(srv)}, &BrowserOptions{MaxOutputBytes: 200})
	out, _ = browse(t, b, map[string]any{"open": srv.URL}, map[string]any{"screenshot": true}, map[string]any{"extract": "body"})
	if !strings.Contains(out, "2. screenshot: not taken: ") || !strings.Contains(out, "[output cut at 200 bytes") {
		t.Errorf("no files directory, 200 bytes: %s", out)
	}
}

func TestBrowserArguments(t *testing.T) {
	b := newBrowser(t, nil, &BrowserOptions{Chromium: "/nonexistent/chromium"})
	for _, tt := range []struct{ args, want string }{
		{`{}`, `"actions"`},
		{`{"actions":[]}`, `actions`},
		{`{"actions":[{"click":"#a"}]}`, `must be {"open": "<url>"}`},
		{`{"actions":[{"open":"https://example.com","click":"#a"}]}`, `actions.0`},
		{`{"actions":[{"open":"https://example.com"},{"clik":"#a"}]}`, `unknown argument "actions.1.clik"`},
		{`{"actions":[{"open":"https://example.com"},{"type":{"selector":"#q"}}]}`, `"actions.1.type.text"`},
		{`{"actions":[{"open":"https://example.com"},{"screenshot":false}]}`, `actions.1.screenshot`},
	} {
		res, err := b.Call(context.Background(), json.RawMessage(tt.args))
		if err != nil || !res.IsError || !strings.Contains(res.Content, tt.want) {
			t.Errorf("Call(%s) = %+v, %v; want an error mentioning %s", tt.args, res, err, tt.want)
		}
	}
	res, err := b.Call(context.Background(), json.RawMessage(`{"actions":[{"open":"https://example.com"}]}`))
	if err != nil || !res.IsError || !strings.Contains(res.Content, "Chromium is not installed at the configured path \"/nonexistent/chromium\"") ||
		!strings.Contains(res.Content, "apt-get install chromium") {
		t.Errorf("no Chromium: %+v, %v; want an error saying how to install it", res, err)
	}
	if _, err := NewBrowser(nil, nil); err == nil {
		t.Error("NewBrowser(nil guard) succeeded")
	}
}
