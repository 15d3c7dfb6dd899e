package web

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/agentcraftlab/agentcraft/internal/egress"
	"github.com/agentcraftlab/agentcraft/tool"
)

// Defaults and limits of BrowserOptions.
const (
	// DefaultBrowserTimeout bounds one call: starting Chromium and every
	// action.
	DefaultBrowserTimeout = 60 * time.Second
	// DefaultBrowserActionTimeout bounds one action: a page load, or the
	// wait for an element to appear.
	DefaultBrowserActionTimeout = 15 * time.Second
	// DefaultBrowserMaxOutputBytes bounds the text one call returns.
	DefaultBrowserMaxOutputBytes = 32 << 10
	// DefaultBrowserConcurrency is how many calls run a Chromium at once;
	// more wait for a free one.
	DefaultBrowserConcurrency = 2
	// MaxBrowserActions is the most actions one call may list.
	MaxBrowserActions = 30
	// ScreenshotDir is the directory, under BrowserOptions.FilesDir, that
	// screenshots are saved in.
	ScreenshotDir = "screenshots"
)

// chromiumCandidates are where Chromium is looked for when
// BrowserOptions.Chromium is empty: Debian's path first, then names
// looked up in PATH.
var chromiumCandidates = []string{"/usr/bin/chromium", "chromium", "chromium-browser", "google-chrome", "google-chrome-stable"}

// BrowserOptions configure a Browser. Zero fields mean the defaults.
type BrowserOptions struct {
	// Chromium is the path (or a name looked up in PATH) of the Chromium
	// or Chrome executable. Default: /usr/bin/chromium, else chromium,
	// chromium-browser, google-chrome or google-chrome-stable in PATH,
	// looked for at each call, so installing Chromium needs no restart.
	Chromium string
	// Timeout bounds one call. Default DefaultBrowserTimeout.
	Timeout time.Duration
	// ActionTimeout bounds one action. Default
	// DefaultBrowserActionTimeout.
	ActionTimeout time.Duration
	// MaxOutputBytes bounds the text one call returns. Default
	// DefaultBrowserMaxOutputBytes.
	MaxOutputBytes int
	// MaxConcurrent is how many calls may run a Chromium at once (each
	// takes a few hundred MiB). Default DefaultBrowserConcurrency.
	MaxConcurrent int
	// FilesDir is the file tools' sandbox directory: screenshots are
	// saved under its ScreenshotDir, where file_list and ocr_image find
	// them. Empty: the screenshot action says it is not available.
	FilesDir string
}

// Browser is the "browser" tool: one call starts a fresh headless
// Chromium, runs a list of actions in one tab (open a URL, click, type,
// wait for an element, extract text, take a screenshot) and kills the
// browser. Create it with NewBrowser.
//
// Every request the page makes follows the egress policy: Chromium's
// request interception (the DevTools Fetch domain) holds each request of
// the tab until Guard.CheckResolved allows it, and Chromium reaches the
// network only through a proxy that dials with Guard.DialContext, which
// covers what interception cannot see (cross-site iframes, pop-ups,
// workers, WebSockets) and closes the gap between a check and a later DNS
// answer. Refused requests are listed in the result.
//
// Its capability is medium: it reads outside data, and a click can submit
// a form somewhere. Chromium runs with --no-sandbox (it must, as root);
// the egress policy, the fresh profile per call and the kill at its end
// are what contain a hostile page.
type Browser struct {
	guard  *egress.Guard
	opts   BrowserOptions
	slots  chan struct{}
	schema string
}

var _ tool.Tool = (*Browser)(nil)

