package web

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"golang.org/x/net/html"

	"github.com/agentcraftlab/agentcraft/tool"
)

// SearchBackend names the search API a Search calls.
type SearchBackend string

// The search back ends.
const (
	// SearXNG is a self-hosted SearXNG instance's JSON API
	// (GET {base}/search?q=…&format=json; the instance must list json in
	// search.formats of its settings.yml).
	SearXNG SearchBackend = "searxng"
	// Brave is the Brave Search API (GET {base}/res/v1/web/search, key in
	// X-Subscription-Token).
	Brave SearchBackend = "brave"
	// Tavily is the Tavily search API (POST {base}/search, key as a
	// bearer token).
	Tavily SearchBackend = "tavily"
)

// Defaults and limits of SearchOptions.
const (
	DefaultBraveURL  = "https://api.search.brave.com"
	DefaultTavilyURL = "https://api.tavily.com"
	// DefaultSearchMaxResults is SearchOptions.MaxResults's default.
	DefaultSearchMaxResults = 10
	// MaxSearchResults is the most results any search returns (Brave's
	// own limit per request).
	MaxSearchResults = 20
	// DefaultSearchResults is how many results a call that names no
	// max_results gets, when MaxResults allows that many.
	DefaultSearchResults = 5
	DefaultSearchTimeout = 20 * time.Second
	// maxSearchResponse bounds the body read from a back end.
	maxSearchResponse = 4 << 20
	// maxSnippet bounds one result's snippet, in bytes.
	maxSnippet = 400
	// maxQuery bounds the query, in characters (Brave takes 400).
	maxQuery = 400
)

// SearchOptions configure a Search. Zero fields mean the defaults.
type SearchOptions struct {
	// BaseURL is the API root. SearXNG: required, the instance's root
	// (http://searxng.internal:8080). Brave: default DefaultBraveURL.
	// Tavily: default DefaultTavilyURL.
	BaseURL string
	// APIKey authenticates to the back end. Brave and Tavily: required.
	// SearXNG: optional, sent as "Authorization: Bearer" for an instance
	// behind an authenticating proxy.
	APIKey string
	// MaxResults is the most results one call may return (a call that
	// names none gets DefaultSearchResults, or MaxResults when lower).
	// Default DefaultSearchMaxResults; at most MaxSearchResults.
	MaxResults int
	// HTTPClient sends the requests. The back end is the administrator's
	// choice, not the model's (the model writes only the query), so it
	// need not be the egress-policy client: a SearXNG on the private
	// network is reachable without an egress.allow entry. Default: a
	// client with DefaultSearchTimeout.
	HTTPClient *http.Client
}

// Search is the "web_search" tool: it sends the model's query to the
// configured search API and returns a compact numbered list of results
// (title, URL, snippet). Create it with NewSearch.
//
// Its capability is medium: it sends nothing the model can aim at the
// network (the back end is fixed), but the query the model writes leaves
// the workspace for a third party, and the results are outside text that
// may try to instruct the model. Both are what medium means; low is for
// tools that send nothing outside.
type Search struct {
	backend SearchBackend
	base    *url.URL
	key     string
	max     int
	client  *http.Client
	schema  string
}

var _ tool.Tool = (*Search)(nil)

// NewSearch returns the web_search tool over backend. opts nil means
// defaults (which SearXNG cannot use: it needs BaseURL); it is copied.
// Errors name the option to fix.
func NewSearch(backend SearchBackend, opts *SearchOptions) (*Search, error) {
	var o SearchOptions
	if opts != nil {
		o = *opts
	}
	s := &Search{backend: backend, key: o.APIKey, max: o.MaxResults, client: o.HTTPClient}
	switch backend {
	case SearXNG:
		if o.BaseURL == "" {
			return nil, errors.New("web: web_search: searxng needs a base URL (the instance's root, such as http://searxng:8080)")
		}
	case Brave:
		o.BaseURL = cmpOr(o.BaseURL, DefaultBraveURL)
	case Tavily:
		o.BaseURL = cmpOr(o.BaseURL, DefaultTavilyURL)
	default:
		return nil, fmt.Errorf("web: web_search: unknown back end %q: use searxng, brave or tavily", backend)
	}
	if backend != SearXNG && o.APIKey == "" {
		return nil, fmt.Errorf("web: web_search: %s needs an API key", backend)
	}
	u, err := url.Parse(o.BaseURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("web: web_search: base URL %q is not an absolute http or https URL", o.BaseURL)
	}
	u.Path = strings.TrimSuffix(u.Path, "/")
	s.base = u
	switch {
	case s.max == 0:
		s.max = DefaultSearchMaxResults
	case s.max < 0 || s.max > MaxSearchResults:
		return nil, fmt.Errorf("web: web_search: max results %d: want 1 to %d", s.max, MaxSearchResults)
	}
	if s.client == nil {
		s.client = &http.Client{Timeout: DefaultSearchTimeout}
	}
	s.schema = fmt.Sprintf(`{"type":"object","properties":{`+
		`"query":{"type":"string","minLength":1,"maxLength":%d,"description":"What to search the web for, as you would type it into a search engine."},`+
		`"max_results":{"type":"integer","minimum":1,"maximum":%d,"description":"How many results to return. Default %d."}},`+
		`"required":["query"],"additionalProperties":false}`, maxQuery, s.max, min(DefaultSearchResults, s.max))
	return s, nil
}

