package web

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/text/encoding/japanese"

	"github.com/agentcraftlab/agentcraft/internal/egress"
)

// guard compiles an egress policy allowing allow.
func guard(t *testing.T, allow ...string) *egress.Guard {
	t.Helper()
	g, err := (&egress.Policy{Allow: allow}).Compile()
	if err != nil {
		t.Fatal(err)
	}
	return g
}

func newFetch(t *testing.T, g *egress.Guard, opts *FetchOptions) *Fetch {
	t.Helper()
	f, err := NewFetch(g.Client(), opts)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// articlePage is a news page: the article between a navigation bar, a
// sidebar of ads and a footer.
const articlePage = `<!DOCTYPE html>
<html><head><meta charset="utf-8"><title>Otters hold hands while sleeping | River News</title>
<meta name="author" content="Ada Lovelace"><style>body{font:12px}</style>
<script>var tracking = "SCRIPT-NOISE";</script></head>
<body>
<header><nav class="menu"><ul><li><a href="/">Home NAV-NOISE</a></li><li><a href="/world">World</a></li><li><a href="/sport">Sport</a></li><li><a href="/about">About us</a></li></ul></nav></header>
<div class="sidebar ad-banner"><p><a href="https://ads.example/1">ADS-NOISE: Buy cheap watches now!</a></p><p><a href="https://ads.example/2">Sponsored: win a cruise</a></p></div>
<main><article>
<h1>Otters hold hands while sleeping</h1>
<p class="byline">By Ada Lovelace</p>
<p>Sea otters are known for a remarkable habit: when they rest on the water, pairs and small groups hold each other's paws so that the current does not carry them apart while they sleep. Researchers call such a group a raft, and rafts of more than a hundred animals have been counted along the coast.</p>
<p>The behaviour is most common among mothers and their pups, but adults do it too. Biologists who watched a colony for three winters found that otters which slept alone drifted, on average, several hundred metres a night, while those in a raft stayed within a few dozen metres of where they had fallen asleep.</p>
<p>Otters also wrap themselves in kelp, which anchors them to the sea floor. Where kelp forests have shrunk, the researchers say, holding hands has become more important, and rafts have grown larger over the past decade.</p>
</article></main>
<footer><p>FOOTER-NOISE Copyright 2026 River News. All rights reserved.</p><p><a href="/privacy">Privacy</a> <a href="/terms">Terms</a></p></footer>
</body></html>`

func TestFetchArticle(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, articlePage)
	}))
	defer srv.Close()
	f := newFetch(t, guard(t, "127.0.0.1"), nil)
	res := call(t, f, `{"url":"`+srv.URL+`/news/otters#top"}`)
	if res.IsError {
		t.Fatalf("error result: %s", res.Content)
	}
	// readability drops the site's name from the title.
	wantHead := "Title: Otters hold hands while sleeping\nByline: Ada Lovelace\nURL: " + srv.URL + "/news/otters\n\n"
	if !strings.HasPrefix(res.Content, wantHead) {
		t.Errorf("result starts %q, want %q", res.Content[:min(len(res.Content), len(wantHead)+40)], wantHead)
	}
	for _, kept := range []string{"Sea otters are known for a remarkable habit", "drifted, on average", "wrap themselves in kelp"} {
		if !strings.Contains(res.Content, kept) {
			t.Errorf("the article's text %q is missing from:\n%s", kept, res.Content)
		}
	}
	for _, noise := range []string{"NAV-NOISE", "ADS-NOISE", "FOOTER-NOISE", "SCRIPT-NOISE", "font:12px"} {
		if strings.Contains(res.Content, noise) {
			t.Errorf("the page's noise %q was kept:\n%s", noise, res.Content)
		}
	}
	if strings.Contains(res.Content, "\n\n\n") {
		t.Errorf("more than one blank line in a row:\n%s", res.Content)
	}
}

func TestFetchEgress(t *testing.T) {
	var hits atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		if r.URL.Path == "/hop" {
			// A public-looking start that sends the fetch home.
			http.Redirect(w, r, r.URL.Query().Get("to"), http.StatusFound)
			return
		}
		fmt.Fprint(w, "secret admin page")
	}))
	defer srv.Close()
	port := srv.URL[strings.LastIndex(srv.URL, ":")+1:]

	res := call(t, newFetch(t, guard(t), nil), `{"url":"`+srv.URL+`/admin"}`)
	if !res.IsError || !strings.Contains(res.Content, "outbound policy") || !strings.Contains(res.Content, "127.0.0.1") {
		t.Errorf("loopback without allow: %+v, want a refusal naming the policy and the address", res)
	}
	res = call(t, newFetch(t, guard(t), nil), `{"url":"http://localhost:`+port+`/admin"}`)
	if !res.IsError || !strings.Contains(res.Content, "outbound policy") {
		t.Errorf("localhost without allow: %+v, want a refusal", res)
	}
	if n := hits.Load(); n != 0 {
		t.Fatalf("the server was reached %d times", n)
	}

	// Allowed by address, the page is read; a redirect from it to a name
	// the policy does not allow (localhost) is refused at that hop.
	f := newFetch(t, guard(t, "127.0.0.1:"+port), nil)
	if res := call(t, f, `{"url":"`+srv.URL+`/admin"}`); res.IsError || !strings.Contains(res.Content, "secret admin page") {
		t.Errorf("allow-listed: %+v, want the page", res)
	}
	to := url.QueryEscape("http://localhost:" + port + "/admin")
	before := hits.Load()
	res = call(t, f, `{"url":"`+srv.URL+`/hop?to=`+to+`"}`)
	if !res.IsError || !strings.Contains(res.Content, "outbound policy") {
		t.Errorf("redirect to localhost: %+v, want a refusal", res)
	}
	if n := hits.Load() - before; n != 1 {
		t.Errorf("redirect to localhost: the server got %d requests, want 1 (the hop only)", n)
	}
}

