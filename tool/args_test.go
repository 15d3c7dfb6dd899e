package tool

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"
)

func TestParseArgs(t *testing.T) {
	s := mustArgSchema("t", `{"type":"object","properties":{"path":{"type":"string"},"n":{"type":"integer","minimum":1},"tags":{"type":"array","items":{"type":"string"}}},"required":["path"],"additionalProperties":false}`, `{"path": "a.txt"}`)
	type args struct {
		Path string   `json:"path"`
		N    int      `json:"n"`
		Tags []string `json:"tags"`
	}
	ok := []struct {
		in   string
		want args
	}{
		{`{"path":"a"}`, args{Path: "a"}},
		{`  {"path":"a","n":2}  `, args{Path: "a", N: 2}},
		{"```json\n{\"path\": \"a\"}\n```", args{Path: "a"}},
		{"```\n{\"path\": \"a\"}\n```", args{Path: "a"}},
		{`{"path":"a", "tags":["x","y",],}`, args{Path: "a", Tags: []string{"x", "y"}}},
		{`{"path":"a,}", "n": 1,}`, args{Path: "a,}", N: 1}}, // a comma inside a string stays
		{`{"path":"a \", ]"}`, args{Path: `a ", ]`}},
	}
	for _, tt := range ok {
		var got args
		res, good := s.parse(json.RawMessage(tt.in), &got)
		if !good {
			t.Errorf("parse(%s) = %+v, want success", tt.in, res)
			continue
		}
		if got.Path != tt.want.Path || got.N != tt.want.N || strings.Join(got.Tags, ",") != strings.Join(tt.want.Tags, ",") {
			t.Errorf("parse(%s) = %+v, want %+v", tt.in, got, tt.want)
		}
	}

	bad := []struct {
		in   string
		want []string // substrings of the error
	}{
		{``, []string{`missing required argument "path"`, `{"path": "a.txt"}`}},
		{`null`, []string{`missing required argument "path"`}},
		{`{`, []string{"not valid JSON", `{"path": "a.txt"}`}},
		{`{'path': 'a'}`, []string{"not valid JSON"}},
		{`[1]`, []string{"must be a JSON object", "not an array"}},
		{`"path"`, []string{"not a string"}},
		{`{"path": 3}`, []string{`"path" must be string, not number`}},
		{`{"path": "a", "n": "2"}`, []string{`"n" must be integer, not string`}},
		{`{"path": "a", "n": 1.5}`, []string{`"n" must be integer, not number`}},
		{`{"path": "a", "n": 0}`, []string{`"n"`, "minimum"}},
		{`{"path": "a", "tags": [1]}`, []string{`"tags.0" must be string`}},
		{`{"path": "a", "max_byte": 3}`, []string{`unknown argument "max_byte"`}},
		{`{"path": "a"} {"path": "b"}`, []string{"not valid JSON"}},
		{`{"path": "a", "n": 1e400}`, []string{"invalid arguments"}},
	}
	for _, tt := range bad {
		var got args
		res, good := s.parse(json.RawMessage(tt.in), &got)
		if good || !res.IsError {
			t.Errorf("parse(%s) succeeded with %+v, want an error", tt.in, got)
			continue
		}
		for _, w := range tt.want {
			if !strings.Contains(res.Content, w) {
				t.Errorf("parse(%s) = %q, want it to contain %q", tt.in, res.Content, w)
			}
		}
	}

	huge := `{"path":"` + strings.Repeat("x", MaxArgsBytes) + `"}`
	if res, good := s.parse(json.RawMessage(huge), new(args)); good || !strings.Contains(res.Content, "limit") {
		t.Errorf("parse(%d bytes) = %+v, want a size error", len(huge), res)
	}
}