// NewBrowser returns the browser tool under guard's policy. guard is
// required: a browser without it would reach the private network. opts
// nil means defaults; it is copied. Chromium need not be installed: a call
// then says so and how to install it.
func NewBrowser(guard *egress.Guard, opts *BrowserOptions) (*Browser, error) {
	if guard == nil {
		return nil, errors.New("web: browser: no egress guard: pass the server's egress policy (egress.Policy.Compile)")
	}
	b := &Browser{guard: guard}
	if opts != nil {
		b.opts = *opts
	}
	o := &b.opts
	for _, d := range []struct {
		name string
		v    *time.Duration
		def  time.Duration
	}{{"timeout", &o.Timeout, DefaultBrowserTimeout}, {"action timeout", &o.ActionTimeout, DefaultBrowserActionTimeout}} {
		switch {
		case *d.v < 0:
			return nil, fmt.Errorf("web: browser: %s %s: want 0 (default %s) or more", d.name, *d.v, d.def)
		case *d.v == 0:
			*d.v = d.def
		}
	}
	for _, n := range []struct {
		name string
		v    *int
		def  int
	}{{"max output bytes", &o.MaxOutputBytes, DefaultBrowserMaxOutputBytes}, {"max concurrent", &o.MaxConcurrent, DefaultBrowserConcurrency}} {
		switch {
		case *n.v < 0:
			return nil, fmt.Errorf("web: browser: %s %d: want 0 (default %d) or more", n.name, *n.v, n.def)
		case *n.v == 0:
			*n.v = n.def
		}
	}
	b.slots = make(chan struct{}, o.MaxConcurrent)
	b.schema = fmt.Sprintf(`{"type":"object","properties":{"actions":{"type":"array","minItems":1,"maxItems":%d,`+
		`"description":"Steps run in order in one fresh browser tab; the first must be open. Each step is an object with exactly one key.",`+
		`"items":{"type":"object","minProperties":1,"maxProperties":1,"additionalProperties":false,"properties":{`+
		`"open":{"type":"string","minLength":1,"description":"Load this absolute http or https URL and wait until it has loaded."},`+
		`"click":{"type":"string","minLength":1,"description":"CSS selector of the element to click (the first match, once it is visible)."},`+
		`"type":{"type":"object","required":["selector","text"],"additionalProperties":false,"properties":{`+
		`"selector":{"type":"string","minLength":1,"description":"CSS selector of the field to type into."},`+
		`"text":{"type":"string","description":"Text to type, as key presses."},`+
		`"submit":{"type":"boolean","description":"Press Enter after the text. Default false."}}},`+
		`"wait":{"type":"string","minLength":1,"description":"CSS selector to wait for until a match is visible."},`+
		`"extract":{"type":"string","minLength":1,"description":"CSS selector: returns the visible text (innerText) of every match."},`+
		`"screenshot":{"const":true,"description":"Save a PNG of the visible part of the page in the shared files directory."}}}}},`+
		`"required":["actions"],"additionalProperties":false}`, MaxBrowserActions)
	return b, nil
}

const browserExample = `{"actions": [{"open": "https://example.com/search"}, {"type": {"selector": "input[name=q]", "text": "otters", "submit": true}}, {"wait": "#results"}, {"extract": "#results li"}]}`

// Name implements tool.Tool.
func (*Browser) Name() string { return "browser" }

// Description implements tool.Tool.
func (b *Browser) Description() string {
	return fmt.Sprintf("Use a real web browser (headless Chromium, JavaScript on) for pages that web_fetch cannot read or that need interaction. "+
		"One call runs a list of actions in one fresh tab: open a URL, click an element, type into a field (optionally pressing Enter), wait for an element, "+
		"extract the visible text of elements, take a screenshot. Elements are named by CSS selectors. Nothing is kept between calls (no cookies, no tabs). "+
		"At most %d actions and %d bytes of text per call. Addresses on private networks and this server are refused, for the page's every request.",
		MaxBrowserActions, b.opts.MaxOutputBytes)
}

// Schema implements tool.Tool.
func (b *Browser) Schema() json.RawMessage { return json.RawMessage(b.schema) }

// Capability implements tool.Tool.
func (*Browser) Capability() tool.Capability { return tool.CapabilityMedium }

// action is one step of a call: exactly one field is set.
type action struct {
	Open       *string     `json:"open"`
	Click      *string     `json:"click"`
	Type       *typeAction `json:"type"`
	Wait       *string     `json:"wait"`
	Extract    *string     `json:"extract"`
	Screenshot *bool       `json:"screenshot"`
}

type typeAction struct {
	Selector string `json:"selector"`
	Text     string `json:"text"`
	Submit   bool   `json:"submit"`
}

// String describes the action for the transcript.
func (a action) String() string {
	switch {
	case a.Open != nil:
		return "open " + *a.Open
	case a.Click != nil:
		return fmt.Sprintf("click %q", *a.Click)
	case a.Type != nil:
		s := fmt.Sprintf("type %q into %q", a.Type.Text, a.Type.Selector)
		if a.Type.Submit {
			s += " and press Enter"
		}
		return s
	case a.Wait != nil:
		return fmt.Sprintf("wait for %q", *a.Wait)
	case a.Extract != nil:
		return fmt.Sprintf("extract %q", *a.Extract)
	}
	return "screenshot"
}

