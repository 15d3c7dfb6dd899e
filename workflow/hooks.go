package workflow

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/agentcraftlab/agentcraft/internal/egress"
	"github.com/agentcraftlab/agentcraft/workflow/transform"
)

// Hook points, the keys of a definition's "hooks" object.
const (
	hookOnInput    = "on_input"
	hookPreExecute = "pre_execute"
	hookPreAgent   = "pre_agent"
	hookPostAgent  = "post_agent"
	hookOnComplete = "on_complete"
	hookOnError    = "on_error"
)

var hookPoints = []string{hookOnInput, hookPreExecute, hookPreAgent, hookPostAgent, hookOnComplete, hookOnError}

// hook is one configured hook.
type hook struct {
	point string
	index int
	typ   string         // "code" or "webhook"
	code  map[string]any // the transform config (code hooks)
	// webhook settings
	url      string
	secret   []byte
	headers  map[string]string
	timeout  time.Duration
	retries  int
	required bool
}

// hooks is a definition's parsed hooks object.
type hooks struct {
	block  *regexp.Regexp
	points map[string][]*hook
}

// parseHooks reads the definition's hooks:
//
//	hooks:
//	  block_pattern: "(?i)ignore (all )?previous instructions"
//	  on_input:    [{type: code, mode: text, operation: trim}]
//	  post_agent:  [{type: webhook, url: "https://…", secret: "…", timeout: 5s, retries: 2}]
//
// Code hooks take the transform modes of the code node; at on_input,
// pre_agent, post_agent and on_complete their output replaces the value
// (input, prompt, agent output, run output). Webhooks POST a JSON report,
// signed with HMAC-SHA256 when a secret is set.
func parseHooks(raw json.RawMessage) (*hooks, []Problem) {
	h := &hooks{points: map[string][]*hook{}}
	if len(bytes.TrimSpace(raw)) == 0 || string(bytes.TrimSpace(raw)) == "null" {
		return h, nil
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(raw, &obj); err != nil {
		return nil, []Problem{{Path: "hooks", Message: "hooks must be an object: " + err.Error(), Hint: "write hooks: {block_pattern: ..., on_input: [...], ...}"}}
	}
	var probs []Problem
	keys := make([]string, 0, len(obj))
	for k := range obj {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, key := range keys {
		v := obj[key]
		if key == "block_pattern" {
			var s string
			if err := json.Unmarshal(v, &s); err != nil {
				probs = append(probs, Problem{Path: "hooks.block_pattern", Message: "want a string", Hint: "set a regular expression (RE2)"})
				continue
			}
			re, err := regexp.Compile(s)
			if err != nil {
				probs = append(probs, Problem{Path: "hooks.block_pattern", Message: "invalid regular expression: " + err.Error(), Hint: "fix the RE2 pattern"})
				continue
			}
			h.block = re
			continue
		}
		if !contains(hookPoints, key) {
			probs = append(probs, Problem{Path: "hooks." + key, Message: "unknown hook point " + key, Hint: "use block_pattern or one of: " + strings.Join(hookPoints, ", ")})
			continue
		}
		var list []map[string]any
		if err := json.Unmarshal(v, &list); err != nil {
			probs = append(probs, Problem{Path: "hooks." + key, Message: "want a list of hooks", Hint: "write [{type: code, ...}] or [{type: webhook, url: ...}]"})
			continue
		}
		for i, cfg := range list {
			hk, pr := parseHook(key, i, cfg)
			probs = append(probs, pr...)
			if hk != nil {
				h.points[key] = append(h.points[key], hk)
			}
		}
	}
	return h, probs
}

func parseHook(point string, i int, cfg map[string]any) (*hook, []Problem) {
	at := fmt.Sprintf("hooks.%s[%d]", point, i)
	hk := &hook{point: point, index: i, timeout: 10 * time.Second}
	hk.typ, _ = cfg["type"].(string)
	switch hk.typ {
	case "code":
		code := map[string]any{}
		for k, v := range cfg {
			if k != "type" {
				code[k] = v
			}
		}
		mode, _ := code["mode"].(string)
		if !contains(transform.ModeNames, mode) {
			return nil, []Problem{{Path: at + ".mode", Message: fmt.Sprintf("unknown or missing code mode %q", mode), Hint: "use one of: " + strings.Join(transform.ModeNames, ", ")}}
		}
		hk.code = code
		return hk, nil
	case "webhook":
		var probs []Problem
		hk.url, _ = cfg["url"].(string)
		if !strings.HasPrefix(hk.url, "http://") && !strings.HasPrefix(hk.url, "https://") {
			probs = append(probs, Problem{Path: at + ".url", Message: "missing or non-HTTP url", Hint: "set url to an http(s) address"})
		}
		if s, ok := cfg["secret"].(string); ok {
			hk.secret = []byte(s)
		}
		if t, ok := cfg["timeout"].(string); ok {
			d, err := time.ParseDuration(t)
			if err != nil || d <= 0 {
				probs = append(probs, Problem{Path: at + ".timeout", Message: "invalid duration " + t, Hint: "write a Go duration such as 5s"})
			}
			hk.timeout = d
		}
		if n, ok := cfg["retries"].(float64); ok {
			if n < 0 || n > 5 {
				probs = append(probs, Problem{Path: at + ".retries", Message: "retries must be 0..5", Hint: "retries are bounded to keep a dead endpoint from stalling runs"})
			}
			hk.retries = int(n)
		}
		if hs, ok := cfg["headers"].(map[string]any); ok {
			hk.headers = map[string]string{}
			for k, v := range hs {
				hk.headers[k], _ = v.(string)
			}
		}
		hk.required, _ = cfg["required"].(bool)
		return hk, probs
	}
	return nil, []Problem{{Path: at + ".type", Message: fmt.Sprintf("unknown hook type %q", hk.typ), Hint: "use code or webhook"}}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// onInput applies block_pattern and the on_input hooks. blocked is the
// reason when the input is refused.
func (r *run) onInput(ctx context.Context, in any) (out any, blocked string, err error) {
	h := r.p.hooks
	if h == nil {
		return in, "", nil
	}
	if h.block != nil {
		text, err := transform.Text(in)
		if err != nil {
			return nil, "", err
		}
		if m := h.block.FindString(text); m != "" {
			return nil, fmt.Sprintf("input matches block_pattern (%q)", m), nil
		}
	}
	out, err = r.runHooks(ctx, hookOnInput, nil, in)
	return out, "", err
}

// hook runs the hooks of a point whose output does not replace anything.
func (r *run) hook(ctx context.Context, point string, x *Exec, v any) error {
	_, err := r.runHooks(ctx, point, x, v)
	return err
}

// PreAgent runs the pre_agent hooks on an agent node's prompt.
func (r *run) PreAgent(ctx context.Context, x *Exec, prompt string) (string, error) {
	return r.textHooks(ctx, hookPreAgent, x, prompt)
}

// PostAgent runs the post_agent hooks on an agent node's answer.
func (r *run) PostAgent(ctx context.Context, x *Exec, output string) (string, error) {
	return r.textHooks(ctx, hookPostAgent, x, output)
}

func (r *run) textHooks(ctx context.Context, point string, x *Exec, s string) (string, error) {
	if r.p.hooks == nil || len(r.p.hooks.points[point]) == 0 {
		return s, nil
	}
	v, err := r.runHooks(ctx, point, x, s)
	if err != nil {
		return "", err
	}
	return transform.Text(v)
}

// runHooks runs a point's hooks in order. Code hooks transform v; webhooks
// report it. A failing code hook, or a required webhook, fails the run.
func (r *run) runHooks(ctx context.Context, point string, x *Exec, v any) (any, error) {
	if r.p.hooks == nil {
		return v, nil
	}
	for _, hk := range r.p.hooks.points[point] {
		name := fmt.Sprintf("%s[%d]", point, hk.index)
		ev := Event{Type: EventHook, Data: map[string]any{"hook": name, "type": hk.typ}}
		if x != nil {
			ev.NodeID, ev.Key, ev.NodeType = x.Node.ID, x.Key, x.Node.Type
		}
		switch hk.typ {
		case "code":
			data := transform.Data{Input: v, Vars: r.req.Vars}
			if x != nil {
				data.Nodes = x.Data.Nodes
			}
			out, err := r.e.svc.Transform.Run(ctx, hk.code, data)
			if err != nil {
				ev.Error = err.Error()
				r.emit(ev)
				return nil, fmt.Errorf("hook %s: %w", name, err)
			}
			v = out
		case "webhook":
			if err := r.webhook(ctx, hk, name, x, v); err != nil {
				ev.Error = err.Error()
				r.emit(ev)
				if hk.required {
					return nil, fmt.Errorf("hook %s: %w", name, err)
				}
				continue
			}
		}
		r.emit(ev)
	}
	return v, nil
}

// webhook POSTs {hook, run_id, workspace_id, node_id, key, data} with an
// Idempotency-Key (run, hook and node execution), so a retried or resumed
// run's receiver can drop repeats, and an HMAC signature when a secret is
// set. 5xx and network errors are retried with a short backoff.
func (r *run) webhook(ctx context.Context, hk *hook, name string, x *Exec, v any) error {
	client := r.e.svc.HTTP
	if client == nil {
		return fmt.Errorf("no HTTP client configured for webhooks")
	}
	payload := map[string]any{"hook": name, "run_id": r.req.RunID, "workspace_id": r.req.WorkspaceID, "data": v}
	idem := r.req.RunID + "/" + name
	if x != nil {
		payload["node_id"], payload["key"] = x.Node.ID, x.Key
		idem += "/" + x.Key
	}
	body, err := json.Marshal(payload)
	if err != nil {
		return fmt.Errorf("encode payload: %w", err)
	}
	var last error
	for attempt := 0; attempt <= hk.retries; attempt++ {
		if attempt > 0 {
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(time.Duration(attempt) * 200 * time.Millisecond):
			}
		}
		last = postOnce(ctx, client, hk, body, idem)
		if last == nil {
			return nil
		}
		if _, permanent := last.(permanentError); permanent {
			return last
		}
	}
	return last
}

type permanentError struct{ error }

func postOnce(ctx context.Context, client *http.Client, hk *hook, body []byte, idem string) error {
	ctx, cancel := context.WithTimeout(ctx, hk.timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, hk.url, bytes.NewReader(body))
	if err != nil {
		return permanentError{err}
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Idempotency-Key", idem)
	for k, v := range hk.headers {
		req.Header.Set(k, v)
	}
	if len(hk.secret) > 0 {
		req.Header.Set(egress.SignatureHeader, egress.Sign(hk.secret, time.Now(), body))
	}
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	switch {
	case resp.StatusCode >= 500:
		return fmt.Errorf("webhook answered %s", resp.Status)
	case resp.StatusCode >= 300:
		return permanentError{fmt.Errorf("webhook answered %s", resp.Status)}
	}
	return nil
}
