package imagegentest_test

import (
	"bytes"
	"image/png"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/agentcraftlab/agentcraft/tool/imagegen/imagegentest"
)

func TestPNG(t *testing.T) {
	a, b := imagegentest.PNG(1), imagegentest.PNG(2)
	if _, err := png.Decode(bytes.NewReader(a)); err != nil {
		t.Fatal(err)
	}
	if bytes.Equal(a, b) {
		t.Error("PNG(1) == PNG(2)")
	}
}

// TestRefuses: the fake refuses what the images API refuses.
func TestRefuses(t *testing.T) {
	fake := imagegentest.NewOpenAI(t, nil)
	tests := []struct {
		name, key, body string
		status          int
		want            string
	}{
		{"no key", "", `{"model":"gpt-image-1","prompt":"x"}`, 401, "Incorrect API key"},
		{"unknown field", imagegentest.Key, `{"model":"gpt-image-1","prompt":"x","colour":1}`, 400, "colour"},
		{"no prompt", imagegentest.Key, `{"model":"gpt-image-1"}`, 400, "prompt"},
		{"n", imagegentest.Key, `{"model":"dall-e-2","prompt":"x","n":11}`, 400, "'n'"},
		{"size", imagegentest.Key, `{"model":"dall-e-2","prompt":"x","size":"big"}`, 400, "big"},
		{"response_format for gpt-image", imagegentest.Key, `{"model":"gpt-image-1","prompt":"x","response_format":"b64_json"}`, 400, "response_format"},
		{"ok", imagegentest.Key, `{"model":"dall-e-2","prompt":"x","response_format":"b64_json"}`, 200, "b64_json"},
	}
	for _, tt := range tests {
		req, _ := http.NewRequest("POST", fake.BaseURL()+"/images/generations", strings.NewReader(tt.body))
		req.Header.Set("Content-Type", "application/json")
		if tt.key != "" {
			req.Header.Set("Authorization", "Bearer "+tt.key)
		}
		resp, err := fake.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != tt.status || !strings.Contains(string(b), tt.want) {
			t.Errorf("%s: %d %s, want %d with %q", tt.name, resp.StatusCode, b, tt.status, tt.want)
		}
	}
}
