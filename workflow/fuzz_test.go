package workflow_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/agentcraftlab/agentcraft/workflow"
)

// FuzzParseValidate feeds arbitrary bytes through Parse, Validate and
// DetectStrategy. None may panic; every problem must have a path and a
// message; a strategy that detection picks must pass CheckStrategy.
func FuzzParseValidate(f *testing.F) {
	files, _ := filepath.Glob("testdata/*")
	for _, file := range files {
		if data, err := os.ReadFile(file); err == nil {
			f.Add(data)
		}
	}
	for _, src := range strategyGraphs {
		f.Add([]byte(src))
	}
	f.Add([]byte(chain))
	f.Add([]byte(`{"name":"x","nodes":[{"id":"r","type":"router","config":{"routes":[{"name":1}]}}],"edges":[{"id":"e","source":"r","target":"r","sourceHandle":"a"}]}`))
	f.Add([]byte("nodes: [{id: l, type: loop, config: {condition: 'a ?? b', max_iterations: 1e9}}]\nedges: [{source: l, target: l}]"))
	reg := builtins(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		def, err := workflow.Parse(data)
		if err != nil {
			if def != nil {
				t.Fatalf("Parse returned both a definition and %v", err)
			}
			return
		}
		for _, p := range workflow.Validate(def, reg) {
			if p.Path == "" || p.Message == "" {
				t.Fatalf("problem without path or message: %+v", p)
			}
		}
		if s, err := workflow.DetectStrategy(def, reg); err == nil {
			if err := workflow.CheckStrategy(def, reg, s); err != nil {
				t.Fatalf("detected %s, then rejected it: %v", s, err)
			}
		}
	})
}
