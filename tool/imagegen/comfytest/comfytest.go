// Package comfytest is a strict fake of ComfyUI's HTTP API, for tests of
// package imagegen's ComfyUI back end and of what runs it.
//
//	srv := comfytest.New(t, nil)
//	be, _ := imagegen.NewComfyUI(srv.Client(), srv.URL, []byte(comfytest.Workflow), nil)
//
// It serves what a client of ComfyUI uses, at / and under /api as ComfyUI
// does:
//
//   - POST /prompt {"prompt": <API-format graph>, "client_id", ...}
//     validates the graph as ComfyUI does — every node's class_type is one
//     the fake knows (Classes), required inputs are present, links are
//     [node_id, slot] to an existing node of the right output type, INT,
//     FLOAT and STRING inputs have that type (an unfilled "{{seed}}" is
//     not an INT), lists (ckpt_name, sampler_name) hold a known value, and
//     there is an output node — and answers 200 {prompt_id, number,
//     node_errors} or 400 {error: {type, message, details, extra_info},
//     node_errors: {id: {errors, dependent_outputs, class_type}}}. A body
//     that is not JSON gets ComfyUI's 500.
//   - GET /history/{prompt_id} answers {} for the first PollsUntilDone
//     polls, then the prompt's entry {prompt, outputs: {node: {images:
//     [{filename, subfolder, type}]}}, status: {status_str, completed,
//     messages}}, with an execution_error when Options.Fail names a class.
//   - GET /view?filename=&subfolder=&type= serves the real PNGs the
//     prompt's SaveImage (type output) and PreviewImage (type temp) nodes
//     made, one per batch_size of the EmptyLatentImage upstream, as
//     image/png; it refuses a filename with ".." or a leading "/" (400)
//     and an unknown type (400), and answers 404 for other files.
//   - POST /queue {"delete": [ids]} takes prompts off the queue (they never
//     finish); GET /queue lists pending ones.
package comfytest

import (
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/agentcraftlab/agentcraft/tool/imagegen/imagegentest"
)

// DefaultCheckpoint is the one model file the fake has unless
// Options.Checkpoints says otherwise.
const DefaultCheckpoint = "sd_xl_base_1.0.safetensors"

// Workflow is a text-to-image graph in API format with every placeholder
// package imagegen fills, for tests.
const Workflow = `{
  "4": {"class_type": "CheckpointLoaderSimple", "inputs": {"ckpt_name": "` + DefaultCheckpoint + `"}},
  "5": {"class_type": "EmptyLatentImage", "inputs": {"width": "{{width}}", "height": "{{height}}", "batch_size": "{{batch_size}}"}},
  "6": {"class_type": "CLIPTextEncode", "inputs": {"text": "{{prompt}}", "clip": ["4", 1]}},
  "7": {"class_type": "CLIPTextEncode", "inputs": {"text": "{{negative_prompt}}", "clip": ["4", 1]}},
  "3": {"class_type": "KSampler", "inputs": {"seed": "{{seed}}", "steps": 20, "cfg": 7.0, "sampler_name": "euler", "scheduler": "normal",
        "denoise": 1.0, "model": ["4", 0], "positive": ["6", 0], "negative": ["7", 0], "latent_image": ["5", 0]}},
  "8": {"class_type": "VAEDecode", "inputs": {"samples": ["3", 0], "vae": ["4", 2]}},
  "9": {"class_type": "SaveImage", "inputs": {"filename_prefix": "agentcraft", "images": ["8", 0]}}
}`

// Failure makes every prompt fail while executing a node of ClassType.
type Failure struct {
	ClassType     string
	ExceptionType string // default "RuntimeError"
	Message       string
}

// Options configure the fake.
type Options struct {
	// PollsUntilDone is how many GET /history/{id} answer {} before the
	// prompt's entry appears. Default 2; negative: never (a prompt that
	// runs forever).
	PollsUntilDone int
	// Checkpoints are the ckpt_name values CheckpointLoaderSimple
	// accepts. Default: DefaultCheckpoint.
	Checkpoints []string
	// Fail, when set, fails prompts in execution.
	Fail *Failure
}