func TestFetchLimits(t *testing.T) {
	para := strings.Repeat("Lorem ipsum dolor sit amet, consectetur adipiscing elit. ", 20)
	mux := http.NewServeMux()
	mux.HandleFunc("/long.txt", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		fmt.Fprint(w, strings.Repeat("0123456789", 1000)) // 10000 bytes
	})
	mux.HandleFunc("/huge.html", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, "<html><head><title>Huge</title></head><body><article>")
		for range 2000 {
			fmt.Fprintf(w, "<p>%s</p>", para)
		}
		fmt.Fprint(w, "<p>THE-END</p></article></body></html>")
	})
	mux.HandleFunc("/loop", func(w http.ResponseWriter, r *http.Request) { http.Redirect(w, r, "/loop", http.StatusFound) })
	mux.HandleFunc("/slow", func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-time.After(5 * time.Second):
		}
	})
	srv := httptest.NewServer(mux)
	defer srv.Close()
	g := guard(t, "127.0.0.1")

	f := newFetch(t, g, &FetchOptions{MaxTextBytes: 4000})
	res := call(t, f, `{"url":"`+srv.URL+`/long.txt"}`)
	if res.IsError || !strings.Contains(res.Content, `[text cut at byte 4000 of 10000: call web_fetch again with "offset": 4000 to read on]`) {
		t.Errorf("long text: %+v, want it cut at 4000 with the offset to read on", res)
	}
	res = call(t, f, `{"url":"`+srv.URL+`/long.txt","offset":8000}`)
	body := res.Content[strings.Index(res.Content, "\n\n")+2:]
	if res.IsError || !strings.Contains(res.Content, "Text from byte 8000 of 10000\n") || body != strings.Repeat("0123456789", 200) {
		t.Errorf("offset 8000: %q, want the last 2000 bytes", res.Content)
	}
	if res := call(t, f, `{"url":"`+srv.URL+`/long.txt","offset":10000}`); !res.IsError || !strings.Contains(res.Content, "past the end") {
		t.Errorf("offset at the end: %+v, want an error", res)
	}

	f = newFetch(t, g, &FetchOptions{MaxBytes: 64 << 10, MaxTextBytes: 1 << 20})
	res = call(t, f, `{"url":"`+srv.URL+`/huge.html"}`)
	if res.IsError || strings.Contains(res.Content, "THE-END") || !strings.Contains(res.Content, "[the page is longer than 65536 bytes: only its beginning was read]") ||
		!strings.Contains(res.Content, "Lorem ipsum") {
		t.Errorf("huge page: error %v, %d bytes ending %q; want its beginning and the note", res.IsError, len(res.Content), res.Content[max(0, len(res.Content)-200):])
	}

	f = newFetch(t, g, &FetchOptions{MaxRedirects: 2})
	if res := call(t, f, `{"url":"`+srv.URL+`/loop"}`); !res.IsError || !strings.Contains(res.Content, "stopped after 2 redirects") {
		t.Errorf("redirect loop: %+v, want stopped after 2 redirects", res)
	}
	f = newFetch(t, g, &FetchOptions{Timeout: 200 * time.Millisecond})
	if res := call(t, f, `{"url":"`+srv.URL+`/slow"}`); !res.IsError || !strings.Contains(res.Content, "did not finish within 200ms") {
		t.Errorf("slow page: %+v, want a timeout", res)
	}
}

