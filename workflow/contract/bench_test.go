package contract

import (
	"encoding/json"
	"strings"
	"testing"
)

// benchSchema and benchPost model a typical writing hand-off of about 1 KB.
const benchSchema = `{
	"type": "object",
	"required": ["title", "summary", "body", "tags", "x_posts"],
	"properties": {
		"title":      {"type": "string", "minLength": 1},
		"summary":    {"type": "string"},
		"body":       {"type": "string"},
		"tags":       {"type": "array", "items": {"type": "string"}},
		"x_posts":    {"type": "array", "items": {"type": "string", "maxLength": 280}},
		"word_count": {"type": "integer"},
		"draft":      {"type": "boolean"},
		"tone":       {"type": "string", "default": "neutral"}
	}
}`

func benchPost(b *testing.B, wordCount string) string {
	b.Helper()
	body := strings.Repeat("Go 1.26 ships with faster builds and a leaner runtime. ", 13)
	post := `{"title":"What is new in Go 1.26","summary":"A tour of the release for working developers.",` +
		`"body":` + quote(body) + `,"tags":["go","release","performance"],` +
		`"x_posts":["Go 1.26 is out: faster builds, leaner runtime.","Thread: what changed in Go 1.26 and why it matters."],` +
		`"word_count":` + wordCount + `,"draft":false,"tone":"neutral"}`
	if n := len(post); n < 900 || n > 1200 {
		b.Fatalf("bench post is %d bytes, want about 1 KB", n)
	}
	return post
}

func quote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// BenchmarkCheck measures a contract node on a typical 1 KB hand-off. The
// validate_only peer is the jsonschema library alone, the floor Check's
// extraction, copying and reporting add to.
func BenchmarkCheck(b *testing.B) {
	s := compile(b, benchSchema)
	valid := benchPost(b, "900")
	var decoded any
	if err := json.Unmarshal([]byte(valid), &decoded); err != nil {
		b.Fatal(err)
	}
	fenced := "Here is the post:\n```json\n" + valid + "\n```\nEnjoy!"
	repairable := benchPost(b, `"900"`)

	b.Run("validate_only", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if err := s.compiled.Validate(decoded); err != nil {
				b.Fatal(err)
			}
		}
	})
	for _, bc := range []struct {
		name string
		raw  any
		want Status
	}{
		{"map_ok", decoded, StatusOK},
		{"text_ok", valid, StatusOK},
		{"fenced_ok", fenced, StatusOK},
		{"text_repaired", repairable, StatusNormalized},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if res := Check(bc.raw, s, true, nil); res.Contract.Status != bc.want {
					b.Fatalf("status %q, want %q: %q", res.Contract.Status, bc.want, res.Contract.Notes)
				}
			}
		})
	}
}