// Call implements tool.Tool. A missing Chromium, a refused URL, an action
// that fails (no such element, a page that does not load) and the call's
// timeout are error Results with what was done until then; the caller's
// cancellation is a Go error.
func (b *Browser) Call(ctx context.Context, args json.RawMessage) (tool.Result, error) {
	var in struct {
		Actions []action `json:"actions"`
	}
	if res, ok := tool.DecodeArguments(json.RawMessage(b.schema), browserExample, args, &in); !ok {
		return res, nil
	}
	if in.Actions[0].Open == nil {
		return tool.ErrorResult(`"actions"[0] must be {"open": "<url>"}: a call starts in an empty tab. Example: %s`, browserExample), nil
	}
	exe, res, ok := b.chromium()
	if !ok {
		return res, nil
	}
	select {
	case b.slots <- struct{}{}:
		defer func() { <-b.slots }()
	case <-ctx.Done():
		return tool.Result{}, ctx.Err()
	}
	s := &session{b: b, exe: exe, verdicts: map[string]error{}}
	return s.run(ctx, in.Actions)
}

// chromium finds the executable, or words for the model (and the
// administrator reading over its shoulder) that it is missing.
func (b *Browser) chromium() (string, tool.Result, bool) {
	const install = "an administrator can install it with `apt-get install chromium` (Debian, Ubuntu) or `dnf install chromium` (Fedora)"
	if c := b.opts.Chromium; c != "" {
		if p, err := exec.LookPath(c); err == nil {
			return p, tool.Result{}, true
		}
		return "", tool.ErrorResult("the browser tool cannot run: Chromium is not installed at the configured path %q; %s, or point tools.browser.chromium at it. Use web_fetch meanwhile", c, install), false
	}
	for _, c := range chromiumCandidates {
		if p, err := exec.LookPath(c); err == nil {
			return p, tool.Result{}, true
		}
	}
	return "", tool.ErrorResult("the browser tool cannot run: Chromium is not installed on this server; %s. Use web_fetch meanwhile", install), false
}

// refusal is a request the egress policy refused.
type refusal struct{ target, reason string }

// session is one call: its browser, its proxy and what they refused.
type session struct {
	b   *Browser
	exe string
	// verdicts caches the interception's checks by scheme and host:port;
	// only the interception goroutine uses it.
	verdicts map[string]error

	mu sync.Mutex // guards refused
	// refused lists the refused requests, in order, without repeats.
	refused []refusal
}

// refuse records a refused request.
func (s *session) refuse(target string, err error) {
	reason := err.Error()
	var be *egress.BlockedError
	if errors.As(err, &be) {
		reason = be.Reason
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, r := range s.refused {
		if r.target == target {
			return
		}
	}
	s.refused = append(s.refused, refusal{target, reason})
}

// refusals returns a copy of the refused requests.
func (s *session) refusals() []refusal {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]refusal(nil), s.refused...)
}

// newScreenshotName returns a file name for a screenshot taken now.
func newScreenshotName() string {
	var r [4]byte
	_, _ = rand.Read(r[:])
	return time.Now().UTC().Format("20060102-150405") + "-" + hex.EncodeToString(r[:]) + ".png"
}

// saveScreenshot writes png under FilesDir/ScreenshotDir and returns its
// path relative to FilesDir, as the file tools take it.
func (b *Browser) saveScreenshot(png []byte) (string, error) {
	dir := filepath.Join(b.opts.FilesDir, ScreenshotDir)
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return "", err
	}
	name := newScreenshotName()
	if err := os.WriteFile(filepath.Join(dir, name), png, 0o640); err != nil {
		return "", err
	}
	return ScreenshotDir + "/" + name, nil
}

// chromedpOptions are the flags of the call's Chromium: the package's
// defaults (headless, no first run, no background networking, no sync,
// …) and ours.
func (s *session) chromedpOptions(proxyURL string) []chromedp.ExecAllocatorOption {
	return append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(s.exe),
		chromedp.Headless,
		chromedp.NoSandbox,
		// Not chromedp.DisableGPU, which also turns on
		// enable-unsafe-swiftshader: WebGL in software is what
		// Chrome stopped offering to untrusted pages.
		chromedp.Flag("disable-gpu", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-domain-reliability", true),
		chromedp.Flag("no-pings", true),
		// Every connection through our proxy, loopback included
		// ("<-loopback>" removes Chromium's implicit bypass of
		// localhost), and nothing around it: no QUIC, no UDP
		// from WebRTC.
		chromedp.ProxyServer(proxyURL),
		chromedp.Flag("proxy-bypass-list", "<-loopback>"),
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("force-webrtc-ip-handling-policy", "disable_non_proxied_udp"),
		chromedp.Flag("webrtc-ip-handling-policy", "disable_non_proxied_udp"),
		chromedp.WindowSize(viewportWidth, viewportHeight),
	)
}
