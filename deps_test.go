package agentcraft_test

import (
	"fmt"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
)

const module = "github.com/agentcraftlab/agentcraft"

// pkg is one package directory of the module, without its tests.
type pkg struct {
	dir      string          // relative, slash-separated
	imports  map[string]bool // module packages, relative to the module
	external map[string]bool // import paths outside the module, standard library included
	hasDoc   bool
	files    int
}

func loadPackages(t *testing.T) map[string]*pkg {
	t.Helper()
	pkgs := map[string]*pkg{}
	fset := token.NewFileSet()
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			name := d.Name()
			if path != "." && (strings.HasPrefix(name, ".") || name == "testdata" || name == "node_modules" || name == "data") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.ImportsOnly|parser.ParseComments)
		if err != nil {
			return err
		}
		dir := filepath.ToSlash(filepath.Dir(path))
		p := pkgs[dir]
		if p == nil {
			p = &pkg{dir: dir, imports: map[string]bool{}, external: map[string]bool{}}
			pkgs[dir] = p
		}
		p.files++
		if f.Doc != nil && strings.TrimSpace(f.Doc.Text()) != "" {
			p.hasDoc = true
		}
		for _, imp := range f.Imports {
			ip, _ := strconv.Unquote(imp.Path.Value)
			if rel, ok := strings.CutPrefix(ip, module+"/"); ok {
				p.imports[rel] = true
			} else {
				p.external[ip] = true
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(pkgs) < 10 {
		t.Fatalf("found only %d packages; is the test running at the module root?", len(pkgs))
	}
	return pkgs
}

func under(dir, root string) bool { return dir == root || strings.HasPrefix(dir, root+"/") }

// TestPackageDirection enforces the architecture's dependency direction:
// the foundations (llm, tool, store, secret, internal/*) never reach up into
// the layers that use them.
func TestPackageDirection(t *testing.T) {
	pkgs := loadPackages(t)
	rules := []struct {
		from      string
		forbidden []string
		except    []string
	}{
		{from: "llm", forbidden: []string{"workflow", "controlplane", "server", "platform", "agent", "store", "tool", "cmd/agentcraft/internal/cli"}},
		{from: "tool", forbidden: []string{"workflow", "controlplane", "server", "platform", "agent", "cmd/agentcraft/internal/cli"}},
		{from: "store", forbidden: []string{"workflow", "controlplane", "server", "platform", "agent", "llm", "tool", "cmd/agentcraft/internal/cli"}},
		{from: "secret", forbidden: []string{"workflow", "controlplane", "server", "platform", "agent", "store", "llm", "tool", "internal"}},
		{from: "internal", forbidden: []string{"workflow", "controlplane", "server", "platform", "agent", "run", "kb"}},
		{from: "agent", forbidden: []string{"workflow", "controlplane", "server", "platform", "store", "cmd/agentcraft/internal/cli"}},
		{from: "autonomous", forbidden: []string{"controlplane", "server", "platform", "store", "run", "cmd/agentcraft/internal/cli"}},
		{from: "search", forbidden: []string{"workflow", "controlplane", "server", "platform", "agent", "cmd/agentcraft/internal/cli"}},
		{from: "workflow", forbidden: []string{"server", "platform", "controlplane", "cmd/agentcraft/internal/cli"}},
		{from: "platform", forbidden: []string{"workflow", "controlplane", "server", "cmd/agentcraft/internal/cli"}},
		{from: "controlplane", forbidden: []string{"server", "cmd/agentcraft/internal/cli"}},
		{from: "queue", forbidden: []string{"workflow", "controlplane", "server", "platform", "agent", "cmd/agentcraft/internal/cli"}},
		{from: "pii", forbidden: []string{"workflow", "controlplane", "server", "platform", "agent", "store", "cmd/agentcraft/internal/cli"}},
		{from: "guard", forbidden: []string{"workflow", "controlplane", "server", "platform", "agent", "store", "cmd/agentcraft/internal/cli"}},
		{from: "server", forbidden: []string{"cmd/agentcraft/internal/cli"}},
		{from: "kb", forbidden: []string{"workflow", "controlplane", "server", "platform", "agent", "llm", "rag", "cmd/agentcraft/internal/cli"}},
		{from: "rag", forbidden: []string{"workflow", "controlplane", "server", "platform", "agent", "store", "kb", "cmd/agentcraft/internal/cli"}},
		{from: "a2a", forbidden: []string{"workflow", "controlplane", "server", "platform", "store", "cmd/agentcraft/internal/cli"}},
		{from: "pricing", forbidden: []string{"store", "llm", "tool", "internal", "workflow", "controlplane", "server", "platform", "agent", "cmd/agentcraft/internal/cli"}},
		{from: "budget", forbidden: []string{"workflow", "controlplane", "server", "platform", "agent", "run", "cmd/agentcraft/internal/cli"}},
		{from: "audit", forbidden: []string{"workflow", "controlplane", "server", "platform", "agent", "cmd/agentcraft/internal/cli"}},
	}
	var problems []string
	for dir, p := range pkgs {
		for _, r := range rules {
			if !under(dir, r.from) {
				continue
			}
			skip := false
			for _, e := range r.except {
				skip = skip || under(dir, e)
			}
			if skip {
				continue
			}
			for imp := range p.imports {
				for _, f := range r.forbidden {
					if under(imp, f) && !under(imp, dir) {
						problems = append(problems, dir+" imports "+imp+" (forbidden for "+r.from+")")
					}
				}
			}
		}
		if dir != "cmd/agentcraft" && p.imports["cmd/agentcraft/internal/cli"] {
			problems = append(problems, dir+" imports cmd/agentcraft/internal/cli; only cmd/agentcraft may")
		}
	}
	sort.Strings(problems)
	for _, pr := range problems {
		t.Error(pr)
	}
}

// TestServerImportsNoSurfaceServers: package server (that directory only)
// serves /v1 and /api; the MCP server, the OAuth issuer and the A2A server
// are surfaces of their own that the composition root mounts
// (server.Options.Mounts), so server imports none of them nor the
// protocol libraries they are built on.
func TestServerImportsNoSurfaceServers(t *testing.T) {
	p := loadPackages(t)["server"]
	if p == nil {
		t.Fatal("package server is missing")
	}
	for _, f := range []string{"server/mcpserver", "server/a2aserver", "a2a"} {
		for imp := range p.imports {
			if under(imp, f) {
				t.Errorf("server imports %s: MCP, OAuth and A2A server code is mounted by the composition root, not imported", imp)
			}
		}
	}
	for _, f := range []string{
		"github.com/modelcontextprotocol/go-sdk", // MCP (mcpserver)
		"github.com/go-jose/go-jose",             // OAuth tokens (mcpserver)
		"github.com/a2aproject/a2a-go",           // A2A (package a2a)
	} {
		for imp := range p.external {
			if imp == f || strings.HasPrefix(imp, f+"/") {
				t.Errorf("server imports %s: that protocol belongs to its own surface package", imp)
			}
		}
	}
}

// TestEveryPackageHasDocComment keeps `go doc` useful for every package.
func TestEveryPackageHasDocComment(t *testing.T) {
	for dir, p := range loadPackages(t) {
		if !p.hasDoc {
			t.Errorf("package %s has no doc comment: add // Package ... above the package clause of one file", dir)
		}
	}
}

func TestMain(m *testing.M) {
	// The checks read the source tree relative to the module root.
	if _, err := os.Stat("go.mod"); err != nil {
		panic("deps_test must run at the module root")
	}
	os.Exit(m.Run())
}

// layers are the architecture's layers, top first (docs/architecture.md):
// a package may import packages of its own layer or of a lower one, never
// of a higher one. Each package is placed by the longest listed prefix of
// its directory; a package no prefix places fails the test, so a new
// package must be given its layer here.
var layers = []struct {
	name string
	dirs []string
}{
	// Benchmarks against peers: their own modules, above everything.
	{"benchmarks", []string{"bench"}},
	// cmd/agentcraft and its internal cli (cobra commands, wiring) and
	// config (agentcraft.yaml) packages.
	{"composition root", []string{"cmd/agentcraft"}},
	{"surfaces", []string{"server", "e2e"}},
	{"run seam and services", []string{"run", "platform", "controlplane", "kb", "identity", "memory", "task", "trigger"}},
	// provider and catalog are services, but they import only the domain
	// and the contracts; placing them here keeps them from reaching back
	// up into platform, run or kb.
	{"domain", []string{"agent", "autonomous", "workflow", "rag", "llm/middleware", "guard", "pii", "audit", "secret", "a2a", "provider", "catalog", "skill", "budget"}},
	// The core contracts (llm.Model, search.Engine, tool.Tool) sit with
	// their drivers, as database/sql/driver does: an adapter imports the
	// interface it implements, never the domain above it.
	// tool/web (web_search, web_fetch, browser) and tool/imagegen (with
	// comfytest, imagegentest) are tools like tool/caldav: they import
	// tool and internal helpers, never a layer above.
	// pricing (Money, the price table) is a value package the store's
	// usage rows carry; it imports nothing of the module.
	{"contracts, drivers and helpers", []string{"store", "queue", "internal", "llm", "search", "tool", "tool/web", "tool/imagegen", "pricing"}},
}

// layerOf returns the index in layers of dir, -1 when no prefix places it.
func layerOf(dir string) int {
	best, bestLen := -1, -1
	for i, l := range layers {
		for _, d := range l.dirs {
			if under(dir, d) && len(d) > bestLen {
				best, bestLen = i, len(d)
			}
		}
	}
	return best
}

// TestLayers fails on every import that runs from a lower layer up to a
// higher one, and on packages outside the composition root that import
// the configuration file's package.
func TestLayers(t *testing.T) {
	pkgs := loadPackages(t)
	var problems []string
	for dir, p := range pkgs {
		from := layerOf(dir)
		if from < 0 {
			problems = append(problems, dir+": no layer; add it to layers in deps_test.go")
			continue
		}
		for imp := range p.imports {
			to := layerOf(imp)
			if to >= 0 && to < from {
				problems = append(problems, fmt.Sprintf("%s (%s) imports %s (%s): imports point downward only", dir, layers[from].name, imp, layers[to].name))
			}
			if under(imp, "cmd/agentcraft/internal/config") && layers[from].name != "composition root" {
				problems = append(problems, dir+" imports cmd/agentcraft/internal/config: only the composition root reads the configuration file; take options of your own")
			}
		}
	}
	sort.Strings(problems)
	for _, pr := range problems {
		t.Error(pr)
	}
}

// TestSurfacesUseServices: the HTTP, MCP, OpenAI and A2A surfaces call
// the services (platform, controlplane, kb), never the store: no non-test
// file under server/ calls .Store() on the platform or opens a database
// driver. server/servertest, the tests' environment, opens SQLite.
func TestSurfacesUseServices(t *testing.T) {
	fset := token.NewFileSet()
	checked := 0
	err := filepath.WalkDir("server", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		dir := filepath.ToSlash(filepath.Dir(path))
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") || under(dir, "server/servertest") {
			return nil
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		checked++
		for i, line := range strings.Split(string(src), "\n") {
			if strings.Contains(line, ".Store()") {
				t.Errorf("%s:%d calls .Store(): call the owning service (platform, controlplane, kb) instead", filepath.ToSlash(path), i+1)
			}
		}
		f, err := parser.ParseFile(fset, path, src, parser.ImportsOnly)
		if err != nil {
			return err
		}
		for _, imp := range f.Imports {
			ip, _ := strconv.Unquote(imp.Path.Value)
			for _, drv := range []string{"store/sqlite", "store/postgres"} {
				if ip == module+"/"+drv || strings.HasPrefix(ip, module+"/"+drv+"/") {
					t.Errorf("%s imports %s: surfaces get their services from the composition root", filepath.ToSlash(path), ip)
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if checked < 10 {
		t.Fatalf("checked only %d files under server/; is the test running at the module root?", checked)
	}
}
