package config

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestWebTools(t *testing.T) {
	cfg, err := Load(write(t, `
tools:
  web_search: {backend: brave, api_key: "${BRAVE_API_KEY}", max_results: 8}
  web_fetch: {max_bytes: 1048576, max_text_bytes: 20000, timeout: 10s}
  browser: {chromium: /opt/chrome/chrome, timeout: 90s}
`), []string{"BRAVE_API_KEY=brave-test", "AGENTCRAFT_TOOLS_WEB_FETCH_TIMEOUT=12s"})
	if err != nil {
		t.Fatal(err)
	}
	want := Tools{
		WebSearch: WebSearch{Backend: "brave", APIKey: "brave-test", MaxResults: 8},
		WebFetch:  WebFetch{MaxBytes: 1 << 20, MaxTextBytes: 20000, Timeout: 12 * time.Second},
		Browser:   Browser{Chromium: "/opt/chrome/chrome", Timeout: 90 * time.Second},
	}
	if d := cmp.Diff(want, cfg.Tools); d != "" {
		t.Errorf("tools (-want +got):\n%s", d)
	}

	for _, tc := range []struct{ body, want string }{
		{"tools: {web_search: {backend: google}}", `tools.web_search.backend: "google" is not searxng, brave or tavily`},
		{"tools: {web_search: {api_key: k}}", "tools.web_search.backend: is empty"},
		{"tools: {web_search: {backend: searxng}}", "tools.web_search.base_url: is empty"},
		{"tools: {web_search: {backend: searxng, base_url: 'searxng:8080'}}", "tools.web_search.base_url"},
		{"tools: {web_search: {backend: tavily}}", "tools.web_search.api_key: is empty: tavily needs an API key"},
		{"tools: {web_search: {backend: brave, api_key: k, max_results: 50}}", "tools.web_search.max_results"},
		{"tools: {web_search: {backend: brave, api_key: k, maxresults: 5}}", "tools.web_search.maxresults: unknown key"},
		{"tools: {web_fetch: {max_bytes: -1}}", "tools.web_fetch"},
		{"tools: {browser: {timeout: -1s}}", "tools.browser.timeout"},
	} {
		_, err := Load(write(t, tc.body), []string{})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: err = %v, want mention of %s", tc.body, err, tc.want)
		}
	}
}
