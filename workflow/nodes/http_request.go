package nodes

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/agentcraftlab/agentcraft/internal/httpcall"
	"github.com/agentcraftlab/agentcraft/workflow"
	"github.com/agentcraftlab/agentcraft/workflow/transform"
)

// httpRequest calls an HTTP endpoint. Private and loopback addresses are
// blocked unless the server's allow list names them; a node cannot lift
// that, so there is no config key for it.
func httpRequest() workflow.Kind {
	return workflow.Kind{
		Type:               "http-request",
		Title:              "HTTP request",
		Category:           workflow.CategoryIntegration,
		Network:            true,
		SideEffects:        true,
		Example:            map[string]any{"url": "https://api.example.com/items"},
		Doc:                "Calls an HTTP endpoint and maps the response.",
		Execute:            execHTTP,
		IsExecutable:       true,
		RequiresImperative: true,
		Config: []workflow.ConfigKey{
			{Name: "method", Type: workflow.TypeString, Enum: []string{"GET", "POST", "PUT", "PATCH", "DELETE", "HEAD"}, Default: "GET", Doc: "HTTP method"},
			{Name: "url", Type: workflow.TypeTemplate, Required: true, Doc: "URL template, such as https://api.example.com/items/{{vars.id}}"},
			{Name: "headers", Type: workflow.TypeObject, Doc: "request headers; values are templates"},
			{Name: "body", Type: workflow.TypeTemplate, Doc: "request body template"},
			{Name: "timeout", Type: workflow.TypeDuration, Default: "30s", Doc: "time limit of one attempt"},
			{Name: "retries", Type: workflow.TypeInteger, Min: atLeast(0), Default: 0, Doc: "extra attempts after a network error or 5xx"},
			{Name: "response_mapping", Type: workflow.TypeObject, Doc: "output fields as JSON paths into the response, such as {\"title\": \"$.title\"}"},
		},
	}
}

// maxHTTPBody bounds the response an http-request node reads.
const maxHTTPBody = 10 << 20

// execHTTP calls the endpoint: URL, headers and body rendered from
// templates, an Idempotency-Key of the run and execution (so a resumed
// run's repeat can be recognised by the receiver), retries after network
// errors and 5xx with a short backoff. The output is {status, headers,
// body} with body parsed when it is JSON, or the response_mapping fields
// extracted from it. A 4xx or a final 5xx fails the node. The client
// (Services.HTTP) enforces the egress policy: private and loopback
// addresses are refused unless allow-listed.
func execHTTP(ctx context.Context, x *workflow.Exec) (workflow.Result, error) {
	if x.Services.HTTP == nil {
		return workflow.Result{}, errors.New("no HTTP client is configured")
	}
	cfg := x.Node.Config
	method, _ := cfg["method"].(string)
	if method == "" {
		method = http.MethodGet
	}
	rawURL, _ := cfg["url"].(string)
	url, err := x.Render(rawURL)
	if err != nil {
		return workflow.Result{}, fmt.Errorf("config.url: %w", err)
	}
	var body []byte
	if b, ok := cfg["body"].(string); ok {
		s, err := x.Render(b)
		if err != nil {
			return workflow.Result{}, fmt.Errorf("config.body: %w", err)
		}
		body = []byte(s)
	}
	headers := map[string]string{}
	if hs, ok := cfg["headers"].(map[string]any); ok {
		for k, v := range hs {
			s, _ := v.(string)
			if headers[k], err = x.Render(s); err != nil {
				return workflow.Result{}, fmt.Errorf("config.headers.%s: %w", k, err)
			}
		}
	}
	timeout := 30 * time.Second
	if t, ok := cfg["timeout"].(string); ok {
		if timeout, err = time.ParseDuration(t); err != nil {
			return workflow.Result{}, fmt.Errorf("config.timeout: %w", err)
		}
	}
	retries := intOr(cfg["retries"], 0)
	headers["Idempotency-Key"] = x.RunID + "/" + x.Key
	for k := range headers { // a configured Idempotency-Key wins
		if k != "Idempotency-Key" && strings.EqualFold(k, "Idempotency-Key") {
			delete(headers, "Idempotency-Key")
		}
	}
	req := &httpcall.Request{Method: method, URL: url, Header: headers, Body: body, Timeout: timeout, MaxResponseBytes: maxHTTPBody}
	resp, err := httpcall.Retry(ctx, retries, func() (*httpcall.Response, error) {
		return httpcall.Do(ctx, x.Services.HTTP, req)
	})
	if err != nil {
		return workflow.Result{}, err
	}
	if resp.Truncated {
		return workflow.Result{}, fmt.Errorf("response larger than %d bytes", maxHTTPBody)
	}
	status, hdr, data := resp.StatusCode, resp.Header, resp.Body
	var parsed any = string(data)
	if json.Valid(data) && len(bytes.TrimSpace(data)) > 0 {
		_ = json.Unmarshal(data, &parsed)
	}
	if status >= 400 {
		return workflow.Result{}, fmt.Errorf("%s %s answered %d: %s", method, url, status, snippet(string(data)))
	}
	if m, ok := cfg["response_mapping"].(map[string]any); ok && len(m) > 0 {
		out := make(map[string]any, len(m))
		for field, p := range m {
			path, _ := p.(string)
			v, err := transform.Extract(parsed, path)
			if err != nil {
				return workflow.Result{}, fmt.Errorf("config.response_mapping.%s: %w", field, err)
			}
			out[field] = v
		}
		return workflow.Result{Output: out}, nil
	}
	h := make(map[string]any, len(hdr))
	for k := range hdr {
		h[strings.ToLower(k)] = hdr.Get(k)
	}
	return workflow.Result{Output: map[string]any{"status": float64(status), "headers": h, "body": parsed}}, nil
}

func snippet(s string) string {
	if len(s) > 200 {
		return s[:200] + "…"
	}
	return s
}
