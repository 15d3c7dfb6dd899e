// Package studio serves AgentCraft's web studio: the React app under web/,
// built by `make studio` into dist/ here and embedded in the binary, so
// that `go build` and `agentcraft serve` need no Node.js.
//
// Handler serves the built files. Hashed assets (dist/assets/*) are cached
// for a year as immutable; index.html is revalidated on every load, so a
// new build reaches browsers at once. Every answer carries a strict
// Content-Security-Policy (no inline scripts or styles, nothing from other
// origins), nosniff and a Referrer-Policy. A GET of a path without a dot
// outside the API's prefixes is a client route of the app and answers
// index.html; the router in the browser draws the page.
//
//	srv, err := server.New(p, &server.Options{Studio: studio.Handler()})
package studio

import (
	"embed"
	"io/fs"
	"net/http"
	"path"
	"strings"
)

//go:embed dist
var dist embed.FS

// CSP is the Content-Security-Policy of every answer. The app loads its
// scripts and styles from its own origin and talks only to it (the API,
// AG-UI streams); nothing may frame it.
const CSP = "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; font-src 'self'; " +
	"connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"

// reservedPrefixes are the server's own surfaces: a path under one is never
// a client route, so an unknown API path is not answered with the app's
// page. The server routes these before the studio; the list here keeps a
// Handler mounted on its own from answering them with index.html.
var reservedPrefixes = []string{"/api", "/v1", "/auth", "/mcp", "/a2a", "/agui", "/oauth", "/.well-known", "/health", "/ready"}

// Reserved reports whether p is under one of the server's own prefixes
// (/api, /v1, /auth, /mcp, /a2a, /agui, /oauth, /.well-known, /health,
// /ready), which the studio never answers.
func Reserved(p string) bool {
	for _, pre := range reservedPrefixes {
		if p == pre || strings.HasPrefix(p, pre+"/") {
			return true
		}
	}
	return false
}

// Handler serves the embedded build of the studio.
func Handler() http.Handler {
	sub, err := fs.Sub(dist, "dist")
	if err != nil {
		// dist is embedded at compile time; Sub fails only on a bad name.
		panic("studio: " + err.Error())
	}
	return NewHandler(sub)
}

// NewHandler serves the studio build in files (index.html at its root,
// hashed assets under assets/). Handler uses the embedded build; tests
// hand in their own.
func NewHandler(files fs.FS) http.Handler {
	return &handler{files: files, fileServer: http.FileServerFS(files)}
}

type handler struct {
	files      fs.FS
	fileServer http.Handler
}

func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	hd := w.Header()
	hd.Set("Content-Security-Policy", CSP)
	hd.Set("X-Content-Type-Options", "nosniff")
	hd.Set("Referrer-Policy", "strict-origin-when-cross-origin")
	hd.Set("X-Frame-Options", "DENY")
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		hd.Set("Allow", "GET, HEAD")
		http.Error(w, "the studio serves GET and HEAD only", http.StatusMethodNotAllowed)
		return
	}
	// path.Clean of a rooted path never climbs above "/", and fs.FS
	// refuses ".." and absolute names besides: a traversal finds nothing.
	p := path.Clean("/" + r.URL.Path)
	if Reserved(p) {
		http.NotFound(w, r)
		return
	}
	name := strings.TrimPrefix(p, "/")
	if name == "" || name == "index.html" {
		h.serveIndex(w, r)
		return
	}
	if st, err := fs.Stat(h.files, name); err == nil && !st.IsDir() {
		if strings.HasPrefix(name, "assets/") {
			// Vite names every asset by its content hash.
			hd.Set("Cache-Control", "public, max-age=31536000, immutable")
		} else {
			hd.Set("Cache-Control", "no-cache")
		}
		r2 := new(http.Request)
		*r2 = *r
		u := *r.URL
		u.Path = p
		r2.URL = &u
		h.fileServer.ServeHTTP(w, r2)
		return
	}
	// A missing file (a name with a dot) is a 404; anything else is a
	// route of the app's own router.
	if strings.Contains(path.Base(name), ".") {
		http.NotFound(w, r)
		return
	}
	h.serveIndex(w, r)
}

func (h *handler) serveIndex(w http.ResponseWriter, r *http.Request) {
	b, err := fs.ReadFile(h.files, "index.html")
	if err != nil {
		http.Error(w, "studio: the build has no index.html: run `make studio`", http.StatusInternalServerError)
		return
	}
	hd := w.Header()
	hd.Set("Cache-Control", "no-cache")
	hd.Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(http.StatusOK)
	if r.Method != http.MethodHead {
		_, _ = w.Write(b)
	}
}