// Prompt is a prompt the fake accepted.
type Prompt struct {
	ID       string
	ClientID string
	// Graph is the graph as sent, decoded.
	Graph map[string]any
	// Polls counts the GET /history/{id} of it so far.
	Polls int
	// Deleted is set once POST /queue deleted it.
	Deleted bool
}

// Server is the fake ComfyUI.
type Server struct {
	*httptest.Server
	opts Options

	mu      sync.Mutex // guards the fields below
	prompts []*promptState
	files   map[fileKey][]byte
	saved   int // SaveImage counter, as ComfyUI's filename suffix
	number  int // queue number
}

type promptState struct {
	Prompt
	number  int
	outputs []string // the output nodes, in order
	entry   any      // the history entry, once executed
}

type fileKey struct{ typ, subfolder, name string }

// New starts the fake; it stops when the test ends.
func New(t testing.TB, opts *Options) *Server {
	t.Helper()
	s := &Server{files: map[fileKey][]byte{}}
	if opts != nil {
		s.opts = *opts
	}
	if s.opts.PollsUntilDone == 0 {
		s.opts.PollsUntilDone = 2
	}
	if len(s.opts.Checkpoints) == 0 {
		s.opts.Checkpoints = []string{DefaultCheckpoint}
	}
	mux := http.NewServeMux()
	for _, prefix := range []string{"", "/api"} {
		mux.HandleFunc("POST "+prefix+"/prompt", s.postPrompt)
		mux.HandleFunc("GET "+prefix+"/history/{id}", s.history)
		mux.HandleFunc("GET "+prefix+"/view", s.view)
		mux.HandleFunc("POST "+prefix+"/queue", s.postQueue)
		mux.HandleFunc("GET "+prefix+"/queue", s.getQueue)
	}
	s.Server = httptest.NewServer(mux)
	t.Cleanup(s.Close)
	return s
}

// Prompts returns the prompts accepted so far, in order.
func (s *Server) Prompts() []Prompt {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Prompt, len(s.prompts))
	for i, p := range s.prompts {
		out[i] = p.Prompt
	}
	return out
}

// File returns the bytes /view serves for an output image.
func (s *Server) File(typ, subfolder, name string) ([]byte, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	b, ok := s.files[fileKey{typ, subfolder, name}]
	return b, ok
}

// Images returns every image file the fake made, in the order made.
func (s *Server) Images() [][]byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out [][]byte
	for _, p := range s.prompts {
		if p.entry == nil {
			continue
		}
		for _, f := range outputFiles(p.entry) {
			out = append(out, s.files[f])
		}
	}
	return out
}

func outputFiles(entry any) []fileKey {
	var out []fileKey
	outputs := entry.(map[string]any)["outputs"].(map[string]any)
	ids := make([]string, 0, len(outputs))
	for id := range outputs {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	for _, id := range ids {
		for _, im := range outputs[id].(map[string]any)["images"].([]any) {
			m := im.(map[string]any)
			out = append(out, fileKey{m["type"].(string), m["subfolder"].(string), m["filename"].(string)})
		}
	}
	return out
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}

func promptError(typ, msg, details string) map[string]any {
	return map[string]any{"type": typ, "message": msg, "details": details, "extra_info": map[string]any{}}
}

func (s *Server) postPrompt(w http.ResponseWriter, r *http.Request) {
	var body map[string]json.RawMessage
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 8<<20)).Decode(&body); err != nil {
		// aiohttp's request.json() raises, and ComfyUI answers 500.
		http.Error(w, "500 Internal Server Error\n\nServer got itself in trouble", http.StatusInternalServerError)
		return
	}
	raw, ok := body["prompt"]
	if !ok {
		writeJSON(w, http.StatusBadRequest, map[string]any{"error": promptError("no_prompt", "No prompt provided", "No prompt provided"), "node_errors": map[string]any{}})
		return
	}
	var graph map[string]any
	if err := json.Unmarshal(raw, &graph); err != nil {
		writeJSON(w, http.StatusBadRequest, map[string]any{"error": promptError("invalid_prompt", "Invalid prompt: not an object of nodes", err.Error()), "node_errors": map[string]any{}})
		return
	}
	var clientID string
	if c, ok := body["client_id"]; ok {
		json.Unmarshal(c, &clientID)
	}
	if status, refusal := s.validate(graph); refusal != nil {
		writeJSON(w, status, refusal)
		return
	}
	s.mu.Lock()
	id := fmt.Sprintf("%08x-0000-4000-8000-%012x", len(s.prompts)+1, len(s.prompts)+1)
	p := &promptState{Prompt: Prompt{ID: id, ClientID: clientID, Graph: graph}, number: s.number}
	for _, nid := range sortedNodeIDs(graph) {
		if Classes[graph[nid].(map[string]any)["class_type"].(string)].output {
			p.outputs = append(p.outputs, nid)
		}
	}
	s.prompts = append(s.prompts, p)
	number := s.number
	s.number++
	s.mu.Unlock()
	writeJSON(w, http.StatusOK, map[string]any{"prompt_id": id, "number": number, "node_errors": map[string]any{}})
}

