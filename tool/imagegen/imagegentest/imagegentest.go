// Package imagegentest fakes the OpenAI images API for tests of package
// imagegen and of what uses it, and makes the small real PNGs that this
// fake and package comfytest serve.
//
//	fake := imagegentest.NewOpenAI(t, nil)
//	be, _ := imagegen.NewOpenAI(fake.Client(), &imagegen.OpenAIOptions{BaseURL: fake.BaseURL(), APIKey: imagegentest.Key})
//	images, err := be.Generate(ctx, imagegen.Request{Prompt: "a cat"})
//	// images[0].Data equals imagegentest.PNG(1); fake.Requests() holds the body
//
// The fake is strict where the real API is: POST only, the Bearer key,
// a JSON body of known fields only, a prompt, n from 1 to 10, a size of
// WIDTHxHEIGHT or auto, response_format url or b64_json and refused for
// gpt-image models (which always answer base64). Refusals are OpenAI's
// error JSON with the status the API uses.
package imagegentest

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// Key is the API key the fake requires unless OpenAIOptions.Key says
// otherwise.
const Key = "sk-imagegentest"

// PNG returns a real 16×16 PNG whose colour depends on n, so pictures of
// one answer differ and a test can tell which came back.
func PNG(n int64) []byte {
	img := image.NewNRGBA(image.Rect(0, 0, 16, 16))
	c := color.NRGBA{R: uint8(n * 53), G: uint8(n * 97), B: uint8(n*31 + 128), A: 255}
	for y := range 16 {
		for x := range 16 {
			if (x+y)%4 == 0 {
				img.Set(x, y, color.NRGBA{A: 255})
			} else {
				img.Set(x, y, c)
			}
		}
	}
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		panic(err) // encoding an in-memory image cannot fail
	}
	return buf.Bytes()
}

// OpenAIOptions configure the fake.
type OpenAIOptions struct {
	// Key is the Bearer key required. Default Key.
	Key string
	// AnswerURL answers every picture as a url to GET from the fake,
	// whatever the request asked (as some compatible servers do).
	AnswerURL bool
	// Image returns picture i (from 0) of a request. Default PNG(i+1).
	Image func(i int) []byte
	// Status, when set, refuses every request with it and Message.
	Status  int
	Message string
}

// OpenAIRequest is a body the fake accepted.
type OpenAIRequest struct {
	Model          string `json:"model"`
	Prompt         string `json:"prompt"`
	N              *int   `json:"n"`
	Size           string `json:"size"`
	ResponseFormat string `json:"response_format"`
	Quality        string `json:"quality"`
	Style          string `json:"style"`
	User           string `json:"user"`
	Background     string `json:"background"`
	OutputFormat   string `json:"output_format"`
}

// OpenAI is the fake images API. Its URL plus "/v1" is the base URL.
type OpenAI struct {
	*httptest.Server
	opts OpenAIOptions

	mu       sync.Mutex // guards the fields below
	requests []OpenAIRequest
	files    map[string][]byte // by path of /files/...
	// fileAuth records the Authorization header each file GET carried.
	fileAuth []string
}

// NewOpenAI starts the fake; it stops when the test ends.
func NewOpenAI(t testing.TB, opts *OpenAIOptions) *OpenAI {
	t.Helper()
	f := &OpenAI{files: map[string][]byte{}}
	if opts != nil {
		f.opts = *opts
	}
	if f.opts.Key == "" {
		f.opts.Key = Key
	}
	if f.opts.Image == nil {
		f.opts.Image = func(i int) []byte { return PNG(int64(i + 1)) }
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/v1/images/generations", f.generations)
	mux.HandleFunc("GET /files/", f.file)
	f.Server = httptest.NewServer(mux)
	t.Cleanup(f.Close)
	return f
}

// BaseURL is the API root to configure: the server's URL with /v1.
func (f *OpenAI) BaseURL() string { return f.URL + "/v1" }

// Requests returns the bodies accepted so far.
func (f *OpenAI) Requests() []OpenAIRequest {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]OpenAIRequest(nil), f.requests...)
}

// FileAuth returns the Authorization header of each picture fetched by
// url, in order ("" when none was sent).
func (f *OpenAI) FileAuth() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.fileAuth...)
}