func TestFetchContentTypes(t *testing.T) {
	sjis, _ := japanese.ShiftJIS.NewEncoder().String("<html><head><title>お知らせ</title></head><body><p>本日は晴天なり。</p></body></html>")
	pages := map[string]struct{ ctype, body string }{
		"/plain":   {"text/plain; charset=utf-8", "\n\n  just text, trimmed  \n\n"},
		"/json":    {"application/json", ` {"a": [1, 2]} ` + "\n"},
		"/feed":    {"application/atom+xml", `<feed><title>t</title></feed>`},
		"/png":     {"image/png", "\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR"},
		"/pdf":     {"application/pdf", "%PDF-1.7\n"},
		"/sniffed": {"", "<!DOCTYPE html><html><head><title>No header</title></head><body><p>sniffed as html</p></body></html>"},
		"/sjis":    {"text/html; charset=shift_jis", sjis},
		"/gone":    {"text/html", "<html><body><p>This page was removed.</p></body></html>"},
		"/gonepng": {"image/png", "\x89PNG"},
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p := pages[r.URL.Path]
		if p.ctype != "" {
			w.Header().Set("Content-Type", p.ctype)
		} else {
			w.Header()["Content-Type"] = nil // no sniffing by net/http
		}
		if strings.HasPrefix(r.URL.Path, "/gone") {
			w.WriteHeader(http.StatusGone)
		}
		fmt.Fprint(w, p.body)
	}))
	defer srv.Close()
	f := newFetch(t, guard(t, "127.0.0.1"), nil)
	tests := []struct {
		path    string
		want    string
		wantErr bool
	}{
		{"/plain", "URL: " + srv.URL + "/plain\nContent-Type: text/plain\n\njust text, trimmed", false},
		{"/json", "URL: " + srv.URL + "/json\nContent-Type: application/json\n\n{\"a\": [1, 2]}", false},
		{"/feed", "Content-Type: application/atom+xml\n\n<feed><title>t</title></feed>", false},
		{"/png", srv.URL + "/png is image/png, which web_fetch does not read: it reads HTML pages, plain text, JSON and XML", true},
		{"/pdf", "is application/pdf, which web_fetch does not read", true},
		{"/sniffed", "Title: No header\nURL: " + srv.URL + "/sniffed\n\nsniffed as html", false},
		{"/sjis", "Title: お知らせ\nURL: " + srv.URL + "/sjis\n\n本日は晴天なり。", false},
		{"/gone", "HTTP 410 Gone from " + srv.URL + "/gone\n\nThis page was removed.", true},
		{"/gonepng", "HTTP 410 Gone from " + srv.URL + "/gonepng", true},
	}
	for _, tt := range tests {
		res := call(t, f, `{"url":"`+srv.URL+tt.path+`"}`)
		if res.IsError != tt.wantErr || !strings.Contains(res.Content, tt.want) {
			t.Errorf("%s: (error %v) %q\nwant (error %v) %q", tt.path, res.IsError, res.Content, tt.wantErr, tt.want)
		}
	}
}

func TestFetchBadArguments(t *testing.T) {
	f := newFetch(t, guard(t), nil)
	for _, args := range []string{`{}`, `{"url":"example.com/x"}`, `{"url":"ftp://example.com/"}`, `{"url":"https://example.com","offset":-1}`, `{"url":"https://x","method":"POST"}`} {
		res, err := f.Call(context.Background(), json.RawMessage(args))
		if err != nil || !res.IsError {
			t.Errorf("Call(%s) = %+v, %v; want an error result", args, res, err)
		}
	}
	if _, err := NewFetch(nil, nil); err == nil {
		t.Error("NewFetch(nil client) succeeded")
	}
	if _, err := NewFetch(guard(t).Client(), &FetchOptions{MaxBytes: -1}); err == nil {
		t.Error("NewFetch(MaxBytes -1) succeeded")
	}
}

// TestReadableHostileHTML: pages built to make an HTML-to-text pass slow
// or deep (nesting past the parser's limit, tens of thousands of
// elements, links everywhere) are read in bounded time, and still give
// their text.
func TestReadableHostileHTML(t *testing.T) {
	u, _ := url.Parse("https://example.com/a")
	cases := map[string]struct{ html, want string }{
		"nesting past the parser's limit": {strings.Repeat("<div>", 2000) + "deep text" + strings.Repeat("</div>", 2000), "deep text"},
		"too many elements to score":      {strings.Repeat("<div><a href=x>link, text</a></div>", maxReadableElements/2+1), "link, text"},
		"many links, scored":              {strings.Repeat("<div><a href=x>link, text</a></div>", maxReadableElements/8), "link, text"},
		"deep and wide":                   {strings.Repeat(strings.Repeat("<div>", 500)+"<p>a, b, c, d, e, f</p>"+strings.Repeat("</div>", 500), 4), "a, b, c, d, e, f"},
		"unclosed tables":                 {strings.Repeat("<table><tr><td>cell, x", 6000), "cell, x"},
		"unclosed script":                 {"<p>before</p><script>" + strings.Repeat("x", 1<<20), "before"},
		"half a megabyte of text":         {"<p>" + strings.Repeat("lorem ipsum, dolor sit amet ", 20000), "lorem ipsum"},
	}
	for name, c := range cases {
		start := time.Now()
		p := readable([]byte(c.html), u)
		// Each takes well under a second; the bound is loose for
		// the race detector on a loaded machine, and catches a
		// quadratic (or endless) pass, which takes minutes.
		d := time.Since(start)
		t.Logf("%s: %v", name, d)
		if d > 30*time.Second {
			t.Errorf("%s: took %v", name, d)
		}
		if !strings.Contains(p.text, c.want) {
			t.Errorf("%s: text %q does not contain %q", name, p.text[:min(200, len(p.text))], c.want)
		}
		if strings.Contains(p.text, "<div>") || strings.Contains(p.text, "<table>") {
			t.Errorf("%s: markup left in the text: %q", name, p.text[:min(200, len(p.text))])
		}
	}
}