func (s *Server) history(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	s.mu.Lock()
	defer s.mu.Unlock()
	var p *promptState
	for _, q := range s.prompts {
		if q.ID == id {
			p = q
		}
	}
	if p == nil {
		writeJSON(w, http.StatusOK, map[string]any{})
		return
	}
	p.Polls++
	if p.Deleted || s.opts.PollsUntilDone < 0 || p.Polls <= s.opts.PollsUntilDone {
		writeJSON(w, http.StatusOK, map[string]any{})
		return
	}
	if p.entry == nil {
		p.entry = s.execute(p)
	}
	writeJSON(w, http.StatusOK, map[string]any{id: p.entry})
}

// execute runs a prompt: its output nodes' images, or the configured
// failure. It holds s.mu.
func (s *Server) execute(p *promptState) any {
	graph := p.Graph
	outs := make([]any, len(p.outputs))
	for i, o := range p.outputs {
		outs[i] = o
	}
	// ComfyUI's history keeps the queue item: [number, prompt_id, prompt,
	// extra_data, outputs_to_execute].
	prompt := []any{p.number, p.ID, graph, map[string]any{"client_id": p.ClientID}, outs}
	if f := s.opts.Fail; f != nil {
		for _, id := range sortedNodeIDs(graph) {
			node := graph[id].(map[string]any)
			if node["class_type"] != f.ClassType {
				continue
			}
			typ := f.ExceptionType
			if typ == "" {
				typ = "RuntimeError"
			}
			return map[string]any{"prompt": prompt, "outputs": map[string]any{}, "meta": map[string]any{},
				"status": map[string]any{"status_str": "error", "completed": false, "messages": []any{
					[]any{"execution_start", map[string]any{"prompt_id": p.ID, "timestamp": 1}},
					[]any{"execution_error", map[string]any{"prompt_id": p.ID, "node_id": id, "node_type": f.ClassType, "executed": []any{},
						"exception_message": f.Message, "exception_type": typ, "traceback": []any{"  File \"execution.py\""}, "current_inputs": map[string]any{}, "current_outputs": map[string]any{}, "timestamp": 2}},
				}}}
		}
	}
	outputs := map[string]any{}
	for _, id := range p.outputs {
		node := graph[id].(map[string]any)
		class, _ := node["class_type"].(string)
		inputs := node["inputs"].(map[string]any)
		typ, prefix := "output", "ComfyUI"
		if class == "PreviewImage" {
			typ, prefix = "temp", "ComfyUI_temp"
		}
		if pre, ok := inputs["filename_prefix"].(string); ok && pre != "" {
			prefix = pre
		}
		seed := int64(0)
		if k := findUpstream(graph, id, "KSampler"); k != nil {
			f, _ := number(k["inputs"].(map[string]any)["seed"], true)
			seed = int64(f)
		}
		var images []any
		for b := range batchOf(graph, id) {
			s.saved++
			name := fmt.Sprintf("%s_%05d_.png", prefix, s.saved)
			s.files[fileKey{typ, "", name}] = imagegentest.PNG(seed + int64(b))
			images = append(images, map[string]any{"filename": name, "subfolder": "", "type": typ})
		}
		outputs[id] = map[string]any{"images": images}
	}
	return map[string]any{"prompt": prompt, "outputs": outputs, "meta": map[string]any{},
		"status": map[string]any{"status_str": "success", "completed": true, "messages": []any{
			[]any{"execution_start", map[string]any{"prompt_id": p.ID, "timestamp": 1}},
			[]any{"execution_success", map[string]any{"prompt_id": p.ID, "timestamp": 2}},
		}}}
}