var sizeRE = regexp.MustCompile(`^[1-9][0-9]*x[1-9][0-9]*$`)

func (f *OpenAI) generations(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		openaiError(w, http.StatusMethodNotAllowed, "invalid_request_error", "", "Method not allowed; use POST.")
		return
	}
	if r.Header.Get("Authorization") != "Bearer "+f.opts.Key {
		openaiError(w, http.StatusUnauthorized, "invalid_request_error", "", "Incorrect API key provided.")
		return
	}
	if f.opts.Status != 0 {
		openaiError(w, f.opts.Status, "server_error", "", f.opts.Message)
		return
	}
	if ct := r.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		openaiError(w, http.StatusBadRequest, "invalid_request_error", "", "Content-Type must be application/json, not "+strconv.Quote(ct))
		return
	}
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, 1<<20))
	dec.DisallowUnknownFields()
	var req OpenAIRequest
	if err := dec.Decode(&req); err != nil {
		openaiError(w, http.StatusBadRequest, "invalid_request_error", "", "We could not parse the JSON body of your request: "+err.Error())
		return
	}
	n := 1
	if req.N != nil {
		n = *req.N
	}
	gptImage := strings.HasPrefix(req.Model, "gpt-image")
	switch {
	case req.Model == "":
		openaiError(w, http.StatusBadRequest, "invalid_request_error", "model", "you must provide a model parameter")
	case strings.TrimSpace(req.Prompt) == "":
		openaiError(w, http.StatusBadRequest, "invalid_request_error", "prompt", "Missing required parameter: 'prompt'.")
	case n < 1 || n > 10:
		openaiError(w, http.StatusBadRequest, "invalid_request_error", "n", fmt.Sprintf("Invalid 'n': integer %d is not between 1 and 10.", n))
	case req.Size != "" && req.Size != "auto" && !sizeRE.MatchString(req.Size):
		openaiError(w, http.StatusBadRequest, "invalid_request_error", "size", fmt.Sprintf("Invalid value: '%s'. Supported values are WIDTHxHEIGHT and 'auto'.", req.Size))
	case gptImage && req.ResponseFormat != "":
		openaiError(w, http.StatusBadRequest, "invalid_request_error", "response_format", "Unknown parameter: 'response_format'.")
	case req.ResponseFormat != "" && req.ResponseFormat != "url" && req.ResponseFormat != "b64_json":
		openaiError(w, http.StatusBadRequest, "invalid_request_error", "response_format", fmt.Sprintf("Invalid value: '%s'. Supported values are: 'url' and 'b64_json'.", req.ResponseFormat))
	default:
		f.answer(w, req, n, !gptImage && req.ResponseFormat != "b64_json" || f.opts.AnswerURL)
	}
}

func (f *OpenAI) answer(w http.ResponseWriter, req OpenAIRequest, n int, urls bool) {
	type item struct {
		B64JSON string `json:"b64_json,omitempty"`
		URL     string `json:"url,omitempty"`
	}
	items := make([]item, n)
	f.mu.Lock()
	seq := len(f.requests)
	f.requests = append(f.requests, req)
	for i := range n {
		img := f.opts.Image(i)
		if urls {
			path := fmt.Sprintf("/files/%d-%d.png", seq, i)
			f.files[path] = img
			items[i].URL = f.URL + path
		} else {
			items[i].B64JSON = base64.StdEncoding.EncodeToString(img)
		}
	}
	f.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(map[string]any{"created": time.Now().Unix(), "data": items})
}

func (f *OpenAI) file(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	img, ok := f.files[r.URL.Path]
	f.fileAuth = append(f.fileAuth, r.Header.Get("Authorization"))
	f.mu.Unlock()
	if !ok {
		http.NotFound(w, r)
		return
	}
	w.Header().Set("Content-Type", "image/png")
	w.Write(img)
}

func openaiError(w http.ResponseWriter, status int, typ, param, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	var p any
	if param != "" {
		p = param
	}
	json.NewEncoder(w).Encode(map[string]any{"error": map[string]any{"message": msg, "type": typ, "param": p, "code": nil}})
}