func cmpOr(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

const searchExample = `{"query": "go 1.26 release notes", "max_results": 5}`

// Name implements tool.Tool.
func (*Search) Name() string { return "web_search" }

// Description implements tool.Tool.
func (s *Search) Description() string {
	return "Search the web. Returns a numbered list of results, each with its title, URL and a short snippet. " +
		"Use web_fetch on a result's URL to read the page itself."
}

// Schema implements tool.Tool.
func (s *Search) Schema() json.RawMessage { return json.RawMessage(s.schema) }

// Capability implements tool.Tool.
func (*Search) Capability() tool.Capability { return tool.CapabilityMedium }

// hit is one search result.
type hit struct{ title, url, snippet string }

// Call implements tool.Tool. Failures of the back end (unreachable, an
// HTTP error, an answer that is not its JSON) are error Results naming the
// back end and the status; the caller's cancellation is a Go error.
func (s *Search) Call(ctx context.Context, args json.RawMessage) (tool.Result, error) {
	var in struct {
		Query      string `json:"query"`
		MaxResults int    `json:"max_results"`
	}
	if res, ok := tool.DecodeArguments(json.RawMessage(s.schema), searchExample, args, &in); !ok {
		return res, nil
	}
	q := strings.TrimSpace(in.Query)
	if q == "" {
		return tool.ErrorResult(`"query" is blank: write what to search for. Example: %s`, searchExample), nil
	}
	n := in.MaxResults
	if n == 0 {
		n = min(DefaultSearchResults, s.max)
	}
	req, err := s.request(ctx, q, n)
	if err != nil {
		return tool.Result{}, fmt.Errorf("web: web_search: build request: %w", err)
	}
	resp, err := s.client.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return tool.Result{}, ctx.Err()
		}
		if errors.Is(err, context.DeadlineExceeded) {
			return tool.ErrorResult("web_search: %s did not answer in time: try again later", s.backend), nil
		}
		return tool.ErrorResult("web_search: cannot reach %s at %s: %v", s.backend, s.base.Redacted(), unwrapURLError(err)), nil
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxSearchResponse+1))
	if err != nil {
		if ctx.Err() != nil {
			return tool.Result{}, ctx.Err()
		}
		return tool.ErrorResult("web_search: reading the answer of %s failed: %v", s.backend, err), nil
	}
	if resp.StatusCode >= 400 {
		return s.statusError(resp, body), nil
	}
	if len(body) > maxSearchResponse {
		return tool.ErrorResult("web_search: %s answered with more than %d bytes; not read", s.backend, maxSearchResponse), nil
	}
	hits, err := s.parse(body)
	if err != nil {
		return tool.ErrorResult("web_search: %s answered HTTP %d with a body that is not its search JSON (%v): check tools.web_search.base_url", s.backend, resp.StatusCode, err), nil
	}
	return tool.Result{Content: formatHits(q, hits, n)}, nil
}

// request builds the back end's request for query q and n results.
func (s *Search) request(ctx context.Context, q string, n int) (*http.Request, error) {
	u := *s.base
	switch s.backend {
	case SearXNG:
		u.Path += "/search"
		u.RawQuery = url.Values{"q": {q}, "format": {"json"}}.Encode()
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
		if err != nil {
			return nil, err
		}
		req.Header.Set("Accept", "application/json")
		if s.key != "" {
			req.Header.Set("Authorization", "Bearer "+s.key)
		}
		return req, nil
	case Brave:
		u.Path += "/res/v1/web/search"
		u.RawQuery = url.Values{"q": {q}, "count": {fmt.Sprint(n)}}.Encode()
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
		if err != nil {
			return nil, err
		}
		req.Header.Set("Accept", "application/json")
		req.Header.Set("X-Subscription-Token", s.key)
		return req, nil
	}
	u.Path += "/search"
	body, err := json.Marshal(struct {
		Query      string `json:"query"`
		MaxResults int    `json:"max_results"`
	}{q, n})
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u.String(), bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	req.Header.Set("Authorization", "Bearer "+s.key)
	return req, nil
}