func TestRepairJSON(t *testing.T) {
	tests := []struct{ in, want string }{
		{`{"a":1,}`, `{"a":1}`},
		{"[1,2,\n ]", "[1,2\n ]"},
		{`{"a":"x,}"}`, `{"a":"x,}"}`},
		{`{"a":"\\",}`, `{"a":"\\"}`},
		{"```json\n[1]\n```", "[1]"},
		{"```json [1]```", "```json [1]```"}, // no newline after the fence: not a fence
	}
	for _, tt := range tests {
		got, _ := repairJSON([]byte(tt.in))
		if string(got) != tt.want {
			t.Errorf("repairJSON(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// fuzzTools returns every built-in tool, configured over a small sandbox
// and an HTTP client that cannot leave the process.
func fuzzTools(t testing.TB) []Tool {
	dir := t.TempDir()
	writeFile(t, dir, "a.txt", "hello\n")
	files, err := NewFileTools(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	client := &http.Client{Transport: roundTripFunc(func(r *http.Request) (*http.Response, error) {
		return &http.Response{StatusCode: 200, Status: "200 OK", Header: http.Header{}, Body: http.NoBody, Request: r}, nil
	})}
	h, err := NewHTTPRequest(client, nil)
	if err != nil {
		t.Fatal(err)
	}
	tools := []Tool{Calculator{}, CurrentTime{}, JSONQuery{}, RunJavaScript{Timeout: time.Second}, RunStarlark{Timeout: time.Second}, OCRImage{Files: files, LookPath: func(string) (string, error) { return "", errNoTesseract }}, h}
	return append(tools, files.Tools()...)
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// FuzzToolArgs feeds arbitrary bytes to every built-in tool as arguments:
// no input may panic, return a Go error (nothing here is a broken
// protocol) or an empty error message.
func FuzzToolArgs(f *testing.F) {
	seeds := []string{
		``, `null`, `{}`, `[]`, `"x"`, `{`, `{"expression":"1+2"}`, `{"timezone":"Asia/Tokyo"}`,
		`{"json":{"a":[1,2]},"query":".a[]"}`, `{"json":"{\"a\":1}","query":".a"}`, `{"json":1,"query":"["}`,
		`{"code":"1+1"}`, `{"code":"input.x","input":{"x":2}}`, `{"code":"result = input['x']","input":{"x":2}}`, `{"path":"a.txt"}`, `{"path":"../etc/passwd"}`,
		`{"path":"a.txt","offset":3,"max_bytes":1}`, `{"path":"/"}`, `{"recursive":true}`,
		`{"url":"http://example.com","method":"POST","headers":{"A":"b"},"body":"{}"}`, `{"url":"ftp://x"}`,
		`{"image_base64":"aGVsbG8="}`, "```json\n{\"expression\": \"2*3\",}\n```", `{"path": 1e400}`,
	}
	for _, s := range seeds {
		f.Add([]byte(s))
	}
	tools := fuzzTools(f)
	f.Fuzz(func(t *testing.T, args []byte) {
		for _, tl := range tools {
			type outcome struct {
				res Result
				err error
			}
			done := make(chan outcome, 1)
			go func() {
				res, err := tl.Call(context.Background(), json.RawMessage(args))
				done <- outcome{res, err}
			}()
			select {
			case o := <-done:
				if o.err != nil {
					t.Fatalf("%s.Call(%q) returned Go error %v", tl.Name(), args, o.err)
				}
				if o.res.IsError && o.res.Content == "" {
					t.Fatalf("%s.Call(%q): error result without a message", tl.Name(), args)
				}
			case <-time.After(10 * time.Second):
				t.Fatalf("%s.Call(%q) did not finish within 10s", tl.Name(), args)
			}
		}
	})
}

func TestCheckArguments(t *testing.T) {
	schema := json.RawMessage(`{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}`)
	tests := []struct {
		name         string
		schema, args string
		want         string // the arguments passed on, or a substring of the error
		ok           bool
	}{
		{"valid", string(schema), `{"city":"Paris"}`, `{"city":"Paris"}`, true},
		{"empty means {}", "", ``, `{}`, true},
		{"null means {}", `{"type":"object"}`, `null`, `{}`, true},
		{"code fence repaired", string(schema), "```json\n{\"city\": \"Oslo\"}\n```", `{"city": "Oslo"}`, true},
		{"trailing comma repaired", string(schema), `{"city":"Oslo",}`, `{"city":"Oslo"}`, true},
		{"no schema, any object", "", `{"x":[1,2]}`, `{"x":[1,2]}`, true},
		{"schema that does not compile is not enforced", `{"type":"nonsense"}`, `{"a":1}`, `{"a":1}`, true},
		{"invalid JSON", string(schema), `{"city": `, "arguments are not valid JSON", false},
		{"not an object", string(schema), `["Paris"]`, "must be a JSON object that matches the tool's parameters schema, not an array", false},
		{"missing field", string(schema), `{}`, `missing required argument "city"`, false},
		{"wrong type", string(schema), `{"city": 3}`, `"city" must be string, not number`, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, res, ok := CheckArguments(json.RawMessage(tt.schema), json.RawMessage(tt.args))
			if ok != tt.ok {
				t.Fatalf("CheckArguments(%s) ok = %v (%+v), want %v", tt.args, ok, res, tt.ok)
			}
			if ok && string(got) != tt.want {
				t.Errorf("arguments = %s, want %s", got, tt.want)
			}
			if !ok && (!res.IsError || !strings.Contains(res.Content, tt.want)) {
				t.Errorf("result = %+v, want an error containing %q", res, tt.want)
			}
		})
	}
}

// TestCheckArgumentsNoFileRef: a tool's schema (an MCP server's, say) must
// not make the server read local files through $ref.
func TestCheckArgumentsNoFileRef(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, "s.json", `{"type":"object","required":["secret"]}`)
	schema := json.RawMessage(`{"$ref":"file://` + dir + `/s.json"}`)
	if _, res, ok := CheckArguments(schema, json.RawMessage(`{}`)); !ok {
		t.Errorf("a schema with a file $ref was followed: %+v", res)
	}
}