// batchOf is the batch_size of the EmptyLatentImage upstream of node id,
// or 1.
func batchOf(graph map[string]any, id string) int {
	if n := findUpstream(graph, id, "EmptyLatentImage"); n != nil {
		if b, ok := number(n["inputs"].(map[string]any)["batch_size"], true); ok && b >= 1 {
			return int(b)
		}
	}
	return 1
}

// findUpstream returns the first node of class reached by following the
// links into node id, breadth first.
func findUpstream(graph map[string]any, id, class string) map[string]any {
	seen := map[string]bool{id: true}
	queue := []string{id}
	for len(queue) > 0 {
		cur := queue[0]
		queue = queue[1:]
		node, _ := graph[cur].(map[string]any)
		if node == nil {
			continue
		}
		if cur != id && node["class_type"] == class {
			return node
		}
		inputs, _ := node["inputs"].(map[string]any)
		for _, k := range slices.Sorted(maps.Keys(inputs)) {
			if l, ok := inputs[k].([]any); ok && len(l) == 2 {
				if src, ok := l[0].(string); ok && !seen[src] {
					seen[src] = true
					queue = append(queue, src)
				}
			}
		}
	}
	return nil
}

func (s *Server) view(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	if !q.Has("filename") {
		http.NotFound(w, r)
		return
	}
	name := q.Get("filename")
	if name == "" || name[0] == '/' || strings.Contains(name, "..") {
		w.WriteHeader(http.StatusBadRequest)
		return
	}
	typ := q.Get("type")
	if typ == "" {
		typ = "output"
	}
	if typ != "output" && typ != "input" && typ != "temp" {
		w.WriteHeader(http.StatusBadRequest)
		return
	}
	sub := q.Get("subfolder")
	if strings.Contains(sub, "..") || strings.HasPrefix(sub, "/") {
		w.WriteHeader(http.StatusForbidden)
		return
	}
	s.mu.Lock()
	img, ok := s.files[fileKey{typ, sub, name}]
	s.mu.Unlock()
	if !ok {
		http.NotFound(w, r)
		return
	}
	w.Header().Set("Content-Type", "image/png")
	w.Header().Set("Content-Disposition", fmt.Sprintf("filename=%q", name))
	w.Write(img)
}

func (s *Server) postQueue(w http.ResponseWriter, r *http.Request) {
	var body struct {
		Delete []string `json:"delete"`
		Clear  bool     `json:"clear"`
	}
	if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
		http.Error(w, "500 Internal Server Error\n\nServer got itself in trouble", http.StatusInternalServerError)
		return
	}
	s.mu.Lock()
	for _, p := range s.prompts {
		if p.entry == nil && (body.Clear || slices.Contains(body.Delete, p.ID)) {
			p.Deleted = true
		}
	}
	s.mu.Unlock()
	w.WriteHeader(http.StatusOK)
}

func (s *Server) getQueue(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	pending := []any{}
	for i, p := range s.prompts {
		if p.entry == nil && !p.Deleted {
			pending = append(pending, []any{i, p.ID, p.Graph, map[string]any{"client_id": p.ClientID}, []any{}})
		}
	}
	s.mu.Unlock()
	writeJSON(w, http.StatusOK, map[string]any{"queue_running": []any{}, "queue_pending": pending})
}

func sortedNodeIDs(graph map[string]any) []string { return slices.Sorted(maps.Keys(graph)) }