// parse reads the back end's answer.
func (s *Search) parse(body []byte) ([]hit, error) {
	type result struct {
		Title       string `json:"title"`
		URL         string `json:"url"`
		Content     string `json:"content"`
		Description string `json:"description"`
	}
	var out struct {
		Results *[]result `json:"results"` // SearXNG, Tavily
		Web     *struct {
			Results []result `json:"results"`
		} `json:"web"` // Brave
	}
	if err := json.Unmarshal(body, &out); err != nil {
		return nil, err
	}
	var rs []result
	switch {
	case s.backend == Brave && out.Web != nil:
		rs = out.Web.Results
	case s.backend == Brave:
		// Brave leaves "web" out when nothing matched; a body without
		// it is still Brave's answer when it says it is a search.
		var probe struct {
			Type string `json:"type"`
		}
		if json.Unmarshal(body, &probe) != nil || probe.Type != "search" {
			return nil, errors.New(`no "web" object`)
		}
	case out.Results != nil:
		rs = *out.Results
	default:
		return nil, errors.New(`no "results" array`)
	}
	hits := make([]hit, 0, len(rs))
	for _, r := range rs {
		snippet := r.Content
		if s.backend == Brave {
			// Brave marks the matched words with <strong>.
			snippet = stripTags(r.Description)
		}
		if r.URL == "" {
			continue
		}
		hits = append(hits, hit{title: oneLine(r.Title), url: r.URL, snippet: oneLine(snippet)})
	}
	return hits, nil
}

// statusError words an HTTP error of the back end for the model.
func (s *Search) statusError(resp *http.Response, body []byte) tool.Result {
	status := fmt.Sprintf("HTTP %d %s", resp.StatusCode, http.StatusText(resp.StatusCode))
	switch resp.StatusCode {
	case http.StatusUnauthorized, http.StatusForbidden:
		fix := "check tools.web_search.api_key"
		if s.backend == SearXNG {
			fix = "check that the instance allows the JSON format (search.formats in its settings.yml lists json) and, behind a proxy, tools.web_search.api_key"
		}
		return tool.ErrorResult("web_search: %s refused the request (%s): %s. This is a server configuration problem, not the query", s.backend, status, fix)
	case http.StatusTooManyRequests:
		wait := ""
		if ra := resp.Header.Get("Retry-After"); ra != "" {
			wait = " (Retry-After: " + ra + ")"
		}
		return tool.ErrorResult("web_search: %s is rate limiting (%s)%s: search less often or try again later", s.backend, status, wait)
	}
	excerpt, _ := cut(oneLine(string(bytes.ToValidUTF8(body, nil))), 300)
	if excerpt != "" {
		excerpt = ": " + excerpt
	}
	return tool.ErrorResult("web_search: %s answered %s%s", s.backend, status, excerpt)
}

// formatHits is the compact numbered list the model reads.
func formatHits(q string, hits []hit, n int) string {
	if len(hits) == 0 {
		return fmt.Sprintf("No results for %q.", q)
	}
	hits = hits[:min(n, len(hits))]
	var b strings.Builder
	for i, h := range hits {
		if i > 0 {
			b.WriteString("\n")
		}
		title := h.title
		if title == "" {
			title = "(no title)"
		}
		fmt.Fprintf(&b, "%d. %s\n   %s\n", i+1, title, h.url)
		if h.snippet != "" {
			sn, cutted := cut(h.snippet, maxSnippet)
			if cutted {
				sn += "…"
			}
			fmt.Fprintf(&b, "   %s\n", sn)
		}
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// stripTags returns the text of an HTML fragment.
func stripTags(s string) string {
	if !strings.ContainsAny(s, "<&") {
		return s
	}
	var b strings.Builder
	z := html.NewTokenizer(strings.NewReader(s))
	for {
		switch z.Next() {
		case html.ErrorToken:
			return b.String()
		case html.TextToken:
			b.Write(z.Text())
		}
	}
}

// unwrapURLError drops the "Get \"…\":" prefix of a *url.Error, whose URL
// the message already names.
func unwrapURLError(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}
