package config

import (
	"strings"
	"time"
)

// WebSearch configures the web_search tool: which search API answers the
// model's queries. The API is called directly, not through egress.allow:
// it is the administrator's choice, and the model writes only the query.
type WebSearch struct {
	// Backend is searxng (a SearXNG instance's JSON API; its settings.yml
	// must list json in search.formats), brave (the Brave Search API) or
	// tavily. Empty (default): no web_search tool.
	Backend string `yaml:"backend"`
	// BaseURL is the API root. searxng: required, the instance's root,
	// e.g. http://searxng:8080. brave: default https://api.search.brave.com.
	// tavily: default https://api.tavily.com.
	BaseURL string `yaml:"base_url"`
	// APIKey, usually "${BRAVE_API_KEY}" or "${TAVILY_API_KEY}": required
	// for brave and tavily; for searxng, optional, sent as a bearer token
	// to an instance behind an authenticating proxy.
	APIKey string `yaml:"api_key"`
	// MaxResults is the most results one search returns; a call that
	// asks for no number gets 5 (or MaxResults when lower). Default 10,
	// at most 20.
	MaxResults int `yaml:"max_results"`
}

// WebFetch tunes the web_fetch tool (a page read as text).
type WebFetch struct {
	// MaxBytes is how much of a page is read, in bytes; a longer page is
	// read up to it and said to be cut. Default 5 MiB (5242880).
	MaxBytes int64 `yaml:"max_bytes"`
	// MaxTextBytes is how much text one call returns; the model reads on
	// with an offset. Default 64 KiB (65536).
	MaxTextBytes int `yaml:"max_text_bytes"`
	// Timeout bounds one fetch, redirects and body included. Default 30s.
	Timeout time.Duration `yaml:"timeout"`
}

// Browser tunes the browser tool: one headless Chromium per call.
type Browser struct {
	// Chromium is the Chromium or Chrome executable, a path or a name in
	// PATH. Default: /usr/bin/chromium, else chromium, chromium-browser,
	// google-chrome or google-chrome-stable in PATH. When none is
	// installed the tool still exists and tells the model so.
	Chromium string `yaml:"chromium"`
	// Timeout bounds one call (starting Chromium and every action).
	// Default 60s.
	Timeout time.Duration `yaml:"timeout"`
}

// validateTools checks the tools section.
func (c *Config) validateTools(bad func(path, format string, args ...any)) {
	ws := c.Tools.WebSearch
	switch ws.Backend {
	case "":
		if ws.BaseURL != "" || ws.APIKey != "" || ws.MaxResults != 0 {
			bad("tools.web_search.backend", "is empty: name searxng, brave or tavily, or remove tools.web_search")
		}
	case "searxng":
		if ws.BaseURL == "" {
			bad("tools.web_search.base_url", "is empty: searxng needs the instance's root, e.g. http://searxng:8080")
		}
	case "brave", "tavily":
		if ws.APIKey == "" {
			bad("tools.web_search.api_key", "is empty: %s needs an API key, e.g. \"${%s_API_KEY}\"", ws.Backend, strings.ToUpper(ws.Backend))
		}
	default:
		bad("tools.web_search.backend", "%q is not searxng, brave or tavily", ws.Backend)
	}
	if u := ws.BaseURL; u != "" && !strings.HasPrefix(u, "http://") && !strings.HasPrefix(u, "https://") {
		bad("tools.web_search.base_url", "%q must start with http:// or https://", u)
	}
	if ws.MaxResults < 0 || ws.MaxResults > 20 {
		bad("tools.web_search.max_results", "%d is not between 1 and 20 (or 0 for the default of 10)", ws.MaxResults)
	}
	if f := c.Tools.WebFetch; f.MaxBytes < 0 || f.MaxTextBytes < 0 || f.Timeout < 0 {
		bad("tools.web_fetch", "max_bytes, max_text_bytes and timeout must be positive (or left out for the defaults)")
	}
	if c.Tools.Browser.Timeout < 0 {
		bad("tools.browser.timeout", "%v must be a positive duration such as 60s, or 0 for the default", c.Tools.Browser.Timeout)
	}
}
